//! ATSP equations against hand computations, fed packet by packet.

use crate::ids::{FlowId, NodeId};
use crate::packet::{flags, Packet, PacketKind};
use crate::time::SimTime;
use crate::transport::Emit;

use super::{increase, slowness, AtspConfig, AtspReceiver, AtspSender, Cut};

fn cfg() -> AtspConfig {
    AtspConfig {
        w_max: 500.0,
        ..AtspConfig::default()
    }
}

fn ms(t: u64) -> SimTime {
    SimTime::from_ms(t)
}

/// Run `f` with an [`Emit`] at `now`; returns what was sent.
fn emitting(now: SimTime, f: impl FnOnce(&mut Emit)) -> Vec<Packet> {
    let mut out = Vec::new();
    let mut uid = 0;
    f(&mut Emit {
        now,
        out: &mut out,
        next_uid: &mut uid,
    });
    out
}

fn data(seq: u64, cycle: u64, sent: SimTime, ce: bool) -> Packet {
    let mut p = Packet::new(0, FlowId(0), NodeId(0), NodeId(1), PacketKind::AtspData);
    p.seq = seq;
    p.ack = sent.ns();
    p.rwnd = cycle;
    p.flags = flags::ECT | if ce { flags::CE } else { 0 };
    p
}

fn sack(echo: SimTime, ack: u64, rho: f64, cycle: u32, holes: &[(u64, u64)]) -> Packet {
    let mut p = Packet::new(0, FlowId(0), NodeId(1), NodeId(0), PacketKind::AtspSack);
    p.seq = echo.ns();
    p.ack = ack;
    p.rwnd = rho.to_bits();
    p.len = cycle;
    p.set_sack_blocks(holes);
    p
}

/// Feed packets `seqs` (cycle `cycle`, CE on those in `marked`) to `r`;
/// returns the SACKs it sent.
fn feed(
    r: &mut AtspReceiver,
    seqs: impl Iterator<Item = u64>,
    cycle: u64,
    marked: &[u64],
) -> Vec<Packet> {
    let mut out = Vec::new();
    for s in seqs {
        out.extend(emitting(ms(s), |em| {
            r.on_data(&data(s, cycle, ms(s), marked.contains(&s)), em);
        }));
    }
    out
}

#[test]
fn receiver_sacks_every_alpha_packets() {
    let mut r = AtspReceiver::new(FlowId(0), NodeId(1), NodeId(0), &cfg());
    assert!(feed(&mut r, 0..19, 0, &[]).is_empty());
    let s = feed(&mut r, 19..20, 0, &[]);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].kind, PacketKind::AtspSack);
    assert_eq!(s[0].ack, 20);
    // It echoes the send time of the packet that triggered it.
    assert_eq!(s[0].seq, ms(19).ns());
    assert_eq!(feed(&mut r, 20..60, 0, &[]).len(), 2);
}

#[test]
fn eq2_rho_accumulates_marks_times_beta_and_restarts_each_cycle() {
    let mut r = AtspReceiver::new(FlowId(0), NodeId(1), NodeId(0), &cfg());
    // zeta_1 = 3: rho_{0,1} = 3e-3.
    let s = feed(&mut r, 0..20, 0, &[2, 5, 19]);
    assert_eq!(f64::from_bits(s[0].rwnd), 3.0 * 1e-3);
    // zeta_2 = 2: rho_{0,2} = rho_{0,1} + 2e-3 = 5e-3.
    let s = feed(&mut r, 20..40, 0, &[20, 33]);
    assert!((f64::from_bits(s[0].rwnd) - 5e-3).abs() < 1e-15);
    assert_eq!(s[0].len, 0);
    // Cycle 1 starts afresh: rho_{1,0} = 0, zeta_1 = 1.
    let s = feed(&mut r, 40..60, 1, &[45]);
    assert_eq!(f64::from_bits(s[0].rwnd), 1e-3);
    assert_eq!(s[0].len, 1);
    assert_eq!(r.marked, 6);
}

#[test]
fn receiver_reports_holes_and_counts_new_data() {
    let mut r = AtspReceiver::new(FlowId(0), NodeId(1), NodeId(0), &cfg());
    let seqs = (0..25).filter(|s| ![3, 7, 8].contains(s));
    let s = feed(&mut r, seqs, 0, &[]);
    assert_eq!(s.len(), 1, "22 packets, one SACK");
    assert_eq!(s[0].ack, 3);
    assert_eq!(s[0].sack_blocks(), &[(3, 4), (7, 9)]);
    // Filling 3 counts its 1,460 bytes and moves the in-order point to 7.
    let mut bytes = 0;
    emitting(ms(30), |em| {
        bytes = r.on_data(&data(3, 0, ms(30), false), em).bytes
    });
    assert_eq!(bytes, 1460);
    // 8 shrinks the hole to 7.
    let mut r2 = r.clone();
    emitting(ms(31), |em| {
        bytes = r2.on_data(&data(8, 0, ms(31), false), em).bytes
    });
    assert_eq!(bytes, 1460);
    assert_eq!(r2.holes(), &[(7, 8)]);
    assert_eq!(r.cumulative(), 7);
    // A duplicate is counted and delivers nothing.
    emitting(ms(32), |em| {
        bytes = r.on_data(&data(1, 0, ms(32), false), em).bytes
    });
    assert_eq!(bytes, 0);
    assert_eq!(r.duplicates, 1);
    assert_eq!(r.cumulative(), 7);
}

#[test]
fn receiver_walks_through_more_than_three_holes() {
    let mut r = AtspReceiver::new(FlowId(0), NodeId(1), NodeId(0), &cfg());
    let lost = [1, 3, 5, 7, 9];
    let seqs = (0..45).filter(|s| !lost.contains(s));
    let s = feed(&mut r, seqs, 0, &[]);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].sack_blocks(), &[(1, 2), (3, 4), (5, 6)]);
    assert_eq!(s[1].sack_blocks(), &[(7, 8), (9, 10)]);
}

/// A sender started at 0 whose first SACK (rho 0, measured RTT `rtt`)
/// arrived; returns it and the packets sent so far.
fn running(c: AtspConfig, rtt: SimTime) -> (AtspSender, Vec<Packet>) {
    let mut s = AtspSender::new(FlowId(0), NodeId(0), NodeId(1), c);
    s.start(SimTime::ZERO);
    let mut sent = Vec::new();
    // Pace until the first packet's SACK would arrive.
    while let Some(t) = s.next_wakeup().filter(|&t| t < rtt) {
        sent.extend(emitting(t, |em| s.on_timer(em)));
    }
    s.on_sack(&sack(SimTime::ZERO, 1, 0.0, 0, &[]), rtt);
    (s, sent)
}

#[test]
fn start_up_paces_alpha_per_initial_rtt_and_cycle_zero_ends_at_the_first_sack() {
    let (s, sent) = running(cfg(), ms(600));
    // w_0 = alpha = 20 over the initial RTT of 1 s: one packet per 50 ms.
    assert_eq!(sent.len(), 12);
    assert_eq!(sent[1].ack - sent[0].ack, ms(50).ns());
    assert!(sent.iter().all(|p| p.has(flags::ECT) && p.rwnd == 0));
    // Eq. 6 with Lambda = 0, N = 3/2: w_1 = 20 + (500 - 20) / 1.5 = 340.
    assert!((s.w - 340.0).abs() < 1e-9, "{}", s.w);
    assert_eq!(s.cycle, 1);
    assert_eq!(s.theta, Some(ms(600)));
}

#[test]
fn eq3_spacing_is_theta_over_w() {
    let (mut s, _) = running(cfg(), ms(600));
    s.w = 20.0;
    assert_eq!(s.spacing(), ms(30));
    let t0 = s.next_wakeup().unwrap();
    let a = emitting(t0, |em| s.on_timer(em));
    let t1 = s.next_wakeup().unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(t1 - t0, ms(30));
}

#[test]
fn eqs4_5_cycle_base_cuts_each_mark_once() {
    let (mut s, _) = running(cfg(), ms(600));
    s.w = 100.0;
    s.lambda = 0.0;
    s.on_sack(&sack(ms(10), 1, 0.01, 1, &[]), ms(610));
    assert_eq!(s.lambda, 0.01);
    assert!((s.w - 99.0).abs() < 1e-9);
    // rho_{1,2} = 0.03: w = 100 (1 - 0.03) = 97; Lambda = 0.01 + 0.03.
    s.on_sack(&sack(ms(20), 1, 0.03, 1, &[]), ms(620));
    assert!((s.lambda - 0.04).abs() < 1e-12);
    assert!((s.w - 97.0).abs() < 1e-9, "{}", s.w);
    // A SACK of the next receiver cycle cuts from the current window.
    s.on_sack(&sack(ms(30), 1, 0.01, 2, &[]), ms(630));
    assert!((s.w - 96.03).abs() < 1e-9, "{}", s.w);
}

#[test]
fn eq5_compound_cuts_by_the_whole_rho_at_every_sack() {
    let c = AtspConfig {
        cut: Cut::Compound,
        ..cfg()
    };
    let (mut s, _) = running(c, ms(600));
    s.w = 100.0;
    s.on_sack(&sack(ms(10), 1, 0.01, 1, &[]), ms(610));
    s.on_sack(&sack(ms(20), 1, 0.03, 1, &[]), ms(620));
    // 100 (1 - 0.01)(1 - 0.03) = 96.03.
    assert!((s.w - 96.03).abs() < 1e-9, "{}", s.w);
}

#[test]
fn eqs6_7_raise_toward_the_congestion_discounted_maximum() {
    // Lambda = 0.04, I = 3/2, h = 100: N = 5.5; w = 97, W_max = 500:
    // 97 + (0.96 * 500 - 97) / 5.5 = 166.6363...
    let n = slowness(1.5, 100.0, 0.04);
    assert!((n - 5.5).abs() < 1e-12);
    assert!((increase(97.0, 500.0, 0.04, n) - (97.0 + 383.0 / 5.5)).abs() < 1e-9);
    // Capped at W_max (an I below 1 overshoots: 400 + 100 / 0.5).
    assert_eq!(increase(400.0, 500.0, 0.0, 0.5), 500.0);
    // With Lambda > 1 the target is negative.
    assert!(increase(10.0, 500.0, 1.2, slowness(1.5, 100.0, 1.2)) < 10.0);
}

#[test]
fn a_cycle_end_applies_eq6_then_clears_lambda_and_floors_w() {
    let (mut s, _) = running(cfg(), ms(600));
    s.w = 97.0;
    s.lambda = 0.04;
    // The cycle that began at the first SACK (600 ms) ends at 1.2 s.
    let mut t = s.next_wakeup().unwrap();
    while t < ms(1200) {
        emitting(t, |em| s.on_timer(em));
        t = s.next_wakeup().unwrap();
    }
    // Keep the SACKs coming so the cycle counts as live.
    s.on_sack(&sack(ms(1100), 1, 0.0, 1, &[]), ms(1199));
    s.w = 97.0;
    s.lambda = 0.04;
    emitting(ms(1200), |em| s.on_timer(em));
    assert!((s.w - (97.0 + 383.0 / 5.5)).abs() < 1e-9, "{}", s.w);
    assert_eq!(s.lambda, 0.0);
    assert_eq!(s.cycle, 2);
    // Lambda > 1 drives eq. 6 below zero: the floor w_min holds.
    s.w = 2.0;
    s.lambda = 3.0;
    s.on_sack(&sack(ms(1700), 1, 0.0, 2, &[]), ms(1790));
    emitting(ms(1800), |em| s.on_timer(em));
    assert_eq!(s.w, 1.0);
}

#[test]
fn losses_are_resent_without_a_rate_cut() {
    let (mut s, sent) = running(cfg(), ms(600));
    assert!(sent.len() >= 10);
    let w = s.w;
    // Packets 4 and 5 missing when packet 9 (sent at 450 ms) arrived.
    s.on_sack(&sack(ms(450), 4, 0.0, 0, &[(4, 6)]), ms(1050));
    assert_eq!(s.w, w, "a loss does not cut the window");
    assert_eq!(s.pending_losses(), 2);
    let t = s.next_wakeup().unwrap();
    let a = emitting(t, |em| s.on_timer(em));
    assert_eq!((a[0].seq, a[0].has(flags::RETX)), (4, true));
    let t = s.next_wakeup().unwrap();
    let b = emitting(t, |em| s.on_timer(em));
    assert_eq!(b[0].seq, 5);
    // Then new data at the same pace.
    let t2 = s.next_wakeup().unwrap();
    let c = emitting(t2, |em| s.on_timer(em));
    assert_eq!(c[0].seq, sent.len() as u64);
    assert!(!c[0].has(flags::RETX));
    assert_eq!(t2 - t, s.spacing());
    // The same hole reported by a SACK echoing a packet sent before the
    // resend is not resent again; one echoing a later packet is.
    s.on_sack(&sack(ms(460), 4, 0.0, 0, &[(4, 5)]), t2);
    assert_eq!(s.pending_losses(), 0);
    s.on_sack(&sack(t2, 4, 0.0, 0, &[(4, 5)]), t2 + ms(600));
    assert_eq!(s.pending_losses(), 1);
    assert_eq!(s.stats.retransmits, 2);
}

#[test]
fn acknowledged_packets_leave_the_books() {
    let (mut s, sent) = running(cfg(), ms(600));
    assert_eq!(s.outstanding(), sent.len() as u64 - 1);
    s.on_sack(&sack(ms(500), sent.len() as u64, 0.0, 0, &[]), ms(1100));
    assert_eq!(s.outstanding(), 0);
}
