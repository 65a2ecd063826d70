//! The scenario schema and its validation: the one place where a scenario
//! file is checked.
//!
//! A scenario is read in two steps. Serde reads the TOML into the `Raw*`
//! structs of [`raw`], the file's shape (unknown keys are refused, and
//! `serde_path_to_error` reports the key path of any type error). Then
//! [`Scenario::from_raw`] runs one validator per section, each in its own
//! file (`simulation`, `topology`, `tcp`, `traffic`, `aqm`, `pep`), which
//! checks every rule and converts quantities (see [`crate::units`]) to the
//! typed values the simulator uses. Every error names its key path and the
//! rule, e.g. `topology.bottleneck.rate: must be > 0`.
//!
//! Where things go: the file's shape in `raw.rs`; a section's rules in its
//! validator; the types a section produces beside their validator when only
//! the simulation reads them ([`Traffic`], [`AqmConfig`], [`PepConfig`]),
//! and with their owners when a lower layer reads them (`TcpConfig` in
//! `transport::tcp`, link and topology specs in `topology`, `BufferLimit` in
//! `queue`, `DelayModel` in `net`). Nothing below the simulation imports
//! this module.

mod aqm;
mod atsp;
mod emulation;
mod pep;
pub mod raw;
mod schedule;
mod simulation;
mod tcp;
mod topology;
mod traffic;

use std::collections::BTreeMap;

use crate::capture::CaptureSpec;
use crate::error::{ConfigError, Error};
use crate::time::SimTime;
use crate::topology::Topology;
use crate::units::Quantity;

pub use aqm::{AqmConfig, AqmMode};
pub use emulation::{EmulationSpec, DEFAULT_SUBNET};
pub use pep::{Backbone, PepConfig};
pub use raw::RawScenario;
pub use simulation::DEFAULT_MAX_MEMORY;
pub use traffic::{StartSpec, Traffic, TrafficKind};

use raw::RawTcp;

/// Values that replace the file's, as a command line's `--seed`,
/// `--duration`, `--warmup` and `--max-memory` do.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub seed: Option<u64>,
    /// `simulation.duration` in seconds: a number, the unit being in the name.
    pub duration_s: Option<f64>,
    /// `simulation.warmup` in seconds: a number, the unit being in the name.
    pub warmup_s: Option<f64>,
    /// `simulation.max_memory`, as written ("16 GB").
    pub max_memory: Option<Quantity>,
    /// `simulation.capture`: the links to capture, replacing the file's.
    pub capture: Option<Vec<String>>,
    /// `simulation.capture_side`, replacing the file's.
    pub capture_side: Option<String>,
    /// The text of the files the scenario names, by the name it gives
    /// them ([`Scenario::files_named`]): the caller reads them.
    pub files: BTreeMap<String, String>,
}

/// A validated scenario, ready to build.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration: SimTime,
    pub sample_interval: SimTime,
    pub warmup: SimTime,
    /// The most memory the run may need by its up-front estimate (bytes).
    pub max_memory: u64,
    /// The most rows the per-packet drop log keeps (0: none, `u64::MAX`:
    /// every drop). Past them the summary still counts drops and marks,
    /// and the `drops` table stops growing.
    pub drop_log_rows: u64,
    pub trace_cwnd: Vec<u32>,
    /// Record each traffic entry's cumulative delivered bytes at every
    /// sample (the `traffic` table).
    pub trace_traffic: bool,
    /// Flows whose packets are recorded for sequence graphs.
    pub trace_seq: Vec<u32>,
    /// Packet captures to write (`simulation.capture`).
    pub capture: Option<CaptureSpec>,
    pub topology: Topology,
    pub traffic: Vec<Traffic>,
    pub aqm: Vec<AqmConfig>,
    pub pep: Vec<PepConfig>,
    /// The real hosts, if the scenario can be emulated.
    pub emulation: Option<EmulationSpec>,
}

impl Scenario {
    /// Parse and validate TOML text.
    pub fn from_toml(text: &str) -> Result<Scenario, Error> {
        Scenario::from_toml_with(text, None, None)
    }

    /// Parse TOML text, replace the seed and/or duration (as a command
    /// line's `--seed` and `--duration` do), then validate.
    pub fn from_toml_with(
        text: &str,
        seed: Option<u64>,
        duration_s: Option<f64>,
    ) -> Result<Scenario, Error> {
        let o = Overrides {
            seed,
            duration_s,
            ..Overrides::default()
        };
        Scenario::from_toml_overrides(text, &o)
    }

    /// Parse TOML text, put the overrides in place of the file's values,
    /// then validate.
    pub fn from_toml_overrides(text: &str, o: &Overrides) -> Result<Scenario, Error> {
        let mut raw = RawScenario::from_toml(text)?;
        if let Some(s) = o.seed {
            let s = i64::try_from(s)
                .map_err(|_| ConfigError::new("simulation.seed", "must be below 2^63"))?;
            raw.simulation.seed = Some(s);
        }
        if let Some(d) = o.duration_s {
            raw.simulation.duration = Quantity::Base(d);
        }
        if let Some(w) = o.warmup_s {
            raw.simulation.warmup = Some(Quantity::Base(w));
        }
        if let Some(m) = &o.max_memory {
            raw.simulation.max_memory = Some(m.clone());
        }
        if let Some(c) = &o.capture {
            raw.simulation.capture = Some(c.clone());
        }
        if let Some(c) = &o.capture_side {
            raw.simulation.capture_side = Some(c.clone());
        }
        raw.read_files = o.files.clone();
        Ok(Scenario::from_raw(&raw)?)
    }

    /// The files a scenario text names (link schedules' traces) and does
    /// not carry in its `[files]` table, as it names them, for the caller
    /// to read and hand over in [`Overrides::files`].
    pub fn files_named(text: &str) -> Result<Vec<String>, Error> {
        let raw = RawScenario::from_toml(text)?;
        let t = &raw.topology;
        let links = [
            &t.access,
            &t.receiver_access,
            &t.bottleneck,
            &t.server_links,
            &t.client_links,
            &t.receive,
            &t.downlink,
            &t.uplink,
        ];
        let mut names: Vec<String> = links
            .into_iter()
            .flatten()
            .filter_map(|l| l.schedule.as_ref())
            .flat_map(|s| [s.trace.clone(), s.mahimahi.clone()])
            .flatten()
            .filter(|name| !raw.files.contains_key(name))
            .collect();
        names.dedup();
        Ok(names)
    }

    /// Check every rule and convert to typed values, section by section in
    /// a fixed order (the first broken rule is the one reported).
    pub fn from_raw(raw: &RawScenario) -> Result<Scenario, ConfigError> {
        let run = simulation::run(&raw.simulation)?;
        let mut files = raw.files.clone();
        files.extend(raw.read_files.iter().map(|(k, v)| (k.clone(), v.clone())));
        let topology = topology::topology(&raw.topology, &files)?;
        let tcp_default = RawTcp::default();
        let tcp_base = raw.tcp.as_ref().unwrap_or(&tcp_default);
        // Check the defaults on their own so that errors point at [tcp].
        tcp::tcp_for(tcp_base, None, "tcp")?;
        let emulation = emulation::emulation(raw.emulation.as_ref())?;
        let traffic = traffic::traffic(
            &raw.traffic,
            tcp_base,
            topology.pairs(),
            run.duration,
            emulation.is_some(),
        )?;
        let n_flows = traffic.iter().map(|t| t.pairs.len()).sum();
        let trace_cwnd = simulation::trace_cwnd(&raw.simulation, n_flows)?;
        let aqm = aqm::aqms(raw.aqm.as_ref())?;
        let pep = pep::peps(raw.pep.as_ref(), tcp_base)?;
        Ok(Scenario {
            name: raw.name.clone().unwrap_or_else(|| "scenario".into()),
            seed: run.seed,
            duration: run.duration,
            sample_interval: run.sample_interval,
            warmup: run.warmup,
            max_memory: run.max_memory,
            drop_log_rows: run.drop_log_rows,
            trace_cwnd,
            trace_traffic: run.trace_traffic,
            trace_seq: simulation::trace_seq(&raw.simulation, &traffic)?,
            capture: simulation::capture(&raw.simulation, run.duration)?,
            topology,
            traffic,
            aqm,
            pep,
            emulation,
        })
    }
}

/// A small valid scenario and an error reader, for the validators' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::Scenario;
    use crate::error::Error;

    pub const BASE: &str = r#"
[simulation]
duration = "10 s"
[topology]
kind = "dumbbell"
pairs = 3
[topology.access]
rate = "100 Mbps"
delay = "5 ms"
[topology.bottleneck]
rate = "10 Mbps"
delay = "290 ms"
buffer = 800
[[traffic]]
kind = "bulk"
"#;

    /// The validation error of `text` as the user sees it, `"ok"` if it is
    /// valid, or `"other: ..."` for an error that is not a config error.
    pub fn err(text: &str) -> String {
        match Scenario::from_toml(text) {
            Err(Error::Config(e)) => e.to_string(),
            Err(e) => format!("other: {e}"),
            Ok(_) => "ok".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::BASE;
    use super::{Overrides, Scenario};
    use crate::error::Error;
    use crate::time::SimTime;

    /// The scenario, or its validation error as the user sees it.
    fn with(text: &str, o: Overrides) -> Result<Scenario, String> {
        Scenario::from_toml_overrides(text, &o).map_err(|e| match e {
            Error::Config(c) => c.to_string(),
            e => format!("other: {e}"),
        })
    }

    #[test]
    fn warmup_override_replaces_the_files() {
        let text = BASE.replace(
            "duration = \"10 s\"",
            "duration = \"100 s\"\nwarmup = \"60 s\"",
        );
        // A shorter run than the file's warm-up is refused...
        let short = Overrides {
            duration_s: Some(30.0),
            ..Overrides::default()
        };
        assert_eq!(
            with(&text, short.clone()).unwrap_err(),
            "simulation.warmup: must be less than simulation.duration"
        );
        // ...unless the warm-up is replaced as well.
        let s = with(
            &text,
            Overrides {
                warmup_s: Some(10.0),
                ..short
            },
        )
        .unwrap();
        assert_eq!(s.duration, SimTime::from_secs_f64(30.0));
        assert_eq!(s.warmup, SimTime::from_secs_f64(10.0));
        // A warm-up alone is checked against the file's duration.
        let long = Overrides {
            warmup_s: Some(100.0),
            ..Overrides::default()
        };
        assert_eq!(
            with(&text, long).unwrap_err(),
            "simulation.warmup: must be less than simulation.duration"
        );
    }
}
