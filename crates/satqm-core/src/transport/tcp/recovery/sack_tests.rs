//! The scoreboard's incremental quantities against a straightforward
//! recomputation over the whole scoreboard.

use super::*;
use crate::time::SimTime;
use crate::transport::tcp::cc::{Cc, Window};
use crate::transport::tcp::clock::TimerClock;
use crate::transport::tcp::config::{CcKind, CcRules};
use proptest::prelude::*;

/// Five segments of 1000 bytes in flight, DupThresh 3.
fn five() -> (Sack, Segments) {
    let mut segs = Segments::default();
    for k in 0..5 {
        segs.push(k * 1000, 1000, SimTime::ZERO);
    }
    (Sack::new(Episode::new(3), 1000, false), segs)
}

#[test]
fn is_lost_needs_more_than_dupthresh_minus_one_segments_above() {
    // Two segments SACKed above: (DupThresh - 1) * SMSS, not more.
    let (mut s, mut segs) = five();
    s.on_sack_blocks(&mut segs, &[(3000, 5000)], 0, SimTime::ZERO);
    assert_eq!(s.next_lost(&segs), None);
    assert_eq!(s.pipe(&segs, 0, 5000), 3000);
    // Three above: the two holes below are lost and leave the pipe.
    let (mut s, mut segs) = five();
    s.on_sack_blocks(&mut segs, &[(2000, 5000)], 0, SimTime::ZERO);
    assert_eq!(s.next_lost(&segs), Some(0));
    assert_eq!(s.pipe(&segs, 0, 5000), 0);
    // Resent, the first counts in the pipe again and NextSeg moves on.
    segs.resend(0, SimTime::ZERO);
    assert_eq!(s.next_lost(&segs), Some(1));
    assert_eq!(s.pipe(&segs, 0, 5000), 1000);
}

#[test]
fn a_head_resent_in_the_last_episode_is_resent_again_only_without_rack() {
    fn conn<'a>(
        w: &'a mut Window,
        cc: &'a mut Cc,
        segs: &'a mut Segments,
        una: u64,
        max: u64,
    ) -> Conn<'a> {
        Conn {
            win: w,
            cc,
            segs,
            snd_una: una,
            snd_max: max,
            mss: 1000,
            reducing: false,
            // Each ACK below SACKs data not SACKed before.
            newly_sacked: true,
            clock: TimerClock::EXACT,
            reo_min: SimTime::ZERO,
        }
    }
    for rack in [false, true] {
        let mut segs = Segments::default();
        let mut w = Window {
            cwnd: 10_000.0,
            ssthresh: f64::INFINITY,
        };
        let mut cc = Cc::new(CcKind::RENO, CcRules::Rfc);
        let mut s = Sack::new(Episode::new(3), 1000, rack);
        for k in 0..5 {
            segs.push(k * 1000, 1000, SimTime::ZERO);
        }
        // Segment 0 lost: the first episode, recover = 5000.
        s.on_sack_blocks(&mut segs, &[(1000, 5000)], 0, SimTime::ZERO);
        let d = s.on_dupack(&mut conn(&mut w, &mut cc, &mut segs, 0, 5000));
        assert_eq!(d, DupAck::FastRetransmit);
        segs.resend(0, SimTime::ZERO);
        // Segment 5, sent in the episode, is found lost and resent too.
        for k in 5..8 {
            segs.push(k * 1000, 1000, SimTime::ZERO);
        }
        s.on_sack_blocks(&mut segs, &[(6000, 8000), (1000, 5000)], 0, SimTime::ZERO);
        s.mark_lost(&mut segs, 5);
        segs.resend(5, SimTime::ZERO);
        // The resend of segment 0 ends the episode; segment 5 is the head,
        // lost and resent, still in flight.
        segs.retire(5000, rack);
        let a = s.on_new_ack(&mut conn(&mut w, &mut cc, &mut segs, 5000, 8000), 5000);
        assert!(matches!(a, NewAck::Recovering { .. }));
        assert!(!s.episode().in_recovery);
        // A duplicate ACK starts the next episode at once (the head is
        // lost); only without RACK is the head resent again.
        let before = w.ssthresh;
        let d = s.on_dupack(&mut conn(&mut w, &mut cc, &mut segs, 5000, 8000));
        assert!(s.episode().in_recovery);
        assert!(w.ssthresh < before);
        let expected = if rack {
            DupAck::Recovery
        } else {
            DupAck::FastRetransmit
        };
        assert_eq!(d, expected);
    }
}

/// One segment of the oracle's scoreboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OSeg {
    start: u64,
    len: u64,
    sacked: bool,
    lost: bool,
    rtx: bool,
}

/// RFC 6675's scoreboard computed the straightforward way: IsLost by a
/// walk over the whole scoreboard from the top after every change of the
/// SACKed set, `pipe` and NextSeg rule 1 by a scan of every segment.
struct Oracle {
    segs: Vec<OSeg>,
    lost_limit: u64,
}

impl Oracle {
    fn mark(s: &mut OSeg) {
        s.lost = true;
        s.rtx = false;
    }

    fn mark_lost(&mut self) {
        let mut above = 0;
        for s in self.segs.iter_mut().rev() {
            if s.sacked {
                above += s.len;
            } else if above > self.lost_limit && !s.lost {
                Oracle::mark(s);
            }
        }
    }

    fn sack_blocks(&mut self, blocks: &[(u64, u64)], snd_una: u64) {
        let mut changed = false;
        for &(s, e) in blocks {
            if e <= snd_una {
                continue;
            }
            for seg in self.segs.iter_mut().filter(|x| x.start >= s) {
                if seg.start + seg.len > e {
                    break;
                }
                changed |= !seg.sacked;
                seg.sacked = true;
            }
        }
        if changed {
            self.mark_lost();
        }
    }

    fn retire(&mut self, ack: u64) {
        self.segs.retain(|s| s.start + s.len > ack);
        if let Some(s) = self.segs.first_mut() {
            if s.start < ack {
                s.len -= ack - s.start;
                s.start = ack;
            }
        }
    }

    fn pipe(&self) -> u64 {
        let inside = |s: &&OSeg| !s.sacked && (!s.lost || s.rtx);
        self.segs.iter().filter(inside).map(|s| s.len).sum()
    }

    fn next_lost(&self) -> Option<usize> {
        self.segs.iter().position(|s| s.lost && !s.rtx && !s.sacked)
    }
}

/// One step of the sender's life.
#[derive(Clone, Debug)]
enum Op {
    /// New segments of these lengths.
    Send(Vec<u32>),
    /// An ACK: the cumulative ACK moves up by `advance` bytes (0: a
    /// duplicate ACK), with SACK blocks `(offset from snd_una, length)`.
    Ack {
        advance: u64,
        blocks: Vec<(u64, u64)>,
    },
    Timeout,
    /// The send loop resends what NextSeg rule 1 names.
    ResendNext,
    /// Any segment is resent (by its index modulo the queue's length).
    ResendAny(usize),
}

fn op(mss: u32) -> impl Strategy<Value = Op> {
    let m = mss as u64;
    let len = prop_oneof![4 => Just(mss), 1 => 1..=mss];
    prop_oneof![
        3 => prop::collection::vec(len, 1..8).prop_map(Op::Send),
        6 => (
            prop_oneof![3 => Just(0u64), 1 => 1..3 * m, 1 => (1u64..4).prop_map(move |k| k * m)],
            prop::collection::vec(
                prop_oneof![
                    (0u64..30, 1u64..8).prop_map(move |(a, b)| (a * m, b * m)),
                    (0..30 * m, 1..8 * m),
                ],
                0..4,
            ),
        )
            .prop_map(|(advance, blocks)| Op::Ack { advance, blocks }),
        1 => Just(Op::Timeout),
        4 => Just(Op::ResendNext),
        1 => any::<usize>().prop_map(Op::ResendAny),
    ]
}

/// A SACK sender's scoreboard and the oracle, driven in step.
struct Rig {
    sack: Sack,
    segs: Segments,
    win: Window,
    cc: Cc,
    snd_una: u64,
    snd_max: u64,
    mss: u32,
    /// The last ACK SACKed data not SACKed before.
    newly_sacked: bool,
    oracle: Oracle,
}

impl Rig {
    fn new(dupthresh: u32, mss: u32) -> Rig {
        let sack = Sack::new(Episode::new(dupthresh), mss, false);
        let lost_limit = sack.lost_limit;
        Rig {
            sack,
            segs: Segments::default(),
            win: Window {
                cwnd: 10.0 * mss as f64,
                ssthresh: f64::INFINITY,
            },
            cc: Cc::new(CcKind::RENO, CcRules::Rfc),
            snd_una: 0,
            snd_max: 0,
            mss,
            newly_sacked: false,
            oracle: Oracle {
                segs: Vec::new(),
                lost_limit,
            },
        }
    }

    fn conn(&mut self) -> (&mut Sack, Conn<'_>) {
        let c = Conn {
            win: &mut self.win,
            cc: &mut self.cc,
            segs: &mut self.segs,
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            mss: self.mss,
            reducing: false,
            newly_sacked: self.newly_sacked,
            clock: TimerClock::EXACT,
            reo_min: SimTime::ZERO,
        };
        (&mut self.sack, c)
    }

    fn resend(&mut self, i: usize) {
        self.segs.resend(i, SimTime::ZERO);
        self.oracle.segs[i].rtx = true;
    }

    /// Apply `op` as the sender would.
    fn apply(&mut self, op: &Op) {
        match op {
            Op::Send(lens) => {
                for &len in lens {
                    self.segs.push(self.snd_max, len, SimTime::ZERO);
                    self.oracle.segs.push(OSeg {
                        start: self.snd_max,
                        len: len as u64,
                        sacked: false,
                        lost: false,
                        rtx: false,
                    });
                    self.snd_max += len as u64;
                }
            }
            Op::Ack { advance, blocks } => self.ack(*advance, blocks),
            Op::Timeout => {
                if self.snd_max > self.snd_una {
                    let (sack, mut c) = self.conn();
                    sack.on_timeout(&mut c, SimTime::ZERO);
                    self.oracle
                        .segs
                        .iter_mut()
                        .filter(|s| !s.sacked)
                        .for_each(Oracle::mark);
                }
            }
            Op::ResendNext => {
                let i = self.sack.next_lost(&self.segs);
                assert_eq!(i, self.oracle.next_lost());
                if let Some(i) = i {
                    self.resend(i);
                }
            }
            Op::ResendAny(k) => {
                if !self.segs.is_empty() {
                    self.resend(k % self.segs.len());
                }
            }
        }
    }

    fn ack(&mut self, advance: u64, blocks: &[(u64, u64)]) {
        // Blocks may start up to one segment below snd_una.
        let base = self.snd_una.saturating_sub(self.mss as u64);
        let blocks: Vec<(u64, u64)> = blocks
            .iter()
            .map(|&(o, l)| (base + o, base + o + l))
            .collect();
        let sacked_before = self.segs.sacked_bytes();
        self.sack
            .on_sack_blocks(&mut self.segs, &blocks, self.snd_una, SimTime::ZERO);
        self.newly_sacked = self.segs.sacked_bytes() > sacked_before;
        self.oracle.sack_blocks(&blocks, self.snd_una);
        let ack = (self.snd_una + advance).min(self.snd_max);
        let advanced = ack > self.snd_una;
        if advanced {
            self.segs.retire(ack, false);
            self.oracle.retire(ack);
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            let (sack, mut c) = self.conn();
            sack.on_new_ack(&mut c, acked);
        }
        // As the sender: an ACK is a duplicate one if it SACKs new data,
        // whether or not it moved the cumulative ACK (RFC 6675).
        if (!advanced || self.newly_sacked) && self.snd_max > self.snd_una {
            let (sack, mut c) = self.conn();
            if sack.on_dupack(&mut c) == DupAck::FastRetransmit {
                let front = &mut self.oracle.segs[0];
                if !front.lost {
                    Oracle::mark(front);
                }
                // The sender resends the first unacknowledged segment.
                self.resend(0);
            }
        }
    }

    /// Every bit, the pipe and (when `look`) NextSeg agree with the oracle.
    fn check(&mut self, look: bool) {
        let real: Vec<OSeg> = self
            .segs
            .iter()
            .map(|s| OSeg {
                start: s.start,
                len: s.len as u64,
                sacked: s.sacked(),
                lost: s.lost(),
                rtx: s.rtx(),
            })
            .collect();
        assert_eq!(real, self.oracle.segs);
        assert_eq!(
            self.oracle.segs.iter().map(|s| s.len).sum::<u64>(),
            self.snd_max - self.snd_una
        );
        assert_eq!(
            self.sack.pipe(&self.segs, self.snd_una, self.snd_max),
            self.oracle.pipe()
        );
        if look {
            assert_eq!(self.sack.next_lost(&self.segs), self.oracle.next_lost());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    /// The incremental IsLost marks, `pipe` and NextSeg equal a
    /// recomputation over the whole scoreboard after every ACK, SACK,
    /// timeout and resend of random sequences.
    #[test]
    fn incremental_scoreboard_matches_recomputation(
        (dupthresh, mss, ops) in (1u32..5, prop_oneof![Just(1000u32), 1u32..50])
            .prop_flat_map(|(d, mss)| {
                (Just(d), Just(mss), prop::collection::vec((op(mss), any::<bool>()), 1..300))
            }),
    ) {
        let mut rig = Rig::new(dupthresh, mss);
        for (op, look) in &ops {
            rig.apply(op);
            rig.check(*look);
        }
    }
}
