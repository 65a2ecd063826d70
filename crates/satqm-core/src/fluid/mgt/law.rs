//! A parameter set compiled into the model: the AQM law's constants with
//! `dt` folded in, its state, and the explicit Euler step of the equations
//! in the [module documentation](super).

use super::params::{AqmLaw, MgtParams, MgtSettings, PiGains};
use crate::error::ConfigError;
use crate::fluid::history::{DelayHistory, Interpolation};
use crate::fluid::integrator::FixedStepSystem;

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
pub(super) fn red_profile(x: f64, lo: f64, hi: f64, mp: f64, gentle: bool) -> f64 {
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
    pub(super) fn new_validated(params: &MgtParams, settings: &MgtSettings) -> MgtModel {
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
