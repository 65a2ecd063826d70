//! Validates `[simulation]`: how long the run lasts, its seed, how often the
//! sampler records, the warm-up the summary leaves out, and which flows'
//! congestion windows are traced.

use crate::capture::{CaptureSpec, Side};
use crate::error::ConfigError;
use crate::time::SimTime;
use crate::units::{int_in, quantity_bytes, quantity_time, Quantity};

use super::raw::{RawLogDrops, RawSimulation};
use super::traffic::{Traffic, TrafficKind};

/// Most samples a run may record per monitored link.
const MAX_SAMPLES: u64 = 10_000_000;

/// The default of `simulation.max_memory`: a fixed 8 GB rather than a
/// share of the machine's memory, so that whether a scenario is accepted
/// does not depend on the machine that reads it.
pub const DEFAULT_MAX_MEMORY: u64 = 8_000_000_000;

/// The drop log's rows when `simulation.log_drops` is not given: about
/// 300 MB of rows. A long run on a fast link drops tens of millions of
/// packets; past this the run keeps counting them (the summary is
/// complete) and says that the log stopped, unless `log_drops = true`
/// asks for every row.
pub const DEFAULT_DROP_LOG_ROWS: u64 = 10_000_000;

/// The run's settings, apart from the traced flows (which need the traffic
/// to be known: see [`trace_cwnd`]).
pub(super) struct Run {
    pub seed: u64,
    pub duration: SimTime,
    pub sample_interval: SimTime,
    pub warmup: SimTime,
    pub max_memory: u64,
    pub drop_log_rows: u64,
    pub trace_traffic: bool,
}

pub(super) fn run(sim: &RawSimulation) -> Result<Run, ConfigError> {
    let duration = quantity_time(&sim.duration, "simulation.duration", false)?;
    let sample_interval = match &sim.sample_interval {
        Some(q) => quantity_time(q, "simulation.sample_interval", false)?,
        None => SimTime::from_ms(100),
    };
    if sample_interval < SimTime::from_us(1) {
        return Err(ConfigError::new(
            "simulation.sample_interval",
            "must be at least 1 us",
        ));
    }
    if duration.ns() / sample_interval.ns() > MAX_SAMPLES {
        return Err(ConfigError::new(
            "simulation.sample_interval",
            format!("gives more than {MAX_SAMPLES} samples over simulation.duration; use a longer interval"),
        ));
    }
    let warmup = match &sim.warmup {
        Some(q) => quantity_time(q, "simulation.warmup", true)?,
        None => SimTime::ZERO,
    };
    if warmup >= duration {
        return Err(ConfigError::new(
            "simulation.warmup",
            "must be less than simulation.duration",
        ));
    }
    let seed = match sim.seed {
        Some(s) if s < 0 => return Err(ConfigError::new("simulation.seed", "must be >= 0")),
        Some(s) => s as u64,
        None => 1,
    };
    Ok(Run {
        seed,
        duration,
        sample_interval,
        warmup,
        max_memory: max_memory(sim.max_memory.as_ref())?,
        drop_log_rows: drop_log_rows(sim.log_drops.as_ref())?,
        trace_traffic: sim.trace_traffic.unwrap_or(false),
    })
}

/// `simulation.max_memory` (a byte quantity such as "16 GB"), or its
/// default.
pub(super) fn max_memory(q: Option<&Quantity>) -> Result<u64, ConfigError> {
    match q {
        Some(q) => quantity_bytes(q, "simulation.max_memory"),
        None => Ok(DEFAULT_MAX_MEMORY),
    }
}

/// `simulation.log_drops`: the most rows the drop log keeps.
fn drop_log_rows(v: Option<&RawLogDrops>) -> Result<u64, ConfigError> {
    Ok(match v {
        None => DEFAULT_DROP_LOG_ROWS,
        Some(RawLogDrops::All(true)) => u64::MAX,
        Some(RawLogDrops::All(false)) => 0,
        Some(RawLogDrops::Rows(n)) => u64::try_from(*n).map_err(|_| {
            ConfigError::new(
                "simulation.log_drops",
                format!("must be true, false or a number of rows (>= 0), got {n}"),
            )
        })?,
    })
}

/// Most bytes a captured frame may keep (the largest pcapng snap length
/// Wireshark accepts).
const MAX_SNAPLEN: i64 = 262_144;

/// `simulation.capture` and its side, window and snap length. The link names are
/// checked against the topology when the network is built.
pub(super) fn capture(
    sim: &RawSimulation,
    duration: SimTime,
) -> Result<Option<CaptureSpec>, ConfigError> {
    let Some(links) = &sim.capture else {
        for (set, key) in [
            (sim.capture_side.is_some(), "simulation.capture_side"),
            (sim.capture_from.is_some(), "simulation.capture_from"),
            (sim.capture_until.is_some(), "simulation.capture_until"),
            (sim.capture_snaplen.is_some(), "simulation.capture_snaplen"),
        ] {
            if set {
                return Err(ConfigError::new(
                    key,
                    "needs simulation.capture (the links to capture)",
                ));
            }
        }
        return Ok(None);
    };
    for (i, name) in links.iter().enumerate() {
        if links[..i].contains(name) {
            return Err(ConfigError::new(
                format!("simulation.capture[{i}]"),
                format!("{name:?} is listed twice"),
            ));
        }
    }
    let side = match &sim.capture_side {
        None => Side::default(),
        Some(name) => Side::parse(name).ok_or_else(|| {
            ConfigError::new(
                "simulation.capture_side",
                format!("must be \"out\", \"in\" or \"both\", got {name:?}"),
            )
        })?,
    };
    let from = match &sim.capture_from {
        Some(q) => quantity_time(q, "simulation.capture_from", true)?,
        None => SimTime::ZERO,
    };
    let until = match &sim.capture_until {
        Some(q) => quantity_time(q, "simulation.capture_until", false)?,
        None => duration + SimTime(1),
    };
    if until <= from {
        return Err(ConfigError::new(
            "simulation.capture_until",
            "must be later than simulation.capture_from",
        ));
    }
    let snaplen = match sim.capture_snaplen {
        Some(n) => int_in(n, "simulation.capture_snaplen", 64, MAX_SNAPLEN)? as u32,
        None => DEFAULT_SNAPLEN,
    };
    Ok(Some(CaptureSpec {
        links: links.clone(),
        side,
        from,
        until,
        snaplen,
    }))
}

/// The default snap length: every header satqm writes (Ethernet, IPv4 and
/// TCP with three SACK blocks take 94 bytes) and no payload.
pub const DEFAULT_SNAPLEN: u32 = 96;

/// The flows whose congestion window the sampler records: ids below
/// `n_flows`, one per pair of each traffic entry.
pub(super) fn trace_cwnd(sim: &RawSimulation, n_flows: usize) -> Result<Vec<u32>, ConfigError> {
    flow_ids(sim.trace_cwnd.as_deref(), "trace_cwnd", n_flows)
}

/// The flows whose packets are recorded for sequence graphs
/// (`simulation.trace_seq`): TCP connections only, since the graph is of
/// TCP's sequence space.
pub(super) fn trace_seq(sim: &RawSimulation, traffic: &[Traffic]) -> Result<Vec<u32>, ConfigError> {
    let n_flows = traffic.iter().map(|t| t.pairs.len()).sum();
    let ids = flow_ids(sim.trace_seq.as_deref(), "trace_seq", n_flows)?;
    for (i, &f) in ids.iter().enumerate() {
        let mut first = 0;
        for (e, t) in traffic.iter().enumerate() {
            let n = t.pairs.len() as u32;
            if f < first + n {
                let kind = match t.kind {
                    TrafficKind::Cbr { .. } => Some("cbr"),
                    TrafficKind::Atsp(_) => Some("atsp"),
                    _ => None,
                };
                if let Some(kind) = kind {
                    return Err(ConfigError::new(
                        format!("simulation.trace_seq[{i}]"),
                        format!(
                            "flow {f} is a {kind} flow (traffic[{e}]): sequence graphs are of TCP connections"
                        ),
                    ));
                }
                break;
            }
            first += n;
        }
    }
    Ok(ids)
}

fn flow_ids(ids: Option<&[i64]>, key: &str, n_flows: usize) -> Result<Vec<u32>, ConfigError> {
    ids.iter()
        .copied()
        .flatten()
        .enumerate()
        .map(|(i, f)| {
            let path = format!("simulation.{key}[{i}]");
            if n_flows == 0 {
                return Err(ConfigError::new(
                    path,
                    "the scenario's traffic has no flows",
                ));
            }
            Ok(int_in(*f, &path, 0, n_flows as i64 - 1)? as u32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};

    #[test]
    fn sequence_traces_are_of_tcp_flows() {
        let cbr = BASE.replace(
            "duration = \"10 s\"",
            "duration = \"10 s\"\ntrace_seq = [3]",
        ) + "[[traffic]]\nkind = \"cbr\"\npairs = 0\nrate = \"1 Mbps\"\n";
        assert_eq!(
            err(&cbr),
            "simulation.trace_seq[0]: flow 3 is a cbr flow (traffic[1]): sequence graphs are of TCP connections"
        );
    }

    #[test]
    fn run_settings_are_bounded() {
        assert_eq!(
            err(&BASE.replace("duration = \"10 s\"", "duration = \"1e300 s\"")),
            "simulation.duration: must be at most 1e6 s"
        );
        assert_eq!(
            err(&BASE.replace(
                "duration = \"10 s\"",
                "duration = \"10 s\"\nwarmup = \"10 s\""
            )),
            "simulation.warmup: must be less than simulation.duration"
        );
        assert_eq!(
            err(&BASE.replace(
                "duration = \"10 s\"",
                "duration = \"10 s\"\ntrace_cwnd = [3]"
            )),
            "simulation.trace_cwnd[0]: must be between 0 and 2"
        );
        assert_eq!(
            err(&BASE.replace(
                "duration = \"10 s\"",
                "duration = \"10 s\"\ntrace_seq = [0, -1]"
            )),
            "simulation.trace_seq[1]: must be between 0 and 2"
        );
        assert_eq!(
            err(&BASE.replace(
                "duration = \"10 s\"",
                "duration = \"10 s\"\ntrace_traffic = \"yes\""
            )),
            "simulation.trace_traffic: must be true or false, got string \"yes\""
        );
    }

    #[test]
    fn capture_settings_are_checked() {
        let with = |extra: &str| {
            err(&BASE.replace(
                "duration = \"10 s\"",
                &format!("duration = \"10 s\"\n{extra}"),
            ))
        };
        assert_eq!(with("capture = [\"bottleneck\"]"), "ok");
        assert_eq!(
            with("capture_from = \"1 s\""),
            "simulation.capture_from: needs simulation.capture (the links to capture)"
        );
        assert_eq!(
            with("capture = [\"bottleneck\"]\ncapture_from = \"2 s\"\ncapture_until = \"1 s\""),
            "simulation.capture_until: must be later than simulation.capture_from"
        );
        assert_eq!(
            with("capture = [\"bottleneck\"]\ncapture_snaplen = 10"),
            "simulation.capture_snaplen: must be between 64 and 262144"
        );
        assert_eq!(
            with("capture_side = \"in\""),
            "simulation.capture_side: needs simulation.capture (the links to capture)"
        );
        assert_eq!(
            with("capture = [\"bottleneck\"]\ncapture_side = \"both\""),
            "ok"
        );
        assert_eq!(
            with("capture = [\"bottleneck\"]\ncapture_side = \"after\""),
            "simulation.capture_side: must be \"out\", \"in\" or \"both\", got \"after\""
        );
        assert_eq!(
            with("capture = [\"a\", \"a\"]"),
            "simulation.capture[1]: \"a\" is listed twice"
        );
    }
}
