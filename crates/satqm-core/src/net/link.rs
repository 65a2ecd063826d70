use std::collections::VecDeque;

use crate::ids::NodeId;
use crate::packet::Packet;
use crate::queue::{Buffer, BufferLimit};
use crate::rng::Rng;
use crate::time::{Rate, SimTime};

/// How a link delays packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DelayModel {
    Fixed(SimTime),
    /// Each packet's delay is drawn uniformly in `[lo, hi]`; packets still
    /// leave in FIFO order (a packet never overtakes the one before it), as
    /// in the satellite delay simulator of the AVQRED emulation.
    Uniform(SimTime, SimTime),
}

impl DelayModel {
    /// The shortest delay a packet can get.
    pub fn min(&self) -> SimTime {
        match *self {
            DelayModel::Fixed(d) => d,
            DelayModel::Uniform(lo, _) => lo,
        }
    }

    /// The mean delay, in seconds.
    pub fn mean_secs(&self) -> f64 {
        match *self {
            DelayModel::Fixed(d) => d.secs_f64(),
            DelayModel::Uniform(lo, hi) => 0.5 * (lo.secs_f64() + hi.secs_f64()),
        }
    }
}

/// Why a packet left the network without being delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer was full.
    Overflow = 0,
    /// Random erasure on the link (the scenario's `loss`).
    Erasure = 1,
    /// An AQM's random or virtual-queue signal, as a drop.
    EarlyDrop = 2,
    /// An AQM's deterministic region (RED above max_th), as a drop.
    ForcedDrop = 3,
    /// An AQM's early signal as an ECN mark (the packet goes on).
    EarlyMark = 4,
    /// An AQM's forced signal as an ECN mark.
    ForcedMark = 5,
}

impl DropReason {
    pub const ALL: [DropReason; 6] = [
        DropReason::Overflow,
        DropReason::Erasure,
        DropReason::EarlyDrop,
        DropReason::ForcedDrop,
        DropReason::EarlyMark,
        DropReason::ForcedMark,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Erasure => "erasure",
            DropReason::EarlyDrop => "early_drop",
            DropReason::ForcedDrop => "forced_drop",
            DropReason::EarlyMark => "early_mark",
            DropReason::ForcedMark => "forced_mark",
        }
    }

    /// Marks leave the packet in the network.
    pub fn is_mark(self) -> bool {
        matches!(self, DropReason::EarlyMark | DropReason::ForcedMark)
    }
}

/// A packet waiting in a port's buffer.
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    pub pkt: Packet,
    /// Its index among all packets that arrived at this port.
    pub index: u64,
    pub enqueued_at: SimTime,
}

/// An output port: the buffer in front of a link's transmitter.
///
/// The transmitter is modelled by `busy_until`, the time the packet being
/// serialized (if any) finishes. A packet that finds the port idle starts
/// at once and needs no event of its own; a `TxDone` event is scheduled
/// only while packets wait, so uncongested links cost one event per packet
/// (its arrival at the far end).
#[derive(Debug)]
pub struct Port {
    /// The waiting packets: one FIFO, or virtual queues sharing the buffer.
    pub queue: Buffer,
    /// Bytes waiting (not counting the packet in service).
    pub bytes: u64,
    pub limit: BufferLimit,
    /// Packets that arrived at this port so far (drops included); the
    /// index of a packet is this count before it arrived.
    pub arrivals: u64,
    /// End of the current (or last) serialization.
    pub busy_until: SimTime,
    /// A `TxDone` event is pending.
    pub txdone_pending: bool,
    /// Serialization nanoseconds started since the last sample, including
    /// any part that runs past it (carried over by the sampler).
    pub busy_ns: u64,
    /// Bytes whose serialization started since the last sample.
    pub tx_bytes: u64,
    pub tx_packets_total: u64,
    pub tx_bytes_total: u64,
    pub drops_total: u64,
    pub drops_since_sample: u64,
    pub marks_total: u64,
    pub marks_since_sample: u64,
    /// `arrivals` at the last sample.
    pub arrivals_at_sample: u64,
    /// Packets from the link's own node waiting for room (backpressure),
    /// with their arrival index.
    pub held: VecDeque<(Packet, u64)>,
    /// Hold locally sent packets when full instead of dropping them.
    pub backpressure: bool,
    /// The AQM acting at this port (index into the simulation's AQMs).
    pub aqm: Option<u32>,
    /// AQMs that monitor this port and hear of its departures.
    pub watchers: Vec<u32>,
}

impl Port {
    pub fn new(limit: BufferLimit) -> Port {
        Port {
            queue: Buffer::default(),
            bytes: 0,
            limit,
            arrivals: 0,
            busy_until: SimTime::ZERO,
            txdone_pending: false,
            busy_ns: 0,
            tx_bytes: 0,
            tx_packets_total: 0,
            tx_bytes_total: 0,
            drops_total: 0,
            drops_since_sample: 0,
            marks_total: 0,
            marks_since_sample: 0,
            arrivals_at_sample: 0,
            held: VecDeque::new(),
            backpressure: false,
            aqm: None,
            watchers: Vec::new(),
        }
    }

    /// Would `pkt` fit in the buffer?
    pub fn fits(&self, pkt: &Packet) -> bool {
        match self.limit {
            BufferLimit::Packets(n) => self.queue.len() < n as usize,
            BufferLimit::Bytes(b) => self.bytes + pkt.size as u64 <= b,
        }
    }

    /// What an AQM monitoring this port sees at `now`.
    pub fn view(&self, now: SimTime, rate: Rate) -> crate::aqm::QueueView {
        crate::aqm::QueueView {
            q_packets: self.queue.len() as u32,
            q_bytes: self.bytes,
            idle_since: self.idle(now).then_some(self.busy_until),
            departed_bytes: self.tx_bytes_total,
            rate_bps: rate.bps(),
        }
    }

    /// Is the transmitter free at `now` with nothing waiting?
    pub fn idle(&self, now: SimTime) -> bool {
        self.queue.is_empty() && now >= self.busy_until
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// A unidirectional link with its output port and delay line.
#[derive(Debug)]
pub struct Link {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate: Rate,
    pub delay: DelayModel,
    /// Packet erasure probability.
    pub loss: f64,
    pub port: Port,
    /// Packets being serialized or propagating, with their arrival times at
    /// the far end (non-decreasing).
    pub line: VecDeque<(SimTime, Packet)>,
    /// Arrival time of the last packet put on the line (keeps FIFO order).
    pub last_arrival: SimTime,
    /// Draws for per-packet delays and erasures.
    pub rng: Rng,
    /// Whether the periodic sampler records this link.
    pub monitored: bool,
}

impl Link {
    /// Arrival time at the far end of a packet whose serialization ends at
    /// `now`.
    #[inline]
    pub fn arrival_time(&mut self, now: SimTime) -> SimTime {
        let d = match self.delay {
            DelayModel::Fixed(d) => d,
            DelayModel::Uniform(lo, hi) => SimTime(self.rng.uniform_u64(lo.ns(), hi.ns())),
        };
        let t = (now + d).max(self.last_arrival);
        self.last_arrival = t;
        t
    }

    /// Packets inside the link: waiting, or being serialized or propagating
    /// (both on the delay line).
    pub fn in_flight(&self) -> usize {
        self.port.queue.len() + self.port.held.len() + self.line.len()
    }
}
