//! Real packets through satqm's simulated network, in real time.
//!
//! `satqm-core` makes no OS call; this crate is the OS side of an
//! emulation: a TUN device for each real host, opened inside that host's
//! network namespace ([`tun`]), the parsing of what the devices give
//! ([`parse`]), and the run loop that advances the simulation with the
//! wall clock, hands it the packets the hosts send and writes out the
//! ones it delivers ([`Emulator`]).

pub mod parse;
mod run;
#[cfg(target_os = "linux")]
pub mod tun;

pub use run::{Connection, Device, Emulator, Lateness, RealHost, Report};
