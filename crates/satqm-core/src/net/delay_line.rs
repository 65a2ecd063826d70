//! A link's delay line: the packets being serialized or propagating, with
//! their arrival times at the far end, first to arrive first.
//!
//! The packet at the head is kept inline, in the link's own cache lines,
//! and only the packets behind it in a ring buffer of their own. An arrival
//! reads the head; with many flows most links carry one packet at a time,
//! so the arrival then finds everything it needs in the link itself instead
//! of loading the link and then, in a second dependent cache miss, the
//! ring buffer the link points to.

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::time::SimTime;

/// A packet on the line and the time it reaches the far end.
pub type OnLine = (SimTime, Packet);

#[derive(Debug, Default)]
#[repr(C)]
pub struct DelayLine {
    /// The packets behind the head, in order.
    rest: VecDeque<OnLine>,
    /// The next packet to arrive; `None` only when the line is empty.
    head: Option<OnLine>,
}

impl DelayLine {
    #[inline]
    pub fn push_back(&mut self, item: OnLine) {
        if self.head.is_none() {
            debug_assert!(self.rest.is_empty());
            self.head = Some(item);
        } else {
            self.rest.push_back(item);
        }
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<OnLine> {
        let head = self.head.take()?;
        // `pop_front` of an empty ring reads only its length, which is here.
        self.head = self.rest.pop_front();
        Some(head)
    }

    #[inline]
    pub fn front(&self) -> Option<&OnLine> {
        self.head.as_ref()
    }

    pub fn back(&self) -> Option<&OnLine> {
        self.rest.back().or(self.head.as_ref())
    }

    #[inline]
    pub fn len(&self) -> usize {
        usize::from(self.head.is_some()) + self.rest.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// The packets in arrival order.
    pub fn iter(&self) -> impl Iterator<Item = &OnLine> {
        self.head.iter().chain(self.rest.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::packet::PacketKind;

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
