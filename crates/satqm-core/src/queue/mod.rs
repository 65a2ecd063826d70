//! Physical buffers of output ports: one FIFO, two virtual queues that
//! share one buffer and one transmitter (the RED+Tail structure), or a
//! flow-queuing scheduler that decides drops itself (FQ-CoDel).
//!
//! The port owns a [`Buffer`]; the simulator pushes packets into it (with
//! the virtual queue the classifier chose) and pops the next packet to
//! serialize. A FIFO ignores the class. The buffer limit applies to all the
//! packets together, whichever virtual queue holds them.

pub mod fq_codel;
pub mod parallel;

use crate::packet::Packet;
use crate::ring::Ring;
use crate::time::SimTime;

pub use fq_codel::{FqCodel, FqCodelParams, FqMark, QdiscDrop};
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
    /// A structure behind one pointer (so that the buffer stays the size
    /// of a FIFO's ring, which the port's layout counts on).
    Structured(Box<Structured>),
}

/// The buffers other than a FIFO.
#[derive(Debug)]
enum Structured {
    /// Two virtual queues with a bandwidth split (RED+Tail).
    Parallel(ParallelQueues),
    /// Flow queues under a scheduler with its own AQM (FQ-CoDel).
    FqCodel(FqCodel),
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
            kind: BufferKind::Structured(Box::new(Structured::Parallel(p))),
        }
    }

    /// An empty FQ-CoDel discipline.
    pub fn fq_codel(f: FqCodel) -> Buffer {
        Buffer {
            len: 0,
            kind: BufferKind::Structured(Box::new(Structured::FqCodel(f))),
        }
    }

    /// Whether the buffer schedules and drops by itself (FQ-CoDel): the
    /// port enqueues through [`sched_enqueue`](Self::sched_enqueue) and dequeues
    /// through [`sched_dequeue`](Self::sched_dequeue).
    pub fn is_scheduler(&self) -> bool {
        matches!(&self.kind, BufferKind::Structured(s) if matches!(**s, Structured::FqCodel(_)))
    }

    /// Hand `q` to the scheduler; what it drops to stay within `limit` is
    /// given to `dropped`.
    pub fn sched_enqueue(
        &mut self,
        q: Queued,
        limit: BufferLimit,
        mut dropped: impl FnMut(Queued, QdiscDrop),
    ) {
        let Some(f) = self.fq_codel_mut() else {
            unreachable!("sched_enqueue on a buffer without a scheduler")
        };
        let bucket = f.bucket_of(&q.pkt);
        f.enqueue(bucket, q, limit);
        for (q, e) in f.take_dropped() {
            dropped(q, e);
        }
        self.len = f.len();
    }

    /// The scheduler's next packet at `now` and how it was marked; what it
    /// dropped on the way is given to `dropped`.
    pub fn sched_dequeue(
        &mut self,
        now: SimTime,
        mut dropped: impl FnMut(Queued, QdiscDrop),
    ) -> Option<(Queued, Option<FqMark>)> {
        let Some(f) = self.fq_codel_mut() else {
            unreachable!("sched_dequeue on a buffer without a scheduler")
        };
        let out = f.dequeue(now);
        for (q, e) in f.take_dropped() {
            dropped(q, e);
        }
        self.len = f.len();
        out
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
            BufferKind::Structured(s) => match &mut **s {
                Structured::Parallel(p) => p.push(class, now, q),
                Structured::FqCodel(_) => unreachable!("a scheduler's port uses sched_enqueue"),
            },
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
            BufferKind::Structured(s) => match &mut **s {
                Structured::Parallel(p) => p
                    .pop(now)
                    .expect("buffer length out of step with its queues"),
                Structured::FqCodel(_) => unreachable!("a scheduler's port uses sched_dequeue"),
            },
        }
    }

    /// The two virtual queues, if this is a parallel buffer. (Packets go
    /// in and out only through [`push`](Self::push) and [`take`](Self::take),
    /// which keep the count.)
    #[inline]
    pub fn parallel(&self) -> Option<&ParallelQueues> {
        match &self.kind {
            BufferKind::Structured(s) => match &**s {
                Structured::Parallel(p) => Some(p),
                Structured::FqCodel(_) => None,
            },
            BufferKind::Fifo(_) => None,
        }
    }

    #[inline]
    pub fn parallel_mut(&mut self) -> Option<&mut ParallelQueues> {
        match &mut self.kind {
            BufferKind::Structured(s) => match &mut **s {
                Structured::Parallel(p) => Some(p),
                Structured::FqCodel(_) => None,
            },
            BufferKind::Fifo(_) => None,
        }
    }

    fn fq_codel_mut(&mut self) -> Option<&mut FqCodel> {
        match &mut self.kind {
            BufferKind::Structured(s) => match &mut **s {
                Structured::FqCodel(f) => Some(f),
                Structured::Parallel(_) => None,
            },
            BufferKind::Fifo(_) => None,
        }
    }
}
