//! The up-front estimate of a run's memory, from the scenario's size alone,
//! and the refusal of a scenario whose estimate is above
//! `simulation.max_memory`.
//!
//! A run's memory grows while it runs (windows open, buffers fill, the
//! sampler and the logs append rows), so a scenario too large for the
//! machine would otherwise end in an allocation failure deep inside the
//! run, which aborts the process. The estimate is made before anything is
//! built and allocates nothing that grows with the scenario.
//!
//! What it counts, each part from the sizes of the structures that hold it
//! (`std::mem::size_of`), at the most the scenario lets it reach:
//!
//! - **flows**: every connection the run opens (a web slot or web mouse
//!   opens one per page or file, short flows one per arrival; a PEP adds
//!   one per flow it splits) with its sender and receiver, and the
//!   segments a sender keeps in flight. A sender's segments are bounded by
//!   its window, the transfer's size and twice what its path holds; the
//!   senders together hold at most a few times what the network holds.
//! - **buffers**: every port's buffer at its limit and every link's delay
//!   line full (rate x delay), both in packets; without CBR traffic, no
//!   more than the TCP windows can put in the network.
//! - **applications**: one per bulk or CBR flow, web slot and web mouse.
//! - **sampler**: one row per monitored link per sample interval, the
//!   traced windows, and each monitored link's histogram of queueing
//!   delays (a fixed 58 KiB).
//! - **logs**: at most one drop-log row per packet the bottleneck carries
//!   (its rate in packets per second over the run) plus each CBR source's
//!   packets, and no more than `simulation.log_drops` rows; at most one
//!   congestion-log row per drop, and per flow per round trip.
//! - **packet captures**: each captured link, both directions, full for
//!   the capture's time window (its rate in the smallest data packets per
//!   second), each packet a pcapng block of its snap length, once for each
//!   side of the queue captured.
//!
//! The estimate is an order of magnitude, not an accounting: the unit
//! tests hold it to a factor of about two of measured peak memory.

use std::mem::size_of;

use super::{Flow, Simulation};
use crate::config::{Scenario, TrafficKind};
use crate::engine::Event;
use crate::error::ConfigError;
use crate::net::sojourn::BUCKETS;
use crate::net::DelayModel;
use crate::queue::{BufferLimit, Queued};
use crate::time::SimTime;
use crate::topology::{AccessDelay, AccessSpec, LinkSpec, Topology};
use crate::traffic::{App, WebMouse};
use crate::transport::tcp::segments::Seg;
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::udp::UdpSink;

/// Bytes of one row of each result table (the sum of its columns'
/// element sizes; checked against the tables in the tests).
pub(crate) const SAMPLE_ROW: u64 = 232;
pub(crate) const DROP_ROW: u64 = 30;
pub(crate) const CONGESTION_ROW: u64 = 49;
pub(crate) const CWND_ROW: u64 = 36;
/// Per-flow figures the summary computes at the end.
const FLOW_SUMMARY: u64 = 152;
/// What a run needs before its scenario adds anything: code, stacks, the
/// allocator's own tables.
const BASE: f64 = 8e6;
/// Allocator overhead per heap block.
const BLOCK: u64 = 16;
/// The share of its packets TCP loses, at most: its loss rate stays near
/// 1.5 / W^2 for a window of W packets, 10% at about four packets.
const TCP_LOSS: f64 = 0.1;
/// Links the sampler records besides those of the AQMs.
const CORE_MONITORED: u64 = 2;

/// One part of the estimate: what it counts, and its bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Part {
    pub name: &'static str,
    /// The key that drives it, for the error message.
    pub key: &'static str,
    pub bytes: f64,
    /// How it comes about, in words ("100,000 flows x 1.2 kB").
    pub how: Detail,
}

/// The numbers behind a part: `count` things of `each` bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detail {
    pub count: f64,
    pub each: f64,
    pub what: &'static str,
}

/// A scenario's estimated memory, part by part.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub parts: [Part; 6],
}

impl Estimate {
    /// Estimated peak bytes of the whole run.
    pub fn total(&self) -> f64 {
        BASE + self.parts.iter().map(|p| p.bytes).sum::<f64>()
    }

    /// The largest part.
    pub fn largest(&self) -> &Part {
        self.parts
            .iter()
            .max_by(|a, b| a.bytes.total_cmp(&b.bytes))
            .expect("six parts")
    }
}

impl Simulation {
    /// The memory `scenario` would need, estimated from its size.
    pub fn estimate_memory(scenario: &Scenario) -> Estimate {
        let shape = Shape::of(scenario);
        Estimate {
            parts: [
                shape.flows(scenario),
                shape.buffers(scenario),
                shape.apps(scenario),
                sampler(scenario, &shape),
                logs(scenario, &shape),
                captures::captures(scenario, &shape),
            ],
        }
    }

    /// Refuse `scenario` if its estimate is above `simulation.max_memory`.
    pub fn check_memory(scenario: &Scenario) -> Result<(), ConfigError> {
        let est = Simulation::estimate_memory(scenario);
        let total = est.total();
        if total <= scenario.max_memory as f64 {
            return Ok(());
        }
        let p = est.largest();
        let mut hint = format!(
            "raise simulation.max_memory (satqm run --max-memory) or shrink {}",
            p.key
        );
        if p.name == "packet captures" {
            hint.push_str(" or the captured links");
        }
        if p.name == "drop and congestion logs" && scenario.drop_log_rows > 0 {
            hint.push_str(" (or set simulation.log_drops = false, or to fewer rows)");
        }
        Err(ConfigError::new(
            "simulation",
            format!(
                "needs about {} ({}: {} {} x {}); the limit is {}: {hint}",
                bytes(total),
                p.name,
                count(p.how.count),
                p.how.what,
                bytes(p.how.each),
                bytes(scenario.max_memory as f64),
            ),
        ))
    }
}

/// What the estimate needs to know of the network and the traffic.
struct Shape {
    /// Directed links (ports) and, over all of them, the packets their
    /// buffers and delay lines can hold.
    links: u64,
    network_packets: f64,
    /// The bottleneck's rate, bit/s, and its buffer and delay line in
    /// packets (what one path holds).
    bottleneck_bps: f64,
    path_packets: f64,
    /// The shortest round trip, seconds (at least 1 ms).
    rtt_s: f64,
    /// The smallest data packet any traffic sends, bytes.
    packet: f64,
    /// Connections per end-to-end flow (1 + the PEPs that split it).
    per_flow: f64,
    /// What the senders' access links can offer together, bit/s.
    offered_bps: f64,
}

impl Shape {
    fn of(s: &Scenario) -> Shape {
        let packet = s
            .traffic
            .iter()
            .map(|t| match &t.kind {
                TrafficKind::Cbr { packet_size, .. } => *packet_size as f64 + 28.0,
                TrafficKind::Atsp(c) => c.packet_size as f64,
                k => tcp_of(k).map_or(1500.0, |c| c.mss as f64 + 40.0),
            })
            .fold(f64::INFINITY, f64::min)
            .min(1500.0);
        let mut sh = Shape {
            links: 0,
            network_packets: 0.0,
            bottleneck_bps: 0.0,
            path_packets: 0.0,
            rtt_s: 0.0,
            packet,
            per_flow: 1.0 + s.pep.len() as f64,
            offered_bps: 0.0,
        };
        match &s.topology {
            Topology::Dumbbell(d) => {
                sh.access(&d.access, d.pairs);
                sh.access(&d.receiver_access, d.pairs);
                sh.offered_bps = d.pairs as f64 * d.access.link.rate.bps() as f64;
                sh.duplex(&d.bottleneck);
                sh.bottleneck(&d.bottleneck);
                sh.rtt_s = 2.0
                    * (min_delay(&d.access)
                        + d.bottleneck.delay.min().secs_f64()
                        + min_delay(&d.receiver_access));
            }
            Topology::Ipos(t) => {
                sh.access(&t.server_links, t.servers);
                sh.access(&t.client_links, t.clients);
                sh.offered_bps = t.servers as f64 * t.server_links.link.rate.bps() as f64;
                for l in [&t.receive, &t.downlink, &t.uplink] {
                    sh.duplex(l);
                }
                sh.bottleneck(&t.downlink);
                sh.rtt_s = 2.0
                    * (min_delay(&t.server_links)
                        + t.receive.delay.min().secs_f64()
                        + t.downlink.delay.min().secs_f64()
                        + min_delay(&t.client_links));
            }
        }
        sh.rtt_s = sh.rtt_s.max(1e-3);
        sh
    }

    /// Packets a buffer of `limit` holds.
    fn limit_packets(&self, limit: BufferLimit) -> f64 {
        match limit {
            BufferLimit::Packets(n) => n as f64,
            BufferLimit::Bytes(b) => (b as f64 / self.packet).ceil(),
        }
    }

    /// Packets a link's buffers (both ways) and delay lines hold.
    fn link_packets(&self, l: &LinkSpec, delay_s: f64) -> f64 {
        let line = l.rate.bps() as f64 * delay_s / (8.0 * self.packet);
        self.limit_packets(l.buffer) + self.limit_packets(l.reverse_buffer) + 2.0 * (line + 1.0)
    }

    fn duplex(&mut self, l: &LinkSpec) {
        self.links += 2;
        self.network_packets += self.link_packets(l, longest(&l.delay));
    }

    fn access(&mut self, a: &AccessSpec, hosts: u32) {
        self.links += 2 * hosts as u64;
        let delay = match &a.delay {
            AccessDelay::Same(d) => longest(d),
            AccessDelay::Range(_, hi) => max_secs(*hi),
            AccessDelay::List(v) => v.iter().map(|d| max_secs(*d)).fold(0.0, f64::max),
        };
        self.network_packets += hosts as f64 * self.link_packets(&a.link, delay);
    }

    fn bottleneck(&mut self, l: &LinkSpec) {
        self.bottleneck_bps = l.rate.bps() as f64;
        self.path_packets = self.link_packets(l, longest(&l.delay));
    }
}

fn max_secs(t: SimTime) -> f64 {
    t.secs_f64()
}

/// The longest delay a packet can get, seconds.
fn longest(d: &DelayModel) -> f64 {
    match *d {
        DelayModel::Fixed(t) | DelayModel::Uniform(_, t) => t.secs_f64(),
    }
}

fn min_delay(a: &AccessSpec) -> f64 {
    match &a.delay {
        AccessDelay::Same(d) => d.min().secs_f64(),
        AccessDelay::Range(lo, _) => lo.secs_f64(),
        AccessDelay::List(v) => v.iter().map(|d| d.secs_f64()).fold(f64::INFINITY, f64::min),
    }
}

fn tcp_of(k: &TrafficKind) -> Option<&TcpConfig> {
    match k {
        TrafficKind::Bulk { tcp, .. }
        | TrafficKind::Short { tcp, .. }
        | TrafficKind::Web { tcp, .. }
        | TrafficKind::WebMice { tcp, .. } => Some(tcp),
        TrafficKind::Cbr { .. } | TrafficKind::Atsp(_) => None,
    }
}

/// What one traffic entry opens: connections over the run, those open at
/// once, and the most segments one of them keeps in flight.
struct Opened {
    total: f64,
    at_once: f64,
    segments: f64,
}

impl Shape {
    /// The seconds entry `t` is active.
    fn active_s(s: &Scenario, t: &crate::config::Traffic) -> f64 {
        let start = match t.start {
            crate::config::StartSpec::At(a) => a,
            crate::config::StartSpec::Uniform(a, _) => a,
        };
        let end = t.stop.unwrap_or(s.duration).min(s.duration);
        end.saturating_sub(start).secs_f64()
    }

    fn opened(&self, s: &Scenario, t: &crate::config::Traffic) -> Opened {
        let active = Shape::active_s(s, t);
        let n = t.pairs.len() as f64;
        let (total, at_once, size) = match &t.kind {
            TrafficKind::Bulk { size, .. } => (n, n, size.map(|b| b as f64)),
            TrafficKind::Cbr { .. } => (n, n, Some(0.0)),
            TrafficKind::Atsp(_) => (n, n, None),
            TrafficKind::Short {
                size, arrival_rate, ..
            } => {
                let total = arrival_rate * active;
                (
                    total,
                    total.min(arrival_rate * 10.0 * self.rtt_s),
                    Some(*size as f64),
                )
            }
            TrafficKind::Web {
                connections,
                think_time,
                page_min,
                page_max,
                ..
            } => {
                // A page takes at least a handshake and a round trip.
                let slots = *connections as f64;
                let cycle = think_time.secs_f64() + 2.0 * self.rtt_s;
                let page = 0.5 * (*page_min + *page_max) as f64;
                (
                    slots + self.pages(slots, active / cycle, page, active),
                    slots,
                    Some(page),
                )
            }
            TrafficKind::WebMice {
                sessions,
                think_mean,
                scale,
                shape,
                max,
                ..
            } => {
                let users = *sessions as f64;
                let cycle = think_mean.secs_f64() + 2.0 * self.rtt_s;
                // Without a cap, the heavy tail's rare large files: ten
                // times the Pareto mean.
                let mean = if *shape > 1.0 {
                    scale * shape / (shape - 1.0)
                } else {
                    f64::INFINITY
                };
                let file = max.map_or(10.0 * mean, |m| m as f64);
                let fetched = self.pages(users, active / cycle, mean.min(file), active);
                (users + fetched, users, file.is_finite().then_some(file))
            }
        };
        let segments = match tcp_of(&t.kind) {
            None => 0.0,
            Some(c) => {
                // A finite transfer's last round in slow start carries
                // about half of it.
                let window = c.max_advertised_window() as f64;
                let bytes = size.map_or(window, |b| (b / 2.0).min(window));
                (bytes / c.mss as f64)
                    .ceil()
                    .min(2.0 * self.path_packets)
                    .max(1.0)
            }
        };
        Opened {
            total,
            at_once,
            segments,
        }
    }

    /// Pages (or files) of `size` bytes that `users` fetch over `active`
    /// seconds, `cycles` each at most: no more than the bottleneck carries.
    fn pages(&self, users: f64, cycles: f64, size: f64, active: f64) -> f64 {
        (users * cycles).min(self.bottleneck_bps / 8.0 * active / size.max(1.0))
    }

    fn flows(&self, s: &Scenario) -> Part {
        let each_tcp = (size_of::<Flow>() + size_of::<TcpSender>() + size_of::<TcpReceiver>())
            as u64
            + 3 * BLOCK
            + FLOW_SUMMARY
            + 3 * (16 + size_of::<Event>() as u64);
        let each_udp = (size_of::<Flow>() + size_of::<UdpSink>()) as u64 + FLOW_SUMMARY;
        let (mut conns, mut fixed, mut segs, mut open_segs) = (0.0, 0.0, 0.0, 0.0);
        for t in &s.traffic {
            let o = self.opened(s, t);
            let tcp = tcp_of(&t.kind).is_some();
            let n = if tcp {
                o.total * self.per_flow
            } else {
                o.total
            };
            conns += n;
            fixed += n * if tcp { each_tcp } else { each_udp } as f64;
            if tcp {
                // A ring buffer grows by doubling: 1.5 times on average.
                segs += n * 1.5 * o.segments;
                open_segs += o.at_once * self.per_flow * 8.0;
            }
        }
        // Together the senders hold at most a few times what the network
        // holds, besides their first windows.
        let segs = segs.min(open_segs + 4.0 * self.network_packets);
        let bytes = fixed + segs * size_of::<Seg>() as f64;
        Part {
            name: "flows",
            key: "the traffic (pairs, connections, sessions, arrival_rate)",
            bytes,
            how: Detail {
                count: conns,
                each: bytes / conns.max(1.0),
                what: "connections",
            },
        }
    }

    fn buffers(&self, s: &Scenario) -> Part {
        let cbr = s
            .traffic
            .iter()
            .any(|t| matches!(t.kind, TrafficKind::Cbr { .. }));
        let mut packets = self.network_packets;
        if !cbr {
            // Data and acknowledgements of every open window.
            let windows: f64 = s
                .traffic
                .iter()
                .map(|t| {
                    let o = self.opened(s, t);
                    o.at_once * self.per_flow * o.segments * 2.0
                })
                .sum();
            packets = packets.min(windows);
        }
        let each = size_of::<Queued>() as f64 * 1.5;
        let links = self.links as f64 * (size_of::<crate::net::Link>() as u64 + 4 * BLOCK) as f64;
        Part {
            name: "link buffers",
            key: "the topology's buffers and pairs",
            bytes: packets * each + links,
            how: Detail {
                count: packets,
                each,
                what: "packets queued or in flight",
            },
        }
    }

    fn apps(&self, s: &Scenario) -> Part {
        let app = size_of::<App>() as f64;
        let mut n = 0.0;
        let mut bytes = 0.0;
        for t in &s.traffic {
            let (k, each) = match &t.kind {
                TrafficKind::Bulk { .. } | TrafficKind::Cbr { .. } | TrafficKind::Atsp(_) => {
                    (t.pairs.len() as f64, app)
                }
                TrafficKind::Short { .. } => (1.0, app + 4.0 * t.pairs.len() as f64),
                TrafficKind::Web { connections, .. } => (*connections as f64, app),
                TrafficKind::WebMice { sessions, .. } => (
                    *sessions as f64,
                    app + (size_of::<WebMouse>() as u64 + BLOCK) as f64,
                ),
            };
            n += k;
            bytes += k * (each + 16.0 + size_of::<Event>() as f64);
        }
        Part {
            name: "applications",
            key: "the traffic's connections and sessions",
            bytes,
            how: Detail {
                count: n,
                each: bytes / n.max(1.0),
                what: "applications",
            },
        }
    }
}

fn sampler(s: &Scenario, _sh: &Shape) -> Part {
    let samples = (s.duration.ns() / s.sample_interval.ns()) as f64;
    let links = (CORE_MONITORED + 2 * s.aqm.len() as u64) as f64;
    let rows = links * samples;
    let cwnd = s.trace_cwnd.len() as f64 * samples * CWND_ROW as f64;
    // The traffic trace's rows: time, entry and bytes.
    let entries = if s.trace_traffic { s.traffic.len() } else { 0 };
    let traffic = entries as f64 * samples * 20.0;
    let histograms = links * (BUCKETS * size_of::<u64>()) as f64;
    Part {
        name: "sampler",
        key: "simulation.sample_interval",
        bytes: rows * SAMPLE_ROW as f64 + cwnd + traffic + histograms,
        how: Detail {
            count: rows,
            each: SAMPLE_ROW as f64,
            what: "samples",
        },
    }
}

fn logs(s: &Scenario, sh: &Shape) -> Part {
    let secs = s.duration.secs_f64();
    let cbr_pps: f64 = s
        .traffic
        .iter()
        .map(|t| match &t.kind {
            TrafficKind::Cbr { rate, packet_size } => {
                t.pairs.len() as f64 * rate.bps() as f64 / (8.0 * (*packet_size as f64 + 28.0))
            }
            _ => 0.0,
        })
        .sum();
    // TCP keeps its own losses to a small share of what it sends; CBR
    // sources may lose everything.
    let tcp_pps = sh.bottleneck_bps.min(sh.offered_bps) / (8.0 * sh.packet);
    let mut tcp_packets = tcp_pps * secs;
    if let Some(sent) = finite_packets(s) {
        tcp_packets = tcp_packets.min(2.0 * sent);
    }
    let drops = TCP_LOSS * tcp_packets + cbr_pps * secs;
    let tcp_conns: f64 = s
        .traffic
        .iter()
        .filter(|t| tcp_of(&t.kind).is_some())
        .map(|t| sh.opened(s, t).at_once * sh.per_flow)
        .sum();
    let cuts = drops.min(tcp_conns * secs / sh.rtt_s);
    let logged = drops.min(s.drop_log_rows as f64);
    let bytes = logged * DROP_ROW as f64 + cuts * CONGESTION_ROW as f64;
    Part {
        name: "drop and congestion logs",
        key: "simulation.duration",
        bytes,
        how: Detail {
            count: logged + cuts,
            each: bytes / (logged + cuts).max(1.0),
            what: "log rows",
        },
    }
}

/// The data packets of a scenario whose every entry is a bulk transfer
/// of finite size (`None` otherwise).
fn finite_packets(s: &Scenario) -> Option<f64> {
    s.traffic.iter().try_fold(0.0, |sum, t| match &t.kind {
        TrafficKind::Bulk { size: Some(b), tcp } => {
            Some(sum + t.pairs.len() as f64 * (*b as f64 / tcp.mss as f64).ceil())
        }
        _ => None,
    })
}

/// "37 GB", "512 MB", "3.2 kB".
fn bytes(b: f64) -> String {
    let (v, unit) = match b {
        b if b >= 1e12 => (b / 1e12, "TB"),
        b if b >= 1e9 => (b / 1e9, "GB"),
        b if b >= 1e6 => (b / 1e6, "MB"),
        b if b >= 1e3 => (b / 1e3, "kB"),
        b => (b, "bytes"),
    };
    if v >= 10.0 || unit == "bytes" {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

/// "100,000", "1.2e12".
fn count(n: f64) -> String {
    if n >= 1e15 {
        return format!("{n:.1e}");
    }
    let digits = format!("{:.0}", n.round());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

mod captures;
#[cfg(test)]
mod tests;
