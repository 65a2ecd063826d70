//! The network: links with their output ports, and routing.
//!
//! A packet's path through one hop: [`Link::enqueue`] hands it to the
//! link's [`Port`] (`port.rs`: AQM verdict, ECN-or-drop, backpressure on
//! its own node's senders through an [`Upstream`], buffer limit), which either queues it or passes it to the transmitter;
//! the transmitter puts it on the delay line (`link.rs`); at the far end the
//! simulation forwards it by [`Routes`] or delivers it. A monitored port
//! measures each packet's queueing delay (`sojourn.rs`).

pub mod delay_line;
pub mod drop;
pub mod framing;
pub mod link;
pub mod port;
pub mod routing;
pub mod schedule;
pub mod sojourn;
pub mod upstream;

pub use delay_line::DelayLine;
pub use drop::DropReason;
pub use framing::Framing;
pub use link::{DelayModel, Link};
pub use port::{PlacedAqm, Port, PortSample, PortSink};
pub use routing::Routes;
pub use sojourn::{DelayFigures, DelayHistogram, Sojourns};
pub use upstream::Upstream;

#[cfg(test)]
mod schedule_tests;
