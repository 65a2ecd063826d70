//! ECN feedback other than RFC 3168's, hand-fed: DCTCP's receiver state
//! machine, AccECN's ACE counter, and the senders' reading and response.

use crate::ids::{FlowId, NodeId};
use crate::packet::{flags, Packet, PacketKind};
use crate::time::SimTime;
use crate::transport::Emit;

use super::cc::DctcpParams;
use super::{CcKind, EcnCodepoint, EcnFeedback, Recovery, TcpConfig, TcpReceiver, TcpSender};

const MSS: u64 = 1000;

fn cfg(feedback: EcnFeedback, cc: CcKind) -> TcpConfig {
    TcpConfig {
        recovery: Recovery::Sack,
        cc,
        mss: MSS as u32,
        handshake: false,
        ecn: true,
        ecn_feedback: feedback,
        ..TcpConfig::default()
    }
}

fn segment(i: u64, ce: bool) -> Packet {
    let mut p = Packet::new(i, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
    p.seq = i * MSS;
    p.len = MSS as u32;
    p.size = MSS as u32 + 40;
    p.flags = flags::ECT | if ce { flags::CE } else { 0 };
    p
}

/// Feed data segments (index, CE) to a receiver with delayed ACKs; the
/// ACKs it sends as (segments acknowledged, flags).
fn receive(feedback: EcnFeedback, segs: &[(u64, bool)]) -> Vec<(u64, u8)> {
    let c = cfg(feedback, CcKind::RENO);
    assert!(c.delayed_ack);
    let mut r = TcpReceiver::new(FlowId(0), NodeId(1), NodeId(0), &c);
    let mut out = Vec::new();
    let mut uid = 0;
    for &(i, ce) in segs {
        let mut em = Emit {
            now: SimTime::from_ms(i),
            out: &mut out,
            next_uid: &mut uid,
        };
        r.on_segment(&segment(i, ce), &mut em);
    }
    out.iter()
        .map(|p| (p.ack / MSS, p.flags & (flags::ECE | flags::CWR | flags::AE)))
        .collect()
}

const E: u8 = flags::ECE;

/// RFC 8257 section 3.2: each ACK's ECE is the CE state of the segments it
/// covers. A change of state sends the held-back ACK with the old state,
/// then acknowledges the new segment at once.
#[test]
fn dctcp_receiver_echoes_each_segments_state() {
    let marks = [false, false, true, true, true, false, false, true];
    let segs: Vec<_> = marks
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as u64, c))
        .collect();
    assert_eq!(
        receive(EcnFeedback::Dctcp, &segs),
        vec![
            (2, 0), // 0, 1: a delayed ACK of two
            (3, E), // 2: CE after none, at once
            (5, E), // 3, 4: delayed, both marked
            (6, 0), // 5: unmarked after marked, at once
            (7, 0), // 6 held; 7 is marked: 6's ACK goes first, unmarked,
            (8, E), // then 7's at once
        ]
    );
    // RFC 3168 for the same segments: ECE latched from the first CE (no
    // CWR comes), and ACKs every second segment apart from the first mark.
    let classic = receive(EcnFeedback::Classic, &segs);
    assert_eq!(classic, vec![(2, 0), (4, E), (6, E), (8, E)]);
}

/// RFC 9768: ACE = count of CE segments from 5, modulo 8; a CE segment
/// after an unmarked one is acknowledged at once.
#[test]
fn accecn_receiver_counts_ce_segments_in_ace() {
    let marks = [
        false, true, true, true, true, false, false, true, true, true, true, true,
    ];
    let segs: Vec<_> = marks
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as u64, c))
        .collect();
    let acks: Vec<(u64, u8)> = receive(EcnFeedback::AccEcn, &segs)
        .into_iter()
        .map(|(a, f)| (a, flags::ace(f)))
        .collect();
    assert_eq!(
        acks,
        vec![
            (2, 6),  // 0, then 1 marked (CE after none: at once): 5 + 1
            (4, 0),  // 2, 3: 5 + 3 = 8, wraps to 0
            (6, 1),  // 4, 5: 9
            (8, 2),  // 6, then 7 marked at once: 10
            (10, 4), // 8, 9: 12
            (12, 6), // 10, 11: 14
        ]
    );
}

/// Open a sender with `c` and a window of `cwnd` segments, all sent.
fn opened(c: TcpConfig, cwnd: u64) -> (TcpSender, Vec<Packet>) {
    let mut s = TcpSender::new(FlowId(0), NodeId(0), NodeId(1), c);
    s.win.cwnd = (cwnd * MSS) as f64;
    let mut out = Vec::new();
    let mut uid = 0;
    let mut em = Emit {
        now: SimTime::ZERO,
        out: &mut out,
        next_uid: &mut uid,
    };
    s.write(u64::MAX, &mut em);
    s.open(&mut em);
    (s, out)
}

fn ack(segments: u64, fl: u8) -> Packet {
    let mut p = Packet::new(0, FlowId(0), NodeId(1), NodeId(0), PacketKind::TcpAck);
    p.ack = segments * MSS;
    p.rwnd = 1 << 30;
    p.flags = fl;
    p
}

fn feed(s: &mut TcpSender, p: &Packet, ms: u64) -> Vec<Packet> {
    let mut out = Vec::new();
    let mut uid = 1000;
    s.on_ack(
        p,
        &mut Emit {
            now: SimTime::from_ms(ms),
            out: &mut out,
            next_uid: &mut uid,
        },
    );
    out
}

fn dctcp(alpha_init: f64) -> CcKind {
    CcKind::Dctcp(DctcpParams {
        alpha_init,
        ..DctcpParams::default()
    })
}

/// DCTCP's sender: the first echo cuts by α/2 at once, no second cut in
/// the same window; α moves once per window by the marked fraction.
#[test]
fn dctcp_sender_cuts_by_alpha_once_per_window() {
    let (mut s, out) = opened(cfg(EcnFeedback::Dctcp, dctcp(0.5)), 20);
    assert_eq!(out.len(), 20);
    assert!(out.iter().all(|p| p.has(flags::ECT) && !p.has(flags::ECT1)));
    // ACK of 2 unmarked: the first window ends (Linux's next_seq starts at
    // snd_nxt = 0): α = 0.5 · 15/16; cwnd grows by one segment (slow
    // start, RFC 5681), and the next window ends at snd_max = 20.
    feed(&mut s, &ack(2, 0), 10);
    let a1 = 0.5 * 15.0 / 16.0;
    assert_eq!(s.ecn_alpha(), Some(a1));
    assert_eq!(s.win.cwnd, 21_000.0);
    // An echo of 2 marked: cut to 21 (1 - α/2) at once, no growth.
    feed(&mut s, &ack(4, E), 20);
    assert_eq!(s.stats.ecn_reductions, 1);
    assert_eq!(s.win.cwnd, 21_000.0 * (1.0 - a1 / 2.0));
    assert_eq!(s.win.ssthresh, s.win.cwnd);
    let after_cut = s.win.cwnd;
    // More echoes in the same window: no second cut, no growth; α waits.
    for k in 3..10 {
        feed(&mut s, &ack(2 * k, E), 20 + k);
    }
    assert_eq!(s.stats.ecn_reductions, 1);
    assert_eq!(s.win.cwnd, after_cut);
    assert_eq!(s.ecn_alpha(), Some(a1));
    // The window ends at 20: 18 segments delivered, 16 marked:
    // α = a1 · 15/16 + (16/18)/16. Still no growth before the data sent
    // after the cut is acknowledged (Linux's CWR state).
    feed(&mut s, &ack(20, 0), 40);
    let a2 = a1 * 15.0 / 16.0 + (16.0 / 18.0) / 16.0;
    assert!((s.ecn_alpha().unwrap() - a2).abs() < 1e-12);
    assert_eq!(s.win.cwnd, after_cut);
    assert_eq!(s.ce_counted(), 16);
}

/// AccECN's sender: the CE count comes from the ACE field, and a classic
/// control (Reno) halves once per window on any increase.
#[test]
fn accecn_sender_reads_ace_and_reno_halves_once() {
    let mut c = cfg(EcnFeedback::AccEcn, CcKind::RENO);
    c.ecn_codepoint = EcnCodepoint::Ect1;
    let (mut s, out) = opened(c, 20);
    assert!(out.iter().all(|p| p.has(flags::ECT1) && !p.has(flags::ECT)));
    // ACE 5: nothing marked; growth.
    feed(&mut s, &ack(2, flags::ace_flags(5)), 10);
    assert_eq!(s.stats.ecn_reductions, 0);
    assert_eq!(s.win.cwnd, 21_000.0);
    // ACE 7: two marks; halve (RFC 3168's response), no CWR on data.
    let sent = feed(&mut s, &ack(4, flags::ace_flags(7)), 20);
    assert_eq!(s.stats.ecn_reductions, 1);
    assert_eq!(s.ce_counted(), 2);
    assert_eq!(s.win.cwnd, 10_500.0);
    assert!(sent.iter().all(|p| !p.has(flags::CWR)));
    // The ACE field carries ECE: no classic reading of it.
    feed(&mut s, &ack(6, flags::ace_flags(7)), 30);
    assert_eq!(s.ce_counted(), 2);
    assert_eq!(s.stats.ecn_reductions, 1);
    // A wrap on a stretch ACK of 8 segments: ACE unchanged, 8 assumed.
    feed(&mut s, &ack(14, flags::ace_flags(7)), 40);
    assert_eq!(s.ce_counted(), 10);
}

/// A lossless data path between a sender and a receiver with delayed ACKs,
/// in lock step: each round the sender's segments reach the receiver, CE
/// marked where `marks` says (by segment number, cycling), and its ACKs
/// return, each lost where `ack_loss` says (by ACK number, cycling). Runs
/// until `n` segments have been delivered; returns the sender's count of
/// marked segments fed back and the receiver's count of marks received.
fn marks_through(
    feedback: EcnFeedback,
    marks: &[bool],
    ack_loss: &[bool],
    n: u64,
) -> (u64, u64, TcpSender) {
    // A window of 40 that marks barely cut (α from 0): rounds of 20 ACKs.
    let c = TcpConfig {
        initial_window: 40,
        ..cfg(feedback, dctcp(0.0))
    };
    let mut s = TcpSender::new(FlowId(0), NodeId(0), NodeId(1), c.clone());
    let mut r = TcpReceiver::new(FlowId(0), NodeId(1), NodeId(0), &c);
    let mut uid = 0;
    let mut data = Vec::new();
    let mut em = Emit {
        now: SimTime::ZERO,
        out: &mut data,
        next_uid: &mut uid,
    };
    s.write(u64::MAX, &mut em);
    s.open(&mut em);
    let (mut seg, mut acks_sent) = (0usize, 0usize);
    let mut now = SimTime::ZERO;
    for _ in 0..100_000 {
        now += SimTime::from_ms(1);
        let mut acks = Vec::new();
        for mut p in std::mem::take(&mut data) {
            // First transmissions only: a resent segment's mark would be
            // counted by the receiver but delivers nothing new.
            if marks[(p.seq / MSS) as usize % marks.len()] && !p.has(flags::RETX) {
                p.flags |= flags::CE;
            }
            seg += 1;
            r.on_segment(
                &p,
                &mut Emit {
                    now,
                    out: &mut acks,
                    next_uid: &mut uid,
                },
            );
        }
        r.on_timer(&mut Emit {
            now: now + c.delayed_ack_timeout,
            out: &mut acks,
            next_uid: &mut uid,
        });
        for a in acks {
            acks_sent += 1;
            if ack_loss[acks_sent % ack_loss.len()] && r.rcv_nxt < n * MSS {
                continue;
            }
            s.on_ack(
                &a,
                &mut Emit {
                    now,
                    out: &mut data,
                    next_uid: &mut uid,
                },
            );
        }
        if r.rcv_nxt >= n * MSS {
            break;
        }
        if data.is_empty() {
            // Every ACK of the round lost: the retransmission timer.
            now = now.max(s.next_wakeup().expect("a timer is armed"));
            s.on_timer(&mut Emit {
                now,
                out: &mut data,
                next_uid: &mut uid,
            });
        }
    }
    assert!(seg as u64 >= n);
    (s.ce_counted(), r.stats.ce_marks, s)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, .. Default::default() })]

    /// Without lost ACKs every mark reaches the sender once: DCTCP's echo
    /// and AccECN's counter count exactly the marked segments.
    #[test]
    fn every_mark_is_fed_back_once(marks in proptest::collection::vec(proptest::bool::ANY, 1..40)) {
        for feedback in [EcnFeedback::Dctcp, EcnFeedback::AccEcn] {
            let (counted, received, s) = marks_through(feedback, &marks, &[false], 400);
            proptest::prop_assert_eq!(counted, received, "{:?}", feedback);
            proptest::prop_assert!(s.stats.retransmits == 0);
        }
    }

    /// With ACKs lost, AccECN's reading never undercounts (appendix A.2.1's
    /// conservative choice), and agrees modulo 8 with what was received.
    #[test]
    fn accecn_never_undercounts_when_acks_are_lost(
        marks in proptest::collection::vec(proptest::bool::ANY, 1..40),
        loss in proptest::collection::vec(proptest::bool::weighted(0.3), 1..20),
    ) {
        proptest::prop_assume!(loss.contains(&false));
        let (counted, received, _) = marks_through(EcnFeedback::AccEcn, &marks, &loss, 400);
        proptest::prop_assert!(counted >= received, "{} < {}", counted, received);
        proptest::prop_assert_eq!(counted % 8, received % 8);
    }
}

/// Four ACKs of five lost: each that arrives covers 10 segments, one of
/// them marked. The field moved by 1; 1 or 9 marks are possible; the
/// sender assumes 9.
#[test]
fn accecn_assumes_the_most_marks_on_stretch_acks() {
    let mut marks = [false; 10];
    marks[3] = true;
    let loss = [false, true, true, true, true];
    let (counted, received, _) = marks_through(EcnFeedback::AccEcn, &marks, &loss, 400);
    assert_eq!(counted % 8, received % 8);
    assert!(counted > 4 * received, "{counted} against {received}");
    // Without the losses, exact.
    let (counted, received, _) = marks_through(EcnFeedback::AccEcn, &marks, &[false], 400);
    assert_eq!(counted, received);
}

/// Under Linux's rules with PRR, DCTCP's reduction is the CWR state's
/// (`tcp_enter_cwr()`): ssthresh is cwnd − ⌊cwnd·α/2⌋ (`dctcp_ssthresh()`)
/// at once, and the window comes down to it as data is delivered, reaching
/// it when the data sent after the echo is acknowledged.
#[test]
fn dctcp_under_the_linux_rules_reduces_by_prr() {
    let mut c = cfg(EcnFeedback::Dctcp, dctcp(0.5));
    c.cc_rules = super::CcRules::Linux;
    c.prr = true;
    let (mut s, _) = opened(c, 20);
    feed(&mut s, &ack(2, 0), 10);
    let seg = MSS as f64;
    assert_eq!(
        s.win.cwnd,
        22.0 * seg,
        "slow start: two segments acknowledged"
    );
    // α = 0.5 · 15/16; ssthresh = 22 − ⌊22 · α/2⌋ = 17.
    let sent = feed(&mut s, &ack(4, E), 20);
    assert_eq!(s.stats.ecn_reductions, 1);
    assert_eq!(s.win.ssthresh, 17.0 * seg);
    assert_eq!(s.win.cwnd, 22.0 * seg, "no cut at once");
    // PRR: ⌈17 · 2 / 22⌉ = 2 segments for the two delivered.
    assert_eq!(sent.len(), 2);
    let mut acked = 4;
    let mut cwnds = Vec::new();
    while acked < 40 {
        acked += 2;
        feed(&mut s, &ack(acked, 0), 20 + acked);
        cwnds.push(s.win.cwnd / seg);
    }
    assert!(cwnds.windows(2).take(6).all(|w| w[1] <= w[0]), "{cwnds:?}");
    assert!(cwnds.contains(&17.0), "reaches ssthresh: {cwnds:?}");
}
