use std::collections::VecDeque;

use crate::config::{BufferLimit, DelayModel};
use crate::ids::NodeId;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::{Rate, SimTime};

/// Why a packet left the network without being delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer was full.
    Overflow = 0,
    /// Random erasure on the link (the scenario's `loss`).
    Erasure = 1,
}

impl DropReason {
    pub const ALL: [DropReason; 2] = [DropReason::Overflow, DropReason::Erasure];

    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Erasure => "erasure",
        }
    }
}

/// An output port: the buffer in front of a link's transmitter.
#[derive(Debug)]
pub struct Port {
    pub queue: VecDeque<Packet>,
    /// Bytes waiting (not counting the packet in service).
    pub bytes: u64,
    pub limit: BufferLimit,
    /// Packets that arrived at this port so far (drops included); the
    /// index of a packet is this count before it arrived.
    pub arrivals: u64,
    pub in_service: Option<Packet>,
    /// When the packet in service started (or the last sample, whichever
    /// is later): for busy-time accounting.
    pub busy_mark: SimTime,
    /// Accumulated busy nanoseconds since the last sample.
    pub busy_ns: u64,
    /// Bytes whose serialization completed since the last sample.
    pub tx_bytes: u64,
    pub tx_packets_total: u64,
    pub tx_bytes_total: u64,
    pub drops_total: u64,
    pub drops_since_sample: u64,
}

impl Port {
    pub fn new(limit: BufferLimit) -> Port {
        Port {
            queue: VecDeque::new(),
            bytes: 0,
            limit,
            arrivals: 0,
            in_service: None,
            busy_mark: SimTime::ZERO,
            busy_ns: 0,
            tx_bytes: 0,
            tx_packets_total: 0,
            tx_bytes_total: 0,
            drops_total: 0,
            drops_since_sample: 0,
        }
    }

    /// Would `pkt` fit in the buffer?
    pub fn fits(&self, pkt: &Packet) -> bool {
        match self.limit {
            BufferLimit::Packets(n) => self.queue.len() < n as usize,
            BufferLimit::Bytes(b) => self.bytes + pkt.size as u64 <= b,
        }
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
    /// Packets propagating, with their arrival times (non-decreasing).
    pub line: VecDeque<(SimTime, Packet)>,
    /// Arrival time of the last packet put on the line (keeps FIFO order).
    pub last_arrival: SimTime,
    /// Draws for per-packet delays and erasures.
    pub rng: Rng,
    /// Whether the periodic sampler records this link.
    pub monitored: bool,
}

impl Link {
    /// Arrival time at the far end of a packet that finished serialization
    /// at `now`.
    pub fn arrival_time(&mut self, now: SimTime) -> SimTime {
        let d = match self.delay {
            DelayModel::Fixed(d) => d,
            DelayModel::Uniform(lo, hi) => SimTime(self.rng.uniform_u64(lo.ns(), hi.ns())),
        };
        let t = (now + d).max(self.last_arrival);
        self.last_arrival = t;
        t
    }

    /// Packets inside the link: waiting, in service, or propagating.
    pub fn in_flight(&self) -> usize {
        self.port.queue.len() + self.port.in_service.is_some() as usize + self.line.len()
    }
}
