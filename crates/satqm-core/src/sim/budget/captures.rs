//! The packet captures' part of the memory estimate: each captured link
//! full in both directions for the capture's window, one pcapng block of
//! the snap length per packet, for each side captured (arrivals counted
//! as many as departures: what a full link's port refuses beyond that is
//! not foreseen), and its copy in a Python `bytes`.

use super::{Detail, Host, Part, Shape};
use crate::config::Scenario;
use crate::topology::Topology;

/// Bytes of a pcapng enhanced packet block besides the frame: its header,
/// timestamps, lengths and trailer.
const PCAPNG_BLOCK: u64 = 32;

pub(super) fn captures(s: &Scenario, sh: &Shape, host: Host) -> Part {
    let (packets, each) = match &s.capture {
        None => (0.0, 0.0),
        Some(c) => {
            let window = c.until.min(s.duration).saturating_sub(c.from).secs_f64();
            // Both directions of each named link: the data direction full,
            // and at most one acknowledgement per data packet back.
            let sides = (c.side.departures() as u8 + c.side.arrivals() as u8) as f64;
            let per_s: f64 = c
                .links
                .iter()
                .map(|name| 2.0 * sides * named_rate(&s.topology, name) / (8.0 * sh.packet))
                .sum();
            let frame = (c.snaplen as u64).next_multiple_of(4);
            (
                per_s * window,
                (PCAPNG_BLOCK + frame) as f64 * host.capture(),
            )
        }
    };
    Part {
        name: "packet captures",
        key: "simulation.capture_until",
        bytes: packets * each,
        how: Detail {
            count: packets,
            each,
            what: "captured packets",
        },
    }
}

/// The rate (bit/s) of the link a capture names, by the names the topology
/// builders give (`bottleneck`, `access[3]`, `transmit`, `client[7]`, ...);
/// the fastest link for a name that is none of them (the build refuses it).
fn named_rate(t: &Topology, name: &str) -> f64 {
    let base = name.strip_suffix(".reverse").unwrap_or(name);
    let stem = base.split('[').next().unwrap_or(base);
    let rates: Vec<(&str, f64)> = match t {
        Topology::Dumbbell(d) => vec![
            ("bottleneck", d.bottleneck.rate.bps() as f64),
            ("access", d.access.link.rate.bps() as f64),
            ("receiver_access", d.receiver_access.link.rate.bps() as f64),
        ],
        Topology::Ipos(i) => vec![
            ("receive", i.receive.rate.bps() as f64),
            ("transmit", i.downlink.rate.bps() as f64),
            ("uplink", i.uplink.rate.bps() as f64),
            ("server", i.server_links.link.rate.bps() as f64),
            ("client", i.client_links.link.rate.bps() as f64),
        ],
    };
    rates
        .iter()
        .find(|(n, _)| *n == stem)
        .map(|&(_, r)| r)
        .unwrap_or_else(|| rates.iter().map(|&(_, r)| r).fold(0.0, f64::max))
}
