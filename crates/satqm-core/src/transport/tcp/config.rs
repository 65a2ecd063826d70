//! The options of one TCP connection, as a scenario's `[tcp]` table and
//! its per-entry overrides set them once validated: loss recovery,
//! congestion control, segment and window sizes, delayed ACKs, ECN and the
//! retransmission timer's bounds.
//!
//! The sender and receiver read these; `config/tcp.rs` builds them from a
//! scenario file.

use crate::packet::TCP_IP_HEADER;
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
    /// Slow start threshold before the first loss, bytes; `None`: no limit
    /// (RFC 5681 allows an arbitrarily high value; ns-2 starts at 64 KB).
    pub initial_ssthresh: Option<u64>,
    /// Header bytes of a data segment: 40 for TCP/IP; a PEP's backbone
    /// protocol may send less (`[[pep]] backbone_header`).
    pub header: u32,
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
            initial_ssthresh: None,
            header: TCP_IP_HEADER,
        }
    }
}

/// A named set of defaults for the TCP options, standing for a kind of
/// host stack; the keys a scenario sets override it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// satqm's defaults ([`TcpConfig::default`]): NewReno (RFC 6582), an
    /// initial window of 2 segments, delayed ACKs after 200 ms and RFC
    /// 6298's timer (1 s minimum and initial RTO, 60 s maximum).
    Rfc,
    /// A Linux server of 2009 (kernels 2.6.27–2.6.32), from the constants
    /// of `include/net/tcp.h` and `tcp_init_cwnd()` of those kernels: SACK
    /// (`tcp_sack = 1`), a minimum RTO of 200 ms (`TCP_RTO_MIN = HZ/5`),
    /// an initial RTO of 3 s (`TCP_TIMEOUT_INIT`, RFC 2988; 1 s only from
    /// 2.6.39), a maximum RTO of 120 s (`TCP_RTO_MAX`), the RFC 3390
    /// initial window (3 segments of 1,460 bytes, 4 up to 1,095, 2 above
    /// 2,190: before 2.6.39's 10) and a delayed-ACK timeout of 40 ms
    /// (`TCP_ATO_MIN`, where Linux starts its adaptive timeout). Linux's
    /// default congestion control of that time, CUBIC, is not modelled:
    /// the profile keeps Reno's window growth.
    Linux2009,
}

impl Profile {
    /// The options the profile sets for a connection of `mss` bytes
    /// per segment.
    pub fn base(self, mss: u32) -> TcpConfig {
        let rfc = TcpConfig {
            mss,
            ..TcpConfig::default()
        };
        match self {
            Profile::Rfc => rfc,
            Profile::Linux2009 => TcpConfig {
                recovery: Recovery::Sack,
                initial_window: rfc3390_initial_window(mss),
                delayed_ack_timeout: SimTime::from_ms(40),
                min_rto: SimTime::from_ms(200),
                max_rto: SimTime::from_secs(120),
                initial_rto: SimTime::from_secs(3),
                ..rfc
            },
        }
    }
}

/// RFC 3390's initial window in segments: `min(4 MSS, max(2 MSS, 4380))`
/// bytes, rounded down to whole segments.
pub fn rfc3390_initial_window(mss: u32) -> u32 {
    (4 * mss).min((2 * mss).max(4380)) / mss
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
