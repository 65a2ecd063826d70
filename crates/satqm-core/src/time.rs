//! Simulated time, rates and sizes as integer newtypes.
//!
//! Time is counted in nanoseconds (`u64` covers 584 years), rates in bit/s.
//! Serialization times are computed with exact integer arithmetic and
//! rounded up, so a 1,500-byte packet on a 20 Mbit/s link takes exactly
//! 600,000 ns.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in (or span of) simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ns(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_us(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    /// Seconds as `f64`, rounded to the nearest nanosecond. Callers validate
    /// that `s` is finite and non-negative.
    pub fn from_secs_f64(s: f64) -> Self {
        SimTime::from_ns_f64(s * 1e9)
    }
    /// Nanoseconds as `f64`, rounded to the nearest one (halves away from
    /// zero; negative or NaN gives zero, past `u64::MAX` the maximum): the
    /// value of `ns.round() as u64`, without the software `round` that
    /// baseline x86-64 calls (it lacks `roundsd`). The truncation is exact,
    /// and so is the remainder: `ns - t` for `t <= ns < t + 1`.
    #[inline]
    pub fn from_ns_f64(ns: f64) -> Self {
        let t = ns as u64;
        SimTime(if ns - t as f64 >= 0.5 {
            t.saturating_add(1)
        } else {
            t
        })
    }
    pub const fn ns(self) -> u64 {
        self.0
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.secs_f64())
    }
}

/// A link or sending rate in bit/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(self) -> u64 {
        self.0
    }

    /// Time to serialize `bytes` at this rate: `ceil(bytes * 8 * 1e9 / rate)` ns.
    #[inline]
    pub fn tx_time(self, bytes: u32) -> SimTime {
        // In 64 bits whenever the product fits (every real packet: it is a
        // hardware division instead of a 128-bit one in software); the
        // quotient is the same either way.
        if let Some(bits) = (bytes as u64).checked_mul(8_000_000_000) {
            return SimTime(bits.div_ceil(self.0));
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        let r = self.0 as u128;
        SimTime(bits.div_ceil(r) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `from_ns_f64` is `round() as u64`, on the edges and at random.
    #[test]
    fn from_ns_f64_rounds_as_round_does() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            -0.5,
            -1.5,
            -7.2,
            1e19,
            1.8446744073709552e19,
            3e19,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        let mut rng = crate::rng::Rng::stream(11, "round", 0);
        for _ in 0..100_000 {
            let scale = 10f64.powi(rng.uniform_u64(0, 19) as i32);
            xs.push(rng.uniform_u64(0, 1 << 53) as f64 / (1u64 << 53) as f64 * scale);
            xs.push((rng.uniform_u64(0, 1 << 20) as f64) + 0.5);
        }
        for x in xs {
            assert_eq!(SimTime::from_ns_f64(x).ns(), x.round() as u64, "{x:e}");
        }
    }

    #[test]
    fn serialization_is_exact() {
        assert_eq!(Rate(20_000_000).tx_time(1500), SimTime::from_us(600));
        assert_eq!(Rate(10_000_000).tx_time(1500), SimTime::from_us(1200));
        assert_eq!(Rate(100_000_000).tx_time(40), SimTime::from_ns(3200));
        // Sizes whose bit count overflows 64 bits take the wide path.
        assert_eq!(
            Rate(8_000_000_000).tx_time(u32::MAX),
            SimTime(u32::MAX as u64)
        );
        assert_eq!(
            Rate(3_000_000_007).tx_time(u32::MAX),
            SimTime((u32::MAX as u128 * 8_000_000_000).div_ceil(3_000_000_007) as u64)
        );
        // 1 byte at 3 bit/s: 8/3 s, rounded up to the next nanosecond
        assert_eq!(Rate(3).tx_time(1), SimTime::from_ns(2_666_666_667));
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(SimTime::from_secs_f64(0.29), SimTime::from_ms(290));
        assert_eq!(SimTime::from_ms(1500).secs_f64(), 1.5);
    }
}
