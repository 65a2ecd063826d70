//! A parameter set compiled into the model: the AQM law's constants with
//! `dt` folded in, its state, and the explicit Euler step of the equations
//! in the [module documentation](super).

use super::params::{AqmLaw, MgtParams, MgtSettings, PiGains, RedLaw};
use crate::error::ConfigError;
use crate::fluid::history::{DelayHistory, Interpolation};
use crate::fluid::integrator::FixedStepSystem;

/// AQM constants (with `dt` folded in) and state. The tag is explicit
/// (`repr(u8)`): left to the compiler it hides in a niche of the RED
/// curve's `gentle` flag, and every step of every law pays to decode it.
#[derive(Clone, Debug)]
#[repr(u8)]
enum Law {
    Red {
        curve: RedCurve,
        /// `1 - (1 - w_q)^(dt/δ)`.
        cred: f64,
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

/// RED's marking probability over the average queue `x` (Floyd &
/// Jacobson 1993; gentle mode, Floyd 2000):
///
/// ```text
/// p(x) = 0                                             x < min_th
///        max_p (x - min_th)/(max_th - min_th)          min_th <= x < max_th
///        min(1, max_p + (1 - max_p)(x - max_th)/max_th)  x >= max_th, gentle
///        1                                             x >= max_th
/// ```
///
/// The reference evaluates the ramp two ways, which can differ in the last
/// bit: as written for the initial state (its `red_drop_probability`), and
/// as `(x - min_th) * slope` with the slope folded in once for every step.
/// Both go through [`RedCurve::shape`] with their own ramp. (The packet
/// RED of `aqm::red` draws the same curve but ends the gentle ramp with a
/// forced region at `2 max_th` and counts between marks: a verdict, not a
/// probability.)
#[derive(Clone, Copy, Debug)]
pub(super) struct RedCurve {
    lo: f64,
    hi: f64,
    mp: f64,
    /// `max_p / (max_th - min_th)`.
    slope: f64,
    gentle: bool,
}

impl RedCurve {
    pub(super) fn new(r: &RedLaw) -> RedCurve {
        RedCurve {
            lo: r.min_th,
            hi: r.max_th,
            mp: r.max_p,
            slope: r.max_p / (r.max_th - r.min_th),
            gentle: r.gentle,
        }
    }

    /// `p(x)` as the step computes it.
    #[inline]
    pub(super) fn p(&self, x: f64) -> f64 {
        self.shape(x, |x| (x - self.lo) * self.slope)
    }

    /// `p(x)` as the reference's `red_drop_probability` computes it (the
    /// initial state).
    pub(super) fn p_initial(&self, x: f64) -> f64 {
        self.shape(x, |x| self.mp * (x - self.lo) / (self.hi - self.lo))
    }

    /// The curve, with the ramp between the thresholds given.
    #[inline(always)]
    fn shape(&self, x: f64, ramp: impl FnOnce(f64) -> f64) -> f64 {
        if x < self.lo {
            0.0
        } else if x < self.hi {
            ramp(x)
        } else if self.gentle {
            let p = self.mp + (1.0 - self.mp) * (x - self.hi) / self.hi;
            if p > 1.0 {
                1.0
            } else {
                p
            }
        } else {
            1.0
        }
    }
}

/// One parameter set of the MGT model, stepped by
/// [`StepCursor`](crate::fluid::integrator::StepCursor).
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
    pub(super) fn new_validated(params: &MgtParams, settings: &MgtSettings) -> MgtModel {
        let dt = settings.dt_s;
        let c = params.c;
        let q = params.q0.min(params.buffer);
        let (law, p) = match &params.aqm {
            AqmLaw::Red(r) => {
                let delta = r.delta_s.unwrap_or(1.0 / c);
                let cred = 1.0 - ((1.0 - r.w_q).ln() / delta * dt).exp();
                let curve = RedCurve::new(r);
                let p = curve.p_initial(q);
                let law = Law::Red { curve, cred, x: q };
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
            Law::Red { curve, cred, x } => {
                *x += *cred * (self.q - *x);
                self.p = curve.p(*x);
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
