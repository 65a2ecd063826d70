//! The options of one TCP connection, as a scenario's `[tcp]` table and
//! its per-entry overrides set them once validated: loss recovery,
//! congestion control, segment and window sizes, delayed ACKs, ECN and the
//! retransmission timer's bounds.
//!
//! The sender and receiver read these; `config/tcp.rs` builds them from a
//! scenario file.

use crate::packet::{TCP_IP_HEADER, TCP_TIMESTAMPS_OPTION};
use crate::time::{Rate, SimTime};

pub use super::rtt::RtoRule;

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
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcKind {
    /// Slow start and congestion avoidance of RFC 5681 (HyStart++ as an
    /// option).
    Reno(super::cc::RenoParams),
    /// TCP Hybla with reference round-trip time `rtt0`.
    Hybla { rtt0: SimTime },
    /// A constant window of `window` bytes: no slow start, no reduction.
    Fixed { window: u64 },
    /// CUBIC (RFC 9438, Linux's `tcp_cubic`).
    Cubic(super::cc::CubicParams),
    /// BBR v1 (Linux's `tcp_bbr`): owns the window, paces.
    Bbr(super::cc::BbrParams),
    /// BBR v3 (draft-ietf-ccwg-bbr): owns the window, paces.
    Bbr3(super::cc::Bbr3Params),
    /// DCTCP (RFC 8257, Linux's `tcp_dctcp`).
    Dctcp(super::cc::DctcpParams),
    /// TCP Prague (draft-briscoe-iccrg-prague-congestion-control, the L4S
    /// team's `tcp_prague`).
    Prague(super::cc::PragueParams),
}

impl CcKind {
    /// Reno with RFC 5681's slow start.
    pub const RENO: CcKind = CcKind::Reno(super::cc::RenoParams::STANDARD);
}

/// How the receiver feeds CE marks back and how the sender reads them
/// (with [`TcpConfig::ecn`] on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnFeedback {
    /// RFC 3168: ECE on every ACK from the first CE until a segment with
    /// CWR arrives; the sender halves once per window of data.
    Classic,
    /// DCTCP's (RFC 8257 section 3.2): each ACK's ECE says whether the
    /// segments it acknowledges were CE-marked; an ACK goes at once when
    /// the CE state of arriving segments changes.
    Dctcp,
    /// AccECN (RFC 9768, draft-ietf-tcpm-accurate-ecn): every ACK carries
    /// the count of CE-marked segments received, modulo 8, in its ACE
    /// field (AE, CWR, ECE).
    AccEcn,
}

/// The IP ECN codepoint the sender's data segments carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnCodepoint {
    /// ECT(0): classic ECN (RFC 3168).
    Ect0,
    /// ECT(1): the L4S identifier (RFC 9331).
    Ect1,
}

impl EcnCodepoint {
    /// The packet flag that carries it.
    #[inline]
    pub fn flag(self) -> u8 {
        match self {
            EcnCodepoint::Ect0 => crate::packet::flags::ECT,
            EcnCodepoint::Ect1 => crate::packet::flags::ECT1,
        }
    }
}

/// How congestion control counts what an ACK acknowledged and where it
/// sets ssthresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcRules {
    /// RFC 5681: the window in bytes; slow start adds `min(acked, SMSS)`
    /// per ACK (RFC 3465 with L = 1), congestion avoidance `SMSS²/cwnd`;
    /// ssthresh is half the FlightSize.
    Rfc,
    /// Linux (`tcp_slow_start()`, `tcp_cong_avoid_ai()` and
    /// `tcp_reno_ssthresh()` in `net/ipv4/tcp_cong.c`): the window in whole
    /// segments; slow start adds one segment per segment acknowledged (up
    /// to ssthresh), congestion avoidance one segment per window of
    /// acknowledged segments; ssthresh is half of cwnd, at least two.
    Linux,
    /// Linux 2.6.2x without `tcp_abc` (`tcp_slow_start()` and
    /// `tcp_cong_avoid_ai()` of those kernels): the window in whole
    /// segments, growing by one segment per ACK in slow start (while cwnd
    /// is at most ssthresh) and by one segment per cwnd + 1 ACKs in
    /// congestion avoidance, whatever each ACK covers; ssthresh is half of
    /// cwnd, at least two.
    Linux2009,
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
    /// The send buffer's size in bytes of memory (Linux's `SO_SNDBUF`, at
    /// most `net.ipv4.tcp_wmem[2]`): see [`super::sndbuf`]; `None`: the
    /// application's data is always there to send.
    pub send_buffer: Option<u64>,
    /// ECN on: data segments are ECN-capable and CE marks are fed back.
    pub ecn: bool,
    /// How CE marks are fed back (used when `ecn`).
    pub ecn_feedback: EcnFeedback,
    /// The codepoint of data segments (used when `ecn`).
    pub ecn_codepoint: EcnCodepoint,
    pub rate_cap: Option<Rate>,
    /// Pace segments (Linux's internal pacing, or fq's): at the pacing
    /// rate the congestion control sets, or for a classic one Linux's
    /// default (`tcp_update_pacing_rate()`). BBR always paces.
    pub pacing: bool,
    /// A paced sender releases its segments in bursts of the size Linux's
    /// TSO autosizing gives an skb at the pacing rate (about a millisecond
    /// of data, at least two segments; the congestion control's
    /// [`tso_segs`](super::cc::CongestionControl::tso_segs)), each burst
    /// followed by the pacing interval of all its segments; otherwise one
    /// segment at a time.
    pub tso_bursts: bool,
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    pub initial_rto: SimTime,
    /// How the timeout follows the RTT samples.
    pub rto_rule: RtoRule,
    /// How the window counts acknowledged data and sets ssthresh.
    pub cc_rules: CcRules,
    /// Linux's quick-ACK mode (`tcp_incr_quickack()`,
    /// `net/ipv4/tcp_input.c`): the receiver acknowledges every segment
    /// at the start of a connection and after a long silence, for up to
    /// this many segments (16, `TCP_MAX_QUICKACKS`; half the receive window
    /// in segments if smaller); 0 turns it off.
    pub quickack: u32,
    /// Linux's adaptive delayed-ACK timeout (`tcp_event_data_recv()`,
    /// `tcp_send_delayed_ack()`): the timer follows the gaps between data
    /// segments instead of `delayed_ack_timeout`, and a silence longer than
    /// the receiver's RTO brings quick ACKs back (see
    /// [`super::receiver`]).
    pub adaptive_ack: bool,
    /// With SACK recovery: RACK's loss detection by time (RFC 8985), on
    /// by default in Linux since 4.4 (`tcp_recovery = 1`).
    pub rack: bool,
    /// With RACK: tail loss probes (RFC 8985 section 7), Linux's
    /// `tcp_early_retrans = 3`.
    pub tlp: bool,
    /// With SACK recovery: Proportional Rate Reduction (RFC 6937), Linux's
    /// recovery since 3.2 (`tcp_cwnd_reduction()`).
    pub prr: bool,
    /// With SACK recovery: the receiver reports duplicate segments
    /// (D-SACK, RFC 2883) and the sender undoes a window reduction that
    /// they show was unnecessary (RFC 3708's detection, Linux's
    /// `tcp_dsack = 1` and its undo: `tcp_try_undo_dsack()`,
    /// `tcp_try_undo_recovery()`, `tcp_try_undo_loss()`); the same
    /// D-SACKs widen RACK's reordering window once reordering was seen.
    pub dsack: bool,
    pub handshake: bool,
    pub dupack_threshold: u32,
    /// Slow start threshold before the first loss, bytes; `None`: no limit
    /// (RFC 5681 allows an arbitrarily high value; ns-2 starts at 64 KB).
    pub initial_ssthresh: Option<u64>,
    /// Segments and ACKs carry the timestamps option (RFC 7323), 12
    /// header bytes more (`net.ipv4.tcp_timestamps = 1`, Linux's default).
    pub timestamps: bool,
    /// A retransmitted SYN carries no ECN setup (ECE and CWR clear), so a
    /// connection whose first SYN was lost runs without ECN: RFC 3168
    /// section 6.1.1.1's fallback, Linux's `tcp_ecn_clear_syn()` under
    /// `net.ipv4.tcp_ecn_fallback = 1` (its default). Classic ECN only.
    pub ecn_fallback: bool,
    /// Linux's receive-window autotuning (`net.ipv4.tcp_moderate_rcvbuf =
    /// 1`, the receiver side of the `linux` profile): the advertised
    /// window starts near 64 KB and grows by two segments per segment
    /// received (`tcp_grow_window()`), up to a limit that Dynamic
    /// Right-Sizing raises once per round trip (`tcp_rcv_space_adjust()`,
    /// `tcp_rcvbuf_grow()`); each growth sends the next ACK at once (the
    /// receiver acknowledges single segments while its window grows).
    pub receive_autotuning: bool,
    /// The TCP timers' clock: 0 for exact timers, else the tick rate of a
    /// Linux kernel (`CONFIG_HZ`) whose timer wheel they fire on
    /// ([`super::clock`]): the retransmission, RACK reordering, loss-probe
    /// and delayed-ACK timers fire on a tick, up to one level step late.
    pub timer_hz: u32,
    /// Header bytes of a data segment: 40 for TCP/IP, 52 with timestamps; a
    /// PEP's backbone protocol may send less (`[[pep]] backbone_header`).
    pub header: u32,
}

/// What a connection gets from keys a scenario leaves out.
impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            recovery: Recovery::NewReno,
            cc: CcKind::RENO,
            mss: 1460,
            initial_window: 2,
            delayed_ack: true,
            delayed_ack_timeout: SimTime::from_ms(200),
            window_scaling: true,
            receive_buffer: 16 * 1024 * 1024,
            send_buffer: None,
            ecn: false,
            ecn_feedback: EcnFeedback::Classic,
            ecn_codepoint: EcnCodepoint::Ect0,
            rate_cap: None,
            pacing: false,
            tso_bursts: false,
            min_rto: SimTime::from_secs(1),
            max_rto: SimTime::from_secs(60),
            initial_rto: SimTime::from_secs(1),
            rto_rule: RtoRule::Rfc6298,
            cc_rules: CcRules::Rfc,
            quickack: 0,
            adaptive_ack: false,
            rack: false,
            tlp: false,
            prr: false,
            dsack: false,
            handshake: true,
            dupack_threshold: 3,
            initial_ssthresh: None,
            timestamps: false,
            ecn_fallback: false,
            receive_autotuning: false,
            timer_hz: 0,
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
    /// Today's Linux (6.x), from `include/net/tcp.h`, `net/ipv4/tcp_input.c`
    /// and `net/ipv4/tcp_cong.c`: SACK (`tcp_sack = 1`), an initial window
    /// of 10 segments (`TCP_INIT_CWND`), initial RTO 1 s
    /// (`TCP_TIMEOUT_INIT`), minimum 200 ms (`TCP_RTO_MIN`) as the floor of
    /// the variance term ([`RtoRule::Linux`]), maximum 120 s
    /// (`TCP_RTO_MAX`), window growth counted in acknowledged segments and
    /// ssthresh from cwnd ([`CcRules::Linux`]), the adaptive delayed-ACK
    /// timeout (`adaptive_ack`: from 40 ms, `TCP_ATO_MIN`, following the
    /// gaps between data segments, `tcp_event_data_recv()`) and quick ACKs
    /// for the first 16 segments (`TCP_MAX_QUICKACKS`), RACK-TLP loss
    /// detection (`tcp_recovery = 1`, `tcp_early_retrans = 3`) and the
    /// retransmission timer restarted when the first unacknowledged
    /// segment is resent; a send buffer of 4 MiB (`tcp_wmem[2]`); the
    /// timestamps option on every segment and ACK (`tcp_timestamps = 1`:
    /// 52 header bytes); timers on the timer wheel of a kernel built with
    /// `CONFIG_HZ = 250` (Debian's and Ubuntu's choice; [`super::clock`]);
    /// and the kernel's default congestion control, CUBIC with HyStart
    /// (`tcp_cubic`).
    Linux,
    /// A Linux server of 2009 (kernels 2.6.27–2.6.32), from the constants
    /// of `include/net/tcp.h` and `tcp_init_cwnd()` of those kernels: SACK
    /// (`tcp_sack = 1`), a minimum RTO of 200 ms (`TCP_RTO_MIN = HZ/5`) as
    /// the floor of the variance term (the estimator of
    /// `tcp_rtt_estimator()` was already Linux's own, timing ACKs by their
    /// timestamps but not yet SACKed segments: [`RtoRule::Linux2009`]),
    /// an initial RTO of
    /// 3 s (`TCP_TIMEOUT_INIT`, RFC 2988; 1 s only from 2.6.39), a maximum
    /// RTO of 120 s (`TCP_RTO_MAX`), the RFC 3390 initial window (3
    /// segments of 1,460 bytes, 4 up to 1,095, 2 above 2,190: before
    /// 2.6.39's 10), quick ACKs for the first 16 segments and a
    /// delayed-ACK timeout of 40 ms (`TCP_ATO_MIN`, where Linux starts its
    /// adaptive timeout). Window growth is counted per ACK, as those
    /// kernels did without `tcp_abc` ([`CcRules::Linux2009`]). Its
    /// congestion control is the default of those kernels, CUBIC, counting
    /// ACKs as they did, with HyStart (from 2.6.29). Timestamps were on
    /// (`tcp_timestamps = 1`) then too.
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
        let mut c = match self {
            Profile::Rfc => rfc,
            Profile::Linux => TcpConfig {
                recovery: Recovery::Sack,
                cc: CcKind::Cubic(super::cc::CubicParams::default()),
                initial_window: 10,
                delayed_ack_timeout: SimTime::from_ms(40),
                min_rto: SimTime::from_ms(200),
                max_rto: SimTime::from_secs(120),
                initial_rto: SimTime::from_secs(1),
                rto_rule: RtoRule::Linux,
                cc_rules: CcRules::Linux,
                quickack: 16,
                rack: true,
                tlp: true,
                prr: true,
                dsack: true,
                send_buffer: Some(4 * 1024 * 1024),
                timestamps: true,
                ecn_fallback: true,
                receive_autotuning: true,
                tso_bursts: true,
                timer_hz: 250,
                adaptive_ack: true,
                ..rfc
            },
            Profile::Linux2009 => TcpConfig {
                recovery: Recovery::Sack,
                initial_window: rfc3390_initial_window(mss),
                delayed_ack_timeout: SimTime::from_ms(40),
                min_rto: SimTime::from_ms(200),
                max_rto: SimTime::from_secs(120),
                initial_rto: SimTime::from_secs(3),
                cc: CcKind::Cubic(super::cc::CubicParams::default()),
                rto_rule: RtoRule::Linux2009,
                cc_rules: CcRules::Linux2009,
                quickack: 16,
                dsack: true,
                timestamps: true,
                ecn_fallback: true,
                ..rfc
            },
        };
        // The data segments' header follows the options the profile sends.
        c.header = c.ack_header();
        c
    }
}

/// RFC 3390's initial window in segments: `min(4 MSS, max(2 MSS, 4380))`
/// bytes, rounded down to whole segments.
pub fn rfc3390_initial_window(mss: u32) -> u32 {
    (4 * mss).min((2 * mss).max(4380)) / mss
}

impl TcpConfig {
    /// Header bytes of a pure ACK (and of the handshake's segments): 40 for
    /// TCP/IP, 52 with timestamps. An ACK's SACK blocks add 4 + 8 bytes a
    /// block (the receiver adds them, as Linux does); a SYN's other options
    /// (MSS, SACK permitted, window scale) add nothing in satqm.
    pub fn ack_header(&self) -> u32 {
        TCP_IP_HEADER
            + if self.timestamps {
                TCP_TIMESTAMPS_OPTION
            } else {
                0
            }
    }

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
