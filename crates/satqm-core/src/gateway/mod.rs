//! The satellite gateway's performance-enhancing proxy (PEP): split TCP.
//!
//! A PEP at a node terminates every TCP connection whose path crosses it and
//! opens the next segment itself (RFC 3135, "split connection"). A transfer
//! from a server to a client behind a gateway thus becomes a chain of TCP
//! connections, joined at each PEP by a [`Relay`]: data delivered on the
//! upstream connection is written into the downstream one while the PEP's
//! per-connection buffer has room, and the upstream connection's advertised
//! window is the free space, so a full buffer pushes back on the sender.
//!
//! [`chain`] plans the segments of a transfer (which PEPs, which TCP
//! settings on each); the simulation makes one flow per segment and calls
//! [`Relay::pump`] whenever either side of a relay makes progress.
//!
//! Below the PEP, the gateway's transmit queue pushes back on it: a packet
//! of the PEP that finds the queue full waits in the PEP ([`Held`], the
//! port's [`Upstream`](crate::net::Upstream)), which lets its connections'
//! packets in one FIFO or by deficit round robin, at its backbone's pace if
//! it has one.

mod held;
pub use held::{Held, HeldOrder};
#[cfg(test)]
mod backbone_tests;

use crate::ids::{FlowId, NodeId};
use crate::net::{Link, Routes};
use crate::transport::tcp::sender::SenderState;
use crate::transport::tcp::TcpConfig;
use crate::transport::tcp::{TcpReceiver, TcpSender};
use crate::transport::Emit;

/// A node that splits TCP connections.
#[derive(Debug, Clone)]
pub struct Pep {
    pub node: NodeId,
    /// Bytes the PEP may hold per connection (unread upstream plus
    /// unacknowledged downstream).
    pub buffer: u64,
    /// The TCP the PEP runs on the connections it opens.
    pub tcp: TcpConfig,
}

/// One TCP connection of a transfer's chain.
#[derive(Debug, Clone)]
pub struct Segment {
    pub from: NodeId,
    pub to: NodeId,
    pub tcp: TcpConfig,
    /// The buffer of the relay feeding this segment (none for the first,
    /// which the application feeds).
    pub relay_buffer: Option<u64>,
}

/// The connections of a TCP transfer from `src` to `dst` under the
/// application's settings `tcp`: one per stretch between PEPs. A segment
/// that ends at a PEP advertises the PEP's buffer as its receive window
/// (capped at 65,535 bytes without window scaling); a segment that starts
/// at a PEP runs the PEP's TCP.
pub fn chain(
    peps: &[Pep],
    routes: &Routes,
    links: &[Link],
    (src, dst): (NodeId, NodeId),
    tcp: &TcpConfig,
) -> Vec<Segment> {
    let hops = peps_on_path(peps, routes, links, src, dst);
    let mut nodes = vec![src];
    nodes.extend(hops.iter().map(|&p| peps[p].node));
    nodes.push(dst);
    (0..nodes.len() - 1)
        .map(|seg| {
            let feeder = seg.checked_sub(1).map(|h| &peps[hops[h]]);
            let mut cfg = feeder.map_or(tcp, |p| &p.tcp).clone();
            if seg + 1 < nodes.len() - 1 {
                // Ends at a PEP: its window is the PEP's buffer.
                cfg.receive_buffer = peps[hops[seg]].buffer;
                if !cfg.window_scaling {
                    cfg.receive_buffer = cfg.receive_buffer.min(65_535);
                }
            }
            Segment {
                from: nodes[seg],
                to: nodes[seg + 1],
                tcp: cfg,
                relay_buffer: feeder.map(|p| p.buffer),
            }
        })
        .collect()
}

/// Indices of the PEPs a packet from `src` to `dst` passes, in order.
fn peps_on_path(
    peps: &[Pep],
    routes: &Routes,
    links: &[Link],
    src: NodeId,
    dst: NodeId,
) -> Vec<usize> {
    let mut out = Vec::new();
    if peps.is_empty() {
        return out;
    }
    let mut at = src;
    while let Some(l) = routes.next_hop(at, dst) {
        at = links[l.idx()].to;
        if at == dst {
            break;
        }
        if let Some(p) = peps.iter().position(|p| p.node == at) {
            out.push(p);
        }
    }
    out
}

/// A PEP joining two TCP connections: data delivered on `up` is written
/// into `down` while the PEP's per-connection buffer (`up`'s unread bytes
/// plus `down`'s unacknowledged bytes) has room; `up`'s advertised window
/// is the free space.
#[derive(Debug, Clone)]
pub struct Relay {
    pub up: FlowId,
    pub down: FlowId,
    pub buffer: u64,
    up_closed: bool,
    down_closed: bool,
    /// Largest occupancy seen (checked against `buffer` in tests).
    pub peak: u64,
}

impl Relay {
    pub fn new(up: FlowId, down: FlowId, buffer: u64) -> Relay {
        Relay {
            up,
            down,
            buffer,
            up_closed: false,
            down_closed: false,
            peak: 0,
        }
    }

    /// The upstream transfer has ended (its receiver got the last byte).
    pub fn upstream_closed(&mut self) {
        self.up_closed = true;
    }

    /// Move data from `rcv` (upstream) to `snd` (downstream) while the
    /// buffer has room; open the downstream connection once the upstream
    /// one has started, close it when the upstream transfer has ended and
    /// everything is forwarded.
    pub fn pump(&mut self, rcv: &mut TcpReceiver, snd: &mut TcpSender, em: &mut Emit<'_>) {
        if snd.state == SenderState::Closed {
            if !rcv.started() {
                return;
            }
            snd.open(em);
        }
        let room = self.buffer.saturating_sub(snd.unacked_bytes());
        let n = rcv.unread().min(room);
        let last = self.up_closed && !self.down_closed && n == rcv.unread();
        rcv.take(n);
        if last {
            snd.write_last(n, em);
            self.down_closed = true;
        } else if n > 0 {
            snd.write(n, em);
        }
        let held = snd.unacked_bytes();
        self.peak = self.peak.max(held + rcv.unread());
        rcv.set_held(held, em);
    }
}
