//! Nodes, links and output ports.
//!
//! A [`Link`] is unidirectional: an output port (a FIFO buffer with a limit
//! in packets or bytes, and a transmitter that serializes one packet at a
//! time at the link rate), then a delay line modelling propagation. The
//! delay line is FIFO even when each packet's delay is drawn at random, so
//! the event queue holds at most one arrival per link.
//!
//! The queue length of a port counts the packets waiting, not the one being
//! serialized, as in ns-2's and ns-3's queues.

pub mod link;
pub mod routing;

pub use link::{DelayModel, DropReason, Link, Port, Queued};
pub use routing::Routes;
