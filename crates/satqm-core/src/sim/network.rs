//! A packet's hops: forwarding by the routing table, the port and
//! transmitter of each link (`net/`), and arrival at the far end.

use super::capture::{flow_wire, Taps};
use super::report::DropCounts;
use super::{Endpoints, Flow, Simulation};
use crate::capture::Tap;
use crate::engine::{Event, EventQueue};
use crate::error::{Error, Result};
use crate::ids::{FlowKind, LinkId, NodeId};
use crate::net::{DropReason, PlacedAqm, PortSink};
use crate::packet::{Packet, PacketKind};
use crate::probe::DropLog;
use crate::time::SimTime;

/// What the ports of link `link` reach of the simulation while they handle
/// a packet: the drop log, the flows' senders, the event queue.
struct Sink<'a> {
    now: SimTime,
    link: LinkId,
    drops: &'a mut DropLog,
    losses: &'a mut Losses,
    flows: &'a mut [Flow],
    queue: &'a mut EventQueue,
    taps: &'a mut Taps,
    outside: &'a mut super::Outside,
}

/// What the simulation keeps of drops and marks besides the drop log: the
/// total for the conservation check and, with `log_drops = false` or once
/// the log has its most rows, the summary's counts in place of the log.
/// (One borrow for the port's sink, which is built for every packet.)
#[derive(Debug)]
pub(super) struct Losses {
    pub(super) dropped_packets: u64,
    /// Drops and marks after the warm-up, counted without the log.
    pub(super) unlogged: Option<DropCounts>,
    /// Rows the drop log may still take.
    room: u64,
    /// When the log took its last row, if it reached its limit.
    pub(super) log_full_at: Option<SimTime>,
    warmup: SimTime,
    bottleneck: LinkId,
}

impl Losses {
    /// `rows`: the most rows of the drop log (0 for none).
    pub(super) fn new(rows: u64, warmup: SimTime, bottleneck: LinkId) -> Losses {
        Losses {
            dropped_packets: 0,
            unlogged: (rows == 0).then(Default::default),
            room: rows,
            log_full_at: None,
            warmup,
            bottleneck,
        }
    }

    /// The log has its most rows: count what it holds, and count from
    /// here on in its place.
    #[cold]
    #[inline(never)]
    fn close_log(&mut self, log: &DropLog, now: SimTime) {
        self.unlogged = Some(DropCounts::of_log(log, self.warmup, self.bottleneck));
        self.log_full_at = Some(now);
    }
}

impl Sink<'_> {
    /// A drop, for the sequence records and the packet captures.
    #[cold]
    #[inline(never)]
    fn tap_drop(&mut self, pkt: &Packet, reason: DropReason) {
        if self.taps.seq.on() {
            self.taps.seq.dropped(self.now, pkt);
        }
        // Erased packets were captured as the transmitter sent them; a
        // packet refused on arrival is written with its arrival.
        if reason != DropReason::Erasure && self.taps.captures.arrivals(self.link) {
            self.taps.captures.refused(self.now, pkt.uid, reason.name());
        }
    }
}

impl PortSink for Sink<'_> {
    fn log(&mut self, pkt: &Packet, index: u64, reason: DropReason) {
        if !reason.is_mark() {
            self.losses.dropped_packets += 1;
            if pkt.kind == PacketKind::Outside {
                self.outside.dropped(pkt);
            }
            if self.taps.seq.on() || self.taps.captures.any() {
                self.tap_drop(pkt, reason);
            }
        }
        let losses = &mut *self.losses;
        if let Some(c) = &mut losses.unlogged {
            if self.now >= losses.warmup {
                c.count(reason, self.link == losses.bottleneck);
            }
            return;
        }
        let d = &mut *self.drops;
        d.time_ns.push(self.now.ns());
        d.link.push(self.link.0);
        d.flow.push(pkt.flow.0);
        d.index.push(index);
        d.reason.push(reason as u8);
        d.data.push(match pkt.kind {
            PacketKind::TcpData | PacketKind::Udp | PacketKind::AtspData => true,
            PacketKind::Outside => pkt.len > 0,
            _ => false,
        });
        d.size.push(pkt.size);
        losses.room -= 1;
        if losses.room == 0 {
            losses.close_log(d, self.now);
        }
    }

    fn held_in_host(&mut self, pkt: &Packet) {
        // Its sender's retransmission timer must not count the wait.
        if matches!(pkt.kind, PacketKind::TcpData | PacketKind::Syn) {
            if let Endpoints::Tcp { sender, .. } = &mut self.flows[pkt.flow.idx()].ends {
                sender.held_in_host += 1;
            }
        }
    }

    fn left_host(&mut self, pkt: &Packet, now: SimTime) {
        if matches!(pkt.kind, PacketKind::TcpData | PacketKind::Syn) {
            if let Endpoints::Tcp { sender, .. } = &mut self.flows[pkt.flow.idx()].ends {
                sender.on_left_host(pkt.seq, now);
            }
            // The deadline only moves later: the pending timer event finds
            // it not due and schedules the new one.
        }
    }

    fn flow_kind(&self, pkt: &Packet) -> FlowKind {
        let origin = self.flows[pkt.flow.idx()].origin;
        self.flows[origin.idx()].kind
    }

    /// Ports and links schedule network events only (transmissions,
    /// arrivals, a schedule's changes), never a timer.
    #[inline]
    fn schedule(&mut self, t: SimTime, ev: Event) {
        self.queue.schedule_network(t, ev);
    }

    #[cold]
    #[inline(never)]
    fn arriving(&mut self, pkt: &Packet) {
        let wire = flow_wire(self.flows, pkt.flow);
        let real = (pkt.kind == PacketKind::Outside).then(|| self.outside.bytes(pkt));
        self.taps
            .captures
            .arriving(self.link, self.now, pkt, wire, real);
    }

    #[cold]
    #[inline(never)]
    fn link_changed(&mut self, state: &str) {
        self.taps.captures.link_changed(self.link, self.now, state);
    }

    #[cold]
    #[inline(never)]
    fn transmitted(&mut self, pkt: &Packet, erased: bool) {
        let tap = if erased { Tap::Erased } else { Tap::Sent };
        let wire = flow_wire(self.flows, pkt.flow);
        let real = (pkt.kind == PacketKind::Outside).then(|| self.outside.bytes(pkt));
        self.taps
            .captures
            .record(self.link, self.now, pkt, &wire, tap, real);
    }
}

impl Simulation {
    /// Link `l`, every placed AQM, and the sink its port reports to, at the
    /// current time: disjoint borrows of the simulation.
    fn port_parts(&mut self, l: LinkId) -> (&mut crate::net::Link, &mut [PlacedAqm], Sink<'_>) {
        let Simulation {
            now,
            links,
            aqms,
            drops,
            losses,
            flows,
            queue,
            taps,
            outside,
            ..
        } = self;
        let sink = Sink {
            now: *now,
            link: l,
            drops,
            losses,
            flows,
            queue,
            taps,
            outside,
        };
        (&mut links[l.idx()], aqms, sink)
    }

    /// Send `pkt`, now at node `at`, on its next hop: `hop` if the caller
    /// knows it (what the routing table holds), else the table's. The
    /// packet is the caller's (the port may mark it); it is copied only
    /// where it is kept: on the delay line, in the buffer, or held in its
    /// host.
    pub(super) fn forward(
        &mut self,
        at: NodeId,
        pkt: &mut Packet,
        hop: Option<LinkId>,
    ) -> Result<()> {
        let Some(l) = hop.or_else(|| self.routes.next_hop(at, pkt.dst)) else {
            return Err(Error::Simulation(format!(
                "no route from {} to {}",
                self.node_names[at.idx()],
                self.node_names[pkt.dst.idx()]
            )));
        };
        self.enqueue(l, pkt);
        Ok(())
    }

    fn enqueue(&mut self, l: LinkId, pkt: &mut Packet) {
        let now = self.now;
        let monitor = self.links[l.idx()].port.aqm().map(|a| {
            let m = self.aqms[a.idx()].monitor;
            self.links[m.idx()].view(now)
        });
        let (link, aqms, mut sink) = self.port_parts(l);
        link.enqueue(l, now, pkt, aqms, monitor, &mut sink);
    }

    pub(super) fn tx_done(&mut self, l: LinkId) {
        let now = self.now;
        let (link, aqms, mut sink) = self.port_parts(l);
        link.tx_done(l, now, aqms, &mut sink);
    }

    /// The packet at the head of link `l`'s delay line reaches the far end.
    pub(super) fn arrive(&mut self, l: LinkId) -> Result<()> {
        let link = &mut self.links[l.idx()];
        let mut pkt = link.line.take_front();
        let to = link.to;
        if let Some(&(t, _)) = link.line.front() {
            self.queue.schedule_network(t, Event::Arrive(l));
        }
        if pkt.dst == to {
            self.deliver(pkt)
        } else {
            self.forward(to, &mut pkt, None)
        }
    }

    /// The packets due on link `l`'s line (one that plays a schedule)
    /// reach the far end, and the next one is waited for. (Out of line, so
    /// that the fixed links' dispatch inlines as before.)
    #[cold]
    #[inline(never)]
    pub(super) fn arrive_on_schedule(&mut self, l: LinkId) -> Result<()> {
        let now = self.now;
        if !self.links[l.idx()].claim(now) {
            return Ok(());
        }
        loop {
            let link = &mut self.links[l.idx()];
            let Some(mut pkt) = link.take_due(now) else {
                break;
            };
            let to = link.to;
            if pkt.dst == to {
                self.deliver(pkt)?;
            } else {
                self.forward(to, &mut pkt, None)?;
            }
        }
        if let Some(t) = self.links[l.idx()].rearm() {
            self.queue.schedule_network(t, Event::ArriveOnSchedule(l));
        }
        Ok(())
    }

    /// The run starts on link `l`, which plays a schedule (down, if its
    /// schedule starts so).
    pub(super) fn link_begin(&mut self, l: LinkId) {
        let (link, _aqms, mut sink) = self.port_parts(l);
        link.begin(&mut sink);
    }

    /// The next piece of link `l`'s schedule starts now.
    #[cold]
    #[inline(never)]
    pub(super) fn link_change(&mut self, l: LinkId) {
        let now = self.now;
        let end = self.end;
        let (link, aqms, mut sink) = self.port_parts(l);
        let before = link.rate();
        if let Some(next) = link.apply_change(l, now, &mut sink) {
            if next <= end {
                sink.schedule(next, Event::LinkChange(l));
            }
        }
        let rate = link.rate();
        if rate != before {
            for a in aqms.iter_mut().filter(|a| a.monitor == l) {
                a.aqm.set_link_rate(rate.bps());
            }
        }
        self.record_link_state(l);
    }

    /// Route change `i` takes effect: its router forwards on the new path,
    /// and the flows that start or end at that router look up their first
    /// hop again. Packets already queued at or on the old path go on.
    #[cold]
    #[inline(never)]
    pub(super) fn route_change(&mut self, i: usize) {
        let c = &self.route_changes[i];
        self.routes.reroute(c.node, &c.paths, c.via);
        let node = c.node;
        for flow in &mut self.flows {
            if flow.src == node || flow.dst == node {
                flow.hops = [
                    self.routes.next_hop(flow.src, flow.dst),
                    self.routes.next_hop(flow.dst, flow.src),
                ];
            }
        }
    }
}
