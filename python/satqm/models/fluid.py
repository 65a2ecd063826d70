r"""Misra-Gong-Towsley TCP/AQM fluid model with RED, PI and AVQ closures.

Misra, Gong, Towsley, "Fluid-based analysis of a network of AQM routers
supporting TCP flows with an application to RED", ACM SIGCOMM 2000 (not in
``shared/papers``; cited as [4] by paper 004):

.. math::
    \dot W(t) = \frac{1}{R(t)}
               - \frac{W(t)}{2}\frac{W(t-R(t))}{R(t-R(t))} p(t-R(t))

    \dot q(t) = N\frac{W(t)}{R(t)} - C \quad (q \ge 0,\ q \le B)

    R(t) = \frac{q(t)}{C} + T_p

closed by an AQM law for ``p``:

* ``"red"`` — RED (Floyd-Jacobson) as in MGT: the average queue obeys
  ``dx/dt = (ln(1-w_q)/delta) (x - q)`` (``delta`` the sampling interval,
  default ``1/C``) and ``p = RED(x)`` with ``min_th``, ``max_th``,
  ``max_p`` and optional *gentle* mode.
* ``"pi"`` — PI controller in continuous (velocity) form,
  ``dp/dt = K_p dq/dt + K_i (q - q_ref)``, ``0 <= p <= 1`` (gains from
  :mod:`satqm.models.pi`, or from ``a, b`` at sampling frequency ``fs``).
* ``"avq"`` — AVQ (Kunniyur-Srikant, ``papers/002``, eqs. (1)/(3)):
  ``dC~/dt = alpha (gamma C - lambda)``, ``0 <= C~ <= C`` with
  ``lambda = N W / R``; marking from virtual-queue overflow, either
  bufferless ``p = (1 - C~/lambda)^+`` or a fluid virtual queue of
  ``vq_buffer`` packets that marks the overflowing fraction when full.
* ``"fixed"`` — constant ``p`` (for checks against the closed form).
* ``"droptail"`` — no AQM marking; only buffer overflow.

With a finite ``buffer`` the overflow fraction ``1 - C/lambda`` of a full
queue is added to the AQM's ``p`` (``p_eff = 1 - (1-p)(1-loss)``).

Integration: explicit Euler with a fixed step ``dt``; the delayed term
``h(s) = W(s) p_eff(s) / (2 R(s))`` is kept in a ring buffer and read at
``s = t - R(t)`` rounded to the nearest step (``delay_interp="nearest"``,
default) or interpolated linearly between the two steps around it
(``"linear"``). The window is kept in ``[w_min, w_max]`` (default
``[1, inf)`` packets). Units: packets, packets/s, seconds.

All numeric parameters may be arrays (a batch of parameter sets, broadcast
together); the whole batch is integrated in one call. Three backends compute
the same arithmetic in the same order:

* ``"rust"``: the compiled kernel ``satqm._core.fluid_simulate``
  (``crates/satqm-core/src/fluid/``), which releases the GIL; 20 minutes of
  model time at ``dt`` = 1 ms take about 20 ms for one parameter set.
* ``"python"``: a pure-Python scalar loop per member, and ``"numpy"``: one
  step loop vectorised over the batch. They need no compiled code and are
  the independent reference the Rust kernel is tested against.
* ``"auto"`` (default): ``"rust"``; only when the compiled module is not
  built (a source checkout run as plain Python), ``"python"`` for small
  batches and ``"numpy"`` for large ones.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq

from ._validate import (
    check_in_range,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
)

__all__ = [
    "FluidResult",
    "simulate_fluid",
    "red_drop_probability",
    "red_equilibrium",
    "pi_equilibrium",
    "avq_fluid_equilibrium",
    "fixed_p_equilibrium",
]

_AQMS = ("red", "pi", "avq", "fixed", "droptail")
_RED, _PI, _AVQ, _FIXED, _DROPTAIL = range(5)
_BACKENDS = ("auto", "rust", "python", "numpy")
_DELAY_INTERP = ("nearest", "linear")
_AUTO_NUMPY_BATCH = 48


# ---------------------------------------------------------------------------
# RED profile and closed-form equilibria
# ---------------------------------------------------------------------------


def red_drop_probability(
    x: ArrayLike,
    min_th: float,
    max_th: float,
    max_p: float,
    gentle: bool = False,
) -> float | NDArray[np.float64]:
    r"""RED marking probability as a function of the average queue ``x``.

    .. math::
        p(x) = \begin{cases}
            0 & x < min_{th} \\
            max_p \frac{x - min_{th}}{max_{th} - min_{th}}
                & min_{th} \le x < max_{th} \\
            max_p + (1 - max_p)\frac{x - max_{th}}{max_{th}}
                & max_{th} \le x < 2 max_{th} \text{ (gentle)} \\
            1 & \text{otherwise}
        \end{cases}

    (Floyd & Jacobson 1993; "gentle" as used by paper 004's Adaptive RED.)
    The count-based spacing of drops is not modelled (fluid limit).

    Parameters
    ----------
    x : float or array_like
        Average queue length (packets), >= 0.
    min_th, max_th : float
        Thresholds (packets), ``0 <= min_th < max_th``.
    max_p : float
        Marking probability at ``max_th``, in [0, 1].
    gentle : bool
        Gentle mode.
    """
    x_ = check_nonnegative("x", x)
    lo, hi, mp = _check_red(min_th, max_th, max_p)
    out = np.where(x_ < lo, 0.0, mp * (x_ - lo) / (hi - lo))
    if gentle:
        tail = np.minimum(1.0, mp + (1.0 - mp) * (x_ - hi) / hi)
    else:
        tail = np.ones_like(x_)
    out = np.where(x_ >= hi, tail, out)
    return float(out) if out.ndim == 0 else out


def _check_red(min_th: Any, max_th: Any, max_p: Any) -> tuple[Any, Any, Any]:
    lo = check_nonnegative("min_th", min_th)
    hi = check_positive("max_th", max_th)
    mp = check_probability("max_p", max_p)
    if np.any(lo >= hi):
        raise ValueError(f"min_th must be < max_th, got min_th={min_th!r}, max_th={max_th!r}")
    return lo, hi, mp


def fixed_p_equilibrium(N: float, C: float, Tp: float, p: float) -> dict[str, float]:
    r"""Equilibrium of the fluid model under a constant marking probability.

    .. math::
        W^* = \sqrt{2/p},\qquad
        q^* = \max(0,\ N W^* - C T_p),\qquad R^* = q^*/C + T_p

    (``dW/dt = 0`` gives :math:`W^{*2} p = 2`; ``dq/dt = 0`` with a
    non-empty queue gives :math:`N W^* / R^* = C`.)

    Returns
    -------
    dict
        ``W`` (packets), ``q`` (packets), ``R`` (s), ``p``, ``rate``
        (packets/s).
    """
    N_ = float(check_positive("N", N))
    C_ = float(check_positive("C", C))
    T_ = float(check_positive("Tp", Tp))
    p_ = float(check_probability("p", p, allow_zero=False))
    W = math.sqrt(2.0 / p_)
    q = max(0.0, N_ * W - C_ * T_)
    R = q / C_ + T_
    return {"W": W, "q": q, "R": R, "p": p_, "rate": N_ * W / R}


def red_equilibrium(
    N: float,
    C: float,
    Tp: float,
    min_th: float,
    max_th: float,
    max_p: float,
    gentle: bool = False,
) -> dict[str, float]:
    r"""Equilibrium of the TCP/RED fluid model (MGT 2000, Sec. 4).

    Solves for :math:`q^*` (with ``brentq``)

    .. math::
        W^{*2}\, p_{RED}(q^*) = 2,\qquad W^* = \frac{R^* C}{N},\qquad
        R^* = \frac{q^*}{C} + T_p

    (the average queue equals ``q*`` at equilibrium).

    Returns
    -------
    dict
        ``W``, ``q``, ``R``, ``p``, ``rate``.

    Raises
    ------
    ValueError
        If the RED profile crosses the TCP curve only at its jump at
        ``max_th`` (non-gentle) or nowhere (no equilibrium).
    """
    N_ = float(check_positive("N", N))
    C_ = float(check_positive("C", C))
    T_ = float(check_positive("Tp", Tp))
    lo, hi, mp = (float(v) for v in _check_red(min_th, max_th, max_p))

    def F(q: float) -> float:
        W = (q / C_ + T_) * C_ / N_
        return W * W * float(red_drop_probability(q, lo, hi, mp, gentle)) - 2.0

    q_top = 2.0 * hi if gentle else hi
    edge = q_top * (1 - 1e-12)
    if F(edge) < 0.0:
        if not gentle and F(hi) >= 0.0:
            raise ValueError(
                "no smooth RED equilibrium: the TCP curve meets the RED profile "
                "at its jump at max_th"
            )
        raise ValueError("no RED equilibrium: W*^2 p < 2 even at p = 1")
    q = float(brentq(F, lo, edge, xtol=1e-12, rtol=1e-14))
    W = (q / C_ + T_) * C_ / N_
    return {
        "W": W,
        "q": q,
        "R": q / C_ + T_,
        "p": float(red_drop_probability(q, lo, hi, mp, gentle)),
        "rate": C_,
    }


def pi_equilibrium(N: float, C: float, Tp: float, q_ref: float) -> dict[str, float]:
    r"""Equilibrium of the TCP/PI fluid model.

    .. math::
        q^* = q_{ref},\quad R^* = q_{ref}/C + T_p,\quad
        W^* = R^* C / N,\quad p^* = 2 / W^{*2}

    Raises
    ------
    ValueError
        If ``p* > 1`` (``W* < sqrt 2``).
    """
    N_ = float(check_positive("N", N))
    C_ = float(check_positive("C", C))
    T_ = float(check_positive("Tp", Tp))
    q_ = float(check_nonnegative("q_ref", q_ref))
    R = q_ / C_ + T_
    W = R * C_ / N_
    p = 2.0 / W**2
    if p > 1.0:
        raise ValueError(f"no PI equilibrium: p* = 2/W*^2 = {p:.3g} > 1")
    return {"W": W, "q": q_, "R": R, "p": p, "rate": C_}


def avq_fluid_equilibrium(N: float, C: float, Tp: float, gamma: float) -> dict[str, float]:
    r"""Equilibrium of the TCP/AVQ fluid model (window form).

    The virtual-capacity law forces :math:`\lambda^* = \gamma C`; for
    :math:`\gamma < 1` the real queue is empty, so

    .. math::
        R^* = T_p,\quad W^* = \frac{\gamma C T_p}{N},\quad
        p^* = \frac{2}{W^{*2}},\quad \tilde C^* = \gamma C (1 - p^*)

    (the last from the marking law :math:`p = 1 - \tilde C/\lambda`).

    Raises
    ------
    ValueError
        If ``p* >= 1``.
    """
    N_ = float(check_positive("N", N))
    C_ = float(check_positive("C", C))
    T_ = float(check_positive("Tp", Tp))
    g_ = float(check_in_range("gamma", gamma, 0.0, 1.0, low_open=True))
    W = g_ * C_ * T_ / N_
    p = 2.0 / W**2
    if p >= 1.0:
        raise ValueError(f"no AVQ equilibrium: p* = 2/W*^2 = {p:.3g} >= 1")
    return {"W": W, "q": 0.0, "R": T_, "p": p, "rate": g_ * C_, "vcap": g_ * C_ * (1 - p)}


# ---------------------------------------------------------------------------
# Result container
# ---------------------------------------------------------------------------


@dataclass
class FluidResult:
    """Trajectories of :func:`simulate_fluid`.

    Arrays have shape ``(len(t), M)`` for a batch of ``M`` parameter sets.

    Attributes
    ----------
    t : numpy.ndarray
        Sample times (s).
    W : numpy.ndarray
        Congestion window (packets).
    q : numpy.ndarray
        Queue length (packets).
    p : numpy.ndarray
        AQM marking probability.
    p_eff : numpy.ndarray
        Marking plus overflow-loss probability seen by TCP.
    R : numpy.ndarray
        Round-trip time ``q/C + Tp`` (s).
    rate : numpy.ndarray
        Aggregate arrival rate ``N W / R`` (packets/s).
    aux : numpy.ndarray
        AQM state: RED average queue (packets), AVQ virtual capacity
        (packets/s), otherwise ``p``.
    aqm : str
        AQM name.
    params : dict
        Broadcast parameter arrays, shape ``(M,)``.
    """

    t: NDArray[np.float64]
    W: NDArray[np.float64]
    q: NDArray[np.float64]
    p: NDArray[np.float64]
    p_eff: NDArray[np.float64]
    R: NDArray[np.float64]
    rate: NDArray[np.float64]
    aux: NDArray[np.float64]
    aqm: str
    params: dict[str, NDArray[np.float64]] = field(repr=False)

    @property
    def batch_size(self) -> int:
        """Number of parameter sets ``M``."""
        return int(self.W.shape[1])

    def frame(self, member: int = 0) -> pd.DataFrame:
        """Trajectories of one parameter set as a :class:`pandas.DataFrame`."""
        m = check_int("member", member, minimum=0)
        if m >= self.batch_size:
            raise ValueError(f"member must be < {self.batch_size}, got {member!r}")
        aux_name = {"red": "avg", "avq": "vcap"}.get(self.aqm, "aux")
        return pd.DataFrame(
            {
                "t": self.t,
                "W": self.W[:, m],
                "q": self.q[:, m],
                "p": self.p[:, m],
                "p_eff": self.p_eff[:, m],
                "R": self.R[:, m],
                "rate": self.rate[:, m],
                aux_name: self.aux[:, m],
            }
        )

    def time_average(self, name: str, t_from: float = 0.0) -> NDArray[np.float64]:
        """Mean of a trajectory over samples with ``t >= t_from``, per member."""
        if name not in ("W", "q", "p", "p_eff", "R", "rate", "aux"):
            raise ValueError(f"name must be a trajectory name, got {name!r}")
        sel = self.t >= float(check_nonnegative("t_from", t_from))
        if not sel.any():
            raise ValueError("t_from is after the last sample")
        return np.asarray(getattr(self, name)[sel].mean(axis=0))


# ---------------------------------------------------------------------------
# Integrator
# ---------------------------------------------------------------------------


def simulate_fluid(
    N: ArrayLike,
    C: ArrayLike,
    Tp: ArrayLike,
    duration: float,
    dt: float = 1e-3,
    aqm: str = "red",
    *,
    W0: ArrayLike = 1.0,
    q0: ArrayLike = 0.0,
    buffer: ArrayLike = np.inf,
    w_min: ArrayLike = 1.0,
    w_max: ArrayLike = np.inf,
    record_interval: float | None = None,
    max_queue_delay: float = 10.0,
    backend: str = "auto",
    delay_interp: str = "nearest",
    # RED
    min_th: ArrayLike | None = None,
    max_th: ArrayLike | None = None,
    max_p: ArrayLike | None = None,
    w_q: ArrayLike | None = None,
    gentle: bool = False,
    red_delta: ArrayLike | None = None,
    # PI
    q_ref: ArrayLike | None = None,
    kp: ArrayLike | None = None,
    ki: ArrayLike | None = None,
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    fs: ArrayLike | None = None,
    p0: ArrayLike = 0.0,
    # AVQ
    gamma: ArrayLike | None = None,
    alpha: ArrayLike | None = None,
    vq_buffer: ArrayLike = 0.0,
    vcap0: ArrayLike | None = None,
    # fixed
    p_fixed: ArrayLike | None = None,
) -> FluidResult:
    """Integrate the MGT fluid model with an AQM closure.

    Parameters
    ----------
    N : float or array_like
        Number of TCP flows, > 0.
    C : float or array_like
        Link capacity, > 0 (packets/s).
    Tp : float or array_like
        Round-trip propagation delay, >= ``dt`` (s).
    duration : float
        Model time to integrate, > 0 (s).
    dt : float, optional
        Fixed step, > 0 (s); default 1 ms.
    aqm : {"red", "pi", "avq", "fixed", "droptail"}
        AQM closure (module docstring).
    W0, q0 : float or array_like, optional
        Initial window (packets) and queue (packets); history before t = 0
        is the initial state with no marking.
    buffer : float or array_like, optional
        Buffer size (packets), > 0; ``inf`` (default) for none. Required
        (finite) for ``"droptail"``.
    w_min, w_max : float or array_like, optional
        Window limits (packets), ``0 < w_min < w_max``.
    record_interval : float, optional
        Spacing of recorded samples (s), a multiple of ``dt``. Default: the
        multiple of ``dt`` nearest to 10 ms (every step when ``dt >= 10
        ms``); pass ``dt`` to keep every step.
    max_queue_delay : float, optional
        Longest queueing delay kept in the delay history when ``buffer`` is
        infinite (s, default 10); longer delays read the oldest sample.
    backend : {"auto", "rust", "python", "numpy"}
        ``"rust"``: the compiled kernel; ``"python"``: a scalar loop per
        member; ``"numpy"``: one loop vectorised over the batch; ``"auto"``
        (default): Rust, or without the compiled module Python or numpy by
        batch size. All give the same ``FluidResult``.
    delay_interp : {"nearest", "linear"}
        How the delayed term is read at ``t - R(t)``: the nearest step
        (default) or linear interpolation between the two steps around it.
    min_th, max_th, max_p, w_q, gentle, red_delta
        RED thresholds (packets), maximum probability, EWMA weight in (0, 1),
        gentle mode, and averaging sampling interval (s, default ``1/C``).
    q_ref, kp, ki
        PI reference queue (packets) and continuous gains
        (1/packet, 1/(packet s)).
    a, b, fs
        Alternatively, ns-2 style PI coefficients and sampling frequency
        (Hz), converted with the bilinear rule ``kp = (a+b)/2``,
        ``ki = (a-b) fs``.
    p0 : float or array_like, optional
        Initial PI marking probability.
    gamma, alpha
        AVQ desired utilisation in (0, 1] and smoothing parameter (1/s).
    vq_buffer : float or array_like, optional
        AVQ virtual buffer (packets); 0 (default) for the bufferless marking
        ``p = (1 - C~/lambda)^+``.
    vcap0 : float or array_like, optional
        Initial virtual capacity (packets/s), default ``gamma C``.
    p_fixed : float or array_like
        Marking probability for ``aqm="fixed"``.

    Returns
    -------
    FluidResult
    """
    if aqm not in _AQMS:
        raise ValueError(f"aqm must be one of {_AQMS}, got {aqm!r}")
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    if delay_interp not in _DELAY_INTERP:
        raise ValueError(f"delay_interp must be one of {_DELAY_INTERP}, got {delay_interp!r}")
    h = float(check_positive("dt", dt))
    T = float(check_positive("duration", duration))
    n_steps = int(round(T / h))
    if n_steps < 1:
        raise ValueError("duration must be at least one step dt")
    if record_interval is None:
        rec = max(1, int(round(0.01 / h)))
    else:
        ri = float(check_positive("record_interval", record_interval))
        rec = int(round(ri / h))
        if rec < 1 or abs(rec * h - ri) > 1e-9 * max(ri, 1.0):
            raise ValueError("record_interval must be a positive multiple of dt")
    mqd = float(check_positive("max_queue_delay", max_queue_delay))

    P: dict[str, Any] = {
        "N": check_positive("N", N),
        "C": check_positive("C", C),
        "Tp": check_positive("Tp", Tp),
        "W0": check_positive("W0", W0),
        "q0": check_nonnegative("q0", q0),
        "buffer": check_positive("buffer", buffer, allow_inf=True),
        "w_min": check_positive("w_min", w_min),
        "w_max": check_positive("w_max", w_max, allow_inf=True),
    }
    kind = _AQMS.index(aqm)
    if kind == _RED:
        for name, val in (("min_th", min_th), ("max_th", max_th), ("max_p", max_p), ("w_q", w_q)):
            if val is None:
                raise ValueError(f"{name} is required for aqm='red'")
        lo, hi, mp = _check_red(min_th, max_th, max_p)
        wq = check_in_range("w_q", w_q, 0.0, 1.0, low_open=True, high_open=True)
        delta = P["C"] ** -1.0 if red_delta is None else check_positive("red_delta", red_delta)
        P.update(min_th=lo, max_th=hi, max_p=mp, w_q=wq, red_delta=delta)
    elif kind == _PI:
        if q_ref is None:
            raise ValueError("q_ref is required for aqm='pi'")
        P["q_ref"] = check_nonnegative("q_ref", q_ref)
        if kp is not None or ki is not None:
            if kp is None or ki is None or a is not None or b is not None:
                raise ValueError("give either kp and ki, or a, b and fs")
            P["kp"] = check_nonnegative("kp", kp)
            P["ki"] = check_nonnegative("ki", ki)
        else:
            if a is None or b is None or fs is None:
                raise ValueError("aqm='pi' needs kp and ki, or a, b and fs")
            from .pi import pi_ab_to_gains

            f_ = check_positive("fs", fs)
            kp_, ki_ = pi_ab_to_gains(a, b, 1.0 / f_)
            P["kp"] = np.asarray(kp_, dtype=float)
            P["ki"] = np.asarray(ki_, dtype=float)
        P["p0"] = check_probability("p0", p0)
    elif kind == _AVQ:
        if gamma is None or alpha is None:
            raise ValueError("gamma and alpha are required for aqm='avq'")
        P["gamma"] = check_in_range("gamma", gamma, 0.0, 1.0, low_open=True)
        P["alpha"] = check_nonnegative("alpha", alpha)
        P["vq_buffer"] = check_nonnegative("vq_buffer", vq_buffer)
        P["vcap0"] = P["gamma"] * P["C"] if vcap0 is None else check_nonnegative("vcap0", vcap0)
    elif kind == _FIXED:
        if p_fixed is None:
            raise ValueError("p_fixed is required for aqm='fixed'")
        P["p_fixed"] = check_probability("p_fixed", p_fixed)

    try:
        arrays = np.broadcast_arrays(*[np.atleast_1d(v) for v in P.values()])
    except ValueError as exc:
        raise ValueError(f"parameter arrays cannot be broadcast together: {exc}") from exc
    if arrays[0].ndim != 1:
        raise ValueError("parameters must be scalars or one-dimensional arrays")
    B = {k: np.array(v, dtype=float) for k, v in zip(P.keys(), arrays)}
    M = int(B["N"].shape[0])

    if (B["Tp"] < h).any():
        raise ValueError("Tp must be >= dt")
    if (B["w_min"] >= B["w_max"]).any():
        raise ValueError("w_min must be < w_max")
    if kind == _DROPTAIL and not np.isfinite(B["buffer"]).all():
        raise ValueError("buffer must be finite for aqm='droptail'")
    if kind == _AVQ:
        B["vcap0"] = np.minimum(B["vcap0"], B["C"])

    # Delay history per member: its longest round trip in steps, plus two
    # (a member's trajectory does not depend on the rest of the batch).
    qmax = np.where(np.isfinite(B["buffer"]), B["buffer"], B["C"] * mqd)
    H = [int(r / h + 0.5) + 2 for r in (B["Tp"] + qmax / B["C"]).tolist()]

    kernel = _rust_kernel() if backend in ("rust", "auto") else None
    if backend == "rust" and kernel is None:
        raise ImportError(
            "backend='rust' needs the compiled module satqm._core (build it with "
            "`maturin develop --release`), or pass backend='numpy' or 'python'"
        )
    linear = delay_interp == "linear"
    n_rec = n_steps // rec + 1
    if kernel is not None:
        raw = kernel(aqm, B, T, h, rec, mqd, gentle, delay_interp)
        out = tuple(raw[k] for k in ("W", "q", "p", "p_eff", "aux"))
    elif backend == "numpy" or (backend == "auto" and M >= _AUTO_NUMPY_BATCH):
        out = _run_numpy(kind, B, gentle, n_steps, h, rec, np.array(H), n_rec, linear)
    else:
        cols = [
            _run_python(
                kind,
                {k: float(v[i]) for k, v in B.items()},
                gentle,
                n_steps,
                h,
                rec,
                H[i],
                n_rec,
                linear,
            )
            for i in range(M)
        ]
        out = tuple(np.column_stack([c[j] for c in cols]) for j in range(5))
    W, q, p, p_eff, aux = out
    R = q / B["C"] + B["Tp"]
    rate = B["N"] * W / R
    t = np.arange(n_rec) * (rec * h)
    return FluidResult(t=t, W=W, q=q, p=p, p_eff=p_eff, R=R, rate=rate, aux=aux, aqm=aqm, params=B)


def _rust_kernel() -> Any:
    """``satqm._core.fluid_simulate``, or ``None`` without the compiled module."""
    try:
        from satqm._core import fluid_simulate
    except ImportError:
        return None
    return fluid_simulate


def _run_python(
    kind: int,
    P: dict[str, float],
    gentle: bool,
    n_steps: int,
    dt: float,
    rec: int,
    H: int,
    n_rec: int,
    linear: bool = False,
) -> tuple[NDArray[np.float64], ...]:
    """Scalar Euler loop for one parameter set (``H`` history samples).

    Plain Python floats and lists with everything bound to locals: without a
    compiler this is the fastest way to step one delay-differential system.
    """
    N = P["N"]
    C = P["C"]
    Tp = P["Tp"]
    buf = P["buffer"]
    w_min = P["w_min"]
    w_max = P["w_max"]
    W = P["W0"]
    q = min(P["q0"], buf)
    iC = 1.0 / C
    idt = 1.0 / dt
    hmax = H - 1
    finite_buf = math.isfinite(buf)
    is_red = kind == _RED
    is_pi = kind == _PI
    is_avq = kind == _AVQ

    # AQM state and constants
    x = q
    p = 0.0
    lo = hi = mp = cred = slope = 0.0
    kp = ki_dt = qref = 0.0
    a_dt = agC_dt = vcap = vq = vqb = 0.0
    if is_red:
        lo, hi, mp = P["min_th"], P["max_th"], P["max_p"]
        cred = 1.0 - math.exp(math.log(1.0 - P["w_q"]) / P["red_delta"] * dt)
        slope = mp / (hi - lo)
        p = float(red_drop_probability(x, lo, hi, mp, gentle))
    elif is_pi:
        kp, ki_dt, qref = P["kp"], P["ki"] * dt, P["q_ref"]
        p = P["p0"]
    elif is_avq:
        a_dt = P["alpha"] * dt
        agC_dt = P["alpha"] * P["gamma"] * C * dt
        vcap = P["vcap0"]
        vqb = P["vq_buffer"]
    elif kind == _FIXED:
        p = P["p_fixed"]
    aux = x if is_red else (vcap if is_avq else p)

    hist = [0.0] * H  # h(s) = W p_eff / (2 R); no marking before t = 0
    ptr = 0
    R = q * iC + Tp
    pe = p
    hist[0] = 0.5 * W * p / R
    zeros = bytes(8 * n_rec)
    oW = array("d", zeros)
    oq = array("d", zeros)
    op = array("d", zeros)
    ope = array("d", zeros)
    oa = array("d", zeros)
    oW[0], oq[0], op[0], ope[0], oa[0] = W, q, p, p, aux
    r_i = 1
    r_c = rec
    for _ in range(n_steps):
        if linear:
            d = R * idt
            if d >= hmax:
                hd = hist[ptr - hmax]  # negative indices wrap around the ring
            else:
                m = int(d)
                a = hist[ptr - m]
                hd = a + (d - m) * (hist[ptr - m - 1] - a)
        else:
            m = int(R * idt + 0.5)
            if m > hmax:
                m = hmax
            hd = hist[ptr - m]
        inv = 1.0 / R
        lam = N * W * inv
        # window and queue (explicit Euler)
        Wn = W + (inv - W * hd) * dt
        if Wn < w_min:
            Wn = w_min
        elif Wn > w_max:
            Wn = w_max
        qn = q + (lam - C) * dt
        if qn < 0.0:
            qn = 0.0
        elif qn > buf:
            qn = buf
        R = qn * iC + Tp
        # AQM
        if is_red:
            x += cred * (q - x)
            if x < lo:
                p = 0.0
            elif x < hi:
                p = (x - lo) * slope
            elif gentle:
                p = mp + (1.0 - mp) * (x - hi) / hi
                if p > 1.0:
                    p = 1.0
            else:
                p = 1.0
            aux = x
        elif is_pi:
            p = p + kp * (qn - q) + ki_dt * (qn - qref)
            if p < 0.0:
                p = 0.0
            elif p > 1.0:
                p = 1.0
            aux = p
        elif is_avq:
            lam_n = N * Wn / R
            if vqb > 0.0:
                vq += (lam - vcap) * dt
                if vq < 0.0:
                    vq = 0.0
                elif vq > vqb:
                    vq = vqb
                p = 1.0 - vcap / lam_n if (vq >= vqb and lam_n > vcap) else 0.0
                vcap = vcap + agC_dt - a_dt * lam
                if vcap < 0.0:
                    vcap = 0.0
                elif vcap > C:
                    vcap = C
            else:
                vcap = vcap + agC_dt - a_dt * lam
                if vcap < 0.0:
                    vcap = 0.0
                elif vcap > C:
                    vcap = C
                p = 1.0 - vcap / lam_n if lam_n > vcap else 0.0
            aux = vcap
        else:
            aux = p
        W = Wn
        q = qn
        # buffer overflow loss: fraction 1 - C/lambda of a full queue's arrivals
        if finite_buf and qn >= buf:
            lam_n = N * W / R
            pe = 1.0 - (1.0 - p) * C / lam_n if lam_n > C else p
        else:
            pe = p
        ptr += 1
        if ptr == H:
            ptr = 0
        hist[ptr] = 0.5 * W * pe / R
        r_c -= 1
        if r_c == 0:
            r_c = rec
            oW[r_i] = W
            oq[r_i] = q
            op[r_i] = p
            ope[r_i] = pe
            oa[r_i] = aux
            r_i += 1
    return tuple(np.frombuffer(o, dtype=np.float64) for o in (oW, oq, op, ope, oa))


def _run_numpy(
    kind: int,
    P: dict[str, NDArray[np.float64]],
    gentle: bool,
    n_steps: int,
    dt: float,
    rec: int,
    H_m: NDArray[np.intp],
    n_rec: int,
    linear: bool = False,
) -> tuple[NDArray[np.float64], ...]:
    """Euler loop vectorised over the batch (same arithmetic as ``_run_python``).

    One ring of ``max(H_m)`` rows; member ``i`` reads at most ``H_m[i] - 1``
    steps back, as if it had its own ring of ``H_m[i]`` samples.
    """
    N, C, Tp = P["N"], P["C"], P["Tp"]
    buf, w_min, w_max = P["buffer"], P["w_min"], P["w_max"]
    M = N.shape[0]
    cols = np.arange(M)
    W = P["W0"].copy()
    q = np.minimum(P["q0"], buf)
    iC = 1.0 / C
    idt = 1.0 / dt

    x = q.copy()
    p = np.zeros(M)
    if kind == _RED:
        lo, hi, mp = P["min_th"], P["max_th"], P["max_p"]
        cred = 1.0 - np.exp(np.log(1.0 - P["w_q"]) / P["red_delta"] * dt)
        slope = mp / (hi - lo)
        p = np.asarray(red_drop_probability(x, lo, hi, mp, gentle), dtype=float)
        p = np.broadcast_to(p, (M,)).copy()
    elif kind == _PI:
        kp, ki_dt, qref = P["kp"], P["ki"] * dt, P["q_ref"]
        p = P["p0"].copy()
    elif kind == _AVQ:
        a_dt = P["alpha"] * dt
        agC_dt = P["alpha"] * P["gamma"] * C * dt
        vcap = P["vcap0"].copy()
        vqb = P["vq_buffer"]
        has_vq = vqb > 0.0
        vq = np.zeros(M)
    elif kind == _FIXED:
        p = P["p_fixed"].copy()
    aux = x.copy() if kind == _RED else (vcap.copy() if kind == _AVQ else p.copy())

    H = int(H_m.max())
    hmax = H_m - 1
    hist = np.zeros((H, M))
    ptr = 0
    R = q * iC + Tp
    hist[0] = 0.5 * W * p / R
    oW = np.empty((n_rec, M))
    oq = np.empty((n_rec, M))
    op = np.empty((n_rec, M))
    ope = np.empty((n_rec, M))
    oa = np.empty((n_rec, M))
    oW[0], oq[0], op[0], ope[0], oa[0] = W, q, p, p, aux
    r_i = 1
    r_c = rec
    finite_buf = np.isfinite(buf)
    any_buf = bool(finite_buf.any())
    for _ in range(n_steps):
        if linear:
            d = R * idt
            m = np.minimum(d, hmax).astype(np.intp)
            a = hist[(ptr - m) % H, cols]
            b = hist[(ptr - np.minimum(m + 1, hmax)) % H, cols]
            hd = np.where(d >= hmax, a, a + (d - m) * (b - a))
        else:
            m = np.minimum((R * idt + 0.5).astype(np.intp), hmax)
            hd = hist[(ptr - m) % H, cols]
        inv = 1.0 / R
        lam = N * W * inv
        Wn = np.clip(W + (inv - W * hd) * dt, w_min, w_max)
        qn = np.clip(q + (lam - C) * dt, 0.0, buf)
        Rn = qn * iC + Tp
        if kind == _RED:
            x = x + cred * (q - x)
            lin = (x - lo) * slope
            if gentle:
                tail = np.minimum(1.0, mp + (1.0 - mp) * (x - hi) / hi)
            else:
                tail = 1.0
            p = np.where(x < lo, 0.0, np.where(x < hi, lin, tail))
            aux = x
        elif kind == _PI:
            p = np.clip(p + kp * (qn - q) + ki_dt * (qn - qref), 0.0, 1.0)
            aux = p
        elif kind == _AVQ:
            lam_n = N * Wn / Rn
            vq = np.clip(vq + (lam - vcap) * dt, 0.0, vqb)
            full = has_vq & (vq >= vqb) & (lam_n > vcap)
            p_vq = np.where(full, 1.0 - vcap / lam_n, 0.0)
            vcap = np.clip(vcap + agC_dt - a_dt * lam, 0.0, C)
            p_bl = np.where(lam_n > vcap, 1.0 - vcap / lam_n, 0.0)
            p = np.where(has_vq, p_vq, p_bl)
            aux = vcap
        else:
            aux = p
        W, q, R = Wn, qn, Rn
        if any_buf:
            lam_n = N * W / R
            pe = np.where((qn >= buf) & (lam_n > C), 1.0 - (1.0 - p) * C / lam_n, p)
        else:
            pe = p
        ptr += 1
        if ptr == H:
            ptr = 0
        hist[ptr] = 0.5 * W * pe / R
        r_c -= 1
        if r_c == 0:
            r_c = rec
            oW[r_i] = W
            oq[r_i] = q
            op[r_i] = p
            ope[r_i] = pe
            oa[r_i] = aux
            r_i += 1
    return oW, oq, op, ope, oa
