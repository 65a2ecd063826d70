//! TCP state-machine tests: hand-fed ACKs for exact transitions, and a
//! two-endpoint pipe (one bottleneck, fixed delay, chosen losses) for
//! recovery episodes.

use crate::ids::{FlowId, NodeId};
use crate::packet::{flags, Packet, PacketKind};
use crate::time::{Rate, SimTime};
use crate::transport::Emit;

use super::{Recovery, TcpConfig, TcpReceiver, TcpSender};

const MSS: u64 = 1000;

fn cfg(recovery: Recovery) -> TcpConfig {
    TcpConfig {
        recovery,
        mss: MSS as u32,
        handshake: false,
        delayed_ack: false,
        ..TcpConfig::default()
    }
}

/// A sender in ESTABLISHED with unlimited data and a window of `cwnd`
/// segments, having sent them; returns the segments' sequence numbers.
fn established(recovery: Recovery, cwnd: u64) -> (TcpSender, Vec<Packet>) {
    opened(cfg(recovery), Some(cwnd))
}

/// A sender with configuration `c` (and a window of `cwnd` segments, if
/// given) opened at time 0 with unlimited data; returns what it sent.
fn opened(c: TcpConfig, cwnd: Option<u64>) -> (TcpSender, Vec<Packet>) {
    opened_with(c, cwnd, u64::MAX)
}

/// As [`opened`], the application having written `bytes`.
fn opened_with(c: TcpConfig, cwnd: Option<u64>, bytes: u64) -> (TcpSender, Vec<Packet>) {
    let mut s = TcpSender::new(FlowId(0), NodeId(0), NodeId(1), c);
    if let Some(w) = cwnd {
        s.win.cwnd = (w * MSS) as f64;
    }
    let mut out = Vec::new();
    let mut uid = 0;
    let mut em = Emit {
        now: SimTime::ZERO,
        out: &mut out,
        next_uid: &mut uid,
    };
    s.write(bytes, &mut em);
    s.open(&mut em);
    (s, out)
}

fn ack(n_segments: u64, sack: &[(u64, u64)]) -> Packet {
    let mut p = Packet::new(0, FlowId(0), NodeId(1), NodeId(0), PacketKind::TcpAck);
    p.ack = n_segments * MSS;
    p.rwnd = 1 << 30;
    let blocks: Vec<_> = sack.iter().map(|&(a, b)| (a * MSS, b * MSS)).collect();
    p.set_sack_blocks(&blocks);
    p
}

/// Feed one ACK at `now`; returns the data segments sent in response.
fn feed(s: &mut TcpSender, p: &Packet, now: SimTime) -> Vec<Packet> {
    let mut out = Vec::new();
    let mut uid = 1000;
    s.on_ack(
        p,
        &mut Emit {
            now,
            out: &mut out,
            next_uid: &mut uid,
        },
    );
    out
}

/// Fire the sender's timer at `now`; returns what it sent.
fn fire(s: &mut TcpSender, now: SimTime) -> Vec<Packet> {
    let mut out = Vec::new();
    let mut uid = 2000;
    s.on_timer(&mut Emit {
        now,
        out: &mut out,
        next_uid: &mut uid,
    });
    out
}

fn seqs(v: &[Packet]) -> Vec<u64> {
    v.iter().map(|p| p.seq / MSS).collect()
}

#[test]
fn initial_window_and_ack_clock() {
    let (mut s, out) = opened(cfg(Recovery::NewReno), None);
    assert_eq!(seqs(&out), vec![0, 1], "initial window of 2 segments");
    // One ACK in slow start: window 3, one acked -> two more segments.
    let sent = feed(&mut s, &ack(1, &[]), SimTime::from_ms(100));
    assert_eq!(seqs(&sent), vec![2, 3]);
    assert_eq!(s.win.cwnd, 3.0 * MSS as f64);
}

#[test]
fn initial_ssthresh_ends_slow_start() {
    let cwnd_after_three_acks = |ssthresh: Option<u64>| {
        let c = TcpConfig {
            initial_ssthresh: ssthresh,
            ..cfg(Recovery::NewReno)
        };
        let (mut s, _) = opened(c, None);
        for n in 1..=3 {
            feed(&mut s, &ack(n, &[]), SimTime::from_ms(n));
        }
        s.win.cwnd
    };
    // 2 -> 3 -> 4 segments in slow start, then MSS^2 / cwnd per ACK.
    assert_eq!(cwnd_after_three_acks(Some(4 * MSS)), 4250.0);
    assert_eq!(cwnd_after_three_acks(None), 5000.0);
}

#[test]
fn fast_retransmit_on_third_duplicate_ack() {
    for recovery in [Recovery::Tahoe, Recovery::Reno, Recovery::NewReno] {
        let (mut s, sent) = established(recovery, 10);
        assert_eq!(sent.len(), 10);
        let t = SimTime::from_ms(100);
        feed(&mut s, &ack(1, &[]), t); // segment 1 lost, the rest arrive
        assert!(feed(&mut s, &ack(1, &[]), t)
            .iter()
            .all(|p| !p.has(flags::RETX)));
        assert!(feed(&mut s, &ack(1, &[]), t)
            .iter()
            .all(|p| !p.has(flags::RETX)));
        let out = feed(&mut s, &ack(1, &[]), t);
        let retx: Vec<_> = out.iter().filter(|p| p.has(flags::RETX)).collect();
        assert_eq!(
            retx.len(),
            1,
            "{recovery:?}: one retransmission on the third dupack"
        );
        assert_eq!(retx[0].seq, MSS, "{recovery:?}: of the missing segment");
        assert_eq!(s.stats.fast_retransmits, 1);
        // RFC 5681 eq. (4): FlightSize / 2. The first ACK opened the window
        // to 11 and two more went out, so 11 segments were in flight.
        assert_eq!(s.snd_max - s.snd_una, 11 * MSS);
        assert_eq!(s.win.ssthresh, 5.5 * MSS as f64, "{recovery:?}");
        match recovery {
            Recovery::Tahoe => assert_eq!(s.win.cwnd, MSS as f64),
            _ => assert_eq!(s.win.cwnd, 8.5 * MSS as f64, "ssthresh + 3 segments"),
        }
    }
}

#[test]
fn newreno_partial_ack_retransmits_next_hole() {
    // Segments 0..10 sent; 2 and 5 lost.
    let (mut s, _) = established(Recovery::NewReno, 10);
    let t = SimTime::from_ms(100);
    feed(&mut s, &ack(2, &[]), t);
    for _ in 0..3 {
        feed(&mut s, &ack(2, &[]), t);
    }
    assert!(s.in_recovery());
    // Dupacks for 6..9 inflate the window.
    for _ in 0..4 {
        feed(&mut s, &ack(2, &[]), t);
    }
    // The retransmitted 2 fills the first hole: cumulative ACK to 5, a
    // partial ACK (recover is 12: two new segments went out in slow start).
    let out = feed(&mut s, &ack(5, &[]), t);
    let retx: Vec<_> = out
        .iter()
        .filter(|p| p.has(flags::RETX))
        .map(|p| p.seq / MSS)
        .collect();
    assert_eq!(
        retx,
        vec![5],
        "partial ACK retransmits the next hole at once"
    );
    assert!(
        s.in_recovery(),
        "NewReno stays in recovery after a partial ACK"
    );
    assert_eq!(s.stats.timeouts, 0);
    // The full ACK ends recovery with cwnd = ssthresh.
    let ssthresh = s.win.ssthresh;
    let snd_max = s.snd_max / MSS;
    feed(&mut s, &ack(snd_max, &[]), t);
    assert!(!s.in_recovery());
    assert_eq!(s.win.cwnd, ssthresh);
}

#[test]
fn reno_leaves_recovery_on_partial_ack() {
    let (mut s, _) = established(Recovery::Reno, 10);
    let t = SimTime::from_ms(100);
    feed(&mut s, &ack(2, &[]), t);
    for _ in 0..7 {
        feed(&mut s, &ack(2, &[]), t);
    }
    assert!(s.in_recovery());
    let out = feed(&mut s, &ack(5, &[]), t);
    assert!(!s.in_recovery());
    assert!(
        out.iter().all(|p| !p.has(flags::RETX)),
        "Reno does not resend the second hole"
    );
}

#[test]
fn sack_retransmits_every_hole_in_one_round() {
    // 20 segments in flight; 3, 7, 11 lost. SACK blocks report the rest.
    let (mut s, _) = established(Recovery::Sack, 20);
    let t = SimTime::from_ms(100);
    feed(&mut s, &ack(3, &[]), t);
    let mut flight = 0;
    let mut retx = Vec::new();
    let arrivals = [4, 5, 6, 8, 9, 10, 12, 13, 14, 15, 16, 17, 18, 19];
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    for &a in &arrivals {
        // Merge `a` into the received ranges, newest block first.
        match blocks.iter_mut().find(|b| b.1 == a) {
            Some(b) => b.1 = a + 1,
            None => blocks.push((a, a + 1)),
        }
        let newest = *blocks.iter().find(|b| b.1 == a + 1).unwrap();
        let mut report = vec![newest];
        report.extend(blocks.iter().rev().filter(|b| **b != newest).take(2));
        if !s.in_recovery() {
            flight = s.snd_max - s.snd_una;
        }
        let out = feed(&mut s, &ack(3, &report), t);
        retx.extend(
            out.iter()
                .filter(|p| p.has(flags::RETX))
                .map(|p| p.seq / MSS),
        );
    }
    assert_eq!(
        retx,
        vec![3, 7, 11],
        "each hole resent once, in order, before any timeout"
    );
    assert_eq!(
        s.stats.fast_retransmits, 1,
        "one window reduction for the episode"
    );
    assert_eq!(s.win.ssthresh, flight as f64 / 2.0);
    assert_eq!(s.stats.timeouts, 0);
}

#[test]
fn sack_resends_the_first_hole_on_entering_recovery() {
    // RFC 6675 step 4.3: the head goes out on the ACK that starts recovery,
    // even though the pipe (19 segments) exceeds the halved cwnd (10).
    let (mut s, _) = established(Recovery::Sack, 20);
    let t = SimTime::from_ms(100);
    feed(&mut s, &ack(3, &[]), t);
    let mut retx = Vec::new();
    for a in [4u64, 5, 6] {
        let out = feed(&mut s, &ack(3, &[(4, a + 1)]), t);
        let resent: Vec<u64> = out
            .iter()
            .filter(|p| p.has(flags::RETX))
            .map(|p| p.seq / MSS)
            .collect();
        if a < 6 {
            assert!(resent.is_empty(), "no retransmission before the 3rd dupack");
        }
        retx.extend(resent);
    }
    assert!(s.in_recovery());
    assert_eq!(retx, vec![3], "the hole resent on the 3rd dupack, once");
}

/// A receiver configured by `c` gets the resent SYN at 1 s, after the first
/// if `first_arrived`; its last SYN-ACK.
fn synack_to(c: &TcpConfig, first: &Packet, resent: &Packet, first_arrived: bool) -> Packet {
    let mut r = TcpReceiver::new(FlowId(0), NodeId(1), NodeId(0), c);
    let (mut acks, mut uid) = (Vec::new(), 0);
    let mut em = Emit {
        now: SimTime::from_secs(1),
        out: &mut acks,
        next_uid: &mut uid,
    };
    if first_arrived {
        r.on_segment(first, &mut em);
    }
    r.on_segment(resent, &mut em);
    *acks.last().unwrap()
}

#[test]
fn a_resent_syn_gives_up_ecn_with_the_fallback() {
    // RFC 3168 section 6.1.1.1, Linux's tcp_ecn_clear_syn(): the resent SYN
    // asks for no ECN; the connection runs without it unless a SYN that
    // asked for it reached the receiver (its SYN-ACK echoes ECE).
    let c = |fallback: bool| TcpConfig {
        handshake: true,
        ecn: true,
        ecn_fallback: fallback,
        initial_rto: SimTime::from_secs(1),
        ..cfg(Recovery::Sack)
    };
    let ecn_setup = |p: &Packet| p.has(flags::ECE) && p.has(flags::CWR);
    // (fallback, the first SYN reached the receiver) -> data ECN-capable.
    for (fallback, first_arrived, ect) in [
        (true, false, false),
        (true, true, true),
        (false, false, true),
    ] {
        let (mut s, out) = opened(c(fallback), None);
        assert_eq!(out.len(), 1);
        assert!(ecn_setup(&out[0]), "the first SYN asks for ECN");
        let resent = fire(&mut s, SimTime::from_secs(1));
        assert_eq!(resent.len(), 1);
        assert_eq!(ecn_setup(&resent[0]), !fallback, "fallback {fallback}");
        let synack = synack_to(&c(fallback), &out[0], &resent[0], first_arrived);
        assert_eq!(synack.kind, PacketKind::SynAck);
        assert_eq!(synack.has(flags::ECE), first_arrived || !fallback);
        let data = feed(&mut s, &synack, SimTime::from_ms(1100));
        assert!(!data.is_empty());
        assert!(
            data.iter().all(|p| p.has(flags::ECT) == ect),
            "fallback {fallback}, first SYN arrived {first_arrived}"
        );
    }
}

#[test]
fn a_scalable_control_whose_ecn_setup_is_lost_falls_back_to_reno() {
    // Linux's dctcp_init() and tcp_prague's prague_init(): a connection
    // that did not negotiate ECN runs Reno (`dctcp_reno`, `prague_reno`)
    // and sends Not-ECT. The resent SYN asks for no ECN, so only a first
    // SYN that arrived gets the receiver's yes: ECE for DCTCP's RFC 3168
    // negotiation, (AE, CWR, ECE) = (0, 1, 0) for AccECN.
    use super::config::EcnFeedback;
    for (cc, feedback) in [
        (
            super::CcKind::Dctcp(super::cc::DctcpParams::default()),
            EcnFeedback::Dctcp,
        ),
        (
            super::CcKind::Prague(super::cc::PragueParams::default()),
            EcnFeedback::AccEcn,
        ),
    ] {
        let c = TcpConfig {
            handshake: true,
            ecn: true,
            ecn_feedback: feedback,
            ecn_fallback: true,
            cc,
            initial_rto: SimTime::from_secs(1),
            ..cfg(Recovery::Sack)
        };
        for first_arrived in [false, true] {
            let (mut s, out) = opened(c.clone(), None);
            let resent = fire(&mut s, SimTime::from_secs(1));
            assert_eq!(resent.len(), 1);
            assert_eq!(
                resent[0].flags & (flags::AE | flags::CWR | flags::ECE),
                0,
                "{feedback:?}: the resent SYN asks for no ECN"
            );
            let synack = synack_to(&c, &out[0], &resent[0], first_arrived);
            let yes = match feedback {
                EcnFeedback::AccEcn => flags::CWR,
                _ => flags::ECE,
            };
            let answer = synack.flags & (flags::AE | flags::CWR | flags::ECE);
            assert_eq!(answer, if first_arrived { yes } else { 0 }, "{feedback:?}");
            let data = feed(&mut s, &synack, SimTime::from_ms(1100));
            assert!(!data.is_empty());
            let what = format!("{feedback:?}, first SYN arrived {first_arrived}");
            assert!(
                data.iter().all(|p| p.has(flags::ECT) == first_arrived),
                "{what}"
            );
            assert_eq!(s.ecn_alpha().is_some(), first_arrived, "{what}");
        }
    }
}

#[test]
fn sack_counts_as_duplicates_only_acks_that_sack_new_data() {
    // RFC 6675 section 2 (and ns-3's `isDupack`, Linux's count of SACKed
    // segments): an ACK repeating SACK information the sender has is not
    // a duplicate ACK; one that SACKs new data is. A cumulative ACK resets
    // the count (section 5), and counts one if it also SACKs new data.
    let resent = |out: &[Packet]| -> Vec<u64> {
        out.iter()
            .filter(|p| p.has(flags::RETX))
            .map(|p| p.seq / MSS)
            .collect()
    };
    let (mut s, _) = established(Recovery::Sack, 20);
    let t = SimTime::from_ms(100);
    feed(&mut s, &ack(3, &[]), t);
    feed(&mut s, &ack(3, &[(4, 5)]), t);
    for _ in 0..3 {
        let out = feed(&mut s, &ack(3, &[(4, 5)]), t);
        assert!(
            resent(&out).is_empty(),
            "a repeated SACK block is not a dupack"
        );
    }
    assert!(!s.in_recovery());
    feed(&mut s, &ack(3, &[(4, 6)]), t);
    assert!(!s.in_recovery(), "two duplicate ACKs");
    // Segment 3 arrives late, segment 6 is lost, 7 arrives: the cumulative
    // ACK moves to 6 and SACKs 7. The two duplicate ACKs before it do not
    // carry over: it is the first of a new count.
    feed(&mut s, &ack(6, &[(7, 8)]), t);
    assert!(!s.in_recovery());
    feed(&mut s, &ack(6, &[(7, 9)]), t);
    assert!(!s.in_recovery());
    let out = feed(&mut s, &ack(6, &[(7, 10)]), t);
    assert!(
        s.in_recovery(),
        "the third duplicate ACK since the last cumulative one"
    );
    assert_eq!(resent(&out), vec![6]);
}

#[test]
fn no_timeout_while_segments_wait_in_the_host() {
    // Segments held back by a full backpressure link are not lost: the
    // timer does not expire while any waits, and restarts when they leave.
    let (mut s, sent) = established(Recovery::Sack, 4);
    s.held_in_host = 2;
    let rto = s.rto();
    let late = SimTime::from_secs(10);
    let out = fire(&mut s, late);
    assert_eq!(s.stats.timeouts, 0);
    assert!(out.is_empty());
    assert_eq!(s.next_wakeup(), Some(late + rto));
    s.on_left_host(sent[2].seq, late + SimTime::from_ms(5));
    assert_eq!(s.held_in_host, 1);
    s.on_left_host(sent[3].seq, late + SimTime::from_ms(10));
    assert_eq!(s.held_in_host, 0);
    assert_eq!(
        s.next_wakeup(),
        Some(late + SimTime::from_ms(10) + rto),
        "restarted when the last held segment left"
    );
    fire(&mut s, late + SimTime::from_ms(10) + rto);
    assert_eq!(s.stats.timeouts, 1, "then an ordinary timeout");
}

#[test]
fn a_syn_waiting_in_the_host_does_not_time_out() {
    // A SYN held back by a full backpressure link is not lost: no SYN
    // timeout (which would also cut the initial window to one segment).
    let mut c = cfg(Recovery::Sack);
    c.handshake = true;
    let (mut s, out) = opened(c, None);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, PacketKind::Syn);
    s.held_in_host = 1;
    let rto = s.rto();
    let late = SimTime::from_secs(5);
    let out = fire(&mut s, late);
    assert_eq!(s.stats.timeouts, 0);
    assert!(out.is_empty(), "no SYN resent while it waits in the host");
    s.on_left_host(0, late + SimTime::from_ms(7));
    assert_eq!(s.held_in_host, 0);
    assert_eq!(s.next_wakeup(), Some(late + SimTime::from_ms(7) + rto));
}

#[test]
fn ecn_echo_halves_once_per_window() {
    let mut c = cfg(Recovery::NewReno);
    c.ecn = true;
    let (mut s, out) = opened(c, Some(10));
    assert!(out.iter().all(|p| p.has(flags::ECT)));
    let mut e = ack(1, &[]);
    e.flags |= flags::ECE;
    let sent = feed(&mut s, &e, SimTime::from_ms(10));
    assert_eq!(s.stats.ecn_reductions, 1);
    // No growth on an ECN-Echo ACK, then cwnd halved (10 -> 5); ssthresh
    // FlightSize / 2 with 9 segments still in flight.
    assert_eq!(s.win.cwnd, 5.0 * MSS as f64);
    assert_eq!(s.win.ssthresh, 4.5 * MSS as f64);
    assert!(
        sent.iter().all(|p| !p.has(flags::RETX)),
        "no retransmission on ECN"
    );
    assert!(sent.is_empty() || sent[0].has(flags::CWR));
    e.ack = 2 * MSS;
    feed(&mut s, &e, SimTime::from_ms(20));
    assert_eq!(s.stats.ecn_reductions, 1, "at most once per window of data");
    // The ACK for the last byte sent before the reduction still carries
    // ECE (the receiver has not yet seen CWR): still the same window.
    let recover = s.snd_max;
    let mut last = ack(0, &[]);
    last.ack = 10 * MSS;
    last.flags |= flags::ECE;
    assert!(last.ack <= recover);
    let after = feed(&mut s, &last, SimTime::from_ms(30));
    assert_eq!(s.stats.ecn_reductions, 1, "no second halving for one mark");
    // An echo for data sent after the reduction is a new signal.
    let beyond = after.last().map_or(recover + MSS, |p| p.seq + p.len as u64);
    let mut next = ack(0, &[]);
    next.ack = beyond.max(recover + MSS).min(s.snd_max);
    next.flags |= flags::ECE;
    assert!(next.ack > recover, "new data went out after the reduction");
    feed(&mut s, &next, SimTime::from_ms(40));
    assert_eq!(s.stats.ecn_reductions, 2);
}

#[test]
fn ecn_echo_at_one_segment_holds_new_data_for_an_rto() {
    let mut c = cfg(Recovery::NewReno);
    c.ecn = true;
    c.initial_window = 1;
    let (mut s, _) = opened(c, None);
    s.win.ssthresh = MSS as f64; // congestion avoidance at one segment
    let mut e = ack(1, &[]);
    e.flags |= flags::ECE;
    let t = SimTime::from_ms(100);
    let sent = feed(&mut s, &e, t);
    assert!(
        sent.is_empty(),
        "RFC 3168 6.1.2: nothing new right after the echo"
    );
    let hold = s.next_wakeup().unwrap();
    assert_eq!(hold, t + s.rto());
    let out = fire(&mut s, hold);
    assert_eq!(out.len(), 1, "one new segment once the hold expires");
    assert!(!out[0].has(flags::RETX));
    assert_eq!(s.stats.timeouts, 0, "not a timeout");
}

#[test]
fn a_cumulative_ack_over_sacked_data_grows_by_what_it_newly_delivers() {
    // Linux counts `acked_sacked`: segments SACKed earlier were delivered
    // then, so the cumulative ACK that later covers them adds only the
    // segment it newly delivers. Ten segments out, 1-9 SACKed, the timer
    // resends 0; its ACK (to 10) must grow a one-segment window by one,
    // not by ten (which would also carry it past ssthresh).
    let mut c = cfg(Recovery::Sack);
    c.cc_rules = super::CcRules::Linux;
    c.rack = false;
    let (mut s, out) = opened(c, Some(10));
    assert_eq!(out.len(), 10);
    feed(&mut s, &ack(0, &[(1, 10)]), SimTime::from_ms(100));
    let rto_at = s.next_wakeup().unwrap();
    let out = fire(&mut s, rto_at);
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(seqs(&out), vec![0], "the timer resends the hole");
    assert_eq!(s.win.cwnd, MSS as f64);
    feed(&mut s, &ack(10, &[]), rto_at + SimTime::from_ms(100));
    assert_eq!(
        s.win.cwnd,
        2.0 * MSS as f64,
        "one segment newly delivered, one segment of growth"
    );
}

// ---------------------------------------------------------------------------
// A pipe: sender -> bottleneck (rate, delay) -> receiver -> delay -> sender
// ---------------------------------------------------------------------------

/// Extra delay for a data packet that leaves the bottleneck at a time.
type Lateness = Box<dyn FnMut(&Packet, SimTime) -> SimTime>;

struct Pipe {
    now: SimTime,
    snd: TcpSender,
    rcv: TcpReceiver,
    rate: Rate,
    delay: SimTime,
    link_free: SimTime,
    /// (arrival time, order, to_receiver, packet)
    flight: Vec<(SimTime, u64, bool, Packet)>,
    order: u64,
    uid: u64,
    /// Called on each data packet leaving the sender; true drops it.
    drop: Box<dyn FnMut(&Packet) -> bool>,
    /// Extra delay for a data packet (after it crossed the bottleneck):
    /// those sent after it may overtake it.
    late: Lateness,
    /// (time, seq, retransmission) of every data packet sent.
    sent: Vec<(SimTime, u64, bool)>,
    delivered: u64,
}

impl Pipe {
    fn new(
        c: TcpConfig,
        rate_bps: u64,
        one_way: SimTime,
        drop: Box<dyn FnMut(&Packet) -> bool>,
    ) -> Pipe {
        let snd = TcpSender::new(FlowId(0), NodeId(0), NodeId(1), c.clone());
        let rcv = TcpReceiver::new(FlowId(0), NodeId(1), NodeId(0), &c);
        Pipe {
            now: SimTime::ZERO,
            snd,
            rcv,
            rate: Rate(rate_bps),
            delay: one_way,
            link_free: SimTime::ZERO,
            flight: Vec::new(),
            order: 0,
            uid: 0,
            drop,
            late: Box::new(|_, _| SimTime::ZERO),
            sent: Vec::new(),
            delivered: 0,
        }
    }

    fn route(&mut self, out: Vec<Packet>) {
        for p in out {
            let to_rcv = matches!(p.kind, PacketKind::TcpData | PacketKind::Syn);
            let at = if to_rcv {
                if p.kind == PacketKind::TcpData {
                    self.sent.push((self.now, p.seq, p.has(flags::RETX)));
                    if (self.drop)(&p) {
                        continue;
                    }
                }
                self.link_free = self.link_free.max(self.now) + self.rate.tx_time(p.size);
                self.link_free + self.delay + (self.late)(&p, self.link_free)
            } else {
                self.now + self.delay
            };
            self.order += 1;
            self.flight.push((at, self.order, to_rcv, p));
        }
    }

    /// The application writes `bytes` and closes (the first write opens
    /// the connection).
    fn start(&mut self, bytes: u64) {
        self.give(bytes, true);
    }

    /// The application writes `bytes` more now; the sender is not closed.
    fn write(&mut self, bytes: u64) {
        self.give(bytes, false);
    }

    fn give(&mut self, bytes: u64, close: bool) {
        let first = self.order == 0;
        let mut out = Vec::new();
        let mut em = Emit {
            now: self.now,
            out: &mut out,
            next_uid: &mut self.uid,
        };
        self.snd.write(bytes, &mut em);
        if close {
            self.snd.close();
        }
        if first {
            self.snd.open(&mut em);
        }
        self.route(out);
    }

    /// Run until the transfer is acknowledged or `limit`.
    fn run(&mut self, limit: SimTime) {
        while !self.snd.is_done() {
            let next_pkt = self
                .flight
                .iter()
                .enumerate()
                .min_by_key(|(_, f)| (f.0, f.1))
                .map(|(i, f)| (f.0, i));
            let timers = [self.snd.next_wakeup(), self.rcv.next_wakeup()];
            let next_timer = timers.iter().flatten().min().copied();
            let t = match (next_pkt, next_timer) {
                (Some((tp, _)), Some(tt)) => tp.min(tt),
                (Some((tp, _)), None) => tp,
                (None, Some(tt)) => tt,
                (None, None) => break,
            };
            if t > limit {
                break;
            }
            self.now = t;
            let mut out = Vec::new();
            let mut em = Emit {
                now: t,
                out: &mut out,
                next_uid: &mut self.uid,
            };
            match next_pkt {
                Some((tp, i)) if tp == t => {
                    let (_, _, to_rcv, p) = self.flight.swap_remove(i);
                    if to_rcv {
                        self.delivered += self.rcv.on_segment(&p, &mut em).bytes;
                    } else {
                        self.snd.on_ack(&p, &mut em);
                    }
                }
                _ => {
                    if self.snd.next_wakeup().is_some_and(|w| w <= t) {
                        self.snd.on_timer(&mut em);
                    }
                    if self.rcv.next_wakeup().is_some_and(|w| w <= t) {
                        self.rcv.on_timer(&mut em);
                    }
                }
            }
            self.route(out);
        }
    }
}

/// A SACK sender with an initial window of `iw` segments, RACK on or off.
fn sack_cfg(iw: u32, rack: bool) -> TcpConfig {
    let mut c = cfg(Recovery::Sack);
    c.initial_window = iw;
    c.rack = rack;
    c
}

/// Drop the first transmission of the listed segments.
fn lose_first(segments: &'static [u64]) -> Box<dyn FnMut(&Packet) -> bool> {
    Box::new(move |p| !p.has(flags::RETX) && segments.contains(&(p.seq / MSS)))
}

#[test]
fn pipe_delivers_everything_once_for_every_variant() {
    for recovery in [
        Recovery::Tahoe,
        Recovery::Reno,
        Recovery::NewReno,
        Recovery::Sack,
    ] {
        for delayed_ack in [false, true] {
            let mut c = cfg(recovery);
            c.delayed_ack = delayed_ack;
            c.handshake = true;
            let mut p = Pipe::new(
                c,
                10_000_000,
                SimTime::from_ms(50),
                lose_first(&[5, 30, 31, 33, 60]),
            );
            p.start(200 * MSS);
            p.run(SimTime::from_secs(120));
            assert!(
                p.snd.is_done(),
                "{recovery:?} delack={delayed_ack}: transfer finished"
            );
            assert_eq!(
                p.delivered,
                200 * MSS,
                "{recovery:?}: every byte delivered exactly once"
            );
        }
    }
}

#[test]
fn sack_repairs_a_burst_without_timeout_where_newreno_is_slower() {
    let burst: &'static [u64] = &[40, 42, 44, 46, 48, 50];
    let mut finish = Vec::new();
    for recovery in [Recovery::Sack, Recovery::NewReno] {
        let mut c = cfg(recovery);
        c.initial_window = 10;
        let mut p = Pipe::new(c, 10_000_000, SimTime::from_ms(100), lose_first(burst));
        p.start(300 * MSS);
        p.run(SimTime::from_secs(120));
        assert!(p.snd.is_done());
        assert_eq!(p.delivered, 300 * MSS);
        if recovery == Recovery::Sack {
            assert_eq!(p.snd.stats.timeouts, 0, "SACK: no timeout");
            assert_eq!(
                p.snd.stats.retransmits,
                burst.len() as u64,
                "SACK: only the lost segments resent"
            );
        }
        let retx: Vec<SimTime> = p.sent.iter().filter(|s| s.2).map(|s| s.0).collect();
        finish.push(*retx.last().unwrap() - retx[0]);
    }
    // SACK resends all six holes within one round trip (200 ms); NewReno
    // learns of one hole per round trip, so it needs 5 RTTs more, or its
    // retransmission timer fires first (RFC 6582's Impatient variant).
    assert!(
        finish[0] < SimTime::from_ms(200),
        "SACK repair span {}",
        finish[0]
    );
    assert!(
        finish[1] >= SimTime::from_ms(900),
        "NewReno repair span {}",
        finish[1]
    );
}

#[test]
fn rto_backs_off_exponentially() {
    // Everything after the first three segments is lost on first sending,
    // and every retransmission of segment 3 is lost too.
    let mut c = cfg(Recovery::NewReno);
    c.initial_window = 3;
    let drop = Box::new(|p: &Packet| p.seq / MSS >= 3 && (p.seq / MSS == 3 || !p.has(flags::RETX)));
    let mut p = Pipe::new(c, 10_000_000, SimTime::from_ms(50), drop);
    p.start(10 * MSS);
    p.run(SimTime::from_secs(40));
    let times: Vec<f64> = p
        .sent
        .iter()
        .filter(|s| s.1 == 3 * MSS && s.2)
        .map(|s| s.0.secs_f64())
        .collect();
    assert!(times.len() >= 4, "{times:?}");
    let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    for g in gaps.windows(2) {
        assert!(
            (g[1] / g[0] - 2.0).abs() < 1e-6,
            "each timeout doubles: {gaps:?}"
        );
    }
    assert!(p.snd.stats.timeouts as usize >= times.len());
}

#[test]
fn karn_no_rtt_sample_from_retransmissions() {
    let mut c = cfg(Recovery::NewReno);
    c.initial_window = 1;
    let mut first = true;
    let drop = Box::new(move |_: &Packet| std::mem::replace(&mut first, false));
    let mut p = Pipe::new(c, 10_000_000, SimTime::from_ms(50), drop);
    p.start(MSS);
    p.run(SimTime::from_secs(10));
    assert!(p.snd.is_done());
    assert_eq!(p.snd.stats.timeouts, 1);
    assert_eq!(
        p.snd.stats.rtt.samples, 0,
        "the only ACK covers a retransmitted segment"
    );
    assert_eq!(
        p.snd.rto(),
        SimTime::from_secs(2),
        "backed-off RTO kept without a valid sample"
    );
}

#[test]
fn receive_window_without_scaling_caps_the_flight() {
    let mut c = cfg(Recovery::NewReno);
    c.window_scaling = false;
    c.receive_buffer = 65_535;
    c.mss = 1460;
    let mut p = Pipe::new(c, 1_000_000_000, SimTime::from_ms(300), Box::new(|_| false));
    p.start(50_000_000);
    p.run(SimTime::from_secs(30));
    // Never more than 65,535 bytes outstanding.
    assert!(p.snd.snd_max - p.snd.snd_una <= 65_535);
    let rate = p.delivered as f64 * 8.0 / 30.0;
    let cap = 65_535.0 * 8.0 / 0.6;
    assert!(
        rate < cap && rate > 0.9 * cap,
        "goodput {rate:.0} vs cap {cap:.0}"
    );
}

#[test]
fn window_held_by_the_receive_window_does_not_grow() {
    // RFC 7661 / Linux tcp_is_cwnd_limited(): 45 segments of receive
    // window on a fat path. Slow start may take cwnd to twice the largest
    // flight; congestion avoidance adds nothing while cwnd is not filled.
    let mut c = cfg(Recovery::Sack);
    c.receive_buffer = 45 * MSS;
    c.initial_window = 10;
    let mut p = Pipe::new(c, 1_000_000_000, SimTime::from_ms(100), Box::new(|_| false));
    p.start(100_000 * MSS);
    p.run(SimTime::from_secs(20));
    let cwnd = p.snd.win.cwnd / MSS as f64;
    assert!(p.snd.snd_max - p.snd.snd_una <= 45 * MSS);
    assert!(
        (45.0..=90.0).contains(&cwnd),
        "cwnd {cwnd} segments with a 45-segment receive window"
    );
    // Out of slow start, the window stops growing once the receive window
    // holds the flight (within the window of data that noticed it).
    let mut c = cfg(Recovery::Sack);
    c.receive_buffer = 45 * MSS;
    c.initial_ssthresh = Some(30 * MSS);
    let mut p = Pipe::new(c, 1_000_000_000, SimTime::from_ms(100), Box::new(|_| false));
    p.start(100_000 * MSS);
    p.run(SimTime::from_secs(10));
    let at_10s = p.snd.win.cwnd;
    p.run(SimTime::from_secs(60));
    assert!(at_10s < 47.0 * MSS as f64, "cwnd {at_10s}");
    assert_eq!(p.snd.win.cwnd, at_10s, "no growth while not cwnd-limited");
}

#[test]
fn repeated_timeouts_for_one_segment_keep_ssthresh() {
    // RFC 5681 section 3.1: ssthresh is set at the first timeout and held
    // while the timer keeps resending the same segment. With Linux's rule
    // (ssthresh from cwnd), recomputing it at the second timeout would
    // take it from half the window down to two segments.
    let mut c = cfg(Recovery::Sack);
    c.initial_window = 10;
    c.cc_rules = super::config::CcRules::Linux;
    let drop = Box::new(|p: &Packet| p.seq / MSS >= 3 && (p.seq / MSS == 3 || !p.has(flags::RETX)));
    let mut p = Pipe::new(c, 10_000_000, SimTime::from_ms(50), drop);
    p.start(40 * MSS);
    p.run(SimTime::from_secs(30));
    let timeouts: Vec<f64> = p
        .snd
        .cuts
        .iter()
        .filter(|c| c.kind == super::sender::CutKind::Timeout)
        .map(|c| c.ssthresh / MSS as f64)
        .collect();
    assert!(timeouts.len() >= 3, "{timeouts:?}");
    assert_eq!(timeouts[0], 6.0, "half of the 13 segments sent");
    assert!(timeouts.iter().all(|&s| s == 6.0), "{timeouts:?}");
}

#[test]
fn rack_resends_a_lost_retransmission_without_a_timeout() {
    // Segment 20 is lost twice: first sent and first resent. RFC 6675
    // alone waits for the retransmission timer; RACK sees segments sent
    // after the resend delivered and resends it again at once.
    let mut timeouts = Vec::new();
    for rack in [false, true] {
        let c = sack_cfg(40, rack);
        let mut n = 0;
        let drop = Box::new(move |p: &Packet| {
            if p.seq / MSS == 20 && n < 2 {
                n += 1;
                return true;
            }
            false
        });
        let mut p = Pipe::new(c, 10_000_000, SimTime::from_ms(100), drop);
        p.start(400 * MSS);
        p.run(SimTime::from_secs(60));
        assert!(p.snd.is_done());
        assert_eq!(p.delivered, 400 * MSS);
        let resends = p.sent.iter().filter(|s| s.1 == 20 * MSS && s.2).count();
        assert_eq!(resends, 2, "rack={rack}");
        timeouts.push(p.snd.stats.timeouts);
    }
    assert_eq!(timeouts, vec![1, 0], "timeouts without and with RACK");
}

#[test]
fn a_timeout_under_rack_leaves_recent_segments_in_flight() {
    // Ten segments, the last five lost: nothing after them is delivered,
    // so only the timer (at 1.1 s) repairs them. At 1.05 s the
    // application writes three more, in flight when the timer fires.
    // RFC 6675 deems every segment not SACKed lost and the window one
    // segment; RACK (RFC 8985 section 6.3, Linux's
    // tcp_timeout_mark_lost()) deems lost the first and those out for
    // RACK.rtt (about 100 ms), not the three, and the window is what is
    // left in flight plus one (tcp_enter_loss()), so each of the three
    // SACKs that follow releases a resend.
    let mut out = Vec::new();
    for rack in [false, true] {
        let drop = lose_first(&[5, 6, 7, 8, 9]);
        let mut p = Pipe::new(sack_cfg(10, rack), 10_000_000, SimTime::from_ms(50), drop);
        p.write(10 * MSS);
        p.run(SimTime::from_ms(1050));
        assert_eq!(p.delivered, 5 * MSS);
        assert_eq!(p.snd.stats.timeouts, 0);
        p.now = SimTime::from_ms(1050);
        p.write(3 * MSS);
        p.run(SimTime::from_secs(5));
        assert_eq!(p.delivered, 13 * MSS, "rack={rack}");
        assert_eq!(p.snd.stats.timeouts, 1, "rack={rack}");
        let cut = p
            .snd
            .cuts
            .iter()
            .find(|c| c.kind == super::sender::CutKind::Timeout)
            .copied()
            .unwrap();
        assert!((cut.time.secs_f64() - 1.1).abs() < 0.01, "{:?}", cut.time);
        let resent: Vec<(f64, u64)> = p
            .sent
            .iter()
            .filter(|s| s.2)
            .map(|s| (s.0.secs_f64(), s.1 / MSS))
            .collect();
        assert_eq!(
            resent.iter().map(|r| r.1).collect::<Vec<_>>(),
            vec![5, 6, 7, 8, 9],
            "rack={rack}"
        );
        out.push((cut.cwnd_after / MSS as f64, resent[3].0));
    }
    assert_eq!(out[0].0, 1.0, "RFC 6675: a window of one");
    assert_eq!(out[1].0, 4.0, "RACK: three in flight and one");
    // Segment 8 goes out two round trips after the timeout in slow start
    // from one; under RACK with the third SACK, 50 ms after it.
    assert!(out[0].1 > 1.3, "RFC 6675: {out:?}");
    assert!(out[1].1 < 1.16, "RACK: {out:?}");
}

#[test]
fn tail_loss_probe_repairs_a_lost_tail_without_a_timeout() {
    // The last two segments of a transfer are lost: nothing after them
    // can raise duplicate ACKs. Without a probe the retransmission timer
    // repairs them; with RACK-TLP the probe (the last segment resent, as
    // there is no new data) is SACKed, RACK deems the segment before it
    // lost, and a fast recovery resends it.
    let mut out = Vec::new();
    for tlp in [false, true] {
        let mut c = cfg(Recovery::Sack);
        c.initial_window = 10;
        c.rack = tlp;
        c.tlp = tlp;
        let mut p = Pipe::new(c, 10_000_000, SimTime::from_ms(50), lose_first(&[18, 19]));
        p.start(20 * MSS);
        p.run(SimTime::from_secs(30));
        assert!(p.snd.is_done());
        assert_eq!(p.delivered, 20 * MSS);
        out.push((
            p.snd.stats.timeouts,
            p.snd.stats.loss_probes,
            p.snd.stats.fast_retransmits,
        ));
    }
    assert_eq!(out[0], (1, 0, 0), "without TLP: one timeout");
    assert_eq!(out[1], (0, 1, 1), "with TLP: a probe, then fast recovery");
}

#[test]
fn rack_deems_a_segment_lost_by_time_with_fewer_than_three_sacks() {
    // The first of three segments is lost: the two after it are SACKed,
    // fewer than DupThresh, so RFC 6675 never deems it lost and the timer
    // repairs it. RACK deems it lost once the newest delivery's RTT plus a
    // quarter of the smallest RTT has passed since it was sent.
    let mut out = Vec::new();
    for rack in [false, true] {
        let mut c = cfg(Recovery::Sack);
        c.initial_window = 3;
        c.rack = rack;
        let mut p = Pipe::new(c, 10_000_000, SimTime::from_ms(50), lose_first(&[0]));
        p.start(3 * MSS);
        p.run(SimTime::from_secs(30));
        assert!(p.snd.is_done());
        let resent_at = p.sent.iter().find(|s| s.2).map(|s| s.0).unwrap();
        out.push((p.snd.stats.timeouts, resent_at));
    }
    assert_eq!(out[0].0, 1, "without RACK: the timer");
    assert_eq!(out[1].0, 0, "with RACK: no timeout");
    // The SACK of segment 1 comes at about 101 ms (RTT 100 ms plus a
    // segment's serialization); RACK waits RTT/4 more.
    let t = out[1].1.secs_f64();
    assert!((0.12..0.14).contains(&t), "resent at {t}");
}

/// Linux's rules with tail loss probes, over a long path: an RTT of
/// 500 ms makes two SRTTs (the probe) later than SRTT + 200 ms (the RTO).
fn linux_tlp_cfg(iw: u32) -> TcpConfig {
    let mut c = dsack_cfg(iw, false);
    c.tlp = true;
    c
}

#[test]
fn sacks_of_data_sent_before_a_resend_restart_the_timer() {
    // Ten segments at 0. At 500 ms segment 2 is missing and 3-5 are
    // SACKed: a recovery, and segment 2 resent, which starts the timer.
    // At 900 ms segments 6 and 7 are SACKed: sent before the resend, they
    // show the path still delivering, and the timer starts again from
    // this ACK (Linux's tcp_clean_rtx_queue()); a resend lost on a long
    // path is then found by RACK before the timer fires.
    let ms = SimTime::from_ms;
    let (mut s, _) = opened(linux_tlp_cfg(10), None);
    let resent = feed(&mut s, &ack(2, &[(3, 6)]), ms(500));
    assert_eq!(seqs(&resent)[0], 2);
    let from_resend = ms(500) + s.rto();
    assert_eq!(s.next_wakeup(), Some(from_resend));
    feed(&mut s, &ack(2, &[(3, 8)]), ms(900));
    assert_eq!(s.next_wakeup(), Some(ms(900) + s.rto()));
    assert!(ms(900) + s.rto() > from_resend);
    // A SACK of nothing new restarts nothing.
    feed(&mut s, &ack(2, &[(3, 8)]), ms(950));
    assert_eq!(s.next_wakeup(), Some(ms(900) + s.rto()));
}

#[test]
fn linux_timers_fire_on_the_kernels_timer_wheel() {
    // HZ = 250: 4 ms ticks. A resend at 501 ms starts the retransmission
    // timer; on the wheel it fires on a tick after the RTO has passed,
    // rounded up to the level's granularity (32 ms this far ahead).
    let ms = SimTime::from_ms;
    let wheel = super::clock::TimerClock::hz(250);
    let mut c = linux_tlp_cfg(10);
    c.timer_hz = 250;
    let (mut s, _) = opened(c, None);
    let resent = feed(&mut s, &ack(2, &[(3, 6)]), ms(501));
    assert_eq!(seqs(&resent)[0], 2);
    let due = ms(501) + s.rto();
    let at = s.next_wakeup().unwrap();
    assert_eq!(at, wheel.fires(ms(501), s.rto()));
    assert!(at > due && at <= due + ms(36), "{at:?} for {due:?}");
    assert_eq!(at.ns() % ms(4).ns(), 0, "on a tick");
    assert!(fire(&mut s, at - SimTime::from_us(1)).is_empty());
    assert_eq!(s.stats.timeouts, 0);
    fire(&mut s, at);
    assert_eq!(s.stats.timeouts, 1);
}

#[test]
fn linux_racks_timer_waits_two_milliseconds_more_and_for_a_tick() {
    // Three segments at 0; at 100 ms the second is SACKed. RACK gives the
    // first RTT/4 more (due at 125 ms); Linux's timer waits 2 ms beyond
    // that (tcp_rack_mark_lost()), in whole ticks on the wheel: armed at
    // tick 25 for 7 ticks, it fires at the start of tick 33.
    let ms = SimTime::from_ms;
    for (hz, expect) in [(0, ms(127)), (250, ms(132))] {
        let mut c = dsack_cfg(3, false);
        c.timer_hz = hz;
        let (mut s, first) = opened_with(c, None, 3 * MSS);
        assert_eq!(first.len(), 3);
        assert!(feed(&mut s, &ack(0, &[(1, 2)]), ms(100)).is_empty());
        assert_eq!(s.next_wakeup(), Some(expect), "hz {hz}");
        let resent = fire(&mut s, expect);
        assert_eq!(seqs(&resent), vec![0], "hz {hz}");
        assert_eq!(s.stats.timeouts, 0);
    }
}

#[test]
fn a_probe_after_sending_counts_from_the_first_unacknowledged_segment() {
    // Each window is acknowledged at once 500 ms after it was sent. Then
    // only half of the window sent at 3 s is acknowledged, at 3.5 s,
    // which sends more. The probe is due no later than the timer counted
    // from the oldest segment out, sent at 3 s (tcp_rto_delta_us()), not
    // from the ACK: 500 ms sooner, and before two SRTTs.
    let (mut s, first) = opened(linux_tlp_cfg(4), None);
    let (mut acked, mut out) = (0, first.len() as u64);
    for round in 1..=6 {
        acked += out;
        out = feed(&mut s, &ack(acked, &[]), SimTime::from_ms(500 * round)).len() as u64;
    }
    let more = feed(&mut s, &ack(acked + out / 2, &[]), SimTime::from_ms(3500));
    assert!(!more.is_empty());
    let srtt = s.srtt().unwrap();
    let due = SimTime::from_ms(3000) + s.rto();
    assert!(due < SimTime::from_ms(3500) + srtt + srtt, "{due:?}");
    assert_eq!(s.loss_probe_due(), Some(due));
    let probe = fire(&mut s, due);
    assert_eq!(probe.len(), 1, "one new segment");
    assert_eq!((s.stats.loss_probes, s.stats.timeouts), (1, 0));
}

#[test]
fn a_window_below_the_flight_resends_nothing_when_racks_timer_fires() {
    // BBR (it sets cwnd itself) under Linux's rules with RACK. Ten
    // segments, all there is to send, at 0; at 500 ms segment 1 is SACKed, and RACK's timer waits
    // a quarter of the RTT for segment 0. The window held at four
    // segments (as in PROBE_RTT) when that timer deems segment 0 lost,
    // the sender resends nothing, eight segments being in flight
    // (tcp_rack_reo_timeout() sends what cwnd allows), and its
    // retransmission timer, the kernel's one timer again, counts from
    // segment 0's sending (tcp_rearm_rto()), not from the last ACK or
    // the timer's arming.
    let ms = SimTime::from_ms;
    let mut c = linux_tlp_cfg(10);
    c.cc = super::CcKind::Bbr(super::cc::BbrParams::default());
    let (mut s, first) = opened_with(c, None, 10 * MSS);
    // BBR paces its first window: the rest follows within milliseconds.
    let mut sent = first.len();
    while let Some(w) = s.next_wakeup().filter(|w| *w < ms(10)) {
        sent += fire(&mut s, w).len();
    }
    assert_eq!(sent, 10);
    feed(&mut s, &ack(0, &[(1, 2)]), ms(500));
    assert!(!s.in_recovery());
    let reo = s.next_wakeup().unwrap();
    assert!(reo > ms(600) && reo < ms(650), "{reo:?}");
    s.win.cwnd = (4 * MSS) as f64;
    let out = fire(&mut s, reo);
    assert!(s.in_recovery());
    assert!(out.is_empty(), "{:?}", seqs(&out));
    assert_eq!(s.next_wakeup(), Some(SimTime::ZERO + s.rto()));
    assert!(SimTime::ZERO + s.rto() > reo);
}

#[test]
fn no_probe_while_segments_are_sacked() {
    // Segment 3 of ten is missing and 4-5 are SACKed: Linux's Disorder
    // state, where it sends no probe (only from Open or CWR). With the
    // gap filled the connection is open again and the probe is armed.
    let (mut s, _) = opened(linux_tlp_cfg(10), None);
    feed(&mut s, &ack(3, &[(4, 6)]), SimTime::from_ms(500));
    assert_eq!(s.loss_probe_due(), None);
    feed(&mut s, &ack(6, &[]), SimTime::from_ms(510));
    assert!(s.loss_probe_due().is_some());
}

/// With `pacing`, a classic control is paced at Linux's default rate once
/// there is an RTT sample (`tcp_update_pacing_rate()`: twice cwnd per SRTT
/// in slow start): one segment per ACK's worth of window leaves now, the
/// next at `len / rate`; without it, the whole window at once.
#[test]
fn pacing_spaces_a_classic_controls_segments() {
    let paced = TcpConfig {
        pacing: true,
        ..cfg(Recovery::NewReno)
    };
    for (c, want_now) in [(paced, 1), (cfg(Recovery::NewReno), 2)] {
        let pacing = c.pacing;
        let (mut s, out) = opened(c, None);
        // No RTT sample yet: not paced.
        assert_eq!(out.len(), 2);
        assert_eq!(s.pacing_rate(), None);
        let t = SimTime::from_ms(100);
        let sent = feed(&mut s, &ack(1, &[]), t);
        assert_eq!(sent.len(), want_now, "pacing {pacing}");
        if !pacing {
            assert_eq!(s.next_wakeup(), s.next_wakeup().filter(|w| *w > t));
            continue;
        }
        // cwnd 3 segments, SRTT 100 ms, ssthresh unbounded: 2 × 3000 B /
        // 0.1 s = 60 kB/s, so 1000 bytes every 16.67 ms.
        let rate = s.pacing_rate().unwrap();
        assert!((rate - 60_000.0).abs() < 1e-6, "{rate}");
        let next = t + SimTime::from_secs_f64(1000.0 / 60_000.0);
        assert_eq!(s.next_wakeup(), Some(next));
        let out = fire(&mut s, next);
        assert_eq!(seqs(&out), vec![3]);
    }
}

/// With `tso_bursts` the pacer releases an skb's worth of segments at
/// once (at 60 kB/s, 2: `tcp_min_tso_segs`), then waits the pacing
/// interval of both (`tcp_update_skb_after_send()` on a 2-segment skb).
#[test]
fn tso_bursts_send_an_skb_of_segments_then_wait_for_all_of_them() {
    let c = TcpConfig {
        pacing: true,
        tso_bursts: true,
        ..cfg(Recovery::NewReno)
    };
    let (mut s, _) = opened(c, None);
    let t = SimTime::from_ms(100);
    let sent = feed(&mut s, &ack(1, &[]), t);
    assert_eq!(seqs(&sent), vec![2, 3], "one burst of two");
    let rate = s.pacing_rate().unwrap();
    assert!((rate - 60_000.0).abs() < 1e-6, "{rate}");
    // The next ACK opens the window at once; the pacer holds the next
    // skb until both segments' interval has passed.
    let t2 = t + SimTime::from_ms(1);
    assert!(feed(&mut s, &ack(2, &[]), t2).is_empty());
    let interval = SimTime::from_secs_f64(1000.0 / 60_000.0);
    let next = t + interval + interval;
    assert_eq!(s.next_wakeup(), Some(next));
    assert_eq!(seqs(&fire(&mut s, next)).len(), 2);
}

#[test]
fn prague_paces_at_one_window_per_srtt_out_of_slow_start() {
    // prague_update_pacing_rate(): cwnd per SRTT once cwnd reaches half of
    // ssthresh, where Linux's default for classic controls adds 20 %.
    for (cc, ratio) in [
        (
            super::CcKind::Prague(super::cc::PragueParams::default()),
            1.0,
        ),
        (super::CcKind::RENO, 1.2),
    ] {
        let c = TcpConfig {
            cc,
            pacing: true,
            ..cfg(Recovery::Sack)
        };
        let (mut s, _) = opened(c, Some(10));
        s.win.ssthresh = 4.0 * MSS as f64;
        feed(&mut s, &ack(1, &[]), SimTime::from_ms(100));
        let want = ratio * s.win.cwnd.max((s.snd_max - s.snd_una) as f64) / 0.1;
        let rate = s.pacing_rate().unwrap();
        assert!((rate - want).abs() < 1e-6 * want, "{rate} against {want}");
    }
}

fn bbr_cfg() -> TcpConfig {
    TcpConfig {
        cc: super::CcKind::Bbr(super::cc::BbrParams::default()),
        pacing: true,
        ..cfg(Recovery::Sack)
    }
}

/// BBR owns the window: each ACK's rate sample sets cwnd and the pacing
/// rate; a fast retransmit neither halves cwnd nor sets ssthresh, and the
/// first round of recovery conserves packets (cwnd = in flight + newly
/// delivered).
#[test]
fn bbr_sets_the_window_itself_in_recovery() {
    let (mut s, out) = opened(bbr_cfg(), Some(10));
    // Established without a handshake: 1 ms nominal RTT, 10 segments,
    // high gain (tcp_bbr.c's bbr_init_pacing_rate_from_rtt()): the first
    // segment leaves now, the others one pacing interval apart.
    let r0 = s.pacing_rate().unwrap();
    assert!(
        (r0 - 2.88671875 * 10_000.0 / 1e-3 * 0.99).abs() < 1e-3,
        "{r0}"
    );
    assert_eq!(out.len(), 1);
    let gap = SimTime::from_secs_f64(MSS as f64 / r0);
    let mut sent = 1;
    while let Some(w) = s.next_wakeup().filter(|w| *w < SimTime::from_ms(10)) {
        let out = fire(&mut s, w);
        assert_eq!(w, SimTime::ZERO + SimTime::from_ns(gap.ns() * sent));
        sent += out.len() as u64;
    }
    assert_eq!(sent, 10);
    // The ACK of segment 0 at 100 ms: STARTUP grows cwnd by what is
    // delivered, the rate sample gives an RTT of 100 ms.
    let t = SimTime::from_ms(100);
    feed(&mut s, &ack(1, &[]), t);
    let rs = *s.rate_sample().unwrap();
    assert_eq!(rs.rtt, Some(SimTime::from_ms(100)));
    assert_eq!((rs.acked_sacked, rs.delivered), (MSS, MSS));
    assert!(rs.valid);
    assert_eq!(s.win.cwnd, 11.0 * MSS as f64);
    let trace = s.cc_trace();
    assert_eq!(trace.state, 1);
    // Segment 1 lost: SACKs for 2, 3, 4 start a SACK recovery.
    let before = s.win.cwnd;
    for n in 2..=4 {
        feed(&mut s, &ack(1, &[(2, n + 1)]), t);
    }
    assert!(s.in_recovery());
    assert_eq!(s.stats.fast_retransmits, 1);
    // Packet conservation: the SACKed segments left the network, each
    // ACK let one more in: cwnd = pipe + delivered, not ssthresh.
    assert!(s.win.ssthresh.is_infinite(), "BBR keeps ssthresh");
    assert_ne!(s.win.cwnd, before / 2.0);
    let rs = *s.rate_sample().unwrap();
    assert_eq!(rs.acked_sacked, MSS);
    assert_eq!(rs.losses, MSS, "the head was deemed lost on this ACK");
}

/// RFC 6937's example, as Linux counts it: a window of 20 segments, the
/// first lost. With PRR, after the fast retransmission one new segment
/// goes for about every two segments SACKed while `pipe` is above ssthresh
/// (ceil(ssthresh × delivered / prior cwnd) sends in all); plain RFC 6675
/// sends nothing until `pipe` falls below cwnd and then one per ACK. The
/// recovery's end leaves cwnd at ssthresh.
#[test]
fn prr_spreads_the_recoverys_sends_over_its_acks() {
    let mut per_ack = Vec::new();
    for prr in [false, true] {
        let mut c = cfg(Recovery::Sack);
        c.prr = prr;
        let (mut s, _) = opened(c, Some(20));
        let t = SimTime::from_ms(100);
        let mut new_sent = Vec::new();
        for a in 1..20u64 {
            let out = feed(&mut s, &ack(0, &[(1, a + 1)]), t);
            if a >= 3 {
                assert!(s.in_recovery());
                new_sent.push(out.iter().filter(|p| !p.has(flags::RETX)).count());
            }
        }
        // The first two duplicate ACKs each SACK a segment out of the
        // pipe and let a new one go (RFC 6675's pipe): 22 in flight,
        // ssthresh 11.
        assert_eq!(s.win.ssthresh, 11.0 * MSS as f64);
        per_ack.push(new_sent);
        // The retransmission arrives: everything up to what was sent is
        // acknowledged and the recovery ends.
        let max = s.snd_max / MSS;
        feed(&mut s, &ack(max, &[]), t + SimTime::from_ms(100));
        assert!(!s.in_recovery());
        if prr {
            assert_eq!(s.win.cwnd, 11.0 * MSS as f64);
        }
    }
    // Without PRR: nothing until pipe (19 after the retransmission, one
    // less per SACK) leaves room in cwnd (11), then one per ACK.
    assert_eq!(
        per_ack[0],
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]
    );
    // With PRR: the retransmission is the first send; then, while pipe is
    // above ssthresh, ceil(11 × delivered / 20) in all, one new segment on
    // every second ACK (the 10th and 11th ACKs each round it up); the
    // last ACK finds pipe at ssthresh and sends nothing.
    assert_eq!(
        per_ack[1],
        [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0]
    );
}

/// With PRR and Linux's rules, an ECN echo does not cut cwnd at once
/// (`tcp_enter_cwr()` then `tcp_cwnd_reduction()` per ACK): over the
/// next round trip the sender sends ceil(ssthresh × delivered / prior
/// cwnd) segments in all, about one for every two acknowledged, and cwnd
/// is ssthresh once data sent after the echo is acknowledged.
#[test]
fn prr_brings_the_window_down_after_an_ecn_echo() {
    use super::config::CcRules;
    let mut c = cfg(Recovery::Sack);
    c.ecn = true;
    c.prr = true;
    c.cc_rules = CcRules::Linux;
    let (mut s, _) = opened(c, Some(20));
    let mut sent = Vec::new();
    for k in 1..=20u64 {
        let mut a = ack(k, &[]);
        if k == 1 {
            a.flags |= flags::ECE;
        }
        let out = feed(&mut s, &a, SimTime::from_ms(100 + k));
        sent.push(out.len());
        if k == 1 {
            // ssthresh max(20 / 2, 2) segments; cwnd is not cut at once,
            // and the cut's log gives the window it aims at.
            assert_eq!(s.win.ssthresh, 10.0 * MSS as f64);
            assert_eq!(s.stats.ecn_reductions, 1);
            let cut = s.cuts.last().unwrap();
            assert_eq!((cut.cwnd_before, cut.cwnd_after), (20e3, 10e3));
        }
    }
    // 20 segments delivered while pipe stayed above ssthresh: ceil(10 k / 20)
    // sent after the k-th, one on every second ACK (none grows the window).
    assert_eq!(sent.iter().sum::<usize>(), 10);
    assert_eq!(sent[..6], [1, 0, 1, 0, 1, 0]);
    // The first ACK above the data sent before the echo ends the reduction.
    let max = s.snd_max / MSS;
    feed(&mut s, &ack(max, &[]), SimTime::from_ms(200));
    assert_eq!(s.win.cwnd, 10.0 * MSS as f64);
    // Without PRR the window falls to ssthresh on the echo.
    let mut c = cfg(Recovery::Sack);
    c.ecn = true;
    c.cc_rules = CcRules::Linux;
    let (mut s, _) = opened(c, Some(20));
    let mut a = ack(1, &[]);
    a.flags |= flags::ECE;
    feed(&mut s, &a, SimTime::from_ms(101));
    assert_eq!(s.win.cwnd, 10.0 * MSS as f64);
}

/// A loss found while the window comes down after an ECN echo does not
/// reduce it again: the recovery keeps the echo's ssthresh and PRR goes on
/// (Linux's `tcp_enter_recovery()` from the CWR state).
#[test]
fn a_loss_during_the_ecn_reduction_keeps_its_ssthresh() {
    use super::config::CcRules;
    let mut c = cfg(Recovery::Sack);
    c.ecn = true;
    c.prr = true;
    c.cc_rules = CcRules::Linux;
    let (mut s, _) = opened(c, Some(20));
    let mut e = ack(1, &[]);
    e.flags |= flags::ECE;
    feed(&mut s, &e, SimTime::from_ms(101));
    assert_eq!(s.win.ssthresh, 10.0 * MSS as f64);
    // Segment 1 is lost: three duplicate ACKs SACK 2, 3 and 4.
    for a in 2..5u64 {
        feed(&mut s, &ack(1, &[(2, a + 1)]), SimTime::from_ms(100 + a));
    }
    assert!(s.in_recovery());
    assert_eq!((s.stats.ecn_reductions, s.stats.fast_retransmits), (1, 1));
    // A new reduction would halve the 19 segments PRR has left: 9.
    assert_eq!(s.win.ssthresh, 10.0 * MSS as f64, "no second reduction");
}

#[test]
fn the_receivers_round_trip_follows_the_timestamps_echoed() {
    // Linux's profile (timestamps, receive-window autotuning) through a
    // 2 Mbit/s link, 50 ms each way: the handshake's round trip is 100 ms,
    // and the queue the flow builds lengthens it several times over. The
    // receiver's estimate, which paces Dynamic Right-Sizing, follows what
    // its ACKs' timestamps take to come back in segments: it stays near
    // the sender's own smoothed RTT.
    let c = super::config::Profile::Linux.base(MSS as u32);
    let mut p = Pipe::new(c, 2_000_000, SimTime::from_ms(50), Box::new(|_| false));
    p.start(2_000 * MSS);
    for s in [2, 4, 6] {
        p.run(SimTime::from_secs(s));
        let srtt = p.snd.srtt().unwrap().secs_f64();
        let est = p.rcv.rtt_estimate().unwrap().secs_f64();
        assert!(srtt > 0.25, "a queue has built by {s} s: SRTT {srtt}");
        assert!(
            (est - srtt).abs() < 0.15 * srtt,
            "at {s} s: receiver {est} s, sender {srtt} s"
        );
    }
}

/// A Linux-like SACK sender with RACK, timestamps and D-SACK (and its
/// receiver): `iw` segments at first, ACKs every segment.
fn dsack_cfg(iw: u32, dsack: bool) -> TcpConfig {
    let mut c = sack_cfg(iw, true);
    c.dsack = dsack;
    c.timestamps = true;
    c.cc_rules = super::CcRules::Linux;
    c.rto_rule = super::RtoRule::Linux;
    c.min_rto = SimTime::from_ms(200);
    c
}

/// A 100 Mbit/s, 40 ms pipe under [`dsack_cfg`] whose data packets arrive
/// `late(packet)` late.
fn late_pipe(dsack: bool, late: fn(&Packet) -> SimTime) -> Pipe {
    let mut p = Pipe::new(
        dsack_cfg(10, dsack),
        100_000_000,
        SimTime::from_ms(20),
        Box::new(|_| false),
    );
    p.late = Box::new(move |q, _| late(q));
    p
}

#[test]
fn a_recovery_that_dsacks_show_spurious_is_undone() {
    // Segment 20 of a long transfer arrives 30 ms late, after three
    // segments sent behind it: the sender deems it lost, resends it and
    // halves its window. The original arrives before the resend, which
    // the receiver reports as a duplicate (D-SACK, RFC 2883); the sender
    // then knows the only resend of the episode was unnecessary and puts
    // cwnd and ssthresh back (Linux's tcp_try_undo_dsack() /
    // tcp_try_undo_recovery()). Without D-SACK the halved window stays.
    let mut out = Vec::new();
    for dsack in [false, true] {
        let mut p = late_pipe(dsack, |q| {
            if q.seq == 20 * MSS && !q.has(flags::RETX) {
                SimTime::from_ms(30)
            } else {
                SimTime::ZERO
            }
        });
        p.write(400 * MSS);
        p.run(SimTime::from_secs(10));
        assert_eq!(p.delivered, 400 * MSS);
        let resent: Vec<u64> = p.sent.iter().filter(|s| s.2).map(|s| s.1 / MSS).collect();
        assert_eq!(resent, vec![20], "dsack={dsack}");
        assert_eq!(p.snd.stats.fast_retransmits, 1, "dsack={dsack}");
        assert_eq!(p.snd.stats.timeouts, 0);
        assert_eq!(p.rcv.stats.duplicate_segments, 1);
        out.push((p.snd.stats.undos, p.snd.win.ssthresh, p.snd.cuts[0]));
    }
    assert_eq!(out[0].0, 0);
    assert_eq!(out[1].0, 1, "one undo");
    let cut = out[1].2;
    assert!(out[0].1 <= cut.cwnd_before / 2.0 + MSS as f64, "{out:?}");
    // Undone: ssthresh back to what it was before (infinite: the flow was
    // still in slow start).
    assert!(out[1].1.is_infinite(), "{out:?}");
}

#[test]
fn a_spurious_timeout_is_undone_by_its_timestamps_or_dsacks() {
    // The path holds what crosses it between 0.2 and 0.8 s until 0.8 s, in
    // order (a delay spike, as a handover may give): the timer fires, the
    // head and the segments out for RACK.rtt are resent and the window
    // falls to what is left in flight plus one. Then the originals arrive,
    // each resend after them: a duplicate, D-SACKed. With timestamps the
    // first ACK echoes an original's TSval, from before the resend: the
    // sender knows at once that the timeout was spurious and restores cwnd
    // and ssthresh (tcp_try_undo_loss(), Eifel detection); without, once
    // every resend is D-SACKed. Without D-SACK it never does.
    let mut out = Vec::new();
    for (dsack, timestamps) in [(false, true), (true, false), (true, true)] {
        let mut c = dsack_cfg(10, dsack);
        c.timestamps = timestamps;
        let mut p = Pipe::new(c, 100_000_000, SimTime::from_ms(20), Box::new(|_| false));
        p.late = Box::new(|_, left| {
            let (from, to) = (SimTime::from_ms(200), SimTime::from_ms(800));
            if left >= from && left < to {
                to - left
            } else {
                SimTime::ZERO
            }
        });
        p.write(3000 * MSS);
        // The first ACKs after the spike come back at 0.84 s.
        p.run(SimTime::from_ms(845));
        let early = p.snd.stats.undos;
        p.run(SimTime::from_secs(20));
        assert_eq!(p.delivered, 3000 * MSS);
        assert_eq!(p.snd.stats.timeouts, 1, "{dsack} {timestamps}");
        let resends = p.sent.iter().filter(|s| s.2).count() as u64;
        assert!(resends >= 1);
        assert_eq!(
            p.rcv.stats.duplicate_segments, resends,
            "{dsack} {timestamps}"
        );
        out.push((early, p.snd.stats.undos, p.snd.win.ssthresh));
    }
    assert_eq!(out[0].1, 0, "{out:?}");
    assert!(out[0].2.is_finite(), "{out:?}");
    assert_eq!((out[1].0, out[1].1), (0, 1), "D-SACKs, later: {out:?}");
    assert_eq!((out[2].0, out[2].1), (1, 1), "timestamps, at once: {out:?}");
    assert!(out[1].2.is_infinite() && out[2].2.is_infinite(), "{out:?}");
}

#[test]
fn rack_learns_reordering_from_dsacks_and_stops_resending() {
    // Every hundredth segment arrives 15 ms late, overtaken by the 125
    // sent after it (100 Mbit/s, 40 ms RTT). The first is deemed lost by
    // DupThresh (no reordering seen yet) and resent; the ACK the late
    // original brings echoes its timestamp, from before the resend: the
    // sender has seen reordering and undoes the recovery
    // (tcp_try_undo_partial()). The resend's D-SACK then widens RACK's
    // window by a step, to 20 ms (tcp_rack_update_reo_wnd()), and every
    // later late segment is waited for. Without D-SACK and its undo the
    // sender learns nothing: one needless resend and one window cut per
    // late segment.
    let mut out = Vec::new();
    for dsack in [false, true] {
        let mut p = late_pipe(dsack, |q| {
            if (q.seq / MSS) % 100 == 50 && !q.has(flags::RETX) {
                SimTime::from_ms(15)
            } else {
                SimTime::ZERO
            }
        });
        p.write(6000 * MSS);
        p.run(SimTime::from_secs(30));
        assert_eq!(p.delivered, 6000 * MSS);
        let resends = p.sent.iter().filter(|s| s.2).count() as u64;
        out.push((resends, p.snd.stats.fast_retransmits, p.snd.stats.undos));
    }
    let (without, with) = (out[0], out[1]);
    assert!(without.0 >= 40, "{out:?}");
    assert_eq!(without.2, 0, "{out:?}");
    assert_eq!(with, (1, 1, 1), "one resend, undone: {out:?}");
}

/// Linux tests for an application-limited sender when the application asks
/// to send (`tcp_rate_check_app_limited()` in `tcp_sendmsg()`): a bulk
/// writer waiting for room in a full send buffer asks nothing, so the
/// segments it sends once woken give rate samples that are not
/// application-limited. A writer that ran out of data is.
#[test]
fn a_writer_blocked_on_the_send_buffer_is_not_application_limited() {
    // Every segment acknowledged 100 ms after it leaves, the timer fired
    // for pacing every millisecond; `more` segments written at `at`.
    // Returns the samples' application-limited flags, with their times.
    fn run(mut s: TcpSender, until_ms: u64, at: SimTime, more: u64) -> Vec<(SimTime, bool)> {
        let mut flags = Vec::new();
        let mut sent: Vec<(SimTime, u64)> = Vec::new();
        let mut acked = 0;
        for ms in 1..=until_ms {
            let now = SimTime::from_ms(ms);
            let mut out = fire(&mut s, now);
            if now == at {
                let mut uid = 3000;
                let mut em = Emit {
                    now,
                    out: &mut out,
                    next_uid: &mut uid,
                };
                s.write(more * MSS, &mut em);
            }
            sent.extend(out.iter().map(|p| (now, p.seq / MSS + 1)));
            while let Some(&(t, end)) = sent.first() {
                if t + SimTime::from_ms(100) > now {
                    break;
                }
                sent.remove(0);
                if end <= acked {
                    continue;
                }
                acked = end;
                let out = feed(&mut s, &ack(end, &[]), now);
                sent.extend(out.iter().map(|p| (now, p.seq / MSS + 1)));
                if let Some(rs) = s.rate_sample() {
                    flags.push((now, rs.is_app_limited));
                }
            }
        }
        flags
    }
    // A 40 KB send buffer holds about twenty segments with their overhead:
    // the writer blocks, and is woken as the buffer drains.
    let c = TcpConfig {
        send_buffer: Some(40_000),
        ..bbr_cfg()
    };
    let (s, _) = opened(c, Some(100));
    let flags = run(s, 600, SimTime::MAX, 0);
    assert!(flags.len() > 40, "{} samples", flags.len());
    assert!(flags.iter().all(|&(_, a)| !a), "{flags:?}");
    // Thirty segments written at the start and thirty more at 300 ms: the
    // sender ran dry in between, and the second thirty's samples are
    // application-limited.
    let (s, _) = opened_with(bbr_cfg(), Some(100), 30 * MSS);
    let flags = run(s, 600, SimTime::from_ms(300), 30);
    let (before, after): (Vec<_>, Vec<_>) =
        flags.iter().partition(|(t, _)| *t < SimTime::from_ms(400));
    assert!(before.iter().all(|&&(_, a)| !a), "{flags:?}");
    assert!(
        !after.is_empty() && after.iter().all(|&&(_, a)| a),
        "{flags:?}"
    );
}

#[test]
fn a_recovery_that_ends_with_a_resend_still_deemed_lost_starts_the_next() {
    // Twenty segments at 0. At 500 ms segment 0 is missing and 1-3 are
    // SACKed: a recovery up to segment 20 (ssthresh 10), segment 0
    // resent, and new segments sent as it goes on. At 1000 ms segment 20,
    // sent after the recovery began, is missing while 21 is SACKed: RACK
    // deems it lost and it is resent within the recovery. At 1010 ms the
    // cumulative ACK reaches segment 20 and ends the recovery with
    // segment 20 still deemed lost (its resend in flight): the next
    // recovery starts on that ACK (tcp_time_to_recover() reads lost_out,
    // resent or not), so a control that sets cwnd itself sees one
    // recovery go on rather than an exit and an entry. The first
    // reduction ends (cwnd at its ssthresh) before the second cuts, so
    // Reno halves that ssthresh (tcp_end_cwnd_reduction(), then
    // tcp_init_cwnd_reduction()).
    let ms = SimTime::from_ms;
    let (mut s, first) = opened(linux_tlp_cfg(20), None);
    assert_eq!(first.len(), 20);
    let resent = feed(&mut s, &ack(0, &[(1, 4)]), ms(500));
    assert_eq!(seqs(&resent)[0], 0);
    assert!(s.in_recovery());
    assert_eq!(s.win.ssthresh, (10 * MSS) as f64);
    let more = feed(&mut s, &ack(0, &[(1, 16)]), ms(510));
    assert_eq!(seqs(&more)[..2], [20, 21]);
    let again = feed(&mut s, &ack(0, &[(1, 20), (21, 22)]), ms(1000));
    assert!(seqs(&again).contains(&20), "{:?}", seqs(&again));
    assert_eq!(s.stats.fast_retransmits, 1);
    feed(&mut s, &ack(20, &[(21, 22)]), ms(1010));
    assert!(s.in_recovery());
    assert_eq!(s.stats.fast_retransmits, 2);
    assert_eq!(s.win.ssthresh, (5 * MSS) as f64);
}
