//! What a run reports: per-flow figures over each flow's measurement
//! window, the run's figures for its bottleneck link, and the packet
//! counts of the conservation check.

use super::{Endpoints, Flow, Simulation};
use crate::ids::{FlowKind, LinkId};
use crate::net::{DelayFigures, DropReason};
use crate::probe::{jain_index, mean_std, rows, Column, ColumnValue, DelayHist, DropLog};
use crate::time::SimTime;

/// Counts for the conservation check: every packet created is delivered,
/// dropped, or still inside a link.
#[derive(Debug, Default, Clone, Copy)]
pub struct PacketCounts {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

rows! {
    /// Figures for one flow; [`FlowSummary::columns`] is the flows table.
    pub struct FlowSummary {
        pub flow: u32,
        pub pair: u32,
        pub start_s: f64,
        pub completion_s: f64,
        pub bytes_delivered: u64,
        pub goodput_bps: f64,
        pub segments_sent: u64,
        pub retransmits: u64,
        pub fast_retransmits: u64,
        pub timeouts: u64,
        pub loss_probes: u64,
        /// Loss episodes undone (D-SACKs or timestamps showed them
        /// spurious).
        pub undos: u64,
        pub ecn_reductions: u64,
        pub rtt_samples: u64,
        pub rtt_min_s: f64,
        pub rtt_mean_s: f64,
        pub rtt_max_s: f64,
        pub cwnd_bytes: f64,
        pub kind: FlowKind,
        ;
        /// Bytes delivered after the warm-up.
        pub bytes_in_window: u64,
    }
}

/// One entry of a [`RunSummary`] as a name and a number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SummaryValue {
    Count(u64),
    Real(f64),
}

impl SummaryValue {
    pub fn as_f64(self) -> f64 {
        match self {
            SummaryValue::Count(n) => n as f64,
            SummaryValue::Real(x) => x,
        }
    }
}

/// Run-level figures over the measurement window (samples after the
/// warm-up) for the bottleneck link. [`RunSummary::entries`] lists them by
/// name, in the order of the result files.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Length of the measurement window (simulated time after the warm-up);
    /// 0 before the warm-up has ended, when rates are NaN.
    pub measured_s: f64,
    pub seed: u64,
    pub utilization_mean: f64,
    pub utilization_std: f64,
    pub throughput_mean_bps: f64,
    pub throughput_std_bps: f64,
    pub queue_mean_packets: f64,
    pub queue_std_packets: f64,
    pub queue_mean_bytes: f64,
    /// Queueing delay at the bottleneck of the packets that left its buffer
    /// after the warm-up (`net/sojourn.rs`), ms: mean and maximum exact,
    /// percentiles within 0.4 %; NaN if no packet left.
    pub queue_delay_mean_ms: f64,
    pub queue_delay_p50_ms: f64,
    pub queue_delay_p95_ms: f64,
    pub queue_delay_p99_ms: f64,
    pub queue_delay_max_ms: f64,
    /// Drops after the warm-up, everywhere.
    pub drops_total: u64,
    /// Drops after the warm-up at the bottleneck.
    pub drops_bottleneck: u64,
    pub drops_overflow: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    pub drops_erasure: u64,
    /// ECN marks after the warm-up, everywhere.
    pub marks_total: u64,
    pub goodput_total_bps: f64,
    /// Jain's fairness index of the long-lived flows' goodputs (bulk, or
    /// all but short flows where there is no bulk traffic).
    pub jain_index: f64,
    pub flows: u64,
    pub short_flows: u64,
    pub short_flows_completed: u64,
    pub short_flow_time_mean_s: f64,
    pub web_connections_opened: u64,
    pub web_pages_completed: u64,
    pub web_births_per_s: f64,
    pub retransmits_total: u64,
    pub timeouts_total: u64,
    pub loss_probes_total: u64,
    pub bottleneck_packets: u64,
    pub bottleneck_rate_bps: u64,
    pub packets_created: u64,
    pub events: u64,
    /// When the drop log reached its most rows (`simulation.log_drops`) and
    /// stopped, if it did; the drop counts above are complete either way.
    pub drop_log_full_s: Option<f64>,
}

impl RunSummary {
    /// Every figure by name, in a fixed order.
    pub fn entries(&self) -> Vec<(&'static str, SummaryValue)> {
        use SummaryValue::{Count as C, Real as R};
        let mut e = vec![
            ("duration_s", R(self.duration_s)),
            ("warmup_s", R(self.warmup_s)),
            ("measured_s", R(self.measured_s)),
            ("seed", C(self.seed)),
            ("utilization_mean", R(self.utilization_mean)),
            ("utilization_std", R(self.utilization_std)),
            ("throughput_mean_bps", R(self.throughput_mean_bps)),
            ("throughput_std_bps", R(self.throughput_std_bps)),
            ("queue_mean_packets", R(self.queue_mean_packets)),
            ("queue_std_packets", R(self.queue_std_packets)),
            ("queue_mean_bytes", R(self.queue_mean_bytes)),
            ("queue_delay_mean_ms", R(self.queue_delay_mean_ms)),
            ("queue_delay_p50_ms", R(self.queue_delay_p50_ms)),
            ("queue_delay_p95_ms", R(self.queue_delay_p95_ms)),
            ("queue_delay_p99_ms", R(self.queue_delay_p99_ms)),
            ("queue_delay_max_ms", R(self.queue_delay_max_ms)),
            ("drops_total", C(self.drops_total)),
            ("drops_bottleneck", C(self.drops_bottleneck)),
            ("drops_overflow", C(self.drops_overflow)),
            ("drops_early", C(self.drops_early)),
            ("drops_forced", C(self.drops_forced)),
            ("drops_erasure", C(self.drops_erasure)),
            ("marks_total", C(self.marks_total)),
            ("goodput_total_bps", R(self.goodput_total_bps)),
            ("jain_index", R(self.jain_index)),
            ("flows", C(self.flows)),
            ("short_flows", C(self.short_flows)),
            ("short_flows_completed", C(self.short_flows_completed)),
            ("short_flow_time_mean_s", R(self.short_flow_time_mean_s)),
            ("web_connections_opened", C(self.web_connections_opened)),
            ("web_pages_completed", C(self.web_pages_completed)),
            ("web_births_per_s", R(self.web_births_per_s)),
            ("retransmits_total", C(self.retransmits_total)),
            ("timeouts_total", C(self.timeouts_total)),
            ("loss_probes_total", C(self.loss_probes_total)),
            ("bottleneck_packets", C(self.bottleneck_packets)),
            ("bottleneck_rate_bps", C(self.bottleneck_rate_bps)),
            ("packets_created", C(self.packets_created)),
            ("events", C(self.events)),
        ];
        // Only in the runs it concerns, so every other summary is as it was.
        if let Some(t) = self.drop_log_full_s {
            e.push(("drop_log_full_s", R(t)));
        }
        e
    }
}

impl Simulation {
    /// Packet accounting for the conservation invariant.
    pub fn packet_counts(&self) -> PacketCounts {
        PacketCounts {
            created: self.next_uid,
            delivered: self.delivered_packets,
            dropped: self.losses.dropped_packets,
            in_flight: self.links.iter().map(|l| l.in_flight() as u64).sum(),
        }
    }

    /// Per-flow figures over the measurement window.
    pub fn flow_summaries(&self) -> Vec<FlowSummary> {
        self.flows.iter().map(|f| self.flow_summary(f)).collect()
    }

    /// A flow's measurement window and the bytes delivered in it. The
    /// window runs from the later of its start and the warm-up to the
    /// earliest of its stop, its completion and now; its bytes are those the
    /// receiver delivered in order inside it (bytes in flight at the
    /// warm-up count when they arrive; bytes arriving after the stop do not).
    fn measured(&self, f: &Flow) -> (SimTime, u64) {
        let begin = f.start.max(self.warmup);
        let mut end = self.now.min(f.stop.unwrap_or(SimTime::MAX));
        if let Some(c) = f.completed {
            end = end.min(c);
        }
        if end <= begin {
            // Not begun (before the warm-up), or over before it began.
            return (SimTime::ZERO, 0);
        }
        let base = if f.start >= self.warmup {
            0
        } else {
            f.delivered_at_warmup.unwrap_or(0)
        };
        let top = f.delivered_at_stop.unwrap_or(f.delivered);
        (end.saturating_sub(begin), top.saturating_sub(base))
    }

    fn flow_summary(&self, f: &Flow) -> FlowSummary {
        let (span, bytes) = self.measured(f);
        let span = span.secs_f64();
        let goodput_bps = if span > 0.0 {
            bytes as f64 * 8.0 / span
        } else {
            0.0
        };
        let mut s = FlowSummary {
            flow: f.id.0,
            kind: f.kind,
            pair: f.pair,
            start_s: f.start.secs_f64(),
            completion_s: f.completed.map(|c| c.secs_f64()).unwrap_or(f64::NAN),
            bytes_delivered: f.delivered,
            bytes_in_window: bytes,
            goodput_bps,
            segments_sent: 0,
            retransmits: 0,
            fast_retransmits: 0,
            timeouts: 0,
            loss_probes: 0,
            undos: 0,
            ecn_reductions: 0,
            rtt_samples: 0,
            rtt_min_s: 0.0,
            rtt_mean_s: 0.0,
            rtt_max_s: 0.0,
            cwnd_bytes: 0.0,
        };
        if let Endpoints::Tcp { sender, .. } = &f.ends {
            let st = &sender.stats;
            s.segments_sent = st.segments_sent;
            s.retransmits = st.retransmits;
            s.fast_retransmits = st.fast_retransmits;
            s.timeouts = st.timeouts;
            s.loss_probes = st.loss_probes;
            s.undos = st.undos;
            s.ecn_reductions = st.ecn_reductions;
            s.rtt_samples = st.rtt.samples;
            (s.rtt_min_s, s.rtt_mean_s, s.rtt_max_s) = st.rtt.seconds();
            s.cwnd_bytes = sender.win.cwnd;
        }
        if let Endpoints::Atsp { sender, .. } = &f.ends {
            // ATSP's SACK cuts count as ECN reductions, its window as cwnd.
            let st = &sender.stats;
            s.segments_sent = st.packets_sent;
            s.retransmits = st.retransmits;
            s.ecn_reductions = st.cuts;
            s.rtt_samples = st.rtt.samples;
            (s.rtt_min_s, s.rtt_mean_s, s.rtt_max_s) = st.rtt.seconds();
            s.cwnd_bytes = sender.w * sender.cfg.packet_size as f64;
        }
        s
    }

    /// Run-level figures over the measurement window (samples after
    /// `warmup`), for the bottleneck link.
    pub fn summary(&self) -> RunSummary {
        let ts = &self.timeseries;
        let b = self.bottleneck.0;
        let warm = self.warmup.ns();
        let rows =
            || (0..ts.time_ns.len()).filter(move |&i| ts.link[i] == b && ts.time_ns[i] > warm);
        let (u_mean, u_std) = mean_std(rows().map(|i| ts.utilization[i]));
        let (t_mean, t_std) = mean_std(rows().map(|i| ts.throughput_bps[i]));
        let (q_mean, q_std) = mean_std(rows().map(|i| ts.queue_packets[i] as f64));
        let (qb_mean, _) = mean_std(rows().map(|i| ts.queue_bytes[i] as f64));
        let flows = self.flow_summaries();
        let measured_s = self.now.saturating_sub(self.warmup).secs_f64();
        // Rates over the measurement window; none before it has begun.
        let per_s = |x: f64| {
            if measured_s > 0.0 {
                x / measured_s
            } else {
                f64::NAN
            }
        };
        let web = self.flows.iter().filter(|f| f.kind == FlowKind::Web);
        let web_births = web.clone().filter(|f| f.start >= self.warmup).count() as u64;
        let short: Vec<&FlowSummary> = flows.iter().filter(|f| f.kind == FlowKind::Short).collect();
        let short_done: Vec<f64> = short
            .iter()
            .filter(|f| f.completion_s.is_finite())
            .map(|f| f.completion_s - f.start_s)
            .collect();
        let drops = self.drops_after_warmup();
        let bl = &self.links[self.bottleneck.idx()];
        let delay = bl
            .port
            .sojourns()
            .map_or(DelayFigures::NONE, |s| s.figures());
        let ms = |ns: f64| ns / 1e6;
        RunSummary {
            duration_s: self.now.secs_f64(),
            warmup_s: self.warmup.secs_f64(),
            measured_s,
            seed: self.seed,
            utilization_mean: u_mean,
            utilization_std: u_std,
            throughput_mean_bps: t_mean,
            throughput_std_bps: t_std,
            queue_mean_packets: q_mean,
            queue_std_packets: q_std,
            queue_mean_bytes: qb_mean,
            queue_delay_mean_ms: ms(delay.mean_ns),
            queue_delay_p50_ms: ms(delay.p50_ns),
            queue_delay_p95_ms: ms(delay.p95_ns),
            queue_delay_p99_ms: ms(delay.p99_ns),
            queue_delay_max_ms: ms(delay.max_ns),
            drops_total: drops.dropped,
            drops_bottleneck: drops.at_bottleneck,
            drops_overflow: drops.by_reason[DropReason::Overflow as usize],
            drops_early: drops.by_reason[DropReason::EarlyDrop as usize],
            drops_forced: drops.by_reason[DropReason::ForcedDrop as usize],
            drops_erasure: drops.by_reason[DropReason::Erasure as usize],
            marks_total: drops.marked,
            goodput_total_bps: per_s(
                flows.iter().map(|f| f.bytes_in_window as f64).sum::<f64>() * 8.0,
            ),
            jain_index: jain_index(&long_lived_goodputs(&flows)),
            flows: flows.len() as u64,
            short_flows: short.len() as u64,
            short_flows_completed: short_done.len() as u64,
            short_flow_time_mean_s: mean_std(short_done.iter().copied()).0,
            web_connections_opened: web_births,
            web_pages_completed: web
                .filter(|f| f.completed.is_some_and(|c| c >= self.warmup))
                .count() as u64,
            web_births_per_s: per_s(web_births as f64),
            retransmits_total: flows.iter().map(|f| f.retransmits).sum(),
            timeouts_total: flows.iter().map(|f| f.timeouts).sum(),
            loss_probes_total: flows.iter().map(|f| f.loss_probes).sum(),
            bottleneck_packets: bl.port.tx_packets_total(),
            bottleneck_rate_bps: bl.rate().bps(),
            packets_created: self.packet_counts().created,
            events: self.events_processed(),
            drop_log_full_s: self.losses.log_full_at.map(SimTime::secs_f64),
        }
    }

    /// Each monitored link's histogram of queueing delays after the
    /// warm-up (the `delay_hist` table).
    pub fn delay_hist(&self) -> DelayHist {
        let mut t = DelayHist::default();
        for &l in &self.monitored {
            let Some(s) = self.links[l.idx()].port.sojourns() else {
                continue;
            };
            let hists = [Some(s.histogram()), s.l4s_histogram()];
            for (of, h) in hists.into_iter().enumerate() {
                for (lo, hi, n) in h.into_iter().flat_map(|h| h.buckets()) {
                    t.link.push(l.0);
                    t.packets_of.push(of as u8);
                    t.delay_lo_ns.push(lo);
                    t.delay_hi_ns.push(hi);
                    t.packets.push(n);
                }
            }
        }
        t
    }

    /// The drop log after the warm-up, counted (or the counts kept in its
    /// place when the log is off).
    fn drops_after_warmup(&self) -> DropCounts {
        if let Some(c) = &self.losses.unlogged {
            return c.clone();
        }
        DropCounts::of_log(&self.drops, self.warmup, self.bottleneck)
    }
}

/// Drops and marks after the warm-up, by reason.
#[derive(Clone, Debug, Default)]
pub(super) struct DropCounts {
    dropped: u64,
    marked: u64,
    at_bottleneck: u64,
    by_reason: [u64; DropReason::ALL.len()],
}

impl DropCounts {
    /// The drops and marks of the log `d` after `warmup`.
    pub(super) fn of_log(d: &DropLog, warmup: SimTime, bottleneck: LinkId) -> DropCounts {
        let mut c = DropCounts::default();
        for i in (0..d.time_ns.len()).filter(|&i| d.time_ns[i] >= warmup.ns()) {
            let reason = DropReason::ALL[d.reason[i] as usize];
            c.count(reason, d.link[i] == bottleneck.0);
        }
        c
    }

    /// One drop or mark for `reason`, at the bottleneck or not.
    pub(super) fn count(&mut self, reason: DropReason, at_bottleneck: bool) {
        self.by_reason[reason as usize] += 1;
        if reason.is_mark() {
            self.marked += 1;
        } else {
            self.dropped += 1;
            if at_bottleneck {
                self.at_bottleneck += 1;
            }
        }
    }
}

/// Goodputs of the long-lived flows: bulk ones (TCP or ATSP), or all but short flows
/// where there is no bulk traffic.
fn long_lived_goodputs(flows: &[FlowSummary]) -> Vec<f64> {
    let bulk: Vec<f64> = flows
        .iter()
        .filter(|f| matches!(f.kind, FlowKind::Bulk | FlowKind::Atsp))
        .map(|f| f.goodput_bps)
        .collect();
    if !bulk.is_empty() {
        return bulk;
    }
    flows
        .iter()
        .filter(|f| f.kind != FlowKind::Short)
        .map(|f| f.goodput_bps)
        .collect()
}
