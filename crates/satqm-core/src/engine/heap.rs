//! An implicit 4-ary min-heap of events on `(time, seq)`.

use super::Event;
use crate::time::SimTime;

/// A pending event: when it is due, and its place in the order of
/// scheduling (ties in time go by it).
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) time: SimTime,
    pub(super) seq: u64,
    pub(super) event: Event,
}

impl Entry {
    /// `(time, seq)` as one integer: comparing it is one wide comparison
    /// instead of a lexicographic pair of branches.
    #[inline(always)]
    pub(super) fn key(&self) -> u128 {
        ((self.time.0 as u128) << 64) | self.seq as u128
    }
}

/// Children per node of the heap: a 4-ary heap is half as deep as a binary
/// one and its sibling entries share cache lines, which matters because
/// popping events is the simulator's hottest loop.
const ARITY: usize = 4;

/// Entries past the last one, each due never (the greatest key): every
/// node with a child has all `ARITY` of them in `v`, so a sift compares
/// four children without looking at how many there are, and reads them
/// without a bounds check on each (the checks, and the code the compiler
/// built around them, cost 3.6 % of the instructions at N = 3).
const PAD: usize = ARITY - 1;

/// The padding entry: due after every event.
const NEVER: Entry = Entry {
    time: SimTime(u64::MAX),
    seq: u64::MAX,
    event: Event::Sample,
};

/// An implicit 4-ary min-heap of entries on `(time, seq)`.
///
/// Popping leaves a hole at the root instead of refilling it at once
/// (`hole`): nearly every event schedules another one (an arrival the next
/// on its link, a transmission its link's next), and that entry then
/// takes the root's place with one sift down. This spares the pop's
/// refill and the push's sift up; the order is the same, since the heap
/// gives the least key whatever its shape. Anything that reads the heap
/// first refills the hole ([`Heap::settle`]).
#[derive(Debug)]
pub(super) struct Heap {
    /// The entries ([`n`](Self::n) of them), then [`PAD`] entries due
    /// never.
    v: Vec<Entry>,
    /// `v[0]` was popped already (and the heap is not empty).
    hole: bool,
}

impl Default for Heap {
    fn default() -> Heap {
        Heap {
            v: vec![NEVER; PAD],
            hole: false,
        }
    }
}

impl Heap {
    pub(super) fn len(&self) -> usize {
        self.n() - self.hole as usize
    }

    /// Entries in `v`, the hole's place included.
    #[inline(always)]
    fn n(&self) -> usize {
        self.v.len() - PAD
    }

    /// The least entry (the heap settled).
    #[inline(always)]
    pub(super) fn first(&self) -> Option<&Entry> {
        debug_assert!(!self.hole);
        (self.n() > 0).then(|| &self.v[0])
    }

    /// The entries, in no particular order (the heap settled).
    pub(super) fn into_entries(mut self) -> Vec<Entry> {
        debug_assert!(!self.hole);
        self.v.truncate(self.n());
        self.v
    }

    #[inline(always)]
    pub(super) fn push(&mut self, e: Entry) {
        if self.hole {
            self.hole = false;
            self.sift_down(0, e);
            return;
        }
        // Sift up, moving parents down into the hole; the new last entry
        // takes a padding entry's place, and the padding grows by one.
        let i = self.n();
        self.v.push(NEVER);
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

    /// The four children of a node whose first child is at `first`
    /// (which is below `n`).
    #[inline(always)]
    fn kids(&self, first: usize) -> &[Entry; ARITY] {
        debug_assert!(first < self.n());
        // SAFETY: `first < n = v.len() - PAD`, so
        // `first + ARITY - 1 = first + PAD < v.len()`.
        unsafe { &*(self.v.as_ptr().add(first) as *const [Entry; ARITY]) }
    }

    /// Copy entry `from` to `to` (both below `n`: a sift moves only
    /// entries, never padding, since every entry's key is below
    /// [`NEVER`]'s and the least child of a node with children is one).
    #[inline(always)]
    fn copy_within(&mut self, from: usize, to: usize) {
        debug_assert!(from < self.n() && to < self.n());
        // SAFETY: both are below `n`, and `n < v.len()`.
        unsafe {
            let p = self.v.as_mut_ptr();
            *p.add(to) = *p.add(from);
        }
    }

    /// Put `e` in the hole at `i` or below it, moving smaller children up.
    #[inline(always)]
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let key = e.key();
        let n = self.n();
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let (best, best_key) = Self::least(self.kids(first));
            if key <= best_key {
                break;
            }
            self.copy_within(first + best, i);
            i = first + best;
        }
        self.v[i] = e;
    }

    /// The least of four children: its place and key. Without branches on
    /// the keys (which of a few events is due first is a coin toss to the
    /// branch predictor): a tournament of two rounds for the place, then
    /// the winner's key read again. Selecting the keys through the second
    /// round too kept more of them in registers than the processor has,
    /// and the compiler, needing the place only after the sift's test,
    /// compared the keys a second time to find it (4 % more instructions
    /// at N = 3). Padding never wins against an entry.
    #[inline(always)]
    fn least(kids: &[Entry; ARITY]) -> (usize, u128) {
        use std::hint::select_unpredictable as pick;
        let [a, b, c, d] = kids;
        let (ka, kb, kc, kd) = (a.key(), b.key(), c.key(), d.key());
        let (b_won, d_won) = (kb < ka, kd < kc);
        let right = pick(d_won, kd, kc) < pick(b_won, kb, ka);
        let best = pick(right, 2 + d_won as usize, b_won as usize);
        (best, kids[best].key())
    }

    /// Refill a hole left by [`take`](Self::take) with the last entry.
    #[inline]
    pub(super) fn settle(&mut self) {
        if self.hole {
            self.refill();
        }
    }

    /// [`settle`](Self::settle) a heap with a hole.
    #[inline(always)]
    fn refill(&mut self) {
        self.hole = false;
        debug_assert!(self.n() > 0, "a hole is in a non-empty heap");
        let n = self.n() - 1;
        let last = std::mem::replace(&mut self.v[n], NEVER);
        self.v.pop();
        if n == 0 {
            return;
        }
        // Bottom-up (Floyd): move the smallest child into the hole down to
        // a leaf, then sift the last entry up from there. The last entry is
        // a leaf's, so it rarely climbs far; this saves comparing it with
        // every level's smallest child.
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let (best, _) = Self::least(self.kids(first));
            self.copy_within(first + best, i);
            i = first + best;
        }
        self.sift_up(i, last);
    }

    /// The head, removed (the heap settled and not empty).
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Entry {
        let top = self.take();
        self.refill();
        top
    }

    /// The head, leaving a hole (the heap settled and not empty).
    #[inline]
    pub(super) fn take(&mut self) -> Entry {
        debug_assert!(!self.hole && self.n() > 0);
        self.hole = true;
        self.v[0]
    }

    /// The two least entries (a hint for the prefetch, which runs only
    /// where pops refill the head's place at once).
    #[inline(always)]
    pub(super) fn next_two(&self) -> (Option<&Entry>, Option<&Entry>) {
        debug_assert!(!self.hole);
        let v = &self.v[..self.n()];
        let second = v
            .get(1..v.len().min(ARITY + 1))
            .and_then(|kids| kids.iter().min_by_key(|e| e.key()));
        (v.first(), second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prefetch's look ahead: the two least entries.
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
                let mut keys: Vec<u128> = h.v[..h.n()].iter().map(Entry::key).collect();
                keys.sort();
                let two = |h: &Heap| {
                    let (a, b) = h.next_two();
                    (a.map(Entry::key), b.map(Entry::key))
                };
                assert_eq!(two(&h), (keys.first().copied(), keys.get(1).copied()));
            }
        }
    }

    /// Entries due at the last representable time sort before the
    /// padding, and the padding stays behind the entries.
    #[test]
    fn entries_due_at_the_end_of_time_stay_entries() {
        let mut h = Heap::default();
        let mut rng = crate::rng::Rng::stream(6, "heap", 0);
        let mut expected = Vec::new();
        for s in 0..300u64 {
            let time = match s % 3 {
                0 => SimTime(u64::MAX),
                _ => SimTime(rng.uniform_u64(0, 100)),
            };
            h.push(Entry {
                time,
                seq: s,
                event: Event::Sample,
            });
            expected.push((time, s));
            if s % 5 == 4 {
                // Leave a hole for the next push to fill.
                expected.sort();
                let e = h.take();
                assert_eq!((e.time, e.seq), expected.remove(0));
            }
        }
        h.settle();
        expected.sort();
        for (time, seq) in expected {
            let e = h.pop();
            assert_eq!((e.time, e.seq), (time, seq));
            assert_eq!(h.v.len(), h.n() + PAD);
            assert!(h.v[h.n()..].iter().all(|e| e.key() == NEVER.key()));
        }
        assert!(h.first().is_none());
    }
}
