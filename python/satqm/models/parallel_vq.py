"""Analysis of the RED+Tail parallel virtual queues, paper 004 Section VI.

Jou, Tan, Baras, "A parallel virtual queue structure for active queue
management", CSHCN TR 2003-18 (``papers/004_...``):

* Section III / VI-A: the drop-tail virtual queue's adaptive service rate,
  eq. (1), and the lower bound ``maxth_1 / C`` on its mean queueing delay.
* Section VI-B: the Adaptive RED virtual queue with dynamic thresholds as a
  Lindley map, eqs. (2)-(9); the stability bound of Proposition 6.1 on the
  rate-update interval ``S``, eq. (10); Proposition 6.2; the stochastic map
  (15); the Markov chain of the discretised queue, eqs. (17)-(19); and its
  linear-Gaussian approximation, eqs. (20)-(21).

Units follow the paper: queue lengths and windows in **bits**, rates in
**bits/s**, times in seconds (any consistent units work). ``d`` is the list of
per-connection delays ``d_k`` (round-trip propagation plus the constant
backward queueing delay, s); a scalar ``d`` with ``N`` flows is the
homogeneous case.

Interpretations (see ``docs/models.md``): the noise ``xi^n = S sum_k E_k^n``
has variance ``N S^2 sigma^2`` (the text says ``N S sigma^2``, which is
inconsistent with its own eq. (21)); the Markov chain uses the binning of
eq. (19) (floor), not the ``ceil`` of the state definition above it.
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq
from scipy.stats import norm

from ._validate import (
    as_float_array,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
    scalar_or_array,
)

__all__ = [
    "droptail_service_rate",
    "red_tail_service_rates",
    "droptail_delay_lower_bound",
    "round_trip_time",
    "flow_rates",
    "lindley_step",
    "lindley_map",
    "lindley_map_derivative",
    "lindley_map_second_derivative",
    "peak_rate_condition",
    "lindley_equilibrium",
    "max_stable_update_interval",
    "monotone_update_interval",
    "iterate_lindley",
    "noise_std",
    "transition_matrix",
    "advance_distribution",
    "stationary_distribution",
    "gaussian_queue_approximation",
    "gaussian_queue_pmf",
]

FloatOrArray = Union[float, NDArray[np.float64]]


# ---------------------------------------------------------------------------
# Drop-tail virtual queue (Section III and VI-A)
# ---------------------------------------------------------------------------


def droptail_service_rate(
    q1: ArrayLike,
    C: float,
    maxth1: float,
    C1min: float = 0.0,
    C1max: float | None = None,
) -> FloatOrArray:
    r"""Service rate of the drop-tail virtual queue, paper 004 eq. (1).

    .. math:: C_1(t) = \max\left(C_{1min},
              \min\left(\frac{q_1(t)\, C}{maxth_1}, C_{1max}\right)\right)

    (Section VI-A analyses ``C1min = 0`` and ``C1max = C``, the defaults.)

    Parameters
    ----------
    q1 : float or array_like
        Drop-tail virtual queue length, >= 0 (bits or bytes, same unit as
        ``maxth1``).
    C : float
        Link capacity, > 0 (bits/s).
    maxth1 : float
        Threshold at which the queue gets the full rate, > 0.
    C1min, C1max : float, optional
        Rate bounds (bits/s), ``0 <= C1min <= C1max <= C``.
    """
    q = check_nonnegative("q1", q1)
    C_ = float(check_positive("C", C))
    mt = float(check_positive("maxth1", maxth1))
    lo = float(check_nonnegative("C1min", C1min))
    hi = C_ if C1max is None else float(check_nonnegative("C1max", C1max))
    if not lo <= hi <= C_:
        raise ValueError(f"need 0 <= C1min <= C1max <= C, got {lo}, {hi}, {C_}")
    return scalar_or_array(np.maximum(lo, np.minimum(q * C_ / mt, hi)))


def red_tail_service_rates(
    q1: ArrayLike,
    C: float,
    minth1: float,
    maxth1: float,
    C1min: float,
    C1max: float,
) -> tuple[FloatOrArray, FloatOrArray]:
    r"""Bandwidth split of the RED+Tail structure, paper 004 Section III.

    .. math::
        C_1 = \begin{cases} 0 & q_1 = 0 \\ C_{1min} & 0 < q_1 < minth_1 \\
              \min(C q_1 / maxth_1, C_{1max}) & q_1 \ge minth_1 \end{cases},
        \qquad C_2 = C - C_1

    Returns
    -------
    (C1, C2)
        Service rates of the drop-tail and the Adaptive RED virtual queues.
    """
    q = check_nonnegative("q1", q1)
    C_ = float(check_positive("C", C))
    lo_th = float(check_nonnegative("minth1", minth1))
    mt = float(check_positive("maxth1", maxth1))
    lo = float(check_nonnegative("C1min", C1min))
    hi = float(check_nonnegative("C1max", C1max))
    if not lo <= hi <= C_:
        raise ValueError(f"need 0 <= C1min <= C1max <= C, got {lo}, {hi}, {C_}")
    if lo_th > mt:
        raise ValueError("minth1 must be <= maxth1")
    c1 = np.where(q <= 0, 0.0, np.where(q < lo_th, lo, np.minimum(C_ * q / mt, hi)))
    return scalar_or_array(c1), scalar_or_array(C_ - c1)


def droptail_delay_lower_bound(maxth1: ArrayLike, C: ArrayLike) -> FloatOrArray:
    r"""Lower bound on the mean delay of the drop-tail virtual queue.

    .. math:: D \ge \frac{maxth_1}{C}

    (Paper 004 Section VI-A: since :math:`C_1(t) \le q_1(t) C / maxth_1`, a
    packet that finds ``q1`` waits at least ``q1 / C1 >= maxth1 / C``; e.g.
    ``maxth1`` = 30 KB at 3 Mb/s gives 80 ms.)

    Parameters
    ----------
    maxth1 : float or array_like
        Threshold, > 0 (bits).
    C : float or array_like
        Link capacity, > 0 (bits/s).

    Returns
    -------
    float or numpy.ndarray
        Seconds.
    """
    return scalar_or_array(check_positive("maxth1", maxth1) / check_positive("C", C))


# ---------------------------------------------------------------------------
# Lindley map, eqs. (2)-(9)
# ---------------------------------------------------------------------------


def _delays(d: ArrayLike, N: int | None) -> NDArray[np.float64]:
    d_ = check_positive("d", d)
    if d_.ndim == 0:
        if N is None:
            raise ValueError("N is required when d is a scalar")
        n = check_int("N", N, minimum=1)
        return np.full(n, float(d_))
    if d_.ndim != 1 or d_.size == 0:
        raise ValueError("d must be a scalar or a non-empty one-dimensional array")
    if N is not None and check_int("N", N, minimum=1) != d_.size:
        raise ValueError(f"N={N!r} does not match len(d)={d_.size}")
    return d_


def round_trip_time(
    d_prime: ArrayLike, q: ArrayLike, C: float, q_b: ArrayLike = 0.0
) -> FloatOrArray:
    r"""Round-trip time seen by a connection, paper 004 eq. (2).

    .. math:: R_k^n = d'_k + \frac{q^n}{C} + \frac{q_b^n}{C}

    Parameters
    ----------
    d_prime : float or array_like
        Link round-trip propagation delay, >= 0 (s).
    q, q_b : float or array_like
        Forward and backward queue lengths, >= 0 (bits).
    C : float
        Link bandwidth, > 0 (bits/s).
    """
    C_ = float(check_positive("C", C))
    return scalar_or_array(
        check_nonnegative("d_prime", d_prime)
        + check_nonnegative("q", q) / C_
        + check_nonnegative("q_b", q_b) / C_
    )


def flow_rates(
    q: float, W_bar: float, d: ArrayLike, C: float, N: int | None = None
) -> NDArray[np.float64]:
    r"""Mean flow rates without noise, paper 004 eq. (3).

    .. math:: T_k = \frac{\bar W}{d_k + q/C}

    Returns
    -------
    numpy.ndarray
        One rate per connection (bits/s).
    """
    dk = _delays(d, N)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    q_ = float(check_nonnegative("q", q))
    return W / (dk + q_ / C_)


def lindley_step(q: float, rates: ArrayLike, C: float, S: float, B: float) -> float:
    r"""One step of the Lindley recursion, paper 004 eq. (4).

    .. math::
        q^{n+1} = \min\left\{B, \max\left[0,
                  q^n + \left(\sum_k T_k^n - C\right) S\right]\right\}

    Parameters
    ----------
    q : float
        Queue length, >= 0 (bits).
    rates : array_like
        Flow rates ``T_k^n`` (bits/s).
    C : float
        Link bandwidth, > 0 (bits/s).
    S : float
        Slot duration (rate-update interval), > 0 (s).
    B : float
        Buffer size, > 0 (bits).
    """
    q_ = float(check_nonnegative("q", q))
    T = as_float_array("rates", rates)
    C_ = float(check_positive("C", C))
    S_ = float(check_positive("S", S))
    B_ = float(check_positive("B", B, allow_inf=True))
    return float(min(B_, max(0.0, q_ + (float(np.sum(T)) - C_) * S_)))


def lindley_map(
    q: ArrayLike, W_bar: float, d: ArrayLike, C: float, S: float, N: int | None = None
) -> FloatOrArray:
    r"""Deterministic Lindley map ``f``, paper 004 eq. (6).

    .. math:: f(q) = q + S\left(\sum_{k=1}^N \frac{\bar W C}{q + d_k C} - C\right)

    Parameters
    ----------
    q : float or array_like
        Queue length(s), >= 0 (bits).
    W_bar : float
        Mean congestion window, > 0 (bits).
    d : float or array_like
        Delays ``d_k`` (s); scalar with ``N`` for the homogeneous case.
    C : float
        Link bandwidth, > 0 (bits/s).
    S : float
        Rate-update interval, > 0 (s).
    N : int, optional
        Number of connections when ``d`` is a scalar.
    """
    dk = _delays(d, N)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    S_ = float(check_positive("S", S))
    q_ = check_nonnegative("q", q)
    s = np.sum(W * C_ / (q_[..., None] + dk * C_), axis=-1)
    return scalar_or_array(q_ + S_ * (s - C_))


def lindley_map_derivative(
    q: ArrayLike, W_bar: float, d: ArrayLike, C: float, S: float, N: int | None = None
) -> FloatOrArray:
    r"""Derivative of the Lindley map, paper 004 eq. (13).

    .. math:: f'(q) = 1 - S \sum_{k=1}^N \frac{\bar W C}{(q + d_k C)^2}
    """
    dk = _delays(d, N)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    S_ = float(check_positive("S", S))
    q_ = check_nonnegative("q", q)
    return scalar_or_array(1.0 - S_ * np.sum(W * C_ / (q_[..., None] + dk * C_) ** 2, axis=-1))


def lindley_map_second_derivative(
    q: ArrayLike, W_bar: float, d: ArrayLike, C: float, S: float, N: int | None = None
) -> FloatOrArray:
    r"""Second derivative of the Lindley map, paper 004 eq. (11) (``f`` is convex).

    .. math:: f''(q) = \sum_{k=1}^N \frac{2 S \bar W C}{(q + d_k C)^3} > 0
    """
    dk = _delays(d, N)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    S_ = float(check_positive("S", S))
    q_ = check_nonnegative("q", q)
    return scalar_or_array(np.sum(2 * S_ * W * C_ / (q_[..., None] + dk * C_) ** 3, axis=-1))


def peak_rate_condition(W_bar: float, d: ArrayLike, C: float, N: int | None = None) -> bool:
    r"""Whether the peak rates exceed the link, paper 004 eq. (8).

    .. math:: \sum_{k=1}^N \frac{\bar W}{d_k} \ge C

    If it fails, the only equilibrium is the empty queue.
    """
    dk = _delays(d, N)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    return bool(np.sum(W / dk) >= C_)


def lindley_equilibrium(W_bar: float, d: ArrayLike, C: float, N: int | None = None) -> float:
    r"""Equilibrium queue length ``q_e``, paper 004 eq. (9).

    Unique root in :math:`[0, \infty)` of

    .. math:: \sum_{k=1}^N \frac{\bar W}{d_k + q/C} = C

    (independent of ``S``). Homogeneous case: :math:`q_e = N\bar W - dC`.

    Returns
    -------
    float
        ``q_e`` in bits.

    Raises
    ------
    ValueError
        If eq. (8) fails (no positive equilibrium).
    """
    dk = _delays(d, N)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    if not peak_rate_condition(W, dk, C_):
        raise ValueError("eq. (8) fails: sum(W_bar/d_k) < C, the queue empties")
    if np.all(dk == dk[0]):
        return float(max(0.0, dk.size * W - dk[0] * C_))

    def g(q: float) -> float:
        return float(np.sum(W / (dk + q / C_)) - C_)

    hi = dk.size * W  # at q = N W_bar, every term is < W/(q/C) = C/N
    return float(brentq(g, 0.0, hi, xtol=1e-9, rtol=1e-14))


def max_stable_update_interval(W_bar: float, d: ArrayLike, C: float, N: int | None = None) -> float:
    r"""Bound on the update interval of Proposition 6.1, paper 004 eq. (10).

    .. math:: S < \frac{2C}{\bar W \sum_{k=1}^N d_k^{-2}}

    guarantees that :math:`q_e` is globally asymptotically stable (then
    :math:`f'(q) > -1` on :math:`[0, \infty)`).

    Returns
    -------
    float
        The bound in seconds (strict inequality).
    """
    dk = _delays(d, N)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    return float(2.0 * C_ / (W * np.sum(dk**-2.0)))


def monotone_update_interval(W_bar: float, d: ArrayLike, C: float, N: int | None = None) -> float:
    r"""Largest ``S`` with :math:`f'(q_e) \ge 0`, Proposition 6.2.

    From eq. (13), :math:`f'(q_e) \ge 0` iff

    .. math:: S \le \left(\sum_{k=1}^N \frac{\bar W C}{(q_e + d_k C)^2}\right)^{-1}

    which for the homogeneous case is :math:`N\bar W / C = q_e/C + d`, the
    round-trip time (paper 004, text after Prop. 6.2).
    """
    dk = _delays(d, N)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    qe = lindley_equilibrium(W, dk, C_)
    return float(1.0 / np.sum(W * C_ / (qe + dk * C_) ** 2))


def noise_std(sigma: float, S: float, N: int) -> float:
    r"""Standard deviation of the aggregate perturbation ``xi``, eq. (7).

    .. math:: \xi^n = S\sum_{k=1}^N E_k^n,\qquad
              \mathrm{Var}\,\xi^n = N S^2 \sigma^2

    (The text states the variance as :math:`N S \sigma^2`; :math:`N S^2
    \sigma^2` follows from eq. (7) and is what eq. (21) requires.)

    Parameters
    ----------
    sigma : float
        Per-flow rate deviation, >= 0 (bits/s).
    S : float
        Update interval, > 0 (s).
    N : int
        Number of connections, >= 1.
    """
    s = float(check_nonnegative("sigma", sigma))
    S_ = float(check_positive("S", S))
    n = check_int("N", N, minimum=1)
    return S_ * math.sqrt(n) * s


def iterate_lindley(
    q0: float,
    n: int,
    W_bar: float,
    d: ArrayLike,
    C: float,
    S: float,
    B: float = np.inf,
    sigma: float = 0.0,
    N: int | None = None,
    seed: int | np.random.Generator | None = None,
) -> NDArray[np.float64]:
    r"""Sample path of the stochastic Lindley map, paper 004 eq. (15).

    .. math:: q^{n+1} = g(q^n, \xi^n) = \min\{B, \max[0, f(q^n) + \xi^n]\}

    with :math:`\xi^n \sim \mathcal N(0, N S^2 \sigma^2)` i.i.d.
    (:func:`noise_std`); ``sigma = 0`` gives the deterministic map (5).

    Parameters
    ----------
    q0 : float
        Initial queue, >= 0 (bits).
    n : int
        Number of steps, >= 0.
    W_bar, d, C, S, N
        As in :func:`lindley_map`.
    B : float, optional
        Buffer size, > 0 (bits); ``inf`` for none.
    sigma : float, optional
        Per-flow rate deviation (bits/s).
    seed : int or numpy.random.Generator, optional
        Random source for the noise.

    Returns
    -------
    numpy.ndarray
        ``q^0 .. q^n`` (bits).
    """
    dk = _delays(d, N)
    steps = check_int("n", n, minimum=0)
    B_ = float(check_positive("B", B, allow_inf=True))
    q = float(check_nonnegative("q0", q0))
    sd = noise_std(sigma, S, dk.size)
    rng = np.random.default_rng(seed)
    xi = rng.normal(0.0, sd, size=steps) if sd > 0 else np.zeros(steps)
    W = float(check_positive("W_bar", W_bar))
    C_ = float(check_positive("C", C))
    S_ = float(check_positive("S", S))
    dC = dk * C_
    out = np.empty(steps + 1)
    out[0] = min(q, B_)
    for i in range(steps):
        q = out[i]
        f = q + S_ * (float(np.sum(W * C_ / (q + dC))) - C_)
        out[i + 1] = min(B_, max(0.0, f + xi[i]))
    return out


# ---------------------------------------------------------------------------
# Markov chain of the discretised queue, eqs. (17)-(19), and eq. (21)
# ---------------------------------------------------------------------------


def _bin_probs(
    mean: NDArray[np.float64], sd: float, L: float, n_states: int
) -> NDArray[np.float64]:
    """Pr[j <= min(B, max(0, X))/L < j+1] for X ~ N(mean, sd^2), j = 0..n_states-1."""
    edges = L * np.arange(1, n_states)  # upper edges of bins 0..n-2
    if sd > 0:
        cdf = norm.cdf((edges[None, :] - mean[:, None]) / sd)
    else:
        cdf = (edges[None, :] > mean[:, None]).astype(float)
    P = np.empty((mean.size, n_states))
    P[:, 0] = cdf[:, 0]
    P[:, 1:-1] = np.diff(cdf, axis=1)
    P[:, -1] = norm.sf((edges[-1] - mean) / sd) if sd > 0 else (edges[-1] <= mean).astype(float)
    np.clip(P, 0.0, 1.0, out=P)
    return P


def transition_matrix(
    W_bar: float,
    d: ArrayLike,
    C: float,
    S: float,
    B_packets: int,
    L: float,
    sigma: float,
    N: int | None = None,
) -> NDArray[np.float64]:
    r"""Transition matrix of the discretised queue, paper 004 eqs. (17)-(19).

    States :math:`z = 0, \dots, B` (packets of ``L`` bits). Eq. (19):

    .. math::
        T(i, j) = \Pr\left[j \le \frac{\min\{B, \max[0, f(iL) + \xi]\}}{L}
                  < j + 1\right],\qquad \xi \sim \mathcal N(0, N S^2\sigma^2)

    so state 0 collects :math:`f(iL) + \xi < L` (including the empty queue)
    and state ``B`` the full buffer.

    Parameters
    ----------
    W_bar, d, C, S, N
        As in :func:`lindley_map` (bits, s, bits/s, s).
    B_packets : int
        Buffer size in packets, >= 1 (the buffer is ``B_packets * L`` bits).
    L : float
        Packet size, > 0 (bits).
    sigma : float
        Per-flow rate deviation, >= 0 (bits/s).

    Returns
    -------
    numpy.ndarray
        Row-stochastic matrix of shape ``(B_packets + 1, B_packets + 1)``.
    """
    dk = _delays(d, N)
    Bp = check_int("B_packets", B_packets, minimum=1)
    L_ = float(check_positive("L", L))
    sd = noise_std(sigma, S, dk.size)
    mean = np.asarray(lindley_map(L_ * np.arange(Bp + 1), W_bar, dk, C, S), dtype=float)
    P = _bin_probs(mean, sd, L_, Bp + 1)
    return P / P.sum(axis=1, keepdims=True)


def advance_distribution(pi0: ArrayLike, T: ArrayLike, n: int = 1) -> NDArray[np.float64]:
    r"""Advance a queue-length distribution ``n`` steps, eq. (17).

    .. math:: \pi^{n+1} = \pi^n T
    """
    T_ = as_float_array("T", T)
    if T_.ndim != 2 or T_.shape[0] != T_.shape[1]:
        raise ValueError("T must be a square matrix")
    p = check_probability("pi0", pi0)
    if p.shape != (T_.shape[0],):
        raise ValueError(f"pi0 must have length {T_.shape[0]}")
    if not math.isclose(float(p.sum()), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError("pi0 must sum to 1")
    steps = check_int("n", n, minimum=0)
    out = p.copy()
    for _ in range(steps):
        out = out @ T_
    return out


def stationary_distribution(T: ArrayLike) -> NDArray[np.float64]:
    r"""Stationary distribution :math:`\pi^* = \pi^* T`, paper 004 eq. (18).

    Solves :math:`\pi^*(T - I) = 0`, :math:`\sum_j \pi^*_j = 1` directly.

    Parameters
    ----------
    T : array_like
        Row-stochastic matrix.

    Returns
    -------
    numpy.ndarray
        :math:`\pi^*` (sums to 1).
    """
    T_ = as_float_array("T", T)
    if T_.ndim != 2 or T_.shape[0] != T_.shape[1]:
        raise ValueError("T must be a square matrix")
    if (T_ < 0).any() or not np.allclose(T_.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("T must be row-stochastic")
    n = T_.shape[0]
    A = T_.T - np.eye(n)
    A[-1, :] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    pi, *_ = np.linalg.lstsq(A, rhs, rcond=None)
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def gaussian_queue_approximation(
    W_bar: float,
    d: ArrayLike,
    C: float,
    S: float,
    sigma: float,
    N: int | None = None,
) -> tuple[float, float]:
    r"""Linear-Gaussian approximation of the queue, paper 004 eqs. (20)-(21).

    Linearising around :math:`q_e`, :math:`Q^{n+1} = f'(q_e) Q^n + \xi^n`
    (20), so :math:`q \approx \mathcal N(q_e, \mathrm{Var}\,Q)` with

    .. math:: \mathrm{Var}[Q^n / S] = \frac{N\sigma^2}{1 - |f'(q_e)|^2}
              \quad (21)

    Returns
    -------
    (mean, std)
        :math:`q_e` and :math:`S\sqrt{N\sigma^2/(1 - f'(q_e)^2)}` (bits).

    Raises
    ------
    ValueError
        If :math:`|f'(q_e)| \ge 1` (no stationary linear process).
    """
    dk = _delays(d, N)
    qe = lindley_equilibrium(W_bar, dk, C)
    fp = float(lindley_map_derivative(qe, W_bar, dk, C, S))
    if abs(fp) >= 1.0:
        raise ValueError(f"|f'(q_e)| = {abs(fp):.3g} >= 1: the linearised queue is not stable")
    s = float(check_nonnegative("sigma", sigma))
    S_ = float(check_positive("S", S))
    return qe, S_ * math.sqrt(dk.size * s * s / (1.0 - fp * fp))


def gaussian_queue_pmf(
    W_bar: float,
    d: ArrayLike,
    C: float,
    S: float,
    B_packets: int,
    L: float,
    sigma: float,
    N: int | None = None,
) -> NDArray[np.float64]:
    """Eq. (21)'s Gaussian binned like eq. (19), for comparison with the chain.

    Returns
    -------
    numpy.ndarray
        Probabilities of states ``0 .. B_packets`` (sums to 1).
    """
    Bp = check_int("B_packets", B_packets, minimum=1)
    L_ = float(check_positive("L", L))
    mean, sd = gaussian_queue_approximation(W_bar, d, C, S, sigma, N)
    return _bin_probs(np.array([mean]), sd, L_, Bp + 1)[0]
