//! The options of one TCP connection, as a scenario's `[tcp]` table and
//! its per-entry overrides set them once validated: loss recovery,
//! congestion control, segment and window sizes, delayed ACKs, ECN and the
//! retransmission timer's bounds.
//!
//! The sender and receiver read these; `config/tcp.rs` builds them from a
//! scenario file.

use crate::time::{Rate, SimTime};

/// How the sender detects and repairs losses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Fast retransmit, then slow start from one segment.
    Tahoe,
    /// Fast retransmit and fast recovery (RFC 5681).
    Reno,
    /// Reno with partial-ACK handling (RFC 6582).
    NewReno,
    /// SACK-based loss recovery (RFC 6675).
    Sack,
}

/// Which congestion control grows and cuts the window (one file each in
/// `cc/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcKind {
    /// Slow start and congestion avoidance of RFC 5681.
    Reno,
    /// TCP Hybla with reference round-trip time `rtt0`.
    Hybla { rtt0: SimTime },
    /// A constant window of `window` bytes: no slow start, no reduction.
    Fixed { window: u64 },
}

/// TCP options of one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    pub recovery: Recovery,
    pub cc: CcKind,
    pub mss: u32,
    pub initial_window: u32,
    pub delayed_ack: bool,
    pub delayed_ack_timeout: SimTime,
    pub window_scaling: bool,
    pub receive_buffer: u64,
    pub ecn: bool,
    pub rate_cap: Option<Rate>,
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    pub initial_rto: SimTime,
    pub handshake: bool,
    pub dupack_threshold: u32,
}

/// What a connection gets from keys a scenario leaves out.
impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            recovery: Recovery::NewReno,
            cc: CcKind::Reno,
            mss: 1460,
            initial_window: 2,
            delayed_ack: true,
            delayed_ack_timeout: SimTime::from_ms(200),
            window_scaling: true,
            receive_buffer: 16 * 1024 * 1024,
            ecn: false,
            rate_cap: None,
            min_rto: SimTime::from_secs(1),
            max_rto: SimTime::from_secs(60),
            initial_rto: SimTime::from_secs(1),
            handshake: true,
            dupack_threshold: 3,
        }
    }
}

impl TcpConfig {
    /// The largest window the receiver can advertise: 65,535 bytes without
    /// window scaling (RFC 7323), the receive buffer otherwise.
    pub fn max_advertised_window(&self) -> u64 {
        if self.window_scaling {
            self.receive_buffer
        } else {
            self.receive_buffer.min(65_535)
        }
    }
}
