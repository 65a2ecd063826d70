//! Delay history: a ring buffer of one quantity sampled once per integration
//! step, read back at a delay that may change from step to step.
//!
//! A delay-differential equation such as Misra–Gong–Towsley's window
//! equation needs `h(t - R(t))` where `R(t) = q(t)/C + T_p` follows the state.
//! With a fixed step `dt` the history holds `h(t_k), h(t_{k-1}), …` and a
//! delay of `d = R/dt` steps is read either at the nearest step
//! (`⌊d + 1/2⌋`) or interpolated linearly between `⌊d⌋` and `⌊d⌋ + 1`.
//! Delays beyond the buffer read its oldest sample.

/// How a delay that falls between two steps is read from a [`DelayHistory`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// The sample at the nearest step, `⌊d + 1/2⌋` steps back.
    #[default]
    Nearest,
    /// Linear between the samples `⌊d⌋` and `⌊d⌋ + 1` steps back.
    Linear,
}

impl Interpolation {
    /// The name used in the Python API (`"nearest"`, `"linear"`).
    pub fn name(self) -> &'static str {
        match self {
            Interpolation::Nearest => "nearest",
            Interpolation::Linear => "linear",
        }
    }

    /// Parse a name as written by [`Interpolation::name`].
    pub fn from_name(name: &str) -> Option<Interpolation> {
        match name {
            "nearest" => Some(Interpolation::Nearest),
            "linear" => Some(Interpolation::Linear),
            _ => None,
        }
    }
}

/// Ring buffer of the last `len` samples of one quantity, one per step.
///
/// Invariant: `0 <= head < buf.len()` and `buf.len() >= 2`; `buf[head]` is
/// the newest sample, `buf[head - m]` (modulo the length) the one `m` steps
/// older.
#[derive(Clone, Debug)]
pub struct DelayHistory {
    buf: Vec<f64>,
    head: usize,
}

impl DelayHistory {
    /// A history of `len` samples (at least 2), all set to `fill`: the value
    /// assumed before the first step.
    pub fn new(len: usize, fill: f64) -> DelayHistory {
        DelayHistory {
            buf: vec![fill; len.max(2)],
            head: 0,
        }
    }

    /// Number of samples kept: lags `0..len()` can be read.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Longest lag that can be read, `len() - 1` steps.
    pub fn max_lag(&self) -> usize {
        self.buf.len() - 1
    }

    /// Overwrite the newest sample (used to set the value at `t = 0`).
    pub fn set_latest(&mut self, value: f64) {
        self.buf[self.head] = value;
    }

    /// Append the sample of a new step; the oldest one is forgotten.
    #[inline]
    pub fn push(&mut self, value: f64) {
        self.head += 1;
        if self.head == self.buf.len() {
            self.head = 0;
        }
        self.buf[self.head] = value;
    }

    /// The sample `m` steps back (`0` is the newest); lags beyond
    /// [`max_lag`](Self::max_lag) read the oldest sample.
    #[inline]
    pub fn lag(&self, m: usize) -> f64 {
        let m = m.min(self.buf.len() - 1);
        let j = if m > self.head {
            self.head + self.buf.len() - m
        } else {
            self.head - m
        };
        self.buf[j]
    }

    /// The sample nearest to `delay_steps` steps back (`⌊d + 1/2⌋`, as the
    /// reference implementation in `satqm.models.fluid` rounds). `delay_steps`
    /// must be `>= 0`.
    #[inline]
    pub fn nearest(&self, delay_steps: f64) -> f64 {
        // `as` saturates: huge delays land on the oldest sample.
        self.lag((delay_steps + 0.5) as usize)
    }

    /// Linear interpolation `h_m + f (h_{m+1} - h_m)` with `m = ⌊d⌋`,
    /// `f = d - m`; delays of `max_lag()` steps or more read the oldest
    /// sample. `delay_steps` must be `>= 0`.
    #[inline]
    pub fn linear(&self, delay_steps: f64) -> f64 {
        let max = self.max_lag();
        if delay_steps >= max as f64 {
            return self.lag(max);
        }
        let m = delay_steps as usize;
        let f = delay_steps - m as f64;
        let a = self.lag(m);
        a + f * (self.lag(m + 1) - a)
    }

    /// Read `delay_steps` back with the given rule.
    #[inline]
    pub fn at(&self, delay_steps: f64, how: Interpolation) -> f64 {
        match how {
            Interpolation::Nearest => self.nearest(delay_steps),
            Interpolation::Linear => self.linear(delay_steps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A history of `len` holding 0, 1, …, `n - 1` (newest `n - 1`).
    fn counting(len: usize, n: usize) -> DelayHistory {
        let mut h = DelayHistory::new(len, -1.0);
        h.set_latest(0.0);
        for k in 1..n {
            h.push(k as f64);
        }
        h
    }

    #[test]
    fn lags_wrap_around_the_ring() {
        let h = counting(5, 12); // holds 7..=11
        assert_eq!(h.lag(0), 11.0);
        assert_eq!(h.lag(3), 8.0);
        assert_eq!(h.lag(4), 7.0);
        assert_eq!(h.lag(99), 7.0, "beyond the buffer: oldest sample");
    }

    #[test]
    fn before_the_first_step_reads_the_fill_value() {
        let h = counting(8, 3); // -1 … -1, 0, 1, 2
        assert_eq!(h.lag(2), 0.0);
        assert_eq!(h.lag(3), -1.0);
        assert_eq!(h.lag(7), -1.0);
    }

    #[test]
    fn nearest_rounds_half_up() {
        let h = counting(10, 10); // lag m holds 9 - m
        assert_eq!(h.nearest(2.49), 7.0);
        assert_eq!(h.nearest(2.5), 6.0);
        assert_eq!(h.nearest(0.0), 9.0);
        assert_eq!(h.nearest(1e300), 0.0);
    }

    #[test]
    fn linear_interpolates_between_steps() {
        let h = counting(10, 10);
        assert_eq!(h.linear(2.0), 7.0);
        assert!((h.linear(2.25) - 6.75).abs() < 1e-15);
        assert_eq!(h.linear(9.0), 0.0);
        assert_eq!(h.linear(50.0), 0.0);
        assert_eq!(h.at(2.25, Interpolation::Nearest), 7.0);
    }

    #[test]
    fn interpolation_names_round_trip() {
        for how in [Interpolation::Nearest, Interpolation::Linear] {
            assert_eq!(Interpolation::from_name(how.name()), Some(how));
        }
        assert_eq!(Interpolation::from_name("cubic"), None);
    }
}
