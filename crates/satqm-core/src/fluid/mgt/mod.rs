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
//! `h(s) = W(s) p_eff(s) / (2 R(s))` is kept in a
//! [`DelayHistory`](super::history::DelayHistory) and read
//! at `s = t - R(t)` (nearest step or linear interpolation); `W` is kept in
//! `[w_min, w_max]`; history before `t = 0` is zero (no marking).
//!
//! One file per job:
//!
//! * `params`: the parameter sets and run settings and their validation;
//! * `law`: a parameter set compiled into the model (AQM constants with
//!   `dt` folded in) and its step;
//! * `batch`: integrating many sets, four at a time in lockstep, into one
//!   columnar output;
//! * `columns`: parameter sets from the named columns the Python API
//!   passes.

mod batch;
mod columns;
mod law;
mod params;

pub use batch::{simulate, MgtBatch, MgtOutput, MAX_OUTPUT_VALUES};
pub use columns::params_from_columns;
pub use law::MgtModel;
pub use params::{
    AqmKind, AqmLaw, AvqLaw, MgtParams, MgtSettings, PiGains, PiLaw, RedLaw, MAX_HISTORY_STEPS,
};

#[cfg(test)]
mod tests;
