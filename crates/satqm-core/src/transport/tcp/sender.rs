//! The TCP sender: connection state, send sequence, window, RTT estimator
//! and timers (retransmission per RFC 6298, pacing, the ECN hold).
//!
//! A congestion control that owns the window (BBR) gets the delivery-rate
//! sample of every ACK ([`super::rate`]) and sets cwnd and the pacing
//! rate itself after loss recovery has seen the ACK; the recovery's own
//! window changes are undone, so that it only chooses what to send.
//!
//! Sequence numbers are byte offsets from 0 that never wrap. The segments
//! in flight are kept in [`Segments`], from which the sender takes RTT
//! samples under Karn's rule. How losses are detected and repaired is the
//! job of a [`recovery`](super::recovery) variant (Tahoe, Reno, NewReno,
//! SACK), and how far the window grows and falls that of a congestion
//! control ([`cc`](super::cc)): the sender calls their hooks on each ACK and
//! timeout and acts on the decisions they return.

use crate::ids::{FlowId, NodeId};
use crate::packet::{flags, Packet, PacketKind};
use crate::time::SimTime;
use crate::transport::Emit;

use super::cc::{AckSample, CaState, Cc, CcTrace, Control, EcnSample, Signal, Window};
use super::clock::TimerClock;
use super::config::{CcKind, CcRules, EcnFeedback, Recovery, RtoRule, TcpConfig};
use super::ecn::{accecn_ce_delta, FeedbackReader};
use super::rate::RateEstimator;
use super::recovery::{AfterTimeout, AnyRecovery, Conn, DupAck, NewAck};
use super::rtt::RttEstimator;
use super::segments::Segments;
use super::sndbuf::SendBuffer;
pub use super::stats::{CutKind, SenderStats, WindowCut};
use super::undo::{echoes_before, Undo};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    /// Not yet opened by its application.
    Closed,
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    Established,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    cfg: TcpConfig,
    pub state: SenderState,
    /// Bytes the application has written (`u64::MAX`: unlimited).
    app_limit: u64,
    /// The application will write no more.
    closed: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    peer_rwnd: u64,
    /// The newest TSval received (RFC 7323's TS.Recent), echoed in every
    /// segment's TSecr when `timestamps` is on.
    ts_recent: u64,
    pub win: Window,
    cc: Cc,
    rec: AnyRecovery,
    segs: Segments,
    rtt: RttEstimator,
    /// When the retransmission, reordering and loss-probe timers fire.
    clock: TimerClock,
    rto_deadline: Option<SimTime>,
    pace_next: SimTime,
    /// With `tso_bursts`: segments of the current burst that may still
    /// leave at `burst_at` without waiting for the pacer.
    burst_left: u32,
    burst_at: SimTime,
    pace_blocked: bool,
    syn_sent_at: SimTime,
    syn_retx: bool,
    ecn_recover: u64,
    cwr_pending: bool,
    /// RFC 3168 section 6.1.2: no new data before this time.
    ecn_hold_until: Option<SimTime>,
    /// Echoes keep arriving with the window at one segment: each one
    /// doubles the hold (ns-2's `ecn_backoff_`), until an ACK without ECE.
    ecn_backoff: bool,
    /// DCTCP's or AccECN's feedback, counted (unused with RFC 3168's).
    feedback: FeedbackReader,
    pub stats: SenderStats,
    /// Window cuts not yet collected by the simulation.
    pub cuts: Vec<WindowCut>,
    /// Segments emitted that still wait in the host, behind a full
    /// `backpressure` link (counted by the simulation).
    pub held_in_host: u32,
    /// Whether the window is in use: see [`CwndUse`].
    cwnd_use: CwndUse,
    /// The send buffer, if the configuration limits it.
    sndbuf: Option<SendBuffer>,
    /// When the tail loss probe is due.
    tlp_deadline: Option<SimTime>,
    /// The RTT sample the ACK being processed gave, if any.
    ack_rtt: Option<SimTime>,
    /// `snd_max` when the last probe went out, until it is acknowledged.
    tlp_high_seq: Option<u64>,
    /// `snd_una` when the retransmission timer last fired, until an ACK
    /// moves it: a timeout for the same segment again holds ssthresh.
    timer_retx_una: Option<u64>,
    /// The delivery-rate estimator, for a congestion control that asks
    /// for it.
    rate: Option<Box<RateEstimator>>,
    /// The congestion control sets cwnd and the pacing rate on every ACK.
    owns: bool,
    /// The pacing rate, bytes of payload per second; `None`: unpaced.
    pacing_rate: Option<f64>,
    /// `pipe` before the ACK being processed (with the rate estimator).
    prior_pipe: u64,
    /// The ACK being read SACKed data not SACKed before.
    newly_sacked: bool,
    /// Segments wait for the pacer (`rate_cap`, or pacing).
    paced: bool,
    /// Each transmission is seen by the pacer, the rate estimator or PRR.
    send_hooks: bool,
    /// Proportional Rate Reduction's state while a SACK recovery, or the
    /// window reduction after an ECN echo, lasts (with `prr`).
    prr: Option<Prr>,
    /// Undoing reductions that D-SACKs show unnecessary (with `dsack`).
    undo: Option<Box<Undo>>,
    /// The ACK being read reports congestion (ECE, or new CE marks).
    ece_ack: bool,
    /// A tail loss probe is being sent.
    probing: bool,
    /// The highest SACKed byte before the ACK being read (with RACK).
    prior_fack: u64,
    /// The TSecr of the ACK being read (with timestamps; 0: none).
    ack_ts_ecr: u64,
    /// The ACK being read showed an original delayed while resends are
    /// still out: it triggers no loss detection and no resend.
    hold_resends: bool,
}

/// Proportional Rate Reduction during a loss recovery or the window
/// reduction after an ECN echo (RFC 6937, as Linux's `tcp_cwnd_reduction()`
/// in `net/ipv4/tcp_input.c`, which counts in segments): segments
/// delivered to the receiver and segments sent since the reduction began,
/// and cwnd when it began, in segments.
#[derive(Clone, Copy, Debug)]
struct Prr {
    delivered: u64,
    out: u64,
    prior_cwnd: u64,
    /// The reduction follows an ECN echo (Linux's CWR state): it ends when
    /// data sent after the echo is acknowledged, not with a recovery.
    cwr: bool,
}

impl Prr {
    /// A reduction beginning with a window of `cwnd` bytes.
    fn start(cwnd: f64, mss: u32, cwr: bool) -> Prr {
        Prr {
            delivered: 0,
            out: 0,
            prior_cwnd: ((cwnd / mss as f64) as u64).max(1),
            cwr,
        }
    }
}

/// Whether the congestion window limits the sender, tracked per window of
/// data as Linux does (`tcp_cwnd_validate()` in `net/ipv4/tcp_output.c`,
/// `tcp_is_cwnd_limited()` in `include/net/tcp.h`). A window that the
/// sender does not fill (the receive window or the application holds it
/// back) must not grow (RFC 7661 section 4.3): it would claim capacity the
/// path never showed, and the first loss would set ssthresh far above what
/// the path holds.
#[derive(Clone, Copy, Debug, Default)]
struct CwndUse {
    /// The last send attempt of the current window stopped at cwnd.
    limited: bool,
    /// The largest flight of the current window, bytes.
    max_flight: u64,
    /// The current window ends when `snd_una` reaches this.
    window_end: u64,
}

impl CwndUse {
    /// After a send attempt that sent data or stopped at cwnd (`limited`)
    /// with `flight` bytes outstanding.
    #[inline]
    fn update(&mut self, limited: bool, flight: u64, snd_una: u64, snd_max: u64) {
        if snd_una >= self.window_end || limited || (!self.limited && flight > self.max_flight) {
            self.limited = limited;
            self.max_flight = flight;
            self.window_end = snd_max;
        }
    }

    /// The window may grow: it was filled in this window of data, or, in
    /// slow start, it is less than twice the largest flight (so that slow
    /// start can double what was acknowledged).
    #[inline]
    fn allows_growth(&self, w: &Window) -> bool {
        self.limited || (w.cwnd < w.ssthresh && w.cwnd < 2.0 * self.max_flight as f64)
    }
}

impl TcpSender {
    pub fn new(flow: FlowId, src: NodeId, dst: NodeId, cfg: TcpConfig) -> TcpSender {
        let rtt = RttEstimator::new(cfg.rto_rule, cfg.initial_rto, cfg.min_rto, cfg.max_rto);
        let cc = Cc::new(cfg.cc, cfg.cc_rules);
        let cwnd = cc.initial_window((cfg.initial_window * cfg.mss) as f64);
        let owns = cc.owns_window();
        let rate = cc.wants_rate_sample().then(Box::<RateEstimator>::default);
        let mut segs = Segments::default();
        if rate.is_some() {
            segs.track_delivery();
        }
        TcpSender {
            flow,
            src,
            dst,
            state: SenderState::Closed,
            app_limit: 0,
            closed: false,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            peer_rwnd: cfg.max_advertised_window(),
            ts_recent: 0,
            win: Window {
                cwnd,
                ssthresh: cfg.initial_ssthresh.map_or(f64::INFINITY, |b| b as f64),
            },
            cc,
            rec: AnyRecovery::new(cfg.recovery, cfg.dupack_threshold, cfg.mss, cfg.rack),
            segs,
            rtt,
            clock: TimerClock::hz(cfg.timer_hz),
            rto_deadline: None,
            pace_next: SimTime::ZERO,
            burst_left: 0,
            burst_at: SimTime::ZERO,
            pace_blocked: false,
            syn_sent_at: SimTime::ZERO,
            syn_retx: false,
            ecn_recover: 0,
            cwr_pending: false,
            ecn_hold_until: None,
            ecn_backoff: false,
            feedback: FeedbackReader::default(),
            cuts: Vec::new(),
            held_in_host: 0,
            cwnd_use: CwndUse::default(),
            timer_retx_una: None,
            sndbuf: cfg.send_buffer.map(SendBuffer::new),
            tlp_deadline: None,
            tlp_high_seq: None,
            ack_rtt: None,
            stats: SenderStats::default(),
            owns,
            pacing_rate: None,
            prior_pipe: 0,
            newly_sacked: false,
            paced: cfg.rate_cap.is_some() || cfg.pacing || owns,
            send_hooks: cfg.rate_cap.is_some() || cfg.pacing || owns || rate.is_some() || cfg.prr,
            prr: None,
            undo: cfg.dsack.then(Box::default),
            ece_ack: false,
            probing: false,
            prior_fack: 0,
            ack_ts_ecr: 0,
            hold_resends: false,
            rate,
            cfg,
        }
    }

    /// Give the congestion control the connection's own random stream.
    pub fn seed_cc(&mut self, rng: crate::rng::Rng) {
        self.cc.seed(rng);
    }

    /// The pacing rate in force, bytes of payload per second.
    pub fn pacing_rate(&self) -> Option<f64> {
        self.pacing_rate
    }

    /// The congestion control's state, for the window traces.
    pub fn cc_trace(&self) -> CcTrace {
        self.cc.trace()
    }

    /// The last delivery-rate sample, if the estimator runs.
    pub fn rate_sample(&self) -> Option<&super::rate::RateSample> {
        self.rate.as_ref().map(|r| &r.last)
    }

    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    // ----- socket interface -------------------------------------------------

    /// Open the connection (SYN, or straight to sending without handshake).
    pub fn open(&mut self, em: &mut Emit) {
        if self.state != SenderState::Closed {
            return;
        }
        if self.cfg.handshake {
            self.state = SenderState::SynSent;
            self.send_syn(em);
        } else {
            self.state = SenderState::Established;
            self.on_established(em.now);
            self.output(em);
        }
    }

    /// Queue `bytes` more bytes for sending (`u64::MAX`: unlimited).
    pub fn write(&mut self, bytes: u64, em: &mut Emit) {
        if self.closed {
            return;
        }
        self.app_limit = self.app_limit.saturating_add(bytes);
        self.output(em);
    }

    /// No more data after what has been written; the last segment carries
    /// FIN.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Write the last `bytes` and close at once, so the final segment
    /// carries FIN even if it leaves immediately (a relay forwarding the
    /// end of a transfer).
    pub fn write_last(&mut self, bytes: u64, em: &mut Emit) {
        if self.closed {
            return;
        }
        self.app_limit = self.app_limit.saturating_add(bytes);
        self.closed = true;
        self.output(em);
    }

    /// Stop sending new data now (a bulk source's stop time): what has been
    /// sent is still delivered reliably.
    pub fn stop(&mut self) {
        self.app_limit = self.snd_max;
        self.closed = true;
    }

    /// Bytes written but not yet acknowledged.
    pub fn unacked_bytes(&self) -> u64 {
        self.app_limit.saturating_sub(self.snd_una)
    }

    /// Closed by the application and everything acknowledged.
    pub fn is_done(&self) -> bool {
        self.closed && self.snd_una >= self.app_limit
    }

    pub fn bytes_acked(&self) -> u64 {
        self.snd_una
    }

    pub fn srtt(&self) -> Option<SimTime> {
        self.rtt.srtt()
    }

    pub fn rto(&self) -> SimTime {
        self.rtt.rto()
    }

    pub fn in_recovery(&self) -> bool {
        self.rec.in_recovery()
    }

    /// A scalable control's α (DCTCP), if the control keeps one.
    pub fn ecn_alpha(&self) -> Option<f64> {
        self.cc.alpha()
    }

    /// CE-marked segments fed back so far by DCTCP's or AccECN's feedback.
    pub fn ce_counted(&self) -> u64 {
        self.feedback.delivered_ce
    }

    /// When the tail loss probe is due, if one is armed.
    #[cfg(test)]
    pub(super) fn loss_probe_due(&self) -> Option<SimTime> {
        self.tlp_deadline
    }

    /// When the sender next needs [`on_timer`](Self::on_timer).
    pub fn next_wakeup(&self) -> Option<SimTime> {
        // The earliest of the three, written out: this runs after every
        // event a sender handles.
        let min = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        let pace = self.pace_blocked.then_some(self.pace_next);
        if self.cfg.rack {
            let rack = min(self.tlp_deadline, self.rec.reorder_deadline());
            return min(min(min(self.rto_deadline, pace), self.ecn_hold_until), rack);
        }
        min(min(self.rto_deadline, pace), self.ecn_hold_until)
    }

    /// A segment this sender emitted has only now left its host: it waited
    /// in the host because the outgoing link's buffer was full (a link with
    /// `backpressure`). Time spent inside the host is not time in the
    /// network: the segment is timed from now (as a stack times a segment
    /// from when the interface takes it); while any segment waits in the
    /// host the retransmission timer does not expire (`on_timer`), and when
    /// the oldest outstanding segment or the last held one leaves, it
    /// restarts from now.
    pub fn on_left_host(&mut self, seq: u64, now: SimTime) {
        self.held_in_host = self.held_in_host.saturating_sub(1);
        if self.state == SenderState::SynSent {
            // The SYN (its only packet so far) is timed from leaving too.
            self.syn_sent_at = now;
            self.rto_deadline = Some(self.rto_timer(now));
            return;
        }
        let Some(i) = self.segs.index(seq) else {
            return;
        };
        self.segs.retime(i, now);
        if (i == 0 || self.held_in_host == 0) && self.rto_deadline.is_some() {
            self.rto_deadline = Some(self.rto_timer(now));
        }
    }

    // ----- events -----------------------------------------------------------

    pub fn on_timer(&mut self, em: &mut Emit) {
        let now = em.now;
        if self.pace_blocked && now >= self.pace_next {
            self.pace_blocked = false;
            self.output(em);
        }
        if self.ecn_hold_until.is_some_and(|t| now >= t) {
            self.ecn_hold_until = None;
            self.output(em);
        }
        if self.cfg.rack && self.rec.reorder_deadline().is_some_and(|t| now >= t) {
            let head_sent = self.segs.front().map(|h| h.sent_at);
            self.rack_detect(em);
            self.output(em);
            // Linux's tcp_rack_reo_timeout(): the kernel's one timer was
            // RACK's; unless the first segment was just resent (which
            // starts the timer from now), the retransmission timer comes
            // back counted from that segment's last sending
            // (tcp_rearm_rto(), tcp_rto_delta_us()), not from the last ACK.
            if self.cfg.rto_rule == RtoRule::Linux && self.rto_deadline.is_some() {
                let head_resent = self.segs.front().map(|h| h.sent_at) != head_sent;
                if let Some(at) = self.rto_from_head().filter(|_| !head_resent) {
                    if self.held_in_host == 0 {
                        // Due already: the next tick (a microsecond's
                        // timeout, `usecs_to_jiffies()` of at least 1).
                        self.rto_deadline = Some(if self.clock.ticks() {
                            self.clock
                                .fires(now, at.saturating_sub(now).max(SimTime::from_us(1)))
                        } else {
                            at.max(now + SimTime::from_ms(1))
                        });
                    }
                }
            }
        }
        if self.tlp_deadline.is_some_and(|t| now >= t) {
            self.tlp_deadline = None;
            self.send_loss_probe(em);
        }
        if let Some(d) = self.rto_deadline {
            if now >= d {
                if self.held_in_host > 0 {
                    // Still waiting in its own host: not a network loss.
                    self.rto_deadline = Some(self.rto_timer(now));
                } else {
                    self.on_rto(em);
                }
            }
        }
    }

    /// An ACK (or SYN-ACK) from the receiver.
    pub fn on_ack(&mut self, pkt: &Packet, em: &mut Emit) {
        if self.cfg.timestamps {
            // RFC 7323 section 4.3 (Linux's tcp_store_ts_recent()): a pure
            // ACK that passes PAWS, i.e. is not older, sets TS.Recent.
            self.ts_recent = self.ts_recent.max(pkt.ts_val());
            self.ack_ts_ecr = pkt.ts_ecr();
        }
        match (self.state, pkt.kind) {
            (SenderState::SynSent, PacketKind::SynAck) => {
                self.state = SenderState::Established;
                self.peer_rwnd = pkt.rwnd;
                if self.cfg.ecn_fallback && !self.ecn_accepted(pkt) {
                    self.ecn_fall_back();
                }
                if self.syn_retx {
                    // RFC 5681 section 3.1: a lost SYN or SYN-ACK means an
                    // initial window of one segment.
                    self.win.cwnd = self.cc.loss_window(&self.win, self.cfg.mss);
                } else {
                    self.take_rtt_sample(em.now - self.syn_sent_at);
                    if let Some(r) = &mut self.rate {
                        r.note_rtt(em.now - self.syn_sent_at);
                    }
                }
                self.rto_deadline = None;
                self.on_established(em.now);
                self.output(em);
                return;
            }
            (SenderState::Established, PacketKind::TcpAck) => {}
            _ => return,
        }
        let ack = pkt.ack.min(self.snd_max);
        if self.rate.is_some() {
            self.prior_pipe = self.rec.pipe(&self.segs, self.snd_una, self.snd_max);
        }
        let rwnd_changed = pkt.rwnd != self.peer_rwnd;
        self.peer_rwnd = pkt.rwnd;
        let classic = self.cfg.ecn_feedback == EcnFeedback::Classic;
        let delivered_before = self.snd_una + self.segs.sacked_bytes();
        let (una_before, lost_before) = (self.snd_una, self.segs.lost_total());
        let sacked_before = self.segs.sacked_bytes();
        // The loss-episode state before this ACK, for the undo checks.
        let (was_recovery, was_open) = if self.undo.is_some() {
            (self.rec.in_recovery(), self.rec.is_open(self.snd_una))
        } else {
            (false, true)
        };
        if self.cfg.rack {
            self.prior_fack = self.rec.highest_sacked(&self.segs, self.snd_una);
        }
        if pkt.n_sack > 0 {
            let blocks = pkt.sack_blocks();
            if self.undo.is_some() {
                self.read_dsack(&blocks, ack);
            }
            self.rec
                .on_sack_blocks(&mut self.segs, &blocks, self.snd_una, em.now);
        }
        self.newly_sacked = self.segs.sacked_bytes() > sacked_before;
        if self.undo.is_some() {
            self.ece_ack = if classic {
                pkt.has(flags::ECE)
            } else {
                self.cfg.ecn && self.reports_marks(pkt)
            };
            if self.ece_ack {
                self.undo_mut().keep_reduction();
            }
            if was_open && self.rec.is_open(self.snd_una) {
                // tcp_try_undo_dsack() in the Open and Disorder states, before
                // this ACK may start a recovery.
                self.try_undo(false, false, una_before, false);
            }
        }

        // RFC 3168 section 6.1.2: no window growth on an ECN-Echo ACK (nor,
        // with the other feedback, on an ACK reporting new marks or until
        // the window of data after a cut is acknowledged, Linux's CWR state).
        let ece = self.cfg.ecn
            && if classic {
                pkt.has(flags::ECE)
            } else {
                !self.cc.grows_through_cwr() && (self.reports_marks(pkt) || ack <= self.ecn_recover)
            };
        self.ack_rtt = None;
        let mut dupack = false;
        if ack > self.snd_una {
            // Linux's CWR state with PRR: no growth until it ends.
            let reducing = self.prr.is_some_and(|p| p.cwr);
            self.on_new_ack(ack, !ece && !reducing, pkt.has(flags::ECE), em);
            // RFC 6675: a cumulative ACK that also SACKs new data is a
            // duplicate ACK too.
            if self.newly_sacked && self.snd_max > self.snd_una {
                self.on_dupack(em);
            }
        } else {
            if ack == self.snd_una && self.rate.is_some() {
                self.sample_rate(em.now, pkt.has(flags::ECE));
            }
            if ack == self.snd_una
                && self.snd_max > self.snd_una
                && (!rwnd_changed || pkt.n_sack > 0)
            {
                dupack = true;
                self.on_dupack(em);
            }
        }
        if self.cfg.ecn && !classic && ack >= self.snd_una {
            self.read_feedback(pkt, delivered_before, dupack, em.now);
        }
        if self.undo.is_some() {
            if !was_open {
                let ecr = self.ack_ts_ecr;
                let delayed = self.undo.as_ref().is_some_and(|u| u.delayed(ecr));
                self.try_undo(was_recovery, !was_recovery, una_before, delayed);
            }
            if self.rec.is_open(self.snd_una) {
                let una = self.snd_una;
                self.undo_mut().on_open(una);
            }
        }

        if ack >= self.tlp_high_seq.unwrap_or(u64::MAX) {
            self.tlp_high_seq = None;
        }
        // Linux also times SACKed segments when the cumulative ACK gives
        // no sample (see RtoRule).
        let mut sack_restart = false;
        if self.cfg.rto_rule == RtoRule::Linux {
            let sacked_sent = self.rec.take_sack_timing();
            if let (None, Some(sent_at)) = (self.ack_rtt, sacked_sent) {
                self.take_rtt_sample(em.now - sent_at);
            }
            // Linux's tcp_clean_rtx_queue() (since 4.13): an ACK that
            // moves nothing cumulatively but times a segment SACKed that
            // was sent before the first unacknowledged one was last sent
            // restarts the timer; the path delivers what was sent before
            // that sending. A segment sent after it restarts nothing, or
            // the timer would keep moving through a recovery.
            sack_restart = self.snd_una == una_before
                && sacked_sent.is_some_and(|t| self.segs.front().is_some_and(|h| t < h.sent_at));
        }
        if self.cfg.rack {
            if self.undo.is_some() {
                self.rec.update_reo_wnd(em.now);
            }
            if !self.hold_resends {
                self.rack_detect(em);
            }
        }
        // RACK's reordering timer, when pending, stands in for the restart
        // (tcp_identify_packet_loss()).
        if sack_restart && self.rec.reorder_deadline().is_none() {
            self.rto_deadline = Some(self.rto_timer(em.now));
        }
        if classic && pkt.has(flags::ECE) {
            self.on_ecn_echo(em.now);
        }
        if self.prr.is_some() {
            self.prr_step(delivered_before, una_before, lost_before);
        }
        if self.owns {
            if ack >= self.snd_una {
                self.cong_control(em.now);
            }
        } else if self.cfg.pacing {
            self.pacing_rate = self.linux_pacing_rate();
        }
        let armed = self.send_and_arm(em);
        self.hold_resends = false;
        // With nothing sent on this ACK, the probe counts from it, and no
        // later than the timer the ACK restarted.
        if self.cfg.tlp && !armed {
            self.arm_loss_probe(em.now, self.rto_deadline);
        }
    }

    fn undo_mut(&mut self) -> &mut Undo {
        self.undo.as_mut().expect("dsack is on")
    }

    /// An ACK's SACK blocks, before the scoreboard reads them: if the
    /// first is a D-SACK, count the episode's resends it shows
    /// unnecessary.
    #[inline(never)]
    fn read_dsack(&mut self, blocks: &[(u64, u64)], ack: u64) {
        let mss = self.cfg.mss;
        let Some(d) = self.undo_mut().read(blocks, ack, mss) else {
            return;
        };
        // Resent segments it covers that are still in the queue.
        let mut resent = 0;
        if d.end > self.snd_una {
            for i in self.segs.first_from(d.start.max(self.snd_una))..self.segs.len() {
                let seg = self.segs.get(i);
                if seg.end() > d.end {
                    break;
                }
                resent += u64::from(seg.ever_retx);
            }
        }
        let una = self.snd_una;
        self.undo_mut().on_dsack(&d, una, resent);
        let probe = d.segs == 1 && self.tlp_high_seq == Some(d.end);
        self.rec.on_dsack(probe);
    }

    /// Resent segments in flight: resent since last deemed lost, and
    /// neither SACKed nor acknowledged (Linux's `retrans_out`).
    fn resent_in_flight(&self) -> u64 {
        self.segs.iter().filter(|s| s.rtx() && !s.sacked()).count() as u64
    }

    /// A loss episode begins (a recovery, or a timeout outside one):
    /// remember what to undo. cwnd and ssthresh are those before it; the
    /// threshold is restored only if no ECN reduction is under way and
    /// this ACK did not report congestion (`tcp_enter_recovery()`,
    /// `tcp_enter_loss()`: `tcp_current_ssthresh()`, at least three
    /// quarters of cwnd).
    fn begin_undo(&mut self, cwnd: f64, ssthresh: f64, ecn_reducing: bool) {
        let mss = self.cfg.mss as f64;
        let segs = (cwnd / mss).floor() as u64;
        let prior_ssthresh = if ecn_reducing {
            0.0
        } else {
            ssthresh.max(((segs >> 1) + (segs >> 2)) as f64 * mss)
        };
        let (una, resent) = (self.snd_una, self.resent_in_flight());
        self.undo_mut().begin(una, resent, cwnd, prior_ssthresh);
    }

    /// Undo checks after an ACK (`tcp_fastretrans_alert()`): in a
    /// recovery (`recovery`), at its end (`tcp_try_undo_recovery()`) or
    /// while it lasts (`tcp_try_undo_dsack()`, which ends it); after a
    /// timeout (`after_timeout`, `tcp_process_loss()`), once the cumulative
    /// ACK moves (`tcp_try_undo_loss()`, which also forgets the segments
    /// deemed lost); otherwise a late D-SACK may still undo the last
    /// episode (`tcp_try_undo_dsack()`).
    fn try_undo(&mut self, recovery: bool, after_timeout: bool, una_before: u64, delayed: bool) {
        let Some(u) = self.undo.as_ref() else {
            return;
        };
        let (pending, dsacked) = (u.pending(), u.possible());
        let may_undo = dsacked || (pending && delayed);
        let advanced = self.snd_una > una_before;
        let ended = (recovery || after_timeout) && self.rec.is_open(self.snd_una);
        if after_timeout && advanced && may_undo {
            // tcp_try_undo_loss()
            self.undo_reduction(true);
        } else if ended {
            // tcp_try_undo_recovery()
            if may_undo {
                self.undo_reduction(false);
            } else {
                self.rec.on_recovery_end(false);
            }
        } else if recovery && advanced && pending && delayed {
            // tcp_try_undo_partial(): an original was delayed, not lost;
            // undo once no resend is in flight, and until then let this ACK
            // neither find losses nor release resends (the kernel returns
            // before tcp_identify_packet_loss() and tcp_xmit_recovery()).
            self.rec.note_reordering();
            if self.resent_in_flight() == 0 {
                self.undo_reduction(true);
            } else {
                self.hold_resends = true;
            }
        } else if dsacked && !after_timeout {
            // tcp_try_undo_dsack()
            self.undo_reduction(false);
            self.rec.on_recovery_end(true);
        }
    }

    /// `tcp_undo_cwnd_reduction()`: the episode ends; cwnd and ssthresh
    /// come back unless an ECN echo said to keep them; `forget_lost`: the
    /// segments deemed lost are not resent.
    fn undo_reduction(&mut self, forget_lost: bool) {
        let restore = self.undo_mut().take();
        self.rec
            .end_episode(&mut self.segs, self.snd_una, forget_lost);
        self.prr = None;
        self.timer_retx_una = None;
        self.stats.undos += 1;
        let Some((prior_cwnd, prior_ssthresh)) = restore else {
            return;
        };
        if !self.owns {
            self.win.cwnd = self.win.cwnd.max(prior_cwnd);
        }
        self.cc.on_undo();
        self.win.ssthresh = self.win.ssthresh.max(prior_ssthresh);
    }

    /// A window reduction ends: cwnd at ssthresh
    /// (`tcp_end_cwnd_reduction()`).
    fn end_reduction(&mut self) {
        self.prr = None;
        self.win.cwnd = self.win.ssthresh;
    }

    /// Proportional Rate Reduction on an ACK during a recovery or after an
    /// ECN echo (RFC 6937 with its slow-start reduction bound, as Linux's
    /// `tcp_cwnd_reduction()`): while `pipe` is above ssthresh, send in
    /// proportion to what was delivered, ssthresh / cwnd-at-the-start of
    /// it; below, catch up towards ssthresh by at most what was delivered
    /// (one segment more when the cumulative ACK advanced and no new loss
    /// was found). cwnd is `pipe` plus what may go now. When the reduction
    /// ends, cwnd is ssthresh (`tcp_end_cwnd_reduction()`).
    fn prr_step(&mut self, delivered_before: u64, una_before: u64, lost_before: u64) {
        let cwr = self.prr.is_some_and(|p| p.cwr);
        let over = if cwr {
            // Linux holds CWR until something above the data sent before
            // the echo is acknowledged.
            self.snd_una > self.ecn_recover
        } else {
            !self.rec.in_recovery()
        };
        if over {
            self.end_reduction();
            return;
        }
        let mss = self.cfg.mss as u64;
        // Segments newly delivered (cumulatively or by SACK), in flight,
        // and ssthresh, as Linux counts them.
        let newly = (self.snd_una + self.segs.sacked_bytes())
            .saturating_sub(delivered_before)
            .div_ceil(mss) as i64;
        let pipe_bytes = self.rec.pipe(&self.segs, self.snd_una, self.snd_max);
        let pipe = pipe_bytes.div_ceil(mss) as i64;
        let ssthresh = (self.win.ssthresh / mss as f64).min(i64::MAX as f64) as i64;
        let advanced = self.snd_una > una_before && self.segs.lost_total() == lost_before;
        let Some(p) = self.prr.as_mut() else {
            return;
        };
        if newly == 0 {
            return;
        }
        p.delivered += newly as u64;
        let (delivered, out) = (p.delivered as i64, p.out as i64);
        let sndcnt = if pipe > ssthresh {
            // Both factors are positive here.
            let share = (ssthresh as u128 * delivered as u128).div_ceil(p.prior_cwnd as u128);
            share.min(i64::MAX as u128) as i64 - out
        } else {
            let bound = (delivered - out).max(newly) + i64::from(advanced);
            bound.min(ssthresh - pipe)
        };
        // The first send of a recovery goes whatever the reduction says.
        let sndcnt = sndcnt.max(i64::from(out == 0));
        self.win.cwnd = (pipe_bytes + sndcnt as u64 * mss) as f64;
    }

    /// Whether an ACK reports CE marks not yet counted (DCTCP's ECE, or an
    /// AccECN ACE field that moved), before its segments are counted.
    #[inline]
    fn reports_marks(&self, pkt: &Packet) -> bool {
        match self.cfg.ecn_feedback {
            EcnFeedback::Classic | EcnFeedback::Dctcp => pkt.has(flags::ECE),
            EcnFeedback::AccEcn => accecn_ce_delta(pkt.flags, self.feedback.delivered_ce, 0) > 0,
        }
    }

    /// DCTCP's or AccECN's feedback on an ACK (see [`super::ecn`]): count
    /// the segments it delivered and those marked, tell congestion control,
    /// and cut the window if any were marked.
    #[inline(never)]
    fn read_feedback(&mut self, pkt: &Packet, delivered_before: u64, dupack: bool, now: SimTime) {
        let progress = (self.snd_una + self.segs.sacked_bytes()).saturating_sub(delivered_before);
        let sack = self.cfg.recovery == Recovery::Sack;
        let delivered = self
            .feedback
            .delivered(progress, self.cfg.mss, sack, dupack);
        let delivered_ce = match self.cfg.ecn_feedback {
            EcnFeedback::Classic => 0,
            EcnFeedback::Dctcp => {
                if pkt.has(flags::ECE) {
                    delivered
                } else {
                    0
                }
            }
            EcnFeedback::AccEcn => {
                accecn_ce_delta(pkt.flags, self.feedback.delivered_ce, delivered)
            }
        };
        self.feedback.delivered_ce += delivered_ce;
        if let Some(r) = self.rate.as_deref_mut() {
            r.add_ce(delivered_ce * self.cfg.mss as u64);
        }
        self.cc.on_ecn(
            &mut self.win,
            &EcnSample {
                now,
                mss: self.cfg.mss,
                delivered,
                delivered_ce,
                rtt: self.ack_rtt,
                snd_una: self.snd_una,
                snd_max: self.snd_max,
            },
        );
        if delivered_ce > 0 || (pkt.has(flags::ECE) && self.cfg.ecn_feedback == EcnFeedback::Dctcp)
        {
            self.on_ecn_echo(now);
        }
    }

    /// The connection is established: a controller that owns the window
    /// sets its first pacing rate; a paced classic one gets Linux's.
    fn on_established(&mut self, now: SimTime) {
        if self.owns {
            let mut c = self.control_context(now);
            self.cc.on_established(&mut self.win, &mut c);
            self.pacing_rate = c.pacing_rate;
        } else if self.cfg.pacing {
            self.pacing_rate = self.linux_pacing_rate();
        }
    }

    /// What a controller that owns the window reads of the connection.
    fn control_context(&self, now: SimTime) -> Control {
        let state = if self.rec.in_recovery() {
            CaState::Recovery
        } else if !self.rec.is_open(self.snd_una) {
            CaState::Loss
        } else {
            CaState::Open
        };
        let r = self.rate.as_deref();
        Control {
            now,
            mss: self.cfg.mss,
            state,
            inflight: self.rec.pipe(&self.segs, self.snd_una, self.snd_max),
            delivered: r.map_or(0, |r| r.delivered),
            delivered_time: r.map_or(now, |r| r.delivered_time),
            lost: self.segs.lost_total(),
            delivered_ce: r.map_or(0, |r| r.delivered_ce),
            ecn: self.cfg.ecn && self.cfg.ecn_feedback != EcnFeedback::Classic,
            // tcp_enter_cwr() holds until snd_una passes what had been sent
            // at the echo.
            cwr: self.snd_una < self.ecn_recover,
            srtt: self.rtt.srtt(),
            min_rtt: r.and_then(|r| r.min_rtt()),
            edt: self.pace_next.max(now),
            cwnd_limited: self.cwnd_use.limited,
            pacing_rate: self.pacing_rate,
            mark_app_limited: false,
        }
    }

    /// The delivery-rate sample of the ACK being processed, from the
    /// segment sent last among those it delivered (`tcp_rate_skb_delivered()`,
    /// `tcp_rate_gen()`).
    #[inline(never)]
    fn sample_rate(&mut self, now: SimTime, ece: bool) {
        let pick = self.segs.take_pick();
        let Some(r) = self.rate.as_deref_mut() else {
            return;
        };
        if let Some(d) = pick {
            r.on_delivered(d.ordinal, d.sent_at, d.end, d.ever_retx);
        }
        // Segments deemed lost since the last ACK (a timeout's, the SACK
        // blocks'), before their snapshots go.
        for (ordinal, len) in self.segs.drain_lost() {
            r.note_lost(ordinal, len);
        }
        r.retire_to(self.segs.first_ordinal());
        let delivered = self.snd_una + self.segs.sacked_bytes();
        r.generate(now, delivered, self.segs.lost_total(), self.prior_pipe, ece);
    }

    /// Linux's `cong_control`: after recovery has seen the ACK, the
    /// controller sets cwnd and the pacing rate from the rate sample.
    #[inline(never)]
    fn cong_control(&mut self, now: SimTime) {
        let lost = self.segs.lost_total();
        let Some(r) = self.rate.as_deref_mut() else {
            return;
        };
        // Losses recovery found after the sample was taken (a fast
        // retransmit's, RACK's) are this ACK's too.
        r.add_losses(lost);
        for (ordinal, len) in self.segs.drain_lost() {
            r.note_lost(ordinal, len);
        }
        let rs = r.last;
        let losses = std::mem::take(&mut r.lost_events);
        let mut c = self.control_context(now);
        for l in &losses {
            self.cc.on_lost(l, &c);
        }
        if let Some(r) = self.rate.as_deref_mut() {
            // Keep the buffer for the next ACK.
            r.lost_events = losses;
            r.lost_events.clear();
        }
        self.cc.control(&mut self.win, &rs, &mut c);
        self.pacing_rate = c.pacing_rate;
        if c.mark_app_limited {
            let pipe = c.inflight;
            if let Some(r) = self.rate.as_deref_mut() {
                r.mark_app_limited(pipe);
            }
        }
    }

    /// Linux's pacing rate for a classic controller
    /// (`tcp_update_pacing_rate()`): twice cwnd per SRTT early in slow
    /// start (cwnd below half of ssthresh), 1.2 times after (once, for
    /// Prague's `prague_update_pacing_rate()`); none before the first RTT
    /// sample.
    fn linux_pacing_rate(&self) -> Option<f64> {
        self.rtt.srtt().map(|srtt| {
            let flight = (self.snd_max - self.snd_una) as f64;
            let ratio = if self.win.cwnd < self.win.ssthresh / 2.0 {
                2.0
            } else {
                self.cc.pacing_ca_ratio()
            };
            ratio * self.win.cwnd.max(flight) / srtt.secs_f64().max(1e-6)
        })
    }

    /// RACK's loss detection (a no-op without it); a recovery it starts
    /// is logged and its first segment resent at once.
    fn rack_detect(&mut self, em: &mut Emit) {
        if self.prr.is_some_and(|p| !p.cwr) && !self.rec.in_recovery() {
            // This ACK ended a recovery: its reduction ends first, and a
            // recovery that starts on the same ACK cuts from there.
            self.end_reduction();
        }
        let (before, ssthresh) = (self.win.cwnd, self.win.ssthresh);
        let srtt = self.rtt.srtt();
        let owned = self.owns.then_some(before);
        let (rec, mut c) = self.recovery();
        let started = rec.rack_detect(&mut c, em.now, srtt);
        if let Some(cwnd) = owned {
            self.win.cwnd = cwnd;
        }
        if let Some(resend_head) = started {
            self.log_loss(em.now, before, ssthresh);
            if resend_head && !self.resend_waits_for_window() {
                self.retransmit_at(self.snd_una, em);
            }
        }
    }

    /// Whether a recovery's first resend waits for the window: a control
    /// that sets cwnd itself (Linux's `cong_control`, BBR) with RACK
    /// resends the first segment, deemed lost, only when its window has
    /// room, after it has seen the ACK (`tcp_cong_control()` before
    /// `tcp_xmit_recovery()`; after RACK's timer, the window as it was,
    /// `tcp_rack_reo_timeout()`). A flow held at four segments in
    /// PROBE_RTT resends nothing and waits for its timer. Other controls
    /// resend it at once (PRR's first send, `tcp_cwnd_reduction()`).
    fn resend_waits_for_window(&self) -> bool {
        self.owns && self.cfg.rack
    }

    /// Tail loss probe (RFC 8985 section 7, Linux's
    /// tcp_schedule_loss_probe()): in the Open state with data
    /// outstanding, a probe is due two SRTTs after the last send or ACK
    /// (plus the minimum RTO with one segment out, whose ACK may be
    /// delayed), and no later than `cap`, the retransmission timer as the
    /// caller counts it.
    fn arm_loss_probe(&mut self, now: SimTime, cap: Option<SimTime>) {
        self.tlp_deadline = None;
        // Linux's Open state (tcp_try_keep_open()): besides no recovery,
        // nothing SACKed or marked lost, and the first unacknowledged
        // segment never resent (tcp_any_retrans_done()); otherwise the
        // connection is in Disorder, where the kernel sends no probe.
        if !self.cfg.tlp
            || self.state != SenderState::Established
            || self.snd_max == self.snd_una
            || !self.rec.is_open(self.snd_una)
            || self.segs.sacked_bytes() > 0
            || self.segs.lost_bytes() > 0
            || self.segs.front().is_some_and(|h| h.ever_retx)
        {
            return;
        }
        let (Some(srtt), Some(_)) = (self.rtt.srtt(), self.rto_deadline) else {
            return;
        };
        let extra = if self.segs.len() == 1 {
            self.cfg.min_rto
        } else {
            SimTime::from_ms(2)
        };
        let pto = self.clock.fires(now, srtt + srtt + extra);
        self.tlp_deadline = Some(cap.map_or(pto, |c| pto.min(c)));
    }

    /// The probe is due: send one new segment whatever cwnd, or, with
    /// nothing new to send, resend the last one (tcp_send_loss_probe());
    /// one probe at a time. The retransmission timer starts over.
    fn send_loss_probe(&mut self, em: &mut Emit) {
        if self.tlp_high_seq.is_none() && self.held_in_host == 0 {
            let sent_before = self.stats.segments_sent;
            if let Some(len) = self.new_segment_len() {
                if self.snd_max + len - self.snd_una <= self.peer_rwnd {
                    self.send_new_segment(len, em);
                }
            }
            if self.stats.segments_sent == sent_before && !self.segs.is_empty() {
                let i = self.segs.len() - 1;
                let (start, len) = self.segs.resend(i, em.now);
                if self.cfg.rack {
                    self.rec.on_resent(&self.segs, i, em.now);
                }
                self.probing = true;
                self.emit_segment(start, len, true, em);
                self.probing = false;
            }
            if self.stats.segments_sent > sent_before {
                self.tlp_high_seq = Some(self.snd_max);
                self.stats.loss_probes += 1;
            }
        }
        self.rto_deadline = Some(self.rto_timer(em.now));
    }

    // ----- ACK processing ---------------------------------------------------

    fn on_new_ack(&mut self, ack: u64, grow: bool, ece: bool, em: &mut Emit) {
        let now = em.now;
        let acked = ack - self.snd_una;
        let newly = acked - self.segs.sacked_below(ack);
        // Retire acknowledged segments and time the ACK. Under RFC 6298
        // the sample comes from the newest segment fully covered, unless
        // the ACK covers any segment that was ever retransmitted (Karn's
        // rule): a cumulative ACK that jumps a repaired hole would
        // otherwise time the whole recovery. Linux's rule times it by the
        // oldest segment's last sending, as its timestamps do.
        if self.rate.is_some() {
            self.segs.note_acked(ack);
        }
        if self.cfg.rack {
            self.rec
                .before_cum_ack(&self.segs, self.snd_una, ack, self.prior_fack);
        }
        let retired = self.segs.retire(ack, self.cfg.rack);
        if self.cfg.rack {
            // The segment sent last, then the highest (whose RTT RACK keeps,
            // as tcp_clean_rtx_queue() advances RACK in sequence order). An
            // ACK that echoes a timestamp from before a resend was sent for
            // the original: no delivery of the resend
            // (tcp_skb_spurious_retrans()).
            // The two are often one segment: RACK reads it once.
            let last = retired.last.filter(|l| retired.latest != Some(*l));
            for (sent_at, end, ever_retx) in [retired.latest, last].into_iter().flatten() {
                if !(ever_retx && echoes_before(self.ack_ts_ecr, sent_at)) {
                    self.rec.on_delivered(sent_at, end, ever_retx, now);
                }
            }
        }
        // While ECN backs off at one segment, echoed ACKs give no sample,
        // which would undo the back-off (as ns-2's TCP agents do).
        let ecn_backing_off = !grow && self.ecn_backoff;
        self.snd_una = ack;
        self.timer_retx_una = None;
        let (timed, karn) = match self.cfg.rto_rule {
            RtoRule::Rfc6298 => (retired.newest.map(|s| s.sent_at), retired.covers_retx),
            RtoRule::Linux | RtoRule::Linux2009 => (retired.oldest_sent, false),
        };
        if let Some(sent_at) = timed {
            if !karn && !ecn_backing_off {
                self.take_rtt_sample(now - sent_at);
                self.ack_rtt = Some(now - sent_at);
            }
        }
        if grow {
            self.ecn_backoff = false;
        }
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        if self.rate.is_some() {
            self.sample_rate(now, ece);
        }

        let owned = self.owns.then_some(self.win.cwnd);
        let (rec, mut c) = self.recovery();
        let decision = rec.on_new_ack(&mut c, acked);
        if let Some(cwnd) = owned {
            self.win.cwnd = cwnd;
        }
        let restart_timer = match decision {
            NewAck::Grow => {
                if grow && !self.owns && self.cwnd_use.allows_growth(&self.win) {
                    let s = AckSample {
                        now,
                        acked: newly,
                        mss: self.cfg.mss,
                        rtt: self.ack_rtt,
                        srtt: self.rtt.srtt(),
                        snd_una: self.snd_una,
                        snd_max: self.snd_max,
                        rate: self.rate.as_deref().map(|r| &r.last),
                    };
                    self.cc.on_ack(&mut self.win, &s);
                }
                true
            }
            NewAck::Recovering {
                resend_head,
                restart_timer,
            } => {
                if resend_head {
                    self.retransmit_at(self.snd_una, em);
                }
                restart_timer
            }
        };

        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.rto_deadline = Some(self.rto_timer(now));
        }
    }

    fn on_dupack(&mut self, em: &mut Emit) {
        let (before, ssthresh) = (self.win.cwnd, self.win.ssthresh);
        let owned = self.owns.then_some(before);
        let (rec, mut c) = self.recovery();
        let decision = rec.on_dupack(&mut c);
        if let Some(cwnd) = owned {
            self.win.cwnd = cwnd;
        }
        match decision {
            DupAck::Wait => {}
            DupAck::FastRetransmit => {
                self.log_loss(em.now, before, ssthresh);
                if !self.resend_waits_for_window() {
                    self.retransmit_at(self.snd_una, em);
                }
            }
            DupAck::Recovery => self.log_loss(em.now, before, ssthresh),
            DupAck::GoBackN => {
                self.log_loss(em.now, before, ssthresh);
                self.snd_nxt = self.snd_una;
            }
        }
    }

    /// The recovery, and the part of this sender its hooks see.
    fn recovery(&mut self) -> (&mut AnyRecovery, Conn<'_>) {
        let c = Conn {
            win: &mut self.win,
            cc: &mut self.cc,
            segs: &mut self.segs,
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            mss: self.cfg.mss,
            reducing: self.prr.is_some_and(|p| p.cwr),
            newly_sacked: self.newly_sacked,
            clock: self.clock,
            reo_min: if self.cfg.rto_rule == RtoRule::Linux {
                SimTime::from_ms(2)
            } else {
                SimTime::ZERO
            },
        };
        (&mut self.rec, c)
    }

    /// A loss episode began from duplicate ACKs: count and log it.
    fn log_loss(&mut self, now: SimTime, cwnd_before: f64, ssthresh_before: f64) {
        if self.undo.is_some() {
            let reducing = self.prr.is_some_and(|p| p.cwr)
                || (self.cfg.ecn && self.snd_una <= self.ecn_recover);
            self.begin_undo(cwnd_before, ssthresh_before, reducing || self.ece_ack);
        }
        if self.cfg.prr && !self.owns {
            // A recovery begins: PRR counts from here (the fast
            // retransmission that follows is its first send), unless the
            // window is already coming down after an ECN echo, whose
            // reduction goes on (`tcp_enter_recovery()`).
            match &mut self.prr {
                Some(p) if p.cwr => p.cwr = false,
                _ => self.prr = Some(Prr::start(cwnd_before, self.cfg.mss, false)),
            }
        }
        self.stats.fast_retransmits += 1;
        self.log_cut(now, CutKind::FastRetransmit, cwnd_before);
    }

    fn log_cut(&mut self, time: SimTime, kind: CutKind, cwnd_before: f64) {
        self.log_cut_to(time, kind, cwnd_before, self.win.cwnd);
    }

    fn log_cut_to(&mut self, time: SimTime, kind: CutKind, cwnd_before: f64, cwnd_after: f64) {
        self.cuts.push(WindowCut {
            time,
            kind,
            cwnd_before,
            cwnd_after,
            ssthresh: self.win.ssthresh,
            srtt: self.rtt.srtt(),
        });
    }

    /// RFC 3168 section 6.1.2: on ECN-Echo, at most once per window of
    /// data, halve the congestion window (not below one segment) and set
    /// ssthresh as for a loss. With the window already at one segment, send
    /// no new data until a retransmission timeout's worth of time has
    /// passed: the only way a marking router can push a flow below one
    /// packet per round trip. Echoes that keep coming at one segment double
    /// the hold each time, as ns-2's TCP agents do (the simulator of the AVQ
    /// paper's experiments), until an ACK arrives without ECN-Echo.
    fn on_ecn_echo(&mut self, now: SimTime) {
        if !self.cfg.ecn || self.rec.in_recovery() || self.snd_una <= self.ecn_recover {
            return;
        }
        if self.owns {
            // A controller that owns the window sees the echo in its rate
            // sample; the sender only confirms it with CWR.
            self.ecn_recover = self.snd_max;
            self.cwr_pending = true;
            return;
        }
        let mss = self.cfg.mss as f64;
        let before = self.win.cwnd;
        if self.win.cwnd <= mss {
            if self.ecn_backoff {
                self.rtt.back_off();
            }
            self.ecn_backoff = true;
            self.ecn_hold_until = Some(now + self.rtt.rto());
        } else {
            let flight = self.snd_max - self.snd_una;
            self.win.ssthresh =
                self.cc
                    .ssthresh_after(&self.win, Signal::Ecn, flight, self.cfg.mss);
            self.win.cwnd = match self.cfg.cc_rules {
                // tcp_enter_cwr() with PRR: the window comes down to
                // ssthresh over the next round trip (`prr_step`); so does
                // DCTCP's (its ssthresh is cwnd(1 - α/2), dctcp_ssthresh()),
                // not Prague's, which sets its window itself.
                CcRules::Linux if self.cfg.prr && !self.cc.grows_through_cwr() => {
                    self.prr = Some(Prr::start(self.win.cwnd, self.cfg.mss, true));
                    self.win.cwnd
                }
                // A scalable control's threshold is its new window (never
                // above the old: its floor of two segments raises nothing).
                _ if self.cc.scalable() => self.win.ssthresh.min(self.win.cwnd),
                CcRules::Rfc => (self.win.cwnd / 2.0).max(mss),
                // Without PRR, the window falls to ssthresh at once.
                CcRules::Linux | CcRules::Linux2009 => self.win.ssthresh,
            };
        }
        self.ecn_recover = self.snd_max;
        if let Some(u) = &mut self.undo {
            // tcp_enter_cwr(): nothing to undo.
            u.forget();
        }
        // AccECN's data segments carry no CWR (RFC 9768 section 3.2.2).
        self.cwr_pending = self.cfg.ecn_feedback != EcnFeedback::AccEcn;
        self.stats.ecn_reductions += 1;
        // The window the cut aims at (PRR brings cwnd down to it).
        let after = if self.prr.is_some_and(|p| p.cwr) {
            self.win.ssthresh
        } else {
            self.win.cwnd
        };
        self.log_cut_to(now, CutKind::Ecn, before, after);
    }

    fn on_rto(&mut self, em: &mut Emit) {
        let now = em.now;
        self.stats.timeouts += 1;
        self.tlp_high_seq = None;
        self.tlp_deadline = None;
        self.rtt.back_off();
        if self.state == SenderState::SynSent {
            self.syn_retx = true;
            self.send_syn(em);
            return;
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        let (before, ssthresh_before) = (self.win.cwnd, self.win.ssthresh);
        // Linux's tcp_enter_loss(): a timeout outside a recovery, other than
        // one more for the segment the timer already resent, starts an
        // episode to undo; one during a recovery carries on with its.
        let new_episode = !self.rec.in_recovery() && self.timer_retx_una != Some(self.snd_una);
        // A timeout ends any recovery, and PRR with it.
        self.prr = None;
        // RFC 5681 section 3.1: once the timer has resent this segment,
        // further timeouts for it keep ssthresh (as Linux's
        // tcp_enter_loss() does), rather than halving the loss window.
        if self.timer_retx_una != Some(self.snd_una) {
            let flight = self.snd_max - self.snd_una;
            self.win.ssthresh =
                self.cc
                    .ssthresh_after(&self.win, Signal::Timeout, flight, self.cfg.mss);
        }
        self.timer_retx_una = Some(self.snd_una);
        self.cc.on_timeout();
        let (rec, mut c) = self.recovery();
        if rec.on_timeout(&mut c, now) == AfterTimeout::GoBackN {
            self.snd_nxt = self.snd_una;
        }
        if self.undo.is_some() && new_episode {
            self.begin_undo(before, ssthresh_before, false);
        }
        // RFC 5681: loss window of one segment, on top of what RACK left in
        // flight (Linux's tcp_enter_loss(): packets in flight + 1; without
        // RACK nothing is left).
        self.win.cwnd = self.timeout_window();
        self.log_cut(now, CutKind::Timeout, before);
        if self.owns {
            let mut c = self.control_context(now);
            self.cc.on_loss_state(&mut c);
            let lost = self.segs.lost_total();
            if let Some(r) = self.rate.as_deref_mut() {
                r.sync_lost(lost);
            }
        }
        self.rto_deadline = Some(self.rto_timer(now));
        self.output(em);
    }

    /// The window right after a timeout: the control's loss window, and
    /// under RACK at least one segment more than the timeout left in
    /// flight.
    fn timeout_window(&self) -> f64 {
        let w = self.cc.loss_window(&self.win, self.cfg.mss);
        if self.cfg.rack {
            let pipe = self.rec.pipe(&self.segs, self.snd_una, self.snd_max);
            w.max((pipe + self.cfg.mss as u64) as f64)
        } else {
            w
        }
    }

    /// The SYN-ACK agrees to ECN: ECE (RFC 3168, and DCTCP's negotiation),
    /// or with AccECN any of AE, CWR and ECE (RFC 9768 section 3.1.2).
    fn ecn_accepted(&self, synack: &Packet) -> bool {
        if self.cfg.ecn_feedback == EcnFeedback::AccEcn {
            synack.flags & (flags::AE | flags::CWR | flags::ECE) != 0
        } else {
            synack.has(flags::ECE)
        }
    }

    /// No SYN that asked for ECN reached the receiver: the connection runs
    /// without ECN (tcp_ecn_rcv_synack()), and a scalable control, whose
    /// α needs every mark, gives way to Reno (Linux's dctcp_init() and
    /// tcp_prague's prague_init(): `dctcp_reno`, `prague_reno`).
    fn ecn_fall_back(&mut self) {
        self.cfg.ecn = false;
        if matches!(self.cc, Cc::Dctcp(_) | Cc::Prague(_)) {
            self.cc = Cc::new(CcKind::RENO, self.cfg.cc_rules);
        }
    }

    // ----- sending ----------------------------------------------------------

    fn send_syn(&mut self, em: &mut Emit) {
        let mut p = em.packet(self.flow, self.src, self.dst, PacketKind::Syn);
        p.size = self.cfg.ack_header();
        // RFC 3168 section 6.1.1.1: with the fallback, a resent SYN asks
        // for no ECN (Linux's tcp_ecn_clear_syn()).
        if self.cfg.ecn && !(self.syn_retx && self.cfg.ecn_fallback) {
            p.flags |= flags::ECE | flags::CWR;
            if self.cfg.ecn_feedback == EcnFeedback::AccEcn {
                // RFC 9768 section 3.1.1: an AccECN SYN sets AE, CWR, ECE.
                p.flags |= flags::AE;
            }
        }
        em.send(p);
        self.syn_sent_at = em.now;
        self.rto_deadline = Some(self.rto_timer(em.now));
    }

    /// Pacing gate for the rate cap; true if a segment may leave now.
    fn pace_ok(&mut self, now: SimTime) -> bool {
        if !self.paced {
            return true;
        }
        if now >= self.pace_next {
            if self.cfg.tso_bursts && self.cfg.rate_cap.is_none() {
                // A new skb: as many segments as TSO autosizing gives it,
                // all leaving now (tcp_write_xmit() with tcp_tso_segs());
                // a rate cap keeps spacing every segment.
                let rate = self.pacing_rate.unwrap_or(0.0);
                self.burst_left = self.cc.tso_segs(rate, self.cfg.mss).max(1);
                self.burst_at = now;
            }
            return true;
        }
        if self.burst_left > 0 && now == self.burst_at {
            return true;
        }
        self.pace_blocked = true;
        false
    }

    fn emit_segment(&mut self, start: u64, len: u32, retx: bool, em: &mut Emit) {
        let now = em.now;
        let mut p = em.packet(self.flow, self.src, self.dst, PacketKind::TcpData);
        p.seq = start;
        p.len = len;
        p.size = len + self.cfg.header;
        if self.cfg.timestamps {
            p.set_ts_val(now);
            p.set_ts_ecr(self.ts_recent);
        }
        if self.cfg.ecn && (!retx || self.cfg.ecn_feedback != EcnFeedback::Classic) {
            // RFC 3168 section 6.1.5: no ECT on retransmissions; DCTCP and
            // AccECN senders mark every segment ECN-capable, as Linux does
            // for a congestion control that needs ECN.
            p.flags |= self.cfg.ecn_codepoint.flag();
        }
        if retx {
            p.flags |= flags::RETX;
        }
        if self.cwr_pending && !retx {
            p.flags |= flags::CWR;
            self.cwr_pending = false;
        }
        if self.closed && start + len as u64 >= self.app_limit {
            p.flags |= flags::FIN;
        }
        if self.send_hooks {
            self.on_transmit(start, retx, now, p.size, len);
        }
        self.stats.segments_sent += 1;
        if retx {
            self.stats.retransmits += 1;
            if let Some(u) = &mut self.undo {
                u.on_resend(!self.probing, start + len as u64, now);
            }
        }
        if self.rto_deadline.is_none()
            || (retx && start == self.snd_una && self.cfg.rto_rule.is_linux())
        {
            // Linux also restarts the timer whenever it resends the first
            // unacknowledged segment (tcp_xmit_retransmit_queue()), so a
            // fast retransmission has a whole RTO to be acknowledged.
            self.rto_deadline = Some(self.rto_timer(now));
        }
        em.send(p);
    }

    /// A data segment `[start, start + len)` of `size` bytes leaves at
    /// `now`: the rate estimator's snapshot, then the pacer's next
    /// departure.
    #[inline(never)]
    fn on_transmit(&mut self, start: u64, retx: bool, now: SimTime, size: u32, len: u32) {
        if let Some(p) = &mut self.prr {
            p.out += 1;
        }
        if self.rate.is_some() {
            self.rate_on_send(start, retx, now);
        }
        if self.paced {
            self.burst_left = self.burst_left.saturating_sub(1);
            self.pace_next = self.next_departure(now, size, len);
        }
    }

    /// When the pacer lets the segment after one of `size` bytes (`len` of
    /// payload) sent at `now` go: the rate cap counts whole packets, the
    /// pacing rate payload, as Linux's internal pacing does
    /// (`tcp_update_skb_after_send()`); the slower of the two holds.
    #[inline]
    fn next_departure(&self, now: SimTime, size: u32, len: u32) -> SimTime {
        let cap = self.cfg.rate_cap.map_or(SimTime::ZERO, |r| r.tx_time(size));
        let pace = match self.pacing_rate {
            Some(r) if r > 0.0 && r.is_finite() => SimTime::from_secs_f64(len as f64 / r),
            _ => SimTime::ZERO,
        };
        self.pace_next.max(now) + cap.max(pace)
    }

    /// The rate estimator's snapshot of segment `start`, (re)sent now; a
    /// transmission that starts from an empty pipe while the application
    /// limited the sender restarts the controller from idle.
    fn rate_on_send(&mut self, start: u64, retx: bool, now: SimTime) {
        let Some(i) = self.segs.index(start) else {
            return;
        };
        let ordinal = self.segs.first_ordinal() + i as u64;
        let pipe_empty = !retx && self.segs.len() == 1;
        let inflight = self.rec.pipe(&self.segs, self.snd_una, self.snd_max);
        let lost = self.segs.lost_total();
        let mut app_limited = false;
        if let Some(r) = self.rate.as_deref_mut() {
            r.on_send(ordinal, now, pipe_empty, inflight, lost);
            app_limited = r.app_limited();
        }
        if pipe_empty && app_limited && self.owns {
            let mut c = self.control_context(now);
            self.cc.on_tx_start(&mut self.win, &mut c);
            self.pacing_rate = c.pacing_rate;
        }
    }

    /// Resend the segment starting at `seq` now (fast retransmit, partial
    /// ACK), regardless of the window.
    fn retransmit_at(&mut self, seq: u64, em: &mut Emit) {
        if let Some(i) = self.segs.index(seq) {
            let (start, len) = self.segs.resend(i, em.now);
            if self.cfg.rack {
                self.rec.on_resent(&self.segs, i, em.now);
            }
            // Not held back by the pacer, but counted against it.
            self.emit_segment(start, len, true, em);
        }
    }

    /// Send what the windows allow, then note whether cwnd held the
    /// sender back.
    pub fn output(&mut self, em: &mut Emit) {
        self.send_and_arm(em);
    }

    /// When a retransmission timer started at `now` fires.
    fn rto_timer(&self, now: SimTime) -> SimTime {
        self.clock.fires(now, self.rtt.rto())
    }

    /// The retransmission timeout counted from the first unacknowledged
    /// segment's last sending (Linux's `tcp_rto_delta_us()`).
    fn rto_from_head(&self) -> Option<SimTime> {
        self.segs.front().map(|h| h.sent_at + self.rtt.rto())
    }

    /// [`output`](Self::output); true if it sent and so armed the loss
    /// probe.
    fn send_and_arm(&mut self, em: &mut Emit) -> bool {
        if self.state != SenderState::Established {
            return false;
        }
        let sent_before = self.stats.segments_sent;
        let stopped_at_cwnd = self.send(em);
        // Linux: `is_cwnd_limited` when packets in flight >= cwnd.
        let limited = stopped_at_cwnd || {
            let pipe = self.rec.pipe(&self.segs, self.snd_una, self.snd_max);
            pipe + self.cfg.mss as u64 > self.win.cwnd as u64
        };
        let sent = self.stats.segments_sent > sent_before;
        if limited || sent {
            let flight = self.snd_max - self.snd_una;
            self.cwnd_use
                .update(limited, flight, self.snd_una, self.snd_max);
        }
        if sent && self.cfg.tlp {
            // Linux's tcp_write_xmit() schedules the probe after sending
            // with the timeout counted from the first unacknowledged
            // segment's last sending (tcp_rto_delta_us()), not from now: a
            // head sent long ago is probed sooner.
            let cap = if self.cfg.rto_rule == RtoRule::Linux {
                self.rto_from_head()
                    .filter(|&t| t > em.now)
                    .map(|t| self.clock.fires(em.now, t - em.now))
            } else {
                self.rto_deadline
            };
            self.arm_loss_probe(em.now, cap);
            return true;
        }
        false
    }

    /// The send loop; true if it stopped because cwnd was full.
    fn send(&mut self, em: &mut Emit) -> bool {
        // Sending changes no window: read it once.
        let cwnd = self.win.cwnd as u64;
        loop {
            // 1. Retransmissions: what the recovery deems lost (RFC 6675
            // NextSeg rule 1), or go-back-N.
            let lost = if self.hold_resends {
                None
            } else {
                self.rec.next_lost(&self.segs)
            };
            if let Some(i) = lost {
                let len = self.segs.get(i).len as u64;
                let pipe = self.rec.pipe(&self.segs, self.snd_una, self.snd_max);
                if pipe + len > cwnd {
                    return true;
                }
                if !self.pace_ok(em.now) {
                    return false;
                }
                let (start, len) = self.segs.resend(i, em.now);
                if self.cfg.rack {
                    self.rec.on_resent(&self.segs, i, em.now);
                }
                self.emit_segment(start, len, true, em);
                continue;
            } else if self.snd_nxt < self.snd_max {
                let Some(i) = self.segs.index(self.snd_nxt) else {
                    self.snd_nxt = self.snd_max;
                    continue;
                };
                let len = self.segs.get(i).len as u64;
                let end = self.snd_nxt + len - self.snd_una;
                if end > cwnd.min(self.peer_rwnd) {
                    return end > cwnd;
                }
                if !self.pace_ok(em.now) {
                    return false;
                }
                let (start, len) = self.segs.resend(i, em.now);
                if self.cfg.rack {
                    self.rec.on_resent(&self.segs, i, em.now);
                }
                self.snd_nxt += len as u64;
                self.emit_segment(start, len, true, em);
                continue;
            }
            // 2. New data.
            if self.ecn_hold_until.is_some() {
                return false;
            }
            let Some(len) = self.new_segment_len() else {
                if self.rate.is_some() {
                    self.check_app_limited(cwnd);
                }
                return false;
            };
            let in_flight = self.rec.pipe(&self.segs, self.snd_una, self.snd_max);
            if in_flight + len > cwnd {
                return true;
            }
            if self.snd_max + len - self.snd_una > self.peer_rwnd || !self.pace_ok(em.now) {
                return false;
            }
            self.send_new_segment(len, em);
        }
    }

    /// The sender has nothing to send with room in the window and no loss
    /// to repair: the application limits it (`tcp_rate_check_app_limited()`).
    /// Linux checks when the application asks to send (`tcp_sendmsg()`), as
    /// draft-cheng-iccrg-delivery-rate-estimation does: a writer waiting for
    /// room in a full send buffer asks nothing, and its sender is limited by
    /// the buffer, not marked application-limited.
    #[inline(never)]
    fn check_app_limited(&mut self, cwnd: u64) {
        if self.sndbuf.as_ref().is_some_and(|b| b.writer_blocked()) {
            return;
        }
        let pipe = self.rec.pipe(&self.segs, self.snd_una, self.snd_max);
        if pipe < cwnd && self.segs.lost_bytes() == 0 {
            if let Some(r) = self.rate.as_deref_mut() {
                r.mark_app_limited(pipe);
            }
        }
    }

    /// The length of the next new segment, if one may go: what the
    /// application wrote, as far as the send buffer has taken it in, held
    /// back by Nagle's rule while data is outstanding if less than a
    /// segment.
    #[inline(always)]
    fn new_segment_len(&mut self) -> Option<u64> {
        let mut avail = self.app_limit.saturating_sub(self.snd_max);
        if self.sndbuf.is_some() {
            avail = self.buffered(avail);
        }
        if avail == 0 {
            return None;
        }
        let mss = self.cfg.mss as u64;
        let len = avail.min(mss);
        if len < mss && !self.closed && self.snd_max > self.snd_una {
            return None;
        }
        Some(len)
    }

    /// Of `written` bytes the application has beyond `snd_max`, those the
    /// send buffer has taken in.
    #[inline(never)]
    fn buffered(&mut self, written: u64) -> u64 {
        let mem = self.memory_in_flight();
        match &mut self.sndbuf {
            Some(b) => b.sendable(written, mem),
            None => written,
        }
    }

    fn send_new_segment(&mut self, len: u64, em: &mut Emit) {
        let start = self.snd_max;
        if let Some(b) = &mut self.sndbuf {
            b.sent(len);
        }
        self.segs.push(start, len as u32, em.now);
        self.snd_max += len;
        self.snd_nxt = self.snd_max;
        self.emit_segment(start, len as u32, false, em);
    }

    /// Memory the unacknowledged segments hold in the send buffer.
    fn memory_in_flight(&self) -> u64 {
        let mss = self.cfg.mss as f64;
        // The pacing rate sizes Linux's TSO bursts: the controller's own,
        // or the default a classic one would get.
        let pacing = if self.owns {
            self.pacing_rate
        } else {
            self.linux_pacing_rate()
        };
        let overhead = SendBuffer::overhead_per_segment(self.cfg.mss, pacing);
        let unsacked = self.segs.len() as f64 - (self.segs.sacked_bytes() as f64 / mss).floor();
        (self.snd_max - self.snd_una) + (overhead * unsacked.max(0.0)) as u64
    }

    fn take_rtt_sample(&mut self, r: SimTime) {
        self.rtt
            .sample(r, self.snd_una, self.snd_nxt.max(self.snd_max));
        self.stats.rtt.record(r);
    }
}
