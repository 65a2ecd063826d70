//! A unidirectional link: an output [`Port`], a transmitter that serializes
//! one packet at a time at the link rate, then a delay line modelling
//! propagation. The delay line is FIFO even when each packet's delay is
//! drawn at random, so the event queue holds at most one arrival per link.

use super::delay_line::DelayLine;
use super::framing::Framing;
use super::port::{Admitted, PlacedAqm, Port, PortSink};
use super::schedule::{InFlight, Order, Queued, Schedule};
use super::DropReason;
use crate::aqm::QueueView;
use crate::engine::Event;
use crate::ids::{LinkId, NodeId};
use crate::packet::{Packet, PacketKind};
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
    /// Random delays, erasures, framing, a schedule or a device queue: the
    /// transmitter takes its slower path.
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
    /// How the link changes over time, if it does: the packets on its
    /// line then arrive by `Event::ArriveOnSchedule`.
    schedule: Option<Box<Scheduled>>,
}

/// What a link playing a schedule keeps besides the schedule.
#[derive(Debug)]
struct Scheduled {
    schedule: Schedule,
    /// The time of the `ArriveOnSchedule` event that will take the line's
    /// first packet. Others may be pending, left behind when an overtaking
    /// packet came first or an outage emptied the line; they find another
    /// time here and do nothing.
    live: Option<SimTime>,
    /// The uid and the port's arrival index of the packets sent lately, at
    /// least of every packet on the line (for the drop log of an outage).
    sent: std::collections::VecDeque<(u64, u64)>,
    /// While the link is down: the end of the serialization it stopped at
    /// (the port's transmitter is held until the link is up again).
    down_from: Option<SimTime>,
}

impl LinkExtra {
    fn special(&self) -> bool {
        matches!(self.delay, DelayModel::Uniform(..))
            || self.loss > 0.0
            || !self.framing.is_none()
            || self.schedule.is_some()
    }
}

/// How often a link whose rate is ramping refreshes the rate its AQMs and
/// its sampler see (its packets' serialization follows the ramp exactly).
pub const RAMP_REFRESH: SimTime = SimTime::from_ms(10);

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
            schedule: None,
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
            special: extra.special() || port.has_device(),
            monitored,
            port,
            name,
            extra,
        }
    }

    /// The longest delay a packet can get.
    pub fn max_delay(&self) -> SimTime {
        let jitter = self.extra.delay.max() - self.extra.delay.min();
        match &self.extra.schedule {
            Some(s) => s.schedule.max_delay() + jitter,
            None => self.extra.delay.max(),
        }
    }

    /// Play `schedule` (before any packet is sent): its first piece gives
    /// the rate, the delay (a random delay's least one) and the erasure.
    pub fn set_schedule(&mut self, schedule: Schedule) {
        let p = *schedule.current();
        self.rate = p.rate.0;
        self.last_tx = self.rate.tx_time(0);
        self.last_size = 0;
        let x = &mut *self.extra;
        x.schedule = Some(Box::new(Scheduled {
            schedule,
            live: None,
            sent: Default::default(),
            down_from: None,
        }));
        self.special = true;
    }

    /// The schedule the link plays, if any.
    pub fn schedule(&self) -> Option<&Schedule> {
        self.extra.schedule.as_ref().map(|s| &s.schedule)
    }

    /// The link's propagation delay for a packet whose serialization ends
    /// at `t` (the least one, with random delays).
    pub fn delay_at(&self, t: SimTime) -> SimTime {
        match &self.extra.schedule {
            Some(s) => s.schedule.delay_at(t),
            None => self.delay,
        }
    }

    /// Whether the link is up.
    pub fn is_up(&self) -> bool {
        self.extra
            .schedule
            .as_ref()
            .is_none_or(|s| s.down_from.is_none())
    }

    /// The link's rate.
    #[inline]
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Count `framing` at this link's rate (before any packet is sent).
    pub fn set_framing(&mut self, framing: Framing) {
        self.extra.framing = framing;
        self.special = self.extra.special() || self.port.has_device();
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
    /// serialized or propagating (both on the delay line; not the places
    /// an outage left there).
    pub fn in_flight(&self) -> usize {
        let lost = match self.extra.schedule {
            Some(_) => self
                .line
                .iter()
                .filter(|(_, p)| p.kind == PacketKind::Lost)
                .count(),
            None => 0,
        };
        self.port.len() + self.port.held_len() + self.line.len() - lost
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
        match admitted {
            Admitted::Transmit(index) => self.transmit(l, now, pkt, index, sink),
            // An arrival the transmitter could not take goes on to the
            // device queue if it has room.
            Admitted::Done if self.port.has_device() => {
                self.port.fill_device(now, self.rate, aqms, sink)
            }
            Admitted::Done => {}
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
        if self.special && now < self.port.busy_until() && self.held(l, sink) {
            return;
        }
        let mut pkt = Packet::BLANK;
        if let Some(index) = self.port.next_to_send(now, self.rate, aqms, sink, &mut pkt) {
            self.transmit(l, now, &pkt, index, sink);
            self.port.wake_if_waiting(l, sink);
        }
        self.port.rearm(l, now, sink);
    }

    /// A `TxDone` that fires while the transmitter is busy, on a link with
    /// random delays, erasures, framing or a schedule: on a link that plays
    /// a schedule it is a wake-up from before an outage (or one that
    /// outlasted a cut-short serialization), and the port wakes again when
    /// the transmitter is free (true); elsewhere it is a paced port's,
    /// which `next_to_send` handles (false).
    #[cold]
    #[inline(never)]
    fn held(&mut self, l: LinkId, sink: &mut impl PortSink) -> bool {
        if self.extra.schedule.is_none() {
            return false;
        }
        self.port.rewake(l, sink);
        true
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
            match self.transmit_special(l, now, pkt, index, sink) {
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

    /// [`transmit`](Self::transmit) on a link with random delays, erasures,
    /// framing, a schedule or a device queue: the arrival time, or `None`
    /// if the link erased the packet or put it on its line itself (a
    /// schedule).
    #[inline(never)]
    fn transmit_special(
        &mut self,
        l: LinkId,
        now: SimTime,
        pkt: &Packet,
        index: u64,
        sink: &mut impl PortSink,
    ) -> Option<SimTime> {
        if self.port.has_device() {
            // a transmission starts: the device has room and asks the buffer
            self.port.device_asks(now);
        }
        let x = &mut *self.extra;
        let wire = if x.framing.is_none() {
            pkt.size
        } else {
            // A transmitter that was idle has closed its frame.
            let fresh = now > self.port.busy_until();
            x.framing.wire_bytes(pkt.size, fresh)
        };
        let tx = match &mut x.schedule {
            Some(s) => match s.schedule.step_until(now) {
                // Within a step at the link's rate: the fixed links' sum.
                Some(limit) => {
                    if wire != self.last_size {
                        self.last_size = wire;
                        self.last_tx = self.rate.tx_time(wire);
                    }
                    if now + self.last_tx <= limit {
                        self.last_tx
                    } else {
                        s.schedule.serve(now, wire) - now
                    }
                }
                None => s.schedule.serve(now, wire) - now,
            },
            None => self.rate.tx_time(wire),
        };
        let end = self.port.start_tx(now, tx, pkt.size);
        let loss = match &x.schedule {
            Some(s) => s.schedule.loss_at(end),
            None => x.loss,
        };
        let erased = loss > 0.0 && x.rng.chance(loss);
        if self.tap_out {
            sink.transmitted(pkt, erased);
        }
        if erased {
            self.port.erased(pkt, index, sink);
            return None;
        }
        if let Some(s) = x.schedule.as_deref_mut() {
            // Keep the indices of what may be on the line, and a little more.
            if s.sent.len() > 2 * self.line.len() + 64 {
                let keep = self.line.len() + 32;
                s.sent.drain(..s.sent.len() - keep);
            }
            s.sent.push_back((pkt.uid, index));
            if s.schedule.order == Order::Reorder {
                self.put_on_schedule(l, end, pkt, sink);
                return None;
            }
            // In order: the line stays first in, first out, and its
            // arrivals are the fixed links' `Arrive` events.
            let jitter = match x.delay {
                DelayModel::Fixed(_) => SimTime::ZERO,
                DelayModel::Uniform(lo, hi) => SimTime(x.rng.uniform_u64(0, hi.ns() - lo.ns())),
            };
            let t = (end + s.schedule.delay_at(end) + jitter).max(x.last_arrival);
            x.last_arrival = t;
            return Some(t);
        }
        Some(self.special_arrival_time(end))
    }

    /// Put `pkt`, whose serialization ends at `end`, on the line of a link
    /// whose packets may overtake each other: with the delay of that
    /// instant (plus the random part of a random delay), in its place by
    /// time; and make sure an `ArriveOnSchedule` event comes at or before
    /// the line's first arrival.
    fn put_on_schedule(&mut self, l: LinkId, end: SimTime, pkt: &Packet, sink: &mut impl PortSink) {
        let x = &mut *self.extra;
        let s = x.schedule.as_deref_mut().expect("a scheduled link");
        let jitter = match x.delay {
            DelayModel::Fixed(_) => SimTime::ZERO,
            DelayModel::Uniform(lo, hi) => SimTime(x.rng.uniform_u64(0, hi.ns() - lo.ns())),
        };
        let t = end + s.schedule.delay_at(end) + jitter;
        if self.line.back().is_none_or(|&(b, _)| b <= t) {
            self.line.push_back((t, *pkt));
        } else {
            self.line.insert_by_time((t, *pkt));
        }
        let front = self.line.front().expect("just put").0;
        if s.live.is_none_or(|at| front < at) {
            s.live = Some(front);
            sink.schedule(front, Event::ArriveOnSchedule(l));
        }
    }

    /// An `ArriveOnSchedule` event of this link fires at `now`: whether it
    /// is the one that takes the line's first packet (else it was left
    /// behind, and does nothing).
    pub fn claim(&mut self, now: SimTime) -> bool {
        match self.extra.schedule.as_deref_mut() {
            Some(s) if s.live == Some(now) => {
                s.live = None;
                true
            }
            _ => false,
        }
    }

    /// The first packet on the line of a scheduled link, taken, if it is
    /// due at `now`.
    pub fn take_due(&mut self, now: SimTime) -> Option<Packet> {
        if self.line.front().is_none_or(|&(t, _)| t > now) {
            return None;
        }
        Some(self.line.take_front())
    }

    /// After the due packets of a scheduled link have left its line: the
    /// time an `ArriveOnSchedule` event must be scheduled at for the new
    /// first packet, unless one will take it already.
    pub fn rearm(&mut self) -> Option<SimTime> {
        let front = self.line.front()?.0;
        let s = self.extra.schedule.as_deref_mut()?;
        if s.live.is_none_or(|at| front < at) {
            s.live = Some(front);
            return Some(front);
        }
        None
    }

    /// The run starts: a link whose schedule starts down goes down now.
    pub fn begin(&mut self, sink: &mut impl PortSink) {
        let Some(s) = self.extra.schedule.as_deref() else {
            return;
        };
        if !s.schedule.current().up {
            let up_again = s.schedule.up_from(SimTime::ZERO);
            self.go_down(SimTime::ZERO, up_again, sink);
        }
    }

    /// The schedule's next piece starts at `now`: apply it. Returns when
    /// the link must be looked at again (the next piece's start, or sooner
    /// while its rate ramps).
    pub fn apply_change(
        &mut self,
        l: LinkId,
        now: SimTime,
        sink: &mut impl PortSink,
    ) -> Option<SimTime> {
        let s = self
            .extra
            .schedule
            .as_deref_mut()
            .expect("a scheduled link");
        let was_up = s.schedule.current().up;
        let p = *s.schedule.advance(now);
        self.rate = s.schedule.rate_at(now);
        // The serialization time kept for the last size was at the old rate.
        self.last_size = 0;
        self.last_tx = self.rate.tx_time(0);
        let next = s.schedule.next_start();
        let up_again = s.schedule.up_from(now);
        match (was_up, p.up) {
            (true, false) => self.go_down(now, up_again, sink),
            (false, true) => self.come_up(l, now, sink),
            _ => {}
        }
        if self.tap_out {
            let s = &self
                .extra
                .schedule
                .as_deref()
                .expect("a scheduled link")
                .schedule;
            let rate = match s.opportunities() {
                Some(_) => "served by its delivery opportunities".to_string(),
                None => format!("{} bit/s", self.rate.bps()),
            };
            sink.link_changed(&format!(
                "{rate}, delay {} ns, loss {}, {}",
                s.delay_at(now).ns(),
                s.loss_at(now),
                if p.up { "up" } else { "down" }
            ));
        }
        if p.rate.0 != p.rate.1 {
            return Some(next.map_or(now + RAMP_REFRESH, |n| n.min(now + RAMP_REFRESH)));
        }
        next
    }

    /// The link goes down at `now` until `up_again` (`None`: for the rest
    /// of the run): the transmitter stops; the queued packets wait or are
    /// dropped, and those on the line are dropped, delivered or delayed,
    /// as the schedule's outage policy says.
    fn go_down(&mut self, now: SimTime, up_again: Option<SimTime>, sink: &mut impl PortSink) {
        let x = &mut *self.extra;
        let s = x.schedule.as_deref_mut().expect("a scheduled link");
        let policy = s.schedule.outage;
        // The run ends before this.
        let until = up_again.unwrap_or(SimTime(u64::MAX / 4));
        let mut tx_end = self.port.busy_until();
        let in_flight = match (policy.in_flight, up_again) {
            (InFlight::Delay, None) => InFlight::Drop,
            (p, _) => p,
        };
        match in_flight {
            InFlight::Deliver => {}
            InFlight::Drop => {
                // The packet being serialized is cut off with the rest.
                tx_end = tx_end.min(now);
                let front = self.line.front().copied();
                while let Some((_, pkt)) = self.line.pop_front() {
                    if pkt.kind == PacketKind::Lost {
                        continue;
                    }
                    let index = s
                        .sent
                        .iter()
                        .rev()
                        .find(|&&(uid, _)| uid == pkt.uid)
                        .map_or(u64::MAX, |&(_, i)| i);
                    self.port.lost(&pkt, index, DropReason::Outage, sink);
                }
                x.last_arrival = now;
                if let (Order::InOrder, Some((t0, p))) = (s.schedule.order, front) {
                    // The `Arrive` event of the first packet is pending: its
                    // place stays, and later packets arrive after it.
                    self.line.push_back((t0, p.lost_at(self.to)));
                    x.last_arrival = t0;
                }
            }
            InFlight::Delay => {
                let shift = until - now;
                let front = self.line.front().copied();
                self.line.shift_times(shift);
                x.last_arrival = x.last_arrival.max(now) + shift;
                if let (Order::InOrder, Some((t0, p))) = (s.schedule.order, front) {
                    // The first packet's `Arrive` event is pending at its old
                    // time: a place there takes it.
                    self.line.push_front((t0, p.lost_at(self.to)));
                }
            }
        }
        s.down_from = Some(tx_end);
        self.port
            .go_down(now, until, tx_end, policy.queued == Queued::Drop, sink);
    }

    /// The link is up again at `now`: the transmitter starts on what waits.
    fn come_up(&mut self, l: LinkId, now: SimTime, sink: &mut impl PortSink) {
        let s = self
            .extra
            .schedule
            .as_deref_mut()
            .expect("a scheduled link");
        s.down_from = None;
        self.port.come_up(l, now, sink);
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
