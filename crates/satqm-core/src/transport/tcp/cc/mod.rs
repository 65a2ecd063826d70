//! Congestion control: how the window grows on ACKs and how far it falls on
//! a congestion signal. Loss *recovery* (when the signal is raised, which
//! segments to resend) lives in [`super::recovery`]; this interface only
//! moves `cwnd` and `ssthresh`, so a new
//! algorithm (Hybla, CUBIC, ...) is one file implementing
//! [`CongestionControl`] plus one arm in [`Cc`].

mod cubic;
mod dctcp;
mod fixed;
mod hybla;
mod prague;
mod reno;

pub use cubic::{Cubic, CubicParams, HyStartKind};
pub use dctcp::{Dctcp, DctcpParams, MarkedFraction};
pub use fixed::Fixed;
pub use hybla::Hybla;
pub use prague::{Prague, PragueParams};
pub use reno::Reno;

use crate::time::SimTime;
use crate::transport::tcp::config::{CcKind, CcRules};

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
pub struct AckSample {
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
}

impl AckSample {
    /// A sample of `acked` bytes with no RTT sample (tests).
    #[cfg(test)]
    pub fn of(acked: u64, mss: u32, srtt: Option<SimTime>) -> AckSample {
        AckSample {
            now: SimTime::ZERO,
            acked,
            mss,
            rtt: None,
            srtt,
            snd_una: 0,
            snd_max: 0,
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
}

impl Cc {
    pub fn new(kind: CcKind, rules: CcRules) -> Cc {
        match kind {
            CcKind::Reno => Cc::Reno(Reno::new(rules)),
            CcKind::Hybla { rtt0 } => Cc::Hybla(Hybla::new(rtt0, rules)),
            CcKind::Fixed { window } => Cc::Fixed(Fixed {
                window: window as f64,
            }),
            CcKind::Cubic(p) => Cc::Cubic(Box::new(Cubic::new(p, rules))),
            CcKind::Dctcp(p) => Cc::Dctcp(Box::new(Dctcp::new(p, rules))),
            CcKind::Prague(p) => Cc::Prague(Box::new(Prague::new(p, rules))),
        }
    }

    fn inner(&mut self) -> &mut dyn CongestionControl {
        match self {
            Cc::Reno(c) => c,
            Cc::Hybla(c) => c,
            Cc::Fixed(c) => c,
            Cc::Cubic(c) => c.as_mut(),
            Cc::Dctcp(c) => c.as_mut(),
            Cc::Prague(c) => c.as_mut(),
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
        }
    }

    pub fn loss_window(&self, w: &Window, mss: u32) -> f64 {
        self.inner_ref().loss_window(w, mss)
    }

    pub fn initial_window(&self, configured: f64) -> f64 {
        self.inner_ref().initial_window(configured)
    }

    pub fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.inner().on_ack(w, s)
    }

    pub fn ssthresh_after(&mut self, w: &Window, signal: Signal, flight: u64, mss: u32) -> f64 {
        self.inner().ssthresh_after(w, signal, flight, mss)
    }

    pub fn on_timeout(&mut self) {
        self.inner().on_timeout()
    }

    pub fn on_ecn(&mut self, w: &mut Window, s: &EcnSample) {
        self.inner().on_ecn(w, s)
    }

    pub fn grows_through_cwr(&self) -> bool {
        self.inner_ref().grows_through_cwr()
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
}
