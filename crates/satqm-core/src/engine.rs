//! The event queue: a binary heap ordered by `(time, sequence)`.
//!
//! Ties in time resolve in insertion order, so a run is a pure function of
//! its scenario and seed. Events are a small enum (see [`Event`]) that the
//! simulation dispatches by `match`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::ids::{AppId, FlowId, LinkId};
use crate::time::SimTime;

/// Everything that can happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The link finished serializing the packet at the head of its port.
    TxDone(LinkId),
    /// The packet at the head of the link's delay line reaches the far end.
    Arrive(LinkId),
    /// A TCP sender timer (retransmission or pacing) may be due.
    SenderTimer(FlowId),
    /// A TCP receiver's delayed-ACK timer may be due.
    AckTimer(FlowId),
    /// An application timer; the token tells the app which one.
    App(AppId, u32),
    /// Periodic measurement sample.
    Sample,
}

#[derive(Debug)]
struct Entry {
    time: SimTime,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Pending events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let e = self.heap.pop()?;
        self.processed += 1;
        Some((e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), Event::Sample);
        q.schedule(SimTime(3), Event::TxDone(LinkId(1)));
        q.schedule(SimTime(5), Event::TxDone(LinkId(2)));
        q.schedule(SimTime(3), Event::TxDone(LinkId(3)));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (SimTime(3), Event::TxDone(LinkId(1))),
                (SimTime(3), Event::TxDone(LinkId(3))),
                (SimTime(5), Event::Sample),
                (SimTime(5), Event::TxDone(LinkId(2))),
            ]
        );
        assert_eq!(q.processed(), 4);
    }
}
