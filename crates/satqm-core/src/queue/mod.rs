//! Physical buffers of output ports: one FIFO, two virtual queues that
//! share one buffer and one transmitter (the RED+Tail structure), or a
//! flow-queuing scheduler that decides drops itself (FQ-CoDel, FQ-PIE,
//! FQ-COBALT, COBALT).
//!
//! The port owns a [`Buffer`]; the simulator pushes packets into it (with
//! the virtual queue the classifier chose) and pops the next packet to
//! serialize. A FIFO ignores the class. The buffer limit applies to all the
//! packets together, whichever virtual queue holds them.

pub mod dualpi2;
pub mod fq;
pub mod parallel;

use crate::aqm::Probe;
use crate::packet::Packet;
use crate::ring::Ring;
use crate::time::SimTime;

pub use dualpi2::{DualPi2, DualPi2Params, DualScheduler};
pub use fq::{CobaltParams, FlowAqmParams, Fq, FqMark, FqParams, Overflow, QdiscDrop};
pub use parallel::{ParallelQueues, SplitParams, VqClass};

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
    /// Flow queues under a scheduler with an AQM on each (FQ-CoDel,
    /// FQ-PIE, FQ-COBALT, COBALT).
    Fq(Fq),
    /// L4S's coupled dual queue (DualPI2).
    DualPi2(DualPi2),
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

    /// An empty flow-queuing discipline.
    pub fn fq(f: Fq) -> Buffer {
        Buffer {
            len: 0,
            kind: BufferKind::Structured(Box::new(Structured::Fq(f))),
        }
    }

    /// Whether the buffer schedules and drops by itself (flow queuing,
    /// DualPI2): the
    /// port enqueues through [`sched_enqueue`](Self::sched_enqueue) and dequeues
    /// through [`sched_dequeue`](Self::sched_dequeue).
    pub fn is_scheduler(&self) -> bool {
        matches!(&self.kind, BufferKind::Structured(s)
            if matches!(**s, Structured::Fq(_) | Structured::DualPi2(_)))
    }

    /// Hand `q` to the scheduler; what it drops (the arrival, or others to
    /// stay within `limit`) is given to `dropped`. Returns the label of the
    /// arrival's mark, if it was marked on the way in.
    pub fn sched_enqueue(
        &mut self,
        q: Queued,
        limit: BufferLimit,
        dropped: impl FnMut(Queued, QdiscDrop),
    ) -> Option<&'static str> {
        let bucket = match self.structured_mut() {
            Some(Structured::Fq(f)) => f.bucket_of(&q.pkt),
            _ => 0,
        };
        self.enqueue_to(bucket, q, limit, dropped)
    }

    /// The scheduler's next packet at `now` and the label of its mark, if
    /// marked; what it dropped on the way is given to `dropped`.
    pub fn sched_dequeue(
        &mut self,
        now: SimTime,
        mut dropped: impl FnMut(Queued, QdiscDrop),
    ) -> Option<(Queued, Option<&'static str>)> {
        let (out, len) = match self.structured_mut() {
            Some(Structured::Fq(f)) => {
                let out = f.dequeue(now).map(|(q, m)| (q, m.map(FqMark::name)));
                f.take_dropped().for_each(|(q, e)| dropped(q, e));
                (out, f.len())
            }
            Some(Structured::DualPi2(d)) => {
                let out = d.dequeue(now);
                d.take_dropped().for_each(|(q, e)| dropped(q, e));
                (out, d.len())
            }
            _ => unreachable!("sched_dequeue on a buffer without a scheduler"),
        };
        self.len = len;
        out
    }

    /// The discipline's internals at a sample (the interval's figures of
    /// RED+Tail's virtual queues start again).
    pub fn probe(&mut self, now: SimTime, put: &mut Probe) {
        match self.structured_mut() {
            Some(Structured::Parallel(p)) => p.probe(now, put),
            Some(Structured::Fq(f)) => f.probe(put),
            Some(Structured::DualPi2(d)) => d.probe(put),
            None => {}
        }
    }

    /// A scheduler's periodic update (DualPI2's PI2 controller, FQ-PIE's
    /// probabilities), if it has one.
    pub fn sched_update(&mut self, now: SimTime) {
        match self.structured_mut() {
            Some(Structured::DualPi2(d)) => d.update(now),
            Some(Structured::Fq(f)) => f.update(),
            _ => {}
        }
    }

    /// The period of [`sched_update`](Self::sched_update), if any.
    pub fn sched_interval(&self) -> Option<SimTime> {
        match &self.kind {
            BufferKind::Structured(s) => match &**s {
                Structured::DualPi2(d) => Some(d.tupdate()),
                Structured::Fq(f) => f.update_interval(),
                _ => None,
            },
            BufferKind::Fifo(_) => None,
        }
    }

    /// [`sched_enqueue`](Self::sched_enqueue) with the flow queue given
    /// (a flow-queuing discipline's `bucket`, as a replay names it;
    /// DualPI2 classifies by ECN and ignores it).
    pub fn enqueue_to(
        &mut self,
        bucket: u32,
        q: Queued,
        limit: BufferLimit,
        mut dropped: impl FnMut(Queued, QdiscDrop),
    ) -> Option<&'static str> {
        let (len, mark) = match self.structured_mut() {
            Some(Structured::Fq(f)) => {
                let mark = f.enqueue(bucket, q, limit);
                f.take_dropped().for_each(|(q, e)| dropped(q, e));
                (f.len(), mark.map(FqMark::name))
            }
            Some(Structured::DualPi2(d)) => {
                d.enqueue(q, limit);
                d.take_dropped().for_each(|(q, e)| dropped(q, e));
                (d.len(), None)
            }
            _ => unreachable!("enqueue_to on a buffer without a scheduler"),
        };
        self.len = len;
        mark
    }

    /// DualPI2's base probability p' (units of 2^-32), if this is one.
    pub fn base_probability(&mut self) -> Option<u64> {
        match self.structured_mut() {
            Some(Structured::DualPi2(d)) => Some(d.base_probability()),
            _ => None,
        }
    }

    /// An empty DualPI2 discipline.
    pub fn dualpi2(d: DualPi2) -> Buffer {
        Buffer {
            len: 0,
            kind: BufferKind::Structured(Box::new(Structured::DualPi2(d))),
        }
    }

    fn structured_mut(&mut self) -> Option<&mut Structured> {
        match &mut self.kind {
            BufferKind::Structured(s) => Some(s),
            BufferKind::Fifo(_) => None,
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

    /// Add a packet at the tail of its queue: a FIFO's one, or the virtual
    /// queue its classification chose. The caller has checked the buffer
    /// limit.
    #[inline]
    pub fn push(&mut self, now: SimTime, q: Queued) {
        self.len += 1;
        match &mut self.kind {
            BufferKind::Fifo(f) => f.push_back(q),
            BufferKind::Structured(s) => match &mut **s {
                Structured::Parallel(p) => p.push(p.arrival_class(), now, q),
                _ => unreachable!("a scheduler's port uses sched_enqueue"),
            },
        }
    }

    /// The arrival that was just classified leaves at once, without
    /// waiting (the transmitter was idle): the virtual queues count it as
    /// served. Nothing for a FIFO.
    #[inline]
    pub fn served_directly(&mut self, now: SimTime, size: u32) {
        if let Some(Structured::Parallel(p)) = self.structured_mut() {
            p.served_directly(p.arrival_class(), now, size);
        }
    }

    /// The next packet to serialize at `now`, taken out of the buffer
    /// (which is not empty): a plain `Queued`, not in an `Option` (see
    /// [`Ring::take_front`]).
    #[inline(always)]
    pub fn take(&mut self, now: SimTime) -> Queued {
        debug_assert!(self.len > 0, "take from an empty buffer");
        self.len -= 1;
        match &mut self.kind {
            BufferKind::Fifo(f) => f.take_front(),
            BufferKind::Structured(s) => match &mut **s {
                Structured::Parallel(p) => p
                    .pop(now)
                    .expect("buffer length out of step with its queues"),
                _ => unreachable!("a scheduler's port uses sched_dequeue"),
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
                _ => None,
            },
            BufferKind::Fifo(_) => None,
        }
    }

    #[inline]
    pub fn parallel_mut(&mut self) -> Option<&mut ParallelQueues> {
        match &mut self.kind {
            BufferKind::Structured(s) => match &mut **s {
                Structured::Parallel(p) => Some(p),
                _ => None,
            },
            BufferKind::Fifo(_) => None,
        }
    }
}
