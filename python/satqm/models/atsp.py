"""The steady state of ATSP (Muhammad, Kasmis & De Cola, DLR) from its
eqs. 2-7, for N identical senders behind an AQM that holds the queue.

At equilibrium the queue sits at ``q`` (the PI's setpoint if it can be
held), every round trip is ``Theta = R0 + q / C`` and each sender's window
is its share of the pipe, ``w = C Theta / N`` packets per RTT. Over one RTT
cycle a sender sends ``w`` packets, of which a fraction ``p`` is marked;
its receiver sends ``n = w / alpha`` SACKs whose cumulative congestion rates
are ``rho_i = beta alpha p i`` (eq. 2), so

- eq. 4: ``Lambda = sum_i rho_i = beta alpha p n (n + 1) / 2``;
- eq. 5: the cut leaves ``w_c = w (1 - beta p w)`` (each mark once, the
  ``cycle_base`` reading) or ``w prod_i (1 - rho_i)`` (``compound``);
- eqs. 6-7: ``w' = w_c + ((1 - Lambda) W_max - w_c) / (I + Lambda h)``.

The steady state is the marking probability ``p`` for which ``w' = w``.
It exists only while some ``p <= 1`` is enough; otherwise the queue must
grow (a longer RTT gives each sender a larger window, more SACKs per cycle
and so more congestion it can register) until it does, or until the buffer
is full and the link drops the excess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.optimize import brentq


@dataclass(frozen=True)
class AtspSteadyState:
    """The predicted equilibrium (see :func:`atsp_steady_state`)."""

    #: Marking probability at the AQM (NaN if the buffer overflows).
    p: float
    #: Accumulated congestion per cycle.
    lam: float
    #: Each sender's window, packets per RTT.
    w: float
    #: Queue at the bottleneck, packets.
    q: float
    #: Round trip, seconds.
    theta: float
    #: Whether the setpoint ``q_ref`` can be held.
    holds_setpoint: bool


def _next_window(w: float, p: float, *, alpha: float, beta: float, i0: float, h: float,
                 w_max: float, cut: str) -> float:  # fmt: skip
    n = w / alpha
    lam = beta * alpha * p * n * (n + 1) / 2
    if cut == "compound":
        k = max(1, int(round(n)))
        wc = w
        for i in range(1, k + 1):
            wc *= max(0.0, 1 - beta * alpha * p * i)
    else:
        wc = w * max(0.0, 1 - beta * p * w)
    return min(w_max, wc + ((1 - lam) * w_max - wc) / (i0 + lam * h))


def atsp_steady_state(
    n: int,
    C: float,
    R0: float,
    q_ref: float,
    w_max: float,
    *,
    buffer: float = math.inf,
    alpha: float = 20.0,
    beta: float = 1e-3,
    i0: float = 1.5,
    h: float = 100.0,
    cut: str = "cycle_base",
) -> AtspSteadyState:
    """The equilibrium of ``n`` identical ATSP senders on a link of ``C``
    packets/s with round-trip propagation ``R0`` s, an AQM with setpoint
    ``q_ref`` packets and a buffer of ``buffer`` packets.

    Raises ValueError on non-positive ``n``, ``C``, ``w_max`` or negative
    ``R0``, ``q_ref``, or an unknown ``cut``.
    """
    if n < 1 or C <= 0 or w_max <= 0 or R0 < 0 or q_ref < 0 or alpha < 1:
        raise ValueError("n, C, w_max, alpha must be positive and R0, q_ref >= 0")
    if cut not in ("cycle_base", "compound"):
        raise ValueError(f"unknown cut {cut!r} (known: cycle_base, compound)")
    kw = dict(alpha=alpha, beta=beta, i0=i0, h=h, w_max=w_max, cut=cut)

    def gap(p: float, q: float) -> float:
        w = C * (R0 + q / C) / n
        return _next_window(w, p, **kw) - w  # type: ignore[arg-type]

    def at(q: float, holds: bool) -> AtspSteadyState:
        theta = R0 + q / C
        w = C * theta / n
        if gap(0.0, q) <= 0:
            p = 0.0
        elif gap(1.0, q) > 0:
            p = math.nan
        else:
            p = brentq(gap, 0.0, 1.0, args=(q,), xtol=1e-12)
        nn = w / alpha
        lam = beta * alpha * p * nn * (nn + 1) / 2 if p == p else math.nan
        return AtspSteadyState(p=p, lam=lam, w=w, q=q, theta=theta, holds_setpoint=holds)

    if gap(1.0, q_ref) <= 0:
        return at(q_ref, True)
    # The setpoint cannot be held: the queue grows until p <= 1 suffices.
    hi = buffer if math.isfinite(buffer) else q_ref + 100 * C * max(R0, 1e-3)
    if gap(1.0, hi) > 0:
        return at(hi, False)
    q = brentq(lambda x: gap(1.0, x), q_ref, hi, xtol=1e-6)
    return at(q, False)
