"""AVQ (Adaptive Virtual Queue) linear model and design rule for ``alpha``.

Kunniyur & Srikant, "Analysis and design of an adaptive virtual queue (AVQ)
algorithm for active queue management", ACM SIGCOMM 2001
(``papers/002_...``), Section 2: fluid model eqs. (2)-(3), equilibrium,
linearisation eqs. (4)-(5) and Theorem 1 / eq. (6).

The extracted text of the paper is garbled exactly where the design rule is
stated, and Section 4 (the proof) is missing. What is implemented here is a
reconstruction; ``docs/models.md`` lists every interpretation. In short:

* TCP model, eq. (2): ``dx_i/dt = 1/d^2 - beta x_i(t) x_i(t-d) p(lambda(t-d),
  C~(t-d))``. The equilibrium printed in the paper, ``p* = N^2 /
  (beta (d gamma C)^2)``, fixes how ``beta`` enters; the fragment
  ``x* = (1/d) sqrt(3/(2 p*))`` in the extracted text gives ``beta = 2/3``
  (the default here; ``beta = 1/2`` is the classic Reno fluid model).
* Virtual-queue marking function ``p(lambda, C~)``: the paper's analysis needs
  only its partial derivatives at equilibrium. Default ``"bufferless"``:
  the fraction of fluid above the virtual capacity, ``p = (1 - C~/lambda)^+``;
  alternative ``"mm1"``: M/M/1 overflow of a virtual buffer of ``B``
  packets, ``p = (lambda/C~)^B``.
* Theorem 1, eq. (6): ``omega d + arctan(omega / K11) = pi/2`` with
  ``omega = (1/sqrt 2) sqrt( sqrt(K11^4 + 4 alpha^2 K2^2) - K11^2 )``. This
  is the exact stability boundary of the loop
  ``L(s) = alpha K2 e^{-sd} / (s (s + K11))``, i.e. of the linearisation
  (4)-(5) without its ``K12`` term (as the extracted eq. (6) does not contain
  ``K12``).

All rates (``C``, ``lambda``, ``C~``) are in packets per second; ``alpha`` is
in 1/s (``dC~/dt = alpha (gamma C - lambda)``), so the same ``alpha`` applies
to a byte-counting implementation such as the paper's token-bucket
pseudo-code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq

from ._validate import check_in_range, check_positive

__all__ = [
    "AvqLinearization",
    "avq_linearize",
    "avq_crossover_frequency",
    "avq_stability_margin",
    "avq_alpha_max",
    "avq_is_stable",
    "avq_max_delay",
    "avq_min_users",
    "avq_characteristic",
    "avq_linear_response",
]

_MARKINGS = ("bufferless", "mm1")


@dataclass(frozen=True)
class AvqLinearization:
    """Equilibrium and linearisation gains of the TCP/AVQ fluid model.

    Attributes
    ----------
    rate : float
        Equilibrium aggregate arrival rate ``lambda* = gamma C`` (packets/s).
    x_star : float
        Per-flow rate ``x* = gamma C / N`` (packets/s).
    p_star : float
        Equilibrium marking probability ``N^2 / (beta (d gamma C)^2)``.
    vcap_star : float
        Equilibrium virtual capacity ``C~*`` (packets/s).
    K11, K12, K2 : float
        Gains of the linearised model, eqs. (4)-(5): ``K11`` and ``K12`` in
        1/s, ``K2`` in 1/s (so that ``alpha K2`` is in 1/s^2).
    dp_dlambda, dp_dvcap : float
        Partial derivatives of the marking function at equilibrium (s/packet).
    """

    rate: float
    x_star: float
    p_star: float
    vcap_star: float
    K11: float
    K12: float
    K2: float
    dp_dlambda: float
    dp_dvcap: float


def _check_marking(marking: str, vq_buffer: float | None) -> float:
    if marking not in _MARKINGS:
        raise ValueError(f"marking must be one of {_MARKINGS}, got {marking!r}")
    if marking == "mm1":
        if vq_buffer is None:
            raise ValueError("vq_buffer must be given (packets) for marking='mm1'")
        return float(check_positive("vq_buffer", vq_buffer))
    return 0.0


def avq_linearize(
    C: float,
    gamma: float,
    d: float,
    N: float,
    beta: float = 2.0 / 3.0,
    marking: str = "bufferless",
    vq_buffer: float | None = None,
) -> AvqLinearization:
    r"""Equilibrium and linearisation of the TCP/AVQ model, paper 002 Sec. 2.

    Equilibrium (text after eq. (3)):

    .. math::
        \lambda^* = \gamma C,\quad x_i^* = \frac{\gamma C}{N},\quad
        p(\gamma C, \tilde C^*) = \frac{N^2}{\beta (d \gamma C)^2}

    Linearised model, eqs. (4)-(5):

    .. math::
        \dot{\delta\lambda} = -K_{11}\delta\lambda(t) - K_{12}\delta\lambda(t-d)
                              + K_2 \delta\tilde C(t-d), \qquad
        \dot{\delta\tilde C} = -\alpha\, \delta\lambda(t)

    .. math::
        K_{11} = \frac{N}{\gamma C d^2},\quad
        K_{12} = \frac{N}{\gamma C d^2}
                 + \frac{\beta (\gamma C)^2}{N}\frac{\partial p}{\partial\lambda},
        \quad
        K_2 = \frac{\beta (\gamma C)^2}{N}
              \left|\frac{\partial p}{\partial \tilde C}\right|

    Parameters
    ----------
    C : float
        Link capacity, > 0 (packets/s).
    gamma : float
        Desired utilisation, in (0, 1].
    d : float
        Round-trip (feedback) delay, > 0 (s).
    N : float
        Number of TCP flows, > 0.
    beta : float, optional
        Decrease constant of the TCP model, eq. (2), > 0 (default 2/3,
        see module docstring).
    marking : {"bufferless", "mm1"}
        Virtual-queue marking function (module docstring).
    vq_buffer : float, optional
        Virtual buffer ``B`` in packets, required for ``"mm1"``.

    Returns
    -------
    AvqLinearization

    Raises
    ------
    ValueError
        For invalid inputs, or if ``p* >= 1`` (no equilibrium: too many flows
        for the delay and capacity).
    """
    C_ = float(check_positive("C", C))
    g_ = float(check_in_range("gamma", gamma, 0.0, 1.0, low_open=True))
    d_ = float(check_positive("d", d))
    N_ = float(check_positive("N", N))
    b_ = float(check_positive("beta", beta))
    B = _check_marking(marking, vq_buffer)

    lam = g_ * C_
    p_star = N_**2 / (b_ * (d_ * lam) ** 2)
    if p_star >= 1.0:
        raise ValueError(
            f"N={N_:g} admits no equilibrium: p* = N^2/(beta (d gamma C)^2) = {p_star:.3g} >= 1"
        )
    if marking == "bufferless":
        vcap = lam * (1.0 - p_star)
        dp_dl = vcap / lam**2
        dp_dc = -1.0 / lam
    else:
        vcap = lam * p_star ** (-1.0 / B)
        dp_dl = B * p_star / lam
        dp_dc = -B * p_star / vcap
    K11 = N_ / (lam * d_**2)
    K12 = K11 + b_ * lam**2 / N_ * dp_dl
    K2 = b_ * lam**2 / N_ * abs(dp_dc)
    return AvqLinearization(
        rate=lam,
        x_star=lam / N_,
        p_star=p_star,
        vcap_star=vcap,
        K11=K11,
        K12=K12,
        K2=K2,
        dp_dlambda=dp_dl,
        dp_dvcap=dp_dc,
    )


def avq_crossover_frequency(alpha: float, K11: float, K2: float) -> float:
    r"""Gain-crossover frequency ``omega(alpha, d, N, gamma)`` of Theorem 1.

    .. math::
        \omega = \frac{1}{\sqrt 2}
                 \sqrt{\sqrt{K_{11}^4 + 4\alpha^2 K_2^2} - K_{11}^2}

    the positive root of :math:`|j\omega (j\omega + K_{11})| = \alpha K_2`
    (reconstructed definition; the extracted text keeps only the ``1/sqrt 2``
    prefactor and two radical signs).

    Parameters
    ----------
    alpha : float
        AVQ smoothing parameter, >= 0 (1/s).
    K11, K2 : float
        Gains from :func:`avq_linearize` (> 0).

    Returns
    -------
    float
        ``omega`` in rad/s.
    """
    a = float(check_in_range("alpha", alpha, 0.0, np.inf, high_open=True))
    k11 = float(check_positive("K11", K11))
    k2 = float(check_positive("K2", K2))
    # Numerically stable form of (sqrt(K11^4 + 4 a^2 K2^2) - K11^2) / 2.
    u = 2.0 * a * k2
    w2 = (u * u) / (2.0 * (math.hypot(k11 * k11, u) + k11 * k11))
    return math.sqrt(w2)


def avq_stability_margin(alpha: float, d: float, K11: float, K2: float) -> float:
    r"""Left side minus right side of Theorem 1, eq. (6).

    .. math:: F(\alpha) = \omega d + \arctan(\omega / K_{11}) - \pi/2

    ``F < 0`` means the reduced loop is stable, ``F = 0`` defines
    ``alpha*``. (The delay ``d`` enters both here and, through ``K11`` and
    ``K2``, in :func:`avq_linearize`.)
    """
    d_ = float(check_positive("d", d))
    w = avq_crossover_frequency(alpha, K11, K2)
    return w * d_ + math.atan(w / float(K11)) - math.pi / 2.0


def _alpha_root(d: float, K11: float, K2: float) -> float:
    hi = 1.0
    while avq_stability_margin(hi, d, K11, K2) <= 0.0:
        hi *= 2.0
        if hi > 1e12:  # pragma: no cover - F grows without bound
            raise RuntimeError("could not bracket alpha*")
    return float(
        brentq(lambda a: avq_stability_margin(a, d, K11, K2), 0.0, hi, xtol=1e-14, rtol=1e-12)
    )


def avq_alpha_max(
    C: float,
    gamma: float,
    d: float,
    N: float,
    beta: float = 2.0 / 3.0,
    marking: str = "bufferless",
    vq_buffer: float | None = None,
) -> float:
    r"""Largest stable AVQ smoothing parameter, paper 002 Theorem 1, eq. (6).

    Solves :math:`\omega(\alpha) d + \arctan(\omega(\alpha)/K_{11}) = \pi/2`
    for :math:`\alpha^*` with :func:`scipy.optimize.brentq`; every
    :math:`\alpha < \alpha^*` is stable for the given delay ``d`` (and, by
    the monotonicity of the rule, for smaller delays and more flows).

    Parameters
    ----------
    C : float
        Link capacity, > 0 (packets/s). For 10 Mb/s and 1000-byte packets,
        ``C = 1250``.
    gamma : float
        Desired utilisation in (0, 1].
    d : float
        Largest round-trip delay to design for, > 0 (s).
    N : float
        Smallest number of long-lived TCP flows, > 0.
    beta, marking, vq_buffer
        See :func:`avq_linearize`.

    Returns
    -------
    float
        ``alpha*`` in 1/s.

    Examples
    --------
    Paper 002, Sec. 3.1 (10 Mb/s, 1000-byte packets, gamma = 0.98,
    d = 210 ms) with ``N = 40`` flows gives ``alpha* = 0.177``, i.e. "any
    alpha < 0.17 will ensure stability".
    """
    lin = avq_linearize(C, gamma, d, N, beta, marking, vq_buffer)
    return _alpha_root(float(d), lin.K11, lin.K2)


def avq_is_stable(
    alpha: float,
    C: float,
    gamma: float,
    d: float,
    N: float,
    beta: float = 2.0 / 3.0,
    marking: str = "bufferless",
    vq_buffer: float | None = None,
) -> bool:
    """Whether ``alpha`` satisfies the design rule (``alpha < alpha*``)."""
    a = float(check_in_range("alpha", alpha, 0.0, np.inf, high_open=True))
    return a < avq_alpha_max(C, gamma, d, N, beta, marking, vq_buffer)


def avq_max_delay(
    alpha: float,
    C: float,
    gamma: float,
    N: float,
    beta: float = 2.0 / 3.0,
    marking: str = "bufferless",
    vq_buffer: float | None = None,
) -> float:
    r"""Largest feedback delay ``d`` for which ``alpha`` meets eq. (6).

    The paper notes (Sec. 2) that the rule bounds any one of ``alpha``,
    ``gamma``, ``N`` and ``d`` given the other three. The delay enters
    ``K11``, ``K2`` and eq. (6); it is also bounded below by the existence
    of an equilibrium (``p* < 1``, i.e. ``d > N / (gamma C sqrt(beta))``).

    Returns
    -------
    float
        Largest stable ``d`` in seconds, or ``nan`` if no admissible delay is
        stable.
    """
    a = float(check_positive("alpha", alpha))
    C_ = float(check_positive("C", C))
    g_ = float(check_in_range("gamma", gamma, 0.0, 1.0, low_open=True))
    N_ = float(check_positive("N", N))
    b_ = float(check_positive("beta", beta))
    _check_marking(marking, vq_buffer)
    d_lo = N_ / (g_ * C_ * math.sqrt(b_)) * (1.0 + 1e-9)

    def F(d: float) -> float:
        lin = avq_linearize(C_, g_, d, N_, b_, marking, vq_buffer)
        return avq_stability_margin(a, d, lin.K11, lin.K2)

    if F(d_lo) >= 0.0:
        return float("nan")
    hi = 2.0 * d_lo
    while F(hi) < 0.0:
        hi *= 2.0
        if hi > 1e9:  # pragma: no cover
            return float("inf")
    return float(brentq(F, d_lo, hi, xtol=1e-14, rtol=1e-12))


def avq_min_users(
    alpha: float,
    C: float,
    gamma: float,
    d: float,
    beta: float = 2.0 / 3.0,
    marking: str = "bufferless",
    vq_buffer: float | None = None,
) -> float:
    r"""Smallest number of flows ``N`` for which ``alpha`` meets eq. (6).

    Real-valued; round up for a head count. ``N`` is bounded above by the
    existence of an equilibrium, ``N < d gamma C sqrt(beta)``.

    Returns
    -------
    float
        ``N_min`` (flows), or ``nan`` if even the largest admissible ``N`` is
        unstable.
    """
    a = float(check_positive("alpha", alpha))
    C_ = float(check_positive("C", C))
    g_ = float(check_in_range("gamma", gamma, 0.0, 1.0, low_open=True))
    d_ = float(check_positive("d", d))
    b_ = float(check_positive("beta", beta))
    _check_marking(marking, vq_buffer)
    n_hi = d_ * g_ * C_ * math.sqrt(b_) * (1.0 - 1e-9)

    def F(n: float) -> float:
        lin = avq_linearize(C_, g_, d_, n, b_, marking, vq_buffer)
        return avq_stability_margin(a, d_, lin.K11, lin.K2)

    if F(n_hi) >= 0.0:
        return float("nan")
    lo = n_hi / 2.0
    while F(lo) < 0.0:
        lo /= 2.0
        if lo < 1e-12:  # pragma: no cover
            return 0.0
    return float(brentq(F, lo, n_hi, xtol=1e-12, rtol=1e-12))


def avq_characteristic(
    s: complex | NDArray[np.complex128],
    alpha: float,
    d: float,
    lin: AvqLinearization,
    include_k12: bool = False,
) -> complex | NDArray[np.complex128]:
    r"""Characteristic function of the linearised model, eqs. (4)-(5).

    .. math::
        \Delta(s) = s^2 + K_{11}s + e^{-sd}\left(K_{12}' s + \alpha K_2\right)

    with ``K12' = K12`` if ``include_k12`` else ``0`` (the reduced loop
    analysed by the design rule). The equilibrium is stable iff every root
    has negative real part.
    """
    k12 = lin.K12 if include_k12 else 0.0
    s_ = np.asarray(s, dtype=complex)
    out = s_**2 + lin.K11 * s_ + np.exp(-s_ * d) * (k12 * s_ + alpha * lin.K2)
    return complex(out) if out.ndim == 0 else out


def avq_linear_response(
    alpha: float,
    d: float,
    lin: AvqLinearization,
    t_end: float,
    dt: float = 1e-3,
    dlambda0: float = 1.0,
    include_k12: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    r"""Integrate the linearised AVQ model (4)-(5) with explicit Euler.

    .. math::
        \dot{\delta\lambda} = -K_{11}\delta\lambda(t) - K_{12}'\delta\lambda(t-d)
                              + K_2 \delta\tilde C(t-d),\qquad
        \dot{\delta\tilde C} = -\alpha\,\delta\lambda(t)

    with zero history and ``delta lambda(0) = dlambda0``.

    Parameters
    ----------
    alpha : float
        Smoothing parameter (1/s), >= 0.
    d : float
        Feedback delay (s), > 0; rounded to a whole number of steps.
    lin : AvqLinearization
        Gains from :func:`avq_linearize`.
    t_end : float
        Duration (s), > 0.
    dt : float, optional
        Step (s), > 0 and < ``d``.
    dlambda0 : float, optional
        Initial rate perturbation (packets/s).
    include_k12 : bool, optional
        Keep the ``K12`` delayed-rate term (default: reduced loop).

    Returns
    -------
    (t, dlambda, dvcap) : tuple of numpy.ndarray
    """
    a = float(check_in_range("alpha", alpha, 0.0, np.inf, high_open=True))
    d_ = float(check_positive("d", d))
    T = float(check_positive("t_end", t_end))
    h = float(check_positive("dt", dt))
    if h >= d_:
        raise ValueError(f"dt must be < d, got dt={h:g}, d={d_:g}")
    m = int(round(d_ / h))
    n = int(math.ceil(T / h))
    k11, k2 = lin.K11, lin.K2
    k12 = lin.K12 if include_k12 else 0.0
    lam = [0.0] * (n + 1 + m)
    cap = [0.0] * (n + 1 + m)
    lam[m] = float(dlambda0)
    for i in range(m, m + n):
        li = lam[i]
        lam[i + 1] = li + h * (-k11 * li - k12 * lam[i - m] + k2 * cap[i - m])
        cap[i + 1] = cap[i] - h * a * li
    t = np.arange(n + 1) * h
    return t, np.asarray(lam[m:]), np.asarray(cap[m:])
