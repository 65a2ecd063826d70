//! Validates `[simulation]`: how long the run lasts, its seed, how often the
//! sampler records, the warm-up the summary leaves out, and which flows'
//! congestion windows are traced.

use crate::error::ConfigError;
use crate::time::SimTime;
use crate::units::{int_in, quantity_bytes, quantity_time, Quantity};

use super::raw::RawSimulation;

/// Most samples a run may record per monitored link.
const MAX_SAMPLES: u64 = 10_000_000;

/// The default of `simulation.max_memory`: a fixed 8 GB rather than a
/// share of the machine's memory, so that whether a scenario is accepted
/// does not depend on the machine that reads it.
pub const DEFAULT_MAX_MEMORY: u64 = 8_000_000_000;

/// The run's settings, apart from the traced flows (which need the traffic
/// to be known: see [`trace_cwnd`]).
pub(super) struct Run {
    pub seed: u64,
    pub duration: SimTime,
    pub sample_interval: SimTime,
    pub warmup: SimTime,
    pub max_memory: u64,
    pub log_drops: bool,
}

pub(super) fn run(sim: &RawSimulation) -> Result<Run, ConfigError> {
    let duration = quantity_time(&sim.duration, "simulation.duration", false)?;
    let sample_interval = match &sim.sample_interval {
        Some(q) => quantity_time(q, "simulation.sample_interval", false)?,
        None => SimTime::from_ms(100),
    };
    if sample_interval < SimTime::from_us(1) {
        return Err(ConfigError::new(
            "simulation.sample_interval",
            "must be at least 1 us",
        ));
    }
    if duration.ns() / sample_interval.ns() > MAX_SAMPLES {
        return Err(ConfigError::new(
            "simulation.sample_interval",
            format!("gives more than {MAX_SAMPLES} samples over simulation.duration; use a longer interval"),
        ));
    }
    let warmup = match &sim.warmup {
        Some(q) => quantity_time(q, "simulation.warmup", true)?,
        None => SimTime::ZERO,
    };
    if warmup >= duration {
        return Err(ConfigError::new(
            "simulation.warmup",
            "must be less than simulation.duration",
        ));
    }
    let seed = match sim.seed {
        Some(s) if s < 0 => return Err(ConfigError::new("simulation.seed", "must be >= 0")),
        Some(s) => s as u64,
        None => 1,
    };
    Ok(Run {
        seed,
        duration,
        sample_interval,
        warmup,
        max_memory: max_memory(sim.max_memory.as_ref())?,
        log_drops: sim.log_drops.unwrap_or(true),
    })
}

/// `simulation.max_memory` (a byte quantity such as "16 GB"), or its
/// default.
pub(super) fn max_memory(q: Option<&Quantity>) -> Result<u64, ConfigError> {
    match q {
        Some(q) => quantity_bytes(q, "simulation.max_memory"),
        None => Ok(DEFAULT_MAX_MEMORY),
    }
}

/// The flows whose congestion window the sampler records: ids below
/// `n_flows`, one per pair of each traffic entry.
pub(super) fn trace_cwnd(sim: &RawSimulation, n_flows: usize) -> Result<Vec<u32>, ConfigError> {
    sim.trace_cwnd
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, f)| {
            let path = format!("simulation.trace_cwnd[{i}]");
            Ok(int_in(*f, &path, 0, n_flows as i64 - 1)? as u32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};

    #[test]
    fn run_settings_are_bounded() {
        assert_eq!(
            err(&BASE.replace("duration = \"10 s\"", "duration = 1e300")),
            "simulation.duration: must be at most 1e6 s"
        );
        assert_eq!(
            err(&BASE.replace(
                "duration = \"10 s\"",
                "duration = \"10 s\"\nwarmup = \"10 s\""
            )),
            "simulation.warmup: must be less than simulation.duration"
        );
        assert_eq!(
            err(&BASE.replace(
                "duration = \"10 s\"",
                "duration = \"10 s\"\ntrace_cwnd = [3]"
            )),
            "simulation.trace_cwnd[0]: must be between 0 and 2"
        );
    }
}
