//! A calendar queue of the network's events (see [`Calendar`]).

use super::heap::{Entry, Heap};
use crate::time::SimTime;

/// The network's events, by when they are due: those due before `edge` in
/// order, and beyond it time slots of `1 << shift` nanoseconds, each an
/// unsorted list, then a heap for what lies past the slots' horizon.
///
/// Most network events are due within the next few hundred milliseconds
/// (the end of a serialization, an arrival after a link's delay). An event
/// joins its slot's list at once, and only when time reaches the slot are
/// its few events sorted: a calendar queue (R. Brown, "Calendar queues: a
/// fast O(1) priority queue implementation for the simulation event set
/// problem", CACM 31(10), 1988) whose slots keep the `(time, seq)` order
/// exact. The order of events is the one a single heap gives: every event
/// due before `edge` is in `near`, every other one is due at or after it.
#[derive(Debug)]
pub(super) struct Calendar {
    /// The events due before `edge` from `next` on, in order (those
    /// before `next` were popped).
    near: Vec<Entry>,
    next: usize,
    /// `near` holds every event due before this time.
    edge: SimTime,
    pub(super) shift: u32,
    /// The slot of window `w` (times `[w << shift, (w + 1) << shift)`) is
    /// `slots[w % SLOTS]`, for the `SLOTS` windows from `edge`'s on.
    slots: Vec<Vec<Entry>>,
    /// Which slots hold events, a bit each.
    occupied: Vec<u64>,
    /// Events due past the slots' horizon when they were scheduled.
    far: Heap,
    /// Events in the slots.
    in_slots: usize,
    /// The narrowest slots whose horizon covers the longest delay of a
    /// link (see [`Calendar::retune`]).
    min_shift: u32,
    /// Events popped, and slots moved into `near`, since the last
    /// [`Calendar::retune`].
    pops: u64,
    moves: u64,
}

/// Sort a slot's few events by key (a slot holds a handful:
/// [`Calendar::retune`]).
#[inline]
fn insertion_sort(v: &mut [Entry]) {
    for i in 1..v.len() {
        let e = v[i];
        let key = e.key();
        let mut j = i;
        while j > 0 && v[j - 1].key() > key {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = e;
    }
}

/// Slots of a calendar (a power of two).
const SLOTS: usize = 4096;

/// Slots moved into `near` between two looks at the slots' width (or four
/// times as many events popped, whichever comes first).
const RETUNE_EVERY: u64 = 4096;

impl Calendar {
    /// A calendar whose slots reach at least `horizon` ahead, for events
    /// due at `edge` or later.
    pub(super) fn new(horizon: SimTime, edge: SimTime) -> Calendar {
        // Slots of at least 1 µs, spanning at least twice the horizon.
        let min_shift = (horizon.0 / SLOTS as u64).max(1 << 10).ilog2() + 1;
        Calendar {
            near: Vec::new(),
            next: 0,
            edge,
            shift: min_shift.max(17),
            slots: (0..SLOTS).map(|_| Vec::new()).collect(),
            occupied: vec![0; SLOTS / 64],
            far: Heap::default(),
            in_slots: 0,
            min_shift,
            pops: 0,
            moves: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.near.len() - self.next + self.in_slots + self.far.len()
    }

    #[inline(always)]
    pub(super) fn push(&mut self, e: Entry) {
        if e.time < self.edge {
            let key = e.key();
            let at = self.next + self.near[self.next..].partition_point(|x| x.key() < key);
            self.near.insert(at, e);
            return;
        }
        let w = e.time.0 >> self.shift;
        if w - (self.edge.0 >> self.shift) < SLOTS as u64 {
            let i = w as usize % SLOTS;
            self.slots[i].push(e);
            self.mark(i, true);
            self.in_slots += 1;
        } else {
            self.far.push(e);
        }
    }

    /// The next event (moving the next slot in if `near` is empty).
    #[inline]
    pub(super) fn head(&mut self) -> Option<&Entry> {
        if self.next == self.near.len() && !self.advance() {
            return None;
        }
        self.near.get(self.next)
    }

    /// Remove the next event (after [`head`](Self::head)).
    #[inline]
    pub(super) fn pop(&mut self) -> Entry {
        self.pops += 1;
        self.next += 1;
        self.near[self.next - 1]
    }

    /// The next three events, as far as `near` holds them (a hint).
    #[inline]
    pub(super) fn ahead(&self) -> [Option<&Entry>; 3] {
        [0, 1, 2].map(|k| self.near.get(self.next + k))
    }

    /// Every event, in no particular order.
    pub(super) fn drain(self) -> impl Iterator<Item = Entry> {
        let Calendar {
            near,
            next,
            slots,
            far,
            ..
        } = self;
        let near = near.into_iter().skip(next);
        near.chain(slots.into_iter().flatten())
            .chain(far.into_entries())
    }

    /// `near` is empty: move in the events of the next slot that holds
    /// any, and those of `far` due before that slot ends. False if there
    /// are none.
    #[inline(never)]
    fn advance(&mut self) -> bool {
        self.near.clear();
        self.next = 0;
        self.moves += 1;
        if self.moves == RETUNE_EVERY || self.pops >= 4 * RETUNE_EVERY {
            self.retune();
        }
        let here = self.edge.0 >> self.shift;
        let mut w = u64::MAX;
        if self.in_slots > 0 {
            w = here + self.next_occupied(here as usize % SLOTS);
        }
        if let Some(e) = self.far.first() {
            w = w.min(e.time.0 >> self.shift);
        }
        if w == u64::MAX {
            return false;
        }
        let end = SimTime((w + 1) << self.shift);
        // Every slotted event's window is in `here .. here + SLOTS`, so
        // slot `i` holds window `w`'s events, if any.
        let i = w as usize % SLOTS;
        if self.marked(i) {
            self.mark(i, false);
            let slot = &mut self.slots[i];
            self.in_slots -= slot.len();
            self.near.append(slot);
        }
        while self.far.first().is_some_and(|e| e.time < end) {
            self.near.push(self.far.pop());
        }
        insertion_sort(&mut self.near);
        debug_assert!(self.near.iter().all(|e| e.time < end));
        self.edge = end;
        true
    }

    /// Keep a few events per slot: with fewer, time moves through slots
    /// about as often as events are popped; with more, sorting them costs
    /// more. Slots twice or half as wide, their events placed again, if
    /// the slots moved since the last look averaged under 2 or over 4
    /// events.
    #[cold]
    fn retune(&mut self) {
        let per = self.pops / self.moves;
        self.pops = 0;
        self.moves = 0;
        self.shift = if per < 2 && self.shift < 40 {
            self.shift + 1
        } else if per > 4 && self.shift > self.min_shift {
            self.shift - 1
        } else {
            return;
        };
        let mut all = Vec::with_capacity(self.in_slots);
        for slot in &mut self.slots {
            all.append(slot);
        }
        self.occupied.fill(0);
        self.in_slots = 0;
        for e in all {
            self.push(e);
        }
    }

    /// Whether slot `i` holds events.
    #[inline]
    fn marked(&self, i: usize) -> bool {
        self.occupied[i / 64] & (1 << (i % 64)) != 0
    }

    /// Mark slot `i` as holding events, or not.
    #[inline]
    fn mark(&mut self, i: usize, on: bool) {
        let (word, bit) = (&mut self.occupied[i / 64], 1u64 << (i % 64));
        if on {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// How many slots after slot `i` (0 for itself) the next occupied one
    /// is (some is).
    #[inline]
    fn next_occupied(&self, i: usize) -> u64 {
        let words = self.occupied.len();
        let first = i / 64;
        // Slot `i` and the rest of its word, the other words in turn, and
        // last the bits of `i`'s word before it.
        let mut bits = self.occupied[first] & (!0u64 << (i % 64));
        for k in 0..=words {
            let word = (first + k) % words;
            if k > 0 {
                bits = self.occupied[word];
                if k == words {
                    bits &= !(!0u64 << (i % 64));
                }
            }
            if bits != 0 {
                let at = word * 64 + bits.trailing_zeros() as usize;
                return ((at + SLOTS - i) % SLOTS) as u64;
            }
        }
        unreachable!("events in the slots, but no slot is marked");
    }
}
