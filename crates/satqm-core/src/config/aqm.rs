//! Validates `[[aqm]]` entries: where each AQM acts and what it watches
//! (the AVQRED papers' Table 1 separates the two), and its mode. The
//! algorithm's own keys are read by `aqm::AqmParams::parse`, which refuses
//! the ones it does not use.

use crate::aqm::params::ParamTable;
use crate::aqm::AqmParams;
use crate::error::ConfigError;

use super::raw::RawAqm;

/// What a congestion signal does to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AqmMode {
    Drop,
    /// ECN-mark ECN-capable packets; drop the others.
    Mark,
}

/// One AQM instance and its placement.
#[derive(Clone, Debug, PartialEq)]
pub struct AqmConfig {
    /// Link whose port marks or drops.
    pub at: String,
    /// Link whose queue the algorithm watches.
    pub monitor: String,
    pub mode: AqmMode,
    pub params: AqmParams,
}

/// Every `[[aqm]]` entry, in order.
pub(super) fn aqms(raw: Option<&Vec<RawAqm>>) -> Result<Vec<AqmConfig>, ConfigError> {
    raw.into_iter()
        .flatten()
        .enumerate()
        .map(|(i, a)| aqm_entry(a, &format!("aqm[{i}]")))
        .collect()
}

/// One entry: `at` defaults to the bottleneck, `monitor` to `at`. A queue
/// structure (RED+Tail) and an AQM that decides at dequeue (CoDel) must
/// watch the queue they act on.
fn aqm_entry(a: &RawAqm, path: &str) -> Result<AqmConfig, ConfigError> {
    let mode = match a.mode.as_deref() {
        None if crate::aqm::default_marks(&a.kind) => AqmMode::Mark,
        None | Some("drop") => AqmMode::Drop,
        Some("mark") => AqmMode::Mark,
        Some(other) => {
            return Err(ConfigError::new(
                format!("{path}.mode"),
                format!("unknown mode {other:?} (known: drop, mark)"),
            ))
        }
    };
    if matches!(a.kind.as_str(), "dualpi2" | "pi2") && a.mode.is_some() {
        return Err(ConfigError::new(
            format!("{path}.mode"),
            format!(
                "{} marks L4S packets and ECN-capable classic packets and drops the others \
                 by its own rules (RFC 9332); mode does not apply",
                a.kind
            ),
        ));
    }
    let at = a.at.clone().unwrap_or_else(|| "bottleneck".into());
    let monitor = a.monitor.clone().unwrap_or_else(|| at.clone());
    let mut table = ParamTable::new(path, a.params.clone());
    let params = AqmParams::parse(&a.kind, &mut table)?;
    if params.is_queue_structure() && monitor != at {
        return Err(ConfigError::new(
            format!("{path}.monitor"),
            format!(
                "{} is the queue structure of its port and must monitor it ({at:?})",
                a.kind
            ),
        ));
    }
    if params.acts_at_dequeue() && monitor != at {
        return Err(ConfigError::new(
            format!("{path}.monitor"),
            format!(
                "{} decides at dequeue and must monitor the queue it acts on ({at:?})",
                a.kind
            ),
        ));
    }
    Ok(AqmConfig {
        at,
        monitor,
        mode,
        params,
    })
}
