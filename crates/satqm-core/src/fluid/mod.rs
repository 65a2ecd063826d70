//! Fluid models: delay-differential equations integrated with a fixed step.
//!
//! * [`history`]: ring-buffer delay histories read at state-dependent delays
//!   (nearest step or linear interpolation).
//! * [`integrator`]: the fixed-step driver (step counting, recording every
//!   k-th state, resumable in slices).
//! * [`mgt`]: the Misra–Gong–Towsley TCP/AQM model (SIGCOMM 2000) with RED,
//!   PI, AVQ, fixed-`p` and drop-tail closures, batched over parameter sets.
//!
//! The Python reference `satqm.models.fluid` (`backend="python"` /
//! `"numpy"`) computes the same model with the same arithmetic; see
//! `docs/models.md`.
//!
//! ```
//! use satqm_core::fluid::{simulate, AqmLaw, MgtParams, MgtSettings};
//! // 60 flows, 3750 packets/s, 200 ms, marking with fixed p = 1 %:
//! // W* = sqrt(2/p) = 14.14 packets.
//! let set = MgtParams::new(60.0, 3750.0, 0.2, AqmLaw::Fixed { p: 0.01 });
//! let out = simulate(&MgtSettings::new(120.0, 1e-3), &[set]).unwrap();
//! let w_end = *out.w.last().unwrap();
//! assert!((w_end - 200f64.sqrt()).abs() < 1e-3);
//! ```

pub mod history;
pub mod integrator;
pub mod mgt;

pub use history::{DelayHistory, Interpolation};
pub use integrator::{FixedStepSystem, StepCursor, StepPlan};
pub use mgt::{
    params_from_columns, simulate, AqmKind, AqmLaw, AvqLaw, MgtBatch, MgtModel, MgtOutput,
    MgtParams, MgtSettings, PiGains, PiLaw, RedLaw,
};
