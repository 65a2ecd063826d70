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
pub(super) struct Heap {
    pub(super) v: Vec<Entry>,
    /// `v[0]` was popped already (and `v` is not empty).
    hole: bool,
}

impl Heap {
    pub(super) fn len(&self) -> usize {
        self.v.len() - self.hole as usize
    }

    #[inline(always)]
    pub(super) fn push(&mut self, e: Entry) {
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

    /// The least of `kids` (not empty): its place and key. Without
    /// branches on the keys (which of a few events is due first is a coin
    /// toss to the branch predictor): a full set of children in a
    /// tournament of two rounds.
    #[inline(always)]
    fn least(kids: &[Entry]) -> (usize, u128) {
        use std::hint::select_unpredictable as pick;
        if let [a, b, c, d] = kids {
            let (ka, kb, kc, kd) = (a.key(), b.key(), c.key(), d.key());
            let ab = pick(kb < ka, (1, kb), (0, ka));
            let cd = pick(kd < kc, (3, kd), (2, kc));
            return pick(cd.1 < ab.1, cd, ab);
        }
        let mut best = (0, kids[0].key());
        for (j, k) in kids.iter().enumerate().skip(1) {
            let key = k.key();
            best = pick(key < best.1, (j, key), best);
        }
        best
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
    pub(super) fn pop(&mut self) -> Entry {
        let top = self.take();
        self.refill();
        top
    }

    /// The head, leaving a hole (the heap settled and not empty).
    #[inline]
    pub(super) fn take(&mut self) -> Entry {
        debug_assert!(!self.hole && !self.v.is_empty());
        self.hole = true;
        self.v[0]
    }

    /// The two least entries (a hint for the prefetch, which runs only
    /// where pops refill the head's place at once).
    #[inline(always)]
    pub(super) fn next_two(&self) -> (Option<&Entry>, Option<&Entry>) {
        debug_assert!(!self.hole);
        let v = &self.v[..];
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
                let mut keys: Vec<u128> = h.v.iter().map(Entry::key).collect();
                keys.sort();
                let two = |h: &Heap| {
                    let (a, b) = h.next_two();
                    (a.map(Entry::key), b.map(Entry::key))
                };
                assert_eq!(two(&h), (keys.first().copied(), keys.get(1).copied()));
            }
        }
    }
}
