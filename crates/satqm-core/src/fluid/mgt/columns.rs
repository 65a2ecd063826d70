//! Parameter sets from named columns: the keyword arguments of the Python
//! API's `simulate_fluid`, each one value for every set or one per set.

use super::params::{AqmKind, AqmLaw, AvqLaw, MgtParams, PiGains, PiLaw, RedLaw};
use crate::error::ConfigError;

/// Keys every closure takes: required, then optional with defaults.
const COMMON_REQUIRED: [&str; 3] = ["N", "C", "Tp"];
const COMMON_OPTIONAL: [&str; 5] = ["W0", "q0", "buffer", "w_min", "w_max"];

fn aqm_keys(kind: AqmKind) -> &'static [&'static str] {
    match kind {
        AqmKind::Red => &["min_th", "max_th", "max_p", "w_q", "red_delta"],
        AqmKind::Pi => &["q_ref", "kp", "ki", "a", "b", "fs", "p0"],
        AqmKind::Avq => &["gamma", "alpha", "vq_buffer", "vcap0"],
        AqmKind::Fixed => &["p_fixed"],
        AqmKind::DropTail => &[],
    }
}

/// Columns broadcast to `members` rows, read by key.
struct Columns<'a> {
    cols: &'a [(String, Vec<f64>)],
    aqm: &'static str,
}

impl Columns<'_> {
    fn get(&self, key: &str) -> Option<&[f64]> {
        self.cols
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }

    fn opt(&self, key: &str, i: usize) -> Option<f64> {
        self.get(key)
            .map(|v| if v.len() == 1 { v[0] } else { v[i] })
    }

    fn or(&self, key: &str, i: usize, default: f64) -> f64 {
        self.opt(key, i).unwrap_or(default)
    }

    fn req(&self, key: &str, i: usize) -> Result<f64, ConfigError> {
        self.opt(key, i)
            .ok_or_else(|| ConfigError::new(key, format!("is required for aqm='{}'", self.aqm)))
    }

    /// The closure of set `i`.
    fn law(&self, kind: AqmKind, gentle: bool, i: usize) -> Result<AqmLaw, ConfigError> {
        let law = match kind {
            AqmKind::Red => AqmLaw::Red(RedLaw {
                min_th: self.req("min_th", i)?,
                max_th: self.req("max_th", i)?,
                max_p: self.req("max_p", i)?,
                w_q: self.req("w_q", i)?,
                gentle,
                delta_s: self.opt("red_delta", i),
            }),
            AqmKind::Pi => {
                let has = |k: &str| self.get(k).is_some();
                let gains = if has("kp") || has("ki") {
                    if has("a") || has("b") || has("fs") {
                        return Err(ConfigError::new(
                            "kp",
                            "give either kp and ki, or a, b and fs",
                        ));
                    }
                    PiGains::Continuous {
                        kp: self.req("kp", i)?,
                        ki: self.req("ki", i)?,
                    }
                } else if has("a") || has("b") || has("fs") {
                    PiGains::Discrete {
                        a: self.req("a", i)?,
                        b: self.req("b", i)?,
                        fs: self.req("fs", i)?,
                    }
                } else {
                    return Err(ConfigError::new(
                        "kp",
                        "aqm='pi' needs kp and ki, or a, b and fs",
                    ));
                };
                AqmLaw::Pi(PiLaw {
                    q_ref: self.req("q_ref", i)?,
                    gains,
                    p0: self.or("p0", i, 0.0),
                })
            }
            AqmKind::Avq => AqmLaw::Avq(AvqLaw {
                gamma: self.req("gamma", i)?,
                alpha: self.req("alpha", i)?,
                vq_buffer: self.or("vq_buffer", i, 0.0),
                vcap0: self.opt("vcap0", i),
            }),
            AqmKind::Fixed => AqmLaw::Fixed {
                p: self.req("p_fixed", i)?,
            },
            AqmKind::DropTail => AqmLaw::DropTail,
        };
        Ok(law)
    }
}

/// Parameter sets from named columns, as `simulate_fluid`'s keywords:
/// each column holds one value (used for every set) or one per set.
/// `gentle` applies to RED only. Unknown or duplicated keys, columns of
/// different lengths and missing required keys are errors naming the key.
pub fn params_from_columns(
    aqm: &str,
    gentle: bool,
    columns: &[(String, Vec<f64>)],
) -> Result<Vec<MgtParams>, ConfigError> {
    let kind = AqmKind::from_name(aqm).ok_or_else(|| {
        let names: Vec<&str> = AqmKind::ALL.iter().map(|k| k.name()).collect();
        ConfigError::new("aqm", format!("must be one of {names:?}, got {aqm:?}"))
    })?;
    let members = members(kind, aqm, columns)?;
    let cols = Columns {
        cols: columns,
        aqm: kind.name(),
    };
    let mut sets = Vec::with_capacity(members);
    for i in 0..members {
        let law = cols.law(kind, gentle, i)?;
        let set = MgtParams {
            n: cols.req("N", i)?,
            c: cols.req("C", i)?,
            tp: cols.req("Tp", i)?,
            w0: cols.or("W0", i, 1.0),
            q0: cols.or("q0", i, 0.0),
            buffer: cols.or("buffer", i, f64::INFINITY),
            w_min: cols.or("w_min", i, 1.0),
            w_max: cols.or("w_max", i, f64::INFINITY),
            aqm: law,
        };
        sets.push(set);
    }
    Ok(sets)
}

/// Check the keys and lengths of the columns for closure `kind` (`aqm` as
/// the caller spelt it); returns the number of sets they make.
fn members(kind: AqmKind, aqm: &str, columns: &[(String, Vec<f64>)]) -> Result<usize, ConfigError> {
    let mut members = 1;
    for (j, (key, v)) in columns.iter().enumerate() {
        let known = COMMON_REQUIRED.contains(&key.as_str())
            || COMMON_OPTIONAL.contains(&key.as_str())
            || aqm_keys(kind).contains(&key.as_str());
        if !known {
            return Err(ConfigError::new(
                key.as_str(),
                format!("is not a parameter of aqm='{aqm}'"),
            ));
        }
        if columns[..j].iter().any(|(k, _)| k == key) {
            return Err(ConfigError::new(key.as_str(), "is given twice"));
        }
        if v.is_empty() {
            return Err(ConfigError::new(key.as_str(), "is an empty array"));
        }
        if v.len() > 1 {
            if members > 1 && v.len() != members {
                return Err(ConfigError::new(
                    key.as_str(),
                    format!(
                        "has {} values but another parameter has {members}: parameter arrays cannot be broadcast together",
                        v.len()
                    ),
                ));
            }
            members = v.len();
        }
    }
    Ok(members)
}
