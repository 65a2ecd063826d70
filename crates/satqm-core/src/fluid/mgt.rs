//! Misra–Gong–Towsley TCP/AQM fluid model (Misra, Gong, Towsley, "Fluid-based
//! analysis of a network of AQM routers supporting TCP flows with an
//! application to RED", ACM SIGCOMM 2000), closed with RED, PI, AVQ, a fixed
//! marking probability or drop-tail.
//!
//! ```text
//! dW/dt = 1/R(t) - W(t) W(t-R(t)) p(t-R(t)) / (2 R(t-R(t)))
//! dq/dt = N W(t)/R(t) - C                (0 <= q <= B)
//! R(t)  = q(t)/C + Tp
//! ```
//!
//! `W` window (packets), `q` queue (packets), `N` flows, `C` capacity
//! (packets/s), `Tp` round-trip propagation delay (s), `B` buffer (packets).
//! AQM laws for `p`:
//!
//! * RED: `dx/dt = (ln(1-w_q)/δ)(x - q)`, integrated exactly over a step,
//!   `x <- x + (1 - (1-w_q)^(dt/δ))(q - x)` (δ the averaging interval,
//!   default `1/C`); `p = max_p (x - min_th)/(max_th - min_th)` between the
//!   thresholds, 0 below, 1 above, or with gentle mode
//!   `max_p + (1 - max_p)(x - max_th)/max_th` up to 1.
//! * PI: `dp/dt = K_p dq/dt + K_i (q - q_ref)`, `0 <= p <= 1` (gains, or
//!   ns-2's `a, b` at `fs` by the bilinear rule `K_p = (a+b)/2`,
//!   `K_i = (a-b) fs`).
//! * AVQ (Kunniyur & Srikant, SIGCOMM 2001, eqs. (1)/(3)):
//!   `dC~/dt = α(γC - λ)`, `0 <= C~ <= C`, `λ = N W/R`; marking from
//!   virtual-queue overflow, bufferless `p = (1 - C~/λ)^+`, or a fluid
//!   virtual queue `dv/dt = λ - C~` in `[0, vq_buffer]` marking `1 - C~/λ`
//!   while full.
//! * fixed `p`; drop-tail (no marking).
//!
//! A full finite buffer drops the fraction `1 - C/λ` of arrivals; TCP sees
//! `p_eff = 1 - (1 - p)(1 - loss)`.
//!
//! Step rule (explicit Euler, fixed `dt`), the same arithmetic in the same
//! order as the reference implementation `satqm.models.fluid` (Python), so
//! the two agree to the last bit on the same libm: the delayed term
//! `h(s) = W(s) p_eff(s) / (2 R(s))` is kept in a [`DelayHistory`] and read
//! at `s = t - R(t)` (nearest step or linear interpolation); `W` is kept in
//! `[w_min, w_max]`; history before `t = 0` is zero (no marking).

use super::history::{DelayHistory, Interpolation};
use super::integrator::{FixedStepSystem, StepCursor, StepPlan};
use crate::error::ConfigError;

/// Longest delay history kept per parameter set, in steps (256 MiB of f64).
pub const MAX_HISTORY_STEPS: usize = 1 << 25;

/// Largest output kept, in f64 values over all series (8 GiB).
pub const MAX_OUTPUT_VALUES: u64 = 1 << 30;

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
        match &self.aqm {
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
                                format!("must be >= b (non-negative integral gain), got a = {a}, b = {b}"),
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
                if !self.buffer.is_finite() {
                    return Err(ConfigError::new(
                        "buffer",
                        "must be finite for aqm='droptail'",
                    ));
                }
            }
        }
        self.check_history(settings)
    }

    /// Delay-history length in steps: the longest round trip
    /// `Tp + B/C` (or `Tp + max_queue_delay` with no buffer limit), rounded,
    /// plus two. Checked against [`MAX_HISTORY_STEPS`] by `validate`.
    fn history_len(&self, settings: &MgtSettings) -> usize {
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

/// AQM constants (with `dt` folded in) and state.
#[derive(Clone, Debug)]
enum Law {
    Red {
        lo: f64,
        hi: f64,
        mp: f64,
        /// `1 - (1 - w_q)^(dt/δ)`.
        cred: f64,
        slope: f64,
        gentle: bool,
        /// Average queue.
        x: f64,
    },
    Pi {
        kp: f64,
        ki_dt: f64,
        q_ref: f64,
    },
    Avq {
        a_dt: f64,
        agc_dt: f64,
        vqb: f64,
        vcap: f64,
        vq: f64,
    },
    Fixed,
    DropTail,
}

/// RED profile as `red_drop_probability` of the reference computes it.
fn red_profile(x: f64, lo: f64, hi: f64, mp: f64, gentle: bool) -> f64 {
    if x >= hi {
        if gentle {
            (mp + (1.0 - mp) * (x - hi) / hi).min(1.0)
        } else {
            1.0
        }
    } else if x < lo {
        0.0
    } else {
        mp * (x - lo) / (hi - lo)
    }
}

/// One parameter set of the MGT model, stepped by [`StepCursor`].
#[derive(Clone, Debug)]
pub struct MgtModel {
    n: f64,
    c: f64,
    tp: f64,
    buffer: f64,
    finite_buffer: bool,
    w_min: f64,
    w_max: f64,
    inv_c: f64,
    dt: f64,
    inv_dt: f64,
    interpolation: Interpolation,
    law: Law,
    w: f64,
    q: f64,
    r: f64,
    p: f64,
    p_eff: f64,
    /// `h(s) = W p_eff / (2R)`.
    hist: DelayHistory,
}

impl MgtModel {
    /// The model at `t = 0`; validates `params` (errors unindexed).
    pub fn new(params: &MgtParams, settings: &MgtSettings) -> Result<MgtModel, ConfigError> {
        params.validate(settings)?;
        Ok(MgtModel::new_validated(params, settings))
    }

    /// The model at `t = 0` for parameters that passed `validate`.
    fn new_validated(params: &MgtParams, settings: &MgtSettings) -> MgtModel {
        let dt = settings.dt_s;
        let c = params.c;
        let q = params.q0.min(params.buffer);
        let (law, p) = match &params.aqm {
            AqmLaw::Red(r) => {
                let delta = r.delta_s.unwrap_or(1.0 / c);
                let cred = 1.0 - ((1.0 - r.w_q).ln() / delta * dt).exp();
                let p = red_profile(q, r.min_th, r.max_th, r.max_p, r.gentle);
                let law = Law::Red {
                    lo: r.min_th,
                    hi: r.max_th,
                    mp: r.max_p,
                    cred,
                    slope: r.max_p / (r.max_th - r.min_th),
                    gentle: r.gentle,
                    x: q,
                };
                (law, p)
            }
            AqmLaw::Pi(pi) => {
                let (kp, ki) = match pi.gains {
                    PiGains::Continuous { kp, ki } => (kp, ki),
                    PiGains::Discrete { a, b, fs } => ((a + b) / 2.0, (a - b) / (1.0 / fs)),
                };
                let law = Law::Pi {
                    kp,
                    ki_dt: ki * dt,
                    q_ref: pi.q_ref,
                };
                (law, pi.p0)
            }
            AqmLaw::Avq(v) => {
                let vcap = v.vcap0.unwrap_or(v.gamma * c).min(c);
                let law = Law::Avq {
                    a_dt: v.alpha * dt,
                    agc_dt: v.alpha * v.gamma * c * dt,
                    vqb: v.vq_buffer,
                    vcap,
                    vq: 0.0,
                };
                (law, 0.0)
            }
            AqmLaw::Fixed { p } => (Law::Fixed, *p),
            AqmLaw::DropTail => (Law::DropTail, 0.0),
        };
        let inv_c = 1.0 / c;
        let r = q * inv_c + params.tp;
        let mut hist = DelayHistory::new(params.history_len(settings), 0.0);
        hist.set_latest(0.5 * params.w0 * p / r);
        MgtModel {
            n: params.n,
            c,
            tp: params.tp,
            buffer: params.buffer,
            finite_buffer: params.buffer.is_finite(),
            w_min: params.w_min,
            w_max: params.w_max,
            inv_c,
            dt,
            inv_dt: 1.0 / dt,
            interpolation: settings.interpolation,
            law,
            w: params.w0,
            q,
            r,
            p,
            p_eff: p,
            hist,
        }
    }

    /// Congestion window (packets).
    pub fn w(&self) -> f64 {
        self.w
    }

    /// Queue (packets).
    pub fn q(&self) -> f64 {
        self.q
    }

    /// Round-trip time `q/C + Tp` (s).
    pub fn rtt(&self) -> f64 {
        self.r
    }

    /// AQM marking probability.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// Marking plus overflow loss seen by TCP.
    pub fn p_eff(&self) -> f64 {
        self.p_eff
    }

    /// AQM state: RED average queue (packets), AVQ virtual capacity
    /// (packets/s), otherwise `p`.
    pub fn aux(&self) -> f64 {
        match self.law {
            Law::Red { x, .. } => x,
            Law::Avq { vcap, .. } => vcap,
            Law::Pi { .. } | Law::Fixed | Law::DropTail => self.p,
        }
    }
}

impl FixedStepSystem for MgtModel {
    #[inline]
    fn step(&mut self) {
        let dt = self.dt;
        let hd = self.hist.at(self.r * self.inv_dt, self.interpolation);
        let inv = 1.0 / self.r;
        let lam = self.n * self.w * inv;
        let mut wn = self.w + (inv - self.w * hd) * dt;
        if wn < self.w_min {
            wn = self.w_min;
        } else if wn > self.w_max {
            wn = self.w_max;
        }
        let mut qn = self.q + (lam - self.c) * dt;
        if qn < 0.0 {
            qn = 0.0;
        } else if qn > self.buffer {
            qn = self.buffer;
        }
        let r = qn * self.inv_c + self.tp;
        match &mut self.law {
            Law::Red {
                lo,
                hi,
                mp,
                cred,
                slope,
                gentle,
                x,
            } => {
                *x += *cred * (self.q - *x);
                let x = *x;
                self.p = if x < *lo {
                    0.0
                } else if x < *hi {
                    (x - *lo) * *slope
                } else if *gentle {
                    let p = *mp + (1.0 - *mp) * (x - *hi) / *hi;
                    if p > 1.0 {
                        1.0
                    } else {
                        p
                    }
                } else {
                    1.0
                };
            }
            Law::Pi { kp, ki_dt, q_ref } => {
                let p = self.p + *kp * (qn - self.q) + *ki_dt * (qn - *q_ref);
                self.p = p.clamp(0.0, 1.0);
            }
            Law::Avq {
                a_dt,
                agc_dt,
                vqb,
                vcap,
                vq,
            } => {
                let lam_n = self.n * wn / r;
                if *vqb > 0.0 {
                    *vq += (lam - *vcap) * dt;
                    *vq = vq.clamp(0.0, *vqb);
                    self.p = if *vq >= *vqb && lam_n > *vcap {
                        1.0 - *vcap / lam_n
                    } else {
                        0.0
                    };
                    *vcap = (*vcap + *agc_dt - *a_dt * lam).clamp(0.0, self.c);
                } else {
                    *vcap = (*vcap + *agc_dt - *a_dt * lam).clamp(0.0, self.c);
                    self.p = if lam_n > *vcap {
                        1.0 - *vcap / lam_n
                    } else {
                        0.0
                    };
                }
            }
            Law::Fixed | Law::DropTail => {}
        }
        self.w = wn;
        self.q = qn;
        self.r = r;
        // Buffer overflow: a full queue drops the fraction 1 - C/λ.
        self.p_eff = if self.finite_buffer && qn >= self.buffer {
            let lam_n = self.n * wn / r;
            if lam_n > self.c {
                1.0 - (1.0 - self.p) * self.c / lam_n
            } else {
                self.p
            }
        } else {
            self.p
        };
        self.hist.push(0.5 * wn * self.p_eff / r);
    }
}

/// Trajectories of a batch: each series is row-major `(n_records, members)`.
#[derive(Clone, Debug, PartialEq)]
pub struct MgtOutput {
    pub members: usize,
    pub n_records: usize,
    /// Record times (s): `k * record_every * dt`.
    pub t: Vec<f64>,
    pub w: Vec<f64>,
    pub q: Vec<f64>,
    pub p: Vec<f64>,
    pub p_eff: Vec<f64>,
    pub aux: Vec<f64>,
}

impl MgtOutput {
    /// Index of record `k` of member `i` in each series.
    pub fn index(&self, k: usize, i: usize) -> usize {
        k * self.members + i
    }

    /// The trajectory of one series for one member.
    pub fn member(&self, series: &[f64], i: usize) -> Vec<f64> {
        series
            .iter()
            .skip(i)
            .step_by(self.members)
            .copied()
            .collect()
    }
}

fn zeros(len: usize) -> Result<Vec<f64>, ConfigError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        ConfigError::new(
            "duration",
            format!("the output ({len} values per series) does not fit in memory"),
        )
    })?;
    v.resize(len, 0.0);
    Ok(v)
}

/// A batch of parameter sets, integrated in groups of four stepped in
/// lockstep (one thread; each set's trajectory is the same as alone),
/// resumable in slices of steps (see [`MgtBatch::advance`]).
#[derive(Debug)]
pub struct MgtBatch {
    settings: MgtSettings,
    plan: StepPlan,
    sets: Vec<MgtParams>,
    out: MgtOutput,
    /// First member not yet finished, the group being integrated and how
    /// far it has got.
    member: usize,
    group: Option<Lockstep>,
    cursor: StepCursor,
}

/// Parameter sets integrated together, one step of each in turn. Each
/// set's arithmetic is unchanged (its trajectory is the same bits as
/// alone), but the sets' dependency chains are independent, so the
/// processor overlaps them: one step of one set is a chain of dependent
/// divisions and multiplications that leaves most of the core idle.
#[derive(Debug)]
struct Lockstep {
    first: usize,
    models: Vec<MgtModel>,
}

/// Sets per [`Lockstep`] group.
const LANES: usize = 4;

impl FixedStepSystem for Lockstep {
    #[inline]
    fn step(&mut self) {
        for m in &mut self.models {
            m.step();
        }
    }
}

impl MgtBatch {
    /// Validate every set (errors name `key[i]` in a batch of more than one)
    /// and allocate the output.
    pub fn new(settings: MgtSettings, sets: Vec<MgtParams>) -> Result<MgtBatch, ConfigError> {
        let plan = settings.plan()?;
        if sets.is_empty() {
            return Err(ConfigError::new(
                "params",
                "needs at least one parameter set",
            ));
        }
        let m = sets.len();
        for (i, s) in sets.iter().enumerate() {
            s.validate(&settings).map_err(|e| index_error(e, i, m))?;
        }
        let n_records = plan.n_records();
        let total = n_records.saturating_mul(m as u64).saturating_mul(5);
        if total > MAX_OUTPUT_VALUES {
            return Err(ConfigError::new(
                "duration",
                format!(
                    "{n_records} records of {m} parameter sets is more output than {MAX_OUTPUT_VALUES} values; record less often"
                ),
            ));
        }
        let n_records = n_records as usize;
        let len = n_records * m;
        let rec_dt = plan.record_every as f64 * settings.dt_s;
        let out = MgtOutput {
            members: m,
            n_records,
            t: (0..n_records).map(|k| k as f64 * rec_dt).collect(),
            w: zeros(len)?,
            q: zeros(len)?,
            p: zeros(len)?,
            p_eff: zeros(len)?,
            aux: zeros(len)?,
        };
        Ok(MgtBatch {
            settings,
            plan,
            sets,
            out,
            member: 0,
            group: None,
            cursor: StepCursor::default(),
        })
    }

    /// Steps of model time in the whole batch (`n_steps × members`).
    pub fn total_steps(&self) -> u64 {
        self.plan.n_steps * self.sets.len() as u64
    }

    /// Whether every member has been integrated.
    pub fn finished(&self) -> bool {
        self.member >= self.sets.len()
    }

    /// Integrate about `budget` steps (summed over members, which are
    /// integrated a few at a time in order); returns whether the batch is
    /// finished.
    pub fn advance(&mut self, mut budget: u64) -> bool {
        while budget > 0 && !self.finished() {
            let out = &mut self.out;
            let group = match &mut self.group {
                Some(group) => group,
                None => {
                    let first = self.member;
                    let end = (first + LANES).min(self.sets.len());
                    // Validated in `MgtBatch::new`.
                    let models: Vec<MgtModel> = self.sets[first..end]
                        .iter()
                        .map(|set| MgtModel::new_validated(set, &self.settings))
                        .collect();
                    let group = Lockstep { first, models };
                    write_group(out, 0, &group);
                    self.cursor = StepCursor::default();
                    self.group.insert(group)
                }
            };
            let lanes = group.models.len() as u64;
            let took = self
                .cursor
                .advance(&self.plan, group, (budget / lanes).max(1), |k, g| {
                    write_group(out, k as usize, g)
                });
            budget = budget.saturating_sub(took * lanes);
            if self.cursor.finished(&self.plan) {
                self.member += group.models.len();
                self.group = None;
            }
        }
        self.finished()
    }

    /// The trajectories (complete once [`finished`](Self::finished)).
    pub fn into_output(self) -> MgtOutput {
        self.out
    }
}

fn write_group(out: &mut MgtOutput, k: usize, g: &Lockstep) {
    let row = k * out.members + g.first;
    for (j, s) in (row..).zip(&g.models) {
        out.w[j] = s.w;
        out.q[j] = s.q;
        out.p[j] = s.p;
        out.p_eff[j] = s.p_eff;
        out.aux[j] = s.aux();
    }
}

fn index_error(e: ConfigError, i: usize, members: usize) -> ConfigError {
    if members > 1 {
        ConfigError::new(format!("{}[{i}]", e.path), e.message)
    } else {
        e
    }
}

/// Integrate every parameter set for `settings.duration_s`.
pub fn simulate(settings: &MgtSettings, sets: &[MgtParams]) -> Result<MgtOutput, ConfigError> {
    let mut batch = MgtBatch::new(settings.clone(), sets.to_vec())?;
    batch.advance(u64::MAX);
    Ok(batch.into_output())
}

// ---------------------------------------------------------------------------
// Parameter sets from named columns (the Python API's keyword arguments)
// ---------------------------------------------------------------------------

/// Keys every closure takes: required, then optional with defaults.
const COMMON_REQUIRED: [&str; 3] = ["N", "C", "Tp"];
const COMMON_OPTIONAL: [&str; 5] = ["W0", "q0", "buffer", "w_min", "w_max"];

fn aqm_keys(kind: AqmKind) -> &'static [&'static str] {
    match kind {
        AqmKind::Red => &["min_th", "max_th", "max_p", "w_q", "red_delta"],
        AqmKind::Pi => &["q_ref", "kp", "ki", "a", "b", "fs", "p0"],
        AqmKind::Avq => &["gamma", "alpha", "vq_buffer", "vcap0"],
        AqmKind::Fixed => &["p_fixed"],
        AqmKind::DropTail => &[],
    }
}

/// Columns broadcast to `members` rows, read by key.
struct Columns<'a> {
    cols: &'a [(String, Vec<f64>)],
    aqm: &'static str,
}

impl Columns<'_> {
    fn get(&self, key: &str) -> Option<&[f64]> {
        self.cols
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }

    fn opt(&self, key: &str, i: usize) -> Option<f64> {
        self.get(key)
            .map(|v| if v.len() == 1 { v[0] } else { v[i] })
    }

    fn or(&self, key: &str, i: usize, default: f64) -> f64 {
        self.opt(key, i).unwrap_or(default)
    }

    fn req(&self, key: &str, i: usize) -> Result<f64, ConfigError> {
        self.opt(key, i)
            .ok_or_else(|| ConfigError::new(key, format!("is required for aqm='{}'", self.aqm)))
    }
}

/// Parameter sets from named columns, as `simulate_fluid`'s keywords:
/// each column holds one value (used for every set) or one per set.
/// `gentle` applies to RED only. Unknown or duplicated keys, columns of
/// different lengths and missing required keys are errors naming the key.
pub fn params_from_columns(
    aqm: &str,
    gentle: bool,
    columns: &[(String, Vec<f64>)],
) -> Result<Vec<MgtParams>, ConfigError> {
    let kind = AqmKind::from_name(aqm).ok_or_else(|| {
        let names: Vec<&str> = AqmKind::ALL.iter().map(|k| k.name()).collect();
        ConfigError::new("aqm", format!("must be one of {names:?}, got {aqm:?}"))
    })?;
    let mut members = 1;
    for (j, (key, v)) in columns.iter().enumerate() {
        let known = COMMON_REQUIRED.contains(&key.as_str())
            || COMMON_OPTIONAL.contains(&key.as_str())
            || aqm_keys(kind).contains(&key.as_str());
        if !known {
            return Err(ConfigError::new(
                key.as_str(),
                format!("is not a parameter of aqm='{aqm}'"),
            ));
        }
        if columns[..j].iter().any(|(k, _)| k == key) {
            return Err(ConfigError::new(key.as_str(), "is given twice"));
        }
        if v.is_empty() {
            return Err(ConfigError::new(key.as_str(), "is an empty array"));
        }
        if v.len() > 1 {
            if members > 1 && v.len() != members {
                return Err(ConfigError::new(
                    key.as_str(),
                    format!(
                        "has {} values but another parameter has {members}: parameter arrays cannot be broadcast together",
                        v.len()
                    ),
                ));
            }
            members = v.len();
        }
    }
    let cols = Columns {
        cols: columns,
        aqm: kind.name(),
    };
    let mut sets = Vec::with_capacity(members);
    for i in 0..members {
        let law = match kind {
            AqmKind::Red => AqmLaw::Red(RedLaw {
                min_th: cols.req("min_th", i)?,
                max_th: cols.req("max_th", i)?,
                max_p: cols.req("max_p", i)?,
                w_q: cols.req("w_q", i)?,
                gentle,
                delta_s: cols.opt("red_delta", i),
            }),
            AqmKind::Pi => {
                let has = |k: &str| cols.get(k).is_some();
                let gains = if has("kp") || has("ki") {
                    if has("a") || has("b") || has("fs") {
                        return Err(ConfigError::new(
                            "kp",
                            "give either kp and ki, or a, b and fs",
                        ));
                    }
                    PiGains::Continuous {
                        kp: cols.req("kp", i)?,
                        ki: cols.req("ki", i)?,
                    }
                } else if has("a") || has("b") || has("fs") {
                    PiGains::Discrete {
                        a: cols.req("a", i)?,
                        b: cols.req("b", i)?,
                        fs: cols.req("fs", i)?,
                    }
                } else {
                    return Err(ConfigError::new(
                        "kp",
                        "aqm='pi' needs kp and ki, or a, b and fs",
                    ));
                };
                AqmLaw::Pi(PiLaw {
                    q_ref: cols.req("q_ref", i)?,
                    gains,
                    p0: cols.or("p0", i, 0.0),
                })
            }
            AqmKind::Avq => AqmLaw::Avq(AvqLaw {
                gamma: cols.req("gamma", i)?,
                alpha: cols.req("alpha", i)?,
                vq_buffer: cols.or("vq_buffer", i, 0.0),
                vcap0: cols.opt("vcap0", i),
            }),
            AqmKind::Fixed => AqmLaw::Fixed {
                p: cols.req("p_fixed", i)?,
            },
            AqmKind::DropTail => AqmLaw::DropTail,
        };
        let set = MgtParams {
            n: cols.req("N", i)?,
            c: cols.req("C", i)?,
            tp: cols.req("Tp", i)?,
            w0: cols.or("W0", i, 1.0),
            q0: cols.or("q0", i, 0.0),
            buffer: cols.or("buffer", i, f64::INFINITY),
            w_min: cols.or("w_min", i, 1.0),
            w_max: cols.or("w_max", i, f64::INFINITY),
            aqm: law,
        };
        sets.push(set);
    }
    Ok(sets)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(pairs: &[(&str, &[f64])]) -> Vec<(String, Vec<f64>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_vec()))
            .collect()
    }

    fn fixed(p: f64) -> MgtParams {
        MgtParams::new(60.0, 3750.0, 0.2, AqmLaw::Fixed { p })
    }

    fn red() -> RedLaw {
        RedLaw {
            min_th: 50.0,
            max_th: 550.0,
            max_p: 0.1,
            w_q: 1e-4,
            gentle: true,
            delta_s: None,
        }
    }

    fn err_path(set: MgtParams) -> String {
        set.validate(&MgtSettings::new(1.0, 1e-3)).unwrap_err().path
    }

    #[test]
    fn red_profile_matches_the_reference_values() {
        let x = [0.0, 49.9, 50.0, 300.0, 549.9, 550.0, 825.0, 1100.0, 2000.0];
        let plain = [0.0, 0.0, 0.0, 0.05, 0.09998, 1.0, 1.0, 1.0, 1.0];
        let gentle = [0.0, 0.0, 0.0, 0.05, 0.09998, 0.1, 0.55, 1.0, 1.0];
        for k in 0..x.len() {
            assert!((red_profile(x[k], 50.0, 550.0, 0.1, false) - plain[k]).abs() < 1e-12);
            assert!((red_profile(x[k], 50.0, 550.0, 0.1, true) - gentle[k]).abs() < 1e-12);
        }
    }

    #[test]
    fn bad_values_name_their_key() {
        let mut s = fixed(0.01);
        s.n = -1.0;
        assert_eq!(err_path(s), "N");
        let mut s = fixed(0.01);
        s.c = f64::NAN;
        assert_eq!(err_path(s), "C");
        let mut s = fixed(0.01);
        s.tp = 5e-4; // below dt
        assert_eq!(err_path(s), "Tp");
        let mut s = fixed(0.01);
        s.buffer = 0.0;
        assert_eq!(err_path(s), "buffer");
        let mut s = fixed(0.01);
        s.w_min = 10.0;
        s.w_max = 5.0;
        assert_eq!(err_path(s), "w_min");
        let mut s = fixed(0.01);
        s.buffer = 1e300; // delay history too long
        assert_eq!(err_path(s), "buffer");
        assert_eq!(err_path(fixed(1.5)), "p_fixed");
        let mut r = red();
        r.min_th = 600.0;
        assert_eq!(
            err_path(MgtParams::new(1.0, 1.0, 1.0, AqmLaw::Red(r))),
            "min_th"
        );
        let mut r = red();
        r.w_q = 1.0;
        assert_eq!(
            err_path(MgtParams::new(1.0, 1.0, 1.0, AqmLaw::Red(r))),
            "w_q"
        );
        let mut r = red();
        r.delta_s = Some(0.0);
        assert_eq!(
            err_path(MgtParams::new(1.0, 1.0, 1.0, AqmLaw::Red(r))),
            "red_delta"
        );
        let pi = |gains| {
            MgtParams::new(
                1.0,
                1.0,
                1.0,
                AqmLaw::Pi(PiLaw {
                    q_ref: 10.0,
                    gains,
                    p0: 0.0,
                }),
            )
        };
        assert_eq!(
            err_path(pi(PiGains::Continuous { kp: -1.0, ki: 0.0 })),
            "kp"
        );
        assert_eq!(
            err_path(pi(PiGains::Discrete {
                a: 1e-5,
                b: 2e-5,
                fs: 160.0
            })),
            "a"
        );
        assert_eq!(
            err_path(pi(PiGains::Discrete {
                a: 2e-5,
                b: 1e-5,
                fs: 0.0
            })),
            "fs"
        );
        let avq = |gamma| {
            MgtParams::new(
                1.0,
                1.0,
                1.0,
                AqmLaw::Avq(AvqLaw {
                    gamma,
                    alpha: 0.1,
                    vq_buffer: 0.0,
                    vcap0: None,
                }),
            )
        };
        assert_eq!(err_path(avq(0.0)), "gamma");
        assert_eq!(
            err_path(MgtParams::new(1.0, 1.0, 1.0, AqmLaw::DropTail)),
            "buffer"
        );
    }

    #[test]
    fn settings_errors_name_their_key() {
        let s = |f: fn(&mut MgtSettings)| {
            let mut st = MgtSettings::new(1.0, 1e-3);
            f(&mut st);
            simulate(&st, &[fixed(0.01)]).unwrap_err().path
        };
        assert_eq!(s(|st| st.dt_s = -1.0), "dt");
        assert_eq!(s(|st| st.duration_s = 0.0), "duration");
        assert_eq!(s(|st| st.record_every = 0), "record_every");
        assert_eq!(s(|st| st.max_queue_delay_s = f64::NAN), "max_queue_delay");
        assert_eq!(s(|st| st.duration_s = 1e12), "duration"); // output too large
        let e = simulate(&MgtSettings::new(1.0, 1e-3), &[]).unwrap_err();
        assert_eq!(e.path, "params");
    }

    #[test]
    fn batch_errors_carry_the_member_index() {
        let e = simulate(&MgtSettings::new(1.0, 1e-3), &[fixed(0.01), fixed(2.0)]).unwrap_err();
        assert_eq!(e.path, "p_fixed[1]");
        assert_eq!(e.to_string(), "p_fixed[1]: must be in [0, 1], got 2");
    }

    #[test]
    fn columns_broadcast_and_name_bad_keys() {
        let sets = params_from_columns(
            "red",
            true,
            &cols(&[
                ("N", &[60.0, 30.0, 90.0]),
                ("C", &[3750.0]),
                ("Tp", &[0.2]),
                ("min_th", &[50.0]),
                ("max_th", &[550.0]),
                ("max_p", &[0.05, 0.1, 0.2]),
                ("w_q", &[1e-4]),
            ]),
        )
        .unwrap();
        assert_eq!(sets.len(), 3);
        assert_eq!(sets[2].n, 90.0);
        assert_eq!(sets[1].c, 3750.0);
        assert_eq!(sets[0].w0, 1.0);
        assert!(sets[0].buffer.is_infinite());
        match &sets[2].aqm {
            AqmLaw::Red(r) => assert_eq!((r.max_p, r.gentle, r.delta_s), (0.2, true, None)),
            other => panic!("{other:?}"),
        }

        let base = [("N", &[10.0][..]), ("C", &[1000.0]), ("Tp", &[0.1])];
        let path = |aqm: &str, extra: &[(&str, &[f64])]| {
            let mut c = base.to_vec();
            c.extend_from_slice(extra);
            params_from_columns(aqm, false, &cols(&c)).unwrap_err().path
        };
        assert_eq!(path("codel", &[]), "aqm");
        assert_eq!(path("red", &[]), "min_th");
        assert_eq!(path("fixed", &[]), "p_fixed");
        assert_eq!(
            path("fixed", &[("p_fixed", &[0.1]), ("w_q", &[0.1])]),
            "w_q"
        );
        assert_eq!(path("fixed", &[("p_fixed", &[0.1]), ("N", &[1.0])]), "N");
        assert_eq!(path("fixed", &[("p_fixed", &[])]), "p_fixed");
        assert_eq!(
            path(
                "fixed",
                &[("p_fixed", &[0.1, 0.2]), ("W0", &[1.0, 2.0, 3.0])]
            ),
            "W0"
        );
        assert_eq!(path("pi", &[("q_ref", &[1.0])]), "kp");
        assert_eq!(path("pi", &[("q_ref", &[1.0]), ("kp", &[1.0])]), "ki");
        assert_eq!(
            path(
                "pi",
                &[
                    ("q_ref", &[1.0]),
                    ("kp", &[1.0]),
                    ("ki", &[1.0]),
                    ("a", &[1.0])
                ]
            ),
            "kp"
        );
        assert_eq!(
            path("pi", &[("q_ref", &[1.0]), ("a", &[1.0]), ("b", &[1.0])]),
            "fs"
        );
        assert_eq!(path("avq", &[("gamma", &[0.98])]), "alpha");
        let mut c = base.to_vec();
        c.retain(|(k, _)| *k != "Tp");
        c.push(("p_fixed", &[0.1]));
        assert_eq!(
            params_from_columns("fixed", false, &cols(&c))
                .unwrap_err()
                .path,
            "Tp"
        );
    }

    #[test]
    fn initial_record_is_the_initial_state() {
        let mut set = MgtParams::new(
            60.0,
            3750.0,
            0.2,
            AqmLaw::Avq(AvqLaw {
                gamma: 0.5,
                alpha: 0.1,
                vq_buffer: 0.0,
                vcap0: Some(1e6),
            }),
        );
        set.w0 = 3.0;
        set.q0 = 500.0;
        set.buffer = 100.0;
        let mut st = MgtSettings::new(0.05, 1e-3);
        st.record_every = 10;
        let out = simulate(&st, &[set]).unwrap();
        assert_eq!(out.n_records, 6);
        assert_eq!(out.t, vec![0.0, 0.01, 0.02, 0.03, 0.04, 0.05]);
        assert_eq!((out.w[0], out.q[0], out.p[0]), (3.0, 100.0, 0.0));
        assert_eq!(out.aux[0], 3750.0, "vcap0 is capped at C");
    }
}
