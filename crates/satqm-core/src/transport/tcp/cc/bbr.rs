//! BBR version 1, as Linux's `net/ipv4/tcp_bbr.c` implements it (Cardwell
//! et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5),
//! 2016).
//!
//! BBR owns the window ([`CongestionControl::owns_window`]): on every ACK
//! it updates a model of the path from the delivery-rate sample
//! ([`RateSample`]) and sets the pacing rate and cwnd from it:
//!
//! * bottleneck bandwidth: the windowed maximum of the delivery rate over
//!   the last 10 packet-timed round trips (Linux's `minmax` filter,
//!   `lib/win_minmax.c`), application-limited samples only when they
//!   raise it;
//! * min RTT: the smallest RTT sample of the last 10 seconds;
//! * pacing rate: `pacing_gain × bw × (1 − 1 %)`, cwnd:
//!   `cwnd_gain × bw × min_rtt` plus the aggregation allowance and
//!   Linux's quantization budget (three TSO bursts, rounded up to even),
//!   at least 4 segments.
//!
//! The state machine: STARTUP (both gains 2/ln 2, Linux's 739/256) until
//! three rounds without 25 % bandwidth growth, DRAIN (pacing gain 88/256)
//! until what is in flight is down to one BDP, PROBE_BW cycling the pacing
//! gain through 5/4, 3/4 and six phases of 1 (starting at a random phase
//! other than 3/4, from the connection's seeded stream) with cwnd gain 2,
//! and PROBE_RTT when the min RTT has not been refreshed for 10 s: cwnd at
//! 4 segments for max(200 ms, one round), then back to PROBE_BW (or STARTUP
//! if the pipe was never filled).
//!
//! Losses: in fast recovery the first round conserves packets (cwnd =
//! in flight + newly delivered), then grows at most by what is delivered;
//! on leaving recovery cwnd goes back to what it was before
//! (`bbr_set_cwnd_to_recover_or_restore()`). Long-term sampling detects
//! a token-bucket policer (two 4-16-round intervals with ≥ 20 % loss and
//! delivery rates within 1/8 or 4 kbit/s) and then paces at their mean for
//! 48 rounds. ECN is ignored, as in Linux's BBR v1.
//!
//! Units: the rate in bytes per second of payload (Linux: packets per µs,
//! scaled), cwnd in whole segments, the gains as reals holding Linux's
//! fixed-point values.

use super::{CaState, CcTrace, CongestionControl, Control, Signal, Window};
use crate::rng::Rng;
use crate::time::SimTime;
use crate::transport::tcp::rate::RateSample;

/// The PROBE_BW pacing-gain cycle (`bbr_pacing_gain[]`).
pub const PACING_GAINS: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const CYCLE_LEN: usize = 8;
/// Linux's `TCP_INIT_CWND`: the cap before any RTT sample, and the
/// delivered count below which STARTUP always grows cwnd.
const INIT_CWND: u64 = 10;
/// How long the aggregation allowance may cover (`bbr_extra_acked_max_us`).
const EXTRA_ACKED_MAX: f64 = 0.1;
/// Rounds per half of the aggregation filter (`bbr_extra_acked_win_rtts`).
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Long-term sampling (`bbr_lt_*`): rounds per interval at least, loss
/// ratio (50/256), consistent-rate ratio and difference (bytes/s), rounds
/// of use.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
const LT_BW_DIFF: f64 = 4000.0 / 8.0;
const LT_BW_MAX_RTTS: u32 = 48;

/// BBR's parameters (`[tcp.cc] kind = "bbr"`); the defaults are
/// `tcp_bbr.c`'s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrParams {
    /// STARTUP's pacing and cwnd gain (`bbr_high_gain`, 739/256).
    pub high_gain: f64,
    /// DRAIN's pacing gain (`bbr_drain_gain`, 88/256).
    pub drain_gain: f64,
    /// PROBE_BW's cwnd gain (`bbr_cwnd_gain`, 2).
    pub cwnd_gain: f64,
    /// Rounds the bandwidth filter covers (`bbr_bw_rtts`, 10).
    pub bw_window_rounds: u32,
    /// How long a min-RTT estimate lasts before PROBE_RTT
    /// (`bbr_min_rtt_win_sec`, 10 s).
    pub probe_rtt_interval: SimTime,
    /// The least time in PROBE_RTT at the minimum window
    /// (`bbr_probe_rtt_mode_ms`, 200 ms); zero: no PROBE_RTT.
    pub probe_rtt_time: SimTime,
    /// The least cwnd, segments (`bbr_cwnd_min_target`, 4).
    pub min_cwnd: u32,
    /// Bandwidth growth per round that means the pipe is not yet full
    /// (`bbr_full_bw_thresh`, 1.25).
    pub full_bw_threshold: f64,
    /// Rounds without such growth that end STARTUP (`bbr_full_bw_cnt`, 3).
    pub full_bw_rounds: u32,
    /// Pacing below the estimate (`bbr_pacing_margin_percent`, 1 %).
    pub pacing_margin: f64,
    /// Long-term (policer) bandwidth sampling.
    pub long_term: bool,
    /// The ACK-aggregation allowance (`bbr_extra_acked_gain`, 1).
    pub extra_acked_gain: f64,
    /// An RTT sample equal to the estimate also starts its window again
    /// (and so puts PROBE_RTT off): Linux 4.9 to 5.9 and ns-3 3.44's
    /// `TcpBbr`. Linux since 5.10 takes only a lower one ("tcp: only
    /// postpone PROBE_RTT if RTT is < current min_rtt estimate").
    pub min_rtt_on_equal: bool,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            high_gain: 739.0 / 256.0,
            drain_gain: 88.0 / 256.0,
            cwnd_gain: 2.0,
            bw_window_rounds: CYCLE_LEN as u32 + 2,
            probe_rtt_interval: SimTime::from_secs(10),
            probe_rtt_time: SimTime::from_ms(200),
            min_cwnd: 4,
            full_bw_threshold: 1.25,
            full_bw_rounds: 3,
            pacing_margin: 0.01,
            long_term: true,
            extra_acked_gain: 1.0,
            min_rtt_on_equal: false,
        }
    }
}

/// BBR's states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    Startup = 1,
    Drain = 2,
    ProbeBw = 3,
    ProbeRtt = 4,
}

/// Kathleen Nichols' windowed maximum as Linux's `lib/win_minmax.c` keeps
/// it: the best, second-best and third-best samples of the window, each
/// with its time (here: a round count).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    pub fn get(&self) -> f64 {
        self.s[0].1
    }

    pub fn reset(&mut self, t: u64, v: f64) {
        self.s = [(t, v); 3];
    }

    /// `minmax_running_max()`: add sample `v` at time `t` to a window of
    /// `win`.
    pub fn update(&mut self, win: u64, t: u64, v: f64) {
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // minmax_subwin_update()
        let dt = t - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = (t, v);
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    p: BbrParams,
    rng: Rng,
    mss: u32,
    pub mode: BbrMode,
    /// `None`: no RTT sample yet (Linux's `~0U`).
    min_rtt: Option<SimTime>,
    min_rtt_stamp: SimTime,
    probe_rtt_done_stamp: Option<SimTime>,
    bw: MaxFilter,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    cycle_mstamp: SimTime,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: f64,
    lt_last_delivered: u64,
    /// Whole milliseconds, as Linux keeps it.
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    pub cycle_idx: usize,
    has_seen_rtt: bool,
    /// Segments.
    prior_cwnd: u64,
    full_bw: f64,
    ack_epoch_mstamp: SimTime,
    /// Segments.
    extra_acked: [u64; 2],
    ack_epoch_acked: u64,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// The pacing rate, bytes per second.
    pacing_rate: f64,
}

impl Bbr {
    pub fn new(p: BbrParams, rng: Rng) -> Bbr {
        Bbr {
            p,
            rng,
            mss: 1460,
            mode: BbrMode::Startup,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_done_stamp: None,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: SimTime::ZERO,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0.0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0.0,
            ack_epoch_mstamp: SimTime::ZERO,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate: 0.0,
        }
    }

    pub fn seed(&mut self, rng: Rng) {
        self.rng = rng;
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// The windowed maximum of the delivery rate, bytes per second.
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// The bandwidth estimate in use: the long-term one while policed.
    pub fn bw(&self) -> f64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    pub fn min_rtt(&self) -> Option<SimTime> {
        self.min_rtt
    }

    pub fn pacing_rate(&self) -> f64 {
        self.pacing_rate
    }

    fn segs(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss as u64)
    }

    fn extra_acked_max(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec()`: a rate with a gain, less the margin.
    fn rate_with_gain(&self, bw: f64, gain: f64) -> f64 {
        bw * gain * (1.0 - self.p.pacing_margin)
    }

    /// `bbr_init_pacing_rate_from_rtt()`: high gain × cwnd / SRTT (1 ms
    /// without a sample).
    fn init_pacing_rate_from_rtt(&mut self, cwnd: u64, srtt: Option<SimTime>) {
        let rtt = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.secs_f64().max(1e-6)
            }
            None => 1e-3,
        };
        let bw = (cwnd * self.mss as u64) as f64 / rtt;
        self.pacing_rate = self.rate_with_gain(bw, self.p.high_gain);
    }

    /// `bbr_set_pacing_rate()`: lower it only once the pipe was filled.
    fn set_pacing_rate(&mut self, bw: f64, gain: f64, cwnd: u64, srtt: Option<SimTime>) {
        let rate = self.rate_with_gain(bw, gain);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate_from_rtt(cwnd, srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal()`: the segments of one burst the pacing rate
    /// would let Linux's TSO build (about 1 ms of data, at least 1 below
    /// 1.2 Mbit/s and 2 above, at most 127).
    fn tso_segs_goal(&self) -> u64 {
        bbr_tso_segs(self.pacing_rate, self.mss) as u64
    }

    /// `bbr_bdp()`: ⌈bw × min_rtt × gain⌉ in segments.
    pub fn bdp(&self, bw: f64, gain: f64) -> u64 {
        let Some(rtt) = self.min_rtt else {
            return INIT_CWND;
        };
        let x = bw * rtt.secs_f64() * gain / self.mss as f64;
        // Ceil, with a margin for the float's last bits.
        (x - 1e-9).ceil().max(0.0) as u64
    }

    /// `bbr_quantization_budget()`.
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight()`.
    pub fn inflight(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt()`: what will be in the network when the
    /// next paced segment leaves.
    fn packets_in_net_at_edt(&self, inflight_now: u64, c: &Control) -> u64 {
        let interval = c.edt.max(c.now) - c.now;
        let delivered = (self.bw() * interval.secs_f64() / self.mss as f64) as u64;
        let mut at_edt = inflight_now;
        if self.pacing_gain > 1.0 {
            at_edt += self.tso_segs_goal();
        }
        at_edt.saturating_sub(delivered)
    }

    /// `bbr_ack_aggregation_cwnd()`.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if self.p.extra_acked_gain <= 0.0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() * EXTRA_ACKED_MAX / self.mss as f64) as u64;
        let aggr = (self.p.extra_acked_gain * self.extra_acked_max() as f64) as u64;
        aggr.min(max_aggr)
    }

    /// `bbr_save_cwnd()`.
    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore()`: `Some` while conserving
    /// packets.
    fn recover_or_restore(
        &mut self,
        rs: &RateSample,
        acked: u64,
        cwnd: &mut u64,
        c: &Control,
    ) -> bool {
        let (prev, state) = (self.prev_ca_state, c.state);
        let inflight = self.segs(c.inflight);
        if rs.losses > 0 {
            *cwnd = cwnd.saturating_sub(self.segs(rs.losses)).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = c.delivered;
            *cwnd = inflight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            *cwnd = (*cwnd).max(inflight + acked);
            return true;
        }
        false
    }

    /// `bbr_set_cwnd()`.
    fn set_cwnd(&mut self, rs: &RateSample, bw: f64, gain: f64, w: &mut Window, c: &Control) {
        let acked = self.segs(rs.acked_sacked);
        let mut cwnd = (w.cwnd / self.mss as f64).round() as u64;
        'done: {
            if acked == 0 {
                break 'done;
            }
            if self.recover_or_restore(rs, acked, &mut cwnd, c) {
                break 'done;
            }
            let mut target = self.bdp(bw, gain);
            target += self.ack_aggregation_cwnd();
            target = self.quantization_budget(target);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || c.delivered < INIT_CWND * self.mss as u64 {
                cwnd += acked;
            }
            cwnd = cwnd.max(self.p.min_cwnd as u64);
        }
        if self.mode == BbrMode::ProbeRtt {
            cwnd = cwnd.min(self.p.min_cwnd as u64);
        }
        w.cwnd = (cwnd * self.mss as u64) as f64;
    }

    /// `bbr_is_next_cycle_phase()`.
    fn is_next_cycle_phase(&self, rs: &RateSample, c: &Control) -> bool {
        let is_full_length = self
            .min_rtt
            .is_some_and(|m| c.delivered_time.saturating_sub(self.cycle_mstamp) > m);
        if self.pacing_gain == 1.0 {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(self.segs(rs.prior_in_flight), c);
        let bw = self.max_bw();
        if self.pacing_gain > 1.0 {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(bw, 1.0)
    }

    fn advance_cycle_phase(&mut self, c: &Control) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = c.delivered_time;
    }

    /// `bbr_reset_probe_bw_mode()`: a random phase other than 3/4.
    fn reset_probe_bw_mode(&mut self, c: &Control) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.uniform_u64(0, 6) as usize;
        self.advance_cycle_phase(c);
    }

    fn reset_mode(&mut self, c: &Control) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(c);
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, c: &Control) {
        self.lt_last_stamp_ms = c.delivered_time.ns() / 1_000_000;
        self.lt_last_delivered = c.delivered;
        self.lt_last_lost = c.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, c: &Control) {
        self.lt_bw = 0.0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(c);
    }

    /// `bbr_lt_bw_interval_done()`.
    fn lt_bw_interval_done(&mut self, bw: f64, c: &Control) {
        if self.lt_bw > 0.0 {
            let diff = (bw - self.lt_bw).abs();
            if diff <= LT_BW_RATIO * self.lt_bw || self.rate_with_gain(diff, 1.0) <= LT_BW_DIFF {
                self.lt_bw = (bw + self.lt_bw) / 2.0;
                self.lt_use_bw = true;
                self.pacing_gain = 1.0;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(c);
    }

    /// `bbr_lt_bw_sampling()`.
    fn lt_bw_sampling(&mut self, losses: bool, app_limited: bool, c: &Control) {
        if !self.p.long_term {
            return;
        }
        if self.lt_use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(c);
                    self.reset_probe_bw_mode(c);
                }
            }
            return;
        }
        if !self.lt_is_sampling {
            if !losses {
                return;
            }
            self.reset_lt_bw_sampling_interval(c);
            self.lt_is_sampling = true;
        }
        if app_limited {
            return self.reset_lt_bw_sampling(c);
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            return self.reset_lt_bw_sampling(c);
        }
        if !losses {
            return;
        }
        let lost = c.lost - self.lt_last_lost;
        let delivered = c.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESH * delivered as f64 {
            return;
        }
        let now_ms = c.delivered_time.ns() / 1_000_000;
        let t = now_ms as i64 - self.lt_last_stamp_ms as i64;
        if t < 1 {
            return;
        }
        let bw = delivered as f64 / (t as f64 / 1000.0);
        self.lt_bw_interval_done(bw, c);
    }

    /// `bbr_update_bw()`.
    fn update_bw(&mut self, rs: &RateSample, c: &Control) {
        self.round_start = false;
        if !rs.valid || rs.interval == SimTime::ZERO {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = c.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs.losses > 0, rs.is_app_limited, c);
        let bw = rs.delivered as f64 / rs.interval.secs_f64();
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw
                .update(self.p.bw_window_rounds as u64, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation()`.
    fn update_ack_aggregation(&mut self, rs: &RateSample, cwnd: u64, c: &Control) {
        if self.p.extra_acked_gain <= 0.0 || rs.acked_sacked == 0 || !rs.valid {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = c.delivered_time.saturating_sub(self.ack_epoch_mstamp);
        let mut expected = (self.bw() * epoch.secs_f64() / self.mss as f64) as u64;
        let acked = self.segs(rs.acked_sacked);
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= 1 << 20 {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = c.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        if extra > *slot {
            *slot = extra;
        }
    }

    /// `bbr_check_full_bw_reached()`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * self.p.full_bw_threshold {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.p.full_bw_rounds;
    }

    /// `bbr_check_drain()`.
    fn check_drain(&mut self, w: &mut Window, c: &Control) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            w.ssthresh = (self.inflight(self.max_bw(), 1.0) * self.mss as u64) as f64;
        }
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(self.segs(c.inflight), c)
                <= self.inflight(self.max_bw(), 1.0)
        {
            self.reset_probe_bw_mode(c);
        }
    }

    /// `bbr_check_probe_rtt_done()`.
    fn check_probe_rtt_done(&mut self, w: &mut Window, c: &Control) {
        if self.probe_rtt_done_stamp.is_none_or(|d| c.now <= d) {
            return;
        }
        self.min_rtt_stamp = c.now;
        let prior = (self.prior_cwnd * self.mss as u64) as f64;
        w.cwnd = w.cwnd.max(prior);
        self.reset_mode(c);
    }

    /// `bbr_update_min_rtt()`.
    fn update_min_rtt(&mut self, rs: &RateSample, w: &mut Window, c: &mut Control) {
        let expired = c.now > self.min_rtt_stamp + self.p.probe_rtt_interval;
        if let Some(rtt) = rs.rtt {
            let lower = self
                .min_rtt
                .is_none_or(|m| rtt < m || (rtt == m && self.p.min_rtt_on_equal));
            if lower || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = c.now;
            }
        }
        if self.p.probe_rtt_time > SimTime::ZERO
            && expired
            && !self.idle_restart
            && self.mode != BbrMode::ProbeRtt
        {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd((w.cwnd / self.mss as f64).round() as u64);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            c.mark_app_limited = true;
            if self.probe_rtt_done_stamp.is_none()
                && self.segs(c.inflight) <= self.p.min_cwnd as u64
            {
                self.probe_rtt_done_stamp = Some(c.now + self.p.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = c.delivered;
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

    /// `bbr_update_gains()`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (self.p.high_gain, self.p.high_gain),
            BbrMode::Drain => (self.p.drain_gain, self.p.high_gain),
            BbrMode::ProbeBw => (
                if self.lt_use_bw {
                    1.0
                } else {
                    PACING_GAINS[self.cycle_idx]
                },
                self.p.cwnd_gain,
            ),
            BbrMode::ProbeRtt => (1.0, 1.0),
        };
    }
}

/// `bbr_tso_segs_goal()` at `pacing_rate` bytes/s: about 1 ms of data,
/// at least 1 segment below 1.2 Mbit/s (`bbr_min_tso_rate`) and 2 above,
/// at most 127.
fn bbr_tso_segs(pacing_rate: f64, mss: u32) -> u32 {
    let min_segs = if pacing_rate < 1_200_000.0 / 8.0 {
        1
    } else {
        2
    };
    ((super::tso_bytes(pacing_rate) / mss as f64) as u32).clamp(min_segs, 127)
}

impl CongestionControl for Bbr {
    fn on_ack(&mut self, _w: &mut Window, _s: &super::AckSample) {}

    /// `bbr_ssthresh()`: remember cwnd for the end of recovery; ssthresh
    /// stays.
    fn ssthresh_after(&mut self, w: &Window, _signal: Signal, _flight: u64, mss: u32) -> f64 {
        self.save_cwnd((w.cwnd / mss as f64).round() as u64);
        w.ssthresh
    }

    /// `bbr_undo_cwnd()`: the losses were spurious, so the bandwidth
    /// plateau STARTUP saw and the long-term (policer) sampling start over.
    /// Dropping the sampling state suffices: the next interval starts at
    /// the next loss (`bbr_lt_bw_sampling()`).
    fn on_undo(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.lt_bw = 0.0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
    }

    fn wants_rate_sample(&self) -> bool {
        true
    }

    fn owns_window(&self) -> bool {
        true
    }

    /// `bbr_init()`.
    fn on_established(&mut self, w: &mut Window, c: &mut Control) {
        self.mss = c.mss;
        w.ssthresh = f64::INFINITY;
        self.min_rtt = c.min_rtt;
        self.min_rtt_stamp = c.now;
        self.bw.reset(0, 0.0);
        self.has_seen_rtt = false;
        let cwnd = (w.cwnd / c.mss as f64).round() as u64;
        self.init_pacing_rate_from_rtt(cwnd, c.srtt);
        self.reset_lt_bw_sampling(c);
        self.mode = BbrMode::Startup;
        self.update_gains();
        self.ack_epoch_mstamp = c.now;
        c.pacing_rate = Some(self.pacing_rate);
    }

    /// `bbr_main()`.
    fn control(&mut self, w: &mut Window, rs: &RateSample, c: &mut Control) {
        let cwnd = (w.cwnd / self.mss as f64).round() as u64;
        self.update_bw(rs, c);
        self.update_ack_aggregation(rs, cwnd, c);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(rs, c) {
            self.advance_cycle_phase(c);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(w, c);
        self.update_min_rtt(rs, w, c);
        self.update_gains();
        let bw = self.bw();
        let cwnd = (w.cwnd / self.mss as f64).round() as u64;
        self.set_pacing_rate(bw, self.pacing_gain, cwnd, c.srtt);
        self.set_cwnd(rs, bw, self.cwnd_gain, w, c);
        c.pacing_rate = Some(self.pacing_rate);
    }

    /// `bbr_set_state(TCP_CA_Loss)`.
    fn on_loss_state(&mut self, c: &mut Control) {
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        self.lt_bw_sampling(true, false, c);
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)` while application-limited.
    fn on_tx_start(&mut self, w: &mut Window, c: &mut Control) {
        self.idle_restart = true;
        self.ack_epoch_mstamp = c.now;
        self.ack_epoch_acked = 0;
        match self.mode {
            BbrMode::ProbeBw => {
                let cwnd = (w.cwnd / self.mss as f64).round() as u64;
                self.set_pacing_rate(self.bw(), 1.0, cwnd, c.srtt);
                c.pacing_rate = Some(self.pacing_rate);
            }
            BbrMode::ProbeRtt => self.check_probe_rtt_done(w, c),
            _ => {}
        }
    }

    /// BBR sizes its own bursts (`.tso_segs = bbr_tso_segs`).
    fn tso_segs(&self, pacing_rate: f64, mss: u32) -> u32 {
        bbr_tso_segs(pacing_rate, mss)
    }

    fn trace(&self) -> CcTrace {
        CcTrace {
            state: self.mode as u8,
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            bw: self.bw(),
            min_rtt: self.min_rtt.map_or(f64::NAN, |m| m.secs_f64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn ms(x: u64) -> SimTime {
        SimTime::from_ms(x)
    }

    fn bbr(seed: u64) -> Bbr {
        Bbr::new(BbrParams::default(), Rng::stream(seed, "bbr-test", 0))
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

    /// A valid, not application-limited sample of `bw` bytes/s over 100 ms
    /// that starts a new round (its snapshot's delivered count is the
    /// last ACK's), with `acked` bytes newly delivered.
    fn sample(prior_delivered: u64, bw: f64, acked: u64) -> RateSample {
        RateSample {
            delivered: (bw * 0.1) as u64,
            interval: ms(100),
            valid: true,
            prior_delivered,
            rtt: Some(ms(100)),
            acked_sacked: acked,
            ..RateSample::default()
        }
    }

    /// An established BBR with a window of 10 segments, at time 0.
    fn started(seed: u64) -> (Bbr, Window) {
        let mut b = bbr(seed);
        let mut w = Window {
            cwnd: 10.0 * MSS as f64,
            ssthresh: f64::INFINITY,
        };
        let mut c = ctx(SimTime::ZERO, 0, 0);
        b.on_established(&mut w, &mut c);
        (b, w)
    }

    /// Feed one round per call at `bw`; returns the new delivered count.
    fn round(
        b: &mut Bbr,
        w: &mut Window,
        t: &mut u64,
        delivered: u64,
        bw: f64,
        inflight: u64,
    ) -> u64 {
        *t += 100;
        let acked = (bw * 0.1) as u64;
        let now = delivered + acked;
        let mut c = ctx(ms(*t), now, inflight);
        b.control(w, &sample(delivered, bw, acked), &mut c);
        now
    }

    #[test]
    fn gains_are_linux_fixed_point_values() {
        let p = BbrParams::default();
        // bbr_high_gain = BBR_UNIT * 2885 / 1000 + 1 = 739; 2/ln 2 = 2.8854.
        assert_eq!(p.high_gain, 2.88671875);
        assert!((p.high_gain - 2.0 / std::f64::consts::LN_2).abs() < 0.002);
        // bbr_drain_gain = BBR_UNIT * 1000 / 2885 = 88.
        assert_eq!(p.drain_gain, 0.34375);
        assert_eq!(p.cwnd_gain, 2.0);
        assert_eq!(PACING_GAINS, [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        assert_eq!(p.bw_window_rounds, 10);
        // Initial pacing rate: high_gain × 10 segments / SRTT (100 ms),
        // less 1 %.
        let (b, _) = started(1);
        let want = 2.88671875 * 10.0 * 1000.0 / 0.1 * 0.99;
        assert!((b.pacing_rate() - want).abs() < 1e-6);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (p.high_gain, p.high_gain));
    }

    /// The windowed maximum, step by step as `lib/win_minmax.c` moves its
    /// three samples (window 10).
    #[test]
    fn max_filter_follows_win_minmax() {
        let mut f = MaxFilter::default();
        f.reset(0, 0.0);
        f.update(10, 1, 100.0);
        assert_eq!(f.s, [(1, 100.0); 3]);
        // Smaller, early in the window: kept by nothing.
        f.update(10, 2, 50.0);
        assert_eq!(f.s, [(1, 100.0); 3]);
        // A quarter of the window on: a second choice.
        f.update(10, 4, 60.0);
        assert_eq!(f.s, [(1, 100.0), (4, 60.0), (4, 60.0)]);
        // Half the window on: a third choice.
        f.update(10, 7, 55.0);
        assert_eq!(f.s, [(1, 100.0), (4, 60.0), (7, 55.0)]);
        // The best leaves the window: the second takes over.
        f.update(10, 12, 10.0);
        assert_eq!(f.get(), 60.0);
        f.update(10, 15, 10.0);
        assert_eq!(f.get(), 55.0);
        f.update(10, 18, 10.0);
        assert_eq!(f.get(), 10.0);
        // A new maximum resets all three.
        f.update(10, 19, 70.0);
        assert_eq!(f.s, [(19, 70.0); 3]);
    }

    /// ⌈bw × min_rtt × gain⌉, plus the quantization budget: three bursts
    /// of 2 segments above 1.2 Mbit/s, rounded up to even, and 2 more in
    /// PROBE_BW's first phase.
    #[test]
    fn bdp_and_inflight_target() {
        let (mut b, _) = started(1);
        b.mss = MSS;
        b.min_rtt = Some(ms(200));
        // 10 Mbit/s = 1.25 MB/s: 250 segments per 200 ms.
        assert_eq!(b.bdp(1.25e6, 1.0), 250);
        assert_eq!(b.bdp(1.25e6, 2.0), 500);
        assert_eq!(b.bdp(1.25e6 * 1.001, 1.0), 251);
        b.pacing_rate = 1.25e6;
        assert_eq!(b.tso_segs_goal(), 2);
        assert_eq!(b.inflight(1.25e6, 1.0), 256);
        b.pacing_rate = 100_000.0; // below 1.2 Mbit/s: bursts of 1
        assert_eq!(b.tso_segs_goal(), 1);
        assert_eq!(b.inflight(1.25e6, 1.0), 254);
        b.pacing_rate = 1.25e6;
        b.mode = BbrMode::ProbeBw;
        b.cycle_idx = 0;
        assert_eq!(b.inflight(1.25e6, 1.0), 258);
        // No RTT sample: TCP_INIT_CWND.
        b.min_rtt = None;
        assert_eq!(b.bdp(1.25e6, 2.0), 10);
    }

    /// STARTUP ends after three rounds in which the maximum bandwidth grew
    /// by less than 25 %; DRAIN paces at 88/256 with ssthresh at one BDP
    /// until in flight is down to it; PROBE_BW starts at a random phase
    /// other than the 3/4 one.
    #[test]
    fn startup_full_bandwidth_drain_probe_bw() {
        let (mut b, mut w) = started(3);
        let mut t = 0;
        let mut d = 0;
        let big = 10_000_000; // in flight: DRAIN cannot end yet
                              // Growth of 100 %, 50 %, 25 %: not full.
        for bw in [100_000.0, 200_000.0, 300_000.0, 375_000.0] {
            d = round(&mut b, &mut w, &mut t, d, bw, big);
            assert_eq!(b.mode, BbrMode::Startup);
            assert_eq!(b.full_bw_cnt, 0);
        }
        assert_eq!(b.full_bw, 375_000.0);
        // 24 %, then flat: three rounds below 1.25 × 375 kB/s.
        for (i, bw) in [465_000.0, 465_000.0].into_iter().enumerate() {
            d = round(&mut b, &mut w, &mut t, d, bw, big);
            assert_eq!(b.full_bw_cnt, i as u32 + 1);
            assert_eq!(b.mode, BbrMode::Startup);
            assert!(b.pacing_rate() >= 465_000.0 * b.p.high_gain * 0.99 - 1e-6);
        }
        d = round(&mut b, &mut w, &mut t, d, 400_000.0, big);
        assert!(b.full_bw_reached());
        assert_eq!(b.mode, BbrMode::Drain);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (0.34375, b.p.high_gain));
        // max_bw 465 kB/s × 100 ms = 46.5 → 47 segments, + 3 × 2 → 53 → 54.
        assert_eq!(b.inflight(b.max_bw(), 1.0), 54);
        assert_eq!(w.ssthresh, 54_000.0);
        // Full bandwidth reached: the pacing rate follows the estimate
        // down, with the drain gain.
        assert!((b.pacing_rate() - 465_000.0 * 0.34375 * 0.99).abs() < 1e-6);
        // In flight falls to the BDP target: PROBE_BW.
        round(&mut b, &mut w, &mut t, d, 400_000.0, 54_000);
        assert_eq!(b.mode, BbrMode::ProbeBw);
        assert_ne!(b.cycle_idx, 1);
        assert_eq!(b.pacing_gain, PACING_GAINS[b.cycle_idx]);
        assert_eq!(b.cwnd_gain, 2.0);
    }

    /// Drive a BBR into PROBE_BW; returns it with the time and delivered
    /// count reached.
    fn in_probe_bw(seed: u64) -> (Bbr, Window, u64, u64) {
        let (mut b, mut w) = started(seed);
        let (mut t, mut d) = (0, 0);
        for _ in 0..4 {
            d = round(&mut b, &mut w, &mut t, d, 1e6, 0);
        }
        assert_eq!(b.mode, BbrMode::ProbeBw);
        (b, w, t, d)
    }

    #[test]
    fn gain_cycle_start_is_random_seeded_and_never_the_drain_phase() {
        let mut seen = [false; CYCLE_LEN];
        for seed in 0..200 {
            let (b, ..) = in_probe_bw(seed);
            seen[b.cycle_idx] = true;
            assert_eq!(b.cycle_idx, in_probe_bw(seed).0.cycle_idx);
        }
        assert_eq!(seen, [true, false, true, true, true, true, true, true]);
    }

    /// PROBE_BW moves on after min_rtt at gain 1; the 5/4 phase waits for
    /// in flight to reach 5/4 of the BDP target (or a loss), the 3/4 phase
    /// ends early once in flight is down to the BDP.
    #[test]
    fn gain_cycle_phases() {
        let (mut b, mut w, mut t, mut d) = in_probe_bw(5);
        // Put it at the 5/4 phase, starting now.
        b.cycle_idx = 0;
        b.cycle_mstamp = ms(t);
        b.update_gains();
        let target = b.inflight(b.max_bw(), 1.25);
        // A full min_rtt (100 ms) on but in flight (with the burst leaving
        // next, 2 segments) short of the target, no loss: stays.
        let mut rs = sample(d, 1e6, 100_000);
        rs.prior_in_flight = (target - 3) * MSS as u64;
        t += 150;
        d += 100_000;
        b.control(&mut w, &rs, &mut ctx(ms(t), d, 0));
        assert_eq!(b.cycle_idx, 0);
        rs = sample(d, 1e6, 100_000);
        rs.prior_in_flight = (target - 2) * MSS as u64;
        t += 10;
        d += 100_000;
        b.control(&mut w, &rs, &mut ctx(ms(t), d, 0));
        assert_eq!((b.cycle_idx, b.pacing_gain), (1, 0.75));
        // 3/4 phase: in flight at one BDP ends it at once.
        rs = sample(d, 1e6, 100_000);
        rs.prior_in_flight = b.inflight(b.max_bw(), 1.0) * MSS as u64;
        t += 1;
        d += 100_000;
        b.control(&mut w, &rs, &mut ctx(ms(t), d, 0));
        assert_eq!((b.cycle_idx, b.pacing_gain), (2, 1.0));
        // Gain 1: one min_rtt of wall clock per phase.
        for (dt, idx) in [(50, 2), (51, 3), (101, 4)] {
            t += dt;
            d += 100_000;
            b.control(
                &mut w,
                &sample(d - 100_000, 1e6, 100_000),
                &mut ctx(ms(t), d, 0),
            );
            assert_eq!(b.cycle_idx, idx, "after {dt} ms");
        }
    }

    /// With no RTT sample below min_rtt for 10 s, PROBE_RTT caps
    /// cwnd at 4 segments, marks the sender application-limited, and once
    /// in flight is down to 4 stays 200 ms and a round; then cwnd comes
    /// back and PROBE_BW resumes.
    #[test]
    fn probe_rtt_entry_and_exit() {
        let (mut b, mut w, mut t, mut d) = in_probe_bw(7);
        let before = w.cwnd;
        assert!(before > 4.0 * MSS as f64);
        // Samples of 120 ms RTT (never below min_rtt 100 ms) until 10 s pass.
        let step =
            |b: &mut Bbr, w: &mut Window, t: &mut u64, d: &mut u64, dt: u64, inflight: u64| {
                *t += dt;
                let mut rs = sample(*d, 1e6, 1000);
                rs.rtt = Some(ms(120));
                *d += 1000;
                let mut c = ctx(ms(*t), *d, inflight);
                b.control(w, &rs, &mut c);
                c.mark_app_limited
            };
        // The estimate dates from the first 100 ms sample: the later
        // ones of the start equal it and do not refresh it.
        let stamp = b.min_rtt_stamp.ns() / 1_000_000;
        assert!(stamp < t);
        while t + 500 <= stamp + 10_000 {
            assert!(!step(&mut b, &mut w, &mut t, &mut d, 500, 50_000));
            assert_eq!(b.mode, BbrMode::ProbeBw);
        }
        // Just past 10 s after it.
        while t <= stamp + 10_000 {
            step(&mut b, &mut w, &mut t, &mut d, 100, 50_000);
        }
        assert_eq!(b.mode, BbrMode::ProbeRtt);
        assert_eq!(w.cwnd, 4.0 * MSS as f64);
        // Entering PROBE_RTT saved the window it had (Linux sets the mode
        // first, so the larger of it and any earlier saved one).
        let saved = b.prior_cwnd;
        assert!(saved > 4);
        assert_eq!((b.pacing_gain, b.cwnd_gain), (1.0, 1.0));
        // The expired filter took the 120 ms sample.
        assert_eq!(b.min_rtt(), Some(ms(120)));
        // In flight down to 4 segments: 200 ms from now.
        assert!(step(&mut b, &mut w, &mut t, &mut d, 10, 4000));
        let done = b.probe_rtt_done_stamp.unwrap();
        assert_eq!(done, ms(t) + ms(200));
        step(&mut b, &mut w, &mut t, &mut d, 150, 4000);
        assert_eq!(b.mode, BbrMode::ProbeRtt);
        step(&mut b, &mut w, &mut t, &mut d, 100, 4000);
        assert_eq!(b.mode, BbrMode::ProbeBw);
        // cwnd back to the saved one, then grown by the ACK up to target.
        assert!(w.cwnd >= (saved * MSS as u64) as f64);
        assert_eq!(b.min_rtt_stamp, ms(t));
    }

    /// Fast recovery's first round conserves packets (cwnd = in flight +
    /// newly delivered); leaving recovery restores the cwnd saved when it
    /// began; losses come off cwnd first.
    #[test]
    fn packet_conservation_in_recovery() {
        let (mut b, mut w, mut t, mut d) = in_probe_bw(9);
        let before = w.cwnd;
        let cwnd_segs = (before / MSS as f64) as u64;
        // Entering recovery: ssthresh() saves cwnd, leaves ssthresh.
        let ss = b.ssthresh_after(&w, Signal::Loss, 0, MSS);
        assert_eq!(ss, w.ssthresh);
        assert_eq!(b.prior_cwnd, cwnd_segs);
        let mut rs = sample(d, 1e6, 2000);
        rs.losses = 3000;
        t += 10;
        d += 2000;
        let mut c = ctx(ms(t), d, 20_000);
        c.state = CaState::Recovery;
        b.control(&mut w, &rs, &mut c);
        assert_eq!(w.cwnd, (20 + 2) as f64 * MSS as f64);
        // Still in recovery, same round: at least in flight + delivered.
        let mut rs = sample(0, 1e6, 1000);
        rs.prior_delivered = 0; // not a new round
        t += 10;
        d += 1000;
        let mut c = ctx(ms(t), d, 25_000);
        c.state = CaState::Recovery;
        b.control(&mut w, &rs, &mut c);
        assert_eq!(w.cwnd, 26_000.0);
        // Out of recovery: back to the saved cwnd, then as ever (one
        // more segment, up to the target).
        t += 10;
        d += 1000;
        b.control(
            &mut w,
            &sample(d - 1000, 1e6, 1000),
            &mut ctx(ms(t), d, 10_000),
        );
        let target = b.quantization_budget(b.bdp(b.bw(), 2.0) + b.ack_aggregation_cwnd());
        assert_eq!(w.cwnd, ((cwnd_segs + 1).min(target) * MSS as u64) as f64);
    }
}
