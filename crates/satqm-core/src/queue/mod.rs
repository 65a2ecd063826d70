//! Physical buffers of output ports: one FIFO, or two virtual queues that
//! share one buffer and one transmitter (the RED+Tail structure).
//!
//! The port owns a [`Buffer`]; the simulator pushes packets into it (with
//! the virtual queue the classifier chose) and pops the next packet to
//! serialize. A FIFO ignores the class. The buffer limit applies to all the
//! packets together, whichever virtual queue holds them.

pub mod parallel;

use crate::packet::Packet;
use crate::ring::Ring;
use crate::time::SimTime;

pub use parallel::{ParallelQueues, SplitParams, VqClass, VqProbe};

/// What an algorithm sees of the queue it monitors.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueView {
    /// Packets waiting (not counting the one being serialized).
    pub q_packets: u32,
    pub q_bytes: u64,
    /// Empty with an idle transmitter since this time.
    pub idle_since: Option<SimTime>,
    /// Bytes that have left the queue since the start.
    pub departed_bytes: u64,
    /// Rate of the port's link, bit/s.
    pub rate_bps: u64,
}

/// A packet waiting in a port's buffer.
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    pub pkt: Packet,
    /// Its index among all packets that arrived at this port.
    pub index: u64,
    pub enqueued_at: SimTime,
}

/// How much a port's buffer holds: a number of packets, whatever their
/// size, or a number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferLimit {
    Packets(u32),
    Bytes(u64),
}

/// The packets waiting at a port: which structure holds them, and how
/// many there are (kept here so that the length, asked on every arrival,
/// needs no dispatch).
#[derive(Debug, Default)]
#[repr(C)] // the length first: a port keeps it in its first cache line
pub struct Buffer {
    len: usize,
    kind: BufferKind,
}

/// How a port's buffer is organised.
#[derive(Debug)]
enum BufferKind {
    /// First in, first out.
    Fifo(Ring<Queued>),
    /// Two virtual queues with a bandwidth split (RED+Tail).
    Parallel(Box<ParallelQueues>),
}

impl Default for BufferKind {
    fn default() -> Self {
        BufferKind::Fifo(Ring::new())
    }
}

impl Buffer {
    /// An empty buffer of two virtual queues.
    pub fn parallel_queues(p: ParallelQueues) -> Buffer {
        Buffer {
            len: 0,
            kind: BufferKind::Parallel(Box::new(p)),
        }
    }

    /// Packets waiting, in all virtual queues.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Add a packet at the tail of virtual queue `class` (a FIFO has one
    /// queue and ignores it). The caller has checked the buffer limit.
    #[inline]
    pub fn push(&mut self, class: VqClass, now: SimTime, q: Queued) {
        self.len += 1;
        match &mut self.kind {
            BufferKind::Fifo(f) => f.push_back(q),
            BufferKind::Parallel(p) => p.push(class, now, q),
        }
    }

    /// The next packet to serialize at `now`, taken out of the buffer
    /// (which is not empty): a plain `Queued`, not in an `Option` (see
    /// [`Ring::take_front`]).
    #[inline]
    pub fn take(&mut self, now: SimTime) -> Queued {
        debug_assert!(self.len > 0, "take from an empty buffer");
        self.len -= 1;
        match &mut self.kind {
            BufferKind::Fifo(f) => f.take_front(),
            BufferKind::Parallel(p) => p
                .pop(now)
                .expect("buffer length out of step with its queues"),
        }
    }

    /// The two virtual queues, if this is a parallel buffer. (Packets go
    /// in and out only through [`push`](Self::push) and [`take`](Self::take),
    /// which keep the count.)
    #[inline]
    pub fn parallel(&self) -> Option<&ParallelQueues> {
        match &self.kind {
            BufferKind::Fifo(_) => None,
            BufferKind::Parallel(p) => Some(p),
        }
    }

    #[inline]
    pub fn parallel_mut(&mut self) -> Option<&mut ParallelQueues> {
        match &mut self.kind {
            BufferKind::Fifo(_) => None,
            BufferKind::Parallel(p) => Some(p),
        }
    }
}
