//! What a TCP sender reports: its counters and the log of its window cuts
//! (the congestion events behind the synchronization measures).

use crate::time::SimTime;
use crate::transport::RttStats;

/// Counters of one sender.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Tail loss probes sent (RFC 8985 section 7).
    pub loss_probes: u64,
    pub ecn_reductions: u64,
    /// Window reductions undone because D-SACKs showed every resend of
    /// the episode unnecessary (Linux's `TCPDSACKUndo`, `TCPFullUndo` and
    /// `TCPLossUndo` together).
    pub undos: u64,
    pub rtt: RttStats,
}

/// Why a sender cut its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CutKind {
    /// Fast retransmit (duplicate ACKs or SACK): the start of a recovery.
    FastRetransmit = 0,
    /// The retransmission timer fired.
    Timeout = 1,
    /// An ECN-Echo halved the window (or held it at one segment).
    Ecn = 2,
}

/// One window reduction, kept until the simulation collects it: the
/// congestion-event log behind the synchronization measures.
#[derive(Clone, Copy, Debug)]
pub struct WindowCut {
    pub time: SimTime,
    pub kind: CutKind,
    /// cwnd just before the cut, bytes.
    pub cwnd_before: f64,
    /// cwnd and ssthresh just after it, bytes.
    pub cwnd_after: f64,
    pub ssthresh: f64,
    /// Smoothed RTT at the cut (None before the first sample).
    pub srtt: Option<SimTime>,
}
