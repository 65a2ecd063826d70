//! Measurement during a run: the periodic sampler (one row per monitored
//! link per interval, and the traced flows' windows) and the snapshot of
//! each flow's delivered bytes at the end of the warm-up, taken at the
//! warm-up time itself whatever the sample grid.

use super::{Endpoints, Simulation};
use crate::engine::Event;
use crate::ids::LinkId;
use crate::time::SimTime;
use crate::transport::tcp::cc::CcTrace;

impl Simulation {
    pub(super) fn sample(&mut self) {
        let now = self.now;
        let interval = self.sample_interval;
        for &l in &self.monitored {
            let port = &mut self.links[l.idx()].port;
            let s = port.take_sample(now);
            let ts = &mut self.timeseries;
            ts.time_ns.push(now.ns());
            ts.link.push(l.0);
            ts.utilization.push(s.busy_ns as f64 / interval.ns() as f64);
            ts.throughput_bps
                .push(s.tx_bytes as f64 * 8.0 / interval.secs_f64());
            ts.queue_packets.push(s.queue_packets);
            ts.queue_bytes.push(s.queue_bytes);
            ts.queue_delay_ms.push(s.delay_mean_ns / 1e6);
            ts.drops.push(s.drops);
            ts.arrivals.push(s.arrivals);
            ts.marks.push(s.marks);
            let aqm = port.aqm().map(|a| &self.aqms[a.idx()].aqm);
            ts.aqm.push_row(|put| {
                if let Some(a) = aqm {
                    a.probe(put);
                }
                port.probe_buffer(now, put);
            });
        }
        for i in 0..self.scheduled.len() {
            self.record_link_state(self.scheduled[i]);
        }
        self.trace_windows();
        self.trace_traffic();
        let next = now + interval;
        if next <= self.end {
            self.queue.schedule(next, Event::Sample);
        }
    }

    /// The warm-up is over (every event at or before it has run): each
    /// flow's bytes delivered so far are the base of its measurement window.
    pub(super) fn end_warmup(&mut self) {
        self.warmup_pending = false;
        for flow in &mut self.flows {
            flow.delivered_at_warmup = Some(flow.delivered);
        }
    }

    /// One row per traffic entry (if traced): the payload bytes delivered
    /// to its receivers so far. A pass over the flows, nothing per packet.
    fn trace_traffic(&mut self) {
        if self.entry_bytes.is_empty() {
            return;
        }
        self.entry_bytes.fill(0);
        for flow in &self.flows {
            // A PEP's inner connections deliver to their end-to-end flow,
            // so each byte is counted once.
            // (Real connections belong to no entry.)
            if let Some(b) = self.entry_bytes.get_mut(flow.entry as usize) {
                *b += flow.delivered;
            }
        }
        let t = &mut self.traffic;
        for (entry, &bytes) in self.entry_bytes.iter().enumerate() {
            t.time_ns.push(self.now.ns());
            t.traffic.push(entry as u32);
            t.delivered_bytes.push(bytes);
        }
    }

    /// One row per traced flow: its window, threshold and delivered bytes.
    fn trace_windows(&mut self) {
        let now = self.now;
        for &k in &self.trace_cwnd {
            // Flows made as traffic arrives (short, web, web_mice) may not
            // exist yet. With PEPs, the scenario's flow k is not the k-th
            // flow: relayed connections have ids of their own.
            let Some(&f) = self.end_to_end.get(k.idx()) else {
                continue;
            };
            let flow = &self.flows[f.idx()];
            let (cwnd, ssthresh, pacing, cc) = match &flow.ends {
                Endpoints::Tcp { sender, .. } => (
                    sender.win.cwnd,
                    sender.win.ssthresh,
                    sender.pacing_rate(),
                    sender.cc_trace(),
                ),
                // ATSP's window w in bytes; it has no threshold.
                Endpoints::Atsp { sender, .. } => (
                    sender.w * sender.cfg.packet_size as f64,
                    f64::NAN,
                    None,
                    CcTrace::NONE,
                ),
                Endpoints::Udp { .. } | Endpoints::Outside(_) => continue,
            };
            let t = &mut self.cwnd;
            t.time_ns.push(now.ns());
            t.flow.push(f.0);
            t.cwnd_bytes.push(cwnd);
            t.ssthresh_bytes.push(ssthresh);
            t.delivered_bytes.push(flow.delivered);
            t.pacing_rate_bps.push(pacing.map_or(f64::NAN, |r| r * 8.0));
            t.cc_state.push(cc.state);
            t.pacing_gain.push(cc.pacing_gain);
            t.cwnd_gain.push(cc.cwnd_gain);
            t.bw_estimate_bps.push(cc.bw * 8.0);
            t.min_rtt_s.push(cc.min_rtt);
        }
    }

    /// The links that play a schedule: their state at the start, and their
    /// first change.
    pub(super) fn start_schedules(&mut self) {
        self.scheduled = (0..self.links.len())
            .filter(|&i| self.links[i].schedule().is_some())
            .map(|i| LinkId(i as u32))
            .collect();
        for i in 0..self.scheduled.len() {
            let l = self.scheduled[i];
            self.link_begin(l);
            self.record_link_state(l);
            if let Some(t) = self.links[l.idx()].schedule().and_then(|s| s.next_start()) {
                if t <= self.end {
                    self.queue.schedule(t, Event::LinkChange(l));
                }
            }
        }
    }

    /// A row of the link-state table for link `l` (one that plays a
    /// schedule), now.
    pub(super) fn record_link_state(&mut self, l: LinkId) {
        let now = self.now;
        let link = &self.links[l.idx()];
        let Some(s) = link.schedule() else {
            return;
        };
        let t = &mut self.link_state;
        t.time_ns.push(now.ns());
        t.link.push(l.0);
        let rate = match s.opportunities() {
            // What the trace offered over the sample interval ending now
            // (the first one, at the start).
            Some(o) => {
                let iv = self.sample_interval;
                let (from, to) = if now >= iv {
                    (now - iv, now)
                } else {
                    (SimTime::ZERO, iv)
                };
                o.offered_bps(from, to).round() as u64
            }
            None => s.rate_at(now).bps(),
        };
        t.rate_bps.push(rate);
        t.delay_ns.push(s.delay_at(now).ns());
        t.loss.push(s.loss_at(now));
        t.up.push(link.is_up());
    }
}
