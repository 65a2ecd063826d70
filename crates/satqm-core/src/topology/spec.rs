//! What a scenario's `[topology]` describes, once validated: the links'
//! rates, delays, erasure and buffers, and the shape they are wired in
//! (dumbbell or IP over satellite). The builders in this folder turn these
//! into nodes and links; `config/topology.rs` builds them from a file.

use crate::net::schedule::ScheduleSpec;
use crate::net::DelayModel;
use crate::queue::BufferLimit;
use crate::time::{Rate, SimTime};

/// One duplex (or, for the IPoS space links, simplex) link: the forward
/// direction's rate, delay, erasure and buffer, and the reverse's erasure
/// and buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    pub rate: Rate,
    pub delay: DelayModel,
    pub loss: f64,
    pub reverse_loss: f64,
    pub backpressure: bool,
    pub buffer: BufferLimit,
    pub reverse_buffer: BufferLimit,
    /// Packets the device queue below each direction's buffer holds (0:
    /// none; see `net/port.rs`).
    pub device_queue: u32,
    pub reverse_device_queue: u32,
    /// How the rate, delay, erasure and state change over time (both
    /// directions; each direction its own erasure).
    pub schedule: Option<Box<ScheduleSpec>>,
}

/// Access-link delays per pair.
#[derive(Clone, Debug, PartialEq)]
pub enum AccessDelay {
    Same(DelayModel),
    /// Drawn per pair, uniformly in the range, from stream "access-delay".
    Range(SimTime, SimTime),
    List(Vec<SimTime>),
}

/// The access links of a group of hosts: one link spec, and each host's
/// delay.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessSpec {
    pub link: LinkSpec,
    pub delay: AccessDelay,
}

/// `pairs` senders and receivers on either side of one bottleneck.
#[derive(Clone, Debug, PartialEq)]
pub struct Dumbbell {
    pub pairs: u32,
    pub access: AccessSpec,
    pub receiver_access: AccessSpec,
    pub bottleneck: LinkSpec,
    /// Other paths between the two routers (`alternate[K]`): another
    /// satellite or gateway. Traffic takes the bottleneck until a route
    /// change moves it.
    pub alternates: Vec<LinkSpec>,
    /// When the traffic between the routers moves, and to which path (0:
    /// the bottleneck; K + 1: `alternate[K]`), in time order.
    pub route_changes: Vec<(SimTime, usize)>,
}

/// The network a scenario runs on.
#[derive(Clone, Debug, PartialEq)]
pub enum Topology {
    Dumbbell(Dumbbell),
    Ipos(Ipos),
}

impl Topology {
    /// Host pairs traffic entries select from: the dumbbell's sender/receiver
    /// pairs; in IPoS, pair k is (server k mod S, client k mod C).
    pub fn pairs(&self) -> u32 {
        match self {
            Topology::Dumbbell(d) => d.pairs,
            Topology::Ipos(t) => t.servers.max(t.clients),
        }
    }
}

/// The IP-over-satellite system of the AVQRED papers:
///
/// ```text
/// server[j] --server_links--> hub --receive--> gateway ==downlink==> terminal --client_links--> client[i]
///                                              (PEP)   <==uplink==   (PEP)
/// ```
/// The `receive` link's port is the gateway's receive queue (ahead of the
/// PEP), the `transmit` link's port its transmit queue feeding the rate
/// regulator and the space link.
#[derive(Clone, Debug, PartialEq)]
pub struct Ipos {
    pub servers: u32,
    pub clients: u32,
    pub server_links: AccessSpec,
    pub client_links: AccessSpec,
    pub receive: LinkSpec,
    pub downlink: LinkSpec,
    pub uplink: LinkSpec,
}
