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

use crate::net::DelayModel;
use crate::rng::Rng;
use crate::time::SimTime;

use super::{AccessDelay, AccessSpec, Built, Dumbbell, LinkSpec};

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
    b
}
