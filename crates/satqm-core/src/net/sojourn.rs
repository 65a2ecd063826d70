//! Queueing delay at a monitored port: each packet's sojourn time in the
//! port's buffer.
//!
//! A packet's sojourn runs from its arrival in the buffer to the start of
//! its serialization: enqueue to dequeue, as CoDel measures it (RFC 8289
//! section 3.1), so the packet's own transmission time is not in it, while
//! the wait for the packet ahead of it to finish is. A packet that finds
//! the port idle has a sojourn of 0. Packets an AQM drops at dequeue never
//! start serializing and are not counted; packets the link erases are (they
//! left the buffer). A packet held back in its host (`backpressure`) enters
//! the buffer when there is room: its sojourn counts from then.
//!
//! [`Sojourns`] keeps, exactly, the count, sum and maximum of the sojourns
//! since the end of the warm-up and the count and sum since the last sample,
//! and the distribution since the warm-up in a [`DelayHistogram`] of fixed
//! layout, so that percentiles over any number of packets take bounded
//! memory. The packets carrying the L4S identifier (ECT(1), RFC 9331) get
//! a second histogram of their own, made at the first of them, so that an
//! L4S study reads their delay apart from the classic traffic's.

use crate::time::SimTime;

/// Each power of two is split into `2^SUB_BITS` buckets.
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets covering every `u64` count of nanoseconds: one per value below
/// `2 * SUB`, then `SUB` per power of two up to `2^64`.
pub const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB as usize;

/// A log-linear histogram of durations in nanoseconds (the layout of
/// HdrHistogram with 7 bits of sub-bucket precision).
///
/// A duration `d` below 256 ns has a bucket to itself; above, the power of
/// two `[2^e, 2^(e+1))` holding it is split into 128 buckets of width
/// `2^(e-7)`. A bucket `[lo, hi]` is therefore at most `lo / 128` wide, and
/// its midpoint, which [`quantile`](Self::quantile) reports, is within
/// `1/256` (0.4 %) of any duration in it.
#[derive(Debug, Clone)]
pub struct DelayHistogram {
    counts: Box<[u64]>,
}

impl Default for DelayHistogram {
    fn default() -> Self {
        DelayHistogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
        }
    }
}

impl DelayHistogram {
    /// The bucket holding `ns`: its top 8 significant bits, with the
    /// position of the highest one.
    #[inline]
    pub fn bucket(ns: u64) -> usize {
        let shift = (63 - (ns | 1).leading_zeros()).saturating_sub(SUB_BITS);
        (u64::from(shift) * SUB + (ns >> shift)) as usize
    }

    /// The durations bucket `i` holds, both ends included.
    pub fn bounds(i: usize) -> (u64, u64) {
        let i = i as u64;
        let shift = (i / SUB).saturating_sub(1);
        let lo = (i - shift * SUB) << shift;
        (lo, lo + ((1u64 << shift) - 1))
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[Self::bucket(ns)] += 1;
    }

    /// Durations recorded (a sum over the buckets: a record touches one
    /// count only).
    pub fn len(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The non-empty buckets, shortest first: `(lo, hi, count)`, both ends
    /// included.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(i, &n)| {
                let (lo, hi) = Self::bounds(i);
                (lo, hi, n)
            })
    }

    /// The `q`-quantile (`0 < q <= 1`) in nanoseconds, by nearest rank: the
    /// midpoint of the bucket holding the `ceil(q * n)`-th shortest of the
    /// `n` durations; NaN if there are none.
    pub fn quantile(&self, q: f64) -> f64 {
        let total = self.len();
        if total == 0 {
            return f64::NAN;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (lo, hi) = Self::bounds(i);
                return (lo as f64 + hi as f64) / 2.0;
            }
        }
        unreachable!("the counts add up to the total")
    }
}

/// The sojourn times of the packets leaving one port's buffer.
#[derive(Debug, Clone)]
pub struct Sojourns {
    /// Departures from this time on (the end of the warm-up) count in the
    /// run's figures.
    from: SimTime,
    sum_ns: u128,
    max_ns: u64,
    histogram: DelayHistogram,
    /// The L4S packets' distribution, once one has left after the warm-up.
    l4s: Option<Box<DelayHistogram>>,
    /// Since the last sample (warm-up included).
    interval_packets: u64,
    interval_sum_ns: u128,
}

/// The run's queueing-delay figures at one port, in nanoseconds (NaN
/// where no packet left the buffer after the warm-up).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayFigures {
    pub packets: u64,
    /// Exact.
    pub mean_ns: f64,
    /// From the histogram: within 0.4 % (see [`DelayHistogram`]).
    pub p50_ns: f64,
    pub p95_ns: f64,
    pub p99_ns: f64,
    /// Exact.
    pub max_ns: f64,
}

impl DelayFigures {
    /// No packet measured.
    pub const NONE: DelayFigures = DelayFigures {
        packets: 0,
        mean_ns: f64::NAN,
        p50_ns: f64::NAN,
        p95_ns: f64::NAN,
        p99_ns: f64::NAN,
        max_ns: f64::NAN,
    };
}

impl Sojourns {
    /// Count the departures at or after `from` in the run's figures.
    pub fn new(from: SimTime) -> Sojourns {
        Sojourns {
            from,
            sum_ns: 0,
            max_ns: 0,
            histogram: DelayHistogram::default(),
            l4s: None,
            interval_packets: 0,
            interval_sum_ns: 0,
        }
    }

    /// A packet left the buffer at `now` after `sojourn`; `l4s`: it
    /// carries ECT(1).
    #[inline]
    pub fn record(&mut self, now: SimTime, sojourn: SimTime, l4s: bool) {
        let ns = sojourn.ns();
        self.interval_packets += 1;
        self.interval_sum_ns += u128::from(ns);
        if now >= self.from {
            self.sum_ns += u128::from(ns);
            self.max_ns = self.max_ns.max(ns);
            self.histogram.record(ns);
            if l4s {
                self.l4s.get_or_insert_with(Box::default).record(ns);
            }
        }
    }

    /// The mean sojourn, in nanoseconds, of the packets that left since the
    /// last call (NaN if none did); the next interval starts.
    pub fn take_interval_mean_ns(&mut self) -> f64 {
        let mean = if self.interval_packets == 0 {
            f64::NAN
        } else {
            self.interval_sum_ns as f64 / self.interval_packets as f64
        };
        self.interval_packets = 0;
        self.interval_sum_ns = 0;
        mean
    }

    /// The distribution of the sojourns after the warm-up.
    pub fn histogram(&self) -> &DelayHistogram {
        &self.histogram
    }

    /// The distribution of the L4S packets' sojourns after the warm-up, if
    /// any left.
    pub fn l4s_histogram(&self) -> Option<&DelayHistogram> {
        self.l4s.as_deref()
    }

    /// The run's figures: packets after the warm-up, their mean, median,
    /// 95th and 99th percentiles and maximum. The percentiles are never
    /// above the exact maximum.
    pub fn figures(&self) -> DelayFigures {
        let h = &self.histogram;
        let n = h.len();
        if n == 0 {
            return DelayFigures::NONE;
        }
        let max = self.max_ns as f64;
        DelayFigures {
            packets: n,
            mean_ns: self.sum_ns as f64 / n as f64,
            p50_ns: h.quantile(0.50).min(max),
            p95_ns: h.quantile(0.95).min(max),
            p99_ns: h.quantile(0.99).min(max),
            max_ns: max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_durations() {
        // Exact below 256 ns, then 128 buckets per power of two.
        for ns in 0..256 {
            assert_eq!(DelayHistogram::bucket(ns), ns as usize);
            assert_eq!(DelayHistogram::bounds(ns as usize), (ns, ns));
        }
        assert_eq!(DelayHistogram::bounds(256), (256, 257));
        assert_eq!(DelayHistogram::bounds(383), (510, 511));
        assert_eq!(DelayHistogram::bounds(384), (512, 515));
        // Each bucket starts where the one before ended, up to u64::MAX.
        let mut next = 0u64;
        for i in 0..BUCKETS {
            let (lo, hi) = DelayHistogram::bounds(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(DelayHistogram::bucket(lo), i);
            assert_eq!(DelayHistogram::bucket(hi), i);
            if i + 1 < BUCKETS {
                next = hi + 1;
            } else {
                assert_eq!(hi, u64::MAX);
            }
        }
    }

    /// The stated error: a bucket's midpoint is within 1/256 of any
    /// duration in it.
    #[test]
    fn a_bucket_midpoint_is_within_0_4_percent() {
        for i in 256..BUCKETS {
            let (lo, hi) = DelayHistogram::bounds(i);
            let mid = (lo as f64 + hi as f64) / 2.0;
            let worst = (mid - lo as f64) / lo as f64;
            assert!(worst <= 1.0 / 256.0, "bucket {i}: {worst}");
        }
    }

    /// Percentiles by nearest rank against the exact ones of a sorted list.
    #[test]
    fn quantiles_by_nearest_rank() {
        let mut h = DelayHistogram::default();
        assert!(h.quantile(0.5).is_nan());
        // 1..=1000 µs, in a scrambled order.
        let values: Vec<u64> = (0..1000u64).map(|k| (k * 617 % 1000 + 1) * 1000).collect();
        for &v in &values {
            h.record(v);
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        for q in [0.01, 0.5, 0.95, 0.99, 1.0] {
            let exact = sorted[(q * 1000.0_f64).ceil() as usize - 1] as f64;
            let got = h.quantile(q);
            assert!(
                (got - exact).abs() <= exact / 256.0,
                "q {q}: {got} against {exact}"
            );
        }
        // Small values are exact.
        let mut small = DelayHistogram::default();
        for v in [0, 0, 0, 5, 200] {
            small.record(v);
        }
        assert_eq!(small.quantile(0.5), 0.0);
        assert_eq!(small.quantile(0.8), 5.0);
        assert_eq!(small.quantile(1.0), 200.0);
    }

    /// Mean and maximum are exact; departures before the warm-up count only
    /// in the interval's mean.
    #[test]
    fn figures_after_the_warmup_and_interval_means() {
        let mut s = Sojourns::new(SimTime::from_secs(1));
        s.record(SimTime::from_ms(500), SimTime::from_ms(900), false);
        s.record(SimTime::from_ms(1000), SimTime(1), false);
        s.record(SimTime::from_ms(1500), SimTime(2), false);
        s.record(SimTime::from_ms(1600), SimTime::from_ms(3), false);
        assert_eq!(s.take_interval_mean_ns(), (900e6 + 1.0 + 2.0 + 3e6) / 4.0);
        assert!(s.take_interval_mean_ns().is_nan());
        let f = s.figures();
        assert_eq!(f.packets, 3);
        assert_eq!(f.mean_ns, (1.0 + 2.0 + 3e6) / 3.0);
        assert_eq!(f.max_ns, 3e6);
        assert_eq!(f.p50_ns, 2.0);
        assert!((f.p99_ns - 3e6).abs() <= 3e6 / 256.0);
        assert!(f.p99_ns <= f.max_ns);
        let none = Sojourns::new(SimTime::ZERO).figures();
        assert_eq!(none.packets, 0);
        assert!(none.mean_ns.is_nan() && none.p95_ns.is_nan() && none.max_ns.is_nan());
    }
}

/// A port driven by hand: what it records of the packets leaving its
/// buffer.
#[cfg(test)]
mod port_tests {
    use super::*;
    use crate::engine::Event;
    use crate::ids::{FlowId, FlowKind, LinkId, NodeId};
    use crate::net::{DelayModel, DropReason, Link, Port, PortSink};
    use crate::packet::{Packet, PacketKind};
    use crate::queue::BufferLimit;
    use crate::rng::Rng;
    use crate::time::Rate;

    #[derive(Default)]
    struct Sink {
        txdone: Vec<SimTime>,
        drops: u64,
    }

    impl PortSink for Sink {
        fn log(&mut self, _: &Packet, _: u64, reason: DropReason) {
            assert_eq!(reason, DropReason::Overflow);
            self.drops += 1;
        }
        fn held_in_host(&mut self, _: &Packet) {}
        fn left_host(&mut self, _: &Packet, _: SimTime) {}
        fn flow_kind(&self, _: &Packet) -> FlowKind {
            FlowKind::Bulk
        }
        fn schedule(&mut self, t: SimTime, ev: Event) {
            if let Event::TxDone(_) = ev {
                self.txdone.push(t);
            }
        }
    }

    /// 8 Mbit/s: a 1,000-byte packet takes 1 ms; room for two waiting.
    fn link(measured: bool) -> Link {
        link_with_device(measured, 0)
    }

    /// The same, with a device queue of `device` packets below the buffer.
    fn link_with_device(measured: bool, device: u32) -> Link {
        let mut port = Port::new(BufferLimit::Packets(2), None);
        port.set_device_queue(device);
        if measured {
            port.measure_sojourns(SimTime::ZERO);
        }
        Link::new(
            "bottleneck".into(),
            (NodeId(0), NodeId(1)),
            Rate(8_000_000),
            DelayModel::Fixed(SimTime::ZERO),
            0.0,
            port,
            Rng::stream(1, "link", 0),
            measured,
        )
    }

    /// Offer a 1,000-byte packet at each of `arrivals`, serving the
    /// transmitter as its `TxDone` events come due.
    fn drive(l: &mut Link, arrivals: &[SimTime], sink: &mut Sink) {
        let id = LinkId(0);
        let serve_until = |l: &mut Link, sink: &mut Sink, t: SimTime| {
            while let Some(&due) = sink.txdone.iter().min() {
                if due > t {
                    break;
                }
                sink.txdone.retain(|&x| x != due);
                l.tx_done(id, due, &mut [], sink);
            }
        };
        for (i, &t) in arrivals.iter().enumerate() {
            serve_until(l, sink, t);
            let mut p = Packet::new(i as u64, FlowId(0), NodeId(0), NodeId(1), PacketKind::Udp);
            p.size = 1000;
            l.enqueue(id, t, &mut p, &mut [], None, sink);
        }
        serve_until(l, sink, SimTime::MAX);
    }

    /// Three packets at once on an idle port wait 0, 1 and 2 ms (each for
    /// the ones ahead of it, not for its own transmission); the fourth,
    /// refused by the full buffer, is not counted; a packet arriving while
    /// the last one is half sent waits the other half.
    #[test]
    fn a_measured_port_records_each_wait_exactly() {
        let mut l = link(true);
        let mut sink = Sink::default();
        let z = SimTime::ZERO;
        drive(&mut l, &[z, z, z, z, SimTime::from_us(2500)], &mut sink);
        assert_eq!(sink.drops, 1);
        let s = l.port.sojourns().expect("measured");
        let f = s.figures();
        assert_eq!(f.packets, 4);
        assert_eq!(f.mean_ns, (0.0 + 1e6 + 2e6 + 0.5e6) / 4.0);
        assert_eq!(f.max_ns, 2e6);
        assert_eq!(f.p99_ns, 2e6, "clamped to the exact maximum");
        let p50 = f.p50_ns; // 0.5 ms, within the histogram's error
        assert!((p50 - 0.5e6).abs() <= 0.5e6 / 256.0, "{p50}");
        let hist: Vec<u64> = s.histogram().buckets().map(|(_, _, n)| n).collect();
        assert_eq!(hist, [1, 1, 1, 1]);
        assert_eq!(
            l.port.take_sample(SimTime::from_ms(4)).delay_mean_ns,
            f.mean_ns
        );
        assert!(l
            .port
            .take_sample(SimTime::from_ms(5))
            .delay_mean_ns
            .is_nan());
    }

    /// With a one-packet device queue below the two-packet buffer, four
    /// packets at once on an idle port all fit: the first is sent at once,
    /// the second goes straight to the device, the third and fourth leave
    /// the buffer for the device as the transmitter starts the packet
    /// before them (at 1 and 2 ms), so their sojourns end a packet before
    /// their own serialization starts. The queue length counts the device.
    #[test]
    fn a_device_queue_ends_the_sojourn_when_the_buffer_hands_a_packet_on() {
        let mut l = link_with_device(true, 1);
        let mut sink = Sink::default();
        let id = LinkId(0);
        for i in 0..4 {
            let mut p = Packet::new(i, FlowId(0), NodeId(0), NodeId(1), PacketKind::Udp);
            p.size = 1000;
            l.enqueue(id, SimTime::ZERO, &mut p, &mut [], None, &mut sink);
        }
        assert_eq!(sink.drops, 0);
        assert_eq!(l.port.len(), 3, "two in the buffer, one in the device");
        assert_eq!(l.port.bytes(), 3000);
        assert_eq!(l.in_flight(), 4);
        let sample = l.port.take_sample(SimTime::ZERO);
        assert_eq!((sample.queue_packets, sample.queue_bytes), (3, 3000));
        drive(&mut l, &[], &mut sink);
        let f = l.port.sojourns().expect("measured").figures();
        assert_eq!(f.packets, 4);
        assert_eq!(f.mean_ns, (0.0 + 0.0 + 1e6 + 2e6) / 4.0);
        assert_eq!(l.port.tx_packets_total(), 4);
        assert!(l.port.is_empty());
        assert_eq!(
            l.port.busy_until(),
            SimTime::from_ms(4),
            "sent back to back"
        );
    }

    /// A packet arriving while the transmitter is busy and the device has
    /// room goes through the buffer to the device at once (sojourn 0); on
    /// an idle port it is sent at once, as without a device queue.
    #[test]
    fn a_device_with_room_takes_an_arrival_at_once() {
        let mut l = link_with_device(true, 1);
        let mut sink = Sink::default();
        drive(
            &mut l,
            &[SimTime::ZERO, SimTime::from_us(500), SimTime::from_ms(5)],
            &mut sink,
        );
        let f = l.port.sojourns().expect("measured").figures();
        assert_eq!((f.packets, f.max_ns), (3, 0.0));
        assert_eq!(l.port.busy_until(), SimTime::from_ms(6));
        assert_eq!(l.port.tx_packets_total(), 3);
    }

    /// An AQM's view of idleness (RED's average decays over it): without a
    /// device queue the port is idle once the link is; above a device
    /// queue the buffer is idle once the device asks it for a packet and
    /// it has none, at the start of the link's last transmission.
    #[test]
    fn above_a_device_queue_the_buffer_idles_a_transmission_sooner() {
        let ms = SimTime::from_ms;
        let us = SimTime::from_us;
        for (device, at_1500us, at_2500us) in
            [(0, None, Some(ms(2))), (1, Some(ms(1)), Some(ms(1)))]
        {
            let mut l = link_with_device(false, device);
            let mut sink = Sink::default();
            drive(&mut l, &[SimTime::ZERO, SimTime::ZERO], &mut sink);
            assert_eq!(l.port.busy_until(), ms(2));
            assert_eq!(l.view(us(1500)).idle_since, at_1500us, "device {device}");
            assert_eq!(l.view(us(2500)).idle_since, at_2500us, "device {device}");
        }
        // one packet on an idle port: the device asks as it starts
        let mut l = link_with_device(false, 1);
        let mut sink = Sink::default();
        drive(&mut l, &[ms(5)], &mut sink);
        assert_eq!(l.view(us(5500)).idle_since, Some(ms(5)));
    }

    #[test]
    fn an_unmeasured_port_records_nothing() {
        let mut l = link(false);
        let mut sink = Sink::default();
        drive(&mut l, &[SimTime::ZERO; 3], &mut sink);
        assert!(l.port.sojourns().is_none());
        assert!(l
            .port
            .take_sample(SimTime::from_ms(4))
            .delay_mean_ns
            .is_nan());
    }
}
