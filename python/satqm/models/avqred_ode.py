r"""The AVQRED chapter's ODE model of the satellite gateway (paper 000, §8).

Byun & Baras, "Adaptive Virtual Queue Random Early Detection in Satellite
Networks" (book chapter, ``papers/000_…``), Section 8, equations (1)–(5).
The model follows one gateway: the offered load ``λ`` of ``m`` TCP
connections arrives at the receive queue, where the AQM marks (drops) a
fraction ``p``; what is admitted reaches the transmit queue ``q`` after the
PEP's buffering delay ``d(t)``; the transmit queue is served at ``μ``.

.. math::
    \frac{d\lambda}{dt} = (1 - p(t)) \frac{m}{R^2} - p(t) \frac{\lambda^2}{2m}
    \qquad (1)

    \frac{dq}{dt} = -\mu + (1 - p(t-d(t)))\, \omega(t-d(t))\, \lambda(t-d(t))
    \qquad (2)

    \frac{dv}{dt} = -\tau\mu + (1 - p(t))\, \omega(t)\, \lambda(t)
    \qquad (3)

    \frac{dw}{dt} = \frac{\ln(1-w_q)}{\delta} (w(t) - q(t))
    \qquad (4)

    \frac{dp}{dt} = \begin{cases}
        -\kappa\, p & w \text{ (or } v) < min_{th} \\
        \frac{p_{max}}{max_{th} - min_{th}} \frac{dq}{dt}
            & min_{th} \le w \le max_{th} \text{ (RED)} \\
        \frac{p_{max}}{max_{th} - min_{th}} \frac{dv}{dt}
            & min_{th} \le v \le max_{th} \text{ (AVQRED)} \\
        \kappa (1 - p) & \text{otherwise}
    \end{cases}  \qquad (5)

and, for AVQ (the text under (5)): ``dp/dt = -κ p`` if ``v < v_AVQ`` and
``κ (1 - p)`` otherwise, with ``v_AVQ = (max_th - min_th)/2`` as printed.

``d(t)`` (PEP buffering delay) and ``ω(t)`` (offered-load variation) are
Fourier series fitted to samples measured in a run without AQM
(:func:`fit_fourier`, :func:`fit_gateway_series`); constants are accepted
too. ``q``, ``v`` and ``λ`` are kept non-negative (the Lindley reflection),
``q`` at most ``buffer``, ``p`` in [0, 1].

Units: packets, packets/s, seconds. The chapter integrates in a 100 ms time
unit (its ``κ = 1``, "R scaled by 1/10"); here everything is in seconds, so
its unit rate ``1.0`` per 100 ms is ``kappa = 10`` 1/s. Every reading of the
text is listed in ``docs/models.md`` ("AVQRED ODE").

Integration: explicit Euler with a fixed step ``dt`` (default 1 ms, the
chapter's δ); ``w`` and the ``±κ`` branches of ``p`` are advanced with their
exact exponential step. The delayed term ``g(s) = (1 - p(s)) λ(s)`` is kept
for the whole run and read at ``t - d(t)`` with linear interpolation;
before ``t = 0`` it is the initial state.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import brentq

from ._validate import (
    check_finite,
    check_in_range,
    check_int,
    check_nonnegative,
    check_positive,
    check_probability,
)

__all__ = [
    "FourierSeries",
    "GatewaySeries",
    "AvqredOdeResult",
    "CHAPTER_PARAMETERS",
    "SAMPLE_COLUMNS",
    "fit_fourier",
    "fit_gateway_series",
    "read_gateway_samples",
    "gateway_samples_from_results",
    "offered_load_equilibrium",
    "avqred_ode_equilibrium",
    "simulate_avqred_ode",
]

#: Columns of a samples table (CSV or DataFrame): time (s), PEP buffering
#: delay ``d`` (s), offered-load variation ``ω`` (dimensionless, mean 1).
SAMPLE_COLUMNS = ("time_s", "d_s", "omega")

#: The chapter's setting (Sections 6.2 and 8, Table 2): 400 HTTP connections,
#: server-gateway RTT 40-80 ms (mean 60 ms), 20 Mbit/s of 1,400-byte packets,
#: RED 4 (60/120, w_q 0.1, max_p 0.7), δ = 1 ms, target utilization 100 %.
CHAPTER_PARAMETERS: dict[str, float] = {
    "m": 400.0,
    "R": 0.060,
    "mu": 20e6 / (8 * 1400),
    "min_th": 60.0,
    "max_th": 120.0,
    "w_q": 0.1,
    "max_p": 0.7,
    "delta": 1e-3,
    "tau": 1.0,
    "kappa": 10.0,
}

_VARIANTS = ("red", "avqred", "avq", "fixed")


# ---------------------------------------------------------------------------
# Fourier series
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FourierSeries:
    r"""A real Fourier series with period ``period`` and origin ``t0``.

    .. math::
        y(t) = a_0 + \sum_{k=1}^{K} a_k \cos(k \omega_0 (t - t_0))
                   + b_k \sin(k \omega_0 (t - t_0)),
        \qquad \omega_0 = 2\pi / T

    Evaluated outside ``[t0, t0 + period)`` it repeats (a Fourier series is
    periodic), which is what the chapter's model does over a 20-minute run
    with 500 samples (50 s).

    Attributes
    ----------
    a0 : float
        Mean.
    a, b : tuple of float
        Cosine and sine coefficients of harmonics ``1 … K``.
    period : float
        ``T`` (s), > 0.
    t0 : float
        Time origin (s).
    """

    a0: float
    a: tuple[float, ...]
    b: tuple[float, ...]
    period: float
    t0: float = 0.0

    def __post_init__(self) -> None:
        check_finite("a0", self.a0)
        a = check_finite("a", np.asarray(self.a, dtype=float).ravel())
        b = check_finite("b", np.asarray(self.b, dtype=float).ravel())
        if a.shape != b.shape:
            raise ValueError(f"a and b must have the same length, got {a.size} and {b.size}")
        check_positive("period", self.period)
        check_finite("t0", self.t0)
        object.__setattr__(self, "a0", float(self.a0))
        object.__setattr__(self, "a", tuple(float(x) for x in a))
        object.__setattr__(self, "b", tuple(float(x) for x in b))
        object.__setattr__(self, "period", float(self.period))
        object.__setattr__(self, "t0", float(self.t0))

    @classmethod
    def constant(cls, value: float, period: float = 1.0) -> FourierSeries:
        """The constant series ``y(t) = value`` (no harmonics)."""
        return cls(float(check_finite("value", value)), (), (), period)

    @property
    def n_harmonics(self) -> int:
        """``K``."""
        return len(self.a)

    def __call__(self, t: ArrayLike) -> float | NDArray[np.float64]:
        """Evaluate at times ``t`` (s)."""
        t_ = check_finite("t", t)
        y = np.full(t_.shape, self.a0)
        if self.a:
            w0 = 2.0 * math.pi / self.period
            phase = w0 * (t_ - self.t0)
            for k, (ak, bk) in enumerate(zip(self.a, self.b), start=1):
                y = y + ak * np.cos(k * phase) + bk * np.sin(k * phase)
        return float(y) if y.ndim == 0 else y

    def derivative(self, t: ArrayLike) -> float | NDArray[np.float64]:
        """``dy/dt`` at times ``t`` (1/s times the unit of ``y``)."""
        t_ = check_finite("t", t)
        y = np.zeros(t_.shape)
        if self.a:
            w0 = 2.0 * math.pi / self.period
            phase = w0 * (t_ - self.t0)
            for k, (ak, bk) in enumerate(zip(self.a, self.b), start=1):
                y = y + k * w0 * (-ak * np.sin(k * phase) + bk * np.cos(k * phase))
        return float(y) if y.ndim == 0 else y

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form; :meth:`from_dict` reads it back."""
        return {
            "a0": self.a0,
            "a": list(self.a),
            "b": list(self.b),
            "period": self.period,
            "t0": self.t0,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FourierSeries:
        """A series from :meth:`to_dict`'s form (coefficients fitted elsewhere)."""
        missing = [k for k in ("a0", "a", "b", "period") if k not in data]
        if missing:
            raise ValueError(f"series is missing {', '.join(missing)}")
        return cls(
            data["a0"], tuple(data["a"]), tuple(data["b"]), data["period"], data.get("t0", 0.0)
        )


def fit_fourier(
    t: ArrayLike,
    y: ArrayLike,
    n_harmonics: int | None = 8,
    period: float | None = None,
) -> FourierSeries:
    r"""Least-squares Fourier series through samples ``(t, y)``.

    The fundamental period is fixed (default: the samples' span plus one
    sampling interval, ``n Δt`` for ``n`` evenly spaced samples) and the
    ``2K + 1`` coefficients are the linear least-squares fit. With
    ``n_harmonics=None`` the series has every harmonic the samples can carry
    (``K = (n - 1) // 2``) and, for evenly spaced samples, passes through
    every one (trigonometric interpolation).

    The chapter fits its series to 500 samples but does not say with how
    many terms; its computations were in MATLAB, whose curve-fitting Fourier
    model has at most eight harmonics, hence the default ``K = 8``.

    Parameters
    ----------
    t : array_like
        Sample times (s), finite, strictly increasing, at least 3.
    y : array_like
        Samples, finite, same length.
    n_harmonics : int or None
        ``K`` >= 0 and ``2K + 1 <= n``; ``None`` for the most.
    period : float, optional
        ``T`` (s) > 0.

    Returns
    -------
    FourierSeries
        With origin ``t0 = t[0]``.
    """
    t_ = check_finite("t", t).ravel()
    y_ = check_finite("y", y).ravel()
    if t_.size != y_.size:
        raise ValueError(f"t and y must have the same length, got {t_.size} and {y_.size}")
    if t_.size < 3:
        raise ValueError(f"t must hold at least 3 samples, got {t_.size}")
    if np.any(np.diff(t_) <= 0):
        raise ValueError("t must be strictly increasing")
    n = t_.size
    if period is None:
        span = float(t_[-1] - t_[0])
        T = span * n / (n - 1)
    else:
        T = float(check_positive("period", period))
        if T < float(t_[-1] - t_[0]):
            raise ValueError(f"period must cover the samples' span, got {period!r}")
    if n_harmonics is None:
        K = (n - 1) // 2
    else:
        K = check_int("n_harmonics", n_harmonics, minimum=0)
        if 2 * K + 1 > n:
            raise ValueError(
                f"n_harmonics must be <= {(n - 1) // 2} for {n} samples, got {n_harmonics!r}"
            )
    phase = 2.0 * math.pi / T * (t_ - t_[0])
    cols = [np.ones(n)]
    for k in range(1, K + 1):
        cols.append(np.cos(k * phase))
        cols.append(np.sin(k * phase))
    X = np.column_stack(cols)
    coef, *_ = np.linalg.lstsq(X, y_, rcond=None)
    return FourierSeries(float(coef[0]), tuple(coef[1::2]), tuple(coef[2::2]), T, float(t_[0]))


# ---------------------------------------------------------------------------
# Measured d(t) and ω(t)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GatewaySeries:
    """The two measured series of the model: ``d(t)`` (s) and ``ω(t)``.

    ``samples`` keeps the table they were fitted to (columns
    :data:`SAMPLE_COLUMNS`), if any.
    """

    d: FourierSeries
    omega: FourierSeries
    samples: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able coefficients of both series."""
        return {"d": self.d.to_dict(), "omega": self.omega.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GatewaySeries:
        """Read :meth:`to_dict`'s form back (an already fitted pair)."""
        for k in ("d", "omega"):
            if k not in data:
                raise ValueError(f"series pair is missing {k!r}")
        return cls(FourierSeries.from_dict(data["d"]), FourierSeries.from_dict(data["omega"]))


SeriesLike = Union[FourierSeries, float, int]
SamplesLike = Union[str, "os.PathLike[str]", pd.DataFrame, Mapping[str, Any], GatewaySeries]


def read_gateway_samples(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a samples CSV (header ``time_s,d_s,omega``; extra columns kept)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"source must be an existing CSV file, got {str(path)!r}")
    # Exactly the numbers written: pandas before 3 needs asking for it (its
    # default parser can miss by the last bit); pandas 3 always does it
    # and deprecates the option.
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    return _check_samples(pd.read_csv(p, **exact))


def _check_samples(df: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in SAMPLE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(
            f"source must have columns {', '.join(SAMPLE_COLUMNS)}; missing {', '.join(missing)}"
        )
    out = df.reset_index(drop=True)
    check_finite("time_s", out["time_s"].to_numpy(float))
    check_nonnegative("d_s", out["d_s"].to_numpy(float))
    check_nonnegative("omega", out["omega"].to_numpy(float))
    if np.any(np.diff(out["time_s"].to_numpy(float)) <= 0):
        raise ValueError("time_s must be strictly increasing")
    return out


def fit_gateway_series(
    source: SamplesLike | None = None,
    *,
    t: ArrayLike | None = None,
    d: ArrayLike | None = None,
    omega: ArrayLike | None = None,
    n_harmonics: int | None = 8,
    n_points: int | None = 500,
    t_from: float | None = None,
    period: float | None = None,
    normalize_omega: bool = True,
) -> GatewaySeries:
    """Fit ``d(t)`` and ``ω(t)`` to measured samples.

    The source is one of

    * a CSV path or a DataFrame / mapping with columns ``time_s`` (s),
      ``d_s`` (PEP buffering delay, s) and ``omega`` (offered load over its
      mean), e.g. from :func:`gateway_samples_from_results`;
    * the arrays ``t``, ``d``, ``omega`` given as keywords;
    * a :class:`GatewaySeries` already fitted (returned unchanged).

    ``n_points`` samples from ``t_from`` (default: the first) are used; the
    chapter used 500 (50 s at its 100 ms measurement interval). ``None``
    takes every sample from ``t_from`` on. With ``normalize_omega`` (the
    default) ``ω`` is divided by its mean over those samples, so that the
    fitted series has mean 1 (``ω`` is the load relative to its mean over the
    measurement). Each series is fitted by :func:`fit_fourier` with
    ``n_harmonics`` and ``period``.
    """
    if isinstance(source, GatewaySeries):
        if t is not None or d is not None or omega is not None:
            raise ValueError("source is already fitted; t, d and omega must not be given")
        return source
    arrays = (t, d, omega)
    if source is None:
        if any(a is None for a in arrays):
            raise ValueError("source must be given, or all of t, d and omega")
        df = _check_samples(
            pd.DataFrame(
                {
                    "time_s": np.asarray(t, float).ravel(),
                    "d_s": np.asarray(d, float).ravel(),
                    "omega": np.asarray(omega, float).ravel(),
                }
            )
        )
    else:
        if any(a is not None for a in arrays):
            raise ValueError("give either source or t, d and omega, not both")
        if isinstance(source, (str, os.PathLike)):
            df = read_gateway_samples(source)
        elif isinstance(source, pd.DataFrame):
            df = _check_samples(source)
        elif isinstance(source, Mapping):
            try:
                df = pd.DataFrame({k: np.asarray(source[k], float).ravel() for k in SAMPLE_COLUMNS})
            except KeyError as e:
                raise ValueError(
                    f"source must have columns {', '.join(SAMPLE_COLUMNS)}; missing {e.args[0]}"
                ) from None
            df = _check_samples(df)
        else:
            raise ValueError(
                "source must be a CSV path, a DataFrame, a mapping or a GatewaySeries, "
                f"got {type(source).__name__}"
            )
    if t_from is not None:
        df = df[df["time_s"] >= float(check_finite("t_from", t_from))]
    if n_points is not None:
        n = check_int("n_points", n_points, minimum=3)
        if len(df) < n:
            raise ValueError(f"n_points must be <= the {len(df)} samples available, got {n}")
        df = df.iloc[:n]
    if len(df) < 3:
        raise ValueError(f"source must hold at least 3 samples after t_from, got {len(df)}")
    df = df.reset_index(drop=True)
    if normalize_omega:
        mean = float(df["omega"].mean())
        if mean <= 0:
            raise ValueError("omega must not be 0 throughout the fitted samples")
        df = df.assign(omega=df["omega"] / mean)
    ts = df["time_s"].to_numpy(float)
    return GatewaySeries(
        fit_fourier(ts, df["d_s"].to_numpy(float), n_harmonics, period),
        fit_fourier(ts, df["omega"].to_numpy(float), n_harmonics, period),
        df,
    )


def gateway_samples_from_results(
    results: Any,
    *,
    receive: str = "receive",
    transmit: str = "transmit",
    packet_bytes: float | None = None,
    correct_retransmits: bool = True,
    backbone_min_rtt: float = 0.1,
) -> pd.DataFrame:
    """Measure ``d(t)`` and ``ω(t)`` in a run of the gateway (no AQM).

    ``results`` is a :class:`satqm.Results` (anything with ``link(name)``
    giving a per-sample DataFrame indexed by ``time_s``, and ``flows``).
    Columns used, per sample interval ``Δ``:

    * ``receive.arrivals`` — packets offered to the receive queue: the
      offered load ``L_k = arrivals/Δ`` (packets/s) and
      ``ω_k = L_k / mean(L)`` (the chapter: "the mean offered load to the
      actual offered load ratio", taken so that ``ω λ`` is the actual load).
    * ``receive.throughput_bps`` — bytes leaving the receive queue into the
      PEP, cumulated: ``A(t)``.
    * ``transmit.throughput_bps`` and ``transmit.queue_bytes`` — bytes that
      have entered the transmit queue (sent plus waiting), cumulated:
      ``B(t)``. Packets the PEP holds back (backpressure) are not in it: they
      are still buffered in the PEP.
    * ``flows`` (``kind == "relay"``, ``rtt_min_s >= backbone_min_rtt``):
      the share of retransmitted segments on the satellite backbone. A
      retransmission enters the transmit queue again without leaving the
      receive queue again, so ``B`` is scaled by ``1 - share`` (when
      ``correct_retransmits``).

    ``d_k`` is the horizontal distance between the two cumulative curves:
    bytes entering the transmit queue at ``t_k`` left the receive queue at
    ``s`` with ``A(s) = B(t_k)``, so ``d_k = t_k - s`` — the time each
    byte spent in the PEP under a first-in first-out reading of the
    aggregate (the chapter: "the average duration that each PEP packet
    resides in the buffer during a 100 ms measurement period").

    Returns a DataFrame with :data:`SAMPLE_COLUMNS` plus ``offered_pps``
    (``L``), ``pep_packets`` (``(A - B)/packet_bytes``) and ``transmit_queue``
    (packets). ``packet_bytes`` defaults to the mean data packet size
    implied by ``receive`` (bytes sent over packets sent).
    """
    rx = results.link(receive)
    tx = results.link(transmit)
    t = rx.index.to_numpy(float)
    if t.size < 3:
        raise ValueError(f"results must hold at least 3 samples, got {t.size}")
    if tx.index.size != t.size or not np.allclose(tx.index.to_numpy(float), t):
        raise ValueError("results: receive and transmit sampled at different times")
    check_positive("backbone_min_rtt", backbone_min_rtt)
    dts = np.diff(np.concatenate(([0.0], t)))
    rx_bytes = rx["throughput_bps"].to_numpy(float) * dts / 8.0
    tx_bytes = tx["throughput_bps"].to_numpy(float) * dts / 8.0
    arrivals = rx["arrivals"].to_numpy(float)
    if packet_bytes is None:
        sent = arrivals - rx["drops"].to_numpy(float)
        packet_bytes = float(rx_bytes.sum() / sent.sum()) if sent.sum() > 0 else 1500.0
    pb = float(check_positive("packet_bytes", packet_bytes))
    share = 0.0
    if correct_retransmits:
        flows = results.flows
        bb = flows[(flows["kind"] == "relay") & (flows["rtt_min_s"] >= backbone_min_rtt)]
        sent_segments = float(bb["segments_sent"].sum())
        if sent_segments > 0:
            share = float(bb["retransmits"].sum()) / sent_segments
    t0 = t[0] - dts[0]
    tt = np.concatenate(([t0], t))
    A = np.concatenate(([0.0], np.maximum.accumulate(np.cumsum(rx_bytes))))
    B = (np.cumsum(tx_bytes) + tx["queue_bytes"].to_numpy(float)) * (1.0 - share)
    # A(s) = B(t_k): the first time the receive side had passed B(t_k) bytes,
    # linear within a sample interval.
    level = np.minimum(B, A[-1])
    i = np.clip(np.searchsorted(A, level, side="left"), 1, tt.size - 1)
    rise = A[i] - A[i - 1]
    frac = np.divide(level - A[i - 1], rise, out=np.ones_like(level), where=rise > 0)
    s = tt[i - 1] + np.clip(frac, 0.0, 1.0) * (tt[i] - tt[i - 1])
    d_s = np.clip(t - s, 0.0, None)
    offered = arrivals / dts
    mean_load = float(offered.mean())
    omega = offered / mean_load if mean_load > 0 else np.ones_like(offered)
    return pd.DataFrame(
        {
            "time_s": t,
            "d_s": d_s,
            "omega": omega,
            "offered_pps": offered,
            "pep_packets": np.clip(A[1:] - B, 0.0, None) / pb,
            "transmit_queue": tx["queue_packets"].to_numpy(float),
        }
    )


# ---------------------------------------------------------------------------
# Closed forms
# ---------------------------------------------------------------------------


def offered_load_equilibrium(
    p: ArrayLike, m: ArrayLike, R: ArrayLike
) -> float | NDArray[np.float64]:
    r"""Equilibrium of eq. (1) for a constant ``p``.

    .. math:: \lambda^* = \frac{m}{R}\sqrt{\frac{2(1-p)}{p}}

    Parameters
    ----------
    p : float or array_like
        Marking probability, in (0, 1].
    m : float or array_like
        Number of TCP connections, > 0.
    R : float or array_like
        Round-trip time between the hosts and the gateway, > 0 (s).

    Returns
    -------
    float or numpy.ndarray
        ``λ*`` (packets/s).
    """
    p_ = check_probability("p", p, allow_zero=False)
    m_ = check_positive("m", m)
    R_ = check_positive("R", R)
    out = m_ / R_ * np.sqrt(2.0 * (1.0 - p_) / p_)
    return float(out) if out.ndim == 0 else out


def avqred_ode_equilibrium(
    *,
    m: float,
    R: float,
    mu: float,
    tau: float = 1.0,
    omega: float = 1.0,
    min_th: float = 60.0,
    max_th: float = 120.0,
    max_p: float = 1.0,
) -> dict[str, float]:
    r"""Equilibrium of eqs. (1), (3), (5) with constant ``ω`` (AVQRED).

    The virtual queue is steady when the admitted load equals its service,
    ``(1 - p*) ω λ*(p*) = τ μ`` with ``λ*`` from (1):

    .. math:: (1 - p^*)^{3/2} / \sqrt{p^*} = \frac{\tau \mu R}{\omega m \sqrt 2}

    (one root in (0, 1), found with ``brentq``). Inside the RED region,
    (5) makes ``p - k v`` constant (``k = max_p/(max_th - min_th)``); a
    trajectory that enters the region from below with ``p = 0`` has
    ``p = k (v - min_th)``, so ``v* = min_th + p*/k``. The same ``p*`` and
    ``λ*`` hold for RED, with ``q*`` in place of ``v*``, when ``τ = 1``,
    ``d`` is constant and the delayed loop settles.

    Returns
    -------
    dict
        ``p``, ``lam`` (packets/s), ``admitted`` (``(1-p*) ω λ*``),
        ``v`` (packets; ``nan`` when ``p* > max_p``, outside the region).
    """
    m_ = float(check_positive("m", m))
    R_ = float(check_positive("R", R))
    mu_ = float(check_positive("mu", mu))
    tau_ = float(check_in_range("tau", tau, 0.0, 1.0, low_open=True))
    om = float(check_positive("omega", omega))
    lo = float(check_nonnegative("min_th", min_th))
    hi = float(check_positive("max_th", max_th))
    if lo >= hi:
        raise ValueError(f"min_th must be < max_th, got min_th={min_th!r}, max_th={max_th!r}")
    mp = float(check_probability("max_p", max_p, allow_zero=False))
    c = tau_ * mu_ * R_ / (om * m_ * math.sqrt(2.0))

    def f(p: float) -> float:
        return (1.0 - p) ** 1.5 / math.sqrt(p) - c

    p_star = brentq(f, 1e-15, 1.0, xtol=1e-15, rtol=1e-14)
    lam = m_ / R_ * math.sqrt(2.0 * (1.0 - p_star) / p_star)
    k = mp / (hi - lo)
    v = lo + p_star / k if p_star <= mp else math.nan
    return {"p": p_star, "lam": lam, "admitted": (1.0 - p_star) * om * lam, "v": v}


# ---------------------------------------------------------------------------
# Integrator
# ---------------------------------------------------------------------------


@dataclass
class AvqredOdeResult:
    """Trajectories of :func:`simulate_avqred_ode` (one row per record).

    Attributes
    ----------
    t : numpy.ndarray
        Times (s).
    lam : numpy.ndarray
        Offered load ``λ`` (packets/s).
    q : numpy.ndarray
        Transmit queue (packets).
    v : numpy.ndarray
        Virtual queue (packets).
    w : numpy.ndarray
        RED's average of ``q`` (packets).
    p : numpy.ndarray
        Marking probability.
    d : numpy.ndarray
        PEP buffering delay used (s).
    omega : numpy.ndarray
        Load variation used.
    variant : str
        ``"red"``, ``"avqred"``, ``"avq"`` or ``"fixed"``.
    params : dict
        The parameters, resolved.
    """

    t: NDArray[np.float64]
    lam: NDArray[np.float64]
    q: NDArray[np.float64]
    v: NDArray[np.float64]
    w: NDArray[np.float64]
    p: NDArray[np.float64]
    d: NDArray[np.float64]
    omega: NDArray[np.float64]
    variant: str
    params: dict[str, Any] = field(repr=False)

    _NAMES = ("lam", "q", "v", "w", "p", "d", "omega")

    def frame(self) -> pd.DataFrame:
        """All trajectories as a DataFrame (column ``t`` first)."""
        return pd.DataFrame({"t": self.t, **{n: getattr(self, n) for n in self._NAMES}})

    def stats(
        self, name: str = "q", t_from: float = 0.0, t_to: float | None = None
    ) -> dict[str, float]:
        """Mean and (population) standard deviation over ``t_from <= t <= t_to``."""
        if name not in self._NAMES:
            raise ValueError(f"name must be one of {', '.join(self._NAMES)}, got {name!r}")
        lo = float(check_finite("t_from", t_from))
        hi = math.inf if t_to is None else float(check_finite("t_to", t_to))
        sel = (self.t >= lo) & (self.t <= hi)
        if not sel.any():
            raise ValueError("t_from..t_to holds no sample")
        x = getattr(self, name)[sel]
        return {"mean": float(x.mean()), "std": float(x.std())}


def _as_series(name: str, value: Any) -> FourierSeries:
    if isinstance(value, FourierSeries):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValueError(f"{name} must be a FourierSeries or a number, got {type(value).__name__}")
    return FourierSeries.constant(float(check_nonnegative(name, value)))


def simulate_avqred_ode(
    variant: str,
    duration: float,
    *,
    d: SeriesLike | None = None,
    omega: SeriesLike | None = None,
    series: GatewaySeries | None = None,
    m: float = CHAPTER_PARAMETERS["m"],
    R: float = CHAPTER_PARAMETERS["R"],
    mu: float = CHAPTER_PARAMETERS["mu"],
    min_th: float = CHAPTER_PARAMETERS["min_th"],
    max_th: float = CHAPTER_PARAMETERS["max_th"],
    max_p: float | None = None,
    w_q: float = CHAPTER_PARAMETERS["w_q"],
    delta: float = CHAPTER_PARAMETERS["delta"],
    tau: float = CHAPTER_PARAMETERS["tau"],
    kappa: float = CHAPTER_PARAMETERS["kappa"],
    vq_threshold: float | None = None,
    buffer: float = math.inf,
    red_input: str = "q",
    flow_conserving: bool = False,
    dt: float = 1e-3,
    record_interval: float | None = 0.1,
    t_start: float = 0.0,
    lam0: float = 0.0,
    q0: float = 0.0,
    v0: float = 0.0,
    w0: float | None = None,
    p0: float = 0.0,
) -> AvqredOdeResult:
    r"""Integrate the chapter's gateway model, eqs. (1)–(5).

    Parameters
    ----------
    variant : {"red", "avqred", "avq", "fixed"}
        The marking law (5): RED watches ``w`` (the average of the transmit
        queue) and marks before the PEP; AVQRED watches the virtual queue
        ``v``; AVQ is the two-level law under (5); ``"fixed"`` keeps
        ``p = p0`` (open loop, for checks).
    duration : float
        Model time (s), > 0.
    d, omega : FourierSeries or float
        PEP buffering delay ``d(t)`` (s, >= 0; negative values of a fitted
        series are taken as 0) and load variation ``ω(t)`` (>= 0, ditto).
        Default 0 and 1. Or ``series`` (a :class:`GatewaySeries`) for both.
    m : float
        Number of TCP connections, > 0. Default 400 (the chapter).
    R : float
        Round-trip time between the hosts and the gateway, > 0 (s). Default
        60 ms, the middle of the chapter's 40-80 ms.
    mu : float
        Transmit rate, > 0 (packets/s). Default 20 Mbit/s of 1,400 bytes.
    min_th, max_th : float
        RED thresholds (packets) on ``w`` (RED) or ``v`` (AVQRED).
    max_p : float, optional
        ``p_max`` of (5), in (0, 1]; default 0.7 (RED 4) for RED and 1 for
        AVQRED (its pseudo-code has no ``max_p``: ``p_b = (v - min_th)/
        (max_th - min_th)``).
    w_q : float
        RED's averaging weight (``B`` in (4)), in (0, 1). Default 0.1.
    delta : float
        ``δ`` of (4), > 0 (s). Default 1 ms.
    tau : float
        Target utilization ``τ`` of (3), in (0, 1]. Default 1.
    kappa : float
        Rate of the ``-p`` and ``1 - p`` branches of (5), > 0 (1/s); the
        chapter's ``1.0`` per 100 ms time unit is 10 1/s.
    vq_threshold : float, optional
        AVQ's marking level on ``v`` (packets); default
        ``(max_th - min_th)/2`` as printed.
    buffer : float
        Transmit queue limit (packets), > 0; default none.
    red_input : {"q", "w"}
        The derivative RED's branch of (5) integrates: ``dq/dt`` as printed
        (default) or ``dw/dt`` (what differentiating RED's linear profile
        of ``w`` would give).
    flow_conserving : bool
        Multiply the delayed term of (2) by ``1 - d'(t)`` so that the
        transmit queue receives exactly what the receive queue admitted
        when ``d`` varies (the printed (2) omits it). Default False.
    dt : float
        Step (s), > 0; default 1 ms.
    record_interval : float or None
        Time between recorded samples (s), a multiple of ``dt`` after
        rounding; default 100 ms (the chapter's measurement interval);
        ``None`` records every step.
    t_start : float
        Time of the first step (s); the series are evaluated at ``t_start +
        model time`` (lets a run line up with a measured trace).
    lam0, q0, v0, w0, p0 : float
        Initial state (default: empty, no load: ``λ = q = v = p = 0``;
        ``w0`` defaults to ``q0``). History before the start is the initial
        state.

    Returns
    -------
    AvqredOdeResult
    """
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(_VARIANTS)}, got {variant!r}")
    if red_input not in ("q", "w"):
        raise ValueError(f"red_input must be 'q' or 'w', got {red_input!r}")
    if series is not None:
        if not isinstance(series, GatewaySeries):
            raise ValueError(f"series must be a GatewaySeries, got {type(series).__name__}")
        if d is not None or omega is not None:
            raise ValueError("give either series or d and omega, not both")
        d_ser, om_ser = series.d, series.omega
    else:
        d_ser = _as_series("d", 0.0 if d is None else d)
        om_ser = _as_series("omega", 1.0 if omega is None else omega)
    T = float(check_positive("duration", duration))
    m_ = float(check_positive("m", m))
    R_ = float(check_positive("R", R))
    mu_ = float(check_positive("mu", mu))
    lo = float(check_nonnegative("min_th", min_th))
    hi = float(check_positive("max_th", max_th))
    if lo >= hi:
        raise ValueError(f"min_th must be < max_th, got min_th={min_th!r}, max_th={max_th!r}")
    if max_p is None:
        max_p = CHAPTER_PARAMETERS["max_p"] if variant == "red" else 1.0
    mp = float(check_probability("max_p", max_p, allow_zero=False))
    wq = float(check_in_range("w_q", w_q, 0.0, 1.0, low_open=True, high_open=True))
    dl = float(check_positive("delta", delta))
    tau_ = float(check_in_range("tau", tau, 0.0, 1.0, low_open=True))
    kap = float(check_positive("kappa", kappa))
    thr = (
        (hi - lo) / 2.0
        if vq_threshold is None
        else float(check_nonnegative("vq_threshold", vq_threshold))
    )
    buf = float(check_positive("buffer", buffer, allow_inf=True))
    h = float(check_positive("dt", dt))
    if h > T:
        raise ValueError(f"dt must be <= duration, got {dt!r}")
    if record_interval is None:
        every = 1
    else:
        ri = float(check_positive("record_interval", record_interval))
        every = max(1, int(round(ri / h)))
    t_s = float(check_finite("t_start", t_start))
    lam_ = float(check_nonnegative("lam0", lam0))
    q_ = float(check_nonnegative("q0", q0))
    if q_ > buf:
        raise ValueError(f"q0 must be <= buffer, got {q0!r}")
    v_ = float(check_nonnegative("v0", v0))
    w_ = q_ if w0 is None else float(check_nonnegative("w0", w0))
    p_ = float(check_probability("p0", p0))

    n = int(math.ceil(T / h - 1e-9))
    tk = t_s + h * np.arange(n + 1)
    d_arr = np.clip(np.asarray(d_ser(tk), float), 0.0, None)
    om_arr = np.clip(np.asarray(om_ser(tk), float), 0.0, None)
    om_del = np.clip(np.asarray(om_ser(tk - d_arr), float), 0.0, None)
    if flow_conserving:
        dd = np.asarray(d_ser.derivative(tk), float)
        dd = np.where(np.asarray(d_ser(tk), float) > 0.0, dd, 0.0)  # clipped part: d' = 0
        om_del = om_del * np.clip(1.0 - dd, 0.0, None)
    pos = np.arange(n + 1) - d_arr / h  # where t - d(t) falls in the step grid
    pos_l = pos.tolist()
    om_l = om_arr.tolist()
    omd_l = om_del.tolist()

    decay_w = (1.0 - wq) ** (h / dl)
    decay_p = math.exp(-kap * h)
    k_slope = mp / (hi - lo)
    m_over_r2 = m_ / (R_ * R_)
    two_m = 2.0 * m_
    g0 = (1.0 - p_) * lam_
    g = [0.0] * (n + 1)  # g(s) = (1 - p(s)) λ(s), the admitted rate before ω
    g[0] = g0
    mode = _VARIANTS.index(variant)
    red_on_w = red_input == "w"
    n_rec = n // every + 1
    rec = np.empty((n_rec, 5))
    rec[0] = (lam_, q_, v_, w_, p_)
    r = 1
    for k in range(n):
        x = pos_l[k]
        if x <= 0.0:
            gd = g0
        else:
            j = int(x)
            f = x - j
            gd = g[j] if f == 0.0 or j >= k else g[j] + f * (g[j + 1] - g[j])
        one_m_p = 1.0 - p_
        q_new = q_ + (gd * omd_l[k] - mu_) * h
        if q_new < 0.0:
            q_new = 0.0
        elif q_new > buf:
            q_new = buf
        v_new = v_ + (one_m_p * om_l[k] * lam_ - tau_ * mu_) * h
        if v_new < 0.0:
            v_new = 0.0
        w_new = q_new + (w_ - q_new) * decay_w
        lam_new = lam_ + (one_m_p * m_over_r2 - p_ * lam_ * lam_ / two_m) * h
        if lam_new < 0.0:
            lam_new = 0.0
        if mode == 0:  # RED on w
            if w_ < lo:
                p_new = p_ * decay_p
            elif w_ <= hi:
                p_new = p_ + k_slope * ((w_new - w_) if red_on_w else (q_new - q_))
            else:
                p_new = 1.0 - (1.0 - p_) * decay_p
        elif mode == 1:  # AVQRED on v
            if v_ < lo:
                p_new = p_ * decay_p
            elif v_ <= hi:
                p_new = p_ + k_slope * (v_new - v_)
            else:
                p_new = 1.0 - (1.0 - p_) * decay_p
        elif mode == 2:  # AVQ
            p_new = p_ * decay_p if v_ < thr else 1.0 - (1.0 - p_) * decay_p
        else:
            p_new = p_
        if p_new < 0.0:
            p_new = 0.0
        elif p_new > 1.0:
            p_new = 1.0
        lam_, q_, v_, w_, p_ = lam_new, q_new, v_new, w_new, p_new
        g[k + 1] = (1.0 - p_) * lam_
        if (k + 1) % every == 0:
            rec[r] = (lam_, q_, v_, w_, p_)
            r += 1
    idx = np.arange(n_rec) * every
    params = {
        "m": m_,
        "R": R_,
        "mu": mu_,
        "min_th": lo,
        "max_th": hi,
        "max_p": mp,
        "w_q": wq,
        "delta": dl,
        "tau": tau_,
        "kappa": kap,
        "vq_threshold": thr,
        "buffer": buf,
        "red_input": red_input,
        "flow_conserving": bool(flow_conserving),
        "dt": h,
        "t_start": t_s,
        "d": d_ser,
        "omega": om_ser,
    }
    return AvqredOdeResult(
        t=tk[idx],
        lam=rec[:, 0].copy(),
        q=rec[:, 1].copy(),
        v=rec[:, 2].copy(),
        w=rec[:, 3].copy(),
        p=rec[:, 4].copy(),
        d=d_arr[idx],
        omega=om_arr[idx],
        variant=variant,
        params=params,
    )
