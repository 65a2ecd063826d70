//! Quantities with units, as scenario files write them, and the range rules
//! every key shares.
//!
//! A quantity is a bare number in base units (bit/s, seconds, bytes) or a
//! string with a unit: `"10 Mbps"`, `"290 ms"`, `"64 KiB"`. This file reads
//! them and checks the limits common to all keys (sign, a ceiling per
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

/// A number, or a string holding a number and a unit.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Quantity {
    Num(f64),
    Text(String),
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string with a unit, such as \"10 Mbps\" or \"290 ms\"")
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
/// scenario file's quantities are; errors name `path`. Finite, of any sign:
/// range rules belong to the key that uses it.
pub fn quantity_value(q: &Quantity, dim: Dim, path: &str) -> Result<f64, ConfigError> {
    q.value(dim, path)
}

fn unit_factor(dim: Dim, unit: &str) -> Option<f64> {
    let u = unit.trim();
    let f = match dim {
        Dim::Time => match u {
            "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            "min" => 60.0,
            _ => return None,
        },
        Dim::Rate => match u {
            "" | "bps" | "bit/s" | "b/s" => 1.0,
            "kbps" | "Kbps" | "kbit/s" | "Kbit/s" => 1e3,
            "Mbps" | "mbps" | "Mbit/s" => 1e6,
            "Gbps" | "gbps" | "Gbit/s" => 1e9,
            "Tbps" | "tbps" | "Tbit/s" => 1e12,
            _ => return None,
        },
        Dim::Bytes => match u {
            "" | "B" | "byte" | "bytes" => 1.0,
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
            Quantity::Num(v) => *v,
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
                let f = unit_factor(dim, unit).ok_or_else(|| {
                    ConfigError::new(
                        path,
                        format!(
                            "unknown unit {:?} (use one of: {})",
                            unit.trim(),
                            dim_units(dim)
                        ),
                    )
                })?;
                n * f
            }
        };
        if !v.is_finite() {
            return Err(ConfigError::new(path, "must be a finite number"));
        }
        Ok(v)
    }
}

/// Largest accepted time: 10^6 s (about 11.6 days of simulated time).
const MAX_SECONDS: f64 = 1e6;
/// Largest accepted rate: 10 Tbit/s.
const MAX_RATE: f64 = 1e13;
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
