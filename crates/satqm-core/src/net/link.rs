//! A unidirectional link: an output [`Port`], a transmitter that serializes
//! one packet at a time at the link rate, then a delay line modelling
//! propagation. The delay line is FIFO even when each packet's delay is
//! drawn at random, so the event queue holds at most one arrival per link.

use std::collections::VecDeque;

use super::framing::Framing;
use super::port::{Admitted, PlacedAqm, Port, PortSink};
use crate::aqm::QueueView;
use crate::engine::Event;
use crate::ids::{LinkId, NodeId};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::{Rate, SimTime};

/// How a link delays packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DelayModel {
    Fixed(SimTime),
    /// Each packet's delay is drawn uniformly in `[lo, hi]`; packets still
    /// leave in FIFO order (a packet never overtakes the one before it), as
    /// in the satellite delay simulator of the AVQRED emulation.
    Uniform(SimTime, SimTime),
}

impl DelayModel {
    /// The shortest delay a packet can get.
    pub fn min(&self) -> SimTime {
        match *self {
            DelayModel::Fixed(d) => d,
            DelayModel::Uniform(lo, _) => lo,
        }
    }

    /// The mean delay, in seconds.
    pub fn mean_secs(&self) -> f64 {
        match *self {
            DelayModel::Fixed(d) => d.secs_f64(),
            DelayModel::Uniform(lo, hi) => 0.5 * (lo.secs_f64() + hi.secs_f64()),
        }
    }
}

/// A unidirectional link with its output port and delay line.
#[derive(Debug)]
pub struct Link {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate: Rate,
    pub delay: DelayModel,
    /// Packet erasure probability.
    pub loss: f64,
    pub port: Port,
    /// Packets being serialized or propagating, with their arrival times at
    /// the far end (non-decreasing).
    pub line: VecDeque<(SimTime, Packet)>,
    /// Arrival time of the last packet put on the line (keeps FIFO order).
    pub last_arrival: SimTime,
    /// Draws for per-packet delays and erasures.
    pub rng: Rng,
    /// Whether the periodic sampler records this link.
    pub monitored: bool,
    /// Whether a packet capture records this link: the transmitter tells
    /// the sink of every packet it sends.
    pub captured: bool,
    /// Encapsulation and frame overhead counted at the link rate.
    pub framing: Framing,
}

impl Link {
    /// Arrival time at the far end of a packet whose serialization ends at
    /// `now`.
    #[inline]
    pub fn arrival_time(&mut self, now: SimTime) -> SimTime {
        let d = match self.delay {
            DelayModel::Fixed(d) => d,
            DelayModel::Uniform(lo, hi) => SimTime(self.rng.uniform_u64(lo.ns(), hi.ns())),
        };
        let t = (now + d).max(self.last_arrival);
        self.last_arrival = t;
        t
    }

    /// Packets inside the link: waiting, held back in their hosts, or being
    /// serialized or propagating (both on the delay line).
    pub fn in_flight(&self) -> usize {
        self.port.len() + self.port.held_len() + self.line.len()
    }

    /// What an AQM monitoring this link's port sees at `now`.
    #[inline]
    pub fn view(&self, now: SimTime) -> QueueView {
        self.port.view(now, self.rate)
    }

    /// `pkt` reaches this link (`l`) at `now`: through the port, and on to
    /// the transmitter if it is free. `monitor`: what the port's AQM sees of
    /// the queue it monitors.
    #[inline]
    pub fn enqueue(
        &mut self,
        l: LinkId,
        now: SimTime,
        pkt: Packet,
        aqms: &mut [PlacedAqm],
        monitor: Option<QueueView>,
        sink: &mut impl PortSink,
    ) {
        let local = pkt.src == self.from;
        let admitted = self
            .port
            .admit(l, now, self.rate, pkt, local, aqms, monitor, sink);
        if let Admitted::Transmit(pkt, index) = admitted {
            self.transmit(l, now, pkt, index, sink);
        }
    }

    /// The transmitter of this link (`l`) is free: start the next packet.
    pub fn tx_done(
        &mut self,
        l: LinkId,
        now: SimTime,
        aqms: &mut [PlacedAqm],
        sink: &mut impl PortSink,
    ) {
        if let Some((pkt, index)) = self.port.next_to_send(now, self.rate, aqms, sink) {
            self.transmit(l, now, pkt, index, sink);
            self.port.wake_if_waiting(l, sink);
        }
        self.port.rearm(l, now, sink);
    }

    /// Start serializing `pkt` now; it goes on the delay line at once with
    /// its arrival time (serialization end + propagation delay).
    #[inline]
    fn transmit(
        &mut self,
        l: LinkId,
        now: SimTime,
        pkt: Packet,
        index: u64,
        sink: &mut impl PortSink,
    ) {
        let wire = if self.framing.is_none() {
            pkt.size
        } else {
            // A transmitter that was idle has closed its frame.
            let fresh = now > self.port.busy_until();
            self.framing.wire_bytes(pkt.size, fresh)
        };
        let end = self.port.start_tx(now, self.rate.tx_time(wire), pkt.size);
        let erased = self.loss > 0.0 && self.rng.chance(self.loss);
        if self.captured {
            sink.transmitted(&pkt, erased);
        }
        if erased {
            self.port.erased(&pkt, index, sink);
            return;
        }
        let t = self.arrival_time(end);
        self.line.push_back((t, pkt));
        if self.line.len() == 1 {
            sink.schedule(t, Event::Arrive(l));
        }
    }
}
