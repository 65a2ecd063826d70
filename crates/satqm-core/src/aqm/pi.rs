//! The PI controller of Hollot, Misra, Towsley & Gong ("On designing
//! improved controllers for AQM routers supporting TCP flows", INFOCOM
//! 2001), in its discrete form, updated at `sample_rate`:
//!
//! ```text
//! p <- a (q - q_ref) - b (q_old - q_ref) + p,   clamped to [0, 1];  q_old <- q
//! ```
//!
//! `a`, `b` may be given directly or from gains `kp`, `ki` by the bilinear
//! transform: `a = kp + ki T/2`, `b = kp - ki T/2`, `T = 1/sample_rate`.
//! `q_old` and `p` start at 0.

use super::params::ParamTable;
use super::{PacketMeta, Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct PiParams {
    pub a: f64,
    pub b: f64,
    pub q_ref: f64,
    pub sample_rate: f64,
}

impl PiParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<PiParams, ConfigError> {
        let q_ref = t.required_f64("q_ref", 0.0, false, 1e9)?;
        let sample_rate = t.required_f64("sample_rate", 1e-3, false, 1e9)?;
        let (has_ab, has_k) = (t.has("a") || t.has("b"), t.has("kp") || t.has("ki"));
        let (a, b) = match (has_ab, has_k) {
            (true, false) => (
                t.required_f64("a", -1.0, false, 1.0)?,
                t.required_f64("b", -1.0, false, 1.0)?,
            ),
            (false, true) => {
                let kp = t.required_f64("kp", -1.0, false, 1.0)?;
                let ki = t.required_f64("ki", -1e3, false, 1e3)?;
                let half_t = 0.5 / sample_rate;
                (kp + ki * half_t, kp - ki * half_t)
            }
            (true, true) => {
                return Err(ConfigError::new(
                    t.key_path("a"),
                    "give either a and b, or kp and ki, not both",
                ))
            }
            (false, false) => {
                return Err(ConfigError::new(
                    t.key_path("a"),
                    "is required (or kp and ki)",
                ))
            }
        };
        Ok(PiParams {
            a,
            b,
            q_ref,
            sample_rate,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Pi {
    p: PiParams,
    prob: f64,
    q_old: f64,
}

impl Pi {
    pub fn new(p: PiParams) -> Pi {
        Pi {
            p,
            prob: 0.0,
            q_old: 0.0,
        }
    }

    pub fn interval(&self) -> SimTime {
        SimTime::from_secs_f64(1.0 / self.p.sample_rate).max(SimTime(1))
    }

    pub fn on_timer(&mut self, q: &QueueView) {
        let cur = q.q_packets as f64;
        let p = &self.p;
        self.prob =
            (p.a * (cur - p.q_ref) - p.b * (self.q_old - p.q_ref) + self.prob).clamp(0.0, 1.0);
        self.q_old = cur;
    }

    pub fn on_arrival(
        &mut self,
        _now: SimTime,
        _pkt: PacketMeta,
        _q: &QueueView,
        u: f64,
    ) -> Verdict {
        if u < self.prob {
            Verdict::Mark(Reason::Early)
        } else {
            Verdict::Pass
        }
    }

    /// The marking probability.
    pub fn probe(&self, put: &mut Probe) {
        put("aqm_prob", self.prob);
    }
}
