//! The check, as a run goes, of what can grow past the up-front estimate:
//! packets held back by backpressure (a source offering more than its link
//! carries, without end), the logs and the sampler's rows, the packet
//! captures and the connections opened. The estimate bounds each of them
//! from the scenario; the run counts them.
//!
//! Every [`Guard::every`] events the run adds up what each of them holds,
//! replaces the estimate's allowance for it by the count where the count is
//! larger, and stops with a `SimulationError` if the whole is then above
//! `simulation.max_memory`. The results recorded until then stay in the
//! simulation, and what the host builds of them is counted in the whole,
//! so they can still be taken within the limit.
//!
//! A check reads a few lengths and the held packets of the links with
//! `backpressure`; none happens inside the run loop's iterations, whose
//! bound is only lowered to the next check.

use super::{bytes, count, Estimate, Host, CAPTURES, FLOWS, HELD, LOGS, SAMPLER};
use super::{CONGESTION_ROW, CWND_ROW, DROP_ROW, SAMPLE_ROW, SEQ_ROW, TRAFFIC_ROW};
use crate::error::{Error, Result};
use crate::ids::LinkId;
use crate::sim::Simulation;

/// Events between checks, at the least: at most a few megabytes can grow
/// in between (a CBR source's packet per event), and a check then costs
/// well under a thousandth of the events' time.
const EVERY: u64 = 1 << 18;
/// Events between checks per link with backpressure: a check reads each.
const EVERY_PER_LINK: u64 = 64;

/// The limit, the estimate's allowances, and when to check next.
#[derive(Debug)]
pub(crate) struct Guard {
    limit: f64,
    /// The estimate's total.
    planned: f64,
    /// The estimate, for the allowance and the per-item bytes of each
    /// part that grows.
    estimate: Estimate,
    host: Host,
    /// The links whose ports can hold packets back.
    backpressure: Vec<LinkId>,
    /// The event count at which the next check is due.
    pub(crate) next: u64,
    every: u64,
}

/// One thing that grew: its part of the estimate, its count and bytes now.
struct Grown {
    part: usize,
    what: String,
    count: f64,
    unit: &'static str,
    bytes: f64,
}

impl Guard {
    pub(crate) fn new(estimate: Estimate, limit: u64, host: Host) -> Guard {
        Guard {
            limit: limit as f64,
            planned: estimate.total(),
            estimate,
            host,
            backpressure: Vec::new(),
            next: EVERY,
            every: EVERY,
        }
    }

    /// Count the packets held back at `links`, the links with
    /// backpressure.
    pub(crate) fn watch(&mut self, links: Vec<LinkId>) {
        self.every = EVERY.max(EVERY_PER_LINK * links.len() as u64);
        self.next = self.every;
        self.backpressure = links;
    }
}

impl Simulation {
    /// What each growing part holds now.
    fn grown(&self) -> [Grown; 5] {
        let g = &self.guard;
        let rows = g.host.rows();
        let held_each = g.estimate.parts[HELD].how.each;
        let (held, most) = g
            .backpressure
            .iter()
            .map(|&l| (self.links[l.idx()].port.held_len() as f64, l))
            .fold((0.0, None), |(sum, most), (n, l)| {
                let most = match most {
                    Some((m, _)) if m >= n => most,
                    _ => Some((n, l)),
                };
                (sum + n, most)
            });
        let held_what = match most {
            Some((_, l)) => format!(
                "the packets held back by backpressure (most at link {})",
                self.links[l.idx()].name
            ),
            None => "the packets held back by backpressure".into(),
        };
        let logs = self.drops.time_ns.len() as f64 * DROP_ROW as f64
            + self.congestion.time_ns.len() as f64 * CONGESTION_ROW as f64
            + self.taps.seq.log.time_ns.len() as f64 * SEQ_ROW as f64;
        let log_rows = self.drops.time_ns.len()
            + self.congestion.time_ns.len()
            + self.taps.seq.log.time_ns.len();
        let sampler = self.timeseries.time_ns.len() as f64 * SAMPLE_ROW as f64
            + self.cwnd.time_ns.len() as f64 * CWND_ROW as f64
            + self.traffic.time_ns.len() as f64 * TRAFFIC_ROW as f64;
        let sampler_rows =
            self.timeseries.time_ns.len() + self.cwnd.time_ns.len() + self.traffic.time_ns.len();
        let captured = self.taps.captures.bytes() as f64;
        let flows = self.flows.len() as f64;
        [
            Grown {
                part: HELD,
                what: held_what,
                count: held,
                unit: "packets",
                bytes: held * held_each,
            },
            Grown {
                part: LOGS,
                what: "the drop, congestion and sequence logs".into(),
                count: log_rows as f64,
                unit: "rows",
                bytes: logs * rows,
            },
            Grown {
                part: SAMPLER,
                what: "the sampler's rows".into(),
                count: sampler_rows as f64,
                unit: "rows",
                bytes: sampler * rows,
            },
            Grown {
                part: CAPTURES,
                what: "the packet captures".into(),
                count: captured,
                unit: "bytes",
                bytes: captured * g.host.capture(),
            },
            Grown {
                part: FLOWS,
                what: "the connections opened".into(),
                count: flows,
                unit: "connections",
                bytes: flows * g.estimate.parts[FLOWS].how.each,
            },
        ]
    }

    /// The run's memory as it stands: the estimate, with each growing part
    /// counted as it is where it has outgrown its allowance. An error if
    /// that is above the limit.
    #[cold]
    #[inline(never)]
    pub(crate) fn check_growth(&mut self) -> Result<()> {
        self.guard.next = self.queue.processed() + self.guard.every;
        let g = &self.guard;
        let grown = self.grown();
        let excess = |x: &Grown| (x.bytes - g.estimate.parts[x.part].bytes).max(0.0);
        let in_use = g.planned + grown.iter().map(excess).sum::<f64>();
        if in_use <= g.limit {
            return Ok(());
        }
        let worst = grown
            .iter()
            .max_by(|a, b| excess(a).total_cmp(&excess(b)))
            .expect("five parts");
        let part = &g.estimate.parts[worst.part];
        let now = self.now.secs_f64();
        Err(Error::Simulation(format!(
            "out of memory: {} grew to {} {} ({}; the estimate allowed {}) by t = {now:.6} s; \
             with the rest of the run and its results that is about {}, above \
             simulation.max_memory = {} (raise it with satqm run --max-memory, or shrink {}). \
             The run stopped there: the results recorded up to t = {now:.6} s are kept",
            worst.what,
            count(worst.count),
            worst.unit,
            bytes(worst.bytes),
            bytes(part.bytes),
            bytes(in_use),
            bytes(g.limit),
            part.key,
        )))
    }
}
