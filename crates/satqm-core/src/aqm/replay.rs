//! Replaying a recorded trace of arrivals, departures and timer ticks
//! through one algorithm: how the oracle tests (`tests/oracles/`) check
//! each algorithm against an independent reference, verdict by verdict.

use std::collections::BTreeMap;

use super::params::ParamTable;
use super::{AqmParams, Outcome, PacketMeta, QueueView, Reason, Verdict};
use crate::error::{ConfigError, Error};
use crate::packet::{flags, Packet, PacketKind};
use crate::queue::{Buffer, BufferLimit, DualPi2, Fq, Queued};
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
    /// The packet carries ECT(1).
    pub ect1: bool,
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
        Verdict::Ce => "ce",
    }
}

/// An `[[aqm]]` table without placement: its kind, whether `mode` is
/// `"mark"` (`None`: not given), and its parameters.
fn parse_spec(spec: &str) -> Result<(String, Option<bool>, AqmParams), Error> {
    let mut table: BTreeMap<String, toml::Value> =
        toml::from_str(spec).map_err(|e| Error::Parse(e.to_string()))?;
    let kind = match table.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(_) => return Err(ConfigError::new("kind", "must be a string").into()),
        None => return Err(ConfigError::new("kind", "is required").into()),
    };
    let mark_mode = match table.remove("mode") {
        None => None,
        Some(toml::Value::String(m)) if m == "drop" => Some(false),
        Some(toml::Value::String(m)) if m == "mark" => Some(true),
        Some(_) => return Err(ConfigError::new("mode", "must be \"drop\" or \"mark\"").into()),
    };
    let mut t = ParamTable::new("", table);
    let params = AqmParams::parse(&kind, &mut t)?;
    Ok((kind, mark_mode, params))
}

/// An algorithm's internals at one moment, by name ([`super::Probe`]).
pub type Internals = Vec<(&'static str, f64)>;

/// Parse an AQM table (`kind`, optional `mode`, and parameters, as in a
/// scenario's `[[aqm]]` without placement) and replay `events`; returns each event's verdict
/// (`None` for timer ticks) with the algorithm's internals after it, as it
/// names them. At a departure, any
/// verdict other than `pass` is taken as a drop; if it leaves the queue
/// empty the algorithm is told so, as the port does.
pub fn replay(
    spec: &str,
    rate_bps: u64,
    limit_bytes: u64,
    events: &[TraceEvent],
) -> Result<Vec<(Option<Verdict>, Internals)>, Error> {
    let (kind, mark_mode, params) = parse_spec(spec)?;
    let mark_mode = mark_mode.unwrap_or(false);
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
        let meta = PacketMeta {
            size: e.size,
            ecn_capable: e.ecn_capable,
            ect1: e.ect1,
        };
        let v = match e.kind {
            TraceKind::Arrival => {
                let v = aqm.on_arrival(e.t, meta, &e.view, e.u);
                aqm.on_outcome(meta, Outcome::of(v, mark_mode, e.ecn_capable));
                Some(v)
            }
            TraceKind::Departure => {
                let v = aqm.on_departure(e.t, e.sojourn, meta, &e.view);
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
        let mut probe = Vec::new();
        aqm.probe(&mut |name, x| probe.push((name, x)));
        out.push((v, probe));
    }
    Ok(out)
}

/// One operation of a queue discipline's trace.
#[derive(Clone, Copy, Debug)]
pub enum QdiscOp {
    /// A packet of `size` bytes, with ECN `flags` (`ECT`, `ECT1`, `CE`),
    /// joins flow queue `bucket`.
    Enqueue {
        t: SimTime,
        bucket: u32,
        size: u32,
        ecn: u8,
    },
    /// The transmitter asks for the next packet.
    Dequeue { t: SimTime },
    /// The discipline's periodic update (DualPI2's PI2 controller).
    Update { t: SimTime },
}

/// What one operation did: packets dropped (by their number among the
/// enqueued ones), the packet sent and how it was marked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QdiscStep {
    pub dropped: Vec<u64>,
    pub sent: Option<u64>,
    pub mark: Option<&'static str>,
    /// After an update: DualPI2's base probability p', units of 2^-32.
    pub p: Option<u64>,
}

/// Replay `ops` through the queue discipline of `spec` (an `[[aqm]]` table
/// without placement: `kind = "fq_codel"` or `"dualpi2"`, `mode` and
/// parameters) with a limit of `limit_packets`: how the oracle tests check
/// the disciplines.
pub fn qdisc_replay(
    spec: &str,
    limit_packets: u32,
    ops: &[QdiscOp],
) -> Result<Vec<QdiscStep>, Error> {
    let (kind, mark_mode, params) = parse_spec(spec)?;
    let flows = match &params {
        AqmParams::Fq(p) => Some(p.flows),
        _ => None,
    };
    let mut buffer = match params {
        AqmParams::Fq(mut p) => {
            // The mode's default is a scenario's (`config/aqm.rs`); the
            // random draws are SplitMix64's from 0.
            p.ecn = mark_mode.unwrap_or(super::default_marks(&kind));
            Buffer::fq(Fq::new(p, 0, 0))
        }
        AqmParams::DualPi2(p) => Buffer::dualpi2(DualPi2::new(&p)),
        _ => {
            return Err(
                ConfigError::new("kind", format!("{kind} is not a queue discipline")).into(),
            )
        }
    };
    let limit = BufferLimit::Packets(limit_packets);
    let mut next_id = 0u64;
    let mut out = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        if let (QdiscOp::Enqueue { bucket, .. }, Some(flows)) = (op, flows) {
            if *bucket >= flows {
                return Err(ConfigError::new(
                    format!("ops[{i}].bucket"),
                    format!("must be below flows ({flows})"),
                )
                .into());
            }
        }
        let mut step = QdiscStep::default();
        match *op {
            QdiscOp::Enqueue {
                t,
                bucket,
                size,
                ecn,
            } => {
                let mut pkt = Packet::new(
                    next_id,
                    crate::ids::FlowId(bucket),
                    crate::ids::NodeId(0),
                    crate::ids::NodeId(1),
                    PacketKind::Udp,
                );
                pkt.size = size;
                pkt.flags = ecn & (flags::ECT | flags::ECT1 | flags::CE);
                next_id += 1;
                let q = Queued {
                    pkt,
                    index: pkt.uid,
                    enqueued_at: t,
                };
                step.mark = buffer.enqueue_to(bucket, q, limit, |q, _| step.dropped.push(q.index));
            }
            QdiscOp::Dequeue { t } => {
                if let Some((q, mark)) = buffer.sched_dequeue(t, |q, _| step.dropped.push(q.index))
                {
                    step.sent = Some(q.index);
                    step.mark = mark;
                }
            }
            QdiscOp::Update { t } => {
                buffer.sched_update(t);
                step.p = buffer.base_probability();
            }
        }
        out.push(step);
    }
    Ok(out)
}
