"""TCP throughput formulas and slow-start loss arithmetic.

* Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the TCP congestion
  avoidance algorithm", ACM CCR 27(3), 1997: the square-root formula
  ``rate = (MSS/RTT) * C / sqrt(p)``.
* Padhye, Firoiu, Towsley, Kurose, "Modeling TCP throughput: a simple model and
  its empirical validation", ACM SIGCOMM 1998: the full model (fast
  retransmit, timeouts with exponential back-off, receiver window limit) and its
  closed-form approximation.
* Jou, Tan, Baras, "A parallel virtual queue structure for active queue
  management", CSHCN TR 2003-18 (``papers/004_...``), Section II: the chance
  that a short web transfer loses a packet during its first slow start, and what
  that loss does to ``ssthresh`` and ``cwnd``.

Neither the Mathis nor the Padhye paper is in ``shared/papers``; their formulas
are the published ones, and equation numbers for them are not quoted.

Units: rates come out in "units of ``mss`` per second" (pass ``mss`` in bytes
to get bytes/s, or leave the default ``mss=1`` to get packets/s). Times in
seconds. Probabilities are per-packet loss (or mark) probabilities.
"""

from __future__ import annotations

from typing import Union

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import binom

from ._validate import (
    check_in_range,
    check_nonnegative,
    check_positive,
    check_probability,
    scalar_or_array,
)

__all__ = [
    "mathis_constant",
    "mathis_throughput",
    "padhye_f",
    "padhye_expected_window",
    "padhye_timeout_probability",
    "padhye_throughput",
    "padhye_throughput_approx",
    "prob_loss_in_first_packets",
    "slow_start_round",
    "slow_start_packets_sent",
    "prob_loss_within_rounds",
    "prob_loss_in_round",
    "prob_multiple_losses",
    "slow_start_loss_reaction",
]

FloatOrArray = Union[float, np.ndarray]


# ---------------------------------------------------------------------------
# Mathis et al. 1997
# ---------------------------------------------------------------------------


def mathis_constant(b: ArrayLike = 1.0) -> FloatOrArray:
    r"""Constant ``C`` of the Mathis square-root formula.

    .. math:: C = \sqrt{3 / (2 b)}

    For the periodic-loss ("deterministic sawtooth") model of Mathis et al.
    (1997): ``b = 1`` (an ACK for every segment) gives ``C = sqrt(3/2) ≈
    1.2247``; ``b = 2`` (delayed ACKs, one ACK per two segments) gives
    ``C = sqrt(3/4) ≈ 0.8660``.

    Parameters
    ----------
    b : float or array_like
        Segments acknowledged per ACK, ``b >= 1`` (dimensionless).

    Returns
    -------
    float or numpy.ndarray
        ``C`` (dimensionless).
    """
    b_ = check_in_range("b", b, 1.0, np.inf, high_open=True)
    return scalar_or_array(np.sqrt(1.5 / b_))


def mathis_throughput(
    mss: ArrayLike,
    rtt: ArrayLike,
    p: ArrayLike,
    b: ArrayLike = 1.0,
    c: ArrayLike | None = None,
) -> FloatOrArray:
    r"""Steady-state TCP throughput from the Mathis et al. (1997) formula.

    .. math:: \text{rate} = \frac{MSS}{RTT} \cdot \frac{C}{\sqrt{p}},
              \qquad C = \sqrt{3/(2b)}

    (Mathis, Semke, Mahdavi, Ott, CCR 1997, the paper's central square-root
    formula; ``C`` for periodic loss.)

    Parameters
    ----------
    mss : float or array_like
        Segment size, > 0 (bytes, or 1 for packets).
    rtt : float or array_like
        Round-trip time, > 0 (s).
    p : float or array_like
        Per-packet loss probability, in (0, 1].
    b : float or array_like, optional
        Segments per ACK, >= 1 (default 1: no delayed ACKs). Ignored when
        ``c`` is given.
    c : float or array_like, optional
        Override for the constant ``C`` (> 0), e.g. a value fitted to random
        loss.

    Returns
    -------
    float or numpy.ndarray
        Throughput in units of ``mss`` per second.
    """
    mss_ = check_positive("mss", mss)
    rtt_ = check_positive("rtt", rtt)
    p_ = check_probability("p", p, allow_zero=False)
    if c is None:
        c_ = np.asarray(mathis_constant(b))
    else:
        c_ = check_positive("c", c)
    return scalar_or_array(mss_ / rtt_ * c_ / np.sqrt(p_))


# ---------------------------------------------------------------------------
# Padhye et al. 1998
# ---------------------------------------------------------------------------


def padhye_f(p: ArrayLike) -> FloatOrArray:
    r"""Back-off factor of the Padhye model's timeout sequence.

    .. math:: f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6

    (Padhye et al. 1998: expected duration of a timeout sequence is
    ``T0 f(p) / (1 - p)``, with back-off capped at 64 T0.)

    Parameters
    ----------
    p : float or array_like
        Loss probability in [0, 1].
    """
    p_ = check_probability("p", p)
    return scalar_or_array(1 + p_ + 2 * p_**2 + 4 * p_**3 + 8 * p_**4 + 16 * p_**5 + 32 * p_**6)


def padhye_expected_window(p: ArrayLike, b: ArrayLike = 2.0) -> FloatOrArray:
    r"""Expected unconstrained congestion window ``E[W_u]`` (packets).

    .. math::
        E[W_u] = \frac{2+b}{3b}
                 + \sqrt{\frac{8(1-p)}{3bp} + \left(\frac{2+b}{3b}\right)^2}

    (Padhye et al. 1998, window at the end of a triple-duplicate period.)

    Parameters
    ----------
    p : float or array_like
        Loss probability in (0, 1).
    b : float or array_like, optional
        Packets acknowledged per ACK (default 2: delayed ACKs).
    """
    p_ = check_probability("p", p, allow_zero=False, allow_one=False)
    b_ = check_in_range("b", b, 1.0, np.inf, high_open=True)
    k = (2 + b_) / (3 * b_)
    return scalar_or_array(k + np.sqrt(8 * (1 - p_) / (3 * b_ * p_) + k**2))


def padhye_timeout_probability(w: ArrayLike, p: ArrayLike) -> FloatOrArray:
    r"""Probability ``Q̂(w)`` that a loss in a window of ``w`` packets is a timeout.

    .. math::
        \hat Q(w) = \min\left(1,
            \frac{\left(1-(1-p)^3\right)\left(1+(1-p)^3\left(1-(1-p)^{w-3}\right)\right)}
                 {1-(1-p)^w}\right)

    (Padhye et al. 1998.)

    Parameters
    ----------
    w : float or array_like
        Window size, > 0 (packets).
    p : float or array_like
        Loss probability in (0, 1).
    """
    w_ = check_positive("w", w)
    p_ = check_probability("p", p, allow_zero=False, allow_one=False)
    s = 1 - p_
    num = (1 - s**3) * (1 + s**3 * (1 - s ** (w_ - 3)))
    den = 1 - s**w_
    return scalar_or_array(np.minimum(1.0, num / den))


def padhye_throughput(
    rtt: ArrayLike,
    p: ArrayLike,
    t0: ArrayLike,
    b: ArrayLike = 2.0,
    w_max: ArrayLike = np.inf,
    mss: ArrayLike = 1.0,
) -> FloatOrArray:
    r"""TCP Reno throughput, Padhye et al. (1998) full model.

    With :math:`W = E[W_u]` (:func:`padhye_expected_window`),
    :math:`\hat Q` (:func:`padhye_timeout_probability`) and ``f``
    (:func:`padhye_f`):

    If :math:`E[W_u] < W_{max}`:

    .. math::
        B = \frac{\frac{1-p}{p} + E[W_u] + \frac{\hat Q(E[W_u])}{1-p}}
                 {RTT\left(\frac{b}{2}E[W_u] + 1\right)
                  + \hat Q(E[W_u])\, T_0 \frac{f(p)}{1-p}}

    otherwise (window-limited):

    .. math::
        B = \frac{\frac{1-p}{p} + W_{max} + \frac{\hat Q(W_{max})}{1-p}}
                 {RTT\left(\frac{b}{8}W_{max} + \frac{1-p}{p W_{max}} + 2\right)
                  + \hat Q(W_{max})\, T_0 \frac{f(p)}{1-p}}

    Parameters
    ----------
    rtt : float or array_like
        Round-trip time, > 0 (s).
    p : float or array_like
        Loss-indication probability, in (0, 1).
    t0 : float or array_like
        Base retransmission timeout ``T0`` (RTO), >= 0 (s).
    b : float or array_like, optional
        Packets acknowledged per ACK, >= 1 (default 2, delayed ACKs).
    w_max : float or array_like, optional
        Receiver-window limit, > 0 (packets); ``inf`` (default) for none.
    mss : float or array_like, optional
        Segment size (> 0) to scale packets/s into bytes/s (default 1).

    Returns
    -------
    float or numpy.ndarray
        Throughput in ``mss`` units per second.
    """
    rtt_ = check_positive("rtt", rtt)
    p_ = check_probability("p", p, allow_zero=False, allow_one=False)
    t0_ = check_nonnegative("t0", t0)
    b_ = check_in_range("b", b, 1.0, np.inf, high_open=True)
    wm_ = check_positive("w_max", w_max, allow_inf=True)
    mss_ = check_positive("mss", mss)

    rtt_, p_, t0_, b_, wm_ = np.broadcast_arrays(rtt_, p_, t0_, b_, wm_)
    ew = np.asarray(padhye_expected_window(p_, b_))
    fp = np.asarray(padhye_f(p_))
    q = 1 - p_

    # unconstrained branch
    q_u = np.asarray(padhye_timeout_probability(ew, p_))
    num_u = q / p_ + ew + q_u / q
    den_u = rtt_ * (b_ / 2 * ew + 1) + q_u * t0_ * fp / q

    # window-limited branch (w_max finite where used)
    wm_safe = np.where(np.isfinite(wm_), wm_, 1.0)
    q_m = np.asarray(padhye_timeout_probability(wm_safe, p_))
    num_m = q / p_ + wm_safe + q_m / q
    den_m = rtt_ * (b_ / 8 * wm_safe + q / (p_ * wm_safe) + 2) + q_m * t0_ * fp / q

    out = np.where(ew < wm_, num_u / den_u, num_m / den_m) * mss_
    return scalar_or_array(np.asarray(out, dtype=float))


def padhye_throughput_approx(
    rtt: ArrayLike,
    p: ArrayLike,
    t0: ArrayLike,
    b: ArrayLike = 2.0,
    w_max: ArrayLike = np.inf,
    mss: ArrayLike = 1.0,
) -> FloatOrArray:
    r"""Closed-form approximation of the Padhye et al. (1998) model.

    .. math::
        B \approx \min\left(\frac{W_{max}}{RTT},
            \frac{1}{RTT\sqrt{\frac{2bp}{3}}
                     + T_0 \min\left(1, 3\sqrt{\frac{3bp}{8}}\right) p (1+32p^2)}
        \right)

    Parameters are as for :func:`padhye_throughput`.
    """
    rtt_ = check_positive("rtt", rtt)
    p_ = check_probability("p", p, allow_zero=False, allow_one=False)
    t0_ = check_nonnegative("t0", t0)
    b_ = check_in_range("b", b, 1.0, np.inf, high_open=True)
    wm_ = check_positive("w_max", w_max, allow_inf=True)
    mss_ = check_positive("mss", mss)
    den = rtt_ * np.sqrt(2 * b_ * p_ / 3) + t0_ * np.minimum(
        1.0, 3 * np.sqrt(3 * b_ * p_ / 8)
    ) * p_ * (1 + 32 * p_**2)
    return scalar_or_array(np.minimum(wm_ / rtt_, 1.0 / den) * mss_)


# ---------------------------------------------------------------------------
# Slow-start loss arithmetic, Jou/Tan/Baras TR 2003-18 (paper 004), Section II
# ---------------------------------------------------------------------------


def prob_loss_in_first_packets(p: ArrayLike, k: ArrayLike = 64) -> FloatOrArray:
    r"""Probability of at least one loss among the first ``k`` packets.

    .. math:: P = 1 - (1 - P_d)^k

    (Paper 004, Section II: with the default ``ssthresh`` of 64 KB, 1 KB
    packets (``k = 64``) and ``P_d = 0.04``, ``1 - 0.96^64 = 0.9267``;
    packets are assumed to be dropped independently.)

    Parameters
    ----------
    p : float or array_like
        Per-packet drop probability ``P_d`` in [0, 1].
    k : float or array_like, optional
        Number of packets, >= 0 (default 64).
    """
    p_ = check_probability("p", p)
    k_ = check_nonnegative("k", k)
    return scalar_or_array(1.0 - (1.0 - p_) ** k_)


def _check_packet_index(name: str, value: ArrayLike) -> np.ndarray:
    arr = check_in_range(name, value, 1.0, np.inf, high_open=True)
    if (arr != np.floor(arr)).any():
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return arr


def slow_start_round(
    packet_index: ArrayLike, initial_window: ArrayLike = 1
) -> tuple[FloatOrArray, FloatOrArray]:
    r"""Round (RTT) of the first slow start in which a packet is sent.

    Without losses the window doubles every round: round ``r`` (1-based) sends
    ``IW 2^{r-1}`` packets, so the first ``IW (2^r - 1)`` packets leave in
    rounds ``1..r`` and packet ``i`` (1-based) is sent in round

    .. math:: r(i) = \left\lceil \log_2\!\left(\frac{i}{IW} + 1\right) \right\rceil

    with congestion window ``cwnd = IW 2^{r-1}`` packets during that round.
    (Paper 004, Section II: the 15th packet is sent with ``cwnd`` = 8 packets,
    i.e. in round 4 for ``IW = 1``; ACK-every-packet slow start assumed.)

    Parameters
    ----------
    packet_index : int or array_like
        1-based packet index ``i``.
    initial_window : int or array_like, optional
        Initial window ``IW`` in packets (default 1).

    Returns
    -------
    (round, cwnd)
        Round number (1-based) and the congestion window in packets.
    """
    i = _check_packet_index("packet_index", packet_index)
    iw = _check_packet_index("initial_window", initial_window)
    # Smallest r with iw*(2^r - 1) >= i; computed exactly with integers to
    # avoid log2 rounding at the powers of two.
    r = np.ceil(np.log2(i / iw + 1.0))
    r = np.where(iw * (2.0 ** (r - 1) - 1) >= i, r - 1, r)
    r = np.where(iw * (2.0**r - 1) < i, r + 1, r)
    cwnd = iw * 2.0 ** (r - 1)
    return scalar_or_array(r), scalar_or_array(cwnd)


def slow_start_packets_sent(rounds: ArrayLike, initial_window: ArrayLike = 1) -> FloatOrArray:
    r"""Packets sent in the first ``rounds`` rounds of a loss-free slow start.

    .. math:: n(r) = IW (2^r - 1)

    (Paper 004, Section II: the first 3 round-trip times carry 7 packets for
    ``IW = 1``.)
    """
    r = check_nonnegative("rounds", rounds)
    iw = _check_packet_index("initial_window", initial_window)
    return scalar_or_array(iw * (2.0**r - 1))


def prob_loss_within_rounds(
    p: ArrayLike, rounds: ArrayLike, initial_window: ArrayLike = 1
) -> FloatOrArray:
    r"""Probability of a loss during the first ``rounds`` RTTs of slow start.

    .. math:: P = 1 - (1 - P_d)^{IW (2^r - 1)}

    (Paper 004, Section II: an early loss, in the first 3 RTTs, leaves too
    few packets in flight for three duplicate ACKs, hence a timeout.)
    """
    n = slow_start_packets_sent(rounds, initial_window)
    return prob_loss_in_first_packets(p, n)


def prob_loss_in_round(
    p: ArrayLike, round_index: ArrayLike, initial_window: ArrayLike = 1
) -> FloatOrArray:
    r"""Probability that the *first* loss of slow start happens in round ``r``.

    .. math::
        P = (1-P_d)^{IW (2^{r-1}-1)} \left(1 - (1-P_d)^{IW 2^{r-1}}\right)

    (Derived from the independent-drop assumption of paper 004, Section II.)
    """
    p_ = check_probability("p", p)
    r = _check_packet_index("round_index", round_index)
    iw = _check_packet_index("initial_window", initial_window)
    before = iw * (2.0 ** (r - 1) - 1)
    inside = iw * 2.0 ** (r - 1)
    return scalar_or_array((1 - p_) ** before * (1 - (1 - p_) ** inside))


def prob_multiple_losses(p: ArrayLike, window: ArrayLike, m: int = 2) -> FloatOrArray:
    r"""Probability of ``m`` or more losses among ``window`` packets.

    .. math:: P(\ge m) = 1 - \sum_{j=0}^{m-1} \binom{w}{j} P_d^j (1-P_d)^{w-j}

    (Paper 004, Section II, notes that two or more losses in one slow-start
    window "cannot be ignored"; binomial model with independent drops.)

    Parameters
    ----------
    p : float or array_like
        Per-packet drop probability in [0, 1].
    window : int or array_like
        Packets in the window, >= 0.
    m : int, optional
        Threshold number of losses, >= 1 (default 2).
    """
    p_ = check_probability("p", p)
    w = check_nonnegative("window", window)
    if (w != np.floor(w)).any():
        raise ValueError(f"window must be an integer, got {window!r}")
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    return scalar_or_array(np.asarray(binom.sf(m - 1, w, p_), dtype=float))


def slow_start_loss_reaction(
    packet_index: ArrayLike,
    initial_window: ArrayLike = 1,
    variant: str = "tahoe",
) -> tuple[FloatOrArray, FloatOrArray]:
    r"""``ssthresh`` and ``cwnd`` after the first loss in the first slow start.

    If packet ``i`` is the first one lost it was sent with ``cwnd = W``
    (:func:`slow_start_round`); the sender then sets

    .. math:: ssthresh = W / 2,\qquad
              cwnd = \begin{cases} 1 & \text{Tahoe} \\ ssthresh & \text{Reno}
              \end{cases}

    (Paper 004, Section II: dropping the 15th packet takes ``ssthresh`` from
    64 KB to 4 KB and ``cwnd`` from 8 KB to 1 KB under Tahoe, with 1 KB
    packets. The receiver window is assumed not to bind, so
    ``min(cwnd, rcv_window)/2 = cwnd/2``; as in RFC 5681 ``ssthresh`` is
    not set below 2 packets.)

    Parameters
    ----------
    packet_index : int or array_like
        1-based index of the first lost packet.
    initial_window : int or array_like, optional
        Initial window in packets (default 1).
    variant : {"tahoe", "reno"}
        Loss reaction.

    Returns
    -------
    (ssthresh, cwnd)
        Both in packets.
    """
    if variant not in ("tahoe", "reno"):
        raise ValueError(f"variant must be 'tahoe' or 'reno', got {variant!r}")
    _, w = slow_start_round(packet_index, initial_window)
    ssthresh = np.maximum(np.asarray(w) / 2.0, 2.0)
    cwnd = np.ones_like(ssthresh) if variant == "tahoe" else ssthresh.copy()
    return scalar_or_array(ssthresh), scalar_or_array(cwnd)
