//! The memory of a run: the up-front estimate, from the scenario's size
//! alone, with the refusal of a scenario whose estimate is above
//! `simulation.max_memory`; and the check, as the run goes, of what can
//! grow past that estimate ([`guard`]).
//!
//! A run's memory grows while it runs (windows open, buffers fill, the
//! sampler and the logs append rows), so a scenario too large for the
//! machine would otherwise end in an allocation failure deep inside the
//! run, which aborts the process. The estimate is made before anything is
//! built and allocates nothing that grows with the scenario. It is of the
//! whole process: what the process holds before the run ([`Host`]: a Rust
//! program, or Python with numpy, pandas and pyarrow loaded), the run, and
//! the results the process builds from it.
//!
//! What it counts, each part from the sizes of the structures that hold it
//! (`std::mem::size_of`), at the most the scenario lets it reach:
//!
//! - **flows**: every connection the run opens (a web slot or web mouse
//!   opens one per page or file, short flows one per arrival; a PEP adds
//!   one per flow it splits) with its sender, receiver and summary row,
//!   and the segments the senders keep (twice the packets of the windows
//!   in flight: a sender's ring keeps the most it ever held, rounded up to
//!   a power of two).
//! - **link buffers**: every link with its first ring slots, and the
//!   packets queued or in flight. TCP puts in the network no more than its
//!   windows, and its windows together no more than twice what the
//!   bottleneck holds (its buffer and a round trip at its rate) besides a
//!   few packets per connection; each packet of a window takes a slot in
//!   the rings of the links it crosses (data one way, its ACK back). CBR
//!   fills every buffer and delay line on its way.
//! - **held back by backpressure**: a CBR source that offers more than
//!   its first link carries, where that link has `backpressure`, has the
//!   rest held back in its host, for as long as it sends.
//! - **applications**: one per bulk or CBR flow, web slot and web mouse.
//! - **sampler**: one row per monitored link per sample interval, the
//!   traced windows and traffic, and each monitored link's histogram of
//!   queueing delays (a fixed 58 KiB).
//! - **logs**: drop-log rows (at most `simulation.log_drops`), one per
//!   packet TCP loses and per CBR packet; TCP's share of lost packets grows
//!   as its connections' share of the bottleneck shrinks ([`tcp_loss`]).
//!   At most one congestion-log row per drop, and per connection per round
//!   trip; the sequence records of the traced connections.
//! - **packet captures**: each captured link, both directions, full for
//!   the capture's time window (its rate in the smallest data packets per
//!   second), each packet a pcapng block of its snap length, once for each
//!   side of the queue captured.
//!
//! Under Python each table's rows are also copied into numpy arrays, a
//! DataFrame and, when saved, an Arrow table; each capture into a Python
//! `bytes`; each flow into the `flows` table; each link's name into the
//! categories of the tables that name links ([`Host::Python`]).
//!
//! The estimate is an order of magnitude, not an accounting: across the
//! scale bench (1 to 100,000 flows, 10 Mbit/s to 10 Gbit/s) it lies
//! between one and four times the measured peak (docs/reliability.md).

use std::mem::size_of;

use super::{Flow, Simulation};
use crate::config::{Scenario, TrafficKind};
use crate::engine::Event;
use crate::error::ConfigError;
use crate::net::sojourn::BUCKETS;
use crate::net::DelayModel;
use crate::packet::Packet;
use crate::queue::{BufferLimit, Queued};
use crate::topology::{AccessDelay, AccessSpec, LinkSpec, Topology};
use crate::traffic::{App, WebMouse};
use crate::transport::tcp::segments::Seg;
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::udp::UdpSink;

/// Bytes of one row of each result table (the sum of its columns'
/// element sizes; checked against the tables in the tests). A sample row
/// counts its fixed columns and room for `PROBE_COLUMNS` AQM internals.
pub(crate) const SAMPLE_ROW: u64 = SAMPLE_FIXED_ROW + 8 * PROBE_COLUMNS;
pub(crate) const SAMPLE_FIXED_ROW: u64 = 72;
/// The most AQM internals a run's time series is counted for (RED+Tail's
/// AQM and virtual queues give 17).
pub(crate) const PROBE_COLUMNS: u64 = 20;
pub(crate) const DROP_ROW: u64 = 30;
pub(crate) const CONGESTION_ROW: u64 = 49;
pub(crate) const CWND_ROW: u64 = 77;
pub(crate) const TRAFFIC_ROW: u64 = 20;
pub(crate) const SEQ_ROW: u64 = 29;
/// Per-flow figures the summary computes at the end.
const FLOW_SUMMARY: u64 = 152;
/// What a Rust program needs before its scenario adds anything: code,
/// stacks, the allocator's own tables.
const RUST_BASE: f64 = 8e6;
/// What a Python process holds before the run: the interpreter, satqm,
/// numpy, pandas, pyarrow and matplotlib (the figure `satqm run` draws).
/// The smallest run's peak under `satqm run` is 165-235 MB with the
/// libraries' versions the requirements allow (docs/reliability.md).
const PYTHON_BASE: f64 = 300e6;
/// What Python adds to a result table's rows, as a multiple of the core's
/// bytes: the numpy arrays handed over, the DataFrame built from them (its
/// columns widened to 64 bits) and, when saved, the Arrow table.
const PYTHON_ROWS: f64 = 3.0;
/// What Python adds per row of the `flows` table: the columns as above,
/// and each flow's kind as a Python string in a list.
const PYTHON_FLOW: f64 = 3.0 * FLOW_SUMMARY as f64 + 80.0;
/// What Python adds per link: its name as a Python string in a list, and
/// in the categories (with their hash index) of each table that names
/// links (`timeseries`, `drops`, `delay_hist`).
const PYTHON_LINK: f64 = 400.0;
/// Allocator overhead per heap block.
const BLOCK: u64 = 16;
/// Links the sampler records besides those of the AQMs.
const CORE_MONITORED: u64 = 2;
/// The slots a ring takes when it first holds more than one packet.
const FIRST_SLOTS: u64 = 4;

/// The process a run is part of: what it holds before the run, and what it
/// builds of the results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// A Rust program that reads the result tables in place.
    Rust,
    /// `satqm` in Python: the interpreter and its libraries, and the
    /// results as numpy arrays, DataFrames and Parquet files.
    Python,
}

impl Host {
    fn base(self) -> f64 {
        match self {
            Host::Rust => RUST_BASE,
            Host::Python => PYTHON_BASE,
        }
    }

    /// Bytes per byte of a result table's rows, the core's included.
    pub(crate) fn rows(self) -> f64 {
        match self {
            Host::Rust => 1.0,
            Host::Python => 1.0 + PYTHON_ROWS,
        }
    }

    /// Bytes per flow of the `flows` table besides the core's summary.
    pub(crate) fn flow_row(self) -> f64 {
        match self {
            Host::Rust => 0.0,
            Host::Python => PYTHON_FLOW,
        }
    }

    /// Bytes per link besides the core's.
    pub(crate) fn link(self) -> f64 {
        match self {
            Host::Rust => 0.0,
            Host::Python => PYTHON_LINK,
        }
    }

    /// Bytes per byte of a packet capture, the core's included.
    pub(crate) fn capture(self) -> f64 {
        match self {
            Host::Rust => 1.0,
            Host::Python => 2.0,
        }
    }
}

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

/// The parts of an estimate, by their place in [`Estimate::parts`].
pub(crate) const FLOWS: usize = 0;
pub(crate) const HELD: usize = 2;
pub(crate) const SAMPLER: usize = 4;
pub(crate) const LOGS: usize = 5;
pub(crate) const CAPTURES: usize = 6;

/// A scenario's estimated memory, part by part.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// What the process holds before the run.
    pub base: f64,
    pub parts: [Part; 7],
}

impl Estimate {
    /// Estimated peak bytes of the whole process.
    pub fn total(&self) -> f64 {
        self.base + self.parts.iter().map(|p| p.bytes).sum::<f64>()
    }

    /// The largest part.
    pub fn largest(&self) -> &Part {
        self.parts
            .iter()
            .max_by(|a, b| a.bytes.total_cmp(&b.bytes))
            .expect("seven parts")
    }
}

impl Simulation {
    /// The memory `scenario` would need, estimated from its size, in a
    /// process of kind `host`.
    pub fn estimate_memory(scenario: &Scenario, host: Host) -> Estimate {
        let shape = Shape::of(scenario);
        Estimate {
            base: host.base(),
            parts: [
                shape.flows(scenario, host),
                shape.buffers(scenario, host),
                shape.held(scenario),
                shape.apps(scenario),
                sampler(scenario, host),
                logs(scenario, &shape, host),
                captures::captures(scenario, &shape, host),
            ],
        }
    }

    /// Refuse `scenario` if its estimate is above `simulation.max_memory`.
    pub fn check_memory(scenario: &Scenario, host: Host) -> Result<Estimate, ConfigError> {
        let est = Simulation::estimate_memory(scenario, host);
        let total = est.total();
        if total <= scenario.max_memory as f64 {
            return Ok(est);
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
    /// Directed links (ports).
    links: u64,
    /// The packets the buffers and delay lines of the links that hosts
    /// share can hold, and those of each host's own links (access links).
    shared_packets: f64,
    host_packets: f64,
    hosts: f64,
    /// The bottleneck's rate, bit/s.
    bottleneck_bps: f64,
    /// What the bottleneck holds, packets: its buffer and a longest round
    /// trip at its rate.
    pipe_packets: f64,
    /// The bottleneck's buffer and delay line in packets (what one path
    /// holds).
    path_packets: f64,
    /// The shortest round trip, seconds (at least 1 ms).
    rtt_s: f64,
    /// The smallest data packet any traffic sends, bytes.
    packet: f64,
    /// Connections per end-to-end flow (1 + the PEPs that split it).
    per_flow: f64,
    /// What the senders' access links can offer together, bit/s.
    offered_bps: f64,
    /// The first link of a sender: its rate (bit/s) and whether it has
    /// `backpressure`.
    first_bps: f64,
    first_backpressure: bool,
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
            shared_packets: 0.0,
            host_packets: 0.0,
            hosts: 0.0,
            bottleneck_bps: 0.0,
            pipe_packets: 0.0,
            path_packets: 0.0,
            rtt_s: 0.0,
            packet,
            per_flow: 1.0 + s.pep.len() as f64,
            offered_bps: 0.0,
            first_bps: 0.0,
            first_backpressure: false,
        };
        let longest_rtt = match &s.topology {
            Topology::Dumbbell(d) => {
                sh.access(&d.access, d.pairs);
                sh.access(&d.receiver_access, d.pairs);
                sh.hosts = d.pairs as f64;
                sh.offered_bps = d.pairs as f64 * d.access.link.rate.bps() as f64;
                sh.first(&d.access.link);
                sh.duplex(&d.bottleneck);
                sh.bottleneck(&d.bottleneck);
                sh.rtt_s = 2.0
                    * (min_delay(&d.access)
                        + d.bottleneck.delay.min().secs_f64()
                        + min_delay(&d.receiver_access));
                2.0 * (max_delay(&d.access)
                    + longest(&d.bottleneck.delay)
                    + max_delay(&d.receiver_access))
            }
            Topology::Ipos(t) => {
                sh.access(&t.server_links, t.servers);
                sh.access(&t.client_links, t.clients);
                sh.hosts = t.servers.max(t.clients) as f64;
                sh.offered_bps = t.servers as f64 * t.server_links.link.rate.bps() as f64;
                sh.first(&t.server_links.link);
                for l in [&t.receive, &t.downlink, &t.uplink] {
                    sh.duplex(l);
                }
                sh.bottleneck(&t.downlink);
                sh.rtt_s = 2.0
                    * (min_delay(&t.server_links)
                        + t.receive.delay.min().secs_f64()
                        + t.downlink.delay.min().secs_f64()
                        + min_delay(&t.client_links));
                2.0 * (max_delay(&t.server_links)
                    + longest(&t.receive.delay)
                    + longest(&t.downlink.delay)
                    + max_delay(&t.client_links))
            }
        };
        sh.rtt_s = sh.rtt_s.max(1e-3);
        sh.pipe_packets = sh.pipe_packets.max(1.0)
            + sh.bottleneck_bps * longest_rtt.max(1e-3) / (8.0 * sh.packet);
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
        // A schedule may raise the rate and lengthen the delay.
        let (rate, delay_s) = match &l.schedule {
            Some(s) => (
                s.max_rate().bps().max(l.rate.bps()),
                delay_s + s.max_delay().secs_f64(),
            ),
            None => (l.rate.bps(), delay_s),
        };
        let line = rate as f64 * delay_s / (8.0 * self.packet);
        self.limit_packets(l.buffer)
            + self.limit_packets(l.reverse_buffer)
            + (l.device_queue + l.reverse_device_queue) as f64
            + 2.0 * (line + 1.0)
    }

    fn duplex(&mut self, l: &LinkSpec) {
        self.links += 2;
        self.shared_packets += self.link_packets(l, longest(&l.delay));
    }

    fn access(&mut self, a: &AccessSpec, hosts: u32) {
        self.links += 2 * hosts as u64;
        self.host_packets += self.link_packets(&a.link, max_delay(a));
    }

    fn first(&mut self, l: &LinkSpec) {
        self.first_bps = l.rate.bps() as f64;
        self.first_backpressure = l.backpressure;
    }

    fn bottleneck(&mut self, l: &LinkSpec) {
        self.bottleneck_bps = l.rate.bps() as f64;
        self.path_packets = self.link_packets(l, longest(&l.delay));
        self.pipe_packets = self.limit_packets(l.buffer);
    }
}

/// The longest delay a packet can get, seconds.
fn longest(d: &DelayModel) -> f64 {
    match *d {
        DelayModel::Fixed(t) | DelayModel::Uniform(_, t) => t.secs_f64(),
    }
}

fn max_delay(a: &AccessSpec) -> f64 {
    match &a.delay {
        AccessDelay::Same(d) => longest(d),
        AccessDelay::Range(_, hi) => hi.secs_f64(),
        AccessDelay::List(v) => v.iter().map(|d| d.secs_f64()).fold(0.0, f64::max),
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

/// The share of the packets it sends that TCP loses, when its `conns`
/// connections at once share a bottleneck that holds `pipe` packets:
/// about 0.5 / W^0.42 for a share of W packets each, at most 4 (losses
/// four times the packets delivered: connections in repeated timeouts).
/// Fitted to the scale bench's drop counts, which it bounds from above at
/// every point (1.5 / W^2, the loss rate of connections in congestion
/// avoidance, is far below them: slow starts and timeouts lose more).
fn tcp_loss(conns: f64, pipe: f64) -> f64 {
    let share = pipe / conns.max(1.0);
    (0.5 / share.powf(0.42)).min(4.0)
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

    /// TCP connections open at once (every PEP segment counted).
    fn tcp_at_once(&self, s: &Scenario) -> f64 {
        s.traffic
            .iter()
            .filter(|t| tcp_of(&t.kind).is_some())
            .map(|t| self.opened(s, t).at_once * self.per_flow)
            .sum()
    }

    /// The packets of the TCP windows in flight at once: no more than the
    /// windows allow, nor than twice what the bottleneck holds (once per
    /// connection a PEP splits a flow into) and two packets per connection.
    fn window_packets(&self, s: &Scenario) -> f64 {
        let windows: f64 = s
            .traffic
            .iter()
            .filter(|t| tcp_of(&t.kind).is_some())
            .map(|t| {
                let o = self.opened(s, t);
                o.at_once * self.per_flow * o.segments
            })
            .sum();
        let conns = self.tcp_at_once(s);
        windows.min(2.0 * self.per_flow * self.pipe_packets + 2.0 * conns)
    }

    fn flows(&self, s: &Scenario, host: Host) -> Part {
        let summary = FLOW_SUMMARY as f64 + host.flow_row();
        let each_tcp = (size_of::<Flow>() + size_of::<TcpSender>() + size_of::<TcpReceiver>())
            as f64
            + 3.0 * BLOCK as f64
            + summary
            + 3.0 * (16 + size_of::<Event>()) as f64;
        let each_udp = (size_of::<Flow>() + size_of::<UdpSink>()) as f64 + summary;
        let (mut conns, mut fixed, mut segs, mut kept) = (0.0, 0.0, 0.0, 0.0);
        for t in &s.traffic {
            let o = self.opened(s, t);
            let tcp = tcp_of(&t.kind).is_some();
            let n = if tcp {
                o.total * self.per_flow
            } else {
                o.total
            };
            conns += n;
            fixed += n * if tcp { each_tcp } else { each_udp };
            if tcp {
                // A ring keeps the most it held, up to twice that.
                segs += n * 2.0 * o.segments;
                kept += n * 2.0 * FIRST_SLOTS as f64;
            }
        }
        // The senders of connections that have ended keep their rings;
        // those open at once hold no more than the windows in flight.
        let segs = segs.min(kept + 2.0 * self.window_packets(s));
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

    fn buffers(&self, s: &Scenario, host: Host) -> Part {
        // CBR and ATSP fill the shared links and their hosts' own, each
        // ring up to twice its most; each packet of a TCP window takes a
        // slot in the rings of the links it crosses and its ACK another on
        // the way back, each ring up to twice its most.
        let paced_pairs: f64 = s
            .traffic
            .iter()
            .filter(|t| matches!(t.kind, TrafficKind::Cbr { .. } | TrafficKind::Atsp(_)))
            .map(|t| t.pairs.len() as f64)
            .sum();
        let paced = if paced_pairs > 0.0 {
            self.shared_packets + self.host_packets * paced_pairs.min(self.hosts)
        } else {
            0.0
        };
        let windows = self.window_packets(s);
        let slot = size_of::<Queued>() as f64;
        let packets = paced + windows;
        let held = (2.0 * paced + 4.0 * windows) * slot;
        let link = (size_of::<crate::net::Link>() as u64 + 4 * BLOCK) as f64
            + (2 * FIRST_SLOTS) as f64 * slot
            + host.link();
        Part {
            name: "link buffers",
            key: "the topology's buffers and pairs",
            bytes: held + self.links as f64 * link,
            how: Detail {
                count: packets,
                each: held / packets.max(1.0),
                what: "packets queued or in flight",
            },
        }
    }

    /// The packets CBR sources offer beyond what their first link carries,
    /// held back in their hosts by a link with `backpressure`: each host's
    /// sources together, for as long as they send.
    fn held(&self, s: &Scenario) -> Part {
        let mut packets = 0.0;
        if self.first_backpressure {
            // Per pair: (bit/s offered, packets per second of it, active s).
            let mut offered: std::collections::BTreeMap<u32, (f64, f64, f64)> = Default::default();
            for t in &s.traffic {
                if let TrafficKind::Cbr { rate, packet_size } = &t.kind {
                    let bps = rate.bps() as f64;
                    let active = Shape::active_s(s, t);
                    for &p in &t.pairs {
                        let o = offered.entry(p).or_default();
                        o.0 += bps;
                        o.1 += bps / (8.0 * *packet_size as f64);
                        o.2 = o.2.max(active);
                    }
                }
            }
            for (bps, pps, active) in offered.into_values() {
                let excess = (bps - self.first_bps).max(0.0) / bps.max(1.0);
                packets += excess * pps * active;
            }
        }
        // Held in a double-ended queue that grows by doubling.
        let each = 2.0 * (size_of::<Packet>() + size_of::<u64>()) as f64;
        Part {
            name: "packets held back by backpressure",
            key: "the CBR traffic's rate or simulation.duration",
            bytes: packets * each,
            how: Detail {
                count: packets,
                each,
                what: "packets held back",
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

fn sampler(s: &Scenario, host: Host) -> Part {
    let samples = (s.duration.ns() / s.sample_interval.ns()) as f64;
    let links = (CORE_MONITORED + 2 * s.aqm.len() as u64) as f64;
    let rows = links * samples;
    let cwnd = s.trace_cwnd.len() as f64 * samples * CWND_ROW as f64;
    let entries = if s.trace_traffic { s.traffic.len() } else { 0 };
    let traffic = entries as f64 * samples * TRAFFIC_ROW as f64;
    let histograms = links * (BUCKETS * size_of::<u64>()) as f64;
    let each = SAMPLE_ROW as f64 * host.rows();
    Part {
        name: "sampler",
        key: "simulation.sample_interval",
        bytes: rows * each + (cwnd + traffic + histograms) * host.rows(),
        how: Detail {
            count: rows,
            each,
            what: "samples",
        },
    }
}

fn logs(s: &Scenario, sh: &Shape, host: Host) -> Part {
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
    // TCP keeps its own losses to a share of what it sends; CBR sources
    // may lose everything.
    let tcp_conns = sh.tcp_at_once(s);
    let tcp_pps = sh.bottleneck_bps.min(sh.offered_bps) / (8.0 * sh.packet);
    let mut tcp_packets = tcp_pps * secs;
    if let Some(sent) = finite_packets(s) {
        tcp_packets = tcp_packets.min(2.0 * sent);
    }
    let tcp_drops = if tcp_conns > 0.0 {
        tcp_loss(tcp_conns, sh.pipe_packets) * tcp_packets
    } else {
        0.0
    };
    let drops = tcp_drops + cbr_pps * secs;
    let cuts = tcp_drops.min(tcp_conns * secs / sh.rtt_s);
    let logged = drops.min(s.drop_log_rows as f64);
    // The sequence records: each traced connection's segments sent and
    // acknowledged, at most at the bottleneck's rate.
    let seq = s.trace_seq.len() as f64 * 3.0 * tcp_pps * secs;
    let bytes = (logged * DROP_ROW as f64 + cuts * CONGESTION_ROW as f64 + seq * SEQ_ROW as f64)
        * host.rows();
    let rows = logged + cuts + seq;
    Part {
        name: "drop and congestion logs",
        key: "simulation.duration",
        bytes,
        how: Detail {
            count: rows,
            each: bytes / rows.max(1.0),
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
pub(crate) mod guard;
#[cfg(test)]
mod tests;
