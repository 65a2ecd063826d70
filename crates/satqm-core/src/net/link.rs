//! A unidirectional link: an output [`Port`], a transmitter that serializes
//! one packet at a time at the link rate, then a delay line modelling
//! propagation. The delay line is FIFO even when each packet's delay is
//! drawn at random, so the event queue holds at most one arrival per link.

use super::delay_line::DelayLine;
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

    /// The longest delay a packet can get.
    pub fn max(&self) -> SimTime {
        match *self {
            DelayModel::Fixed(d) => d,
            DelayModel::Uniform(_, hi) => hi,
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
///
/// Laid out for the cache (`repr(C)`, aligned to a 64-byte line): with
/// thousands of flows every hop is a cache miss, so the fields a packet
/// touches come first, in the order it touches them. Lines 1 and 2: the
/// delay line (the packet that found it empty kept inline) and the two
/// ends: everything an arrival on a quiet link reads. Line 3: rate, delay,
/// the last serialization time, the flags, the name and the box of what
/// only random, lossy or framed links need. Lines 4 and 5: the port
/// (`port.rs`: line 4 when the port is idle, line 5 when packets wait).
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    /// Packets being serialized or propagating, with their arrival times at
    /// the far end (non-decreasing).
    pub line: DelayLine,
    pub to: NodeId,
    pub from: NodeId,
    rate: Rate,
    /// The propagation delay (the least one with random delays).
    delay: SimTime,
    /// The serialization time of the last packet sent at the link's rate,
    /// and its size: most links carry packets of one size (data one way,
    /// ACKs the other), so this spares a division per packet.
    last_tx: SimTime,
    last_size: u32,
    /// Whether a packet capture records this link's departures: the
    /// transmitter tells the sink of every packet it sends.
    pub tap_out: bool,
    /// Whether a packet capture records this link's arrivals: the sink
    /// hears of every packet that reaches the port.
    pub tap_in: bool,
    /// Random delays, erasures or framing: the transmitter needs `extra`.
    special: bool,
    /// Whether the periodic sampler records this link.
    pub monitored: bool,
    pub name: String,
    extra: Box<LinkExtra>,
    pub port: Port,
}

/// What only a link with random delays, erasures or framing reads.
#[derive(Debug)]
struct LinkExtra {
    delay: DelayModel,
    /// Packet erasure probability.
    loss: f64,
    /// Arrival time of the last packet put on the line (keeps FIFO order
    /// under random delays; with a fixed delay the order holds by itself,
    /// since each serialization ends after the one before).
    last_arrival: SimTime,
    /// Draws for per-packet delays and erasures.
    rng: Rng,
    /// Encapsulation and frame overhead counted at the link rate.
    framing: Framing,
}

impl LinkExtra {
    fn special(&self) -> bool {
        matches!(self.delay, DelayModel::Uniform(..)) || self.loss > 0.0 || !self.framing.is_none()
    }
}

impl Link {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        (from, to): (NodeId, NodeId),
        rate: Rate,
        delay: DelayModel,
        loss: f64,
        port: Port,
        rng: Rng,
        monitored: bool,
    ) -> Link {
        let extra = Box::new(LinkExtra {
            delay,
            loss,
            last_arrival: SimTime::ZERO,
            rng,
            framing: Framing::default(),
        });
        Link {
            line: DelayLine::default(),
            rate,
            delay: delay.min(),
            last_tx: rate.tx_time(0),
            last_size: 0,
            from,
            to,
            tap_out: false,
            tap_in: false,
            special: extra.special(),
            monitored,
            port,
            name,
            extra,
        }
    }

    /// The longest delay a packet can get.
    pub fn max_delay(&self) -> SimTime {
        self.extra.delay.max()
    }

    /// The link's rate.
    #[inline]
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Count `framing` at this link's rate (before any packet is sent).
    pub fn set_framing(&mut self, framing: Framing) {
        self.extra.framing = framing;
        self.special = self.extra.special();
    }

    /// Arrival time at the far end of a packet whose serialization ends at
    /// `now`, on a link with random delays, erasures or framing.
    #[inline]
    fn special_arrival_time(&mut self, now: SimTime) -> SimTime {
        let x = &mut *self.extra;
        let d = match x.delay {
            DelayModel::Fixed(d) => d,
            DelayModel::Uniform(lo, hi) => SimTime(x.rng.uniform_u64(lo.ns(), hi.ns())),
        };
        let t = (now + d).max(x.last_arrival);
        x.last_arrival = t;
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
        pkt: &mut Packet,
        aqms: &mut [PlacedAqm],
        monitor: Option<QueueView>,
        sink: &mut impl PortSink,
    ) {
        // The sink hears of the arrival before the port judges it, on the
        // one path: a second path with its own call of `admit` would leave
        // `admit` out of line on every hop.
        if self.tap_in {
            sink.arriving(pkt);
        }
        let local = pkt.src == self.from;
        let admitted = self
            .port
            .admit(l, now, self.rate, pkt, local, aqms, monitor, sink);
        if let Admitted::Transmit(index) = admitted {
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
        let mut pkt = Packet::BLANK;
        if let Some(index) = self.port.next_to_send(now, self.rate, aqms, sink, &mut pkt) {
            self.transmit(l, now, &pkt, index, sink);
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
        pkt: &Packet,
        index: u64,
        sink: &mut impl PortSink,
    ) {
        let t = if self.special {
            match self.transmit_special(now, pkt, index, sink) {
                Some(t) => t,
                None => return,
            }
        } else {
            if pkt.size != self.last_size {
                self.last_size = pkt.size;
                self.last_tx = self.rate.tx_time(pkt.size);
            }
            let end = self.port.start_tx(now, self.last_tx, pkt.size);
            if self.tap_out {
                sink.transmitted(pkt, false);
            }
            let t = end + self.delay;
            debug_assert!(self.line.back().is_none_or(|&(b, _)| b <= t));
            t
        };
        self.line.push_back((t, *pkt));
        if self.line.len() == 1 {
            sink.schedule(t, Event::Arrive(l));
        }
    }

    /// [`transmit`](Self::transmit) on a link with random delays, erasures
    /// or framing: the arrival time, or `None` if the link erased the
    /// packet.
    #[inline(never)]
    fn transmit_special(
        &mut self,
        now: SimTime,
        pkt: &Packet,
        index: u64,
        sink: &mut impl PortSink,
    ) -> Option<SimTime> {
        let x = &mut *self.extra;
        let wire = if x.framing.is_none() {
            pkt.size
        } else {
            // A transmitter that was idle has closed its frame.
            let fresh = now > self.port.busy_until();
            x.framing.wire_bytes(pkt.size, fresh)
        };
        let end = self.port.start_tx(now, self.rate.tx_time(wire), pkt.size);
        let erased = x.loss > 0.0 && x.rng.chance(x.loss);
        if self.tap_out {
            sink.transmitted(pkt, erased);
        }
        if erased {
            self.port.erased(pkt, index, sink);
            return None;
        }
        Some(self.special_arrival_time(end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// The layout the hop relies on: five cache lines, what an arrival
    /// reads in the first two, the port's per-packet fields in the last two.
    #[test]
    fn a_link_is_five_cache_lines_with_the_arrival_in_front() {
        assert_eq!(align_of::<Link>(), 64);
        assert_eq!(size_of::<Link>(), 320);
        assert!(offset_of!(Link, line) + size_of::<DelayLine>() <= 128);
        assert!(offset_of!(Link, to) + size_of::<NodeId>() <= 128);
        assert!(offset_of!(Link, monitored) < 192);
        assert_eq!(offset_of!(Link, port), 192);
        assert_eq!(size_of::<Port>(), 128);
    }
}
