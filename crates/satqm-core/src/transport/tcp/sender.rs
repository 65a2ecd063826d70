//! The TCP sender: window, loss recovery and retransmission timer.
//!
//! Sequence numbers are byte offsets from 0 that never wrap. The sender
//! keeps one record per segment in flight (`segs`, covering
//! `[snd_una, snd_max)`), used for RTT sampling under Karn's rule and, with
//! SACK, as the scoreboard of RFC 6675.
//!
//! Loss recovery variants:
//! * **Tahoe**: after `dupack_threshold` duplicate ACKs, retransmit and
//!   slow-start from one segment, resending everything after the loss
//!   (go-back-N).
//! * **Reno** (RFC 5681 section 3.2): fast retransmit and fast recovery with
//!   window inflation; any new ACK ends recovery.
//! * **NewReno** (RFC 6582): recovery lasts until the data outstanding when
//!   it began is acknowledged; each partial ACK retransmits the next hole,
//!   deflates the window by the data acknowledged and adds back one SMSS.
//!   Only the first partial ACK restarts the retransmission timer: the
//!   "Impatient" variant that RFC 6582 section 4 recommends and ns-3
//!   implements. When a window holds more holes than round trips fit in
//!   one RTO (a slow-start overshoot on a GEO path), the timer fires and
//!   go-back-N repairs the rest far sooner than one hole per round trip.
//! * **SACK** (RFC 6675): a scoreboard of SACKed segments, `IsLost` by
//!   `(DupThresh - 1) * SMSS` SACKed bytes above, sending governed by `pipe`
//!   and `NextSeg()` rules 1 and 2.
//!
//! To avoid several window reductions for losses of one window (RFC 6582
//! section 3.2 step 2, and the default of ns-2's TCP agents), no variant
//! starts a new fast retransmit before the cumulative ACK has passed the
//! `recover` point set by the previous one or by a timeout.

use std::collections::VecDeque;

use crate::config::{Recovery, TcpConfig};
use crate::ids::{FlowId, NodeId};
use crate::packet::{flags, Packet, PacketKind, TCP_IP_HEADER};
use crate::time::SimTime;
use crate::transport::Emit;

use super::cc::{Cc, Window};
use super::rtt::RttEstimator;
pub use super::stats::{CutKind, SenderStats, WindowCut};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    /// Not yet opened by its application.
    Closed,
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    Established,
}

/// One segment in flight.
#[derive(Clone, Copy, Debug)]
struct Seg {
    start: u64,
    len: u32,
    /// Last (re)transmission time.
    sent_at: SimTime,
    /// Ever retransmitted: no RTT sample from it (Karn's rule).
    ever_retx: bool,
    /// SACKed by the receiver.
    sacked: bool,
    /// Deemed lost (RFC 6675 IsLost, or after a timeout).
    lost: bool,
    /// Retransmitted since it was last deemed lost.
    rtx: bool,
}

impl Seg {
    fn end(&self) -> u64 {
        self.start + self.len as u64
    }
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
    pub win: Window,
    cc: Cc,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    /// NewReno: the next partial ACK is the first of this recovery.
    first_partial_ack: bool,
    segs: VecDeque<Seg>,
    /// Scoreboard holds SACKed or lost segments (the slow path).
    scoreboard_active: bool,
    rtt: RttEstimator,
    rto_deadline: Option<SimTime>,
    pace_next: SimTime,
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
    pub stats: SenderStats,
    /// Window cuts not yet collected by the simulation.
    pub cuts: Vec<WindowCut>,
    /// Segments emitted that still wait in the host, behind a full
    /// `backpressure` link (counted by the simulation).
    pub held_in_host: u32,
}

impl TcpSender {
    pub fn new(flow: FlowId, src: NodeId, dst: NodeId, cfg: TcpConfig) -> TcpSender {
        let rtt = RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto);
        let cc = Cc::new(cfg.cc);
        let cwnd = cc.initial_window((cfg.initial_window * cfg.mss) as f64);
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
            win: Window {
                cwnd,
                ssthresh: f64::INFINITY,
            },
            cc,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            first_partial_ack: false,
            segs: VecDeque::new(),
            scoreboard_active: false,
            rtt,
            rto_deadline: None,
            pace_next: SimTime::ZERO,
            pace_blocked: false,
            syn_sent_at: SimTime::ZERO,
            syn_retx: false,
            ecn_recover: 0,
            cwr_pending: false,
            ecn_hold_until: None,
            ecn_backoff: false,
            cuts: Vec::new(),
            held_in_host: 0,
            stats: SenderStats::default(),
            cfg,
        }
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
        self.in_recovery
    }

    /// When the sender next needs [`on_timer`](Self::on_timer).
    pub fn next_wakeup(&self) -> Option<SimTime> {
        let pace = self.pace_blocked.then_some(self.pace_next);
        [self.rto_deadline, pace, self.ecn_hold_until]
            .into_iter()
            .flatten()
            .min()
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
            self.rto_deadline = Some(now + self.rtt.rto());
            return;
        }
        let Some(i) = self.seg_index(seq) else {
            return;
        };
        self.segs[i].sent_at = now;
        if (i == 0 || self.held_in_host == 0) && self.rto_deadline.is_some() {
            self.rto_deadline = Some(now + self.rtt.rto());
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
        if let Some(d) = self.rto_deadline {
            if now >= d {
                if self.held_in_host > 0 {
                    // Still waiting in its own host: not a network loss.
                    self.rto_deadline = Some(now + self.rtt.rto());
                } else {
                    self.on_rto(em);
                }
            }
        }
    }

    /// An ACK (or SYN-ACK) from the receiver.
    pub fn on_ack(&mut self, pkt: &Packet, em: &mut Emit) {
        match (self.state, pkt.kind) {
            (SenderState::SynSent, PacketKind::SynAck) => {
                self.state = SenderState::Established;
                self.peer_rwnd = pkt.rwnd;
                if self.syn_retx {
                    // RFC 5681 section 3.1: a lost SYN or SYN-ACK means an
                    // initial window of one segment.
                    self.win.cwnd = self.cc.loss_window(&self.win, self.cfg.mss);
                } else {
                    self.take_rtt_sample(em.now - self.syn_sent_at);
                }
                self.rto_deadline = None;
                self.output(em);
                return;
            }
            (SenderState::Established, PacketKind::TcpAck) => {}
            _ => return,
        }
        let ack = pkt.ack.min(self.snd_max);
        let rwnd_changed = pkt.rwnd != self.peer_rwnd;
        self.peer_rwnd = pkt.rwnd;
        let sack_mode = self.cfg.recovery == Recovery::Sack;
        if sack_mode && pkt.n_sack > 0 {
            self.update_scoreboard(pkt.sack_blocks());
        }

        // RFC 3168 section 6.1.2: no window growth on an ECN-Echo ACK.
        let ece = self.cfg.ecn && pkt.has(flags::ECE);
        if ack > self.snd_una {
            self.on_new_ack(ack, !ece, em);
        } else if ack == self.snd_una
            && self.snd_max > self.snd_una
            && (!rwnd_changed || pkt.n_sack > 0)
        {
            self.on_dupack(em);
        }

        if pkt.has(flags::ECE) {
            self.on_ecn_echo(em.now);
        }
        self.output(em);
    }

    // ----- ACK processing ---------------------------------------------------

    fn on_new_ack(&mut self, ack: u64, grow: bool, em: &mut Emit) {
        let now = em.now;
        let acked = ack - self.snd_una;
        // Retire acknowledged segments; sample the RTT from the newest one
        // fully covered, unless this ACK covers any segment that was ever
        // retransmitted (Karn's rule; as Linux without timestamps): a
        // cumulative ACK that jumps a repaired hole would otherwise time the
        // whole recovery.
        let mut newest: Option<Seg> = None;
        let mut covers_retx = false;
        while let Some(s) = self.segs.front() {
            if s.end() <= ack {
                covers_retx |= s.ever_retx;
                newest = self.segs.pop_front();
            } else {
                if s.start < ack {
                    let s = self.segs.front_mut().unwrap();
                    s.len -= (ack - s.start) as u32;
                    s.start = ack;
                }
                break;
            }
        }
        // While ECN backs off at one segment, echoed ACKs give no sample,
        // which would undo the back-off (as ns-2's TCP agents do).
        let ecn_backing_off = !grow && self.ecn_backoff;
        if let Some(s) = newest {
            if !covers_retx && !ecn_backing_off {
                self.take_rtt_sample(now - s.sent_at);
            }
        }
        if grow {
            self.ecn_backoff = false;
        }
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        self.dupacks = 0;
        let mut restart_timer = true;

        if self.in_recovery {
            match self.cfg.recovery {
                // Tahoe never enters fast recovery.
                Recovery::Tahoe => {}
                Recovery::Reno => {
                    self.in_recovery = false;
                    self.win.cwnd = self.win.ssthresh;
                }
                Recovery::NewReno => {
                    if ack >= self.recover {
                        // Full ACK (RFC 6582 section 3.2 step 3, option 2).
                        self.in_recovery = false;
                        self.win.cwnd = self.win.ssthresh;
                    } else {
                        // Partial ACK: resend the next hole, deflate.
                        self.retransmit_at(self.snd_una, em);
                        let mss = self.cfg.mss as f64;
                        self.win.cwnd = (self.win.cwnd - acked as f64).max(mss);
                        if acked >= self.cfg.mss as u64 {
                            self.win.cwnd += mss;
                        }
                        restart_timer = self.first_partial_ack;
                        self.first_partial_ack = false;
                    }
                }
                Recovery::Sack => {
                    if ack >= self.recover {
                        self.in_recovery = false;
                    }
                }
            }
        } else if grow {
            let srtt = self.rtt.srtt();
            self.cc
                .on_ack(&mut self.win, acked, self.cfg.mss, srtt, now);
        }

        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else if restart_timer {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if self.scoreboard_active && self.segs.iter().all(|s| !s.sacked && !s.lost) {
            self.scoreboard_active = false;
        }
    }

    fn on_dupack(&mut self, em: &mut Emit) {
        self.dupacks += 1;
        let thresh = self.cfg.dupack_threshold;
        match self.cfg.recovery {
            Recovery::Tahoe => {
                if self.dupacks == thresh && self.snd_una >= self.recover {
                    let before = self.win.cwnd;
                    self.enter_loss(false);
                    // Slow start from one segment, resending from the hole.
                    self.win.cwnd = self.cc.loss_window(&self.win, self.cfg.mss);
                    self.log_cut(em.now, CutKind::FastRetransmit, before);
                    self.snd_nxt = self.snd_una;
                }
            }
            Recovery::Reno | Recovery::NewReno => {
                if self.in_recovery {
                    // Window inflation for each segment that left.
                    self.win.cwnd += self.cfg.mss as f64;
                } else if self.dupacks == thresh && self.snd_una >= self.recover {
                    let before = self.win.cwnd;
                    self.enter_loss(true);
                    self.win.cwnd = self.win.ssthresh + (thresh * self.cfg.mss) as f64;
                    self.log_cut(em.now, CutKind::FastRetransmit, before);
                    self.retransmit_at(self.snd_una, em);
                }
            }
            Recovery::Sack => {
                let lost_head = self.segs.front().is_some_and(|s| s.lost);
                if !self.in_recovery
                    && (self.dupacks >= thresh || lost_head)
                    && self.snd_una >= self.recover
                {
                    // RFC 6675 section 5 steps 4.1-4.4.
                    let before = self.win.cwnd;
                    self.enter_loss(true);
                    self.win.cwnd = self.win.ssthresh;
                    self.log_cut(em.now, CutKind::FastRetransmit, before);
                    if let Some(s) = self.segs.front_mut() {
                        if !s.lost {
                            s.lost = true;
                            s.rtx = false;
                        }
                    }
                    self.scoreboard_active = true;
                    // Step 4.3: the first lost segment goes out at once,
                    // whatever the pipe, so a long path does not wait for
                    // the pipe to drain below cwnd (and time out meanwhile).
                    let head = self.snd_una;
                    self.retransmit_at(head, em);
                }
            }
        }
    }

    fn log_cut(&mut self, time: SimTime, kind: CutKind, cwnd_before: f64) {
        self.cuts.push(WindowCut {
            time,
            kind,
            cwnd_before,
            cwnd_after: self.win.cwnd,
            ssthresh: self.win.ssthresh,
            srtt: self.rtt.srtt(),
        });
    }

    /// Common start of a loss episode: count it, set ssthresh and recover.
    fn enter_loss(&mut self, fast_recovery: bool) {
        let flight = self.snd_max - self.snd_una;
        self.win.ssthresh = self.cc.ssthresh_after_loss(&self.win, flight, self.cfg.mss);
        self.recover = self.snd_max;
        self.in_recovery = fast_recovery;
        self.first_partial_ack = true;
        self.stats.fast_retransmits += 1;
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
        if !self.cfg.ecn || self.in_recovery || self.snd_una <= self.ecn_recover {
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
            self.win.ssthresh = self.cc.ssthresh_after_loss(&self.win, flight, self.cfg.mss);
            self.win.cwnd = (self.win.cwnd / 2.0).max(mss);
        }
        self.ecn_recover = self.snd_max;
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
        self.log_cut(now, CutKind::Ecn, before);
    }

    fn on_rto(&mut self, em: &mut Emit) {
        let now = em.now;
        self.stats.timeouts += 1;
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
        self.cc.on_timeout();
        let before = self.win.cwnd;
        let flight = self.snd_max - self.snd_una;
        self.win.ssthresh = self.cc.ssthresh_after_loss(&self.win, flight, self.cfg.mss);
        // RFC 5681: loss window of one segment.
        self.win.cwnd = self.cc.loss_window(&self.win, self.cfg.mss);
        self.log_cut(now, CutKind::Timeout, before);
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.snd_max;
        if self.cfg.recovery == Recovery::Sack {
            for s in self.segs.iter_mut().filter(|s| !s.sacked) {
                s.lost = true;
                s.rtx = false;
            }
            self.scoreboard_active = true;
        } else {
            self.snd_nxt = self.snd_una;
        }
        self.rto_deadline = Some(now + self.rtt.rto());
        self.output(em);
    }

    // ----- SACK scoreboard --------------------------------------------------

    fn seg_index(&self, seq: u64) -> Option<usize> {
        self.segs.binary_search_by(|s| s.start.cmp(&seq)).ok()
    }

    fn update_scoreboard(&mut self, blocks: &[(u64, u64)]) {
        let mut changed = false;
        for &(s, e) in blocks {
            if e <= self.snd_una {
                continue;
            }
            let first = self.segs.partition_point(|x| x.start < s);
            for seg in self.segs.range_mut(first..) {
                if seg.end() > e {
                    break;
                }
                if !seg.sacked {
                    seg.sacked = true;
                    changed = true;
                }
            }
        }
        if changed {
            self.scoreboard_active = true;
            self.mark_lost();
        }
    }

    /// RFC 6675 IsLost: a segment with more than (DupThresh - 1) * SMSS
    /// SACKed bytes above it is lost.
    fn mark_lost(&mut self) {
        let limit = (self.cfg.dupack_threshold.saturating_sub(1) as u64) * self.cfg.mss as u64;
        let mut above = 0u64;
        for s in self.segs.iter_mut().rev() {
            if s.sacked {
                above += s.len as u64;
            } else if above > limit && !s.lost {
                s.lost = true;
                s.rtx = false;
            }
        }
    }

    /// RFC 6675 pipe: bytes thought to be in the network.
    fn pipe(&self) -> u64 {
        if !self.scoreboard_active {
            return self.snd_max - self.snd_una;
        }
        self.segs
            .iter()
            .filter(|s| !s.sacked && (!s.lost || s.rtx))
            .map(|s| s.len as u64)
            .sum()
    }

    // ----- sending ----------------------------------------------------------

    fn send_syn(&mut self, em: &mut Emit) {
        let mut p = em.packet(self.flow, self.src, self.dst, PacketKind::Syn);
        p.size = TCP_IP_HEADER;
        if self.cfg.ecn {
            p.flags |= flags::ECE | flags::CWR;
        }
        em.send(p);
        self.syn_sent_at = em.now;
        self.rto_deadline = Some(em.now + self.rtt.rto());
    }

    /// Pacing gate for the rate cap; true if a segment may leave now.
    fn pace_ok(&mut self, now: SimTime) -> bool {
        if self.cfg.rate_cap.is_none() || now >= self.pace_next {
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
        p.size = len + TCP_IP_HEADER;
        if self.cfg.ecn && !retx {
            p.flags |= flags::ECT;
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
        if let Some(rate) = self.cfg.rate_cap {
            self.pace_next = self.pace_next.max(now) + rate.tx_time(p.size);
        }
        self.stats.segments_sent += 1;
        if retx {
            self.stats.retransmits += 1;
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        em.send(p);
    }

    /// Resend the segment starting at `seq` now (fast retransmit, partial
    /// ACK), regardless of the window.
    fn retransmit_at(&mut self, seq: u64, em: &mut Emit) {
        if let Some(i) = self.seg_index(seq) {
            let now = em.now;
            let s = &mut self.segs[i];
            s.sent_at = now;
            s.ever_retx = true;
            s.rtx = true;
            let (start, len) = (s.start, s.len);
            // Not held back by the pacer, but counted against it.
            self.emit_segment(start, len, true, em);
        }
    }

    /// Send what the windows allow.
    pub fn output(&mut self, em: &mut Emit) {
        if self.state != SenderState::Established {
            return;
        }
        let mss = self.cfg.mss as u64;
        let sack_mode = self.cfg.recovery == Recovery::Sack;
        loop {
            let cwnd = self.win.cwnd as u64;
            // 1. Retransmissions: RFC 6675 NextSeg rule 1, or go-back-N.
            if sack_mode && self.scoreboard_active {
                if let Some(i) = self.segs.iter().position(|s| s.lost && !s.rtx && !s.sacked) {
                    let len = self.segs[i].len as u64;
                    if self.pipe() + len > cwnd || !self.pace_ok(em.now) {
                        return;
                    }
                    let s = &mut self.segs[i];
                    s.rtx = true;
                    s.ever_retx = true;
                    s.sent_at = em.now;
                    let (start, len) = (s.start, s.len);
                    self.emit_segment(start, len, true, em);
                    continue;
                }
            } else if self.snd_nxt < self.snd_max {
                let Some(i) = self.seg_index(self.snd_nxt) else {
                    self.snd_nxt = self.snd_max;
                    continue;
                };
                let len = self.segs[i].len as u64;
                let wnd = cwnd.min(self.peer_rwnd);
                if self.snd_nxt + len - self.snd_una > wnd || !self.pace_ok(em.now) {
                    return;
                }
                let s = &mut self.segs[i];
                s.ever_retx = true;
                s.sent_at = em.now;
                let (start, len) = (s.start, s.len);
                self.snd_nxt += len as u64;
                self.emit_segment(start, len, true, em);
                continue;
            }
            // 2. New data.
            let avail = self.app_limit.saturating_sub(self.snd_max);
            if avail == 0 || self.ecn_hold_until.is_some() {
                return;
            }
            let len = avail.min(mss);
            if len < mss && !self.closed && self.snd_max > self.snd_una {
                // Nagle: hold a small segment while data is outstanding.
                return;
            }
            let in_flight = if sack_mode {
                self.pipe()
            } else {
                self.snd_max - self.snd_una
            };
            if in_flight + len > cwnd || self.snd_max + len - self.snd_una > self.peer_rwnd {
                return;
            }
            if !self.pace_ok(em.now) {
                return;
            }
            let start = self.snd_max;
            self.segs.push_back(Seg {
                start,
                len: len as u32,
                sent_at: em.now,
                ever_retx: false,
                sacked: false,
                lost: false,
                rtx: false,
            });
            self.snd_max += len;
            self.snd_nxt = self.snd_max;
            self.emit_segment(start, len as u32, false, em);
        }
    }

    fn take_rtt_sample(&mut self, r: SimTime) {
        self.rtt.sample(r);
        let st = &mut self.stats;
        let ns = r.ns();
        if st.rtt_samples == 0 || ns < st.rtt_min_ns {
            st.rtt_min_ns = ns;
        }
        st.rtt_max_ns = st.rtt_max_ns.max(ns);
        st.rtt_samples += 1;
        st.rtt_sum_ns += ns as f64;
    }
}
