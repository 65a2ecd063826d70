//! An output port: the buffer in front of a link's transmitter, and the one
//! place where a packet is admitted, held back, marked or dropped.
//!
//! Every packet that reaches a port goes through [`Port::admit`]; every
//! packet that leaves its buffer goes through [`Port::next_to_send`]. Both
//! ask the port's AQMs for a verdict and carry it out here, so that no
//! algorithm repeats the rule (as in Linux's RED qdisc, the algorithm
//! decides and the queue glue acts):
//!
//! - a `Mark` becomes an ECN mark (CE) if the AQM signals by marking and the
//!   packet is ECN-capable, a drop otherwise; a `Drop` is always a drop;
//! - the acting AQM is told what became of its verdict
//!   ([`Aqm::on_outcome`]);
//! - every drop and mark is counted here, by [`DropReason`], and reported to
//!   the simulation's log through a [`PortSink`].
//!
//! A port with backpressure holds the packets of its own node's senders
//! when the buffer is full instead of dropping them (a gateway's transmit
//! queue pushing back on its PEP): they wait in their host, its
//! [`Upstream`], which says which enters next and when; they enter as room
//! frees.
//!
//! The queue length counts the packets waiting, not the one being
//! serialized, as in ns-2's and ns-3's queues.
//!
//! A port may have a device queue below its buffer (`device_queue`, a
//! NIC's transmit ring, ns-3's `NetDevice` queue): a FIFO of a few packets
//! that the buffer feeds as soon as it has room, as Linux's qdisc layer
//! and ns-3's traffic-control layer feed theirs. A packet's sojourn, and a
//! discipline's choice of what goes next, are then made when it leaves
//! the buffer for the device, up to that many packets before its
//! serialization starts. The queue length counts both.
//!
//! (Above 600 lines: admission, departure and backpressure share the
//! port's state and must stay in one place; the held packets' order and
//! pace are the host's, `gateway/held.rs` for a PEP.)

use std::collections::VecDeque;

use super::sojourn::Sojourns;
use super::upstream::Upstream;
use super::DropReason;
use crate::aqm::{Aqm, Outcome, PacketMeta, Probe, QueueView, Verdict};
use crate::engine::Event;
use crate::ids::{AqmId, FlowKind, LinkId};
use crate::packet::{flags, Packet};
use crate::queue::BufferLimit;
use crate::queue::{Buffer, QdiscDrop, Queued};
use crate::rng::Rng;
use crate::time::{Rate, SimTime};

/// Carry out `verdict` on `pkt` by [`Outcome::of`], setting CE on a mark.
#[inline]
fn apply_verdict(verdict: Verdict, ecn: bool, pkt: &mut Packet) -> Outcome {
    let outcome = Outcome::of(verdict, ecn, pkt.ecn_capable());
    if let Outcome::Marked(_) = outcome {
        pkt.flags |= flags::CE;
    }
    outcome
}

/// An AQM with its placement: it acts at the port of link `at` and watches
/// the queue of link `monitor` (the AVQRED papers' Table 1 separates the
/// two).
#[derive(Debug)]
pub struct PlacedAqm {
    pub aqm: Aqm,
    pub at: LinkId,
    pub monitor: LinkId,
    /// Signals become ECN marks on ECN-capable packets (`mode = "mark"`).
    pub ecn: bool,
    /// One uniform draw per arrival at `at`.
    rng: Rng,
    /// Timer updates so far (the k-th is at k * interval).
    ticks: u64,
}

impl PlacedAqm {
    pub fn new(aqm: Aqm, at: LinkId, monitor: LinkId, ecn: bool, rng: Rng) -> PlacedAqm {
        PlacedAqm {
            aqm,
            at,
            monitor,
            ecn,
            rng,
            ticks: 0,
        }
    }

    /// Run the periodic update on the monitored queue's `view`; returns the
    /// time of the next one, if the algorithm has a period.
    pub fn on_timer(&mut self, now: SimTime, view: &QueueView) -> Option<SimTime> {
        self.aqm.on_timer(now, view);
        self.ticks += 1;
        let iv = self.aqm.timer_interval()?;
        Some(SimTime(iv.ns() * (self.ticks + 1)))
    }
}

/// What a port needs from the rest of the simulation while it handles a
/// packet. Implemented by the simulation over disjoint borrows of its own
/// state, so the port stays ignorant of flows and logs.
pub trait PortSink {
    /// A drop or an ECN mark of `pkt`, the `index`-th arrival at the port;
    /// the port has counted it already.
    fn log(&mut self, pkt: &Packet, index: u64, reason: DropReason);
    /// `pkt` of a local sender waits in its host (backpressure).
    fn held_in_host(&mut self, pkt: &Packet);
    /// A held packet entered the buffer at `now`: it has left its host.
    fn left_host(&mut self, pkt: &Packet, now: SimTime);
    /// The traffic kind of the flow `pkt` belongs to (RED+Tail classifies
    /// by it).
    fn flow_kind(&self, pkt: &Packet) -> FlowKind;
    fn schedule(&mut self, t: SimTime, ev: Event);
    /// The transmitter of a captured link started sending `pkt` (and the
    /// link erased it, if `erased`).
    fn transmitted(&mut self, _pkt: &Packet, _erased: bool) {}
    /// `pkt` reaches the port of a link whose arrivals are captured (called
    /// before the port judges it: if the port refuses it, [`log`](Self::log)
    /// follows).
    fn arriving(&mut self, _pkt: &Packet) {}
    /// The link, whose departures are captured, changed (its schedule):
    /// `state` says how it is now.
    fn link_changed(&mut self, _state: &str) {}
}

/// The counters a port updates for every packet. Totals run from the
/// start.
#[derive(Debug, Default, Clone, Copy)]
#[repr(C)]
struct Counters {
    /// Packets that arrived (drops included); a packet's index at the port
    /// is this count before it arrived.
    arrivals: u64,
    /// Serialization nanoseconds started since the last sample, including
    /// any part that runs past it (carried over by the sampler).
    busy_ns: u64,
    tx_bytes_total: u64,
    tx_packets_total: u64,
}

/// The parts of a port that a packet passing through an idle or busy
/// port does not touch: drop and mark counts, the sampler's marks, the
/// packets held back and the watching AQMs. Kept out of line so that the
/// port's per-packet fields fit in two cache lines.
#[derive(Debug, Default)]
struct PortCold {
    arrivals_at_sample: u64,
    tx_bytes_at_sample: u64,
    drops_total: u64,
    drops_since_sample: u64,
    marks_total: u64,
    marks_since_sample: u64,
    /// Packets from the link's own node waiting for room in their host,
    /// with their arrival index, in the order and pace it lets them in:
    /// a port with backpressure has one.
    upstream: Option<Box<dyn Upstream>>,
    /// AQMs that monitor this port and hear of its departures.
    watchers: Vec<AqmId>,
    /// When the pending `TxDone` fires, kept by a port with `backpressure`
    /// (a paced port may also have stale ones pending later: see
    /// [`Port::wake`]).
    wake_at: SimTime,
    /// The queueing delays of the packets leaving the buffer, on a port
    /// the sampler records (`Port::measured`).
    sojourns: Option<Box<Sojourns>>,
    /// While the link is down (a schedule's outage): what the port holds
    /// back to restore.
    down: Option<Down>,
    /// The device queue below the buffer, on a port that has one.
    device: Device,
}

/// The packets that left the buffer for the link's device and wait there
/// for the transmitter, in order, with their arrival indices.
#[derive(Debug, Default)]
struct Device {
    /// Packets it holds at most (0: no device queue).
    limit: usize,
    fifo: VecDeque<(Packet, u64)>,
    /// When it last asked the buffer for a packet: a transmission started,
    /// or the buffer handed it one and room was left.
    asked_at: SimTime,
}

/// A port whose link is down: its transmitter is held (`busy_until` is
/// the time the link is up again) and, if the outage drops what waits,
/// its buffer takes nothing.
#[derive(Debug, Clone, Copy)]
struct Down {
    /// The buffer's limit, restored when the link is up.
    limit: BufferLimit,
    /// Where the last serialization really ended.
    tx_end: SimTime,
    /// Arrivals are dropped (else they wait).
    drops: bool,
}

/// One sampling interval of a port, read by the sampler.
#[derive(Debug, Clone, Copy)]
pub struct PortSample {
    /// Serialization time inside the interval.
    pub busy_ns: u64,
    pub tx_bytes: u64,
    pub queue_packets: u32,
    pub queue_bytes: u64,
    pub drops: u64,
    pub arrivals: u64,
    pub marks: u64,
    /// Mean queueing delay of the packets that left the buffer in the
    /// interval, ns (NaN if none did, or the port is not measured).
    pub delay_mean_ns: f64,
}

/// An output port: the buffer in front of a link's transmitter.
///
/// The transmitter is modelled by `busy_until`, the time the packet being
/// serialized (if any) finishes. A packet that finds the port idle starts
/// at once and needs no event of its own; a `TxDone` event is scheduled
/// only while packets wait, so uncongested links cost one event per packet
/// (its arrival at the far end).
///
/// Laid out in the order a packet uses the fields (`repr(C)`): the first
/// cache line holds everything a packet finding the port idle reads and
/// writes (`busy_until`, the counters, the acting AQM, the flags and the
/// queue's length), the second what a packet that waits adds (the queue,
/// its bytes, the limit); the rest is behind `cold`.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Port {
    /// End of the current (or last) serialization.
    busy_until: SimTime,
    counters: Counters,
    /// The AQM acting at this port.
    aqm: Option<AqmId>,
    /// A `TxDone` event is pending.
    txdone_pending: bool,
    /// Hold locally sent packets when full instead of dropping them.
    backpressure: bool,
    /// Some AQM watches this port's departures (`cold.watchers`).
    watched: bool,
    /// Each departing packet's queueing delay is recorded
    /// (`cold.sojourns`).
    measured: bool,
    /// The buffer schedules and drops by itself (a queue discipline with
    /// its own scheduler): packets go in and out through it, not through
    /// the FIFO path.
    scheduler: bool,
    /// A device queue sits below the buffer (`cold.device`).
    device: bool,
    /// The waiting packets: one FIFO, or virtual queues sharing the buffer.
    /// (Its length comes first and ends the first cache line.)
    queue: Buffer,
    /// Bytes waiting (not counting the packet in service).
    bytes: u64,
    limit: BufferLimit,
    cold: Box<PortCold>,
}

/// What [`Port::admit`] did with a packet.
pub enum Admitted {
    /// The transmitter was idle: serialize the packet now (its arrival
    /// index given; the packet stays with the caller, which hands it on
    /// without another copy).
    Transmit(u64),
    /// Queued, held back, marked-and-queued or dropped: nothing to send.
    Done,
}

impl Port {
    /// A port whose buffer holds `limit`; with an `upstream`, it pushes
    /// back on its own node's senders (their packets wait there when the
    /// buffer is full) instead of dropping their packets.
    pub fn new(limit: BufferLimit, upstream: Option<Box<dyn Upstream>>) -> Port {
        let backpressure = upstream.is_some();
        let cold = Box::new(PortCold {
            upstream,
            ..PortCold::default()
        });
        Port {
            busy_until: SimTime::ZERO,
            counters: Counters::default(),
            aqm: None,
            txdone_pending: false,
            backpressure,
            watched: false,
            measured: false,
            scheduler: false,
            device: false,
            queue: Buffer::default(),
            bytes: 0,
            limit,
            cold,
        }
    }

    pub fn limit(&self) -> BufferLimit {
        self.limit
    }

    pub fn backpressure(&self) -> bool {
        self.backpressure
    }

    /// Replace the host queue of a port with backpressure (how held-back
    /// packets are ordered and paced), before any arrives.
    pub fn set_upstream(&mut self, upstream: Box<dyn Upstream>) {
        debug_assert!(self.backpressure && self.held_len() == 0);
        self.cold.upstream = Some(upstream);
    }

    /// The host queue of a port with backpressure.
    #[inline]
    fn up(&mut self) -> &mut dyn Upstream {
        self.cold
            .upstream
            .as_deref_mut()
            .expect("a port with backpressure has an upstream")
    }

    /// The AQM acting here, if any.
    pub fn aqm(&self) -> Option<AqmId> {
        self.aqm
    }

    /// Let `a` act at this port (one AQM per port).
    pub fn set_aqm(&mut self, a: AqmId) {
        self.aqm = Some(a);
    }

    /// Let `a` hear of this port's departures.
    pub fn add_watcher(&mut self, a: AqmId) {
        self.cold.watchers.push(a);
        self.watched = true;
    }

    /// Record the queueing delay of every packet leaving the buffer; those
    /// leaving at or after `from` (the end of the warm-up) count in the
    /// run's figures. Before any packet arrives.
    pub fn measure_sojourns(&mut self, from: SimTime) {
        self.cold.sojourns = Some(Box::new(Sojourns::new(from)));
        self.measured = true;
    }

    /// The queueing delays measured here, if the port is measured.
    pub fn sojourns(&self) -> Option<&Sojourns> {
        self.cold.sojourns.as_deref()
    }

    /// Packet `pkt` leaves the buffer for the transmitter at `now` after
    /// `sojourn`: recorded on a measured port. Its flag, in the first cache
    /// line, spares the others a look at `cold`.
    #[inline(always)]
    fn left_buffer(&mut self, now: SimTime, sojourn: SimTime, pkt: &Packet) {
        if self.measured {
            if let Some(s) = self.cold.sojourns.as_deref_mut() {
                s.record(now, sojourn, pkt.has(flags::ECT1));
            }
        }
    }

    /// Give the port a device queue of `packets` below its buffer (0: none),
    /// before any packet arrives.
    pub fn set_device_queue(&mut self, packets: u32) {
        debug_assert!(self.queue.is_empty() && self.cold.device.fifo.is_empty());
        self.device = packets > 0;
        self.cold.device.limit = packets as usize;
    }

    /// Above a device queue, the buffer is idle (for an AQM's view, RED's
    /// average decaying) once the device asks it for a packet and it has
    /// none, as a Linux qdisc or an ns-3 queue disc is: from the start of
    /// the transmission before the link's last, one packet sooner than the
    /// link.
    fn buffer_idle_since(&self) -> Option<SimTime> {
        let d = &self.cold.device;
        (self.queue.is_empty() && d.fifo.len() < d.limit).then_some(d.asked_at)
    }

    /// A transmission starts at `now` from a port with a device queue: the
    /// device has room and asks the buffer.
    pub fn device_asks(&mut self, now: SimTime) {
        self.cold.device.asked_at = now;
    }

    /// Packets in the device queue.
    #[inline]
    fn device_len(&self) -> usize {
        if self.device {
            self.cold.device.fifo.len()
        } else {
            0
        }
    }

    /// Replace the buffer's structure (a queue discipline's: virtual
    /// queues, flow queues, a dual queue), before any packet arrives.
    pub fn set_buffer(&mut self, queue: Buffer) {
        debug_assert!(self.queue.is_empty());
        self.scheduler = queue.is_scheduler();
        self.queue = queue;
    }

    /// The periodic update of a buffer that is a queue discipline with one
    /// (DualPI2's PI2 controller).
    pub fn sched_update(&mut self, now: SimTime) {
        self.queue.sched_update(now);
    }

    pub fn buffer(&self) -> &Buffer {
        &self.queue
    }

    /// Would `pkt` fit in the buffer?
    #[inline]
    pub fn fits(&self, pkt: &Packet) -> bool {
        self.fits_size(pkt.size)
    }

    #[inline]
    fn fits_size(&self, size: u32) -> bool {
        match self.limit {
            BufferLimit::Packets(n) => self.queue.len() < n as usize,
            BufferLimit::Bytes(b) => self.bytes + size as u64 <= b,
        }
    }

    /// What an AQM monitoring this port sees at `now`.
    #[inline]
    pub fn view(&self, now: SimTime, rate: Rate) -> QueueView {
        QueueView {
            q_packets: self.queue.len() as u32,
            q_bytes: self.bytes,
            idle_since: if self.device {
                self.buffer_idle_since()
            } else {
                self.idle(now).then_some(self.busy_until)
            },
            departed_bytes: self.counters.tx_bytes_total,
            rate_bps: rate.bps(),
        }
    }

    /// Is the transmitter free at `now` with nothing waiting?
    #[inline]
    pub fn idle(&self, now: SimTime) -> bool {
        self.queue.is_empty() && now >= self.busy_until && self.device_len() == 0
    }

    /// Packets waiting for the transmitter: in the buffer and the device
    /// queue.
    pub fn len(&self) -> usize {
        self.queue.len() + self.device_len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes waiting for the transmitter.
    pub fn bytes(&self) -> u64 {
        let device = &self.cold.device.fifo;
        self.bytes + device.iter().map(|(p, _)| p.size as u64).sum::<u64>()
    }

    /// Packets held back in their hosts.
    pub fn held_len(&self) -> usize {
        self.cold.upstream.as_ref().map_or(0, |u| u.len())
    }

    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }

    /// Packets that arrived so far (drops included).
    pub fn arrivals(&self) -> u64 {
        self.counters.arrivals
    }

    pub fn tx_packets_total(&self) -> u64 {
        self.counters.tx_packets_total
    }

    pub fn tx_bytes_total(&self) -> u64 {
        self.counters.tx_bytes_total
    }

    pub fn drops_total(&self) -> u64 {
        self.cold.drops_total
    }

    pub fn marks_total(&self) -> u64 {
        self.cold.marks_total
    }

    /// Count a drop or a mark here and report it.
    fn count(&mut self, pkt: &Packet, index: u64, reason: DropReason, sink: &mut impl PortSink) {
        // A link that is down and drops what reaches it takes no packet.
        let reason = match (reason, self.cold.down) {
            (DropReason::Overflow, Some(d)) if d.drops => DropReason::Outage,
            _ => reason,
        };
        count_in(&mut self.cold, pkt, index, reason, sink);
    }

    /// A packet this port sent was lost on the link for `reason` (an
    /// outage).
    pub fn lost(&mut self, pkt: &Packet, index: u64, reason: DropReason, sink: &mut impl PortSink) {
        count_in(&mut self.cold, pkt, index, reason, sink);
    }

    /// The link goes down at `now` until `until`; its last serialization
    /// ends at `tx_end` (sooner than planned if the outage cuts it off).
    /// The transmitter sends nothing before `until`; if `drop_queued`,
    /// what waits is dropped now and so is every arrival until then (the
    /// buffer's limit is zero meanwhile). A `TxDone` that fires before
    /// `until` finds the transmitter held and waits
    /// ([`rewake`](Self::rewake)).
    pub fn go_down(
        &mut self,
        now: SimTime,
        until: SimTime,
        tx_end: SimTime,
        drop_queued: bool,
        sink: &mut impl PortSink,
    ) {
        self.cold.down = Some(Down {
            limit: self.limit,
            tx_end,
            drops: drop_queued,
        });
        if drop_queued {
            self.limit = BufferLimit::Packets(0);
            self.flush(now, sink);
        }
        self.busy_until = until.max(tx_end);
    }

    /// Drop everything the buffer and the device queue hold, for an
    /// outage. A discipline that schedules by itself gives its packets up
    /// through its dequeue, which may drop some on its own account first.
    #[cold]
    #[inline(never)]
    fn flush(&mut self, now: SimTime, sink: &mut impl PortSink) {
        // What waits in the device queue goes first: it was next to be sent.
        while let Some((p, index)) = self.cold.device.fifo.pop_front() {
            count_in(&mut self.cold, &p, index, DropReason::Outage, sink);
        }
        if !self.scheduler {
            while !self.queue.is_empty() {
                let q = self.queue.take(now);
                self.bytes -= q.pkt.size as u64;
                count_in(&mut self.cold, &q.pkt, q.index, DropReason::Outage, sink);
            }
            return;
        }
        loop {
            let Port {
                queue, cold, bytes, ..
            } = self;
            let out = queue.sched_dequeue(now, |q, e| {
                *bytes -= q.pkt.size as u64;
                let why = match e {
                    QdiscDrop::Overflow => DropReason::Overflow,
                    QdiscDrop::Early => DropReason::EarlyDrop,
                };
                count_in(cold, &q.pkt, q.index, why, sink);
            });
            let Some((q, _)) = out else {
                break;
            };
            self.bytes -= q.pkt.size as u64;
            count_in(&mut self.cold, &q.pkt, q.index, DropReason::Outage, sink);
        }
    }

    /// The link is up again at `now`: the buffer takes packets again, and
    /// the transmitter starts on what waits.
    pub fn come_up(&mut self, l: LinkId, now: SimTime, sink: &mut impl PortSink) {
        let Some(d) = self.cold.down.take() else {
            return;
        };
        self.limit = d.limit;
        if self.busy_until <= now {
            // Nothing started at `now` before this.
            self.busy_until = d.tx_end.min(now);
        }
        if !self.txdone_pending && !self.is_empty() {
            self.wake(l, self.busy_until.max(now), sink);
        }
    }

    /// The pending `TxDone` fired while the transmitter is held or busy
    /// (a link that plays a schedule): wake again when it is free, if
    /// packets wait.
    pub fn rewake(&mut self, l: LinkId, sink: &mut impl PortSink) {
        self.txdone_pending = false;
        if !self.is_empty() {
            self.wake(l, self.busy_until, sink);
        }
    }

    /// Carry out `verdict`; false if the packet was dropped.
    #[inline]
    fn act(
        &mut self,
        verdict: Verdict,
        ecn: bool,
        pkt: &mut Packet,
        index: u64,
        sink: &mut impl PortSink,
    ) -> Outcome {
        if verdict == Verdict::Pass {
            // Most packets: nothing to carry out.
            return Outcome::Passed;
        }
        let outcome = apply_verdict(verdict, ecn, pkt);
        if let Some(why) = DropReason::of(outcome) {
            self.count(pkt, index, why, sink);
        }
        outcome
    }

    /// A packet arrives at this port of link `l` (rate `rate`).
    ///
    /// `aqms` are all placed AQMs; `monitor` is what the acting AQM (if
    /// any) sees of the queue it monitors; `local`: the packet comes from
    /// the link's own node (held back instead of dropped when the buffer
    /// is full and the port has backpressure).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn admit(
        &mut self,
        l: LinkId,
        now: SimTime,
        rate: Rate,
        pkt: &mut Packet,
        local: bool,
        aqms: &mut [PlacedAqm],
        monitor: Option<QueueView>,
        sink: &mut impl PortSink,
    ) -> Admitted {
        let index = self.counters.arrivals;
        self.counters.arrivals += 1;
        if self.scheduler {
            return self.admit_to_scheduler(l, now, rate, pkt, index, local, aqms, sink);
        }
        if !self.judge_arrival(now, pkt, index, aqms, monitor, sink) {
            return Admitted::Done;
        }
        let local = local && self.backpressure;
        if local && (!self.up().is_empty() || !self.up().pace_ok(now)) {
            // Behind others already held back (or before the pacer's
            // time): keep their order.
            self.up().push_back(*pkt, index);
            sink.held_in_host(pkt);
            self.rearm(l, now, sink);
            return Admitted::Done;
        }
        if self.idle(now) {
            if local {
                self.up().entered(now, pkt.size);
            }
            // Straight through: it joins and leaves the queue at once.
            let (verdict, ecn) = self.notify_departure(now, rate, SimTime::ZERO, pkt, aqms);
            if self.act(verdict, ecn, pkt, index, sink).admitted() {
                self.queue.served_directly(now, pkt.size);
                self.left_buffer(now, SimTime::ZERO, pkt);
                return Admitted::Transmit(index);
            }
            return Admitted::Done;
        }
        if !self.fits(pkt) {
            if local {
                self.up().push_back(*pkt, index);
                sink.held_in_host(pkt);
            } else {
                self.count(pkt, index, DropReason::Overflow, sink);
            }
            return Admitted::Done;
        }
        if local {
            self.up().entered(now, pkt.size);
        }
        self.bytes += pkt.size as u64;
        self.queue.push(
            now,
            Queued {
                pkt: *pkt,
                index,
                enqueued_at: now,
            },
        );
        self.wake(l, self.busy_until, sink);
        Admitted::Done
    }

    /// An arrival at a port whose buffer is a scheduler: it
    /// always joins, and the scheduler drops what it must to stay within
    /// the limit. On an idle port it is dequeued at once, through the
    /// scheduler's state as a real queue discipline's would be.
    #[allow(clippy::too_many_arguments)]
    #[cold]
    #[inline(never)]
    fn admit_to_scheduler(
        &mut self,
        l: LinkId,
        now: SimTime,
        rate: Rate,
        pkt: &mut Packet,
        index: u64,
        local: bool,
        aqms: &mut [PlacedAqm],
        sink: &mut impl PortSink,
    ) -> Admitted {
        if self.cold.down.is_some_and(|d| d.drops) {
            count_in(&mut self.cold, pkt, index, DropReason::Outage, sink);
            return Admitted::Done;
        }
        // A local sender's packet waits in its host while the buffer is full
        // or others wait before it (an unpaced backpressure port).
        let local = local && self.backpressure;
        if local && (!self.up().is_empty() || !self.fits(pkt)) {
            self.up().push_back(*pkt, index);
            sink.held_in_host(pkt);
            return Admitted::Done;
        }
        if local {
            self.up().entered(now, pkt.size);
        }
        let idle = self.idle(now);
        let q = Queued {
            pkt: *pkt,
            index,
            enqueued_at: now,
        };
        self.enqueue_to_scheduler(q, sink);
        if !idle {
            self.wake(l, self.busy_until, sink);
            return Admitted::Done;
        }
        match self.dequeue_from_scheduler(now, rate, aqms, sink) {
            Some(q) => {
                *pkt = q.pkt;
                Admitted::Transmit(q.index)
            }
            None => Admitted::Done,
        }
    }

    /// Hand `q` to the scheduler, counting and logging what it drops and
    /// the arrival's mark, if it marks it on the way in.
    fn enqueue_to_scheduler(&mut self, q: Queued, sink: &mut impl PortSink) {
        self.bytes += q.pkt.size as u64;
        let (pkt, index) = (q.pkt, q.index);
        let Port {
            queue,
            cold,
            bytes,
            limit,
            ..
        } = self;
        let mark = queue.sched_enqueue(q, *limit, |q, e| {
            *bytes -= q.pkt.size as u64;
            let why = match e {
                QdiscDrop::Overflow => DropReason::Overflow,
                QdiscDrop::Early => DropReason::EarlyDrop,
            };
            count_in(cold, &q.pkt, q.index, why, sink);
        });
        if mark.is_some() {
            let mut marked = pkt;
            marked.flags |= flags::CE;
            self.count(&marked, index, DropReason::EarlyMark, sink);
        }
    }

    /// The scheduler's next packet at `now`, its drops and marks counted
    /// and logged, the watching AQMs told.
    #[inline(never)]
    fn dequeue_from_scheduler(
        &mut self,
        now: SimTime,
        rate: Rate,
        aqms: &mut [PlacedAqm],
        sink: &mut impl PortSink,
    ) -> Option<Queued> {
        let Port {
            queue, cold, bytes, ..
        } = self;
        let (q, mark) = queue.sched_dequeue(now, |q, e| {
            *bytes -= q.pkt.size as u64;
            let why = match e {
                QdiscDrop::Overflow => DropReason::Overflow,
                QdiscDrop::Early => DropReason::EarlyDrop,
            };
            count_in(cold, &q.pkt, q.index, why, sink);
        })?;
        self.bytes -= q.pkt.size as u64;
        if mark.is_some() {
            self.count(&q.pkt, q.index, DropReason::EarlyMark, sink);
        }
        let sojourn = now - q.enqueued_at;
        // The scheduler is the acting discipline: a watcher's verdict here
        // would be a second AQM on the port, which the build refuses.
        let _ = self.notify_departure(now, rate, sojourn, &q.pkt, aqms);
        self.left_buffer(now, sojourn, &q.pkt);
        Some(q)
    }

    /// The acting AQM's verdict on an arrival, carried out: false if the
    /// packet was dropped. An AQM that sorts arrivals into its buffer's
    /// classes (RED+Tail) is asked with the flow's traffic kind, and an
    /// admitted packet joins the class it chose.
    #[inline]
    fn judge_arrival(
        &mut self,
        now: SimTime,
        pkt: &mut Packet,
        index: u64,
        aqms: &mut [PlacedAqm],
        monitor: Option<QueueView>,
        sink: &mut impl PortSink,
    ) -> bool {
        let Some(a) = self.aqm else {
            return true;
        };
        let slot = &mut aqms[a.idx()];
        let u = slot.rng.uniform();
        let meta = PacketMeta::of(pkt);
        let verdict = if slot.aqm.classifies() {
            let kind = sink.flow_kind(pkt);
            slot.aqm
                .classify_arrival(now, pkt.flow, kind, meta, u, &mut self.queue)
        } else {
            let view = monitor.expect("the caller passes the monitored view");
            slot.aqm.on_arrival(now, meta, &view, u)
        };
        let outcome = self.act(verdict, slot.ecn, pkt, index, sink);
        slot.aqm.on_outcome(meta, outcome);
        outcome.admitted()
    }

    /// Tell the AQMs watching this port that `pkt` left it after
    /// `sojourn`; returns the verdict of an AQM deciding at dequeue here,
    /// with whether it signals by marking.
    #[inline(always)]
    fn notify_departure(
        &self,
        now: SimTime,
        rate: Rate,
        sojourn: SimTime,
        pkt: &Packet,
        aqms: &mut [PlacedAqm],
    ) -> (Verdict, bool) {
        if !self.watched {
            return (Verdict::Pass, false);
        }
        self.tell_watchers(now, rate, sojourn, pkt, aqms)
    }

    /// [`notify_departure`](Self::notify_departure) on a watched port (out
    /// of line: most ports are not watched).
    #[inline(never)]
    fn tell_watchers(
        &self,
        now: SimTime,
        rate: Rate,
        sojourn: SimTime,
        pkt: &Packet,
        aqms: &mut [PlacedAqm],
    ) -> (Verdict, bool) {
        let view = self.view(now, rate);
        let meta = PacketMeta::of(pkt);
        let mut out = (Verdict::Pass, false);
        for &a in &self.cold.watchers {
            let slot = &mut aqms[a.idx()];
            let v = slot.aqm.on_departure(now, sojourn, meta, &view);
            if self.aqm == Some(a) && v != Verdict::Pass {
                out = (v, slot.ecn);
            }
        }
        out
    }

    /// The transmitter is free: the next packet to serialize, after any
    /// drops an AQM deciding at dequeue makes, written into `out`; its
    /// index among the port's arrivals. Held-back packets enter the
    /// buffer, in order, as room frees.
    ///
    /// The packet is written into the caller's place rather than returned
    /// in an `Option`: moving a packet out of an `Option` copies it around
    /// the byte that tells `None` apart, and the transmitter's copy of it
    /// then stalls (see [`Ring::take_front`](crate::ring::Ring::take_front)).
    /// (Always inlined into its one caller, the transmitter's `TxDone`.)
    #[inline(always)]
    pub fn next_to_send(
        &mut self,
        now: SimTime,
        rate: Rate,
        aqms: &mut [PlacedAqm],
        sink: &mut impl PortSink,
        out: &mut Packet,
    ) -> Option<u64> {
        if self.device {
            return self.next_from_device(now, rate, aqms, sink, out);
        }
        self.next_from_buffer(now, rate, aqms, sink, out)
    }

    /// The device queue's head for the transmitter (or, if it is empty,
    /// the buffer's next packet), and the device refilled from the buffer.
    #[cold]
    #[inline(never)]
    fn next_from_device(
        &mut self,
        now: SimTime,
        rate: Rate,
        aqms: &mut [PlacedAqm],
        sink: &mut impl PortSink,
        out: &mut Packet,
    ) -> Option<u64> {
        self.txdone_pending = false;
        let d = &mut self.cold.device;
        d.asked_at = now;
        let index = match d.fifo.pop_front() {
            Some((p, index)) => {
                *out = p;
                Some(index)
            }
            None => self.next_from_buffer(now, rate, aqms, sink, out),
        };
        if index.is_some() {
            self.fill_device(now, rate, aqms, sink);
        }
        index
    }

    /// A device queue sits below the buffer.
    #[inline]
    pub fn has_device(&self) -> bool {
        self.device
    }

    /// Move packets from the buffer to the device queue while it has room
    /// (they leave the buffer now: their sojourns end and the AQMs decide):
    /// after each arrival, and as the transmitter takes the device's head.
    #[cold]
    #[inline(never)]
    pub fn fill_device(
        &mut self,
        now: SimTime,
        rate: Rate,
        aqms: &mut [PlacedAqm],
        sink: &mut impl PortSink,
    ) {
        // The device takes packets while the transmitter is busy; a free
        // transmitter takes the buffer's head itself.
        let pending = self.txdone_pending;
        while self.cold.device.fifo.len() < self.cold.device.limit && !self.queue.is_empty() {
            let mut p = Packet::BLANK;
            let Some(index) = self.next_from_buffer(now, rate, aqms, sink, &mut p) else {
                break;
            };
            let d = &mut self.cold.device;
            d.fifo.push_back((p, index));
            d.asked_at = now;
        }
        self.txdone_pending = pending;
    }

    /// The buffer's next packet for the transmitter (or the device queue),
    /// after the AQMs' verdicts at departure.
    #[inline(always)]
    fn next_from_buffer(
        &mut self,
        now: SimTime,
        rate: Rate,
        aqms: &mut [PlacedAqm],
        sink: &mut impl PortSink,
        out: &mut Packet,
    ) -> Option<u64> {
        if self.scheduler {
            self.txdone_pending = false;
            loop {
                let q = self.dequeue_from_scheduler(now, rate, aqms, sink);
                if self.backpressure {
                    self.admit_held(now, sink);
                }
                match q {
                    Some(q) => {
                        *out = q.pkt;
                        return Some(q.index);
                    }
                    // The scheduler dropped what it held; held packets
                    // came in meanwhile.
                    None if !self.queue.is_empty() => continue,
                    None => return None,
                }
            }
        }
        if self.paced() {
            if now == self.cold.wake_at {
                self.txdone_pending = false; // else a stale wake-up
            }
            self.admit_held(now, sink);
            if now < self.busy_until {
                return None; // the pacer's wake-up while busy: see rearm
            }
        } else {
            self.txdone_pending = false;
        }
        loop {
            if self.queue.is_empty() {
                return None;
            }
            let mut q = self.queue.take(now);
            self.bytes -= q.pkt.size as u64;
            if self.backpressure {
                self.admit_held(now, sink);
            }
            let sojourn = now - q.enqueued_at;
            let (verdict, ecn) = self.notify_departure(now, rate, sojourn, &q.pkt, aqms);
            if self.act(verdict, ecn, &mut q.pkt, q.index, sink).admitted() {
                self.left_buffer(now, sojourn, &q.pkt);
                *out = q.pkt;
                return Some(q.index);
            }
            if self.queue.is_empty() {
                if let Some(a) = self.aqm {
                    aqms[a.idx()].aqm.on_empty_after_drop();
                }
                return None;
            }
        }
    }

    /// Room again: let held-back packets in, in order; their senders learn
    /// that they have left the host.
    fn admit_held(&mut self, now: SimTime, sink: &mut impl PortSink) {
        while let Some(size) = self.up().front_size() {
            if !self.fits_size(size) || !self.up().pace_ok(now) {
                break;
            }
            let (p, index) = self.up().pop_front().expect("front");
            self.up().entered(now, p.size);
            let q = Queued {
                pkt: p,
                index,
                enqueued_at: now,
            };
            if self.scheduler {
                // It leaves its host for the discipline, which may drop it.
                sink.left_host(&p, now);
                self.enqueue_to_scheduler(q, sink);
                continue;
            }
            self.bytes += p.size as u64;
            self.queue.push(now, q);
            sink.left_host(&p, now);
        }
    }

    /// Whether held-back packets enter at a pacer's pace (only a port with
    /// `backpressure` holds any; its flag spares the others a look at
    /// `cold`).
    #[inline]
    fn paced(&self) -> bool {
        self.backpressure && self.cold.upstream.as_ref().is_some_and(|u| u.paced())
    }

    /// A paced port: wake when the pacer lets the next held packet in (if
    /// the buffer has room for it; the transmitter may be busy) or at the
    /// end of the serialization if packets wait, whichever comes first.
    #[inline]
    pub fn rearm(&mut self, l: LinkId, now: SimTime, sink: &mut impl PortSink) {
        if !self.paced() {
            return;
        }
        let room = match self.up().front_size() {
            Some(size) => self.fits_size(size),
            None => false,
        };
        let busy_until = self.busy_until;
        let release = self
            .up()
            .next_release()
            .map(|t| if room { t } else { t.max(busy_until) });
        let at = match (self.queue.is_empty(), release) {
            (true, None) => return,
            (true, Some(t)) => t,
            (false, None) => self.busy_until,
            (false, Some(t)) => t.min(self.busy_until),
        };
        self.wake(l, at.max(now), sink);
    }

    /// If packets wait, schedule the transmitter's next `TxDone` for link `l`.
    pub fn wake_if_waiting(&mut self, l: LinkId, sink: &mut impl PortSink) {
        if !self.queue.is_empty() || self.device_len() > 0 {
            self.wake(l, self.busy_until, sink);
        }
    }

    /// Schedule a `TxDone` for link `l` at `at` unless one is pending. A
    /// paced port may need one before the pending one (its pacer lets a
    /// packet in while the transmitter is busy); the later one then fires
    /// as a stale wake-up, which [`Port::next_to_send`] tolerates: a paced
    /// port starts a packet only once the transmitter is free.
    #[inline]
    fn wake(&mut self, l: LinkId, at: SimTime, sink: &mut impl PortSink) {
        if self.txdone_pending && (!self.paced() || self.cold.wake_at <= at) {
            return;
        }
        self.txdone_pending = true;
        if self.backpressure {
            self.cold.wake_at = at;
        }
        sink.schedule(at, Event::TxDone(l));
    }

    /// Serialization of `size` bytes taking `tx` starts at `now`.
    #[inline]
    pub fn start_tx(&mut self, now: SimTime, tx: SimTime, size: u32) -> SimTime {
        let end = now + tx;
        self.busy_until = end;
        let c = &mut self.counters;
        c.busy_ns += tx.ns();
        c.tx_bytes_total += size as u64;
        c.tx_packets_total += 1;
        end
    }

    /// A packet this port sent was erased on the link.
    pub fn erased(&mut self, pkt: &Packet, index: u64, sink: &mut impl PortSink) {
        self.count(pkt, index, DropReason::Erasure, sink);
    }

    /// The figures of the interval ending at `now`, and the start of the
    /// next one. Serialization running past `now` belongs to the next.
    pub fn take_sample(&mut self, now: SimTime) -> PortSample {
        let (queue_packets, queue_bytes) = (self.len() as u32, self.bytes());
        let (c, k) = (&mut self.counters, &mut *self.cold);
        // Serialization running past `now` (not the hold of a link that is
        // down: its `busy_until` is the link's return).
        let tx_end = k.down.map_or(self.busy_until, |d| d.tx_end);
        let carry = tx_end.saturating_sub(now).ns().min(c.busy_ns);
        let s = PortSample {
            busy_ns: c.busy_ns - carry,
            tx_bytes: c.tx_bytes_total - k.tx_bytes_at_sample,
            queue_packets,
            queue_bytes,
            drops: k.drops_since_sample,
            arrivals: c.arrivals - k.arrivals_at_sample,
            marks: k.marks_since_sample,
            delay_mean_ns: k
                .sojourns
                .as_deref_mut()
                .map_or(f64::NAN, Sojourns::take_interval_mean_ns),
        };
        k.arrivals_at_sample = c.arrivals;
        k.tx_bytes_at_sample = c.tx_bytes_total;
        k.marks_since_sample = 0;
        c.busy_ns = carry;
        k.drops_since_sample = 0;
        s
    }

    /// The buffer's discipline's internals at the sample `now`.
    pub fn probe_buffer(&mut self, now: SimTime, put: &mut Probe) {
        self.queue.probe(now, put);
    }
}

/// Count a drop or a mark in `cold` and report it.
fn count_in(
    cold: &mut PortCold,
    pkt: &Packet,
    index: u64,
    reason: DropReason,
    sink: &mut impl PortSink,
) {
    if reason.is_mark() {
        cold.marks_total += 1;
        cold.marks_since_sample += 1;
    } else {
        cold.drops_total += 1;
        cold.drops_since_sample += 1;
    }
    sink.log(pkt, index, reason);
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// A packet that finds the port idle reads only its first cache line:
    /// the queue's length (the first field of `Buffer`) ends it.
    #[test]
    fn the_idle_path_is_one_cache_line() {
        assert_eq!(size_of::<Port>(), 128);
        assert!(offset_of!(Port, watched) < 56);
        assert!(offset_of!(Port, measured) < 56);
        // `Buffer` is `repr(C)` with its length first.
        assert_eq!(offset_of!(Port, queue), 56);
        assert_eq!(offset_of!(Port, bytes), 96);
    }
}
