//! The glue between transport endpoints and the network: timers, the
//! packets an endpoint emits, deliveries to receivers and senders, and the
//! PEP relays that join split connections.

use super::{Endpoints, Simulation};
use crate::engine::Event;
use crate::error::{Error, Result};
use crate::ids::{FlowId, RelayId};
use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;
use crate::transport::Emit;

/// Which end of a flow acted and may have new timers, window cuts or
/// packets: the other end's state is as it was after its last action, when
/// its timer was re-armed, so looking at it again would change nothing
/// (and would cost a cache miss on its box for every packet).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Acted {
    Sender,
    Receiver,
    Both,
}

pub(super) fn emit<'a>(now: SimTime, out: &'a mut Vec<Packet>, next_uid: &'a mut u64) -> Emit<'a> {
    Emit { now, out, next_uid }
}

impl Simulation {
    pub(super) fn sender_timer(&mut self, f: FlowId) -> Result<()> {
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        if flow.sender_timer == Some(now) {
            flow.sender_timer = None;
        }
        match &mut flow.ends {
            Endpoints::Tcp { sender, .. } => {
                sender.on_timer(&mut emit(now, &mut self.out, &mut self.next_uid));
            }
            Endpoints::Atsp { sender, .. } => {
                sender.on_timer(&mut emit(now, &mut self.out, &mut self.next_uid));
            }
            Endpoints::Udp { .. } | Endpoints::Outside(_) => {}
        }
        self.after_acted(f, Acted::Sender)
    }

    pub(super) fn ack_timer(&mut self, f: FlowId) -> Result<()> {
        let now = self.now;
        let flow = &mut self.flows[f.idx()];
        if flow.ack_timer == Some(now) {
            flow.ack_timer = None;
        }
        if let Endpoints::Tcp { receiver, .. } = &mut flow.ends {
            receiver.on_timer(&mut emit(now, &mut self.out, &mut self.next_uid));
        }
        self.after_acted(f, Acted::Receiver)
    }

    /// Log the window cuts flow `f`'s sender just made, re-arm its timers
    /// and route the packets it emitted.
    pub(super) fn after_endpoint(&mut self, f: FlowId) -> Result<()> {
        self.after_acted(f, Acted::Both)
    }

    /// [`after_endpoint`](Self::after_endpoint) when only one end of `f`
    /// (`acted`) may have changed.
    pub(super) fn after_acted(&mut self, f: FlowId, acted: Acted) -> Result<()> {
        let flow = &mut self.flows[f.idx()];
        if let Endpoints::Tcp { sender, receiver } = &mut flow.ends {
            if acted != Acted::Receiver {
                if !sender.cuts.is_empty() {
                    let log = &mut self.congestion;
                    for c in sender.cuts.drain(..) {
                        log.time_ns.push(c.time.ns());
                        log.flow.push(f.0);
                        log.origin.push(flow.origin.0);
                        log.kind.push(c.kind as u8);
                        log.cwnd_before.push(c.cwnd_before);
                        log.cwnd_after.push(c.cwnd_after);
                        log.ssthresh.push(c.ssthresh);
                        log.srtt_s.push(c.srtt.map_or(f64::NAN, |t| t.secs_f64()));
                    }
                }
                if let Some(t) = sender.next_wakeup() {
                    if flow.sender_timer.is_none_or(|s| t < s) {
                        flow.sender_timer = Some(t);
                        self.queue.schedule(t.max(self.now), Event::SenderTimer(f));
                    }
                }
            }
            if acted != Acted::Sender {
                if let Some(t) = receiver.next_wakeup() {
                    if flow.ack_timer.is_none_or(|s| t < s) {
                        flow.ack_timer = Some(t);
                        self.queue.schedule(t.max(self.now), Event::AckTimer(f));
                    }
                }
            }
        }
        if let Endpoints::Atsp { sender, .. } = &flow.ends {
            if let Some(t) = sender.next_wakeup() {
                let t = t.max(self.now);
                if flow.sender_timer.is_none_or(|s| t < s) {
                    flow.sender_timer = Some(t);
                    self.queue.schedule(t, Event::SenderTimer(f));
                }
            }
        }
        if self.out.is_empty() {
            return Ok(());
        }
        let mut out = std::mem::take(&mut self.out);
        if self.taps.seq.on() {
            self.taps.seq.sent(self.now, &out);
        }
        let mut result = Ok(());
        // Copied out of a reference, not moved out of `drain`: a packet
        // moved out of the `Option` an iterator yields is copied around
        // the byte that tells `None` apart, and the hop's next copy of it
        // stalls (see `Ring::take_front`).
        for pkt in &out {
            let mut pkt = *pkt;
            let hop = self.flows[pkt.flow.idx()].first_hop(pkt.src, pkt.dst);
            if let Err(e) = self.forward(pkt.src, &mut pkt, hop) {
                result = Err(e);
            }
        }
        out.clear();
        self.out = out;
        result
    }

    /// `pkt` has reached its destination host: hand it to its endpoint.
    /// (Always inlined: the arrivals of a link that plays a schedule call
    /// it too, out of line, and the fixed links' arrival must keep it
    /// inline.)
    #[inline(always)]
    pub(super) fn deliver(&mut self, pkt: Packet) -> Result<()> {
        let now = self.now;
        self.delivered_packets += 1;
        let f = pkt.flow;
        let flow = &mut self.flows[f.idx()];
        let mut em = emit(now, &mut self.out, &mut self.next_uid);
        let mut acted = Acted::Both;
        match (&mut flow.ends, pkt.kind) {
            (Endpoints::Tcp { receiver, .. }, PacketKind::Syn | PacketKind::TcpData) => {
                acted = Acted::Receiver;
                let d = receiver.on_segment(&pkt, &mut em);
                let (origin, last_hop, relay) = (flow.origin, flow.last_hop, flow.relay_in);
                if last_hop {
                    let o = &mut self.flows[origin.idx()];
                    o.delivered += d.bytes;
                    if d.closed && o.completed.is_none() {
                        o.completed = Some(now);
                        if let Some(owner) = o.owner {
                            self.transfer_done(owner);
                        }
                    }
                }
                if let Some(r) = relay {
                    if d.closed {
                        self.relays[r.idx()].upstream_closed();
                    }
                    self.pump(r);
                    self.after_endpoint(self.relays[r.idx()].down)?;
                }
            }
            (Endpoints::Tcp { sender, .. }, PacketKind::SynAck | PacketKind::TcpAck) => {
                acted = Acted::Sender;
                if self.taps.seq.on() {
                    self.taps.seq.acked(now, &pkt);
                }
                sender.on_ack(&pkt, &mut em);
                if let Some(r) = flow.relay_out {
                    self.pump(r);
                    self.after_endpoint(self.relays[r.idx()].up)?;
                }
            }
            (Endpoints::Atsp { receiver, .. }, PacketKind::AtspData) => {
                flow.delivered += receiver.on_data(&pkt, &mut em).bytes;
            }
            (Endpoints::Atsp { sender, .. }, PacketKind::AtspSack) => {
                sender.on_sack(&pkt, now);
            }
            (Endpoints::Outside(_), PacketKind::Outside) => {
                self.deliver_outside(pkt);
                return Ok(());
            }
            (Endpoints::Udp { sink }, PacketKind::Udp) => {
                sink.packets += 1;
                sink.bytes += pkt.len as u64;
                flow.delivered += pkt.len as u64;
            }
            (_, PacketKind::Lost) => {
                // The place an outage left on a link's line: nothing came.
                self.delivered_packets -= 1;
                return Ok(());
            }
            _ => {
                return Err(Error::Simulation(format!(
                    "flow {} received a {:?} packet it cannot handle",
                    f.0, pkt.kind
                )))
            }
        }
        self.after_acted(f, acted)
    }

    /// Let relay `r` move what it can from its upstream receiver to its
    /// downstream sender.
    fn pump(&mut self, r: RelayId) {
        let relay = &mut self.relays[r.idx()];
        let (ui, di) = (relay.up.idx(), relay.down.idx());
        let (up, down) = if ui < di {
            let (x, y) = self.flows.split_at_mut(di);
            (&mut x[ui], &mut y[0])
        } else {
            let (x, y) = self.flows.split_at_mut(ui);
            (&mut y[0], &mut x[di])
        };
        let (Endpoints::Tcp { receiver: rcv, .. }, Endpoints::Tcp { sender: snd, .. }) =
            (&mut up.ends, &mut down.ends)
        else {
            return;
        };
        relay.pump(
            rcv,
            snd,
            &mut emit(self.now, &mut self.out, &mut self.next_uid),
        );
    }
}
