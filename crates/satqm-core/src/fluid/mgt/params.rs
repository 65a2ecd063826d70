//! The MGT model's inputs: one parameter set per member ([`MgtParams`], with
//! the AQM closing it, [`AqmLaw`]) and the settings shared by a run
//! ([`MgtSettings`]), each validated once; errors name the keys of the
//! Python API (`N`, `C`, `Tp`, `W0`, ...).

use crate::error::ConfigError;
use crate::fluid::history::Interpolation;
use crate::fluid::integrator::StepPlan;

/// Longest delay history kept per parameter set, in steps (256 MiB of f64).
pub const MAX_HISTORY_STEPS: usize = 1 << 25;

/// The AQM closures, by the names the Python API uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AqmKind {
    Red,
    Pi,
    Avq,
    Fixed,
    DropTail,
}

impl AqmKind {
    pub const ALL: [AqmKind; 5] = [
        AqmKind::Red,
        AqmKind::Pi,
        AqmKind::Avq,
        AqmKind::Fixed,
        AqmKind::DropTail,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AqmKind::Red => "red",
            AqmKind::Pi => "pi",
            AqmKind::Avq => "avq",
            AqmKind::Fixed => "fixed",
            AqmKind::DropTail => "droptail",
        }
    }

    pub fn from_name(name: &str) -> Option<AqmKind> {
        AqmKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// RED as MGT model it: continuous EWMA of the queue and the RED profile.
#[derive(Clone, Debug, PartialEq)]
pub struct RedLaw {
    /// Thresholds (packets), `0 <= min_th < max_th`.
    pub min_th: f64,
    pub max_th: f64,
    /// Marking probability at `max_th`, in [0, 1].
    pub max_p: f64,
    /// EWMA weight per sample, in (0, 1).
    pub w_q: f64,
    /// Gentle mode: linear from `max_p` to 1 over `[max_th, 2 max_th]`.
    pub gentle: bool,
    /// Averaging sample interval δ (s); `None` for `1/C`.
    pub delta_s: Option<f64>,
}

/// PI gains: continuous, or ns-2 coefficients at a sampling frequency.
#[derive(Clone, Debug, PartialEq)]
pub enum PiGains {
    /// `K_p` (1/packet) and `K_i` (1/(packet s)), both >= 0.
    Continuous { kp: f64, ki: f64 },
    /// `a >= b` and `fs` (Hz): `K_p = (a+b)/2`, `K_i = (a-b)/(1/fs)`.
    Discrete { a: f64, b: f64, fs: f64 },
}

/// PI controller in continuous (velocity) form.
#[derive(Clone, Debug, PartialEq)]
pub struct PiLaw {
    /// Reference queue (packets), >= 0.
    pub q_ref: f64,
    pub gains: PiGains,
    /// Initial marking probability, in [0, 1].
    pub p0: f64,
}

/// AVQ: virtual capacity adapted towards utilisation γ.
#[derive(Clone, Debug, PartialEq)]
pub struct AvqLaw {
    /// Desired utilisation, in (0, 1].
    pub gamma: f64,
    /// Smoothing parameter α (1/s), >= 0.
    pub alpha: f64,
    /// Virtual buffer (packets), >= 0; 0 for bufferless marking.
    pub vq_buffer: f64,
    /// Initial virtual capacity (packets/s); `None` for `γC`. Capped at `C`.
    pub vcap0: Option<f64>,
}

/// The AQM closing the model.
#[derive(Clone, Debug, PartialEq)]
pub enum AqmLaw {
    Red(RedLaw),
    Pi(PiLaw),
    Avq(AvqLaw),
    /// Constant marking probability `p`, in [0, 1].
    Fixed {
        p: f64,
    },
    /// No marking; only buffer overflow (needs a finite buffer).
    DropTail,
}

impl AqmLaw {
    pub fn kind(&self) -> AqmKind {
        match self {
            AqmLaw::Red(_) => AqmKind::Red,
            AqmLaw::Pi(_) => AqmKind::Pi,
            AqmLaw::Avq(_) => AqmKind::Avq,
            AqmLaw::Fixed { .. } => AqmKind::Fixed,
            AqmLaw::DropTail => AqmKind::DropTail,
        }
    }

    /// Check the law's values; `buffer` is the set's (drop-tail needs a
    /// finite one). The error names the key (unindexed).
    fn validate(&self, buffer: f64) -> Result<(), ConfigError> {
        match self {
            AqmLaw::Red(r) => {
                nonnegative("min_th", r.min_th)?;
                positive("max_th", r.max_th)?;
                in_range("max_p", r.max_p, 0.0, 1.0, false, false)?;
                in_range("w_q", r.w_q, 0.0, 1.0, true, true)?;
                if r.min_th >= r.max_th {
                    return Err(ConfigError::new(
                        "min_th",
                        format!("must be < max_th = {}, got {}", r.max_th, r.min_th),
                    ));
                }
                if let Some(d) = r.delta_s {
                    positive("red_delta", d)?;
                }
            }
            AqmLaw::Pi(pi) => {
                nonnegative("q_ref", pi.q_ref)?;
                in_range("p0", pi.p0, 0.0, 1.0, false, false)?;
                match pi.gains {
                    PiGains::Continuous { kp, ki } => {
                        nonnegative("kp", kp)?;
                        nonnegative("ki", ki)?;
                    }
                    PiGains::Discrete { a, b, fs } => {
                        finite("a", a)?;
                        finite("b", b)?;
                        positive("fs", fs)?;
                        if a < b {
                            return Err(ConfigError::new(
                                "a",
                                format!(
                                    "must be >= b (non-negative integral gain), got a = {a}, b = {b}"
                                ),
                            ));
                        }
                        if (a + b) / 2.0 < 0.0 {
                            return Err(ConfigError::new(
                                "a",
                                format!("a = {a} and b = {b} give a negative proportional gain"),
                            ));
                        }
                    }
                }
            }
            AqmLaw::Avq(v) => {
                in_range("gamma", v.gamma, 0.0, 1.0, true, false)?;
                nonnegative("alpha", v.alpha)?;
                nonnegative("vq_buffer", v.vq_buffer)?;
                if let Some(c0) = v.vcap0 {
                    nonnegative("vcap0", c0)?;
                }
            }
            AqmLaw::Fixed { p } => in_range("p_fixed", *p, 0.0, 1.0, false, false)?,
            AqmLaw::DropTail => {
                if !buffer.is_finite() {
                    return Err(ConfigError::new(
                        "buffer",
                        "must be finite for aqm='droptail'",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One parameter set. Error paths use the keys of the Python API (`N`,
/// `C`, `Tp`, `W0`, …), given beside each field.
#[derive(Clone, Debug, PartialEq)]
pub struct MgtParams {
    /// `N`: number of TCP flows, > 0.
    pub n: f64,
    /// `C`: link capacity (packets/s), > 0.
    pub c: f64,
    /// `Tp`: round-trip propagation delay (s), >= `dt`.
    pub tp: f64,
    /// `W0`: initial window (packets), > 0.
    pub w0: f64,
    /// `q0`: initial queue (packets), >= 0 (capped at the buffer).
    pub q0: f64,
    /// `buffer`: buffer (packets), > 0; infinite for none.
    pub buffer: f64,
    /// `w_min`, `w_max`: window limits (packets), `0 < w_min < w_max`
    /// (`w_max` may be infinite).
    pub w_min: f64,
    pub w_max: f64,
    pub aqm: AqmLaw,
}

impl MgtParams {
    /// A parameter set with the defaults of the Python API: `W0 = 1`,
    /// `q0 = 0`, no buffer limit, window in `[1, ∞)`.
    pub fn new(n: f64, c: f64, tp: f64, aqm: AqmLaw) -> MgtParams {
        MgtParams {
            n,
            c,
            tp,
            w0: 1.0,
            q0: 0.0,
            buffer: f64::INFINITY,
            w_min: 1.0,
            w_max: f64::INFINITY,
            aqm,
        }
    }

    /// Check every value; the error names the key (unindexed).
    pub fn validate(&self, settings: &MgtSettings) -> Result<(), ConfigError> {
        positive("N", self.n)?;
        positive("C", self.c)?;
        positive("Tp", self.tp)?;
        positive("W0", self.w0)?;
        nonnegative("q0", self.q0)?;
        positive_or_inf("buffer", self.buffer)?;
        positive("w_min", self.w_min)?;
        positive_or_inf("w_max", self.w_max)?;
        if self.tp < settings.dt_s {
            return Err(ConfigError::new(
                "Tp",
                format!("must be >= dt = {}, got {}", settings.dt_s, self.tp),
            ));
        }
        if self.w_min >= self.w_max {
            return Err(ConfigError::new(
                "w_min",
                format!("must be < w_max = {}, got {}", self.w_max, self.w_min),
            ));
        }
        self.aqm.validate(self.buffer)?;
        self.check_history(settings)
    }

    /// Delay-history length in steps: the longest round trip
    /// `Tp + B/C` (or `Tp + max_queue_delay` with no buffer limit), rounded,
    /// plus two. Checked against [`MAX_HISTORY_STEPS`] by `validate`.
    pub(super) fn history_len(&self, settings: &MgtSettings) -> usize {
        self.longest_rtt_steps(settings) as usize + 2
    }

    fn longest_rtt_steps(&self, settings: &MgtSettings) -> f64 {
        let q_max = if self.buffer.is_finite() {
            self.buffer
        } else {
            self.c * settings.max_queue_delay_s
        };
        (self.tp + q_max / self.c) / settings.dt_s + 0.5
    }

    fn check_history(&self, settings: &MgtSettings) -> Result<(), ConfigError> {
        let steps = self.longest_rtt_steps(settings);
        if steps < (MAX_HISTORY_STEPS - 2) as f64 {
            return Ok(());
        }
        let key = if self.buffer.is_finite() {
            "buffer"
        } else {
            "max_queue_delay"
        };
        Err(ConfigError::new(
            key,
            format!(
                "the longest round trip is more than {} steps of dt = {} s: too long a delay history",
                MAX_HISTORY_STEPS - 2,
                settings.dt_s
            ),
        ))
    }
}

/// Settings shared by every parameter set of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct MgtSettings {
    /// Model time to integrate (s), > 0 and at least one step.
    pub duration_s: f64,
    /// Fixed step (s), > 0.
    pub dt_s: f64,
    /// Record every this many steps, >= 1.
    pub record_every: u64,
    /// Longest queueing delay kept in the history when the buffer is
    /// infinite (s), > 0.
    pub max_queue_delay_s: f64,
    /// How the delayed term is read between steps.
    pub interpolation: Interpolation,
}

impl MgtSettings {
    /// `duration_s` at `dt_s`, recording every step, 10 s of queueing delay
    /// kept, nearest-step delays.
    pub fn new(duration_s: f64, dt_s: f64) -> MgtSettings {
        MgtSettings {
            duration_s,
            dt_s,
            record_every: 1,
            max_queue_delay_s: 10.0,
            interpolation: Interpolation::Nearest,
        }
    }

    /// Check the settings and return the step plan.
    pub fn plan(&self) -> Result<StepPlan, ConfigError> {
        let plan = StepPlan::from_duration(self.duration_s, self.dt_s, self.record_every)?;
        positive("max_queue_delay", self.max_queue_delay_s)?;
        Ok(plan)
    }
}

// ---------------------------------------------------------------------------
// Validation helpers: NaN fails every comparison, so `!(v > 0)` catches it.
// ---------------------------------------------------------------------------

fn finite(key: &str, v: f64) -> Result<(), ConfigError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::new(key, format!("must be finite, got {v}")))
    }
}

fn positive(key: &str, v: f64) -> Result<(), ConfigError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::new(
            key,
            format!("must be > 0 and finite, got {v}"),
        ))
    }
}

fn positive_or_inf(key: &str, v: f64) -> Result<(), ConfigError> {
    if v > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::new(key, format!("must be > 0, got {v}")))
    }
}

fn nonnegative(key: &str, v: f64) -> Result<(), ConfigError> {
    if v >= 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::new(
            key,
            format!("must be >= 0 and finite, got {v}"),
        ))
    }
}

fn in_range(
    key: &str,
    v: f64,
    lo: f64,
    hi: f64,
    lo_open: bool,
    hi_open: bool,
) -> Result<(), ConfigError> {
    let above = if lo_open { v > lo } else { v >= lo };
    let below = if hi_open { v < hi } else { v <= hi };
    if above && below {
        Ok(())
    } else {
        let lb = if lo_open { "(" } else { "[" };
        let hb = if hi_open { ")" } else { "]" };
        Err(ConfigError::new(
            key,
            format!("must be in {lb}{lo}, {hi}{hb}, got {v}"),
        ))
    }
}
