//! Congestion control: how the window grows on ACKs and how far it falls on
//! a congestion signal. Loss *recovery* (when the signal is raised, which
//! segments to resend) lives in [`super::recovery`]; this interface only
//! moves `cwnd` and `ssthresh`, so a new
//! algorithm (Hybla, CUBIC, ...) is one file implementing
//! [`CongestionControl`] plus one arm in [`Cc`].

mod fixed;
mod hybla;
mod reno;

pub use fixed::Fixed;
pub use hybla::Hybla;
pub use reno::Reno;

use crate::time::SimTime;
use crate::transport::tcp::config::{CcKind, CcRules};

/// The window variables congestion control moves, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
}

pub trait CongestionControl {
    /// New data was cumulatively acknowledged outside loss recovery.
    /// `srtt` is the smoothed round-trip time, once there is one.
    fn on_ack(&mut self, w: &mut Window, acked: u64, mss: u32, rtt: Option<SimTime>, now: SimTime);

    /// The slow-start threshold after a congestion signal (loss, ECN echo
    /// or timeout) with `flight` bytes outstanding.
    fn ssthresh_after_loss(&mut self, _w: &Window, flight: u64, mss: u32) -> f64 {
        // RFC 5681 eq. (4)
        (flight as f64 / 2.0).max(2.0 * mss as f64)
    }

    /// A retransmission timeout fired.
    fn on_timeout(&mut self) {}

    /// The window after a timeout (RFC 5681: one segment).
    fn loss_window(&self, _w: &Window, mss: u32) -> f64 {
        mss as f64
    }

    /// The window a connection starts with, given the configured one.
    fn initial_window(&self, configured: f64) -> f64 {
        configured
    }
}

/// Enum dispatch over the congestion controls.
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(Reno),
    Hybla(Hybla),
    Fixed(Fixed),
}

impl Cc {
    pub fn new(kind: CcKind, rules: CcRules) -> Cc {
        match kind {
            CcKind::Reno => Cc::Reno(Reno::new(rules)),
            CcKind::Hybla { rtt0 } => Cc::Hybla(Hybla::new(rtt0, rules)),
            CcKind::Fixed { window } => Cc::Fixed(Fixed {
                window: window as f64,
            }),
        }
    }

    fn inner(&mut self) -> &mut dyn CongestionControl {
        match self {
            Cc::Reno(c) => c,
            Cc::Hybla(c) => c,
            Cc::Fixed(c) => c,
        }
    }

    fn inner_ref(&self) -> &dyn CongestionControl {
        match self {
            Cc::Reno(c) => c,
            Cc::Hybla(c) => c,
            Cc::Fixed(c) => c,
        }
    }

    pub fn loss_window(&self, w: &Window, mss: u32) -> f64 {
        self.inner_ref().loss_window(w, mss)
    }

    pub fn initial_window(&self, configured: f64) -> f64 {
        self.inner_ref().initial_window(configured)
    }

    pub fn on_ack(
        &mut self,
        w: &mut Window,
        acked: u64,
        mss: u32,
        rtt: Option<SimTime>,
        now: SimTime,
    ) {
        self.inner().on_ack(w, acked, mss, rtt, now)
    }

    pub fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, mss: u32) -> f64 {
        self.inner().ssthresh_after_loss(w, flight, mss)
    }

    pub fn on_timeout(&mut self) {
        self.inner().on_timeout()
    }
}
