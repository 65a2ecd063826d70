//! BBR version 3, as draft-ietf-ccwg-bbr (revision -04, October 2025)
//! specifies it in pseudocode; Linux's implementation is Google's
//! out-of-tree `tcp_bbr.c` (v3 branch).
//!
//! What it adds to BBR v1 ([`super::Bbr`]): it responds to loss. A
//! long-term model (`inflight_longterm`) bounds what is in flight once a
//! bandwidth probe met more than 2 % loss, and grows again in ProbeBW_UP
//! (by 1, 2, 4 … segments per round); a short-term model (`bw_shortterm`,
//! `inflight_shortterm`) cuts the rate and the volume once per round with
//! loss outside probing, to the last round's delivery or by β = 0.7, and
//! is forgotten when the next probe starts. STARTUP also ends on
//! persistent loss. PROBE_BW cycles DOWN (pacing gain 0.9) → CRUISE (1.0)
//! → REFILL (1.0, one round) → UP (1.25, cwnd gain 2.25), a probe every
//! 2–3 s (uniform, from the connection's seeded stream) or sooner on
//! paths of small BDP (Reno coexistence, at most 63 rounds); the
//! bandwidth filter covers two such cycles. PROBE_RTT comes every 5 s
//! with cwnd at half the BDP.
//!
//! Units are bytes and seconds, as the draft recommends; the window is not
//! rounded to whole segments.

use super::bbr::MaxFilter;
use super::{CaState, CcTrace, CongestionControl, Control, LostSegment, Signal, Window};
use crate::rng::Rng;
use crate::time::SimTime;
use crate::transport::tcp::rate::RateSample;

/// BBRv3's parameters (`[tcp.cc] kind = "bbr3"`); the defaults are the
/// draft's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bbr3Params {
    /// Startup's pacing gain (4 ln 2 ≈ 2.77).
    pub startup_pacing_gain: f64,
    /// Drain's pacing gain (0.35).
    pub drain_pacing_gain: f64,
    /// The cwnd gain of every state but ProbeBW_UP and ProbeRTT (2).
    pub cwnd_gain: f64,
    /// ProbeBW_UP's cwnd gain (2.25).
    pub probe_up_cwnd_gain: f64,
    /// The per-round loss rate tolerated while probing (2 %).
    pub loss_thresh: f64,
    /// The multiplicative decrease per round with loss (0.7).
    pub beta: f64,
    /// The share of `inflight_longterm` left free in CRUISE (0.15).
    pub headroom: f64,
    /// The min-RTT filter's window (10 s).
    pub min_rtt_window: SimTime,
    /// The time between PROBE_RTTs (5 s).
    pub probe_rtt_interval: SimTime,
    /// The least time at PROBE_RTT's window (200 ms).
    pub probe_rtt_time: SimTime,
    /// PROBE_RTT's cwnd, a share of the BDP (0.5).
    pub probe_rtt_cwnd_gain: f64,
    /// The least cwnd, segments (4).
    pub min_cwnd: u32,
    /// Pacing below the estimate (1 %).
    pub pacing_margin: f64,
    /// ECN, which the draft leaves unspecified, as Google's BBRv3 answers
    /// it (`tcp_bbr.c`, v3 branch) on a connection whose feedback counts
    /// every mark: each round with marks outside probing cuts
    /// `inflight_shortterm` by `ecn_factor` × α (1/3; 0: no cut).
    pub ecn_factor: f64,
    /// A sample whose marked share exceeds this ends a probe, and Startup
    /// after `full_ecn_cnt` rounds (0.5).
    pub ecn_thresh: f64,
    /// α's gain per round (1/16).
    pub ecn_alpha_gain: f64,
    /// α's first value (1).
    pub ecn_alpha_init: f64,
    /// The largest min RTT at which marks are heeded (5 ms: marks are read
    /// as a shallow-threshold, data-centre AQM's); zero for any RTT.
    pub ecn_max_rtt: SimTime,
    /// Rounds of Startup above `ecn_thresh` that end it (2; 0: never).
    pub full_ecn_cnt: u32,
    /// After a cycle with marks and no loss, the next probe starts with
    /// this share of `inflight_longterm` per round (0.5; 0: no early probe).
    pub ecn_reprobe_gain: f64,
}

impl Default for Bbr3Params {
    fn default() -> Self {
        Bbr3Params {
            startup_pacing_gain: 4.0 * std::f64::consts::LN_2,
            drain_pacing_gain: 0.35,
            cwnd_gain: 2.0,
            probe_up_cwnd_gain: 2.25,
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            min_rtt_window: SimTime::from_secs(10),
            probe_rtt_interval: SimTime::from_secs(5),
            probe_rtt_time: SimTime::from_ms(200),
            probe_rtt_cwnd_gain: 0.5,
            min_cwnd: 4,
            pacing_margin: 0.01,
            ecn_factor: 1.0 / 3.0,
            ecn_thresh: 0.5,
            ecn_alpha_gain: 1.0 / 16.0,
            ecn_alpha_init: 1.0,
            ecn_max_rtt: SimTime::from_ms(5),
            full_ecn_cnt: 2,
            ecn_reprobe_gain: 0.5,
        }
    }
}

/// BBRv3's states; the numbers are the window traces' `cc_state` codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bbr3Mode {
    Startup = 1,
    Drain = 2,
    ProbeRtt = 4,
    Down = 5,
    Cruise = 6,
    Refill = 7,
    Up = 8,
}

/// Where the ACKs stand relative to a bandwidth probe (`BBR.ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
    Refilling,
}

/// Bandwidth probing: after this many ACKs with losses in a round, a
/// lossy round in Startup's fast recovery ends Startup
/// (`BBRStartupFullLossCnt`).
const STARTUP_FULL_LOSS_CNT: u32 = 6;
/// Rounds of the extra-ACKed filter once the pipe was filled.
const EXTRA_ACKED_ROUNDS: u64 = 10;
/// Reno coexistence: at most this many rounds between probes.
const RENO_ROUNDS_CAP: u64 = 63;

#[derive(Clone, Debug)]
pub struct Bbr3 {
    p: Bbr3Params,
    rng: Rng,
    mss: f64,
    init_cwnd: f64,
    pub mode: Bbr3Mode,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    /// The bandwidth filter (`BBR.max_bw_filter`): the largest sample of
    /// the previous ProbeBW cycle and of this one.
    max_bw: [f64; 2],
    cycle_count: u64,
    /// The bandwidth in use: `min(max_bw, bw_shortterm)`, bytes/s.
    bw: f64,
    bw_shortterm: f64,
    inflight_shortterm: f64,
    inflight_longterm: f64,
    bw_latest: f64,
    inflight_latest: f64,
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_events_in_round: u32,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    rounds_since_bw_probe: u64,
    bw_probe_wait: SimTime,
    cycle_stamp: SimTime,
    ack_phase: AckPhase,
    bw_probe_up_rounds: u32,
    /// Bytes ACKed towards the next raise of `inflight_longterm`.
    bw_probe_up_acks: f64,
    /// Segments ACKed per segment of raise.
    probe_up_cnt: f64,
    bw_probe_samples: bool,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    min_rtt: Option<SimTime>,
    min_rtt_stamp: SimTime,
    probe_rtt_min_delay: Option<SimTime>,
    probe_rtt_min_stamp: SimTime,
    probe_rtt_expired: bool,
    probe_rtt_done_stamp: Option<SimTime>,
    probe_rtt_round_done: bool,
    prior_cwnd: f64,
    idle_restart: bool,
    extra_acked_interval_start: SimTime,
    extra_acked_delivered: u64,
    extra_acked: MaxFilter,
    pacing_rate: f64,
    prev_state: CaState,
    /// cwnd at the end of the last ACK, bytes.
    cwnd: f64,
    /// ECN (Google's v3): marks are heeded (the connection counts them and
    /// its min RTT was at most `ecn_max_rtt` once).
    ecn_eligible: bool,
    /// The marked share of delivered data, smoothed per round.
    ecn_alpha: f64,
    /// Delivered and CE-delivered bytes at α's last update.
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,
    /// CE-delivered bytes as of the last ACK.
    seen_ce: u64,
    ecn_in_round: bool,
    ecn_in_cycle: bool,
    loss_in_cycle: bool,
    startup_ecn_rounds: u32,
}

impl Bbr3 {
    pub fn new(p: Bbr3Params, rng: Rng) -> Bbr3 {
        Bbr3 {
            p,
            rng,
            mss: 1460.0,
            init_cwnd: 14_600.0,
            mode: Bbr3Mode::Startup,
            pacing_gain: p.startup_pacing_gain,
            cwnd_gain: p.cwnd_gain,
            max_bw: [0.0; 2],
            cycle_count: 0,
            bw: 0.0,
            bw_shortterm: f64::INFINITY,
            inflight_shortterm: f64::INFINITY,
            inflight_longterm: f64::INFINITY,
            bw_latest: 0.0,
            inflight_latest: 0.0,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            rounds_since_bw_probe: 0,
            bw_probe_wait: SimTime::ZERO,
            cycle_stamp: SimTime::ZERO,
            ack_phase: AckPhase::Init,
            bw_probe_up_rounds: 0,
            bw_probe_up_acks: 0.0,
            probe_up_cnt: f64::INFINITY,
            bw_probe_samples: false,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: SimTime::ZERO,
            probe_rtt_expired: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            idle_restart: false,
            extra_acked_interval_start: SimTime::ZERO,
            extra_acked_delivered: 0,
            extra_acked: MaxFilter::default(),
            pacing_rate: 0.0,
            prev_state: CaState::Open,
            cwnd: 0.0,
            ecn_eligible: false,
            ecn_alpha: p.ecn_alpha_init,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            seen_ce: 0,
            ecn_in_round: false,
            ecn_in_cycle: false,
            loss_in_cycle: false,
            startup_ecn_rounds: 0,
        }
    }

    pub fn seed(&mut self, rng: Rng) {
        self.rng = rng;
    }

    pub fn bw(&self) -> f64 {
        self.bw
    }

    pub fn max_bw(&self) -> f64 {
        self.max_bw[0].max(self.max_bw[1])
    }

    pub fn inflight_longterm(&self) -> f64 {
        self.inflight_longterm
    }

    pub fn inflight_shortterm(&self) -> f64 {
        self.inflight_shortterm
    }

    pub fn bw_shortterm(&self) -> f64 {
        self.bw_shortterm
    }

    /// ECN's α, the smoothed marked share.
    pub fn ecn_alpha(&self) -> f64 {
        self.ecn_alpha
    }

    pub fn ecn_eligible(&self) -> bool {
        self.ecn_eligible
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    pub fn pacing_rate(&self) -> f64 {
        self.pacing_rate
    }

    fn min_pipe(&self) -> f64 {
        self.p.min_cwnd as f64 * self.mss
    }

    fn in_probe_bw(&self) -> bool {
        matches!(
            self.mode,
            Bbr3Mode::Down | Bbr3Mode::Cruise | Bbr3Mode::Refill | Bbr3Mode::Up
        )
    }

    fn is_probing_bw(&self) -> bool {
        matches!(
            self.mode,
            Bbr3Mode::Startup | Bbr3Mode::Refill | Bbr3Mode::Up
        )
    }

    fn update_gains(&mut self) {
        let p = self.p;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Bbr3Mode::Startup => (p.startup_pacing_gain, p.cwnd_gain),
            Bbr3Mode::Drain => (p.drain_pacing_gain, p.cwnd_gain),
            Bbr3Mode::Down => (0.9, p.cwnd_gain),
            Bbr3Mode::Cruise | Bbr3Mode::Refill => (1.0, p.cwnd_gain),
            Bbr3Mode::Up => (1.25, p.probe_up_cwnd_gain),
            Bbr3Mode::ProbeRtt => (1.0, p.probe_rtt_cwnd_gain),
        };
    }

    // ----- model helpers ----------------------------------------------------

    /// `BBRBDPMultiple()`: `gain × bw × min_rtt`, bytes.
    pub fn bdp_multiple(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => self.init_cwnd,
            Some(r) => gain * bw * r.secs_f64(),
        }
    }

    /// `BBRSetSendQuantum()` and `BBRUpdateOffloadBudget()`: three quanta
    /// of 1 ms of pacing, 2 segments to 64 kB each.
    fn offload_budget(&self) -> f64 {
        3.0 * send_quantum(self.pacing_rate, self.mss)
    }

    /// `BBRQuantizationBudget()`.
    fn quantization_budget(&self, cap: f64) -> f64 {
        let mut cap = cap.max(self.offload_budget()).max(self.min_pipe());
        if self.mode == Bbr3Mode::Up {
            cap += 2.0 * self.mss;
        }
        cap
    }

    /// `BBRInflight()`.
    pub fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// `BBRUpdateMaxInflight()`.
    fn max_inflight(&self) -> f64 {
        let cap = self.bdp_multiple(self.bw, self.cwnd_gain) + self.extra_acked.get();
        self.quantization_budget(cap)
    }

    /// `BBRInflightWithHeadroom()`.
    fn inflight_with_headroom(&self) -> f64 {
        if self.inflight_longterm.is_infinite() {
            return f64::INFINITY;
        }
        let headroom = self.mss.max(self.p.headroom * self.inflight_longterm);
        (self.inflight_longterm - headroom).max(self.min_pipe())
    }

    /// `BBRTargetInflight()`.
    fn target_inflight(&self) -> f64 {
        self.bdp_multiple(self.bw, 1.0).min(self.cwnd)
    }

    fn is_inflight_too_high(&self, lost: u64, tx_in_flight: u64) -> bool {
        lost as f64 > tx_in_flight as f64 * self.p.loss_thresh
    }

    /// The sample's marked share is over `ecn_thresh` (the ECN half of
    /// Google's `bbr_is_inflight_too_high()`).
    fn is_ecn_too_high(&self, rs: &RateSample) -> bool {
        self.ecn_eligible
            && self.p.ecn_thresh > 0.0
            && rs.delivered_ce > 0
            && rs.delivered > 0
            && rs.delivered_ce as f64 > rs.delivered as f64 * self.p.ecn_thresh
    }

    /// `BBRHandleInflightTooHigh()`: once per probe, `inflight_longterm`
    /// comes down to the flight at which the signal came (at least β of
    /// the target), and an UP phase ends.
    fn handle_inflight_too_high(&mut self, tx_in_flight: f64, app_limited: bool, c: &Control) {
        self.bw_probe_samples = false;
        if !app_limited {
            self.inflight_longterm = tx_in_flight.max(self.target_inflight() * self.p.beta);
        }
        if self.mode == Bbr3Mode::Up {
            self.start_down(c);
        }
    }

    /// Startup saw too much loss or marking: the pipe is full, and
    /// `inflight_longterm` is what the last round delivered, at least the
    /// BDP (Google's `bbr_handle_queue_too_high_in_startup()`).
    fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        self.inflight_longterm = self.bdp_multiple(self.bw, 1.0).max(self.inflight_latest);
    }

    /// Google's `bbr_update_ecn_alpha()`, at the start of a round: the
    /// connection becomes eligible once its min RTT is at most
    /// `ecn_max_rtt`; α moves by `ecn_alpha_gain` towards the share of
    /// the data delivered since the last update that was marked; Startup
    /// ends after `full_ecn_cnt` rounds in a row above `ecn_thresh`.
    fn update_ecn_alpha(&mut self, c: &Control) {
        let p = self.p;
        if !self.ecn_eligible
            && c.ecn
            && p.ecn_factor > 0.0
            && (p.ecn_max_rtt == SimTime::ZERO || self.min_rtt.is_some_and(|m| m <= p.ecn_max_rtt))
        {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return;
        }
        let delivered = c.delivered.saturating_sub(self.alpha_last_delivered);
        let ce = c.delivered_ce.saturating_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return;
        }
        let ratio = ce as f64 / delivered as f64;
        let g = p.ecn_alpha_gain;
        self.ecn_alpha = ((1.0 - g) * self.ecn_alpha + g * ratio).min(1.0);
        self.alpha_last_delivered = c.delivered;
        self.alpha_last_delivered_ce = c.delivered_ce;
        // bbr_check_ecn_too_high_in_startup(); a zero count or threshold
        // turns it off.
        if self.full_bw_reached || p.full_ecn_cnt == 0 || p.ecn_thresh == 0.0 {
            return;
        }
        if ratio >= p.ecn_thresh {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= p.full_ecn_cnt {
            self.handle_queue_too_high_in_startup();
        }
    }

    fn save_cwnd(&mut self, cwnd: f64) {
        if self.prev_state == CaState::Open && self.mode != Bbr3Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    fn start_round(&mut self, c: &Control) {
        self.next_round_delivered = c.delivered;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0.0;
    }

    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = f64::INFINITY;
        self.inflight_shortterm = f64::INFINITY;
    }

    // ----- state transitions ------------------------------------------------

    fn enter_startup(&mut self) {
        self.mode = Bbr3Mode::Startup;
        self.update_gains();
    }

    fn enter_drain(&mut self) {
        self.mode = Bbr3Mode::Drain;
        self.update_gains();
    }

    fn enter_probe_bw(&mut self, c: &Control) {
        self.start_down(c);
    }

    /// `BBRPickProbeWait()`: 0 or 1 rounds, 2–3 s.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_bw_probe = self.rng.uniform_u64(0, 1);
        self.bw_probe_wait = SimTime::from_secs_f64(2.0 + self.rng.uniform());
    }

    fn start_down(&mut self, c: &Control) {
        self.reset_congestion_signals();
        self.probe_up_cnt = f64::INFINITY;
        self.pick_probe_wait();
        self.cycle_stamp = c.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round(c);
        self.mode = Bbr3Mode::Down;
        self.update_gains();
    }

    fn start_cruise(&mut self) {
        self.mode = Bbr3Mode::Cruise;
        self.update_gains();
    }

    /// REFILL, the probe's first `inflight_longterm` raise being
    /// 2^`up_rounds` segments a round.
    fn start_refill(&mut self, up_rounds: u32, c: &Control) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acks = 0.0;
        self.ack_phase = AckPhase::Refilling;
        self.start_round(c);
        self.mode = Bbr3Mode::Refill;
        self.update_gains();
    }

    fn start_up(&mut self, rate: f64, c: &Control) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round(c);
        self.reset_full_bw();
        self.full_bw = rate;
        self.mode = Bbr3Mode::Up;
        self.update_gains();
        self.raise_inflight_longterm_slope();
    }

    /// `BBRRaiseInflightLongtermSlope()`: the raise doubles each round.
    fn raise_inflight_longterm_slope(&mut self) {
        let growth = (1u64 << self.bw_probe_up_rounds) as f64;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_cnt = (self.cwnd / self.mss / growth).max(1.0);
    }

    /// `BBRProbeInflightLongtermUpward()`.
    fn probe_inflight_longterm_upward(&mut self, rs: &RateSample, c: &Control) {
        if !c.cwnd_limited || self.cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked as f64;
        let per = self.probe_up_cnt * self.mss;
        if self.bw_probe_up_acks >= per {
            let delta = (self.bw_probe_up_acks / per).floor();
            self.bw_probe_up_acks -= delta * per;
            self.inflight_longterm += delta * self.mss;
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    /// `BBRIsRenoCoexistenceProbeTime()`.
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = (self.target_inflight() / self.mss) as u64;
        self.rounds_since_bw_probe >= reno_rounds.min(RENO_ROUNDS_CAP)
    }

    /// `BBRIsTimeToProbeBW()`, and Google's quick re-probe after a cycle
    /// with marks and no loss, once the last mark's CWR state is over (in
    /// case the traffic that caused them left).
    fn is_time_to_probe_bw(&mut self, c: &Control) -> bool {
        let p = self.p;
        if p.ecn_reprobe_gain > 0.0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && c.state == CaState::Open
            && !c.cwr
        {
            // 2^n segments per round is about ecn_reprobe_gain of
            // inflight_longterm.
            let segs = (self.inflight_longterm * p.ecn_reprobe_gain / self.mss).max(1.0);
            let n = segs.log2().floor().min(30.0) as u32;
            self.start_refill(n, c);
            return true;
        }
        if c.now > self.cycle_stamp + self.bw_probe_wait || self.is_reno_coexistence_probe_time() {
            self.start_refill(0, c);
            return true;
        }
        false
    }

    /// `BBRIsTimeToCruise()`.
    fn is_time_to_cruise(&self, c: &Control) -> bool {
        let inflight = c.inflight as f64;
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(self.max_bw(), 1.0)
    }

    /// `BBRIsTimeToGoDown()`.
    fn is_time_to_go_down(&mut self, rate: f64, c: &Control) -> bool {
        if c.cwnd_limited && self.cwnd >= self.inflight_longterm {
            self.reset_full_bw();
            self.full_bw = rate;
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// `BBRAdaptLongTermModel()`.
    fn adapt_long_term_model(&mut self, rs: &RateSample, c: &Control) {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The last ACKs of the probe are in: forget the previous
            // cycle's bandwidth. The draft's pseudocode stays in
            // ACKS_PROBE_STOPPING, which would age the filter every round
            // until the next probe; Linux's v3 moves on to ACKS_INIT and
            // stops taking the probe's losses, as here.
            self.ack_phase = AckPhase::Init;
            self.bw_probe_samples = false;
            if self.in_probe_bw() && !rs.is_app_limited {
                // BBRAdvanceMaxBwFilter()
                self.cycle_count += 1;
                self.max_bw = [self.max_bw[1], 0.0];
            }
        }
        if self.is_ecn_too_high(rs) {
            // Google's v3 answers a marked sample on the ACK itself; the
            // draft's loss signal is answered per lost segment (on_lost).
            if self.bw_probe_samples {
                self.handle_inflight_too_high(rs.tx_in_flight as f64, rs.is_app_limited, c);
            }
        } else if !self.is_inflight_too_high(rs.lost, rs.tx_in_flight) {
            if self.inflight_longterm.is_infinite() {
                return;
            }
            if rs.tx_in_flight as f64 > self.inflight_longterm {
                self.inflight_longterm = rs.tx_in_flight as f64;
            }
            if self.mode == Bbr3Mode::Up {
                self.probe_inflight_longterm_upward(rs, c);
            }
        }
    }

    /// `BBRUpdateProbeBWCyclePhase()`.
    fn update_probe_bw_cycle_phase(&mut self, rs: &RateSample, rate: f64, c: &Control) {
        if !self.full_bw_reached {
            return;
        }
        self.adapt_long_term_model(rs, c);
        let mode = self.mode;
        match mode {
            Bbr3Mode::Down => {
                if self.is_time_to_probe_bw(c) {
                    return;
                }
                if self.is_time_to_cruise(c) {
                    self.start_cruise();
                }
            }
            Bbr3Mode::Cruise => {
                self.is_time_to_probe_bw(c);
            }
            // After one round of REFILL, UP.
            Bbr3Mode::Refill if self.round_start => {
                self.bw_probe_samples = true;
                self.start_up(rate, c);
            }
            Bbr3Mode::Up if self.is_time_to_go_down(rate, c) => self.start_down(c),
            _ => {}
        }
    }

    // ----- per-ACK model updates --------------------------------------------

    /// `BBRUpdateLatestDeliverySignals()`.
    fn update_latest_delivery_signals(&mut self, rs: &RateSample, rate: f64, c: &Control) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered as f64);
        if rs.sampled && rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = c.delivered;
            self.loss_round_start = true;
        }
    }

    /// `BBRUpdateRound()` and `BBRUpdateMaxBw()`.
    fn update_max_bw(&mut self, rs: &RateSample, rate: f64, c: &Control) {
        self.round_start = false;
        if rs.sampled && rs.prior_delivered >= self.next_round_delivered {
            self.start_round(c);
            self.round_count += 1;
            self.rounds_since_bw_probe += 1;
            self.round_start = true;
        }
        if rate > 0.0 && (rate >= self.max_bw() || !rs.is_app_limited) {
            self.max_bw[1] = self.max_bw[1].max(rate);
        }
    }

    /// `BBRUpdateCongestionSignals()`.
    fn update_congestion_signals(&mut self, rs: &RateSample, rate: f64, c: &Control) {
        self.update_max_bw(rs, rate, c);
        if self.round_start {
            self.update_ecn_alpha(c);
        }
        let marked = c.delivered_ce > self.seen_ce;
        self.seen_ce = c.delivered_ce;
        self.ecn_in_round |= self.ecn_eligible && marked;
        if !self.loss_round_start {
            return;
        }
        // BBRAdaptLowerBoundsFromCongestion(): once per round.
        if !self.is_probing_bw() {
            // Google's v3: a round with marks cuts the volume by
            // ecn_factor × α, a round with loss as the draft says; the
            // lower of the two stands.
            let mut ecn_cap = f64::INFINITY;
            if self.ecn_in_round {
                if self.inflight_shortterm.is_infinite() {
                    self.inflight_shortterm = self.cwnd;
                }
                ecn_cap = self.inflight_shortterm * (1.0 - self.p.ecn_factor * self.ecn_alpha);
            }
            if self.loss_in_round {
                if self.bw_shortterm.is_infinite() {
                    self.bw_shortterm = self.max_bw();
                }
                if self.inflight_shortterm.is_infinite() {
                    self.inflight_shortterm = self.cwnd;
                }
                self.bw_shortterm = self.bw_latest.max(self.p.beta * self.bw_shortterm);
                self.inflight_shortterm = self
                    .inflight_latest
                    .max(self.p.beta * self.inflight_shortterm);
            }
            self.inflight_shortterm = self.inflight_shortterm.min(ecn_cap);
        }
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `BBRUpdateACKAggregation()`.
    fn update_ack_aggregation(&mut self, rs: &RateSample, c: &Control) {
        let interval = c.now.saturating_sub(self.extra_acked_interval_start);
        let mut expected = self.bw * interval.secs_f64();
        if self.extra_acked_delivered as f64 <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = c.now;
            expected = 0.0;
        }
        self.extra_acked_delivered += rs.acked_sacked;
        let extra = (self.extra_acked_delivered as f64 - expected).min(self.cwnd);
        let window = if self.full_bw_reached {
            EXTRA_ACKED_ROUNDS
        } else {
            1
        };
        self.extra_acked.update(window, self.round_count, extra);
    }

    /// `BBRCheckFullBWReached()`: from the delivery rate of round starts.
    fn check_full_bw_reached(&mut self, rs: &RateSample, rate: f64) {
        if self.full_bw_now || !self.round_start || rs.is_app_limited {
            return;
        }
        if rate >= self.full_bw * 1.25 {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= 3;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// `BBRCheckStartupHighLoss()`: a round of fast recovery in Startup
    /// with six ACKs that found losses and a loss rate above the
    /// threshold.
    fn check_startup_high_loss(&mut self, rs: &RateSample, c: &Control) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(15);
        }
        if self.loss_round_start
            && c.state == CaState::Recovery
            && self.loss_events_in_round >= STARTUP_FULL_LOSS_CNT
            && (self.is_inflight_too_high(rs.lost, rs.tx_in_flight) || self.is_ecn_too_high(rs))
        {
            self.handle_queue_too_high_in_startup();
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `BBRUpdateMinRTT()` and `BBRCheckProbeRTT()`.
    fn update_min_rtt(&mut self, rs: &RateSample, w: &mut Window, c: &mut Control) {
        self.probe_rtt_expired = c.now > self.probe_rtt_min_stamp + self.p.probe_rtt_interval;
        if let Some(rtt) = rs.rtt {
            if self.probe_rtt_min_delay.is_none_or(|m| rtt < m) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(rtt);
                self.probe_rtt_min_stamp = c.now;
            }
        }
        let min_rtt_expired = c.now > self.min_rtt_stamp + self.p.min_rtt_window;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
        if self.mode != Bbr3Mode::ProbeRtt && self.probe_rtt_expired && !self.idle_restart {
            self.mode = Bbr3Mode::ProbeRtt;
            self.update_gains();
            self.save_cwnd(w.cwnd);
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round(c);
        }
        if self.mode == Bbr3Mode::ProbeRtt {
            c.mark_app_limited = true;
            if self.probe_rtt_done_stamp.is_none() && (c.inflight as f64) <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = Some(c.now + self.p.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.start_round(c);
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(w, c);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn probe_rtt_cwnd(&self) -> f64 {
        self.bdp_multiple(self.bw, self.p.probe_rtt_cwnd_gain)
            .max(self.min_pipe())
    }

    /// `BBRCheckProbeRTTDone()` and `BBRExitProbeRTT()`.
    fn check_probe_rtt_done(&mut self, w: &mut Window, c: &Control) {
        if self.probe_rtt_done_stamp.is_none_or(|d| c.now <= d) {
            return;
        }
        self.probe_rtt_min_stamp = c.now;
        w.cwnd = w.cwnd.max(self.prior_cwnd);
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_down(c);
            self.start_cruise();
        } else {
            self.enter_startup();
        }
    }

    /// `BBRSetPacingRateWithGain()`.
    fn set_pacing_rate(&mut self, gain: f64) {
        let rate = gain * self.bw * (1.0 - self.p.pacing_margin);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `BBRSetCwnd()` with its bounds.
    fn set_cwnd(&mut self, rs: &RateSample, w: &mut Window, c: &Control) {
        let max_inflight = self.max_inflight();
        let acked = rs.acked_sacked as f64;
        let mut cwnd = w.cwnd;
        if self.full_bw_reached {
            cwnd = (cwnd + acked).min(max_inflight);
        } else if cwnd < max_inflight || (c.delivered as f64) < self.init_cwnd {
            cwnd += acked;
        }
        cwnd = cwnd.max(self.min_pipe());
        if self.mode == Bbr3Mode::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        // BBRBoundCwndForModel()
        let mut cap = f64::INFINITY;
        if self.in_probe_bw() && self.mode != Bbr3Mode::Cruise {
            cap = self.inflight_longterm;
        } else if matches!(self.mode, Bbr3Mode::ProbeRtt | Bbr3Mode::Cruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_shortterm).max(self.min_pipe());
        w.cwnd = cwnd.min(cap);
    }
}

/// `BBRSetSendQuantum()`: 1 ms at `pacing_rate` bytes/s, between 2
/// segments of `mss` bytes and 64 kB.
fn send_quantum(pacing_rate: f64, mss: f64) -> f64 {
    (pacing_rate * 1e-3).min(65_536.0).max(2.0 * mss)
}

impl CongestionControl for Bbr3 {
    fn on_ack(&mut self, _w: &mut Window, _s: &super::AckSample) {}

    /// `BBROnEnterFastRecovery()` / `BBROnEnterRTO()`: remember cwnd.
    fn ssthresh_after(&mut self, w: &Window, _signal: Signal, _flight: u64, _mss: u32) -> f64 {
        self.save_cwnd(w.cwnd);
        w.ssthresh
    }

    /// An undone episode (`bbr_undo_cwnd()` of Google's BBRv3): the full
    /// bandwidth detector starts over.
    fn on_undo(&mut self) {
        self.reset_full_bw();
    }

    fn wants_rate_sample(&self) -> bool {
        true
    }

    fn owns_window(&self) -> bool {
        true
    }

    /// `BBROnInit()`.
    fn on_established(&mut self, w: &mut Window, c: &mut Control) {
        self.mss = c.mss as f64;
        self.init_cwnd = w.cwnd;
        self.cwnd = w.cwnd;
        w.ssthresh = f64::INFINITY;
        self.max_bw = [0.0; 2];
        self.min_rtt = c.srtt;
        self.min_rtt_stamp = c.now;
        self.probe_rtt_min_delay = c.srtt;
        self.probe_rtt_min_stamp = c.now;
        self.extra_acked_interval_start = c.now;
        self.reset_congestion_signals();
        self.reset_short_term_model();
        self.reset_full_bw();
        // BBRInitPacingRate()
        let rtt = c.srtt.map_or(1e-3, |s| s.secs_f64().max(1e-6));
        self.pacing_rate = self.p.startup_pacing_gain * w.cwnd / rtt;
        self.enter_startup();
        c.pacing_rate = Some(self.pacing_rate);
    }

    /// `BBRUpdateOnACK()`.
    fn control(&mut self, w: &mut Window, rs: &RateSample, c: &mut Control) {
        // Leaving recovery restores the cwnd saved on entry.
        if self.prev_state != CaState::Open && c.state == CaState::Open {
            w.cwnd = w.cwnd.max(self.prior_cwnd);
        }
        self.prev_state = c.state;
        let rate = rs.delivery_rate().unwrap_or(0.0);
        self.update_latest_delivery_signals(rs, rate, c);
        self.update_congestion_signals(rs, rate, c);
        self.update_ack_aggregation(rs, c);
        self.check_full_bw_reached(rs, rate);
        self.check_startup_high_loss(rs, c);
        if self.mode == Bbr3Mode::Startup && self.full_bw_reached {
            self.enter_drain();
        }
        if self.mode == Bbr3Mode::Drain && (c.inflight as f64) <= self.inflight(self.bw, 1.0) {
            self.enter_probe_bw(c);
        }
        self.update_probe_bw_cycle_phase(rs, rate, c);
        self.update_min_rtt(rs, w, c);
        if self.loss_round_start {
            self.bw_latest = rate;
            self.inflight_latest = rs.delivered as f64;
        }
        self.bw = self.max_bw().min(self.bw_shortterm);
        self.set_pacing_rate(self.pacing_gain);
        self.set_cwnd(rs, w, c);
        self.cwnd = w.cwnd;
        c.pacing_rate = Some(self.pacing_rate);
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// `BBRHandleLostPacket()`.
    fn on_lost(&mut self, l: &LostSegment, c: &Control) {
        if !self.loss_in_round {
            self.loss_round_delivered = c.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
        if !self.bw_probe_samples {
            return;
        }
        let lost = l.lost_now.saturating_sub(l.lost_at_send);
        if !self.is_inflight_too_high(lost, l.tx_in_flight) {
            return;
        }
        // BBRInflightAtLoss(): where in this segment the loss rate
        // crossed the threshold.
        let size = l.size as f64;
        let inflight_prev = l.tx_in_flight as f64 - size;
        let lost_prev = lost as f64 - size;
        let t = self.p.loss_thresh;
        let lost_prefix = (t * inflight_prev - lost_prev) / (1.0 - t);
        let tx_in_flight = (inflight_prev + lost_prefix).max(0.0);
        self.handle_inflight_too_high(tx_in_flight, l.is_app_limited, c);
    }

    /// `BBRHandleRestartFromIdle()`.
    fn on_tx_start(&mut self, w: &mut Window, c: &mut Control) {
        self.idle_restart = true;
        self.extra_acked_interval_start = c.now;
        if self.in_probe_bw() {
            self.set_pacing_rate(1.0);
            c.pacing_rate = Some(self.pacing_rate);
        } else if self.mode == Bbr3Mode::ProbeRtt {
            self.check_probe_rtt_done(w, c);
        }
    }

    /// A burst is the draft's send quantum.
    fn tso_segs(&self, pacing_rate: f64, mss: u32) -> u32 {
        (send_quantum(pacing_rate, mss as f64) / mss as f64) as u32
    }

    fn trace(&self) -> CcTrace {
        CcTrace {
            state: self.mode as u8,
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            bw: self.bw,
            min_rtt: self.min_rtt.map_or(f64::NAN, |m| m.secs_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;
    const M: f64 = MSS as f64;

    fn ms(x: u64) -> SimTime {
        SimTime::from_ms(x)
    }

    fn ctx(now: SimTime, delivered: u64, inflight: u64) -> Control {
        Control {
            now,
            mss: MSS,
            state: CaState::Open,
            inflight,
            delivered,
            delivered_time: now,
            lost: 0,
            delivered_ce: 0,
            ecn: false,
            cwr: false,
            srtt: Some(ms(100)),
            min_rtt: Some(ms(100)),
            edt: now,
            cwnd_limited: false,
            pacing_rate: None,
            mark_app_limited: false,
        }
    }

    /// A sample of `bw` bytes/s over 100 ms that starts a new round and
    /// delivers `acked` bytes, its segment sent with `tx` bytes in flight.
    fn sample(prior_delivered: u64, bw: f64, acked: u64, tx: u64) -> RateSample {
        RateSample {
            delivered: (bw * 0.1) as u64,
            interval: ms(100),
            valid: true,
            sampled: true,
            prior_delivered,
            rtt: Some(ms(100)),
            acked_sacked: acked,
            tx_in_flight: tx,
            ..RateSample::default()
        }
    }

    fn started(seed: u64) -> (Bbr3, Window) {
        started_with(Bbr3Params::default(), seed)
    }

    fn started_with(p: Bbr3Params, seed: u64) -> (Bbr3, Window) {
        let mut b = Bbr3::new(p, Rng::stream(seed, "bbr3-test", 0));
        let mut w = Window {
            cwnd: 10.0 * M,
            ssthresh: f64::INFINITY,
        };
        b.on_established(&mut w, &mut ctx(SimTime::ZERO, 0, 0));
        (b, w)
    }

    /// One round at `bw` with `inflight` bytes in flight after it.
    fn round(b: &mut Bbr3, w: &mut Window, t: &mut u64, d: &mut u64, bw: f64, inflight: u64) {
        *t += 100;
        let acked = (bw * 0.1) as u64;
        let rs = sample(*d, bw, acked, inflight);
        *d += acked;
        b.control(w, &rs, &mut ctx(ms(*t), *d, inflight));
    }

    /// Startup → Drain → ProbeBW_DOWN → CRUISE at 1 MB/s (4 rounds);
    /// returns the clock and the delivered count.
    fn cruising(seed: u64) -> (Bbr3, Window, u64, u64) {
        let (mut b, mut w) = started(seed);
        let (mut t, mut d) = (0, 0);
        for _ in 0..4 {
            round(&mut b, &mut w, &mut t, &mut d, 1e6, 0);
        }
        // The round that found the pipe full drained it (nothing in
        // flight), went DOWN and, below the BDP, on to CRUISE.
        assert!(b.full_bw_reached());
        assert_eq!(b.mode, Bbr3Mode::Cruise);
        (b, w, t, d)
    }

    #[test]
    fn gains_per_state_are_the_drafts() {
        let p = Bbr3Params::default();
        assert!((p.startup_pacing_gain - 2.7726).abs() < 1e-4);
        let (mut b, _) = started(1);
        // BBRInitPacingRate(): 2.77 × 10 segments / SRTT 100 ms.
        assert!((b.pacing_rate() - p.startup_pacing_gain * 10_000.0 / 0.1).abs() < 1e-6);
        for (mode, gains) in [
            (Bbr3Mode::Startup, (p.startup_pacing_gain, 2.0)),
            (Bbr3Mode::Drain, (0.35, 2.0)),
            (Bbr3Mode::Down, (0.9, 2.0)),
            (Bbr3Mode::Cruise, (1.0, 2.0)),
            (Bbr3Mode::Refill, (1.0, 2.0)),
            (Bbr3Mode::Up, (1.25, 2.25)),
            (Bbr3Mode::ProbeRtt, (1.0, 0.5)),
        ] {
            b.mode = mode;
            b.update_gains();
            assert_eq!((b.pacing_gain, b.cwnd_gain), gains, "{mode:?}");
        }
    }

    /// The volume bounds: BDP multiples, the offload budget (three 1 ms
    /// quanta of the pacing rate, at least 2 segments each), the headroom.
    #[test]
    fn inflight_bounds() {
        let (mut b, ..) = cruising(2);
        b.min_rtt = Some(ms(100));
        assert_eq!(b.bdp_multiple(1e6, 1.0), 100_000.0);
        b.pacing_rate = 1e6; // 1 kB per ms: quanta of 2 segments
        assert_eq!(b.offload_budget(), 6_000.0);
        b.pacing_rate = 10e6;
        assert_eq!(b.offload_budget(), 30_000.0);
        assert_eq!(b.inflight(1e6, 1.0), 100_000.0);
        assert_eq!(b.inflight(1e5, 1.0), 30_000.0);
        b.inflight_longterm = 100_000.0;
        assert_eq!(b.inflight_with_headroom(), 85_000.0);
        b.inflight_longterm = 5_000.0;
        assert_eq!(b.inflight_with_headroom(), 4_000.0);
        b.inflight_longterm = f64::INFINITY;
        assert!(b.inflight_with_headroom().is_infinite());
    }

    /// ProbeBW waits 2–3 s (or 0–1 rounds past the Reno bound) in DOWN or
    /// CRUISE, drawn from the seeded stream; REFILL lasts one round, UP
    /// ends when the delivery rate stops growing.
    #[test]
    fn probe_bw_cycle() {
        let (mut b, mut w, mut t, mut d) = cruising(3);
        let wait = b.bw_probe_wait;
        assert!(wait >= SimTime::from_secs(2) && wait < SimTime::from_secs(3));
        assert_eq!(wait, cruising(3).0.bw_probe_wait, "seeded");
        // A BDP of 100 segments: the Reno bound is 63 rounds, longer than
        // the wall clock's 2–3 s here (100 ms rounds: 20–30 rounds).
        let start = b.cycle_stamp;
        while b.mode == Bbr3Mode::Cruise {
            round(&mut b, &mut w, &mut t, &mut d, 1e6, 100_000);
        }
        assert_eq!(b.mode, Bbr3Mode::Refill);
        let waited = ms(t) - start;
        assert!(waited > wait && waited <= wait + ms(100), "{waited:?}");
        assert!(b.bw_shortterm().is_infinite());
        round(&mut b, &mut w, &mut t, &mut d, 1e6, 100_000);
        assert_eq!(b.mode, Bbr3Mode::Up);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (1.25, 2.25));
        // Three rounds without 25 % growth: back DOWN.
        for _ in 0..3 {
            round(&mut b, &mut w, &mut t, &mut d, 1e6, 100_000);
        }
        assert_eq!(b.mode, Bbr3Mode::Down);
    }

    /// A loss while probing: the loss rate of the segment's flight crossed
    /// 2 % inside it (`BBRInflightAtLoss()`), so inflight_longterm is set
    /// there (at least β × the target) and UP ends.
    #[test]
    fn loss_while_probing_sets_inflight_longterm() {
        let (mut b, mut w, t, d) = cruising(4);
        b.mode = Bbr3Mode::Up;
        b.update_gains();
        b.bw_probe_samples = true;
        b.cwnd = 150_000.0;
        let c = ctx(ms(t), d, 100_000);
        // 1.5 % of its flight lost: not too high.
        let l = LostSegment {
            size: 1000,
            tx_in_flight: 100_000,
            lost_at_send: 10_000,
            lost_now: 11_500,
            is_app_limited: false,
        };
        b.on_lost(&l, &c);
        assert!(b.inflight_longterm().is_infinite());
        assert_eq!(b.mode, Bbr3Mode::Up);
        // 3 %: the threshold was crossed at 99,000 + (0.02 × 99,000 −
        // 2,000) / 0.98 bytes.
        let l = LostSegment {
            lost_now: 13_000,
            ..l
        };
        b.on_lost(&l, &c);
        let want = 99_000.0 + (0.02 * 99_000.0 - 2_000.0) / 0.98;
        assert!((b.inflight_longterm() - want).abs() < 1e-6);
        assert_eq!(b.mode, Bbr3Mode::Down);
        // Only once per probe.
        let before = b.inflight_longterm();
        b.on_lost(
            &LostSegment {
                lost_now: 50_000,
                ..l
            },
            &c,
        );
        assert_eq!(b.inflight_longterm(), before);
        // β bounds it from below: 0.7 × min(BDP, cwnd).
        b.bw_probe_samples = true;
        b.mode = Bbr3Mode::Up;
        let l = LostSegment {
            size: 1000,
            tx_in_flight: 20_000,
            lost_at_send: 0,
            lost_now: 5_000,
            is_app_limited: false,
        };
        b.on_lost(&l, &c);
        assert_eq!(b.inflight_longterm(), 0.7 * 100_000.0);
        let _ = &mut w;
    }

    /// Outside probing, a round with loss cuts the short-term model to
    /// the last round's delivery or by β, once per round; bw follows it.
    #[test]
    fn loss_outside_probing_cuts_the_short_term_model() {
        let (mut b, mut w, mut t, mut d) = cruising(5);
        // A round delivering 500 kB/s (50 kB), without loss: no cut.
        round(&mut b, &mut w, &mut t, &mut d, 5e5, 50_000);
        assert!(b.bw_shortterm().is_infinite());
        let c = ctx(ms(t), d, 80_000);
        b.on_lost(
            &LostSegment {
                size: 1000,
                tx_in_flight: 80_000,
                lost_at_send: 0,
                lost_now: 1000,
                is_app_limited: false,
            },
            &c,
        );
        let cwnd = b.cwnd;
        // The round with the loss ends: the latest round delivered 500 kB/s
        // and 50 kB, less than β times max_bw (1 MB/s) and cwnd.
        round(&mut b, &mut w, &mut t, &mut d, 5e5, 50_000);
        assert_eq!(b.bw_shortterm(), 0.7 * 1e6);
        assert_eq!(b.inflight_shortterm(), (0.7 * cwnd).max(5e4));
        assert_eq!(b.bw(), 0.7 * 1e6);
        // No loss in the next round: no further cut.
        round(&mut b, &mut w, &mut t, &mut d, 5e5, 50_000);
        assert_eq!(b.bw_shortterm(), 0.7 * 1e6);
        assert!(w.cwnd <= b.inflight_shortterm());
    }

    /// One round at 1 MB/s of which `share` arrived marked, on a
    /// connection with ECN feedback; `ce` keeps the CE-delivered count.
    fn marked_round(
        b: &mut Bbr3,
        w: &mut Window,
        t: &mut u64,
        d: &mut u64,
        ce: &mut u64,
        share: f64,
    ) {
        *t += 100;
        let acked = 100_000u64;
        let mut rs = sample(*d, 1e6, acked, 100_000);
        rs.delivered_ce = (share * acked as f64) as u64;
        *d += acked;
        *ce += rs.delivered_ce;
        let mut c = ctx(ms(*t), *d, 100_000);
        c.ecn = true;
        c.delivered_ce = *ce;
        b.control(w, &rs, &mut c);
    }

    fn ecn_params(max_rtt_ms: u64) -> Bbr3Params {
        Bbr3Params {
            ecn_max_rtt: ms(max_rtt_ms),
            ..Bbr3Params::default()
        }
    }

    /// Google's v3 heeds marks only on a path whose min RTT is at most
    /// ecn_max_rtt (5 ms by default; zero: any); α moves by 1/16 a round
    /// towards the marked share: from 1, after a round with half marked,
    /// 15/16 + 1/32.
    #[test]
    fn ecn_alpha_and_eligibility() {
        for (max_rtt, eligible) in [(5, false), (0, true), (100, true)] {
            let (mut b, mut w) = started_with(ecn_params(max_rtt), 1);
            let (mut t, mut d, mut ce) = (0, 0, 0);
            marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.5);
            assert_eq!(b.ecn_eligible(), eligible, "ecn_max_rtt {max_rtt} ms");
            if eligible {
                assert!((b.ecn_alpha() - (15.0 / 16.0 + 0.5 / 16.0)).abs() < 1e-12);
            } else {
                assert_eq!(b.ecn_alpha(), 1.0);
            }
        }
        // Without ECN feedback, never.
        let (mut b, mut w) = started(1);
        b.p.ecn_max_rtt = SimTime::ZERO;
        let (mut t, mut d) = (0, 0);
        round(&mut b, &mut w, &mut t, &mut d, 1e6, 0);
        assert!(!b.ecn_eligible());
    }

    /// Two rounds of Startup with at least half the data marked end it,
    /// with inflight_longterm at the BDP or the last round's delivery.
    #[test]
    fn marks_end_startup() {
        let (mut b, mut w) = started_with(ecn_params(0), 1);
        let (mut t, mut d, mut ce) = (0, 0, 0);
        marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.6);
        assert_eq!(b.mode, Bbr3Mode::Startup);
        // One round below the threshold starts the count again.
        marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.4);
        marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.5);
        assert!(!b.full_bw_reached());
        marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.7);
        assert!(b.full_bw_reached());
        assert_ne!(b.mode, Bbr3Mode::Startup);
        assert!(b.inflight_longterm().is_finite());
    }

    /// Outside probing, a round with marks cuts inflight_shortterm by
    /// 1 − α/3; a sample over the threshold while probing ends UP and sets
    /// inflight_longterm to the flight it was sent with; after a cycle
    /// with marks and no loss the next probe starts at once, with
    /// 2^⌊log2(inflight_longterm/2 in segments)⌋ segments a round.
    #[test]
    fn marks_cut_the_short_term_model_and_end_a_probe() {
        let (mut b, mut w, mut t, mut d) = cruising(6);
        b.p.ecn_max_rtt = SimTime::ZERO;
        let mut ce = 0;
        // A round without marks makes the connection eligible (round start).
        marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.0);
        assert!(b.ecn_eligible());
        assert!(b.inflight_shortterm().is_infinite());
        let alpha0 = b.ecn_alpha();
        let cwnd = b.cwnd;
        marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.1);
        let alpha = (1.0 - 1.0 / 16.0) * alpha0 + 0.1 / 16.0;
        assert!((b.ecn_alpha() - alpha).abs() < 1e-12);
        assert!((b.inflight_shortterm() - cwnd * (1.0 - alpha / 3.0)).abs() < 1e-6);
        assert!(w.cwnd <= b.inflight_shortterm() + 1e-9);
        // That cycle saw marks and no loss: once the echo's CWR state is
        // over, the next ACK probes again, REFILL first (the short-term
        // model forgotten), its first raise 2^30 segments with no
        // inflight_longterm yet (Linux: ~0U / 2).
        assert_eq!(b.mode, Bbr3Mode::Cruise);
        t += 100;
        let mut c = ctx(ms(t), d, 100_000);
        (c.ecn, c.cwr, c.delivered_ce) = (true, true, ce);
        b.control(&mut w, &sample(d, 1e6, 0, 100_000), &mut c);
        assert_eq!(b.mode, Bbr3Mode::Cruise, "not while in CWR");
        marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.0);
        assert_eq!(b.mode, Bbr3Mode::Refill, "quick re-probe");
        assert_eq!(b.bw_probe_up_rounds, 30);
        assert!(b.bw_shortterm().is_infinite() && b.inflight_shortterm().is_infinite());
        // REFILL's round, then UP; a sample with 60 % marked ends it.
        marked_round(&mut b, &mut w, &mut t, &mut d, &mut ce, 0.0);
        assert_eq!(b.mode, Bbr3Mode::Up);
        t += 10;
        let mut rs = sample(d, 1e6, 10_000, 90_000);
        rs.delivered = 10_000;
        rs.delivered_ce = 6_000;
        d += 10_000;
        ce += 6_000;
        let mut c = ctx(ms(t), d, 90_000);
        c.ecn = true;
        c.delivered_ce = ce;
        b.control(&mut w, &rs, &mut c);
        assert_eq!(b.mode, Bbr3Mode::Down);
        assert_eq!(b.inflight_longterm(), 90_000.0);
    }

    /// PROBE_RTT every 5 s without a lower RTT: cwnd at half the BDP (at
    /// least 4 segments) for 200 ms and a round, then CRUISE.
    #[test]
    fn probe_rtt_every_five_seconds() {
        let (mut b, mut w, mut t, mut d) = cruising(6);
        let step =
            |b: &mut Bbr3, w: &mut Window, t: &mut u64, d: &mut u64, dt: u64, inflight: u64| {
                *t += dt;
                let mut rs = sample(*d, 1e6, 1000, inflight);
                rs.rtt = Some(ms(120));
                *d += 1000;
                let mut c = ctx(ms(*t), *d, inflight);
                b.control(w, &rs, &mut c);
                c.mark_app_limited
            };
        // The probe_rtt_min_delay was set at the start (t = 0, the SRTT of
        // 100 ms); samples equal to it do not refresh it, 120 ms ones are
        // above it.
        while t < 5_000 {
            step(&mut b, &mut w, &mut t, &mut d, 100, 50_000);
            assert_ne!(b.mode, Bbr3Mode::ProbeRtt, "at {t} ms");
        }
        step(&mut b, &mut w, &mut t, &mut d, 100, 60_000);
        assert_eq!(b.mode, Bbr3Mode::ProbeRtt);
        assert!(b.probe_rtt_done_stamp.is_none(), "60 kB still in flight");
        assert_eq!(w.cwnd, 0.5 * 1e6 * 0.1);
        assert!(step(&mut b, &mut w, &mut t, &mut d, 10, 40_000));
        let done = b.probe_rtt_done_stamp.unwrap();
        assert_eq!(done, ms(t) + ms(200));
        step(&mut b, &mut w, &mut t, &mut d, 150, 40_000);
        assert_eq!(b.mode, Bbr3Mode::ProbeRtt);
        step(&mut b, &mut w, &mut t, &mut d, 100, 40_000);
        assert_eq!(b.mode, Bbr3Mode::Cruise);
    }
}
