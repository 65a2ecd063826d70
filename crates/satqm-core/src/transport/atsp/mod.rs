//! ATSP, the Advanced Transport Satellite Protocol of Muhammad, Kasmis &
//! De Cola ("Advanced Transport Satellite Protocol", DLR): a rate-based
//! transport whose sender, receiver and router cooperate.
//!
//! - the router ECN-marks packets (the PI AQM of `aqm/pi.rs` in `mark`
//!   mode);
//! - the receiver ([`AtspReceiver`]) counts the marks and, every `alpha`
//!   data packets, returns a SACK carrying the congestion rate
//!   `rho_{k,i} = rho_{k,i-1} + zeta_i * beta` (eq. 2) and the holes it
//!   sees;
//! - the sender ([`AtspSender`]) paces packets at `Theta / w` (eq. 3),
//!   accumulates `Lambda += rho` (eq. 4) and cuts `w` (eq. 5) on each SACK,
//!   resends the reported losses among new data without cutting its rate,
//!   and once per RTT cycle moves `w` toward `(1 - Lambda) W_max` with the
//!   slowness `N = I + Lambda h` (eqs. 6 and 7).
//!
//! Where the paper leaves a point open, the choice made here is written
//! beside the code that makes it and in `docs/atsp.md`; where the
//! alternative changes results it is a parameter of [`AtspConfig`].
//!
//! ## Wire format
//!
//! ATSP reuses the fields of [`Packet`] (no field is added to the packet):
//!
//! | packet | `seq` | `ack` | `rwnd` | `len` | `sack` |
//! |---|---|---|---|---|---|
//! | data | packet number | send time (ns) | sender's cycle | payload bytes | - |
//! | SACK | echoed send time (ns) | next packet expected in order | `rho` (IEEE-754 bits) | echoed cycle | up to 3 missing ranges of packet numbers |

mod receiver;
mod sender;
#[cfg(test)]
mod tests;

pub use receiver::AtspReceiver;
pub use sender::{AtspSender, AtspStats};

use crate::packet::Packet;
use crate::time::SimTime;

/// Wire bytes of a SACK (an IP header, the ATSP header with `rho`, and
/// room for three ranges).
pub const SACK_SIZE: u32 = 64;

/// How a SACK's cumulative `rho_{k,i}` cuts the window (eq. 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Each mark cuts once: the window after the i-th SACK of a receiver
    /// cycle is the window before that cycle's first SACK times
    /// `(1 - rho_{k,i})`, as eq. 5's `w_{k-1}` on the right side reads.
    /// Implemented as `w <- w (1 - rho_{k,i}) / (1 - rho_{k,i-1})`.
    CycleBase,
    /// `w <- w (1 - rho_{k,i})` at every SACK: a mark early in a cycle cuts
    /// again at each later SACK of that cycle.
    Compound,
}

impl Cut {
    pub fn name(self) -> &'static str {
        match self {
            Cut::CycleBase => "cycle_base",
            Cut::Compound => "compound",
        }
    }
}

/// The parameters of one ATSP flow (both ends read the same entry).
#[derive(Clone, Debug, PartialEq)]
pub struct AtspConfig {
    /// Data packets per SACK (`alpha`, paper: 20).
    pub alpha: u32,
    /// Congestion rate added per marked packet (`beta`, paper: 1e-3).
    pub beta: f64,
    /// Initial increase `I` of the slowness factor (paper: 3/2).
    pub i: f64,
    /// Strictness `h` of the slowness factor (paper: 100).
    pub h: f64,
    /// Maximum window `W_max`, packets per RTT (the allocated rate's
    /// bandwidth-delay product).
    pub w_max: f64,
    /// Floor of the window, packets per RTT (eqs. 5 and 6 can go below
    /// zero).
    pub w_min: f64,
    /// Data packet size on the wire, bytes.
    pub packet_size: u32,
    /// Header bytes of each data packet (IP and ATSP).
    pub header: u32,
    pub cut: Cut,
    /// The RTT assumed for pacing until the first SACK measures one.
    pub initial_rtt: SimTime,
}

impl Default for AtspConfig {
    fn default() -> Self {
        AtspConfig {
            alpha: 20,
            beta: 1e-3,
            i: 1.5,
            h: 100.0,
            w_max: 500.0,
            w_min: 1.0,
            packet_size: 1500,
            header: 40,
            cut: Cut::CycleBase,
            initial_rtt: SimTime::from_secs(1),
        }
    }
}

impl AtspConfig {
    /// Payload bytes per data packet.
    pub fn payload(&self) -> u32 {
        self.packet_size - self.header
    }
}

/// `rho` as a SACK carries it.
pub fn sack_rho(p: &Packet) -> f64 {
    f64::from_bits(p.rwnd)
}

/// Eq. 7: the slowness factor `N_k = I + Lambda_k h`.
pub fn slowness(i: f64, h: f64, lambda: f64) -> f64 {
    i + lambda * h
}

/// Eq. 6: `min{W_max, w + ((1 - Lambda) W_max - w) / N}`.
pub fn increase(w: f64, w_max: f64, lambda: f64, n: f64) -> f64 {
    w_max.min(w + ((1.0 - lambda) * w_max - w) / n)
}
