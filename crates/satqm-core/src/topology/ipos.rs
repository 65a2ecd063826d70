//! The IP-over-satellite system of the AVQRED papers (`000_…`, `003_…`,
//! "Gateway with PEP" and emulation figures):
//!
//! ```text
//! server[j] --server[j]--> hub --receive--> gateway ==transmit==> terminal --client[i]--> client[i]
//!                                           (PEP)   <==uplink===  (PEP)
//! ```
//!
//! * `receive`: the gateway's receive queue, ahead of the PEP, served at the
//!   gateway's processing rate; the AQMs of the papers' Table 1 drop here.
//! * `transmit`: the transmit queue feeding the rate regulator (the
//!   downlink rate) and the space link; its delay is the regulator latency
//!   plus the satellite delay (uniform per packet, FIFO kept).
//! * `uplink`: terminal to gateway.
//!
//! PEPs are placed by the scenario (`[[pep]]` at "gateway" and "terminal").
//! Host pair k is (server k mod S, client k mod C).

use crate::rng::Rng;

use super::dumbbell::pair_delay;
use super::{Built, Ipos, LinkSpec};

pub fn build(t: &Ipos, seed: u64) -> Built {
    let mut b = Built {
        n_nodes: 0,
        node_names: Vec::new(),
        links: Vec::new(),
        pairs: Vec::new(),
        route_changes: Vec::new(),
        bottleneck: "transmit".into(),
    };
    let servers: Vec<_> = (0..t.servers)
        .map(|j| b.node(format!("server[{j}]")))
        .collect();
    let hub = b.node("hub".into());
    let gateway = b.node("gateway".into());
    let terminal = b.node("terminal".into());
    let clients: Vec<_> = (0..t.clients)
        .map(|i| b.node(format!("client[{i}]")))
        .collect();

    b.duplex("receive", hub, gateway, &t.receive, seed, true);
    b.simplex("transmit", gateway, terminal, &t.downlink, seed, true);
    b.simplex("uplink", terminal, gateway, &t.uplink, seed, true);
    let mut rng = Rng::stream(seed, "server-delay", 0);
    for (j, &s) in servers.iter().enumerate() {
        let spec = LinkSpec {
            delay: pair_delay(&t.server_links, j as u32, &mut rng),
            ..t.server_links.link.clone()
        };
        b.duplex(&format!("server[{j}]"), s, hub, &spec, seed, false);
    }
    let mut rng = Rng::stream(seed, "client-delay", 0);
    for (i, &c) in clients.iter().enumerate() {
        let spec = LinkSpec {
            delay: pair_delay(&t.client_links, i as u32, &mut rng),
            ..t.client_links.link.clone()
        };
        b.duplex(&format!("client[{i}]"), terminal, c, &spec, seed, false);
    }
    for k in 0..t.servers.max(t.clients) {
        b.pairs.push((
            servers[(k % t.servers) as usize],
            clients[(k % t.clients) as usize],
        ));
    }
    b
}
