//! The TCP receiver: reassembly, ACK generation and the advertised window.
//!
//! * In-order data is delivered at once; out-of-order data is kept as
//!   byte ranges and reported in SACK blocks (RFC 2018: the block holding
//!   the newest segment first, then the others from the highest down).
//! * Delayed ACKs (RFC 5681 section 4.2): one ACK for every second
//!   full-sized segment, or when the timer expires; out-of-order segments,
//!   duplicates and segments that fill a hole are acknowledged at once.
//! * The advertised window is the free receive buffer (bytes delivered but
//!   not yet read by the application take space), capped at 65,535 bytes
//!   without window scaling.
//! * Quick ACKs (Linux, `tcp_incr_quickack()` and
//!   `tcp_enter_quickack_mode()` in `net/ipv4/tcp_input.c`): if the
//!   configuration asks for them, the first segments of a connection (16,
//!   or half the receive window in segments if fewer) are each acknowledged
//!   at once, so the sender's slow start is not slowed by delayed ACKs; so
//!   are the next two after a CE mark.
//! * Adaptive delayed-ACK timeout (Linux, `adaptive_ack`):
//!   `tcp_event_data_recv()` in `net/ipv4/tcp_input.c` keeps an estimate
//!   of the time between in-order data segments (`ato`, from
//!   `TCP_ATO_MIN` = 40 ms: halved towards short gaps, doubled when the
//!   timer fires, at most the receiver's RTO) and `tcp_send_delayed_ack()`
//!   in `tcp_output.c` arms the timer with it, at most half a second and
//!   the handshake's round trip, and at most `TCP_DELACK_MAX` (200 ms);
//!   a silence longer than the RTO puts the receiver back in quick-ACK
//!   mode. The receiver's RTO is Linux's from the handshake's sample
//!   (`tcp_rtt_estimator()`: the sample plus twice it, the second term at
//!   least `min_rto`), or `initial_rto` without a handshake.
//! * Receive-window autotuning (Linux, `receive_autotuning`): the
//!   advertised window is `rcv_ssthresh`, which starts near 64 KB (Linux's
//!   `tcp_rmem[1]` of 128 KB at half its size, less one segment,
//!   `tcp_init_buffer_space()`) and grows by two segments per data segment
//!   received while it is below the window the receive buffer allows
//!   (`tcp_grow_window()`); every growth puts the receiver in quick-ACK mode
//!   for one ACK (`icsk_ack.quick |= 1`), so while the window grows each
//!   segment is acknowledged at once. The buffer's window starts at
//!   `tcp_rmem[1]` scaled by the payload a full-sized segment carries per
//!   byte of socket memory and is raised once per round trip by Dynamic
//!   Right-Sizing (`tcp_rcv_space_adjust()`, `tcp_rcvbuf_grow()` in Linux
//!   6.18): with `copied` the bytes delivered in the last round trip and
//!   `space` the previous measure, if `copied > space` the window becomes
//!   2·copied·(1 + 2·(copied − space)/space) if larger, at most the
//!   receive buffer. The round trip is the receiver's own estimate
//!   (`rcv_rtt_est`): with `timestamps`, each ACK carries the time it left
//!   (TSval), the sender echoes the newest it has received in every
//!   segment (TSecr), and the time from an ACK to the first full-sized
//!   segment echoing it is a sample (in whole milliseconds, as the
//!   option counts); besides, the time to receive one advertised window
//!   is a sample that can only lower the estimate. A lower sample replaces
//!   the estimate, a higher one moves it by an eighth (Linux 6.18), so the
//!   measure lengthens as a queue builds on the path.
//! * ECN (RFC 3168 section 6.1.3): after a CE-marked segment, every ACK
//!   carries ECE until a segment with CWR arrives.
//! * DCTCP's feedback (RFC 8257 section 3.2, Linux's
//!   `dctcp_ece_ack_update()` in `net/ipv4/tcp_dctcp.h`): a two-state
//!   machine, the CE state of the last segment. ECE on an ACK is that
//!   state. When a segment's CE state differs from the last one's, an ACK
//!   held back by delayed ACKs goes at once with the old state (covering
//!   the segments before this one), and this segment is acknowledged at
//!   once with the new state; so each ACK's ECE tells exactly whether the
//!   segments it acknowledges were marked.
//! * AccECN (RFC 9768 section 3.2): the receiver counts CE-marked segments
//!   from 5 and every ACK carries the count modulo 8 in AE, CWR and ECE
//!   (the ACE field). A CE-marked segment after an unmarked one is
//!   acknowledged at once (section 3.2.2.5.1's change-triggered ACK);
//!   delayed ACKs cover at most two segments, so the field cannot wrap
//!   between two ACKs.

use crate::ids::{FlowId, NodeId};
use crate::packet::{flags, Packet, PacketKind, MAX_SACK_BLOCKS};
use crate::time::SimTime;
use crate::transport::Emit;

use super::clock::TimerClock;
use super::config::{EcnFeedback, Recovery, TcpConfig};
use super::ecn::ACE_INIT;
use super::rtt::{RtoRule, RttEstimator};

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    pub segments: u64,
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    pub ce_marks: u64,
    pub acks_sent: u64,
}

#[derive(Clone, Debug)]
pub struct TcpReceiver {
    pub flow: FlowId,
    /// This endpoint (the data destination).
    pub node: NodeId,
    /// The data sender.
    pub peer: NodeId,
    delayed_ack: bool,
    delayed_ack_timeout: SimTime,
    /// When the delayed-ACK timer fires ([`TimerClock`]).
    clock: TimerClock,
    sack: bool,
    /// Report duplicate segments in the first SACK block (D-SACK).
    dsack: bool,
    /// The duplicate range the next ACK reports first (RFC 2883), once.
    dsack_block: Option<(u64, u64)>,
    max_window: u64,
    /// Next byte expected.
    pub rcv_nxt: u64,
    /// Out-of-order ranges above `rcv_nxt`, sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    /// Start of the range holding the newest out-of-order segment.
    newest_ooo: Option<u64>,
    /// Full-sized segments received since the last ACK.
    unacked_segments: u32,
    /// ACKs still to send at once, one per segment (quick-ACK mode).
    quick: u32,
    /// Quick ACKs at the first segment (0: none).
    quickack_start: u32,
    ack_deadline: Option<SimTime>,
    /// Linux's adaptive delayed-ACK timeout, if on.
    adaptive: Option<Ato>,
    /// Linux's receive-window autotuning, if on.
    autotune: Option<Box<Autotune>>,
    /// RFC 3168: echo ECE until CWR. DCTCP and AccECN: the last segment
    /// was CE-marked.
    ece: bool,
    feedback: EcnFeedback,
    /// AccECN's CE packet counter (r.cep), from 5.
    ce_count: u64,
    /// Delivered in order but not yet read by the application.
    unread: u64,
    /// Bytes the application holds elsewhere on this connection's behalf (a
    /// PEP's data not yet acknowledged downstream); they count against the
    /// advertised window, so a full relay buffer back-pressures the sender.
    held: u64,
    /// The window advertised in the last ACK.
    last_adv: u64,
    /// `rcv_nxt` when the last ACK was sent (`rcv_wup`).
    acked_to: u64,
    /// TS.Recent (RFC 7323 section 4.3): the TSval of the latest segment
    /// at the left edge of the window, echoed in every ACK.
    ts_recent: u64,
    /// Reads happen as data arrives (a plain sink).
    pub auto_read: bool,
    fin_at: Option<u64>,
    closed: bool,
    syn_seen: bool,
    /// When the last SYN-ACK left (the handshake's round trip ends with the
    /// first data segment).
    synack_at: Option<SimTime>,
    /// ECN is on at this end and a SYN asked for it (ECE and CWR set, and
    /// AE with AccECN): the SYN-ACK says yes, with ECE (RFC 3168 section
    /// 6.1.1; DCTCP negotiates so too) or with AccECN's (AE, CWR, ECE) =
    /// (0, 1, 0), a Not-ECT SYN echoed (RFC 9768 section 3.1.1). Sticky,
    /// as Linux's request socket keeps `ecn_ok` from the first SYN.
    ecn_setup: bool,
    /// ECN is on at this end.
    ecn_on: bool,
    mss: u32,
    /// Bytes of an ACK ([`TcpConfig::ack_header`]).
    ack_size: u32,
    /// ACKs carry the timestamps option (RFC 7323).
    timestamps: bool,
    pub stats: ReceiverStats,
}

/// Linux's delayed-ACK timing (`icsk_ack.ato`, `lrcvtime`, and the RTO and
/// smoothed RTT the receiving socket knows from the handshake).
#[derive(Clone, Debug)]
struct Ato {
    /// The current estimate; zero before the first data segment.
    ato: SimTime,
    /// When the last in-order data segment arrived.
    lrcvtime: SimTime,
    /// Linux's estimator, fed the handshake's round trip (its first
    /// sample: the RTO is the sample plus max(twice it, `min_rto`)).
    rtt: RttEstimator,
}

/// `TCP_ATO_MIN` and `TCP_DELACK_MIN` (HZ/25).
const ATO_MIN: SimTime = SimTime::from_ms(40);
/// `TCP_DELACK_MAX` (HZ/5), `icsk_delack_max`'s default.
const DELACK_MAX: SimTime = SimTime::from_ms(200);
/// `tcp_send_delayed_ack()`'s `max_ato` without an RTT (HZ/2).
const MAX_ATO: SimTime = SimTime::from_ms(500);

impl Ato {
    /// `tcp_event_data_recv()`: an in-order data segment at `now`, the
    /// SYN-ACK having left at `synack_at`; true if the receiver should
    /// (re)enter quick-ACK mode.
    fn on_data(&mut self, now: SimTime, synack_at: Option<SimTime>) -> bool {
        if let (SimTime::ZERO, Some(sent)) = (self.ato, synack_at) {
            // The first data segment measures the handshake.
            self.rtt.sample(now - sent, 0, 0);
        }
        let rto = self.rtt.rto();
        let mut quick = false;
        if self.ato == SimTime::ZERO {
            self.ato = ATO_MIN;
            quick = true;
        } else {
            let m = now - self.lrcvtime;
            if m <= SimTime(ATO_MIN.0 / 2) {
                self.ato = SimTime(self.ato.0 / 2 + ATO_MIN.0 / 2);
            } else if m < self.ato {
                self.ato = SimTime(self.ato.0 / 2 + m.0).min(rto);
            } else if m > rto {
                quick = true;
            }
        }
        self.lrcvtime = now;
        quick
    }

    /// `tcp_send_delayed_ack()`'s timeout for an ACK held back at `now`.
    fn delay(&self) -> SimTime {
        let mut ato = self.ato;
        if ato > ATO_MIN {
            let mut max_ato = MAX_ATO;
            if let Some(srtt) = self.rtt.srtt() {
                max_ato = max_ato.min(srtt.max(ATO_MIN));
            }
            ato = ato.min(max_ato);
        }
        ato.min(DELACK_MAX)
    }

    /// `tcp_delack_timer_handler()`: the timer fired with an ACK held back.
    fn on_timer(&mut self) {
        self.ato = SimTime(self.ato.0 * 2).min(self.rtt.rto());
    }
}

/// `tcp_rmem[1]`, the receive buffer a Linux socket starts with.
const RMEM_DEFAULT: u64 = 131_072;
/// The window a byte of receive buffer stands for before any data
/// (`TCP_DEFAULT_SCALING_RATIO`, 128/256).
const INIT_SCALING: (u64, u64) = (128, 256);
/// The same once data arrives (`tcp_measure_rcv_mss()` sets
/// `scaling_ratio` to a full segment's length over its memory): 158/256,
/// as a Linux 6.18 receiver measured it for 1,500-byte packets (its window
/// stopped growing at 80,896 bytes of its 131,072-byte buffer).
const DATA_SCALING: (u64, u64) = (158, 256);

/// Linux's receive-window autotuning: `rcv_ssthresh` and the window the
/// buffer allows (`window_clamp`), with Dynamic Right-Sizing's per-RTT
/// measure (`rcvq_space`) and the receiver's RTT estimate (`rcv_rtt_est`).
#[derive(Clone, Debug)]
struct Autotune {
    /// The window to advertise (at most).
    rcv_ssthresh: u64,
    /// The window the receive buffer allows.
    clamp: u64,
    /// The receive buffer's largest window (`receive_buffer`).
    cap: u64,
    /// `rcvq_space.space`: the bytes delivered in the last measured round
    /// trip.
    space: u64,
    /// `rcv_nxt`, and when, at the last measure.
    mark_bytes: u64,
    mark_time: SimTime,
    /// The receiver's RTT estimate.
    rtt: RcvRtt,
    /// Growth per segment received: two segments.
    step: u64,
    /// The first data segment has set the buffer's window.
    measured: bool,
}

/// A receiver's round-trip estimate, which paces Dynamic Right-Sizing
/// (Linux 6.18's `rcv_rtt_est`, `tcp_rcv_rtt_update()`,
/// `tcp_rcv_rtt_measure()` and `tcp_rcv_rtt_measure_ts()` in
/// `net/ipv4/tcp_input.c`). Two kinds of sample: with timestamps, the time
/// from an ACK's TSval to the first full-sized segment that echoes it,
/// counted in the option's whole milliseconds (a zero is no sample); and
/// on every in-order segment, the time the receiver took to get a whole
/// advertised window beyond the point where the last such measure began.
/// A sample below the estimate replaces it; a larger timestamp sample
/// moves it by an eighth (if nothing waits unread); a larger window
/// sample is ignored.
#[derive(Clone, Copy, Debug, Default)]
struct RcvRtt {
    /// Eight times the estimate, in microseconds (0: none yet).
    us8: u64,
    /// The last TSecr seen, in milliseconds.
    last_ecr_ms: Option<u64>,
    /// The window measure: the byte to reach, and when it began.
    win_end: u64,
    win_at: Option<SimTime>,
}

impl RcvRtt {
    /// The estimate, if any.
    fn get(&self) -> Option<SimTime> {
        (self.us8 > 0).then(|| SimTime::from_us(self.us8 >> 3))
    }

    /// `tcp_rcv_rtt_update()`.
    fn update(&mut self, sample_us: u64, window_based: bool, queue_empty: bool) {
        let m = sample_us << 3;
        if self.us8 == 0 || m < self.us8 {
            self.us8 = m;
        } else if !window_based && queue_empty {
            self.us8 = self.us8 - (self.us8 >> 3) + sample_us;
        }
    }

    /// `tcp_rcv_rtt_measure_ts()`: a segment of `len` payload bytes
    /// echoing the TSval `ecr` (ns) arrived at `now`.
    fn on_echo(&mut self, now: SimTime, ecr: u64, len: u64, mss: u64, queue_empty: bool) {
        let ecr_ms = ecr / 1_000_000;
        if self.last_ecr_ms == Some(ecr_ms) {
            return;
        }
        self.last_ecr_ms = Some(ecr_ms);
        let delta_ms = (now.ns() / 1_000_000).saturating_sub(ecr_ms);
        if len >= mss && delta_ms > 0 {
            self.update(delta_ms * 1000, false, queue_empty);
        }
    }

    /// `tcp_rcv_rtt_measure()`: in-order data brought the next byte
    /// expected to `rcv_nxt` at `now`, the last ACK having offered
    /// `rcv_wnd`.
    fn on_in_order(&mut self, now: SimTime, rcv_nxt: u64, rcv_wnd: u64) {
        if let Some(at) = self.win_at {
            if rcv_nxt < self.win_end {
                return;
            }
            self.update(((now - at).ns() / 1000).max(1), true, true);
        }
        self.win_end = rcv_nxt + rcv_wnd;
        self.win_at = Some(now);
    }
}

impl Autotune {
    fn new(cfg: &TcpConfig) -> Autotune {
        let cap = cfg.max_advertised_window();
        // The MSS option's value (Linux's advmss): the payload plus the
        // timestamps option when it is on.
        let advmss = cfg.mss as u64 + if cfg.timestamps { 12 } else { 0 };
        // tcp_init_buffer_space(): the buffer's window less one segment
        // (reserved), the first measure ten segments.
        let full = RMEM_DEFAULT * INIT_SCALING.0 / INIT_SCALING.1;
        let clamp = (full - advmss).max(2 * advmss).min(cap);
        Autotune {
            rcv_ssthresh: clamp,
            clamp,
            cap,
            space: (10 * advmss).min(clamp),
            mark_bytes: 0,
            mark_time: SimTime::ZERO,
            rtt: RcvRtt::default(),
            step: 2 * cfg.mss as u64,
            measured: false,
        }
    }

    /// A data segment of `len` bytes arrived at `now`, the next byte
    /// expected then `rcv_nxt`, with `unread` bytes (this segment's
    /// included) not yet read, and the application reads (`read`: it was
    /// in order); true if the window grew (the next ACK goes at once).
    fn on_data(&mut self, now: SimTime, len: u64, rcv_nxt: u64, unread: u64, read: bool) -> bool {
        if !self.measured {
            // tcp_measure_rcv_mss(): the buffer's window at the measured
            // payload per byte of memory.
            self.measured = true;
            self.clamp = (RMEM_DEFAULT * DATA_SCALING.0 / DATA_SCALING.1).min(self.cap);
            self.rcv_ssthresh = self.rcv_ssthresh.min(self.clamp);
            self.mark_time = now;
        }
        // tcp_grow_window(): room below what the buffer allows, less what
        // waits unread.
        let room = self
            .clamp
            .saturating_sub(unread)
            .saturating_sub(self.rcv_ssthresh);
        let grew = len > 0 && room > 0;
        if grew {
            self.rcv_ssthresh += room.min(self.step.max(2 * len));
        }
        // tcp_rcv_space_adjust() as the application reads: once per round
        // trip.
        if let (true, Some(rtt)) = (read, self.rtt.get()) {
            if now - self.mark_time >= rtt {
                let copied = rcv_nxt - self.mark_bytes;
                if copied > self.space {
                    self.drs(copied);
                }
                self.mark_bytes = rcv_nxt;
                self.mark_time = now;
            }
        }
        grew
    }

    /// tcp_rcvbuf_grow(): `copied` bytes arrived in the last round trip,
    /// more than the measure before.
    fn drs(&mut self, copied: u64) {
        let old = self.space;
        self.space = copied;
        let mut win = 2 * copied;
        let grow = (win as u128 * (copied - old) as u128 / old.max(1) as u128) as u64;
        win = win.saturating_add(grow.saturating_mul(2));
        self.clamp = self.clamp.max(win.min(self.cap));
    }
}

/// What a segment meant for the application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Bytes that became deliverable in order.
    pub bytes: u64,
    /// The sender's last byte has arrived.
    pub closed: bool,
}

impl TcpReceiver {
    pub fn new(flow: FlowId, node: NodeId, peer: NodeId, cfg: &TcpConfig) -> TcpReceiver {
        TcpReceiver {
            flow,
            node,
            peer,
            delayed_ack: cfg.delayed_ack,
            delayed_ack_timeout: cfg.delayed_ack_timeout,
            clock: TimerClock::hz(cfg.timer_hz),
            sack: cfg.recovery == Recovery::Sack,
            dsack: cfg.dsack,
            dsack_block: None,
            max_window: cfg.max_advertised_window(),
            rcv_nxt: 0,
            ooo: Vec::new(),
            newest_ooo: None,
            unacked_segments: 0,
            quick: 0,
            quickack_start: cfg
                .quickack
                .min((cfg.max_advertised_window() / (2 * cfg.mss as u64)).max(2) as u32),
            ack_deadline: None,
            adaptive: cfg.adaptive_ack.then_some(Ato {
                ato: SimTime::ZERO,
                lrcvtime: SimTime::ZERO,
                rtt: RttEstimator::new(RtoRule::Linux, cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            }),
            autotune: cfg.receive_autotuning.then(|| Box::new(Autotune::new(cfg))),
            ece: false,
            feedback: if cfg.ecn {
                cfg.ecn_feedback
            } else {
                EcnFeedback::Classic
            },
            ce_count: ACE_INIT,
            unread: 0,
            held: 0,
            last_adv: 0,
            acked_to: 0,
            ts_recent: 0,
            auto_read: true,
            fin_at: None,
            closed: false,
            syn_seen: false,
            synack_at: None,
            ecn_setup: false,
            ecn_on: cfg.ecn,
            mss: cfg.mss,
            ack_size: cfg.ack_header(),
            timestamps: cfg.timestamps,
            stats: ReceiverStats::default(),
        }
    }

    /// The window to advertise.
    pub fn window(&self) -> u64 {
        let free = self.max_window.saturating_sub(self.unread + self.held);
        match &self.autotune {
            Some(a) => free.min(a.rcv_ssthresh),
            None => free,
        }
    }

    /// The round-trip estimate that paces receive-window autotuning, once
    /// it has one (`None` without autotuning).
    pub fn rtt_estimate(&self) -> Option<SimTime> {
        self.autotune.as_ref().and_then(|a| a.rtt.get())
    }

    /// A SYN or data has arrived (the connection is being used).
    pub fn started(&self) -> bool {
        self.stats.segments > 0 || self.syn_seen
    }

    /// Take up to `bytes` delivered bytes without acknowledging (a relay
    /// moving data on; it then calls [`set_held`](Self::set_held)).
    pub fn take(&mut self, bytes: u64) -> u64 {
        let n = bytes.min(self.unread);
        self.unread -= n;
        n
    }

    /// Set the bytes held elsewhere; if the window has opened by at least
    /// one segment since the last advertisement, send a window update.
    pub fn set_held(&mut self, held: u64, em: &mut Emit) {
        self.held = held;
        self.window_update(em);
    }

    fn window_update(&mut self, em: &mut Emit) {
        if self.window() >= self.last_adv + self.mss as u64 && self.started() {
            self.send_ack(em);
        }
    }

    pub fn unread(&self) -> u64 {
        self.unread
    }

    /// The application consumes up to `bytes`; if that reopens a window
    /// that was nearly closed, a window update is sent.
    pub fn read(&mut self, bytes: u64, em: &mut Emit) -> u64 {
        let n = self.take(bytes);
        if n > 0 {
            self.window_update(em);
        }
        n
    }

    pub fn next_wakeup(&self) -> Option<SimTime> {
        self.ack_deadline
    }

    pub fn on_timer(&mut self, em: &mut Emit) {
        if let Some(d) = self.ack_deadline {
            if em.now >= d {
                if let Some(a) = &mut self.adaptive {
                    a.on_timer();
                }
                self.send_ack(em);
            }
        }
    }

    /// A SYN or data segment from the sender.
    pub fn on_segment(&mut self, pkt: &Packet, em: &mut Emit) -> Delivery {
        if pkt.kind == PacketKind::Syn {
            self.syn_seen = true;
            self.ecn_setup |= self.ecn_on && pkt.has(flags::ECE) && pkt.has(flags::CWR);
            self.synack_at = Some(em.now);
            self.last_adv = self.window();
            let mut p = em.packet(self.flow, self.node, self.peer, PacketKind::SynAck);
            p.size = self.ack_size;
            p.ack = self.rcv_nxt;
            p.rwnd = self.window();
            if self.timestamps {
                p.set_ts_val(em.now);
            }
            if self.ecn_setup {
                p.flags |= if self.feedback == EcnFeedback::AccEcn {
                    flags::CWR
                } else {
                    flags::ECE
                };
            }
            em.send(p);
            return Delivery::default();
        }
        self.stats.segments += 1;
        if self.stats.segments == 1 {
            self.quick = self.quickack_start;
        }
        let mut ce_changed = false;
        if self.feedback == EcnFeedback::Classic {
            if pkt.has(flags::CWR) {
                self.ece = false;
            }
            if pkt.has(flags::CE) {
                self.ece = true;
                self.stats.ce_marks += 1;
                if self.quickack_start > 0 {
                    // Linux: do not delay ACKs to a sender whose window may be
                    // small now.
                    self.quick = self.quick.max(2);
                }
            }
        } else {
            ce_changed = self.ce_feedback(pkt, em);
        }
        if pkt.has(flags::FIN) {
            self.fin_at = Some(pkt.seq + pkt.len as u64);
        }
        let (start, end) = (pkt.seq, pkt.seq + pkt.len as u64);
        if self.timestamps && start <= self.acked_to {
            // tcp_store_ts_recent(): a segment at or below the left edge as
            // last acknowledged, not older than the last (PAWS).
            self.ts_recent = self.ts_recent.max(pkt.ts_val());
        }
        if let (true, Some(a)) = (self.timestamps && end > self.rcv_nxt, &mut self.autotune) {
            // A full-sized segment: the receiver's `mss` (`icsk_ack.rcv_mss`).
            let queue_empty = self.unread + self.held == 0;
            let (len, mss) = (pkt.len as u64, self.mss as u64);
            a.rtt.on_echo(em.now, pkt.ts_ecr(), len, mss, queue_empty);
        }
        let mut delivered = 0;
        let immediate;
        if end <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            immediate = true;
            self.on_duplicate(start, end);
        } else if start <= self.rcv_nxt {
            if start < self.rcv_nxt {
                // Its head was here already (`tcp_data_queue()`).
                self.on_duplicate(start, self.rcv_nxt);
            }
            let had_holes = !self.ooo.is_empty();
            let old = self.rcv_nxt;
            self.rcv_nxt = end;
            if let Some(a) = &mut self.autotune {
                // tcp_event_data_recv() measures before the out-of-order
                // data this segment joins is pulled in.
                a.rtt.on_in_order(em.now, end, self.last_adv);
            }
            // Pull in out-of-order ranges now contiguous.
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo.remove(0);
            }
            if self.ooo.is_empty() {
                self.newest_ooo = None;
            }
            delivered = self.rcv_nxt - old;
            self.unread += delivered;
            self.unacked_segments += 1;
            if let Some(a) = &mut self.adaptive {
                if a.on_data(em.now, self.synack_at) {
                    // tcp_incr_quickack(): never fewer than it has left.
                    self.quick = self.quick.max(self.quickack_start);
                }
            }
            self.grow_window(em.now, pkt.len as u64, 0, true);
            immediate = had_holes
                || !self.delayed_ack
                || self.unacked_segments >= 2
                || self.quick > 0
                || ce_changed;
        } else {
            self.stats.out_of_order_segments += 1;
            if self.dsack {
                // Held already, wholly or in part (`tcp_data_queue_ofo()`).
                if let Some(&(s, e)) = self.ooo.iter().find(|r| r.0 < end && start < r.1) {
                    self.dsack_block = Some((start.max(s), end.min(e)));
                }
            }
            self.insert_ooo(start, end);
            immediate = true;
            // tcp_data_queue_ofo() grows the window too, under SACK.
            if self.sack {
                self.grow_window(em.now, pkt.len as u64, pkt.len as u64, false);
            }
        }
        if self.auto_read {
            self.unread = 0;
        }
        if immediate {
            self.send_ack(em);
        } else if self.ack_deadline.is_none() {
            // One segment held back (a second is acknowledged at once).
            let delay = match &self.adaptive {
                Some(a) => a.delay(),
                None => self.delayed_ack_timeout,
            };
            self.ack_deadline = Some(self.clock.fires(em.now, delay));
        }
        let closed = !self.closed && self.fin_at.is_some_and(|f| self.rcv_nxt >= f);
        if closed {
            self.closed = true;
        }
        Delivery {
            bytes: delivered,
            closed,
        }
    }

    /// Receive-window autotuning for a data segment of `len` bytes, with
    /// `queued` bytes held out of order besides the unread ones, read by
    /// the application if `read`: a growth of the window sends the next
    /// ACK at once (`icsk_ack.quick |= 1`).
    fn grow_window(&mut self, now: SimTime, len: u64, queued: u64, read: bool) {
        if let Some(a) = &mut self.autotune {
            let unread = self.unread + self.held + queued;
            if a.on_data(now, len, self.rcv_nxt, unread, read) {
                self.quick |= 1;
            }
        }
    }

    /// DCTCP's or AccECN's receiver side for a data segment: whether it
    /// must be acknowledged at once.
    #[inline(never)]
    fn ce_feedback(&mut self, pkt: &Packet, em: &mut Emit) -> bool {
        let ce = pkt.has(flags::CE);
        if ce {
            self.stats.ce_marks += 1;
        }
        let changed = ce != self.ece;
        match self.feedback {
            EcnFeedback::Classic => return false,
            EcnFeedback::Dctcp => {
                if changed && self.ack_deadline.is_some() {
                    // The delayed ACK, for the segments before this one,
                    // with their state.
                    self.send_ack(em);
                }
            }
            EcnFeedback::AccEcn => {
                if ce {
                    self.ce_count += 1;
                }
            }
        }
        self.ece = ce;
        match self.feedback {
            EcnFeedback::AccEcn => changed && ce,
            _ => changed,
        }
    }

    /// Data below `rcv_nxt` arrived again: report it in a D-SACK
    /// (`tcp_dsack_set()`), and, as Linux's receiver, acknowledge the next
    /// segments at once (`tcp_enter_quickack_mode()`: the sender may have
    /// resent them after a timeout and be waiting with a small window).
    fn on_duplicate(&mut self, start: u64, end: u64) {
        if self.dsack {
            self.dsack_block = Some((start, end));
        }
        if self.quickack_start > 0 {
            self.quick = self.quick.max(self.quickack_start);
            if let Some(a) = self.adaptive.as_mut().filter(|a| a.ato > SimTime::ZERO) {
                a.ato = ATO_MIN;
            }
        }
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        let i = self.ooo.partition_point(|r| r.1 < start);
        let mut s = start;
        let mut e = end;
        let mut j = i;
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        self.ooo.splice(i..j, std::iter::once((s, e)));
        self.newest_ooo = Some(s);
    }

    fn send_ack(&mut self, em: &mut Emit) {
        let mut p = em.packet(self.flow, self.node, self.peer, PacketKind::TcpAck);
        p.ack = self.rcv_nxt;
        p.rwnd = self.window();
        self.last_adv = p.rwnd;
        p.size = self.ack_size;
        if self.timestamps {
            p.set_ts_val(em.now);
            p.set_ts_ecr(self.ts_recent);
        }
        self.acked_to = self.rcv_nxt;
        if self.feedback == EcnFeedback::AccEcn {
            p.flags |= flags::ace_flags((self.ce_count % 8) as u8);
        } else if self.ece {
            p.flags |= flags::ECE;
        }
        let dsack = self.dsack_block.take();
        if self.sack && (!self.ooo.is_empty() || dsack.is_some()) {
            let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
            let mut n = 0;
            // RFC 2883: the duplicate range first, then the usual blocks.
            if let Some(d) = dsack {
                blocks[0] = d;
                n = 1;
            }
            let first_sack = n;
            if let Some(first) = self
                .newest_ooo
                .and_then(|s| self.ooo.iter().find(|r| r.0 == s))
            {
                blocks[n] = *first;
                n += 1;
            }
            for r in self.ooo.iter().rev() {
                if n == MAX_SACK_BLOCKS {
                    break;
                }
                if n > first_sack && *r == blocks[first_sack] {
                    continue;
                }
                blocks[n] = *r;
                n += 1;
            }
            p.set_sack_blocks(&blocks[..n]);
            // SACK option: kind, length and 8 bytes per block, padded to 4.
            p.size += (2 + 8 * n as u32).div_ceil(4) * 4;
        }
        self.unacked_segments = 0;
        self.quick = self.quick.saturating_sub(1);
        self.ack_deadline = None;
        self.stats.acks_sent += 1;
        em.send(p);
    }
}

/// Feed `pkt` to `r` at `ms`; the packets it sends.
#[cfg(test)]
fn feed_at(r: &mut TcpReceiver, pkt: &Packet, ms: f64) -> Vec<Packet> {
    let (mut out, mut uid) = (Vec::new(), 0);
    r.on_segment(
        pkt,
        &mut Emit {
            now: SimTime::from_secs_f64(ms / 1e3),
            out: &mut out,
            next_uid: &mut uid,
        },
    );
    out
}

#[cfg(test)]
mod adaptive_tests {
    use super::*;

    const MSS: u64 = 1460;

    fn receiver(quickack: u32) -> TcpReceiver {
        let c = TcpConfig {
            adaptive_ack: true,
            quickack,
            min_rto: SimTime::from_ms(200),
            ..TcpConfig::default()
        };
        TcpReceiver::new(FlowId(0), NodeId(1), NodeId(0), &c)
    }

    /// Feed `pkt` at `ms`; the ACKs sent.
    fn feed(r: &mut TcpReceiver, pkt: &Packet, ms: f64) -> usize {
        feed_at(r, pkt, ms).len()
    }

    fn syn() -> Packet {
        Packet::new(0, FlowId(0), NodeId(0), NodeId(1), PacketKind::Syn)
    }

    fn data(k: u64) -> Packet {
        let mut p = Packet::new(k + 1, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
        p.seq = k * MSS;
        p.len = MSS as u32;
        p
    }

    fn ato_ms(r: &TcpReceiver) -> f64 {
        r.adaptive.as_ref().unwrap().ato.secs_f64() * 1e3
    }

    #[test]
    fn acks_carry_the_timestamps_option_when_it_is_on() {
        // SYN-ACK and ACK: 40 or 52 bytes; then three segments beyond
        // holes, ACKs with one, two and three SACK blocks: 4 + 8 bytes a
        // block more (two NOPs, kind and length), as Linux sends them.
        for (timestamps, size) in [(false, 40), (true, 52)] {
            let c = TcpConfig {
                timestamps,
                delayed_ack: false,
                recovery: Recovery::Sack,
                ..TcpConfig::default()
            };
            let mut r = TcpReceiver::new(FlowId(0), NodeId(1), NodeId(0), &c);
            let mut out = Vec::new();
            for (k, pkt) in [syn(), data(0), data(2), data(4), data(6)]
                .iter()
                .enumerate()
            {
                out.extend(feed_at(&mut r, pkt, 100.0 * k as f64));
            }
            let sizes: Vec<u32> = out.iter().map(|p| p.size).collect();
            assert_eq!(
                sizes,
                vec![size, size, size + 12, size + 20, size + 28],
                "timestamps {timestamps}"
            );
            // The TSval is when the ACK left, if the option is on.
            let ts: Vec<u64> = out.iter().map(|p| p.ts_val()).collect();
            let expected: Vec<u64> = (0..5)
                .map(|k| if timestamps { k * 100_000_000 } else { 0 })
                .collect();
            assert_eq!(ts, expected);
        }
    }

    #[test]
    fn ato_follows_the_gaps_between_segments() {
        let mut r = receiver(0);
        feed(&mut r, &syn(), 0.0);
        // The first data segment, 600 ms after the SYN-ACK: the round trip
        // 600 ms, the RTO 600 + max(1,200, 200) = 1,800 ms; ato 40 ms, and
        // the held-back ACK waits 40 ms.
        assert_eq!(feed(&mut r, &data(0), 600.0), 0);
        let a = r.adaptive.as_ref().unwrap();
        assert_eq!(
            (a.rtt.srtt(), a.rtt.rto()),
            (Some(SimTime::from_ms(600)), SimTime::from_ms(1800))
        );
        assert_eq!(ato_ms(&r), 40.0);
        assert_eq!(r.next_wakeup(), Some(SimTime::from_ms(640)));
        // Gaps of 30, 30 and 20 ms: ato/2 + 30 = 50, then 55; a gap of at
        // most 20 ms gives ato/2 + 20 = 47.5.
        assert_eq!(feed(&mut r, &data(1), 630.0), 1); // the second: at once
        assert_eq!(ato_ms(&r), 50.0);
        assert_eq!(feed(&mut r, &data(2), 660.0), 0);
        assert_eq!(ato_ms(&r), 55.0);
        // ato above 40 ms: at most the round trip and 200 ms; 55 ms here.
        assert_eq!(r.next_wakeup(), Some(SimTime::from_ms(715)));
        assert_eq!(feed(&mut r, &data(3), 680.0), 1);
        assert_eq!(ato_ms(&r), 47.5);
        // A gap above ato and below the RTO leaves it.
        assert_eq!(feed(&mut r, &data(4), 780.0), 0);
        assert_eq!(ato_ms(&r), 47.5);
        // The timer fires with the ACK held back: ato doubles (at most the
        // RTO), and the next held-back ACK waits min(95, 200) ms.
        let (mut out, mut uid) = (Vec::new(), 0);
        let due = r.next_wakeup().unwrap();
        assert_eq!(due, SimTime::from_secs_f64(0.8275));
        r.on_timer(&mut Emit {
            now: due,
            out: &mut out,
            next_uid: &mut uid,
        });
        assert_eq!((out.len(), ato_ms(&r)), (1, 95.0));
        assert_eq!(feed(&mut r, &data(5), 1000.0), 0);
        assert_eq!(r.next_wakeup(), Some(SimTime::from_ms(1095)));
    }

    #[test]
    fn a_silence_longer_than_the_rto_brings_quick_acks_back() {
        let mut r = receiver(16);
        feed(&mut r, &syn(), 0.0);
        // Quick ACKs for the first 16 segments, then every second one.
        let acks: Vec<usize> = (0..20)
            .map(|k| feed(&mut r, &data(k), 600.0 + k as f64))
            .collect();
        assert_eq!(acks[..16], [1; 16]);
        assert_eq!(acks[16..], [0, 1, 0, 1]);
        // 1.7 s of silence (below the 1.8 s RTO): still every second one.
        assert_eq!(feed(&mut r, &data(20), 2319.0), 0);
        assert_eq!(feed(&mut r, &data(21), 2320.0), 1);
        // 1.9 s: each of the next 16 segments is acknowledged at once.
        let acks: Vec<usize> = (22..40)
            .map(|k| feed(&mut r, &data(k), 4220.0 + k as f64))
            .collect();
        assert_eq!(acks[..16], [1; 16]);
        assert_eq!(acks[16..], [0, 1]);
    }

    #[test]
    fn without_a_handshake_the_rto_is_the_initial_one() {
        let mut r = receiver(0);
        assert_eq!(feed(&mut r, &data(0), 100.0), 0);
        let a = r.adaptive.as_ref().unwrap();
        assert_eq!((a.rtt.srtt(), a.rtt.rto()), (None, SimTime::from_secs(1)));
        // ato 40 ms; at 300 ms (gap 200 ms, above ato) unchanged; the
        // held-back ACK of a larger ato would wait at most 200 ms.
        assert_eq!(r.next_wakeup(), Some(SimTime::from_ms(140)));
    }
}

#[cfg(test)]
mod autotune_tests {
    use super::*;

    const MSS: u64 = 1448;

    fn receiver() -> TcpReceiver {
        let c = TcpConfig {
            mss: MSS as u32,
            timestamps: true,
            receive_autotuning: true,
            quickack: 0,
            ..TcpConfig::default()
        };
        TcpReceiver::new(FlowId(0), NodeId(1), NodeId(0), &c)
    }

    /// Feed `pkt` at `ms`; the ACKs sent (their windows).
    fn feed(r: &mut TcpReceiver, pkt: &Packet, ms: f64) -> Vec<u64> {
        feed_at(r, pkt, ms).iter().map(|p| p.rwnd).collect()
    }

    fn data(k: u64) -> Packet {
        let mut p = Packet::new(k + 1, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
        p.seq = k * MSS;
        p.len = MSS as u32;
        p
    }

    #[test]
    fn the_window_grows_per_segment_and_each_growth_acks_at_once() {
        // tcp_init_buffer_space(): 64 KB less one 1,460-byte segment; the
        // first data sets the buffer's window to 131,072 x 158/256 =
        // 80,896 bytes, and every segment below it grows the window by
        // two segments and is acknowledged at once (no quick ACKs
        // otherwise here).
        let mut r = receiver();
        let syn = Packet::new(0, FlowId(0), NodeId(0), NodeId(1), PacketKind::Syn);
        assert_eq!(feed(&mut r, &syn, 0.0), vec![64_076]);
        let mut windows = Vec::new();
        let mut acks = 0;
        for k in 0..10 {
            let w = feed(&mut r, &data(k), 500.0 + k as f64);
            acks += w.len();
            windows.extend(w);
        }
        // Growth by 2,896 from 64,076 up to 80,896 less the segment being
        // queued: six segments acknowledged one by one, then every second.
        assert_eq!(
            windows[..6],
            [66_972, 69_868, 72_764, 75_660, 78_556, 79_448]
        );
        assert_eq!(acks, 6 + 2, "six at once, then one per two segments");
        assert!(windows[6..].iter().all(|&w| w == 79_448));
    }

    #[test]
    fn the_round_trip_estimate_latches_lower_samples_and_smooths_higher_ones() {
        let ms = |x: u64| SimTime::from_ms(x);
        let ns = |x: u64| x * 1_000_000;
        let mut e = RcvRtt::default();
        // The first echo, 500 ms after its TSval: the estimate.
        e.on_echo(ms(500), 0, MSS, MSS, true);
        assert_eq!(e.get(), Some(ms(500)));
        // The same TSval again is no sample, a short segment none either
        // (but it uses up its TSval), nor a zero delta.
        e.on_echo(ms(900), 0, MSS, MSS, true);
        e.on_echo(ms(1_200), ns(400), 100, MSS, true);
        e.on_echo(ms(1_200), ns(400), MSS, MSS, true);
        e.on_echo(ms(1_201), ns(1_201), MSS, MSS, true);
        assert_eq!(e.get(), Some(ms(500)));
        // A larger one moves it by an eighth: 500 + (900 - 500)/8.
        e.on_echo(ms(1_400), ns(500), MSS, MSS, true);
        assert_eq!(e.get(), Some(ms(550)));
        // Not while data waits unread.
        e.on_echo(ms(1_500), ns(600), MSS, MSS, false);
        assert_eq!(e.get(), Some(ms(550)));
        // A smaller one replaces it at once.
        e.on_echo(ms(1_800), ns(1_500), MSS, MSS, true);
        assert_eq!(e.get(), Some(ms(300)));
        // The window measure: a window of 10 segments from 2,000 ms, done
        // at 2,450 ms, is larger and ignored; done within 250 ms next, it
        // lowers the estimate.
        e.on_in_order(ms(2_000), 0, 10 * MSS);
        e.on_in_order(ms(2_300), 9 * MSS, 10 * MSS);
        e.on_in_order(ms(2_450), 10 * MSS, 10 * MSS);
        assert_eq!(e.get(), Some(ms(300)));
        e.on_in_order(ms(2_700), 20 * MSS, 10 * MSS);
        assert_eq!(e.get(), Some(ms(250)));
    }

    #[test]
    fn dynamic_right_sizing_raises_the_window_once_per_round_trip() {
        // The SYN-ACK at 0, the first data at 500 ms: a 500 ms round trip
        // (the time from an ACK's TSval to a segment that echoes it).
        // Rounds of 10, 20 and 40 segments, one per 500 ms; the measure of
        // a round trip that delivered more than the last (20 segments
        // against 10 x 1,460 bytes, then 40 against 20) raises the
        // buffer's window to 2c(1 + 2(c - s)/s), and the receiver's window
        // grows towards it again, one ACK per segment.
        let mut r = receiver();
        let syn = Packet::new(0, FlowId(0), NodeId(0), NodeId(1), PacketKind::Syn);
        feed(&mut r, &syn, 0.0);
        let mut k = 0;
        let mut acks_per_round = Vec::new();
        for (round, n) in [(1.0, 10), (2.0, 20), (3.0, 40)] {
            let mut acks = 0;
            for i in 0..n {
                // Each segment echoes an ACK of the round before (the
                // SYN-ACK's, at 0, in the first).
                let mut d = data(k);
                d.set_ts_ecr(SimTime::from_ms(500 * (round as u64 - 1)).ns());
                acks += feed(&mut r, &d, 500.0 * round + i as f64).len();
                k += 1;
            }
            acks_per_round.push(acks);
        }
        let a = r.autotune.as_ref().unwrap();
        assert_eq!(r.rtt_estimate(), Some(SimTime::from_ms(500)));
        // At 1,000 ms: 11 segments (15,928 bytes) against 14,600, a window
        // of 37,649 below the buffer's: no change. At 1,500 ms: 20
        // segments (28,960) against 15,928: 57,920 + 2 x floor(57,920 x
        // 13,032 / 15,928) = 152,698.
        assert_eq!(a.space, 28_960);
        assert_eq!(a.clamp, 152_698);
        // Round 2 stays at the buffer's first window (one ACK per two
        // segments); in round 3 the window grows from 79,448 by 2,896 a
        // segment for 25 segments, each acknowledged at once, and the other
        // 15 go two to an ACK (a Linux 6.18 receiver on the same path: 24
        // and 8).
        assert_eq!(acks_per_round, vec![8, 10, 25 + 7]);
    }
}

#[cfg(test)]
mod dsack_tests {
    use super::*;

    const MSS: u64 = 1000;

    fn receiver(dsack: bool) -> TcpReceiver {
        let c = TcpConfig {
            recovery: Recovery::Sack,
            dsack,
            mss: MSS as u32,
            quickack: 16,
            ..TcpConfig::default()
        };
        TcpReceiver::new(FlowId(0), NodeId(1), NodeId(0), &c)
    }

    fn data(k: u64) -> Packet {
        let mut p = Packet::new(k + 1, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
        p.seq = k * MSS;
        p.len = MSS as u32;
        p
    }

    /// Feed segment `k`; the SACK blocks of the ACK it sent, in segments.
    fn blocks(r: &mut TcpReceiver, k: u64, ms: f64) -> Option<Vec<(u64, u64)>> {
        let acks = feed_at(r, &data(k), ms);
        acks.last().map(|a| {
            a.sack_blocks()
                .iter()
                .map(|&(s, e)| (s / MSS, e / MSS))
                .collect()
        })
    }

    #[test]
    fn duplicates_are_reported_first_and_once() {
        let mut r = receiver(true);
        for k in 0..4 {
            blocks(&mut r, k, k as f64);
        }
        // Below rcv_nxt: a D-SACK alone (RFC 2883 section 4.1.1).
        assert_eq!(blocks(&mut r, 2, 10.0), Some(vec![(2, 3)]));
        assert_eq!(r.stats.duplicate_segments, 1);
        // Out of order, then the same again: the D-SACK first, then the
        // block holding it (section 4.1.2).
        assert_eq!(blocks(&mut r, 6, 11.0), Some(vec![(6, 7)]));
        assert_eq!(blocks(&mut r, 7, 12.0), Some(vec![(6, 8)]));
        assert_eq!(blocks(&mut r, 6, 13.0), Some(vec![(6, 7), (6, 8)]));
        // The next ACK reports it no more.
        assert_eq!(blocks(&mut r, 9, 14.0), Some(vec![(9, 10), (6, 8)]));
        // A duplicate below rcv_nxt with holes above: the D-SACK, then the
        // newest block first, as ever.
        assert_eq!(blocks(&mut r, 1, 15.0), Some(vec![(1, 2), (9, 10), (6, 8)]));
    }

    #[test]
    fn acks_echo_the_tsval_of_the_segment_at_the_left_edge() {
        // RFC 7323 section 4.3 (tcp_store_ts_recent()): TS.Recent follows
        // segments at or below the left edge as last acknowledged, so an
        // ACK for a filled hole echoes the segment that filled it, not the
        // out-of-order ones after the hole.
        let mut r = receiver(true);
        r.timestamps = true;
        let seg = |r: &mut TcpReceiver, k: u64, sent_ms: u64, ms: f64| {
            let mut d = data(k);
            d.set_ts_val(SimTime::from_ms(sent_ms));
            let acks = feed_at(r, &d, ms);
            acks.last().map(|a| a.ts_ecr() / 1_000_000)
        };
        assert_eq!(seg(&mut r, 0, 100, 150.0), Some(100));
        assert_eq!(seg(&mut r, 2, 102, 152.0), Some(100), "out of order: no");
        assert_eq!(seg(&mut r, 3, 103, 153.0), Some(100));
        // The hole filled by a late original sent at 101 ms.
        assert_eq!(seg(&mut r, 1, 101, 160.0), Some(101));
        // A resend of it, below the edge and newer: echoed.
        assert_eq!(seg(&mut r, 1, 140, 190.0), Some(140));
        // An older one is not (PAWS).
        assert_eq!(seg(&mut r, 1, 120, 191.0), Some(140));
    }

    #[test]
    fn without_dsack_a_duplicate_gets_a_plain_ack() {
        let mut r = receiver(false);
        for k in 0..4 {
            blocks(&mut r, k, k as f64);
        }
        assert_eq!(blocks(&mut r, 2, 10.0), Some(vec![]));
    }

    #[test]
    fn a_duplicate_brings_quick_acks_back() {
        // tcp_data_queue(): a segment wholly below rcv_nxt puts the
        // receiver in quick-ACK mode, so the segments after a spurious
        // resend are acknowledged one by one.
        let mut r = receiver(true);
        r.delayed_ack = true;
        for k in 0..40 {
            feed_at(&mut r, &data(k), k as f64);
        }
        assert_eq!(r.quick, 0, "the start's quick ACKs are spent");
        assert_eq!(feed_at(&mut r, &data(40), 50.0).len(), 0, "delayed");
        assert_eq!(feed_at(&mut r, &data(3), 51.0).len(), 1);
        assert_eq!(feed_at(&mut r, &data(41), 52.0).len(), 1, "at once");
        assert_eq!(feed_at(&mut r, &data(42), 53.0).len(), 1, "at once");
    }
}
