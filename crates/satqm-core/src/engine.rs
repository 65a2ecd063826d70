//! The event queue: events ordered by `(time, sequence)`, kept in two
//! 4-ary heaps (see [`EventQueue`]).
//!
//! Ties in time resolve in insertion order, so a run is a pure function of
//! its scenario and seed. Events are a small enum (see [`Event`]) that the
//! simulation dispatches by `match`.

use crate::ids::{AppId, AqmId, FlowId, LinkId};
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
    /// An application timer.
    App(AppId, AppTimer),
    /// Periodic measurement sample.
    Sample,
    /// The periodic update of an AQM (PI, REM, Adaptive RED, PIE).
    AqmTimer(AqmId),
}

/// Which of an application's timers fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppTimer {
    /// The application starts (its `start` time, or a web slot's ramp).
    Start,
    /// The application stops (its `stop` time).
    Stop,
    /// The application's own clock: the next CBR datagram, the next
    /// arrival of a Poisson process, the end of a think time.
    Tick,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    seq: u64,
    event: Event,
}

impl Entry {
    /// `(time, seq)` as one integer: comparing it is one wide comparison
    /// instead of a lexicographic pair of branches.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time.0 as u128) << 64) | self.seq as u128
    }
}

/// Children per node of the heap: a 4-ary heap is half as deep as a binary
/// one and its sibling entries share cache lines, which matters because
/// popping events is the simulator's hottest loop.
const ARITY: usize = 4;

/// An implicit 4-ary min-heap of entries on `(time, seq)`.
#[derive(Debug, Default)]
struct Heap {
    v: Vec<Entry>,
}

impl Heap {
    #[inline]
    fn peek_key(&self) -> Option<u128> {
        self.v.first().map(Entry::key)
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        let key = e.key();
        // Sift up, moving parents down into the hole.
        let mut i = self.v.len();
        self.v.push(e);
        let heap = &mut self.v[..];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let p = heap[parent];
            if key >= p.key() {
                break;
            }
            heap[i] = p;
            i = parent;
        }
        heap[i] = e;
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let top = *self.v.first()?;
        let last = self.v.pop().expect("non-empty");
        let n = self.v.len();
        if n > 0 {
            // Bottom-up removal (Floyd): move the smallest child into the
            // hole down to a leaf, then sift the last entry up from there.
            // The last entry is a leaf's, so it rarely climbs far; this
            // saves comparing it with every level's smallest child.
            let heap = &mut self.v[..];
            let mut i = 0;
            loop {
                let first = i * ARITY + 1;
                if first >= n {
                    break;
                }
                let kids = &heap[first..(first + ARITY).min(n)];
                let mut best = 0;
                let mut best_key = kids[0].key();
                for (j, k) in kids.iter().enumerate().skip(1) {
                    let key = k.key();
                    if key < best_key {
                        best = j;
                        best_key = key;
                    }
                }
                heap[i] = kids[best];
                i = first + best;
            }
            let key = last.key();
            while i > 0 {
                let parent = (i - 1) / ARITY;
                let p = heap[parent];
                if key >= p.key() {
                    break;
                }
                heap[i] = p;
                i = parent;
            }
            heap[i] = last;
        }
        Some(top)
    }
}

/// Pending events, popped in `(time, seq)` order.
///
/// Two heaps share one sequence counter: the timers of the TCP endpoints
/// (one or two per connection) and of the applications (a web client's
/// think time, the next arrival of a Poisson process), mostly far in the
/// future, and the network's events (the links' transmitters and delay
/// lines, the sampler, the AQMs' updates). With many connections or web
/// clients the timers are most of the pending events but a small share of
/// the popped ones, so keeping them apart makes the heap that serves
/// nearly every event shallow. The order of events is the one
/// a single heap gives: the smaller of the two heads goes first.
#[derive(Debug, Default)]
pub struct EventQueue {
    net: Heap,
    timers: Heap,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry { time, seq, event };
        match event {
            Event::SenderTimer(_) | Event::AckTimer(_) | Event::App(..) => self.timers.push(e),
            _ => self.net.push(e),
        }
    }

    /// The heap whose head comes first (`None` if both are empty).
    #[inline]
    fn first(&mut self) -> Option<&mut Heap> {
        match (self.net.peek_key(), self.timers.peek_key()) {
            (Some(a), Some(b)) if b < a => Some(&mut self.timers),
            (Some(_), _) => Some(&mut self.net),
            (None, Some(_)) => Some(&mut self.timers),
            (None, None) => None,
        }
    }

    /// The first two network events (transmissions and arrivals), if any:
    /// the next event or one soon after it, and the one after that.
    #[inline]
    pub fn peek_network(&self) -> (Option<Event>, Option<Event>) {
        let v = &self.net.v;
        let second = v
            .get(1..v.len().min(ARITY + 1))
            .and_then(|children| children.iter().min_by_key(|e| e.key()));
        (v.first().map(|e| e.event), second.map(|e| e.event))
    }

    /// The first of the timers, if any.
    #[inline]
    pub fn peek_timer(&self) -> Option<Event> {
        self.timers.v.first().map(|e| e.event)
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        match (self.net.v.first(), self.timers.v.first()) {
            (Some(a), Some(b)) => Some(a.time.min(b.time)),
            (a, b) => a.or(b).map(|e| e.time),
        }
    }

    /// The next event if it is due at or before `limit` (the run loop's
    /// peek and pop in one look at the two heads).
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, Event)> {
        let heap = self.first()?;
        if heap.v[0].time > limit {
            return None;
        }
        let e = heap.pop().expect("non-empty");
        self.processed += 1;
        Some((e.time, e.event))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let e = self.first()?.pop().expect("non-empty");
        self.processed += 1;
        Some((e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.net.v.len() + self.timers.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    #[test]
    fn matches_a_sorted_order_on_random_input() {
        // Timers (TCP and applications') and other events live in two
        // heaps: mix them.
        let ev = |s: u32| match s % 4 {
            0 => Event::TxDone(LinkId(s)),
            1 => Event::SenderTimer(FlowId(s)),
            2 => Event::App(AppId(s), AppTimer::Tick),
            _ => Event::AckTimer(FlowId(s)),
        };
        let mut rng = crate::rng::Rng::stream(3, "heap", 0);
        let mut q = EventQueue::new();
        let mut expected = Vec::new();
        let mut seq = 0u32;
        for round in 0..200 {
            for _ in 0..(round % 7 + 1) {
                let t = SimTime(rng.uniform_u64(0, 50));
                q.schedule(t, ev(seq));
                expected.push((t, seq));
                seq += 1;
            }
            for _ in 0..(round % 5) {
                expected.sort();
                if expected.is_empty() {
                    break;
                }
                let (t, s) = expected.remove(0);
                assert_eq!(q.pop(), Some((t, ev(s))));
            }
        }
        expected.sort();
        for (t, s) in expected {
            assert_eq!(q.pop(), Some((t, ev(s))));
        }
        assert!(q.is_empty());
    }
}
