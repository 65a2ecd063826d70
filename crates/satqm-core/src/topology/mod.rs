//! Topologies: what a scenario's `[topology]` describes (`spec.rs`) and the
//! builders that turn it into nodes and links (one file per shape).

pub mod dumbbell;
pub mod ipos;
pub mod spec;

pub use spec::{AccessDelay, AccessSpec, Dumbbell, Ipos, LinkSpec, Topology};

use crate::gateway::Held;
use crate::ids::{LinkId, NodeId};
use crate::net::schedule::Schedule;
use crate::net::{Link, Port, Upstream};
use crate::queue::BufferLimit;
use crate::rng::Rng;
use crate::time::SimTime;

/// What a builder produces.
#[derive(Debug)]
pub struct Built {
    pub n_nodes: usize,
    pub node_names: Vec<String>,
    pub links: Vec<Link>,
    /// (sender node, receiver node) of each host pair.
    pub pairs: Vec<(NodeId, NodeId)>,
    /// The link the summary reports.
    pub bottleneck: String,
    /// When routers move traffic from one path to another.
    pub route_changes: Vec<RouteChange>,
}

/// From `at` on, router `node` forwards on `via` what it forwarded on any
/// of `paths` (its parallel links towards one neighbour).
#[derive(Clone, Debug, PartialEq)]
pub struct RouteChange {
    pub at: SimTime,
    pub node: NodeId,
    pub paths: Vec<LinkId>,
    pub via: LinkId,
}

impl Built {
    pub fn node(&mut self, name: String) -> NodeId {
        self.node_names.push(name);
        self.n_nodes += 1;
        NodeId(self.n_nodes as u32 - 1)
    }

    /// Add the two directions of a duplex link.
    pub fn duplex(
        &mut self,
        name: &str,
        a: NodeId,
        b: NodeId,
        spec: &LinkSpec,
        seed: u64,
        monitored: bool,
    ) {
        self.add_link(
            name.to_string(),
            (a, b),
            spec,
            (spec.buffer, spec.device_queue),
            (spec.loss, false),
            seed,
            monitored,
        );
        let rev = format!("{name}.reverse");
        self.add_link(
            rev,
            (b, a),
            spec,
            (spec.reverse_buffer, spec.reverse_device_queue),
            (spec.reverse_loss, true),
            seed,
            monitored,
        );
    }

    /// Add one direction only.
    pub fn simplex(
        &mut self,
        name: &str,
        a: NodeId,
        b: NodeId,
        spec: &LinkSpec,
        seed: u64,
        monitored: bool,
    ) {
        self.add_link(
            name.to_string(),
            (a, b),
            spec,
            (spec.buffer, spec.device_queue),
            (spec.loss, false),
            seed,
            monitored,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn add_link(
        &mut self,
        name: String,
        (from, to): (NodeId, NodeId),
        spec: &LinkSpec,
        (buffer, device_queue): (BufferLimit, u32),
        (loss, reverse): (f64, bool),
        seed: u64,
        monitored: bool,
    ) {
        let index = self.links.len() as u64;
        // A port with backpressure holds its node's packets in a FIFO in
        // their host, unless a PEP's backbone orders or paces them.
        let upstream = spec
            .backpressure
            .then(|| Box::new(Held::default()) as Box<dyn Upstream>);
        let mut port = Port::new(buffer, upstream);
        port.set_device_queue(device_queue);
        let mut link = Link::new(
            name,
            (from, to),
            spec.rate,
            spec.delay,
            loss,
            port,
            Rng::stream(seed, "link", index),
            monitored,
        );
        if let Some(s) = &spec.schedule {
            link.set_schedule(Schedule::new(s, reverse));
        }
        self.links.push(link);
    }
}
