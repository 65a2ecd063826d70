//! Reading an AQM's parameter table: typed getters with range checks, and
//! a final check that refuses keys the algorithm does not use.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::ConfigError;
use crate::time::SimTime;
use crate::units::{
    quantity_bytes_f64, quantity_rate, quantity_rate_or_zero, quantity_time, Quantity,
};

pub struct ParamTable {
    path: String,
    map: BTreeMap<String, toml::Value>,
    used: BTreeSet<String>,
}

impl ParamTable {
    pub fn new(path: impl Into<String>, map: BTreeMap<String, toml::Value>) -> ParamTable {
        ParamTable {
            path: path.into(),
            map,
            used: BTreeSet::new(),
        }
    }

    pub fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn take(&mut self, key: &str) -> Option<toml::Value> {
        self.used.insert(key.to_string());
        self.map.get(key).cloned()
    }

    /// A number; `None` if absent.
    pub fn opt_f64(&mut self, key: &str) -> Result<Option<f64>, ConfigError> {
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some(i as f64)),
            Some(toml::Value::Float(f)) if f.is_finite() => Ok(Some(f)),
            Some(toml::Value::Float(_)) => Err(ConfigError::new(path, "must be a finite number")),
            Some(other) => Err(ConfigError::new(
                path,
                format!("must be a number, got {}", other.type_str()),
            )),
        }
    }

    /// A whole number in `[lo, hi]`.
    pub fn whole_in(
        &mut self,
        key: &str,
        default: u32,
        lo: f64,
        hi: f64,
    ) -> Result<u32, ConfigError> {
        let v = self.f64_in(key, default as f64, lo, false, hi)?;
        if v.fract() != 0.0 {
            return Err(ConfigError::new(
                self.key_path(key),
                "must be a whole number",
            ));
        }
        Ok(v as u32)
    }

    /// A number in `[lo, hi]` (`lo_open`: strictly above `lo`).
    pub fn f64_in(
        &mut self,
        key: &str,
        default: f64,
        lo: f64,
        lo_open: bool,
        hi: f64,
    ) -> Result<f64, ConfigError> {
        let v = self.opt_f64(key)?.unwrap_or(default);
        self.check_range(key, v, lo, lo_open, hi)
    }

    pub fn check_range(
        &self,
        key: &str,
        v: f64,
        lo: f64,
        lo_open: bool,
        hi: f64,
    ) -> Result<f64, ConfigError> {
        let below = if lo_open { v <= lo } else { v < lo };
        if below || v > hi {
            let open = if lo_open { "(" } else { "[" };
            return Err(ConfigError::new(
                self.key_path(key),
                format!("must be in {open}{lo}, {hi}]"),
            ));
        }
        Ok(v)
    }

    pub fn required_f64(
        &mut self,
        key: &str,
        lo: f64,
        lo_open: bool,
        hi: f64,
    ) -> Result<f64, ConfigError> {
        match self.opt_f64(key)? {
            Some(v) => self.check_range(key, v, lo, lo_open, hi),
            None => Err(ConfigError::new(self.key_path(key), "is required")),
        }
    }

    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, ConfigError> {
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(default),
            Some(toml::Value::Boolean(b)) => Ok(b),
            Some(other) => Err(ConfigError::new(
                path,
                format!("must be true or false, got {}", other.type_str()),
            )),
        }
    }

    /// `ce_threshold` (a time, off if absent) and `ce_threshold_ect1`,
    /// which needs it.
    pub fn ce_threshold(&mut self) -> Result<(Option<SimTime>, bool), ConfigError> {
        let th = self.opt_time("ce_threshold")?;
        let path = self.key_path("ce_threshold_ect1");
        let ect1 = self.bool("ce_threshold_ect1", false)?;
        if ect1 && th.is_none() {
            return Err(ConfigError::new(
                path,
                "applies ce_threshold to ECT(1) packets only: give ce_threshold too",
            ));
        }
        Ok((th, ect1))
    }

    fn quantity(&mut self, key: &str) -> Result<Option<Quantity>, ConfigError> {
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some(Quantity::Num(i as f64))),
            Some(toml::Value::Float(f)) => Ok(Some(Quantity::Num(f))),
            Some(toml::Value::String(s)) => Ok(Some(Quantity::Text(s))),
            Some(other) => Err(ConfigError::new(
                path,
                format!("must be a string with a unit, got {}", other.type_str()),
            )),
        }
    }

    /// A time (> 0), with a default.
    pub fn time(&mut self, key: &str, default: SimTime) -> Result<SimTime, ConfigError> {
        let path = self.key_path(key);
        match self.quantity(key)? {
            None => Ok(default),
            Some(q) => quantity_time(&q, &path, false),
        }
    }

    /// A time that may be zero (>= 0), with a default.
    pub fn time_or_zero(&mut self, key: &str, default: SimTime) -> Result<SimTime, ConfigError> {
        let path = self.key_path(key);
        match self.quantity(key)? {
            None => Ok(default),
            Some(q) => quantity_time(&q, &path, true),
        }
    }

    /// A rate in bit/s, if given.
    pub fn opt_rate(&mut self, key: &str) -> Result<Option<u64>, ConfigError> {
        let path = self.key_path(key);
        match self.quantity(key)? {
            None => Ok(None),
            Some(q) => Ok(Some(quantity_rate(&q, &path)?.bps())),
        }
    }

    /// A rate in bit/s that may be zero, if given.
    pub fn opt_rate_or_zero(&mut self, key: &str) -> Result<Option<f64>, ConfigError> {
        let path = self.key_path(key);
        match self.quantity(key)? {
            None => Ok(None),
            Some(q) => Ok(Some(quantity_rate_or_zero(&q, &path)?)),
        }
    }

    /// A size in bytes (> 0), if given: a number of bytes or a string with
    /// a unit ("30 kB").
    pub fn opt_bytes(&mut self, key: &str) -> Result<Option<f64>, ConfigError> {
        let path = self.key_path(key);
        match self.quantity(key)? {
            None => Ok(None),
            Some(q) => Ok(Some(quantity_bytes_f64(&q, &path)?)),
        }
    }

    /// A required size in bytes.
    pub fn required_bytes(&mut self, key: &str) -> Result<f64, ConfigError> {
        match self.opt_bytes(key)? {
            Some(v) => Ok(v),
            None => Err(ConfigError::new(self.key_path(key), "is required")),
        }
    }

    /// A time (> 0), if given.
    pub fn opt_time(&mut self, key: &str) -> Result<Option<SimTime>, ConfigError> {
        let path = self.key_path(key);
        match self.quantity(key)? {
            None => Ok(None),
            Some(q) => Ok(Some(quantity_time(&q, &path, false)?)),
        }
    }

    /// A string, if given.
    pub fn opt_str(&mut self, key: &str) -> Result<Option<String>, ConfigError> {
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(ConfigError::new(
                path,
                format!("must be a string, got {}", other.type_str()),
            )),
        }
    }

    /// A list of strings, if given.
    pub fn opt_str_list(&mut self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        let path = self.key_path(key);
        match self.take(key) {
            None => Ok(None),
            Some(toml::Value::Array(a)) => a
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    toml::Value::String(s) => Ok(s),
                    other => Err(ConfigError::new(
                        format!("{path}[{i}]"),
                        format!("must be a string, got {}", other.type_str()),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(ConfigError::new(
                path,
                format!("must be a list of strings, got {}", other.type_str()),
            )),
        }
    }

    /// Refuse keys nobody read.
    pub fn finish(&self, kind: &str) -> Result<(), ConfigError> {
        if let Some(k) = self.map.keys().find(|k| !self.used.contains(*k)) {
            let mut known: Vec<&str> = self.used.iter().map(|s| s.as_str()).collect();
            known.retain(|k| *k != "kind");
            return Err(ConfigError::new(
                self.key_path(k),
                format!(
                    "is not a parameter of {kind} (its parameters: {})",
                    known.join(", ")
                ),
            ));
        }
        Ok(())
    }
}
