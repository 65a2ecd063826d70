"""PI AQM: Hollot et al. design rule, discretisation, ITSE tuning.

* Hollot, Misra, Towsley, Gong, "On designing improved controllers for AQM
  routers supporting TCP flows", IEEE INFOCOM 2001 (not in ``shared/papers``):
  the linearised TCP/AQM plant and the PI design rule — zero at the TCP pole,
  gain from the crossover frequency — and its digital implementation
  ``p(k) = a (q(k) - q_ref) - b (q(k-1) - q_ref) + p(k-1)``. The paper's own
  example (C = 3750 packets/s, N- = 60, R+ = 246 ms, sampling 160 Hz) gives
  ``a = 1.822e-5``, ``b = 1.816e-5``.
* Muhammad, Kasmis, De Cola, "Advanced Transport Satellite Protocol"
  (``papers/001_...``), Sec. III-A, eq. (1): PI gains tuned by minimising the
  integrated time-weighted squared error ``J = int t e(t)^2 dt`` with the
  downhill simplex (Nelder-Mead) method.

Units: ``C`` in packets/s, ``R`` in s, queue in packets, ``p`` dimensionless;
``K_p`` in 1/packet, ``K_i`` in 1/(packet s), ``a``/``b`` in 1/packet.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import OptimizeResult, brentq, minimize

from ._validate import as_float_array, check_nonnegative, check_positive

__all__ = [
    "tcp_plant_poles",
    "tcp_plant_gain",
    "tcp_plant_response",
    "PIDesign",
    "pi_design",
    "pi_loop_response",
    "pi_phase_margin",
    "pi_gains_to_ab",
    "pi_ab_to_gains",
    "pi_discretize",
    "itse",
    "PITuneResult",
    "tune_pi_itse",
    "fluid_pi_simulator",
]

_METHODS = ("bilinear", "backward", "forward")
_GAIN_RULES = ("paper", "unity")


# ---------------------------------------------------------------------------
# Linearised TCP/AQM plant (Hollot et al. 2001, from Misra-Gong-Towsley 2000)
# ---------------------------------------------------------------------------


def tcp_plant_poles(C: float, N: float, R: float) -> tuple[float, float]:
    r"""Poles of the linearised TCP/queue plant.

    .. math:: p_{tcp} = \frac{2N}{R^2 C}, \qquad p_{queue} = \frac{1}{R}

    Parameters
    ----------
    C : float
        Link capacity, > 0 (packets/s).
    N : float
        Number of TCP flows, > 0.
    R : float
        Round-trip time, > 0 (s).

    Returns
    -------
    (p_tcp, p_queue) : tuple of float
        Both in rad/s.
    """
    C_ = float(check_positive("C", C))
    N_ = float(check_positive("N", N))
    R_ = float(check_positive("R", R))
    return 2.0 * N_ / (R_**2 * C_), 1.0 / R_


def tcp_plant_gain(C: float, N: float, R: float) -> float:
    r"""DC gain of the normalised plant, :math:`(RC)^3 / (2N)^2` (packets)."""
    C_ = float(check_positive("C", C))
    N_ = float(check_positive("N", N))
    R_ = float(check_positive("R", R))
    return (R_ * C_) ** 3 / (2.0 * N_) ** 2


def tcp_plant_response(
    omega: ArrayLike, C: float, N: float, R: float
) -> complex | NDArray[np.complex128]:
    r"""Frequency response of the linearised TCP/AQM plant.

    .. math::
        P(s) = \frac{(RC)^3/(2N)^2}{\left(\frac{s}{p_{tcp}} + 1\right)
               \left(\frac{s}{p_{queue}} + 1\right)} e^{-sR}
             = \frac{C^2/(2N)}{(s + \frac{2N}{R^2C})(s + \frac1R)} e^{-sR}

    from loss probability ``p`` to queue length ``q`` (packets), evaluated
    at ``s = j omega``.
    """
    w = check_nonnegative("omega", omega)
    p_tcp, p_q = tcp_plant_poles(C, N, R)
    s = 1j * w
    out = tcp_plant_gain(C, N, R) * np.exp(-s * R) / ((s / p_tcp + 1) * (s / p_q + 1))
    return complex(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------------------
# PI design rule
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PIDesign:
    r"""Result of :func:`pi_design`.

    The continuous controller is
    :math:`C_{PI}(s) = K_{PI}(s/z + 1)/s = K_p + K_i/s`.

    Attributes
    ----------
    K_pi : float
        Integral gain ``K_PI`` = ``K_i`` (1/(packet s)).
    z : float
        Controller zero (rad/s), placed at the TCP pole.
    omega_g : float
        Design crossover frequency (rad/s).
    Kp, Ki : float
        Proportional gain ``K_PI / z`` (1/packet) and integral gain ``K_PI``.
    C, N_min, R_max : float
        Design inputs.
    gain_rule : str
        ``"paper"`` or ``"unity"``, see :func:`pi_design`.
    """

    K_pi: float
    z: float
    omega_g: float
    Kp: float
    Ki: float
    C: float
    N_min: float
    R_max: float
    gain_rule: str


def pi_design(
    C: float,
    N_min: float,
    R_max: float,
    omega_g: float | None = None,
    gain_rule: str = "paper",
) -> PIDesign:
    r"""PI AQM design rule of Hollot, Misra, Towsley, Gong (INFOCOM 2001).

    The zero cancels the TCP pole of the worst-case plant (fewest flows
    ``N-``, longest RTT ``R+``):

    .. math:: z = \frac{2N^-}{(R^+)^2 C}

    which leaves the loop
    :math:`L(s) = K_{PI}\frac{(R^+C)^3}{(2N^-)^2}\frac{e^{-sR^+}}{s(sR^+ + 1)}`.
    The gain follows from the crossover frequency :math:`\omega_g`
    (default :math:`\omega_g = z`):

    * ``gain_rule="paper"`` (default):
      :math:`K_{PI} = \omega_g \frac{(2N^-)^2}{(R^+C)^3}
      \frac{1}{|j\omega_g R^+ + 1|}` — the form that reproduces the paper's
      published example (z = 0.53, K_PI = 9.64e-6, a = 1.822e-5,
      b = 1.816e-5; see ``docs/models.md``).
    * ``gain_rule="unity"``: :math:`K_{PI} = \omega_g \frac{(2N^-)^2}{(R^+C)^3}
      |j\omega_g R^+ + 1|`, which makes :math:`|L(j\omega_g)| = 1` exactly
      (1.7 % larger gain in the paper's example).

    Parameters
    ----------
    C : float
        Link capacity, > 0 (packets/s).
    N_min : float
        Smallest number of TCP flows ``N-``, > 0.
    R_max : float
        Largest round-trip time ``R+``, > 0 (s).
    omega_g : float, optional
        Crossover frequency (rad/s), > 0; default ``z``.
    gain_rule : {"paper", "unity"}

    Returns
    -------
    PIDesign
    """
    if gain_rule not in _GAIN_RULES:
        raise ValueError(f"gain_rule must be one of {_GAIN_RULES}, got {gain_rule!r}")
    C_ = float(check_positive("C", C))
    N_ = float(check_positive("N_min", N_min))
    R_ = float(check_positive("R_max", R_max))
    z, _ = tcp_plant_poles(C_, N_, R_)
    wg = z if omega_g is None else float(check_positive("omega_g", omega_g))
    base = wg / tcp_plant_gain(C_, N_, R_)
    mag = math.hypot(wg * R_, 1.0)
    K = base / mag if gain_rule == "paper" else base * mag
    return PIDesign(
        K_pi=K,
        z=z,
        omega_g=wg,
        Kp=K / z,
        Ki=K,
        C=C_,
        N_min=N_,
        R_max=R_,
        gain_rule=gain_rule,
    )


def pi_loop_response(
    omega: ArrayLike, Kp: float, Ki: float, C: float, N: float, R: float
) -> complex | NDArray[np.complex128]:
    r"""Open-loop response :math:`L(j\omega) = (K_p + K_i/(j\omega)) P(j\omega)`.

    ``P`` from :func:`tcp_plant_response` evaluated at the operating point
    ``(C, N, R)``; ``omega`` must be > 0.
    """
    w = check_positive("omega", omega)
    kp = float(check_nonnegative("Kp", Kp))
    ki = float(check_nonnegative("Ki", Ki))
    out = (kp + ki / (1j * w)) * np.asarray(tcp_plant_response(w, C, N, R))
    return complex(out) if np.ndim(out) == 0 else out


def pi_phase_margin(Kp: float, Ki: float, C: float, N: float, R: float) -> tuple[float, float]:
    r"""Gain-crossover frequency and phase margin of the PI/TCP loop.

    Finds the first :math:`\omega_c` with :math:`|L(j\omega_c)| = 1`
    (:func:`pi_loop_response`) and returns
    :math:`PM = \pi + \arg L(j\omega_c)` (unwrapped phase, radians). A
    positive margin means the (single-crossover) loop is stable.

    Returns
    -------
    (omega_c, phase_margin) : tuple of float
        rad/s and rad.
    """

    def logmag(lw: float) -> float:
        return math.log(abs(pi_loop_response(10.0**lw, Kp, Ki, C, N, R)))

    grid = np.linspace(-8.0, 6.0, 1401)
    vals = np.log(np.abs(pi_loop_response(10.0**grid, Kp, Ki, C, N, R)))
    idx = np.nonzero((vals[:-1] > 0) & (vals[1:] <= 0))[0]
    if idx.size == 0:
        raise ValueError("loop gain never crosses 1 in [1e-8, 1e6] rad/s")
    i = int(idx[0])
    lw = brentq(logmag, grid[i], grid[i + 1], xtol=1e-13)
    wc = 10.0**lw
    # Unwrapped phase: -pi/2 (integrator, PI zero adds lead) ...
    p_tcp, p_q = tcp_plant_poles(C, N, R)
    phase = (
        -math.pi / 2
        + math.atan2(wc, Ki / Kp if Kp > 0 else math.inf)
        - math.atan(wc / p_tcp)
        - math.atan(wc / p_q)
        - wc * R
    )
    return wc, math.pi + phase


# ---------------------------------------------------------------------------
# Discretisation:  p(k) = a e(k) - b e(k-1) + p(k-1),  e = q - q_ref
# ---------------------------------------------------------------------------


def _check_method(method: str) -> None:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")


def pi_gains_to_ab(
    Kp: ArrayLike, Ki: ArrayLike, T: ArrayLike, method: str = "bilinear"
) -> tuple[Any, Any]:
    r"""Continuous PI gains to the coefficients of the incremental PI law.

    The router runs, every ``T`` seconds,
    :math:`p(k) = a\,(q(k)-q_{ref}) - b\,(q(k-1)-q_{ref}) + p(k-1)`.

    * ``"bilinear"`` (Tustin, as in Hollot et al. 2001):
      :math:`a = K_p + K_i T/2`, :math:`b = K_p - K_i T/2`
    * ``"backward"`` (backward difference):
      :math:`a = K_p + K_i T`, :math:`b = K_p`
    * ``"forward"`` (forward difference):
      :math:`a = K_p`, :math:`b = K_p - K_i T`

    Parameters
    ----------
    Kp : float or array_like
        Proportional gain, >= 0 (1/packet).
    Ki : float or array_like
        Integral gain, >= 0 (1/(packet s)).
    T : float or array_like
        Sampling interval, > 0 (s) (``1 / f_s``).
    method : {"bilinear", "backward", "forward"}

    Returns
    -------
    (a, b)
    """
    _check_method(method)
    kp = check_nonnegative("Kp", Kp)
    ki = check_nonnegative("Ki", Ki)
    t = check_positive("T", T)
    if method == "bilinear":
        a, b = kp + ki * t / 2, kp - ki * t / 2
    elif method == "backward":
        a, b = kp + ki * t, kp + 0 * t
    else:
        a, b = kp + 0 * t, kp - ki * t
    return _out(a), _out(b)


def pi_ab_to_gains(
    a: ArrayLike, b: ArrayLike, T: ArrayLike, method: str = "bilinear"
) -> tuple[Any, Any]:
    r"""Inverse of :func:`pi_gains_to_ab`.

    * ``"bilinear"``: :math:`K_p = (a+b)/2`, :math:`K_i = (a-b)/T`
    * ``"backward"``: :math:`K_p = b`, :math:`K_i = (a-b)/T`
    * ``"forward"``: :math:`K_p = a`, :math:`K_i = (a-b)/T`

    Raises
    ------
    ValueError
        If ``a < b`` (negative integral gain) or a resulting gain is negative.
    """
    _check_method(method)
    a_ = as_float_array("a", a)
    b_ = as_float_array("b", b)
    t = check_positive("T", T)
    if not (np.isfinite(a_).all() and np.isfinite(b_).all()):
        raise ValueError("a and b must be finite")
    if (a_ < b_).any():
        raise ValueError(f"a must be >= b (non-negative integral gain), got a={a!r}, b={b!r}")
    ki = (a_ - b_) / t
    kp = {"bilinear": (a_ + b_) / 2, "backward": b_ + 0 * t, "forward": a_ + 0 * t}[method]
    if (kp < 0).any():
        raise ValueError(f"a and b give a negative proportional gain: Kp={kp!r}")
    return _out(kp), _out(ki)


def pi_discretize(design: PIDesign, fs: float, method: str = "bilinear") -> tuple[float, float]:
    """Coefficients ``(a, b)`` of a :class:`PIDesign` at sampling frequency ``fs`` (Hz)."""
    f = float(check_positive("fs", fs))
    a, b = pi_gains_to_ab(design.Kp, design.Ki, 1.0 / f, method)
    return float(a), float(b)


def _out(x: NDArray[np.float64]) -> Any:
    return float(x) if np.ndim(x) == 0 else x


# ---------------------------------------------------------------------------
# ITSE and Nelder-Mead tuning (paper 001, Sec. III-A, eq. (1))
# ---------------------------------------------------------------------------


def itse(t: ArrayLike, e: ArrayLike) -> float:
    r"""Integrated time-weighted squared error, paper 001 eq. (1).

    .. math:: J = \int_{t_0}^{t_1} t\, e(t)^2\, dt

    computed with the trapezoidal rule on the samples.

    Parameters
    ----------
    t : array_like
        Sample times, strictly increasing (s).
    e : array_like
        Error samples ``q(t) - q_ref`` (packets), same length as ``t``.

    Returns
    -------
    float
        ``J`` in packet^2 s^2.
    """
    t_ = as_float_array("t", t)
    e_ = as_float_array("e", e)
    if t_.ndim != 1 or e_.ndim != 1:
        raise ValueError("t and e must be one-dimensional")
    if t_.shape != e_.shape:
        raise ValueError(f"t and e must have the same length, got {t_.size} and {e_.size}")
    if t_.size < 2:
        raise ValueError("t must have at least two samples")
    if not np.isfinite(t_).all():
        raise ValueError("t must be finite")
    if (np.diff(t_) <= 0).any():
        raise ValueError("t must be strictly increasing")
    if not np.isfinite(e_).all():
        return math.inf
    y = t_ * e_**2
    return float(np.sum(np.diff(t_) * (y[1:] + y[:-1]) / 2.0))


@dataclass(frozen=True)
class PITuneResult:
    """Result of :func:`tune_pi_itse`.

    Attributes
    ----------
    Kp, Ki : float
        Tuned gains.
    J : float
        ITSE at the tuned gains.
    J0 : float
        ITSE at the initial gains.
    nfev : int
        Number of simulations run.
    success : bool
        Whether Nelder-Mead reported convergence.
    result : scipy.optimize.OptimizeResult
        Raw optimiser output (in the search coordinates).
    """

    Kp: float
    Ki: float
    J: float
    J0: float
    nfev: int
    success: bool
    result: OptimizeResult = field(repr=False)


def tune_pi_itse(
    simulate: Callable[[float, float], tuple[ArrayLike, ArrayLike]],
    x0: tuple[float, float],
    *,
    log_space: bool = True,
    maxiter: int = 200,
    xatol: float = 1e-3,
    fatol: float = 0.0,
    initial_simplex: ArrayLike | None = None,
) -> PITuneResult:
    r"""Tune PI gains by minimising ITSE with Nelder-Mead (paper 001, Sec. III-A).

    Minimises :math:`J(K_p, K_i) = \int t\,e(t; K_p, K_i)^2\,dt` (eq. (1))
    with :func:`scipy.optimize.minimize` (``method="Nelder-Mead"``, the
    downhill simplex of the paper). ``simulate`` can be a fluid model
    (:func:`fluid_pi_simulator`) or a packet simulation.

    Parameters
    ----------
    simulate : callable
        ``simulate(Kp, Ki) -> (t, e)`` with ``e = q - q_ref``.
    x0 : (float, float)
        Initial ``(Kp, Ki)``; both > 0 when ``log_space``.
    log_space : bool, optional
        Search over ``log10(Kp), log10(Ki)`` (default): AQM gains are ~1e-5
        and span decades, and this keeps them positive.
    maxiter : int, optional
        Iteration limit for Nelder-Mead.
    xatol, fatol : float, optional
        Nelder-Mead tolerances (in search coordinates / in ``J``).
    initial_simplex : array_like, optional
        Passed to Nelder-Mead (search coordinates).

    Returns
    -------
    PITuneResult
    """
    if not callable(simulate):
        raise ValueError("simulate must be callable")
    if len(x0) != 2:
        raise ValueError("x0 must be a pair (Kp, Ki)")
    kp0 = float(check_nonnegative("x0[0] (Kp)", x0[0]))
    ki0 = float(check_nonnegative("x0[1] (Ki)", x0[1]))
    if log_space and (kp0 <= 0 or ki0 <= 0):
        raise ValueError("x0 must be > 0 when log_space=True")

    def to_gains(x: NDArray[np.float64]) -> tuple[float, float]:
        if log_space:
            return 10.0 ** float(x[0]), 10.0 ** float(x[1])
        return float(x[0]), float(x[1])

    def objective(x: NDArray[np.float64]) -> float:
        kp, ki = to_gains(x)
        if kp < 0 or ki < 0:
            return math.inf
        t, e = simulate(kp, ki)
        return itse(t, e)

    start = np.log10([kp0, ki0]) if log_space else np.array([kp0, ki0])
    J0 = objective(start)
    options: dict[str, Any] = {"maxiter": maxiter, "xatol": xatol, "fatol": fatol}
    if initial_simplex is not None:
        options["initial_simplex"] = np.asarray(initial_simplex, dtype=float)
    res = minimize(objective, start, method="Nelder-Mead", options=options)
    kp, ki = to_gains(res.x)
    return PITuneResult(
        Kp=kp,
        Ki=ki,
        J=float(res.fun),
        J0=J0,
        nfev=int(res.nfev) + 1,
        success=bool(res.success),
        result=res,
    )


def fluid_pi_simulator(
    N: float,
    C: float,
    Tp: float,
    q_ref: float,
    duration: float,
    dt: float = 1e-3,
    **fluid_kwargs: Any,
) -> Callable[[float, float], tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Build a ``simulate(Kp, Ki) -> (t, e)`` callable from the fluid model.

    Runs :func:`satqm.models.fluid.simulate_fluid` with ``aqm="pi"`` and
    returns the time axis and the queue error ``q - q_ref`` (packets), for use
    with :func:`tune_pi_itse`. Extra keyword arguments go to
    ``simulate_fluid``.
    """
    from .fluid import simulate_fluid

    check_positive("duration", duration)
    check_nonnegative("q_ref", q_ref)

    def simulate(Kp: float, Ki: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        res = simulate_fluid(
            N=N,
            C=C,
            Tp=Tp,
            duration=duration,
            dt=dt,
            aqm="pi",
            q_ref=q_ref,
            kp=Kp,
            ki=Ki,
            **fluid_kwargs,
        )
        return res.t, res.q[:, 0] - q_ref

    return simulate
