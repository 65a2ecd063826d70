//! Quantities with units, as scenario files write them, and the range rules
//! every key shares.
//!
//! A quantity is a string with a number and a unit: `"10 Mbps"`, `"290 ms"`,
//! `"64 KiB"`. A number without a unit is refused, 0 excepted: `delay = 270`
//! could mean milliseconds or seconds, and read in either, the run is
//! meaningless rather than wrong in a visible way; the error gives the fix
//! (`270 has no unit; write "270 ms" or "270 s"`). This file reads
//! quantities and checks the limits common to all keys (sign, a ceiling per
//! dimension, whole bytes, probabilities, integer ranges); each error names
//! the key path it was given. Rules that belong to one key (a warm-up below
//! the duration, a buffer of at least one MSS) stay with that key's
//! validator in `config/` or with the algorithm that reads it (`aqm/params.rs`).
//!
//! This is a low layer beside `time.rs`: it knows nothing of scenarios.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::ConfigError;
use crate::time::{Rate, SimTime};

/// A quantity as written: a number, or a string holding a number and a unit.
/// Only [`quantity_value`] and the `quantity_*` readers below give it a value;
/// they refuse a number other than 0, and a string without a unit.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Quantity {
    Num(f64),
    Text(String),
    /// A number already in base units, from a caller whose argument names
    /// the unit (the `--duration` override is in seconds); a file cannot
    /// write one.
    Base(f64),
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string with a unit, such as \"10 Mbps\" or \"290 ms\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity::Num(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity::Num(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity::Num(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity::Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// What a quantity measures, and so which units it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Seconds.
    Time,
    /// Bits per second.
    Rate,
    /// Bytes.
    Bytes,
}

impl Dim {
    /// `"time"`, `"rate"` or `"bytes"`.
    pub fn from_name(name: &str) -> Option<Dim> {
        match name {
            "time" => Some(Dim::Time),
            "rate" => Some(Dim::Rate),
            "bytes" => Some(Dim::Bytes),
            _ => None,
        }
    }
}

/// The value of `q` in base units (s, bit/s, bytes), read exactly as a
/// scenario file's quantities are (a unit is required unless the value is
/// 0); errors name `path`. Finite, of any sign: range rules belong to the
/// key that uses it.
pub fn quantity_value(q: &Quantity, dim: Dim, path: &str) -> Result<f64, ConfigError> {
    q.value(dim, path)
}

fn unit_factor(dim: Dim, unit: &str) -> Option<f64> {
    let u = unit.trim();
    let f = match dim {
        Dim::Time => match u {
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            "min" => 60.0,
            _ => return None,
        },
        Dim::Rate => match u {
            "bps" | "bit/s" | "b/s" => 1.0,
            "kbps" | "Kbps" | "kbit/s" | "Kbit/s" => 1e3,
            "Mbps" | "mbps" | "Mbit/s" => 1e6,
            "Gbps" | "gbps" | "Gbit/s" => 1e9,
            "Tbps" | "tbps" | "Tbit/s" => 1e12,
            _ => return None,
        },
        Dim::Bytes => match u {
            "B" | "byte" | "bytes" => 1.0,
            "kB" | "KB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            _ => return None,
        },
    };
    Some(f)
}

fn dim_units(dim: Dim) -> &'static str {
    match dim {
        Dim::Time => "s, ms, us, ns, min",
        Dim::Rate => "bps, kbps, Mbps, Gbps, Tbps",
        Dim::Bytes => "B, kB, MB, GB, KiB, MiB, GiB",
    }
}

impl Quantity {
    fn value(&self, dim: Dim, path: &str) -> Result<f64, ConfigError> {
        let v = match self {
            Quantity::Num(v) => {
                if v.is_finite() && *v != 0.0 {
                    return Err(no_unit(&plain(*v), *v, dim, path));
                }
                *v
            }
            Quantity::Base(v) => *v,
            Quantity::Text(s) => {
                let s = s.trim();
                let split = s
                    .find(|c: char| {
                        !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
                    })
                    .unwrap_or(s.len());
                // "1e6" is a number, "1 e" is not: back off a trailing exponent
                // marker that belongs to no digits.
                let (num, unit) = s.split_at(split);
                let n: f64 = num.trim().parse().map_err(|_| {
                    ConfigError::new(path, format!("cannot read {s:?} as a number with a unit"))
                })?;
                let unit = unit.trim();
                if unit.is_empty() && n.is_finite() && n != 0.0 {
                    return Err(no_unit(num.trim(), n, dim, path));
                }
                let f = if unit.is_empty() {
                    1.0
                } else {
                    unit_factor(dim, unit).ok_or_else(|| {
                        ConfigError::new(
                            path,
                            format!("unknown unit {unit:?} (use one of: {})", dim_units(dim)),
                        )
                    })?
                };
                n * f
            }
        };
        if !v.is_finite() {
            return Err(ConfigError::new(path, "must be a finite number"));
        }
        Ok(v)
    }
}

/// The error for a number written without a unit (`written` as the file
/// has it, `n` its value), with two ways to write it that the dimension
/// makes likely: `270 has no unit; write "270 ms" or "270 s"`.
fn no_unit(written: &str, n: f64, dim: Dim, path: &str) -> ConfigError {
    let [a, b] = with_units(n, dim);
    ConfigError::new(
        path,
        format!("{written} has no unit; write \"{a}\" or \"{b}\""),
    )
}

/// Two readings of a bare number `n`. Times: milliseconds or seconds.
/// Rates: below 1,000 the number is likely in Mbit/s or kbit/s; from
/// 1,000 up, likely bit/s, shown in a larger unit too. Sizes: bytes, and
/// KiB below 1,000 or the same size in a larger unit from 1,000 up.
fn with_units(n: f64, dim: Dim) -> [String; 2] {
    let t = short(n);
    match dim {
        Dim::Time => [format!("{t} ms"), format!("{t} s")],
        Dim::Rate if n.abs() < 1e3 => [format!("{t} Mbps"), format!("{t} kbps")],
        Dim::Rate => {
            let (f, u) = [(1e12, "Tbps"), (1e9, "Gbps"), (1e6, "Mbps"), (1e3, "kbps")]
                .into_iter()
                .find(|(f, _)| n.abs() >= *f)
                .unwrap_or((1e3, "kbps"));
            [format!("{} {u}", short(n / f)), format!("{t} bps")]
        }
        Dim::Bytes if n.abs() < 1e3 => [format!("{t} B"), format!("{t} KiB")],
        Dim::Bytes => {
            const BINARY: [(f64, &str); 3] = [
                (1024.0 * 1024.0 * 1024.0, "GiB"),
                (1024.0 * 1024.0, "MiB"),
                (1024.0, "KiB"),
            ];
            const DECIMAL: [(f64, &str); 3] = [(1e9, "GB"), (1e6, "MB"), (1e3, "kB")];
            let (f, u) = BINARY
                .into_iter()
                .find(|(f, _)| n.abs() >= *f && (n / f).fract() == 0.0)
                .or_else(|| DECIMAL.into_iter().find(|(f, _)| n.abs() >= *f))
                .unwrap_or((1e3, "kB"));
            [format!("{t} B"), format!("{} {u}", short(n / f))]
        }
    }
}

/// `v` to nine significant digits, without trailing zeros:
/// 12.345678000000001 is `12.345678`.
fn short(v: f64) -> String {
    plain(format!("{v:.8e}").parse().unwrap_or(v))
}

/// `v` as people write it: `270`, `0.29`; an exponent only far from 1
/// (`1e300`).
fn plain(v: f64) -> String {
    if v == 0.0 || (1e-6..1e15).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Largest accepted time: 10^6 s (about 11.6 days of simulated time).
pub(crate) const MAX_SECONDS: f64 = 1e6;
/// Largest accepted rate: 10 Tbit/s.
pub(crate) const MAX_RATE: f64 = 1e13;
/// Largest accepted byte count: 1 TB.
const MAX_BYTES: f64 = 1e12;

/// A time in `[0, MAX_SECONDS]` (`allow_zero`) or `(0, MAX_SECONDS]`.
pub(crate) fn quantity_time(
    q: &Quantity,
    path: &str,
    allow_zero: bool,
) -> Result<SimTime, ConfigError> {
    let v = q.value(Dim::Time, path)?;
    check_range(v, path, allow_zero, MAX_SECONDS, "s")?;
    Ok(SimTime::from_secs_f64(v))
}

/// A rate of at least 1 bit/s, rounded to whole bit/s.
pub(crate) fn quantity_rate(q: &Quantity, path: &str) -> Result<Rate, ConfigError> {
    let v = q.value(Dim::Rate, path)?;
    check_range(v, path, false, MAX_RATE, "bit/s")?;
    if v < 1.0 {
        return Err(ConfigError::new(path, "must be at least 1 bit/s"));
    }
    Ok(Rate(v.round() as u64))
}

/// A rate in bit/s that may be zero (a lower bound on a share of a link).
pub(crate) fn quantity_rate_or_zero(q: &Quantity, path: &str) -> Result<f64, ConfigError> {
    let v = q.value(Dim::Rate, path)?;
    check_range(v, path, true, MAX_RATE, "bit/s")?;
    Ok(v)
}

/// A whole number of bytes, > 0.
pub(crate) fn quantity_bytes(q: &Quantity, path: &str) -> Result<u64, ConfigError> {
    let v = q.value(Dim::Bytes, path)?;
    check_range(v, path, false, MAX_BYTES, "bytes")?;
    if v.fract() != 0.0 {
        return Err(ConfigError::new(path, "must be a whole number of bytes"));
    }
    Ok(v as u64)
}

/// A size in bytes (> 0; fractions allowed: thresholds, not packets).
pub(crate) fn quantity_bytes_f64(q: &Quantity, path: &str) -> Result<f64, ConfigError> {
    let v = q.value(Dim::Bytes, path)?;
    check_range(v, path, false, MAX_BYTES, "bytes")?;
    Ok(v)
}

/// `v` is >= 0 (> 0 unless `allow_zero`) and at most `max` `unit`.
pub(crate) fn check_range(
    v: f64,
    path: &str,
    allow_zero: bool,
    max: f64,
    unit: &str,
) -> Result<(), ConfigError> {
    if v < 0.0 || (!allow_zero && v == 0.0) {
        let rule = if allow_zero {
            "must be >= 0"
        } else {
            "must be > 0"
        };
        return Err(ConfigError::new(path, rule));
    }
    if v > max {
        return Err(ConfigError::new(
            path,
            format!("must be at most {max:e} {unit}"),
        ));
    }
    Ok(())
}

/// `v` is a probability: finite and in [0, 1].
pub(crate) fn probability(v: f64, path: &str) -> Result<f64, ConfigError> {
    if !v.is_finite() || !(0.0..=1.0).contains(&v) {
        return Err(ConfigError::new(path, "must be a probability in [0, 1]"));
    }
    Ok(v)
}

/// `v` is in `[lo, hi]`.
pub(crate) fn int_in(v: i64, path: &str, lo: i64, hi: i64) -> Result<i64, ConfigError> {
    if v < lo || v > hi {
        return Err(ConfigError::new(
            path,
            format!("must be between {lo} and {hi}"),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(v: f64, dim: Dim) -> String {
        match quantity_value(&Quantity::Num(v), dim, "k") {
            Ok(v) => format!("ok {v}"),
            Err(e) => e.to_string(),
        }
    }

    fn text(s: &str, dim: Dim) -> String {
        match quantity_value(&Quantity::Text(s.into()), dim, "k") {
            Ok(v) => format!("ok {v}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_bare_number_is_refused_with_the_fix() {
        assert_eq!(
            num(270.0, Dim::Time),
            r#"k: 270 has no unit; write "270 ms" or "270 s""#
        );
        assert_eq!(
            num(0.29, Dim::Time),
            r#"k: 0.29 has no unit; write "0.29 ms" or "0.29 s""#
        );
        assert_eq!(
            num(20.0, Dim::Rate),
            r#"k: 20 has no unit; write "20 Mbps" or "20 kbps""#
        );
        assert_eq!(
            num(1e7, Dim::Rate),
            r#"k: 10000000 has no unit; write "10 Mbps" or "10000000 bps""#
        );
        assert_eq!(
            num(12_345_678.0, Dim::Rate),
            r#"k: 12345678 has no unit; write "12.345678 Mbps" or "12345678 bps""#
        );
        assert_eq!(
            num(64.0, Dim::Bytes),
            r#"k: 64 has no unit; write "64 B" or "64 KiB""#
        );
        assert_eq!(
            num(1500.0, Dim::Bytes),
            r#"k: 1500 has no unit; write "1500 B" or "1.5 kB""#
        );
        assert_eq!(
            num(65536.0, Dim::Bytes),
            r#"k: 65536 has no unit; write "65536 B" or "64 KiB""#
        );
        assert_eq!(
            num(1e300, Dim::Time),
            r#"k: 1e300 has no unit; write "1e300 ms" or "1e300 s""#
        );
        // The sign is the key's rule, checked once there is a unit.
        assert_eq!(
            num(-5.0, Dim::Time),
            r#"k: -5 has no unit; write "-5 ms" or "-5 s""#
        );
    }

    #[test]
    fn a_string_without_a_unit_is_a_bare_number() {
        assert_eq!(
            text(" 270 ", Dim::Time),
            r#"k: 270 has no unit; write "270 ms" or "270 s""#
        );
        assert_eq!(
            text("1e6", Dim::Bytes),
            r#"k: 1e6 has no unit; write "1000000 B" or "1 MB""#
        );
    }

    #[test]
    fn zero_needs_no_unit() {
        for dim in [Dim::Time, Dim::Rate, Dim::Bytes] {
            assert_eq!(num(0.0, dim), "ok 0");
            assert_eq!(num(-0.0, dim), "ok -0");
            assert_eq!(text("0", dim), "ok 0");
        }
    }

    #[test]
    fn units_give_base_units() {
        assert_eq!(text("270 ms", Dim::Time), "ok 0.27");
        assert_eq!(text("1.5min", Dim::Time), "ok 90");
        assert_eq!(text("20 Mbps", Dim::Rate), "ok 20000000");
        assert_eq!(text("64 KiB", Dim::Bytes), "ok 65536");
        assert_eq!(
            text("5 parsecs", Dim::Time),
            r#"k: unknown unit "parsecs" (use one of: s, ms, us, ns, min)"#
        );
        assert_eq!(
            text("fast", Dim::Rate),
            r#"k: cannot read "fast" as a number with a unit"#
        );
    }

    #[test]
    fn a_number_in_named_base_units_is_taken_as_it_is() {
        let q = Quantity::Base(30.0);
        assert_eq!(quantity_value(&q, Dim::Time, "k").unwrap(), 30.0);
        let q = Quantity::Base(f64::NAN);
        assert_eq!(
            quantity_value(&q, Dim::Time, "k").unwrap_err().to_string(),
            "k: must be a finite number"
        );
    }

    #[test]
    fn non_finite_numbers_are_refused_as_before() {
        assert_eq!(num(f64::NAN, Dim::Time), "k: must be a finite number");
        assert_eq!(num(f64::INFINITY, Dim::Rate), "k: must be a finite number");
    }
}
