//! A link's delay line: the packets being serialized or propagating, with
//! their arrival times at the far end, first to arrive first.
//!
//! A packet that finds the line empty is kept inline, in the link's own
//! cache lines; packets behind it, and every packet until the line has run
//! empty again, go to a ring buffer of their own. With many flows most
//! links carry one packet at a time, so an arrival finds everything it
//! needs in the link itself instead of loading the link and then, in a
//! second dependent cache miss, the ring buffer the link points to. A busy
//! line is served from the ring alone, and no packet is moved from one to
//! the other.

use crate::packet::Packet;
use crate::ring::Ring;
use crate::time::SimTime;

/// A packet on the line and the time it reaches the far end.
pub type OnLine = (SimTime, Packet);

#[derive(Debug, Default)]
#[repr(C)]
pub struct DelayLine {
    /// The packets after `inline` (all of them if it is empty), in order.
    ring: Ring<OnLine>,
    /// The first packet, if it came to an empty line.
    inline: Option<OnLine>,
}

impl DelayLine {
    #[inline]
    pub fn push_back(&mut self, item: OnLine) {
        if self.is_empty() {
            self.inline = Some(item);
        } else {
            self.ring.push_back(item);
        }
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<OnLine> {
        match self.inline.take() {
            Some(first) => Some(first),
            None => self.ring.pop_front(),
        }
    }

    /// The first packet, removed (the line is not empty): a plain copy,
    /// not the `Option` of [`pop_front`](Self::pop_front) (see
    /// [`Ring::take_front`]).
    #[inline]
    pub fn take_front(&mut self) -> Packet {
        if let Some((_, p)) = &self.inline {
            let p = *p;
            self.inline = None;
            return p;
        }
        self.ring.take_front().1
    }

    #[inline]
    pub fn front(&self) -> Option<&OnLine> {
        self.inline.as_ref().or_else(|| self.ring.front())
    }

    /// The first packet if it is kept in the link itself (reading it costs
    /// no cache miss beyond the link's own).
    #[inline]
    pub fn inline_front(&self) -> Option<&OnLine> {
        self.inline.as_ref()
    }

    /// Where the first packet is if it is in the ring: an address to
    /// prefetch (reading it may miss the cache).
    #[inline]
    pub fn ring_front(&self) -> Option<&OnLine> {
        match self.inline {
            Some(_) => None,
            None => self.ring.front(),
        }
    }

    pub fn back(&self) -> Option<&OnLine> {
        self.ring.back().or(self.inline.as_ref())
    }

    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.inline.is_some()) + self.ring.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.inline.is_none() && self.ring.is_empty()
    }

    /// Put `item` after every packet that arrives at or before it (a
    /// packet that overtakes others: a copy of the line, as it is rare),
    /// and return its place from the front.
    pub fn insert_by_time(&mut self, item: OnLine) -> usize {
        let mut all: Vec<OnLine> = std::iter::from_fn(|| self.pop_front()).collect();
        let i = all.partition_point(|&(t, _)| t <= item.0);
        all.insert(i, item);
        all.into_iter().for_each(|x| self.push_back(x));
        i
    }

    /// Put `item` first (it arrives before every packet on the line).
    pub fn push_front(&mut self, item: OnLine) {
        let rest: Vec<OnLine> = std::iter::from_fn(|| self.pop_front()).collect();
        self.push_back(item);
        rest.into_iter().for_each(|x| self.push_back(x));
    }

    /// Every packet arrives `by` later.
    pub fn shift_times(&mut self, by: crate::time::SimTime) {
        let all: Vec<OnLine> = std::iter::from_fn(|| self.pop_front()).collect();
        all.into_iter()
            .for_each(|(t, p)| self.push_back((t + by, p)));
    }

    /// The packets in arrival order.
    pub fn iter(&self) -> impl Iterator<Item = &OnLine> {
        self.inline.iter().chain(self.ring.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::packet::PacketKind;
    use std::collections::VecDeque;

    fn item(t: u64) -> OnLine {
        let p = Packet::new(t, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
        (SimTime(t), p)
    }

    /// First in, first out, whatever the mix of pushes and pops, as a
    /// `VecDeque` does.
    #[test]
    fn the_line_is_first_in_first_out() {
        let mut line = DelayLine::default();
        let mut model = VecDeque::new();
        let mut t = 0;
        for step in 0..2_000u64 {
            // Pushes outnumber pops in the first half, pops in the second.
            let push = (step * 7919) % 10 < if step < 1_000 { 6 } else { 4 };
            if push {
                t += 1;
                line.push_back(item(t));
                model.push_back(t);
            } else {
                let got = line.pop_front().map(|(at, p)| (at.0, p.uid));
                assert_eq!(got, model.pop_front().map(|x| (x, x)));
            }
            assert_eq!(line.len(), model.len());
            assert_eq!(line.is_empty(), model.is_empty());
            assert_eq!(line.front().map(|x| x.0 .0), model.front().copied());
            assert_eq!(line.back().map(|x| x.0 .0), model.back().copied());
            let all: Vec<u64> = line.iter().map(|x| x.0 .0).collect();
            assert_eq!(all, model.iter().copied().collect::<Vec<_>>());
        }
    }
}
