//! Congestion control: how the window grows on ACKs and how far it falls on
//! a congestion signal. Loss *recovery* (when the signal is raised, which
//! segments to resend) lives in [`super::recovery`]; this interface only
//! moves `cwnd` and `ssthresh` (and, for a controller that owns the
//! window, the pacing rate), so a new algorithm (Hybla, CUBIC, BBR, ...)
//! is one file implementing [`CongestionControl`] plus one arm in [`Cc`].
//!
//! Two kinds, as Linux splits `tcp_congestion_ops`:
//!
//! * classic controls (`cong_avoid`/`ssthresh`): [`CongestionControl::on_ack`]
//!   grows the window outside recovery, [`CongestionControl::ssthresh_after`]
//!   says where it falls, and the recovery drives it through a loss episode;
//! * controls that own the window (`cong_control(rate_sample)`):
//!   [`CongestionControl::owns_window`] is true, and
//!   [`CongestionControl::control`] sets cwnd and the pacing rate on every
//!   ACK, in recovery too, from the delivery-rate sample
//!   ([`super::rate`]); the recovery then only chooses what to send.

mod bbr;
mod bbr3;
mod cubic;
mod dctcp;
mod fixed;
mod hybla;
mod hystartpp;
mod prague;
mod reno;

pub use bbr::{Bbr, BbrMode, BbrParams};
pub use bbr3::{Bbr3, Bbr3Mode, Bbr3Params};
pub use cubic::{Cubic, CubicParams, HyStartKind};
pub use dctcp::{Dctcp, DctcpParams, MarkedFraction};
pub use fixed::Fixed;
pub use hybla::Hybla;
pub use prague::{Prague, PragueParams};
pub use reno::{Reno, RenoParams};

use crate::rng::Rng;
use crate::time::SimTime;
use crate::transport::tcp::config::{CcKind, CcRules};
pub use crate::transport::tcp::rate::LostSegment;
use crate::transport::tcp::rate::RateSample;

/// The window variables congestion control moves, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
}

/// What one ACK that acknowledged new data outside loss recovery tells
/// congestion control (Linux's `cong_avoid` arguments with the RTT sample
/// of `pkts_acked`).
#[derive(Clone, Copy, Debug)]
pub struct AckSample<'a> {
    pub now: SimTime,
    /// Bytes newly acknowledged.
    pub acked: u64,
    pub mss: u32,
    /// This ACK's RTT sample, if it gave one.
    pub rtt: Option<SimTime>,
    /// The smoothed RTT, once there is one.
    pub srtt: Option<SimTime>,
    /// The cumulative ACK after this one (the first unacknowledged byte).
    pub snd_una: u64,
    /// One past the highest byte sent.
    pub snd_max: u64,
    /// This ACK's delivery-rate sample, for a controller that asked for
    /// one ([`CongestionControl::wants_rate_sample`]).
    pub rate: Option<&'a RateSample>,
}

impl AckSample<'_> {
    /// A sample of `acked` bytes with no RTT sample (tests).
    #[cfg(test)]
    pub fn of(acked: u64, mss: u32, srtt: Option<SimTime>) -> AckSample<'static> {
        AckSample {
            now: SimTime::ZERO,
            acked,
            mss,
            rtt: None,
            srtt,
            snd_una: 0,
            snd_max: 0,
            rate: None,
        }
    }
}

/// The loss-recovery state a controller that owns the window sees, as
/// Linux's `icsk_ca_state` (CWR and Disorder fold into `Open`: they do not
/// change what such a controller does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    /// Fast recovery.
    Recovery,
    /// Repairing the losses of a retransmission timeout.
    Loss,
}

/// What a controller that owns the window reads of the connection, and the
/// pacing decisions it writes back.
#[derive(Clone, Copy, Debug)]
pub struct Control {
    pub now: SimTime,
    pub mss: u32,
    pub state: CaState,
    /// Bytes in the network now (`pipe`).
    pub inflight: u64,
    /// Bytes delivered so far, and when the last were.
    pub delivered: u64,
    pub delivered_time: SimTime,
    /// Bytes ever deemed lost.
    pub lost: u64,
    /// Bytes delivered CE-marked so far (with DCTCP's or AccECN's
    /// feedback; Linux's `tp->delivered_ce`).
    pub delivered_ce: u64,
    /// The connection negotiated ECN with feedback that counts every mark
    /// (DCTCP's or AccECN's) and sends ECN-capable segments.
    pub ecn: bool,
    /// An ECN echo's window of data is still being acknowledged (Linux's
    /// CWR state, which [`state`](Self::state) folds into `Open`).
    pub cwr: bool,
    pub srtt: Option<SimTime>,
    /// The smallest RTT the connection has seen (the handshake's included).
    pub min_rtt: Option<SimTime>,
    /// When the pacer lets the next segment go (now, if it would now).
    pub edt: SimTime,
    /// cwnd limited the sender in the current window of data.
    pub cwnd_limited: bool,
    /// The pacing rate, bytes of payload per second (in and out).
    pub pacing_rate: Option<f64>,
    /// Out: the controller asks that samples from now on count as
    /// application-limited (BBR's PROBE_RTT).
    pub mark_app_limited: bool,
}

impl Control {
    /// A context at `now` with nothing in flight (tests).
    #[cfg(test)]
    pub fn at(now: SimTime, mss: u32) -> Control {
        Control {
            now,
            mss,
            state: CaState::Open,
            inflight: 0,
            delivered: 0,
            delivered_time: now,
            lost: 0,
            delivered_ce: 0,
            ecn: false,
            cwr: false,
            srtt: None,
            min_rtt: None,
            edt: now,
            cwnd_limited: false,
            pacing_rate: None,
            mark_app_limited: false,
        }
    }
}

/// What one ACK fed back about CE marks (with ECN feedback other than
/// RFC 3168's), for the controls that measure the extent of congestion.
#[derive(Clone, Copy, Debug)]
pub struct EcnSample {
    pub now: SimTime,
    pub mss: u32,
    /// Segments newly delivered (cumulatively acknowledged or SACKed).
    pub delivered: u64,
    /// Of those, segments that arrived CE-marked.
    pub delivered_ce: u64,
    /// This ACK's RTT sample, if it gave one.
    pub rtt: Option<SimTime>,
    /// The cumulative ACK after this one.
    pub snd_una: u64,
    /// One past the highest byte sent.
    pub snd_max: u64,
}

/// Why the window is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// A loss found by duplicate ACKs, SACK or RACK: a fast recovery.
    Loss,
    /// An ECN echo (RFC 3168).
    Ecn,
    /// The retransmission timer fired.
    Timeout,
}

pub trait CongestionControl {
    /// New data was cumulatively acknowledged outside loss recovery, and
    /// the window limits the sender: grow it.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample);

    /// The slow-start threshold after a congestion signal with `flight`
    /// bytes outstanding.
    fn ssthresh_after(&mut self, _w: &Window, _signal: Signal, flight: u64, mss: u32) -> f64 {
        // RFC 5681 eq. (4)
        (flight as f64 / 2.0).max(2.0 * mss as f64)
    }

    /// A retransmission timeout fired, after ssthresh was set.
    fn on_timeout(&mut self) {}

    /// D-SACKs showed the last loss episode spurious and the sender undid
    /// its reduction (Linux's `undo_cwnd`): the sender restores cwnd to at
    /// least what it was (`tcp_reno_undo_cwnd()`, which Reno, CUBIC and
    /// Hybla use) unless the control owns the window, which may reset
    /// what it learnt from the episode.
    fn on_undo(&mut self) {}

    /// The window after a timeout (RFC 5681: one segment).
    fn loss_window(&self, _w: &Window, mss: u32) -> f64 {
        mss as f64
    }

    /// The window a connection starts with, given the configured one.
    fn initial_window(&self, configured: f64) -> f64 {
        configured
    }

    /// An ACK's CE feedback (DCTCP's or AccECN's, not RFC 3168's), after
    /// `on_ack` and before the sender decides whether to cut.
    fn on_ecn(&mut self, _w: &mut Window, _s: &EcnSample) {}

    /// The ECN cut sets cwnd to ssthresh, whatever the rules (a scalable
    /// control's `Signal::Ecn` threshold is its new window); otherwise the
    /// sender halves as RFC 3168 says.
    fn scalable(&self) -> bool {
        false
    }

    /// The window may grow on ACKs that report marks and while a cut is
    /// being acknowledged (TCP Prague); otherwise it waits, as Linux's CWR
    /// state holds a Reno-style control.
    fn grows_through_cwr(&self) -> bool {
        false
    }
    /// The controller needs the delivery-rate sample of every ACK.
    fn wants_rate_sample(&self) -> bool {
        false
    }
    /// With pacing, the rate out of slow start as a multiple of cwnd per
    /// SRTT: Linux's `tcp_update_pacing_rate()` default (120 %,
    /// `tcp_pacing_ca_ratio`) unless the control sets its own.
    fn pacing_ca_ratio(&self) -> f64 {
        1.2
    }

    /// The controller sets cwnd and the pacing rate itself on every ACK
    /// ([`control`](Self::control)); recovery leaves the window alone.
    fn owns_window(&self) -> bool {
        false
    }

    /// The connection is established (Linux's `init`): a controller that
    /// owns the window sets its first pacing rate.
    fn on_established(&mut self, _w: &mut Window, _c: &mut Control) {}

    /// Every ACK, for a controller that owns the window (Linux's
    /// `cong_control`), after loss recovery has looked at it.
    fn control(&mut self, _w: &mut Window, _rs: &RateSample, _c: &mut Control) {}

    /// A segment was newly deemed lost, for a controller that owns the
    /// window (BBRv3's per-loss step); called before [`control`](Self::control)
    /// on the ACK that found it.
    fn on_lost(&mut self, _l: &LostSegment, _c: &Control) {}

    /// A retransmission timeout put the connection in the Loss state
    /// (Linux's `set_state(TCP_CA_Loss)`), for a controller that owns the
    /// window.
    fn on_loss_state(&mut self, _c: &mut Control) {}

    /// Transmission restarts with nothing in flight while the application
    /// limited the sender (Linux's `CA_EVENT_TX_START`).
    fn on_tx_start(&mut self, _w: &mut Window, _c: &mut Control) {}

    /// The controller's state for the window traces.
    fn trace(&self) -> CcTrace {
        CcTrace::NONE
    }

    /// Segments in one burst (an skb) of a paced sender with `tso_bursts`
    /// at `pacing_rate` bytes/s: Linux's `tcp_tso_autosize()`, the data of
    /// `1/1024` s (`sk_pacing_shift` = 10) up to a 64 KB GSO packet, at
    /// least `tcp_min_tso_segs` = 2. The allowance `tcp_tso_rtt_log` adds
    /// below a 16 ms minimum RTT (64 KB >> ⌊min_rtt/512 µs⌋, a segment
    /// only below about 3 ms) is left out.
    fn tso_segs(&self, pacing_rate: f64, mss: u32) -> u32 {
        (tso_bytes(pacing_rate) / mss as f64).max(2.0) as u32
    }
}

/// The bytes of one TSO burst at `pacing_rate` (about 1 ms of data, at
/// most a 64 KB GSO packet less the headers' room, `MAX_TCP_HEADER`).
pub(crate) fn tso_bytes(pacing_rate: f64) -> f64 {
    const GSO_LIMIT: f64 = 65_536.0 - 1.0 - 320.0;
    (pacing_rate / 1024.0).min(GSO_LIMIT)
}

/// What the window traces show of a controller's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcTrace {
    /// The controller's state (BBR: [`BbrMode`] as 1-4, BBRv3:
    /// [`Bbr3Mode`]); 0 without states.
    pub state: u8,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    /// Its bandwidth estimate, bytes per second.
    pub bw: f64,
    /// Its minimum-RTT estimate, seconds.
    pub min_rtt: f64,
}

impl CcTrace {
    pub const NONE: CcTrace = CcTrace {
        state: 0,
        pacing_gain: f64::NAN,
        cwnd_gain: f64::NAN,
        bw: f64::NAN,
        min_rtt: f64::NAN,
    };
}

/// Enum dispatch over the congestion controls.
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(Reno),
    Hybla(Hybla),
    Fixed(Fixed),
    Cubic(Box<Cubic>),
    Dctcp(Box<Dctcp>),
    Prague(Box<Prague>),
    Bbr(Box<Bbr>),
    Bbr3(Box<Bbr3>),
}

impl Cc {
    pub fn new(kind: CcKind, rules: CcRules) -> Cc {
        match kind {
            CcKind::Reno(p) => Cc::Reno(Reno::with(p, rules)),
            CcKind::Hybla { rtt0 } => Cc::Hybla(Hybla::new(rtt0, rules)),
            CcKind::Fixed { window } => Cc::Fixed(Fixed {
                window: window as f64,
            }),
            CcKind::Cubic(p) => Cc::Cubic(Box::new(Cubic::new(p, rules))),
            CcKind::Dctcp(p) => Cc::Dctcp(Box::new(Dctcp::new(p, rules))),
            CcKind::Prague(p) => Cc::Prague(Box::new(Prague::new(p, rules))),
            CcKind::Bbr(p) => Cc::Bbr(Box::new(Bbr::new(p, Rng::stream(0, "bbr", 0)))),
            CcKind::Bbr3(p) => Cc::Bbr3(Box::new(Bbr3::new(p, Rng::stream(0, "bbr3", 0)))),
        }
    }

    #[inline]
    fn inner(&mut self) -> &mut dyn CongestionControl {
        match self {
            Cc::Reno(c) => c,
            Cc::Hybla(c) => c,
            Cc::Fixed(c) => c,
            Cc::Cubic(c) => c.as_mut(),
            Cc::Dctcp(c) => c.as_mut(),
            Cc::Prague(c) => c.as_mut(),
            Cc::Bbr(c) => c.as_mut(),
            Cc::Bbr3(c) => c.as_mut(),
        }
    }

    fn inner_ref(&self) -> &dyn CongestionControl {
        match self {
            Cc::Reno(c) => c,
            Cc::Hybla(c) => c,
            Cc::Fixed(c) => c,
            Cc::Cubic(c) => c.as_ref(),
            Cc::Dctcp(c) => c.as_ref(),
            Cc::Prague(c) => c.as_ref(),
            Cc::Bbr(c) => c.as_ref(),
            Cc::Bbr3(c) => c.as_ref(),
        }
    }

    pub fn loss_window(&self, w: &Window, mss: u32) -> f64 {
        self.inner_ref().loss_window(w, mss)
    }

    pub fn initial_window(&self, configured: f64) -> f64 {
        self.inner_ref().initial_window(configured)
    }

    #[inline]
    pub fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.inner().on_ack(w, s)
    }

    pub fn ssthresh_after(&mut self, w: &Window, signal: Signal, flight: u64, mss: u32) -> f64 {
        self.inner().ssthresh_after(w, signal, flight, mss)
    }

    pub fn on_timeout(&mut self) {
        self.inner().on_timeout()
    }

    pub fn on_undo(&mut self) {
        self.inner().on_undo()
    }

    pub fn on_ecn(&mut self, w: &mut Window, s: &EcnSample) {
        self.inner().on_ecn(w, s)
    }

    pub fn grows_through_cwr(&self) -> bool {
        self.inner_ref().grows_through_cwr()
    }

    pub fn pacing_ca_ratio(&self) -> f64 {
        self.inner_ref().pacing_ca_ratio()
    }

    pub fn scalable(&self) -> bool {
        self.inner_ref().scalable()
    }

    /// A scalable control's estimate of the marked fraction, α.
    pub fn alpha(&self) -> Option<f64> {
        match self {
            Cc::Dctcp(c) => Some(c.alpha()),
            Cc::Prague(c) => Some(c.alpha()),
            _ => None,
        }
    }
    /// Give the controller the connection's own random stream (BBR's
    /// gain-cycle start), derived from the run's seed.
    pub fn seed(&mut self, rng: Rng) {
        match self {
            Cc::Bbr(b) => b.seed(rng),
            Cc::Bbr3(b) => b.seed(rng),
            _ => {}
        }
    }

    pub fn wants_rate_sample(&self) -> bool {
        self.inner_ref().wants_rate_sample()
    }

    pub fn owns_window(&self) -> bool {
        self.inner_ref().owns_window()
    }

    pub fn on_established(&mut self, w: &mut Window, c: &mut Control) {
        self.inner().on_established(w, c)
    }

    pub fn control(&mut self, w: &mut Window, rs: &RateSample, c: &mut Control) {
        self.inner().control(w, rs, c)
    }

    pub fn on_lost(&mut self, l: &LostSegment, c: &Control) {
        self.inner().on_lost(l, c)
    }

    pub fn on_loss_state(&mut self, c: &mut Control) {
        self.inner().on_loss_state(c)
    }

    pub fn on_tx_start(&mut self, w: &mut Window, c: &mut Control) {
        self.inner().on_tx_start(w, c)
    }

    pub fn trace(&self) -> CcTrace {
        self.inner_ref().trace()
    }

    pub fn tso_segs(&self, pacing_rate: f64, mss: u32) -> u32 {
        self.inner_ref().tso_segs(pacing_rate, mss)
    }
}
