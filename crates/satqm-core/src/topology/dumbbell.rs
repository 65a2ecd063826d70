//! The dumbbell: N sender/receiver pairs, each host on its own access link,
//! two routers joined by one bottleneck.
//!
//! ```text
//! sender[i] --access[i]--> left ==bottleneck==> right --receiver_access[i]--> receiver[i]
//! ```
//!
//! Per-pair access delays may differ (a range drawn from stream
//! `access-delay`, or a list), which gives heterogeneous round-trip times.
//! A pair's drawn delay applies to both its access links unless
//! `receiver_access` is given separately.
//!
//! Other paths between `left` and `right` (`alternate[K]`: another
//! satellite or gateway) carry traffic from the route changes that move it
//! there.

use crate::net::DelayModel;
use crate::rng::Rng;
use crate::time::SimTime;

use super::{AccessDelay, AccessSpec, Built, Dumbbell, LinkSpec, RouteChange};
use crate::ids::LinkId;

pub(crate) fn pair_delay(spec: &AccessSpec, i: u32, rng: &mut Rng) -> DelayModel {
    match &spec.delay {
        AccessDelay::Same(d) => *d,
        AccessDelay::Range(lo, hi) => DelayModel::Fixed(SimTime(rng.uniform_u64(lo.ns(), hi.ns()))),
        AccessDelay::List(v) => DelayModel::Fixed(v[i as usize]),
    }
}

pub fn build(db: &Dumbbell, seed: u64) -> Built {
    let mut b = Built {
        n_nodes: 0,
        node_names: Vec::new(),
        links: Vec::new(),
        pairs: Vec::new(),
        route_changes: Vec::new(),
        bottleneck: "bottleneck".into(),
    };
    let n = db.pairs;
    let senders: Vec<_> = (0..n).map(|i| b.node(format!("sender[{i}]"))).collect();
    let left = b.node("left".into());
    let right = b.node("right".into());
    let receivers: Vec<_> = (0..n).map(|i| b.node(format!("receiver[{i}]"))).collect();

    b.duplex("bottleneck", left, right, &db.bottleneck, seed, true);
    let mut rng = Rng::stream(seed, "access-delay", 0);
    let mut rng_rx = Rng::stream(seed, "receiver-access-delay", 0);
    let same_draw = db.receiver_access == db.access;
    for i in 0..n {
        let d = pair_delay(&db.access, i, &mut rng);
        let spec = LinkSpec {
            delay: d,
            ..db.access.link.clone()
        };
        b.duplex(
            &format!("access[{i}]"),
            senders[i as usize],
            left,
            &spec,
            seed,
            false,
        );
        let d_rx = if same_draw {
            d
        } else {
            pair_delay(&db.receiver_access, i, &mut rng_rx)
        };
        let spec = LinkSpec {
            delay: d_rx,
            ..db.receiver_access.link.clone()
        };
        b.duplex(
            &format!("receiver_access[{i}]"),
            right,
            receivers[i as usize],
            &spec,
            seed,
            false,
        );
        b.pairs.push((senders[i as usize], receivers[i as usize]));
    }
    // Other paths between the routers come last, so that every other
    // link keeps its id (and its random stream) whether they exist or not.
    // Routes take the bottleneck (the first of equal paths) until a route
    // change moves them.
    let mut forward = vec![LinkId(0)];
    for (k, spec) in db.alternates.iter().enumerate() {
        forward.push(LinkId(b.links.len() as u32));
        b.duplex(&format!("alternate[{k}]"), left, right, spec, seed, true);
    }
    let reverse: Vec<LinkId> = forward.iter().map(|l| LinkId(l.0 + 1)).collect();
    for &(at, via) in &db.route_changes {
        b.route_changes.push(RouteChange {
            at,
            node: left,
            paths: forward.clone(),
            via: forward[via],
        });
        b.route_changes.push(RouteChange {
            at,
            node: right,
            paths: reverse.clone(),
            via: reverse[via],
        });
    }
    b
}
