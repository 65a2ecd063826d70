//! TCP: one sender and one receiver per connection, carrying data in one
//! direction (the receiver sends only ACKs), as the papers' bulk and web
//! transfers do.
//!
//! * loss recovery: behind [`recovery::LossRecovery`]: Tahoe, Reno,
//!   NewReno (RFC 6582), SACK (RFC 6675);
//! * congestion control: behind [`cc::CongestionControl`] (Reno first);
//! * RTO per RFC 6298 with Karn's rule and exponential back-off; timers
//!   exact or on Linux's timer wheel ([`clock`]);
//! * delayed ACKs (RFC 5681 section 4.2), receive window with or without
//!   window scaling (RFC 7323), ECN (RFC 3168, DCTCP's feedback of RFC 8257,
//!   AccECN of RFC 9768), optional pacing to a rate cap.
//!
//! Applications drive a connection like a socket: [`TcpSender::open`],
//! [`TcpSender::write`], [`TcpSender::close`] on the sending side;
//! [`TcpReceiver::read`] on the receiving side (or automatic reads), which
//! reopens the advertised window.

pub mod cc;
pub mod clock;
pub mod config;
pub mod ecn;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod segments;
pub mod sender;
pub mod sndbuf;
pub mod stats;
pub mod undo;

pub use config::{
    rfc3390_initial_window, CcKind, CcRules, EcnCodepoint, EcnFeedback, Profile, Recovery, RtoRule,
    TcpConfig,
};
pub use receiver::TcpReceiver;
pub use sender::TcpSender;

#[cfg(test)]
mod ecn_tests;
#[cfg(test)]
mod tests;
