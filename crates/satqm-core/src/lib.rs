//! satqm-core: a deterministic packet-level simulator for active queue
//! management and transport research on satellite and other long-delay
//! links.
//!
//! ```
//! use satqm_core::Simulation;
//! let text = r#"
//! [simulation]
//! duration = "5 s"
//! [topology]
//! kind = "dumbbell"
//! pairs = 2
//! [topology.access]
//! rate = "100 Mbps"
//! delay = "5 ms"
//! [topology.bottleneck]
//! rate = "10 Mbps"
//! delay = "20 ms"
//! buffer = 100
//! [[traffic]]
//! kind = "bulk"
//! "#;
//! let mut sim = Simulation::from_toml(text).unwrap();
//! sim.run().unwrap();
//! let util = sim.summary().utilization_mean;
//! assert!(util > 0.5);
//! ```

pub mod alloc;
pub mod aqm;
pub mod capture;
pub mod config;
pub mod engine;
pub mod error;
pub mod fluid;
pub mod gateway;
pub mod hint;
pub mod ids;
pub mod net;
pub mod packet;
pub mod probe;
pub mod queue;
pub mod ring;
pub mod rng;
pub mod sim;
pub mod time;
pub mod topology;
pub mod traffic;
pub mod transport;
pub mod units;

pub use config::Scenario;
pub use error::{ConfigError, Error};
pub use sim::Simulation;
pub use time::{Rate, SimTime};
