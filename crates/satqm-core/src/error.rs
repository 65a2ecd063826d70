//! Error types. Nothing in the core panics on user input: bad scenarios come
//! back as [`ConfigError`] naming the key path and the rule broken.

use thiserror::Error;

/// A scenario that cannot be run as written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{path}: {message}")]
pub struct ConfigError {
    /// Dotted key path, e.g. `topology.bottleneck.rate` or `traffic[1].start`.
    pub path: String,
    /// The rule broken, e.g. `must be > 0`.
    pub message: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Everything that can go wrong.
#[derive(Debug, Error)]
pub enum Error {
    #[error("invalid scenario: {0}")]
    Config(#[from] ConfigError),
    /// The scenario text is not valid TOML.
    #[error("invalid TOML: {0}")]
    Parse(String),
    /// A run stopped because an internal invariant was broken.
    #[error("simulation failed: {0}")]
    Simulation(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
