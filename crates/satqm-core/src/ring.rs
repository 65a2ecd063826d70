//! A first-in, first-out ring of `Copy` items whose capacity is a power of
//! two (see [`Ring`]): the links' delay lines and the ports' buffers.

/// A growable FIFO ring buffer of `Copy` items.
///
/// What `std::collections::VecDeque` does for these queues, with less work
/// per packet: a `VecDeque` keeps any capacity, so every place it computes
/// wraps with a comparison and a conditional subtraction; here the capacity
/// is a power of two and a mask wraps. Items are plain copies in and out
/// (see [`take_front`](Ring::take_front)). The slots are always
/// initialised (with copies of the first item pushed), so there is no
/// `unsafe` here.
#[derive(Debug, Clone)]
pub struct Ring<T: Copy> {
    /// The slots: none, or a power of two of them.
    slots: Box<[T]>,
    /// Where the first item is (below `slots.len()`, or 0).
    head: usize,
    len: usize,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring::new()
    }
}

impl<T: Copy> Ring<T> {
    /// An empty ring (no slots until the first push).
    pub fn new() -> Self {
        Ring {
            slots: Box::new([]),
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// The slot of the `i`-th item from the front.
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        (self.head + i) & self.mask()
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        Some(&self.slots[self.head])
    }

    #[inline]
    pub fn back(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        Some(&self.slots[self.slot(self.len - 1)])
    }

    #[inline]
    pub fn push_back(&mut self, item: T) {
        if self.len == self.slots.len() {
            self.grow(item);
        }
        let i = self.slot(self.len);
        self.slots[i] = item;
        self.len += 1;
    }

    /// The first item, removed (the ring is not empty).
    ///
    /// A plain copy, not an `Option`, which is how packets leave the
    /// simulator's queues: moving a packet out of an `Option` copies it
    /// around the byte that tells `None` apart (the packet's kind), in
    /// 16-byte words of which the last overlaps the one before, and the
    /// next copy of the packet loads across two of those stores, which the
    /// processor cannot forward (a stall of a dozen cycles or more on
    /// every hop).
    #[inline]
    pub fn take_front(&mut self) -> T {
        assert!(self.len > 0, "take_front from an empty ring");
        let item = self.slots[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        item
    }

    /// The first item, removed, if any.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        (self.len > 0).then(|| self.take_front())
    }

    /// The items, first to last.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self.slots[self.slot(i)])
    }

    /// Twice the slots (at least 4), the items moved to the front of the
    /// new ones in order; `fill` initialises the rest.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let n = (self.slots.len() * 2).max(4);
        let mut slots = vec![fill; n].into_boxed_slice();
        for (to, from) in slots.iter_mut().zip(self.iter()) {
            *to = *from;
        }
        self.slots = slots;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Against `VecDeque`, through growth and wrap-around.
    #[test]
    fn matches_a_vecdeque() {
        let mut rng = crate::rng::Rng::stream(11, "ring", 0);
        let mut ring = Ring::new();
        let mut model = VecDeque::new();
        let mut next = 0u64;
        for round in 0..2000 {
            // Long stretches of growth, then of draining.
            let pushes = if (round / 200) % 2 == 0 { 3 } else { 1 };
            for _ in 0..rng.uniform_u64(0, pushes) {
                ring.push_back(next);
                model.push_back(next);
                next += 1;
            }
            if rng.chance(0.5) {
                assert_eq!(ring.pop_front(), model.pop_front());
            }
            assert_eq!(ring.len(), model.len());
            assert_eq!(ring.front(), model.front());
            assert_eq!(ring.back(), model.back());
            assert!(ring.iter().eq(model.iter()));
            assert!(ring.slots.is_empty() || ring.slots.len().is_power_of_two());
        }
        while let Some(x) = model.pop_front() {
            assert_eq!(ring.take_front(), x);
        }
        assert!(ring.is_empty());
        assert_eq!(ring.pop_front(), None);
    }
}
