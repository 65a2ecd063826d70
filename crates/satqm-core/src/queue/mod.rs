//! Physical buffers of output ports: one FIFO, or two virtual queues that
//! share one buffer and one transmitter (the RED+Tail structure).
//!
//! The port owns a [`Buffer`]; the simulator pushes packets into it (with
//! the virtual queue the classifier chose) and pops the next packet to
//! serialize. A FIFO ignores the class. The buffer limit applies to all the
//! packets together, whichever virtual queue holds them.

pub mod parallel;

use std::collections::VecDeque;

use crate::net::Queued;
use crate::time::SimTime;

pub use parallel::{ParallelQueues, SplitParams, VqClass, VqProbe};

/// The packets waiting at a port.
#[derive(Debug)]
pub enum Buffer {
    /// First in, first out.
    Fifo(VecDeque<Queued>),
    /// Two virtual queues with a bandwidth split (RED+Tail).
    Parallel(Box<ParallelQueues>),
}

impl Default for Buffer {
    fn default() -> Self {
        Buffer::Fifo(VecDeque::new())
    }
}

impl Buffer {
    /// Packets waiting, in all virtual queues.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Buffer::Fifo(q) => q.len(),
            Buffer::Parallel(p) => p.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Add a packet at the tail of virtual queue `class` (a FIFO has one
    /// queue and ignores it). The caller has checked the buffer limit.
    #[inline]
    pub fn push(&mut self, class: VqClass, now: SimTime, q: Queued) {
        match self {
            Buffer::Fifo(f) => f.push_back(q),
            Buffer::Parallel(p) => p.push(class, now, q),
        }
    }

    /// The next packet to serialize at `now`, taken out of the buffer.
    #[inline]
    pub fn pop(&mut self, now: SimTime) -> Option<Queued> {
        match self {
            Buffer::Fifo(f) => f.pop_front(),
            Buffer::Parallel(p) => p.pop(now),
        }
    }

    /// The two virtual queues, if this is a parallel buffer.
    pub fn parallel(&self) -> Option<&ParallelQueues> {
        match self {
            Buffer::Fifo(_) => None,
            Buffer::Parallel(p) => Some(p),
        }
    }

    pub fn parallel_mut(&mut self) -> Option<&mut ParallelQueues> {
        match self {
            Buffer::Fifo(_) => None,
            Buffer::Parallel(p) => Some(p),
        }
    }
}
