//! The event queue: events ordered by `(time, sequence)` (see
//! [`EventQueue`]): the timers and the network's events apart, each in a
//! 4-ary heap (`heap.rs`) or, while many are pending, a calendar queue
//! (`calendar.rs`).
//!
//! Ties in time resolve in insertion order, so a run is a pure function of
//! its scenario and seed. Events are a small enum (see [`Event`]) that the
//! simulation dispatches by `match`.

mod calendar;
mod heap;

use crate::ids::{AppId, AqmId, FlowId, LinkId};
use crate::time::SimTime;
use calendar::Calendar;
use heap::{Entry, Heap};

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
    /// The next piece of a link's schedule starts (`net/schedule.rs`).
    LinkChange(LinkId),
    /// Packets on the line of a link that plays a schedule reach the far
    /// end: those due now, whatever an outage or a falling delay did to
    /// the line's order since the event was scheduled.
    ArriveOnSchedule(LinkId),
    /// A route change (its index among the run's) takes effect.
    RouteChange(u32),
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

/// Events popped between two looks at the number of pending events
/// ([`Pending::rebalance`]; a power of two).
const REBALANCE_EVERY: u64 = 1 << 16;

/// The pending events of one queue (the network's, or the timers): in a
/// heap while few are pending, in a calendar while many are. Both give
/// the same order; the queue moves its events from one to the other as
/// their number changes (see [`Pending::rebalance`]).
#[derive(Debug)]
enum Pending {
    Heap(Heap),
    Calendar(Box<Calendar>),
}

/// When a queue of events moves to a calendar and back: from `from`
/// pending events on, and under `below`.
#[derive(Clone, Copy, Debug)]
struct Switch {
    from: usize,
    below: usize,
}

/// The network's events: a heap of a few dozen events is two or three
/// levels deep and cheaper than sorting slots; past that, the calendar's
/// slots cost less than the heap's levels (BENCHMARKS.md, "The event
/// queue": the dumbbell keeps 10 to 15 network events pending, the gateway
/// about 70).
const NET_SWITCH: Switch = Switch {
    from: 48,
    below: 16,
};

/// The timers, which are popped far less often than the network's events:
/// a calendar pays only once their heap outgrows the caches (100,000
/// connections keep about 117,000 timers pending; the gateway, about 500).
const TIMER_SWITCH: Switch = Switch {
    from: 1 << 12,
    below: 1 << 10,
};

/// How far ahead the timers' calendar reaches (retransmission and
/// delayed-ACK timers are due within about a second; later ones wait in
/// its heap).
const TIMER_HORIZON: SimTime = SimTime(1_000_000_000);

impl Pending {
    fn len(&self) -> usize {
        match self {
            Pending::Heap(h) => h.len(),
            Pending::Calendar(c) => c.len(),
        }
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        match self {
            Pending::Heap(h) => h.push(e),
            Pending::Calendar(c) => c.push(e),
        }
    }

    /// The next event.
    #[inline(always)]
    fn head(&mut self) -> Option<&Entry> {
        match self {
            Pending::Heap(h) => {
                h.settle();
                h.first()
            }
            Pending::Calendar(c) => c.head(),
        }
    }

    /// Remove the next event (after [`head`](Self::head)); `hole` as in
    /// [`EventQueue::pop_until`].
    #[inline]
    fn pop(&mut self, hole: bool) -> Entry {
        match self {
            Pending::Heap(h) if hole => h.take(),
            Pending::Heap(h) => h.pop(),
            Pending::Calendar(c) => c.pop(),
        }
    }

    /// The next events, for prefetching: a heap tells the next two (the
    /// second soon after the first), a calendar the next three in its
    /// sorted slot.
    #[inline]
    fn ahead(&self) -> [Option<&Entry>; 3] {
        match self {
            Pending::Heap(h) => {
                let (a, b) = h.next_two();
                [a, b, None]
            }
            Pending::Calendar(c) => c.ahead(),
        }
    }

    /// Move the events into a calendar (with slots reaching `horizon`
    /// ahead) or back into a heap if their number calls for it (`at`).
    /// `now`: no event is due before.
    #[cold]
    fn rebalance(&mut self, now: SimTime, horizon: SimTime, at: Switch) {
        let switch = match self {
            Pending::Heap(h) => h.len() >= at.from,
            Pending::Calendar(c) => c.len() < at.below,
        };
        if !switch {
            return;
        }
        *self = match std::mem::replace(self, Pending::Heap(Heap::default())) {
            Pending::Heap(mut h) => {
                h.settle();
                let mut c = Calendar::new(horizon, now);
                for e in h.into_entries() {
                    c.push(e);
                }
                Pending::Calendar(Box::new(c))
            }
            Pending::Calendar(c) => {
                let mut h = Heap::default();
                for e in c.drain() {
                    h.push(e);
                }
                Pending::Heap(h)
            }
        };
    }
}

/// Pending events, popped in `(time, seq)` order.
///
/// Two queues share one sequence counter, each a [`Pending`]: the timers
/// of the TCP endpoints (one or two per connection) and of the
/// applications (a web client's think time, the next arrival of a Poisson
/// process), mostly far in the future; and the network's events (the
/// links' transmitters and delay lines, the sampler, the AQMs' updates). With
/// many connections or web clients the timers are most of the pending
/// events but a small share of the popped ones, so keeping them apart
/// keeps the queue that serves nearly every event small. The order of
/// events is the one a single heap gives: the smaller of the two heads
/// goes first.
#[derive(Debug)]
pub struct EventQueue {
    net: Pending,
    /// The longest delay of a link: how far ahead a calendar's slots reach.
    horizon: SimTime,
    timers: Pending,
    /// The key of the timers' head (`u128::MAX` if there are none) while it
    /// is known, that is since the last look at it: the run loop compares
    /// it with the network's head for every event, and it changes only
    /// when a timer is scheduled or popped (or the timers move between heap
    /// and calendar).
    timer_head: Option<u128>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    /// A queue for a network whose longest link delay is `horizon`.
    pub fn new(horizon: SimTime) -> Self {
        EventQueue {
            net: Pending::Heap(Heap::default()),
            horizon,
            timers: Pending::Heap(Heap::default()),
            timer_head: None,
            next_seq: 0,
            processed: 0,
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        match event {
            Event::SenderTimer(_) | Event::AckTimer(_) | Event::App(..) => {
                let seq = self.take_seq();
                self.timers.push(Entry { time, seq, event });
                self.timer_head = None;
            }
            _ => self.schedule_network(time, event),
        }
    }

    /// [`schedule`](Self::schedule) for a network event (not a timer),
    /// inline: the next arrival on a delay line, which nearly every
    /// arrival schedules.
    #[inline(always)]
    pub fn schedule_network(&mut self, time: SimTime, event: Event) {
        debug_assert!(!matches!(
            event,
            Event::SenderTimer(_) | Event::AckTimer(_) | Event::App(..)
        ));
        let seq = self.take_seq();
        self.net.push(Entry { time, seq, event });
    }

    /// The next event's place in the order of scheduling.
    #[inline(always)]
    fn take_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// The next event if it is due at or before `limit` (the run loop's
    /// peek and pop in one look at the two heads). `hole`: a queue that is
    /// a heap leaves its head's place for the next event it is given (see
    /// [`Heap`]); else it refills it now, as the `peek`s need.
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime, hole: bool) -> Option<(SimTime, Event)> {
        if self.processed & (REBALANCE_EVERY - 1) == 0 {
            self.rebalance();
        }
        let timer = match self.timer_head {
            Some(k) => k,
            None => {
                let k = self.timers.head().map_or(u128::MAX, Entry::key);
                self.timer_head = Some(k);
                k
            }
        };
        // A network heap's head, looked at and taken with one look at what
        // holds the events (1.8 % fewer instructions at N = 3 than the
        // general way below, which asks at each step).
        if let Pending::Heap(h) = &mut self.net {
            h.settle();
            if let Some(a) = h.first() {
                if a.key() <= timer {
                    if a.time > limit {
                        return None;
                    }
                    let e = if hole { h.take() } else { h.pop() };
                    self.processed += 1;
                    return Some((e.time, e.event));
                }
            }
        }
        let (from_net, time) = match self.net.head() {
            Some(a) if a.key() <= timer => (true, a.time),
            _ if timer == u128::MAX => return None,
            _ => (false, SimTime((timer >> 64) as u64)),
        };
        if time > limit {
            return None;
        }
        let e = if from_net {
            self.net.pop(hole)
        } else {
            self.timer_head = None;
            self.timers.pop(hole)
        };
        self.processed += 1;
        Some((e.time, e.event))
    }

    /// See [`Pending::rebalance`].
    #[cold]
    #[inline(never)]
    fn rebalance(&mut self) {
        if let Some(t) = self.net.head().map(|e| e.time) {
            self.net.rebalance(t, self.horizon, NET_SWITCH);
        }
        if let Some(t) = self.timers.head().map(|e| e.time) {
            self.timer_head = None;
            self.timers.rebalance(t, TIMER_HORIZON, TIMER_SWITCH);
        }
    }

    /// The first three network events (transmissions and arrivals), if
    /// known: the next event or one soon after it, and the ones after
    /// that (the third only from a calendar).
    #[inline]
    pub fn peek_network(&self) -> [Option<Event>; 3] {
        self.net.ahead().map(|e| e.map(|e| e.event))
    }

    /// The first of the timers, if any.
    #[inline]
    pub fn peek_timer(&self) -> Option<Event> {
        self.timers.ahead()[0].map(|e| e.event)
    }

    /// Time of the next event, if any.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        let net = self.net.head().map(|e| e.time);
        match (net, self.timers.head().map(|e| e.time)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
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

    /// Whether the network's events are in a calendar now (for tests of
    /// what depends on it).
    #[cfg(test)]
    pub(crate) fn network_in_calendar(&self) -> bool {
        matches!(self.net, Pending::Calendar(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new(SimTime(1 << 20));
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
            let mut q = EventQueue::new(SimTime(1 << 20));
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

    /// A reference queue beside an `EventQueue`: schedule and pop both,
    /// and compare.
    struct Twin {
        q: EventQueue,
        reference: std::collections::BinaryHeap<std::cmp::Reverse<(SimTime, u32)>>,
        seq: u32,
        now: SimTime,
        /// Schedule sender timers instead of arrivals.
        timers: bool,
    }

    impl Twin {
        fn new(q: EventQueue) -> Twin {
            Twin {
                q,
                reference: Default::default(),
                seq: 0,
                now: SimTime::ZERO,
                timers: false,
            }
        }

        fn event(&self, s: u32) -> Event {
            if self.timers {
                Event::SenderTimer(FlowId(s))
            } else {
                Event::Arrive(LinkId(s))
            }
        }

        /// A network event `after` from now.
        fn schedule(&mut self, after: u64) {
            let t = SimTime(self.now.0 + after);
            self.q.schedule(t, self.event(self.seq));
            self.reference.push(std::cmp::Reverse((t, self.seq)));
            self.seq += 1;
        }

        /// Pop `pops` events, keeping `pending` events pending, each
        /// scheduled up to `spread` ahead.
        fn hold(&mut self, rng: &mut crate::rng::Rng, pending: usize, spread: u64, pops: u64) {
            for _ in 0..pops {
                while self.reference.len() < pending {
                    self.schedule(rng.uniform_u64(0, spread));
                }
                self.pop();
            }
        }

        fn pop(&mut self) {
            let std::cmp::Reverse((t, s)) = self.reference.pop().expect("pending");
            assert_eq!(
                self.q.pop_until(SimTime(u64::MAX), true),
                Some((t, self.event(s)))
            );
            self.now = t;
        }
    }

    /// The calendar through its cases: events in the sorted slot, in the
    /// slots ahead, past the horizon, on ties, and slots narrowed and
    /// widened as the events thicken and thin out.
    #[test]
    fn a_calendar_matches_a_sorted_order() {
        let horizon = SimTime(50_000_000);
        let mut rng = crate::rng::Rng::stream(7, "calendar", 0);
        let mut twin = Twin::new(EventQueue::new(horizon));
        twin.q.net = Pending::Calendar(Box::new(Calendar::new(horizon, SimTime::ZERO)));
        let mut shifts = Vec::new();
        // Dense (many events per slot), then sparse, then dense again.
        for (rounds, spread) in [(40_000, 100_000u64), (40_000, 1 << 34), (40_000, 20_000)] {
            for _ in 0..rounds {
                // Enough pending to stay a calendar.
                while twin.reference.len() < 64 {
                    twin.schedule(rng.uniform_u64(0, spread));
                }
                for _ in 0..rng.uniform_u64(0, 2) {
                    let after = match rng.uniform_u64(0, 9) {
                        0 => 0,
                        1 => rng.uniform_u64(0, 1000),
                        2 => horizon.0 * rng.uniform_u64(1, 20),
                        _ => rng.uniform_u64(0, spread),
                    };
                    twin.schedule(after);
                }
                if !twin.reference.is_empty() {
                    twin.pop();
                }
            }
            let Pending::Calendar(c) = &twin.q.net else {
                panic!("a calendar")
            };
            shifts.push(c.shift);
        }
        while !twin.reference.is_empty() {
            twin.pop();
        }
        assert!(twin.q.is_empty());
        assert!(shifts[1] > shifts[0] && shifts[2] < shifts[1], "{shifts:?}");
    }

    /// Many events pending: a calendar; few again: a heap; the order
    /// throughout is the sorted one.
    #[test]
    fn the_network_events_move_between_heap_and_calendar() {
        let mut rng = crate::rng::Rng::stream(8, "calendar", 0);
        let mut twin = Twin::new(EventQueue::new(SimTime(10_000_000)));
        let mut modes = Vec::new();
        for pending in [8usize, 200, 8] {
            twin.hold(&mut rng, pending, 20_000_000, 3 * REBALANCE_EVERY);
            modes.push(matches!(twin.q.net, Pending::Calendar(_)));
        }
        assert_eq!(modes, [false, true, false]);
    }

    /// The timers likewise, at their own threshold.
    #[test]
    fn the_timers_move_between_heap_and_calendar() {
        let mut rng = crate::rng::Rng::stream(9, "calendar", 0);
        let mut twin = Twin::new(EventQueue::new(SimTime(10_000_000)));
        twin.timers = true;
        let mut modes = Vec::new();
        for pending in [100usize, TIMER_SWITCH.from + 100, 100] {
            twin.hold(&mut rng, pending, 3_000_000_000, 2 * REBALANCE_EVERY);
            modes.push(matches!(twin.q.timers, Pending::Calendar(_)));
        }
        assert_eq!(modes, [false, true, false]);
        assert!(matches!(twin.q.net, Pending::Heap(_)));
    }
}
