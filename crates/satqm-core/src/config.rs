//! The scenario schema and its validation: the one place where a scenario
//! file is checked.
//!
//! A scenario is parsed in two steps. Serde reads the TOML into `Raw*`
//! structs that mirror the file (unknown keys are refused, and
//! `serde_path_to_error` reports the key path of any type error). Then
//! [`Scenario::from_raw`] checks every rule and converts quantities to the
//! typed values the simulator uses. Every error names its key path and the
//! rule, e.g. `topology.bottleneck.rate: must be > 0`.
//!
//! Quantities (see [`crate::units`]) accept either a bare number in base
//! units (bit/s, seconds, bytes) or a string with a unit: `"10 Mbps"`,
//! `"290 ms"`, `"64 KiB"`.

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, Error};
use crate::net::DelayModel;
use crate::queue::BufferLimit;
use crate::time::{Rate, SimTime};
use crate::topology::{AccessDelay, AccessSpec, Dumbbell, Ipos, LinkSpec, Topology};
use crate::transport::tcp::{CcKind, Recovery, TcpConfig};
use crate::units::{int_in, probability, quantity_bytes, quantity_rate, quantity_time, Quantity};

/// Most samples a run may record per monitored link.
const MAX_SAMPLES: u64 = 10_000_000;

// ---------------------------------------------------------------------------
// The file as written
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: Option<String>,
    pub description: Option<String>,
    pub simulation: RawSimulation,
    pub topology: RawTopology,
    pub tcp: Option<RawTcp>,
    pub traffic: Vec<RawTraffic>,
    pub aqm: Option<Vec<RawAqm>>,
    pub pep: Option<Vec<RawPep>>,
}

/// A performance-enhancing proxy splitting TCP connections at a node
/// (RFC 3135 TCP spoofing).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPep {
    /// Node name, e.g. "left".
    pub at: String,
    /// Per-connection buffer: bytes received and not yet acknowledged
    /// downstream.
    pub buffer: Option<Quantity>,
    /// TCP options of the connections the PEP opens downstream (overrides
    /// of `[tcp]`).
    pub tcp: Option<RawTcp>,
}

/// One active queue management instance: its placement, mode, and the
/// algorithm's own parameters (checked by the algorithm's parser).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct RawAqm {
    pub kind: String,
    pub at: Option<String>,
    pub monitor: Option<String>,
    pub mode: Option<String>,
    #[serde(flatten)]
    pub params: std::collections::BTreeMap<String, toml::Value>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSimulation {
    pub duration: Quantity,
    pub seed: Option<i64>,
    pub sample_interval: Option<Quantity>,
    pub warmup: Option<Quantity>,
    /// Flow ids whose congestion window the sampler records.
    pub trace_cwnd: Option<Vec<i64>>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    pub kind: String,
    // dumbbell
    pub pairs: Option<i64>,
    pub access: Option<RawLink>,
    pub receiver_access: Option<RawLink>,
    pub bottleneck: Option<RawLink>,
    // ipos
    pub servers: Option<i64>,
    pub clients: Option<i64>,
    pub server_links: Option<RawLink>,
    pub client_links: Option<RawLink>,
    pub receive: Option<RawLink>,
    pub downlink: Option<RawLink>,
    pub uplink: Option<RawLink>,
}

/// A delay: one value, a per-packet uniform range, a per-flow range, or a
/// per-flow list (the last two only for access links).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a delay such as \"5 ms\", { uniform = [\"300 ms\", \"400 ms\"] } (per packet), { min = \"5 ms\", max = \"100 ms\" } (per flow) or a list of per-flow delays"
)]
pub enum RawDelay {
    Fixed(Quantity),
    PerPacket { uniform: [Quantity; 2] },
    PerFlowRange { min: Quantity, max: Quantity },
    PerFlowList(Vec<Quantity>),
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a buffer size: a number of packets, { packets = N } or { bytes = \"64 KiB\" }"
)]
pub enum RawBuffer {
    Packets(i64),
    Table(RawBufferTable),
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBufferTable {
    pub packets: Option<i64>,
    pub bytes: Option<Quantity>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    pub rate: Quantity,
    pub delay: RawDelay,
    /// Packet erasure probability on the forward direction, applied
    /// independently to each packet.
    pub loss: Option<f64>,
    /// Erasure probability on the reverse direction (default 0).
    pub reverse_loss: Option<f64>,
    /// A full buffer holds back packets sent by the link's own node (a
    /// PEP's backbone) instead of dropping them: lossless backpressure.
    pub backpressure: Option<bool>,
    pub buffer: Option<RawBuffer>,
    /// Buffer of the reverse direction (defaults to `buffer`).
    pub reverse_buffer: Option<RawBuffer>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTcp {
    pub recovery: Option<String>,
    pub cc: Option<String>,
    pub mss: Option<i64>,
    pub initial_window: Option<i64>,
    pub delayed_ack: Option<bool>,
    pub delayed_ack_timeout: Option<Quantity>,
    pub window_scaling: Option<bool>,
    pub receive_buffer: Option<Quantity>,
    pub ecn: Option<bool>,
    pub rate_cap: Option<Quantity>,
    pub min_rto: Option<Quantity>,
    pub max_rto: Option<Quantity>,
    pub initial_rto: Option<Quantity>,
    pub handshake: Option<bool>,
    pub dupack_threshold: Option<i64>,
    pub hybla_rtt0: Option<Quantity>,
    pub fixed_window: Option<Quantity>,
}

impl RawTcp {
    /// `self` with every key `over` sets replaced.
    fn overlay(&self, over: &RawTcp) -> RawTcp {
        macro_rules! pick {
            ($($f:ident),*) => { RawTcp { $($f: over.$f.clone().or_else(|| self.$f.clone())),* } };
        }
        pick!(
            recovery,
            cc,
            mss,
            initial_window,
            delayed_ack,
            delayed_ack_timeout,
            window_scaling,
            receive_buffer,
            ecn,
            rate_cap,
            min_rto,
            max_rto,
            initial_rto,
            handshake,
            dupack_threshold,
            hybla_rtt0,
            fixed_window
        )
    }
}

/// Selects dumbbell pairs: `"all"`, one index, or a list of indices.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "\"all\", a pair index, a list of pair indices, or { from = i, to = j }"
)]
pub enum RawPairs {
    All(String),
    One(i64),
    List(Vec<i64>),
    Range { from: i64, to: i64 },
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a start time such as \"0 s\" or { uniform = [\"0 s\", \"1 s\"] }"
)]
pub enum RawStart {
    At(Quantity),
    Uniform { uniform: [Quantity; 2] },
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTraffic {
    pub kind: String,
    pub pairs: Option<RawPairs>,
    pub start: Option<RawStart>,
    pub stop: Option<Quantity>,
    /// bulk: bytes to send ("unlimited" or absent for no limit).
    pub size: Option<Quantity>,
    /// cbr: sending rate.
    pub rate: Option<Quantity>,
    /// cbr: datagram payload bytes.
    pub packet_size: Option<i64>,
    /// bulk, short: overrides of the scenario's `[tcp]` table.
    pub tcp: Option<RawTcp>,
    /// short: new flows per second (a Poisson process).
    pub arrival_rate: Option<f64>,
    /// web: connections kept open.
    pub connections: Option<i64>,
    /// web: start-up ramp, `step` new connections every `interval`.
    pub ramp: Option<RawRamp>,
    /// web: page size, uniform in [min, max].
    pub page_size: Option<RawRange>,
    /// web: user think time after each page.
    pub think_time: Option<Quantity>,
    /// web_mice: closed-loop users.
    pub sessions: Option<i64>,
    /// web_mice: Pareto file sizes.
    pub pareto: Option<RawPareto>,
    /// web_mice: mean of the exponential think time.
    pub think_mean: Option<Quantity>,
}

/// A Pareto distribution of sizes: `scale` (the smallest size, bytes),
/// `shape`, and an optional cap `max`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPareto {
    pub scale: Quantity,
    pub shape: f64,
    pub max: Option<Quantity>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRamp {
    pub step: i64,
    pub interval: Quantity,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRange {
    pub min: Quantity,
    pub max: Quantity,
}

// ---------------------------------------------------------------------------
// The validated scenario
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StartSpec {
    At(SimTime),
    Uniform(SimTime, SimTime),
}

#[derive(Clone, Debug, PartialEq)]
pub enum TrafficKind {
    /// FTP-like bulk transfer over TCP; `size: None` is unlimited.
    Bulk { size: Option<u64>, tcp: TcpConfig },
    /// Constant bit rate over UDP.
    Cbr { rate: Rate, packet_size: u32 },
    /// Short TCP transfers of `size` bytes arriving as a Poisson process of
    /// `arrival_rate` flows per second, each on a pair drawn uniformly from
    /// the entry's pairs (the AVQ paper's "short flows of 20 packets").
    Short {
        size: u64,
        arrival_rate: f64,
        tcp: TcpConfig,
    },
    /// HTTP-like closed loop (the AVQRED emulation): `connections` slots,
    /// opened `ramp_step` at a time every `ramp_interval`; each slot fetches
    /// a page of uniform size from a random server to a random client over
    /// TCP, waits `think_time` once it has arrived, then opens a new
    /// connection.
    Web {
        connections: u32,
        ramp_step: u32,
        ramp_interval: SimTime,
        page_min: u64,
        page_max: u64,
        think_time: SimTime,
        tcp: TcpConfig,
    },
    /// Web mice (the parallel-VQ paper's web traffic): `sessions` users,
    /// spread over the entry's pairs in turn; each fetches a file of Pareto
    /// size (`scale` bytes, `shape`, capped at `max`) over a new TCP
    /// connection, thinks for an exponential time of mean `think_mean`
    /// once it has arrived, and fetches again.
    WebMice {
        sessions: u32,
        scale: f64,
        shape: f64,
        max: Option<u64>,
        think_mean: SimTime,
        tcp: TcpConfig,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Traffic {
    pub kind: TrafficKind,
    pub pairs: Vec<u32>,
    pub start: StartSpec,
    pub stop: Option<SimTime>,
}

/// A validated scenario, ready to build.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration: SimTime,
    pub sample_interval: SimTime,
    pub warmup: SimTime,
    pub trace_cwnd: Vec<u32>,
    pub topology: Topology,
    pub traffic: Vec<Traffic>,
    pub aqm: Vec<AqmConfig>,
    pub pep: Vec<PepConfig>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PepConfig {
    pub at: String,
    pub buffer: u64,
    pub tcp: TcpConfig,
}

/// What a congestion signal does to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AqmMode {
    Drop,
    /// ECN-mark ECN-capable packets; drop the others.
    Mark,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AqmConfig {
    /// Link whose port marks or drops.
    pub at: String,
    /// Link whose queue the algorithm watches.
    pub monitor: String,
    pub mode: AqmMode,
    pub params: crate::aqm::AqmParams,
}

impl Scenario {
    /// Parse and validate TOML text.
    pub fn from_toml(text: &str) -> Result<Scenario, Error> {
        Scenario::from_toml_with(text, None, None)
    }

    /// Parse TOML text, replace the seed and/or duration (as a command
    /// line's `--seed` and `--duration` do), then validate.
    pub fn from_toml_with(
        text: &str,
        seed: Option<u64>,
        duration_s: Option<f64>,
    ) -> Result<Scenario, Error> {
        let mut raw = RawScenario::from_toml(text)?;
        if let Some(s) = seed {
            let s = i64::try_from(s)
                .map_err(|_| ConfigError::new("simulation.seed", "must be below 2^63"))?;
            raw.simulation.seed = Some(s);
        }
        if let Some(d) = duration_s {
            raw.simulation.duration = Quantity::Num(d);
        }
        Ok(Scenario::from_raw(&raw)?)
    }

    /// Check every rule and convert to typed values.
    pub fn from_raw(raw: &RawScenario) -> Result<Scenario, ConfigError> {
        let sim = &raw.simulation;
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

        let topology = match raw.topology.kind.as_str() {
            "dumbbell" => Topology::Dumbbell(dumbbell(&raw.topology)?),
            "ipos" => Topology::Ipos(ipos(&raw.topology)?),
            other => {
                return Err(ConfigError::new(
                    "topology.kind",
                    format!("unknown topology {other:?} (known: \"dumbbell\", \"ipos\")"),
                ))
            }
        };
        let n_pairs = topology.pairs();

        let tcp_default = RawTcp::default();
        let tcp_base = raw.tcp.as_ref().unwrap_or(&tcp_default);
        // Validate the defaults on their own so errors point at [tcp].
        tcp_config(tcp_base, "tcp")?;

        if raw.traffic.is_empty() {
            return Err(ConfigError::new(
                "traffic",
                "must list at least one traffic source",
            ));
        }
        let mut traffic = Vec::with_capacity(raw.traffic.len());
        for (i, t) in raw.traffic.iter().enumerate() {
            traffic.push(traffic_entry(
                t,
                &format!("traffic[{i}]"),
                tcp_base,
                n_pairs,
                duration,
            )?);
        }

        let n_flows: usize = traffic.iter().map(|t| t.pairs.len()).sum();
        let mut trace_cwnd = Vec::new();
        for (i, f) in sim.trace_cwnd.iter().flatten().enumerate() {
            trace_cwnd.push(int_in(
                *f,
                &format!("simulation.trace_cwnd[{i}]"),
                0,
                n_flows as i64 - 1,
            )? as u32);
        }

        let mut aqm = Vec::new();
        for (i, a) in raw.aqm.iter().flatten().enumerate() {
            aqm.push(aqm_entry(a, &format!("aqm[{i}]"))?);
        }

        let mut pep = Vec::new();
        for (i, p) in raw.pep.iter().flatten().enumerate() {
            let path = format!("pep[{i}]");
            let buffer = match &p.buffer {
                Some(q) => quantity_bytes(q, &format!("{path}.buffer"))?,
                None => 1 << 20,
            };
            let merged = match &p.tcp {
                Some(o) => tcp_base.overlay(o),
                None => tcp_base.clone(),
            };
            let tcp = tcp_config(&merged, &format!("{path}.tcp"))?;
            if buffer < tcp.mss as u64 {
                return Err(ConfigError::new(
                    format!("{path}.buffer"),
                    "must hold at least one MSS",
                ));
            }
            if pep.iter().any(|q: &PepConfig| q.at == p.at) {
                return Err(ConfigError::new(
                    format!("{path}.at"),
                    format!("node {:?} already has a PEP", p.at),
                ));
            }
            pep.push(PepConfig {
                at: p.at.clone(),
                buffer,
                tcp,
            });
        }

        Ok(Scenario {
            name: raw.name.clone().unwrap_or_else(|| "scenario".into()),
            seed,
            duration,
            sample_interval,
            warmup,
            trace_cwnd,
            topology,
            traffic,
            aqm,
            pep,
        })
    }
}

fn aqm_entry(a: &RawAqm, path: &str) -> Result<AqmConfig, ConfigError> {
    let mode = match a.mode.as_deref() {
        None | Some("drop") => AqmMode::Drop,
        Some("mark") => AqmMode::Mark,
        Some(other) => {
            return Err(ConfigError::new(
                format!("{path}.mode"),
                format!("unknown mode {other:?} (known: drop, mark)"),
            ))
        }
    };
    let at = a.at.clone().unwrap_or_else(|| "bottleneck".into());
    let monitor = a.monitor.clone().unwrap_or_else(|| at.clone());
    let mut table = crate::aqm::params::ParamTable::new(path, a.params.clone());
    let params = crate::aqm::AqmParams::parse(&a.kind, &mut table)?;
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

impl RawScenario {
    pub fn from_toml(text: &str) -> Result<RawScenario, Error> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = inner.message().to_string();
            if path.is_empty() || path == "." {
                // Missing top-level sections and TOML syntax errors.
                match missing_field(&msg) {
                    Some(field) => ConfigError::new(field, "is required").into(),
                    None => Error::Parse(inner.to_string().trim().to_string()),
                }
            } else {
                match missing_field(&msg) {
                    Some(field) => {
                        ConfigError::new(format!("{path}.{field}"), "is required").into()
                    }
                    None => ConfigError::new(path, msg).into(),
                }
            }
        })
    }
}

fn missing_field(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_string())
}

fn buffer(b: &RawBuffer, path: &str) -> Result<BufferLimit, ConfigError> {
    match b {
        RawBuffer::Packets(n) => Ok(BufferLimit::Packets(
            int_in(*n, path, 1, 100_000_000)? as u32
        )),
        RawBuffer::Table(RawBufferTable {
            packets: Some(n),
            bytes: None,
        }) => Ok(BufferLimit::Packets(
            int_in(*n, &format!("{path}.packets"), 1, 100_000_000)? as u32,
        )),
        RawBuffer::Table(RawBufferTable {
            packets: None,
            bytes: Some(q),
        }) => {
            let b = quantity_bytes(q, &format!("{path}.bytes"))?;
            if b < 64 {
                return Err(ConfigError::new(
                    format!("{path}.bytes"),
                    "must be at least 64 bytes",
                ));
            }
            Ok(BufferLimit::Bytes(b))
        }
        RawBuffer::Table(_) => Err(ConfigError::new(
            path,
            "give exactly one of `packets` or `bytes`",
        )),
    }
}

fn link(
    l: &RawLink,
    path: &str,
    per_flow_delay_ok: bool,
) -> Result<(LinkSpec, AccessDelay), ConfigError> {
    let rate = quantity_rate(&l.rate, &format!("{path}.rate"))?;
    let dpath = format!("{path}.delay");
    let (delay, access) = match &l.delay {
        RawDelay::Fixed(q) => {
            let d = DelayModel::Fixed(quantity_time(q, &dpath, true)?);
            (d, AccessDelay::Same(d))
        }
        RawDelay::PerPacket { uniform: [a, b] } => {
            let lo = quantity_time(a, &format!("{dpath}.uniform[0]"), true)?;
            let hi = quantity_time(b, &format!("{dpath}.uniform[1]"), true)?;
            if lo > hi {
                return Err(ConfigError::new(
                    &dpath,
                    "uniform range must have low <= high",
                ));
            }
            let d = DelayModel::Uniform(lo, hi);
            (d, AccessDelay::Same(d))
        }
        RawDelay::PerFlowRange { min, max } if per_flow_delay_ok => {
            let lo = quantity_time(min, &format!("{dpath}.min"), true)?;
            let hi = quantity_time(max, &format!("{dpath}.max"), true)?;
            if lo > hi {
                return Err(ConfigError::new(&dpath, "min must be <= max"));
            }
            (DelayModel::Fixed(lo), AccessDelay::Range(lo, hi))
        }
        RawDelay::PerFlowList(v) if per_flow_delay_ok => {
            if v.is_empty() {
                return Err(ConfigError::new(&dpath, "list of per-flow delays is empty"));
            }
            let mut ds = Vec::with_capacity(v.len());
            for (i, q) in v.iter().enumerate() {
                ds.push(quantity_time(q, &format!("{dpath}[{i}]"), true)?);
            }
            (DelayModel::Fixed(ds[0]), AccessDelay::List(ds))
        }
        _ => {
            return Err(ConfigError::new(
                &dpath,
                "per-flow delays ({ min, max } or a list) are allowed only on access links",
            ))
        }
    };
    let loss = erasure(l.loss, &format!("{path}.loss"))?;
    let reverse_loss = erasure(l.reverse_loss, &format!("{path}.reverse_loss"))?;
    let buf = match &l.buffer {
        Some(b) => buffer(b, &format!("{path}.buffer"))?,
        None => BufferLimit::Packets(1000),
    };
    let reverse_buffer = match &l.reverse_buffer {
        Some(b) => buffer(b, &format!("{path}.reverse_buffer"))?,
        None => buf,
    };
    Ok((
        LinkSpec {
            rate,
            delay,
            loss,
            reverse_loss,
            backpressure: l.backpressure.unwrap_or(false),
            buffer: buf,
            reverse_buffer,
        },
        access,
    ))
}

fn erasure(v: Option<f64>, path: &str) -> Result<f64, ConfigError> {
    let p = probability(v.unwrap_or(0.0), path)?;
    if p >= 1.0 {
        return Err(ConfigError::new(
            path,
            "must be < 1 (every packet would be lost)",
        ));
    }
    Ok(p)
}

/// Refuse keys that belong to another topology kind.
fn only_keys(t: &RawTopology, allowed: &[&str]) -> Result<(), ConfigError> {
    let present = [
        ("pairs", t.pairs.is_some()),
        ("access", t.access.is_some()),
        ("receiver_access", t.receiver_access.is_some()),
        ("bottleneck", t.bottleneck.is_some()),
        ("servers", t.servers.is_some()),
        ("clients", t.clients.is_some()),
        ("server_links", t.server_links.is_some()),
        ("client_links", t.client_links.is_some()),
        ("receive", t.receive.is_some()),
        ("downlink", t.downlink.is_some()),
        ("uplink", t.uplink.is_some()),
    ];
    for (k, set) in present {
        if set && !allowed.contains(&k) {
            return Err(ConfigError::new(
                format!("topology.{k}"),
                format!("is not used by topology kind {:?}", t.kind),
            ));
        }
    }
    Ok(())
}

fn required<'a, T>(v: &'a Option<T>, path: &str) -> Result<&'a T, ConfigError> {
    v.as_ref()
        .ok_or_else(|| ConfigError::new(path, "is required"))
}

fn ipos(t: &RawTopology) -> Result<Ipos, ConfigError> {
    only_keys(
        t,
        &[
            "servers",
            "clients",
            "server_links",
            "client_links",
            "receive",
            "downlink",
            "uplink",
        ],
    )?;
    let servers = int_in(
        *required(&t.servers, "topology.servers")?,
        "topology.servers",
        1,
        100_000,
    )? as u32;
    let clients = int_in(
        *required(&t.clients, "topology.clients")?,
        "topology.clients",
        1,
        100_000,
    )? as u32;
    let (sl, sd) = link(
        required(&t.server_links, "topology.server_links")?,
        "topology.server_links",
        true,
    )?;
    if let AccessDelay::List(v) = &sd {
        if v.len() != servers as usize {
            return Err(ConfigError::new(
                "topology.server_links.delay",
                format!("lists {} delays for {servers} servers", v.len()),
            ));
        }
    }
    let (cl, cd) = link(
        required(&t.client_links, "topology.client_links")?,
        "topology.client_links",
        true,
    )?;
    if let AccessDelay::List(v) = &cd {
        if v.len() != clients as usize {
            return Err(ConfigError::new(
                "topology.client_links.delay",
                format!("lists {} delays for {clients} clients", v.len()),
            ));
        }
    }
    let (receive, _) = link(
        required(&t.receive, "topology.receive")?,
        "topology.receive",
        false,
    )?;
    let (downlink, _) = link(
        required(&t.downlink, "topology.downlink")?,
        "topology.downlink",
        false,
    )?;
    let (uplink, _) = link(
        required(&t.uplink, "topology.uplink")?,
        "topology.uplink",
        false,
    )?;
    Ok(Ipos {
        servers,
        clients,
        server_links: AccessSpec {
            link: sl,
            delay: sd,
        },
        client_links: AccessSpec {
            link: cl,
            delay: cd,
        },
        receive,
        downlink,
        uplink,
    })
}

fn dumbbell(t: &RawTopology) -> Result<Dumbbell, ConfigError> {
    only_keys(t, &["pairs", "access", "receiver_access", "bottleneck"])?;
    let pairs = int_in(
        *required(&t.pairs, "topology.pairs")?,
        "topology.pairs",
        1,
        100_000,
    )? as u32;
    let (alink, adelay) = link(
        required(&t.access, "topology.access")?,
        "topology.access",
        true,
    )?;
    if let AccessDelay::List(v) = &adelay {
        if v.len() != pairs as usize {
            return Err(ConfigError::new(
                "topology.access.delay",
                format!("lists {} delays for {pairs} pairs", v.len()),
            ));
        }
    }
    let access = AccessSpec {
        link: alink,
        delay: adelay,
    };
    let receiver_access = match &t.receiver_access {
        Some(r) => {
            let (l, d) = link(r, "topology.receiver_access", true)?;
            if let AccessDelay::List(v) = &d {
                if v.len() != pairs as usize {
                    return Err(ConfigError::new(
                        "topology.receiver_access.delay",
                        format!("lists {} delays for {pairs} pairs", v.len()),
                    ));
                }
            }
            AccessSpec { link: l, delay: d }
        }
        None => access.clone(),
    };
    let (bottleneck, _) = link(
        required(&t.bottleneck, "topology.bottleneck")?,
        "topology.bottleneck",
        false,
    )?;
    Ok(Dumbbell {
        pairs,
        access,
        receiver_access,
        bottleneck,
    })
}

fn tcp_config(raw: &RawTcp, path: &str) -> Result<TcpConfig, ConfigError> {
    let mut c = TcpConfig::default();
    if let Some(r) = &raw.recovery {
        c.recovery = match r.as_str() {
            "tahoe" => Recovery::Tahoe,
            "reno" => Recovery::Reno,
            "newreno" => Recovery::NewReno,
            "sack" => Recovery::Sack,
            other => {
                return Err(ConfigError::new(
                    format!("{path}.recovery"),
                    format!("unknown loss recovery {other:?} (known: tahoe, reno, newreno, sack)"),
                ))
            }
        };
    }
    if let Some(cc) = &raw.cc {
        c.cc = match cc.as_str() {
            "reno" => CcKind::Reno,
            "hybla" => CcKind::Hybla {
                rtt0: SimTime::from_ms(25),
            },
            "fixed" => match &raw.fixed_window {
                Some(q) => CcKind::Fixed {
                    window: quantity_bytes(q, &format!("{path}.fixed_window"))?,
                },
                None => {
                    return Err(ConfigError::new(
                        format!("{path}.fixed_window"),
                        "is required with cc = \"fixed\"",
                    ))
                }
            },
            other => {
                return Err(ConfigError::new(
                    format!("{path}.cc"),
                    format!("unknown congestion control {other:?} (known: reno, hybla, fixed)"),
                ))
            }
        };
    }
    if raw.fixed_window.is_some() && !matches!(c.cc, CcKind::Fixed { .. }) {
        return Err(ConfigError::new(
            format!("{path}.fixed_window"),
            "is used only with cc = \"fixed\"",
        ));
    }
    if let Some(q) = &raw.hybla_rtt0 {
        let r = quantity_time(q, &format!("{path}.hybla_rtt0"), false)?;
        match &mut c.cc {
            CcKind::Hybla { rtt0 } => *rtt0 = r,
            _ => {
                return Err(ConfigError::new(
                    format!("{path}.hybla_rtt0"),
                    "is used only with cc = \"hybla\"",
                ))
            }
        }
    }
    if let Some(m) = raw.mss {
        c.mss = int_in(m, &format!("{path}.mss"), 64, 65_495)? as u32;
    }
    if let Some(w) = raw.initial_window {
        c.initial_window = int_in(w, &format!("{path}.initial_window"), 1, 1000)? as u32;
    }
    if let Some(d) = raw.delayed_ack {
        c.delayed_ack = d;
    }
    if let Some(q) = &raw.delayed_ack_timeout {
        c.delayed_ack_timeout = quantity_time(q, &format!("{path}.delayed_ack_timeout"), false)?;
        if c.delayed_ack_timeout > SimTime::from_ms(500) {
            return Err(ConfigError::new(
                format!("{path}.delayed_ack_timeout"),
                "must be at most 500 ms (RFC 5681)",
            ));
        }
    }
    if let Some(w) = raw.window_scaling {
        c.window_scaling = w;
    }
    match (&raw.receive_buffer, c.window_scaling) {
        (Some(q), _) => {
            c.receive_buffer = quantity_bytes(q, &format!("{path}.receive_buffer"))?;
            if c.receive_buffer < c.mss as u64 {
                return Err(ConfigError::new(
                    format!("{path}.receive_buffer"),
                    "must hold at least one MSS",
                ));
            }
            // RFC 7323: the scaled window is at most 2^30 bytes.
            if c.window_scaling && c.receive_buffer > 1 << 30 {
                return Err(ConfigError::new(
                    format!("{path}.receive_buffer"),
                    "must be at most 1 GiB (RFC 7323 window scale limit)",
                ));
            }
        }
        (None, false) => c.receive_buffer = 65_535,
        (None, true) => {}
    }
    if let Some(e) = raw.ecn {
        c.ecn = e;
    }
    if let Some(q) = &raw.rate_cap {
        c.rate_cap = Some(quantity_rate(q, &format!("{path}.rate_cap"))?);
    }
    if let Some(q) = &raw.min_rto {
        c.min_rto = quantity_time(q, &format!("{path}.min_rto"), false)?;
    }
    if let Some(q) = &raw.max_rto {
        c.max_rto = quantity_time(q, &format!("{path}.max_rto"), false)?;
    }
    if let Some(q) = &raw.initial_rto {
        c.initial_rto = quantity_time(q, &format!("{path}.initial_rto"), false)?;
    }
    if c.min_rto > c.max_rto {
        return Err(ConfigError::new(
            format!("{path}.min_rto"),
            "must be <= max_rto",
        ));
    }
    if let Some(h) = raw.handshake {
        c.handshake = h;
    }
    if let Some(d) = raw.dupack_threshold {
        c.dupack_threshold = int_in(d, &format!("{path}.dupack_threshold"), 1, 100)? as u32;
    }
    Ok(c)
}

fn traffic_entry(
    t: &RawTraffic,
    path: &str,
    tcp_base: &RawTcp,
    n_pairs: u32,
    duration: SimTime,
) -> Result<Traffic, ConfigError> {
    let pairs: Vec<u32> = match &t.pairs {
        None => (0..n_pairs).collect(),
        Some(RawPairs::All(s)) if s == "all" => (0..n_pairs).collect(),
        Some(RawPairs::All(s)) => {
            return Err(ConfigError::new(
                format!("{path}.pairs"),
                format!("expected \"all\", a pair index or a list, got {s:?}"),
            ))
        }
        Some(RawPairs::One(i)) => {
            vec![int_in(*i, &format!("{path}.pairs"), 0, n_pairs as i64 - 1)? as u32]
        }
        Some(RawPairs::Range { from, to }) => {
            let lo = int_in(*from, &format!("{path}.pairs.from"), 0, n_pairs as i64 - 1)?;
            let hi = int_in(*to, &format!("{path}.pairs.to"), 0, n_pairs as i64 - 1)?;
            if lo > hi {
                return Err(ConfigError::new(
                    format!("{path}.pairs"),
                    "from must be <= to",
                ));
            }
            (lo as u32..=hi as u32).collect()
        }
        Some(RawPairs::List(v)) => {
            if v.is_empty() {
                return Err(ConfigError::new(format!("{path}.pairs"), "is empty"));
            }
            let mut out = Vec::with_capacity(v.len());
            for (j, i) in v.iter().enumerate() {
                out.push(int_in(*i, &format!("{path}.pairs[{j}]"), 0, n_pairs as i64 - 1)? as u32);
            }
            out
        }
    };
    let start = match &t.start {
        None => StartSpec::At(SimTime::ZERO),
        Some(RawStart::At(q)) => StartSpec::At(quantity_time(q, &format!("{path}.start"), true)?),
        Some(RawStart::Uniform { uniform: [a, b] }) => {
            let lo = quantity_time(a, &format!("{path}.start.uniform[0]"), true)?;
            let hi = quantity_time(b, &format!("{path}.start.uniform[1]"), true)?;
            if lo > hi {
                return Err(ConfigError::new(
                    format!("{path}.start"),
                    "uniform range must have low <= high",
                ));
            }
            StartSpec::Uniform(lo, hi)
        }
    };
    let earliest = match start {
        StartSpec::At(s) => s,
        StartSpec::Uniform(s, _) => s,
    };
    if earliest >= duration {
        return Err(ConfigError::new(
            format!("{path}.start"),
            "must be before simulation.duration",
        ));
    }
    let stop = match &t.stop {
        None => None,
        Some(q) => {
            let s = quantity_time(q, &format!("{path}.stop"), false)?;
            let latest = match start {
                StartSpec::At(s) => s,
                StartSpec::Uniform(_, hi) => hi,
            };
            if s <= latest {
                return Err(ConfigError::new(
                    format!("{path}.stop"),
                    "must be after start",
                ));
            }
            Some(s)
        }
    };
    let unused = |key: &str, kind: &str| {
        ConfigError::new(
            format!("{path}.{key}"),
            format!("is not used by traffic of kind {kind:?}"),
        )
    };
    if t.arrival_rate.is_some() && t.kind != "short" {
        return Err(unused("arrival_rate", &t.kind));
    }
    if t.kind != "web_mice" {
        for (k, set) in [
            ("sessions", t.sessions.is_some()),
            ("pareto", t.pareto.is_some()),
            ("think_mean", t.think_mean.is_some()),
        ] {
            if set {
                return Err(unused(k, &t.kind));
            }
        }
    }
    if t.kind != "web" {
        for (k, set) in [
            ("connections", t.connections.is_some()),
            ("ramp", t.ramp.is_some()),
            ("page_size", t.page_size.is_some()),
            ("think_time", t.think_time.is_some()),
        ] {
            if set {
                return Err(unused(k, &t.kind));
            }
        }
    }
    let kind = match t.kind.as_str() {
        "web" => {
            for (k, set) in [
                ("rate", t.rate.is_some()),
                ("packet_size", t.packet_size.is_some()),
                ("size", t.size.is_some()),
                ("pairs", t.pairs.is_some()),
            ] {
                if set {
                    return Err(unused(k, &t.kind));
                }
            }
            let connections = int_in(
                t.connections.ok_or_else(|| {
                    ConfigError::new(format!("{path}.connections"), "is required for web traffic")
                })?,
                &format!("{path}.connections"),
                1,
                1_000_000,
            )? as u32;
            let (ramp_step, ramp_interval) = match &t.ramp {
                Some(r) => (
                    int_in(r.step, &format!("{path}.ramp.step"), 1, 1_000_000)? as u32,
                    quantity_time(&r.interval, &format!("{path}.ramp.interval"), true)?,
                ),
                None => (connections, SimTime::ZERO),
            };
            let (page_min, page_max) = match &t.page_size {
                Some(r) => {
                    let lo = quantity_bytes(&r.min, &format!("{path}.page_size.min"))?;
                    let hi = quantity_bytes(&r.max, &format!("{path}.page_size.max"))?;
                    if lo > hi {
                        return Err(ConfigError::new(
                            format!("{path}.page_size"),
                            "min must be <= max",
                        ));
                    }
                    (lo, hi)
                }
                None => {
                    return Err(ConfigError::new(
                        format!("{path}.page_size"),
                        "is required for web traffic",
                    ))
                }
            };
            let think_time = match &t.think_time {
                Some(q) => quantity_time(q, &format!("{path}.think_time"), true)?,
                None => SimTime::ZERO,
            };
            let merged = match &t.tcp {
                Some(o) => tcp_base.overlay(o),
                None => tcp_base.clone(),
            };
            let tcp = tcp_config(&merged, &format!("{path}.tcp"))?;
            TrafficKind::Web {
                connections,
                ramp_step,
                ramp_interval,
                page_min,
                page_max,
                think_time,
                tcp,
            }
        }
        "web_mice" => {
            for (k, set) in [
                ("rate", t.rate.is_some()),
                ("packet_size", t.packet_size.is_some()),
                ("size", t.size.is_some()),
            ] {
                if set {
                    return Err(unused(k, &t.kind));
                }
            }
            let sessions = int_in(
                t.sessions.ok_or_else(|| {
                    ConfigError::new(format!("{path}.sessions"), "is required for web_mice")
                })?,
                &format!("{path}.sessions"),
                1,
                1_000_000,
            )? as u32;
            let par = t.pareto.as_ref().ok_or_else(|| {
                ConfigError::new(format!("{path}.pareto"), "is required for web_mice")
            })?;
            let scale = quantity_bytes(&par.scale, &format!("{path}.pareto.scale"))? as f64;
            if !par.shape.is_finite() || par.shape <= 0.0 || par.shape > 100.0 {
                return Err(ConfigError::new(
                    format!("{path}.pareto.shape"),
                    "must be in (0, 100]",
                ));
            }
            let max = match &par.max {
                None => None,
                Some(q) => {
                    let m = quantity_bytes(q, &format!("{path}.pareto.max"))?;
                    if (m as f64) < scale {
                        return Err(ConfigError::new(
                            format!("{path}.pareto.max"),
                            "must be at least pareto.scale",
                        ));
                    }
                    Some(m)
                }
            };
            let think_mean = match &t.think_mean {
                Some(q) => quantity_time(q, &format!("{path}.think_mean"), true)?,
                None => {
                    return Err(ConfigError::new(
                        format!("{path}.think_mean"),
                        "is required for web_mice",
                    ))
                }
            };
            let merged = match &t.tcp {
                Some(o) => tcp_base.overlay(o),
                None => tcp_base.clone(),
            };
            let tcp = tcp_config(&merged, &format!("{path}.tcp"))?;
            TrafficKind::WebMice {
                sessions,
                scale,
                shape: par.shape,
                max,
                think_mean,
                tcp,
            }
        }
        "short" => {
            if t.rate.is_some() {
                return Err(unused("rate", &t.kind));
            }
            if t.packet_size.is_some() {
                return Err(unused("packet_size", &t.kind));
            }
            let size = match &t.size {
                Some(q) => quantity_bytes(q, &format!("{path}.size"))?,
                None => {
                    return Err(ConfigError::new(
                        format!("{path}.size"),
                        "is required for short flows",
                    ))
                }
            };
            let arrival_rate = match t.arrival_rate {
                Some(r) if r.is_finite() && r > 0.0 && r <= 1e6 => r,
                Some(_) => {
                    return Err(ConfigError::new(
                        format!("{path}.arrival_rate"),
                        "must be in (0, 1e6] flows per second",
                    ))
                }
                None => {
                    return Err(ConfigError::new(
                        format!("{path}.arrival_rate"),
                        "is required for short flows",
                    ))
                }
            };
            let merged = match &t.tcp {
                Some(o) => tcp_base.overlay(o),
                None => tcp_base.clone(),
            };
            let tcp = tcp_config(&merged, &format!("{path}.tcp"))?;
            TrafficKind::Short {
                size,
                arrival_rate,
                tcp,
            }
        }
        "bulk" | "ftp" => {
            if t.rate.is_some() {
                return Err(unused("rate", &t.kind));
            }
            if t.packet_size.is_some() {
                return Err(unused("packet_size", &t.kind));
            }
            let size = match &t.size {
                None => None,
                Some(Quantity::Text(s)) if s == "unlimited" => None,
                Some(q) => Some(quantity_bytes(q, &format!("{path}.size"))?),
            };
            let merged = match &t.tcp {
                Some(o) => tcp_base.overlay(o),
                None => tcp_base.clone(),
            };
            let tcp = tcp_config(&merged, &format!("{path}.tcp"))?;
            TrafficKind::Bulk { size, tcp }
        }
        "cbr" => {
            if t.size.is_some() {
                return Err(unused("size", &t.kind));
            }
            if t.tcp.is_some() {
                return Err(unused("tcp", &t.kind));
            }
            let r = match &t.rate {
                Some(q) => quantity_rate(q, &format!("{path}.rate"))?,
                None => {
                    return Err(ConfigError::new(
                        format!("{path}.rate"),
                        "is required for cbr traffic",
                    ))
                }
            };
            let ps = match t.packet_size {
                Some(p) => int_in(p, &format!("{path}.packet_size"), 1, 65_507)? as u32,
                None => 1000,
            };
            TrafficKind::Cbr {
                rate: r,
                packet_size: ps,
            }
        }
        other => {
            return Err(ConfigError::new(
                format!("{path}.kind"),
                format!("unknown traffic kind {other:?} (known: bulk, cbr, short, web, web_mice)"),
            ))
        }
    };
    Ok(Traffic {
        kind,
        pairs,
        start,
        stop,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const BASE: &str = r#"
[simulation]
duration = "10 s"
[topology]
kind = "dumbbell"
pairs = 3
[topology.access]
rate = "100 Mbps"
delay = "5 ms"
[topology.bottleneck]
rate = "10 Mbps"
delay = "290 ms"
buffer = 800
[[traffic]]
kind = "bulk"
"#;

    fn err(text: &str) -> String {
        match Scenario::from_toml(text) {
            Err(Error::Config(e)) => e.to_string(),
            Err(e) => format!("other: {e}"),
            Ok(_) => "ok".into(),
        }
    }

    #[test]
    fn base_parses_with_units() {
        let s = Scenario::from_toml(BASE).unwrap();
        let Topology::Dumbbell(d) = &s.topology else {
            panic!()
        };
        assert_eq!(d.bottleneck.rate, Rate(10_000_000));
        assert_eq!(d.bottleneck.delay, DelayModel::Fixed(SimTime::from_ms(290)));
        assert_eq!(d.bottleneck.buffer, BufferLimit::Packets(800));
        assert_eq!(s.traffic[0].pairs, vec![0, 1, 2]);
        assert_eq!(s.sample_interval, SimTime::from_ms(100));
    }

    #[test]
    fn errors_name_the_key() {
        assert_eq!(
            err(&BASE.replace("\"10 Mbps\"", "-5")),
            "topology.bottleneck.rate: must be > 0"
        );
        assert_eq!(
            err(&BASE.replace("\"10 Mbps\"", "0")),
            "topology.bottleneck.rate: must be > 0"
        );
        assert!(err(&BASE.replace("\"10 Mbps\"", "nan"))
            .starts_with("topology.bottleneck.rate: must be a finite"));
        assert!(err(&BASE.replace("\"10 Mbps\"", "\"10 Mfoo\"")).contains("unknown unit"));
        assert!(
            err(&BASE.replace("buffer = 800", "buffer = 800\nbogus = 1"))
                .starts_with("topology.bottleneck.bogus: unknown field `bogus`")
        );
        assert_eq!(
            err(&BASE.replace("pairs = 3", "pairs = 0")),
            "topology.pairs: must be between 1 and 100000"
        );
        assert_eq!(
            err(&BASE.replace("duration = \"10 s\"", "duration = 1e300")),
            "simulation.duration: must be at most 1e6 s"
        );
        assert_eq!(
            err(&BASE.replace("kind = \"bulk\"", "kind = \"ftpx\""))
                .split(':')
                .next(),
            Some("traffic[0].kind")
        );
        assert_eq!(
            err(&BASE.replace("[simulation]\nduration = \"10 s\"", "")),
            "simulation: is required"
        );
        assert!(
            err(&BASE.replace("buffer = 800", "buffer = { packets = 3, bits = 4 }"))
                .starts_with("topology.bottleneck.buffer: a buffer size")
        );
        assert_eq!(
            err(&BASE.replace("kind = \"bulk\"", "kind = \"bulk\"\nrate = 5")),
            "traffic[0].rate: is not used by traffic of kind \"bulk\""
        );
    }

    #[test]
    fn tcp_overrides_merge() {
        let text = format!("{BASE}\n[traffic.tcp]\nrecovery = \"sack\"\n\n[tcp]\nmss = 1000\nwindow_scaling = false\n");
        let s = Scenario::from_toml(&text).unwrap();
        let TrafficKind::Bulk { tcp, .. } = &s.traffic[0].kind else {
            panic!()
        };
        assert_eq!(tcp.recovery, Recovery::Sack);
        assert_eq!(tcp.mss, 1000);
        assert_eq!(tcp.max_advertised_window(), 65_535);
    }
}
