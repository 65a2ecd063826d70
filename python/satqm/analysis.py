"""Analyses of recorded runs: how drops cluster, how windows synchronize.

The AVQRED papers judge global synchronization by how clustered the drops
at the receive queue are: tail-drop-like behaviour drops many consecutive
arrivals, and every flow hit in the same round trip cuts its window at
once. :func:`drop_clustering` measures that from a run's drop log, using
each drop's index among the packets that arrived at its queue.
:func:`synchronization` measures the effect itself from the congestion log:
how many connections cut their windows within the same round trip.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass(frozen=True)
class DropClustering:
    """Clustering of the drops at one queue.

    Attributes
    ----------
    drops : int
        Drops counted.
    runs : int
        Maximal runs of drops at consecutive arrival indices (a lone drop
        is a run of length 1).
    mean_run : float
        Mean run length (drops / runs).
    max_run : int
        Longest run.
    clustered_fraction : float
        Fraction of drops that are in runs of length 2 or more.
    dispersion : float
        Index of dispersion (variance / mean) of the number of drops per
        ``bin_s`` window: 1 for a Poisson process, larger when drops bunch.
    flows_per_window_mean : float
        Mean number of distinct flows hit by a drop per ``window_s`` window
        (counting windows with at least one drop): how many senders are
        told to slow down at once.
    flows_per_window_max : int
    """

    drops: int
    runs: int
    mean_run: float
    max_run: int
    clustered_fraction: float
    dispersion: float
    flows_per_window_mean: float
    flows_per_window_max: int

    def as_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}


def drop_clustering(
    drops: pd.DataFrame,
    link: str,
    start_s: float = 0.0,
    end_s: float | None = None,
    bin_s: float = 0.1,
    window_s: float = 1.0,
    reasons: tuple[str, ...] = ("overflow", "early_drop", "forced_drop"),
) -> DropClustering:
    """Measure how the drops at ``link`` cluster, over ``[start_s, end_s)``.

    ``drops`` is :attr:`Results.drops`. ``window_s`` should be about one
    round-trip time of the flows (for the AVQRED system, about 1 s).
    """
    import numpy as np

    if bin_s <= 0 or window_s <= 0:
        raise ValueError("bin_s and window_s must be > 0")
    d = drops[(drops["link"] == link) & drops["reason"].isin(reasons)]
    d = d[d["time_s"] >= start_s]
    if end_s is not None:
        d = d[d["time_s"] < end_s]
    d = d.sort_values("index", kind="stable")
    n = len(d)
    if n == 0:
        nan = float("nan")
        return DropClustering(0, 0, nan, 0, nan, nan, nan, 0)
    idx = d["index"].to_numpy(dtype=np.int64)
    # A new run starts wherever the index is not the previous one plus one.
    starts = np.concatenate(([True], np.diff(idx) != 1))
    run_id = np.cumsum(starts)
    lengths = np.bincount(run_id)[1:]
    clustered = int(lengths[lengths >= 2].sum())

    t = d["time_s"].to_numpy(dtype=float)
    t0 = start_s
    t1 = end_s if end_s is not None else float(t.max()) + bin_s
    nbins = max(int(np.ceil((t1 - t0) / bin_s)), 1)
    # (a tiny epsilon keeps 1.2 / 0.1 in bin 12 despite binary rounding)
    counts = np.bincount(np.floor((t - t0) / bin_s + 1e-9).astype(np.int64), minlength=nbins)
    counts = counts[:nbins]
    mean = counts.mean()
    dispersion = float(counts.var() / mean) if mean > 0 else float("nan")

    w = np.floor((t - t0) / window_s + 1e-9).astype(np.int64)
    flows = d["flow"].to_numpy(dtype=np.int64)
    pairs = np.unique(np.stack([w, flows]), axis=1)
    per_window = np.bincount(pairs[0] - pairs[0].min())
    per_window = per_window[per_window > 0]
    return DropClustering(
        drops=n,
        runs=int(lengths.size),
        mean_run=float(n / lengths.size),
        max_run=int(lengths.max()),
        clustered_fraction=clustered / n,
        dispersion=dispersion,
        flows_per_window_mean=float(per_window.mean()),
        flows_per_window_max=int(per_window.max()),
    )


@dataclass(frozen=True)
class Synchronization:
    """How many connections cut their congestion windows at once.

    Attributes
    ----------
    cuts : int
        Window cuts counted (fast retransmits, timeouts, ECN reductions).
    connections : int
        Distinct connections that cut at least once.
    window_s : float
        Length of the windows the cuts are grouped in (about one RTT).
    per_window_mean : float
        Mean number of distinct connections cutting per window, over every
        window of the period (windows without a cut count as 0).
    per_window_p95 : float
    per_window_max : int
    dispersion : float
        Index of dispersion (variance / mean) of that count: about 1 when
        connections cut independently of each other (Poisson), larger when
        they cut together.
    max_share : float
        The largest number cutting in one window divided by ``connections``.
    """

    cuts: int
    connections: int
    window_s: float
    per_window_mean: float
    per_window_p95: float
    per_window_max: int
    dispersion: float
    max_share: float

    def as_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}


def synchronization(
    congestion: pd.DataFrame,
    flows: object | None = None,
    start_s: float = 0.0,
    end_s: float | None = None,
    window_s: float | None = None,
    kinds: tuple[str, ...] = ("fast_retransmit", "timeout", "ecn"),
) -> Synchronization:
    """Measure global synchronization from :attr:`Results.congestion`.

    The cuts in ``[start_s, end_s)`` of the connections in ``flows`` (any
    iterable of flow ids; all connections if None) are grouped into windows
    of ``window_s`` seconds (default: the median smoothed RTT at the cuts),
    and the distinct connections cutting in each window are counted. A
    window in which many connections cut is a synchronized back-off, the
    effect of clustered drops that the AVQRED papers set out to avoid.
    """
    import numpy as np

    if window_s is not None and not window_s > 0:
        raise ValueError(f"window_s must be > 0, got {window_s!r}")
    c = congestion[congestion["kind"].isin(kinds) & (congestion["time_s"] >= start_s)]
    if end_s is not None:
        c = c[c["time_s"] < end_s]
    if flows is not None:
        c = c[c["flow"].isin(list(flows))]  # type: ignore[call-overload]
    nan = float("nan")
    if len(c) == 0:
        return Synchronization(0, 0, window_s or nan, 0.0, 0.0, 0, nan, nan)
    if window_s is None:
        rtt = c["srtt_s"].to_numpy(dtype=float)
        rtt = rtt[np.isfinite(rtt)]
        if rtt.size == 0:
            raise ValueError("no RTT sample at any cut: give window_s")
        window_s = float(np.median(rtt))
    t = c["time_s"].to_numpy(dtype=float)
    t1 = end_s if end_s is not None else float(t.max()) + window_s
    nwin = max(int(np.ceil((t1 - start_s) / window_s)), 1)
    w = np.minimum(np.floor((t - start_s) / window_s + 1e-9).astype(np.int64), nwin - 1)
    f = c["flow"].to_numpy(dtype=np.int64)
    pairs = np.unique(np.stack([w, f]), axis=1)
    per = np.bincount(pairs[0], minlength=nwin)
    mean = float(per.mean())
    conns = int(np.unique(f).size)
    return Synchronization(
        cuts=len(c),
        connections=conns,
        window_s=float(window_s),
        per_window_mean=mean,
        per_window_p95=float(np.percentile(per, 95)),
        per_window_max=int(per.max()),
        dispersion=float(per.var() / mean) if mean > 0 else nan,
        max_share=float(per.max() / conns),
    )
