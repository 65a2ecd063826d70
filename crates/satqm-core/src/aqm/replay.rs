//! Replaying a recorded trace of arrivals, departures and timer ticks
//! through one algorithm: how the oracle tests (`tests/oracles/`) check
//! each algorithm against an independent reference, verdict by verdict.

use std::collections::BTreeMap;

use super::params::ParamTable;
use super::{AqmParams, AqmProbe, Outcome, PacketMeta, QueueView, Reason, Verdict};
use crate::error::{ConfigError, Error};
use crate::queue::BufferLimit;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    Arrival,
    Departure,
    Timer,
}

#[derive(Clone, Copy, Debug)]
pub struct TraceEvent {
    pub kind: TraceKind,
    pub t: SimTime,
    pub size: u32,
    pub ecn_capable: bool,
    /// The uniform draw of an arrival.
    pub u: f64,
    /// Time a departing packet spent queued.
    pub sojourn: SimTime,
    pub view: QueueView,
}

pub fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Mark(Reason::Early) => "mark:early",
        Verdict::Mark(Reason::Forced) => "mark:forced",
        Verdict::Drop(Reason::Early) => "drop:early",
        Verdict::Drop(Reason::Forced) => "drop:forced",
    }
}

/// Parse an AQM table (`kind`, optional `mode`, and parameters, as in a
/// scenario's `[[aqm]]` without placement) and replay `events`; returns each event's verdict
/// (`None` for timer ticks) and the probe after it. At a departure, any
/// verdict other than `pass` is taken as a drop; if it leaves the queue
/// empty the algorithm is told so, as the port does.
pub fn replay(
    spec: &str,
    rate_bps: u64,
    limit_bytes: u64,
    events: &[TraceEvent],
) -> Result<Vec<(Option<Verdict>, AqmProbe)>, Error> {
    let mut table: BTreeMap<String, toml::Value> =
        toml::from_str(spec).map_err(|e| Error::Parse(e.to_string()))?;
    let kind = match table.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(_) => return Err(ConfigError::new("kind", "must be a string").into()),
        None => return Err(ConfigError::new("kind", "is required").into()),
    };
    let mark_mode = match table.remove("mode") {
        None => false,
        Some(toml::Value::String(m)) if m == "drop" => false,
        Some(toml::Value::String(m)) if m == "mark" => true,
        Some(_) => return Err(ConfigError::new("mode", "must be \"drop\" or \"mark\"").into()),
    };
    let mut t = ParamTable::new("", table);
    let params = AqmParams::parse(&kind, &mut t)?;
    if params.is_queue_structure() {
        return Err(ConfigError::new(
            "kind",
            format!(
                "{kind} is a queue structure (two virtual queues), not replayable on one queue"
            ),
        )
        .into());
    }
    let mut aqm = params.build(rate_bps, BufferLimit::Bytes(limit_bytes));
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        let v = match e.kind {
            TraceKind::Arrival => {
                let meta = PacketMeta {
                    size: e.size,
                    ecn_capable: e.ecn_capable,
                };
                let v = aqm.on_arrival(e.t, meta, &e.view, e.u);
                aqm.on_outcome(meta, Outcome::of(v, mark_mode, e.ecn_capable));
                Some(v)
            }
            TraceKind::Departure => {
                let v = aqm.on_departure(e.t, e.sojourn, &e.view);
                if v != Verdict::Pass && e.view.q_packets == 0 {
                    aqm.on_empty_after_drop();
                }
                Some(v)
            }
            TraceKind::Timer => {
                aqm.on_timer(e.t, &e.view);
                None
            }
        };
        out.push((v, aqm.probe()));
    }
    Ok(out)
}
