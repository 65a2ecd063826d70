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
///
/// Popping leaves a hole at the root instead of refilling it at once
/// (`hole`): nearly every event schedules another one (an arrival the next
/// on its link, a transmission its link's next), and that entry then
/// takes the root's place with one sift down. This spares the pop's
/// refill and the push's sift up; the order is the same, since the heap
/// gives the least key whatever its shape. Anything that reads the heap
/// first refills the hole ([`Heap::settle`]).
#[derive(Debug, Default)]
struct Heap {
    v: Vec<Entry>,
    /// `v[0]` was popped already (and `v` is not empty).
    hole: bool,
}

impl Heap {
    /// The head's key (the heap settled).
    #[inline]
    fn peek_key(&self) -> Option<u128> {
        debug_assert!(!self.hole);
        self.v.first().map(Entry::key)
    }

    fn len(&self) -> usize {
        self.v.len() - self.hole as usize
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        if self.hole {
            self.hole = false;
            self.sift_down(0, e);
            return;
        }
        // Sift up, moving parents down into the hole.
        let i = self.v.len();
        self.v.push(e);
        self.sift_up(i, e);
    }

    /// Put `e` at `i` or above it, moving larger parents down.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        let key = e.key();
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

    /// Put `e` in the hole at `i` or below it, moving smaller children up.
    #[inline(always)]
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let key = e.key();
        let heap = &mut self.v[..];
        let n = heap.len();
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let (best, best_key) = Self::least(&heap[first..(first + ARITY).min(n)]);
            if key <= best_key {
                break;
            }
            heap[i] = heap[first + best];
            i = first + best;
        }
        heap[i] = e;
    }

    /// The least of `kids` (not empty): its place and key.
    #[inline(always)]
    fn least(kids: &[Entry]) -> (usize, u128) {
        let mut best = 0;
        let mut best_key = kids[0].key();
        for (j, k) in kids.iter().enumerate().skip(1) {
            let key = k.key();
            if key < best_key {
                best = j;
                best_key = key;
            }
        }
        (best, best_key)
    }

    /// Refill a hole left by [`take`](Self::take) with the last entry.
    #[inline]
    fn settle(&mut self) {
        if self.hole {
            self.refill();
        }
    }

    /// [`settle`](Self::settle) a heap with a hole.
    #[inline(always)]
    fn refill(&mut self) {
        self.hole = false;
        let last = self.v.pop().expect("a hole is in a non-empty heap");
        let n = self.v.len();
        if n == 0 {
            return;
        }
        // Bottom-up (Floyd): move the smallest child into the hole down to
        // a leaf, then sift the last entry up from there. The last entry is
        // a leaf's, so it rarely climbs far; this saves comparing it with
        // every level's smallest child.
        let heap = &mut self.v[..];
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let (best, _) = Self::least(&heap[first..(first + ARITY).min(n)]);
            heap[i] = heap[first + best];
            i = first + best;
        }
        self.sift_up(i, last);
    }

    /// The head, removed (the heap settled and not empty).
    #[inline(always)]
    fn pop(&mut self) -> Entry {
        let top = self.take();
        self.refill();
        top
    }

    /// The head, leaving a hole (the heap settled and not empty).
    #[inline]
    fn take(&mut self) -> Entry {
        debug_assert!(!self.hole && !self.v.is_empty());
        self.hole = true;
        self.v[0]
    }

    /// The two least entries after the head (a hint: with a hole, the
    /// head is already gone, so these are the two least).
    #[inline(always)]
    fn next_two(&self) -> (Option<&Entry>, Option<&Entry>) {
        let v = &self.v[..];
        let n = v.len();
        if !self.hole {
            let second = v
                .get(1..n.min(ARITY + 1))
                .and_then(|kids| kids.iter().min_by_key(|e| e.key()));
            return (v.first(), second);
        }
        // The least child of the root is next; after it the least of its
        // siblings and its own children.
        let (mut a, mut b) = (usize::MAX, usize::MAX);
        let (mut ka, mut kb) = (u128::MAX, u128::MAX);
        for (i, e) in v.iter().enumerate().take(ARITY + 1).skip(1) {
            let k = e.key();
            if k < ka {
                (b, kb) = (a, ka);
                (a, ka) = (i, k);
            } else if k < kb {
                (b, kb) = (i, k);
            }
        }
        if a == usize::MAX {
            return (None, None);
        }
        let first = a * ARITY + 1;
        for (i, e) in v.iter().enumerate().take(first + ARITY).skip(first) {
            if e.key() < kb {
                (b, kb) = (i, e.key());
            }
        }
        (v.get(a), v.get(b))
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

    /// The heap whose head comes first (`None` if both are empty), both
    /// settled.
    #[inline]
    fn first(&mut self) -> Option<&mut Heap> {
        self.net.settle();
        self.timers.settle();
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
        let (a, b) = self.net.next_two();
        (a.map(|e| e.event), b.map(|e| e.event))
    }

    /// The first of the timers, if any.
    #[inline]
    pub fn peek_timer(&self) -> Option<Event> {
        self.timers.next_two().0.map(|e| e.event)
    }

    /// Time of the next event, if any.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.first().map(|h| h.v[0].time)
    }

    /// The next event if it is due at or before `limit` (the run loop's
    /// peek and pop in one look at the two heads). `hole`: leave the head's
    /// place for the next event scheduled (see [`Heap`]); else refill it
    /// now, so that the `peek`s see the heap as it will be.
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime, hole: bool) -> Option<(SimTime, Event)> {
        let heap = self.first()?;
        if heap.v[0].time > limit {
            return None;
        }
        let e = if hole { heap.take() } else { heap.pop() };
        self.processed += 1;
        Some((e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.net.len() + self.timers.len()
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
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(SimTime(5), true)).collect();
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

    /// Against a sorted list, popping both ways: leaving the head's place
    /// to the next schedule, and refilling it at once.
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
        for hole in [true, false] {
            let mut rng = crate::rng::Rng::stream(3, "heap", 0);
            let mut q = EventQueue::new();
            let mut expected = Vec::new();
            let mut seq = 0u32;
            let pop = |q: &mut EventQueue| q.pop_until(SimTime(u64::MAX), hole);
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
                    assert_eq!(pop(&mut q), Some((t, ev(s))));
                    assert_eq!(q.len(), expected.len());
                }
            }
            expected.sort();
            for (t, s) in expected {
                assert_eq!(q.peek_time(), Some(t));
                assert_eq!(pop(&mut q), Some((t, ev(s))));
            }
            assert!(q.is_empty());
            assert_eq!(pop(&mut q), None);
        }
    }

    /// The prefetch's look ahead: the two least entries whether or not
    /// the last pop left a hole.
    #[test]
    fn next_two_are_the_two_least() {
        let mut rng = crate::rng::Rng::stream(5, "heap", 0);
        let mut h = Heap::default();
        for s in 0..2000u64 {
            let time = SimTime(rng.uniform_u64(0, 1000));
            h.push(Entry {
                time,
                seq: s,
                event: Event::Sample,
            });
            if s % 3 == 0 {
                h.settle();
                let mut keys: Vec<u128> = h.v.iter().map(Entry::key).collect();
                keys.sort();
                let two = |h: &Heap| {
                    let (a, b) = h.next_two();
                    (a.map(Entry::key), b.map(Entry::key))
                };
                assert_eq!(two(&h), (keys.first().copied(), keys.get(1).copied()));
                h.take();
                assert_eq!(two(&h), (keys.get(1).copied(), keys.get(2).copied()));
            }
        }
    }
}
