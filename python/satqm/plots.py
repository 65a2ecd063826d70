"""Figures of a run, drawn without pyplot (no global state, any backend).

The figures are plain :class:`matplotlib.figure.Figure` objects on an Agg
canvas: save them with :func:`save_figure` or ``fig.savefig``, or show them in
a notebook.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from satqm.results import Results

__all__ = [
    "plot_cwnd",
    "plot_delay",
    "plot_link",
    "plot_link_state",
    "plot_seq",
    "save_figure",
    "seq_graph_data",
]


def plot_link(results: Results, link: str | None = None) -> Figure:
    """Utilization (%), queue length (packets) and queueing delay (ms) of
    one link against time.

    Three stacked axes sharing the time axis; ``link`` defaults to the
    bottleneck. The queueing delay is the mean of the packets that left the
    buffer in each sample interval (the ``queue_delay_ms`` column). The
    warm-up period, if any, is shaded.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    name = results.bottleneck if link is None else link
    data = results.link(name)
    t = data.index.to_numpy()

    fig = Figure(figsize=(8, 6.5), constrained_layout=True)
    FigureCanvasAgg(fig)
    ax_u, ax_q, ax_d = fig.subplots(3, 1, sharex=True)

    ax_u.plot(t, 100.0 * data["utilization"].to_numpy(), lw=0.8, color="C0")
    ax_u.set_ylabel("utilization (%)")
    ax_u.set_ylim(0, 105)
    ax_u.grid(True, alpha=0.3)

    ax_q.plot(t, data["queue_packets"].to_numpy(), lw=0.8, color="C1")
    ax_q.set_ylabel("queue (packets)")
    ax_q.set_ylim(bottom=0)
    ax_q.grid(True, alpha=0.3)

    _draw_delay_series(ax_d, data)

    warmup = results.scenario.warmup
    if warmup > 0:
        for ax in (ax_u, ax_q, ax_d):
            ax.axvspan(0, warmup, color="0.9", zorder=0, label="warm-up")
    if len(t):
        ax_d.set_xlim(0, max(float(t[-1]), results.duration))
    else:
        ax_d.set_xlim(0, results.duration or 1.0)
        ax_u.text(
            0.5,
            0.5,
            f"no samples: the run ({results.duration:g} s) is shorter than one "
            f"sample interval ({results.scenario.sample_interval:g} s)",
            transform=ax_u.transAxes,
            ha="center",
            va="center",
        )

    measured = data[data.index > warmup]
    title = f"{results.scenario.name}: {name} (seed {results.seed})"
    if len(measured):
        title += (
            f", mean utilization {100 * measured['utilization'].mean():.1f} %"
            f", mean queue {measured['queue_packets'].mean():.1f} packets"
        )
    fig.suptitle(title, fontsize="medium")
    return fig


def plot_link_state(results: Results, link: str | None = None) -> Figure:
    """A link that plays a schedule (default: the bottleneck) against time:
    its rate in force and the throughput it carried (Mbit/s), its
    propagation delay (ms), with the times it was down shaded.

    Raises ``KeyError`` if the link does not change over time.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    name = results.bottleneck if link is None else link
    st = results.link_state
    st = st[st["link"] == name].sort_values("time_s", kind="stable")
    if not len(st):
        changing = sorted(set(results.link_state["link"].astype(str)))
        raise KeyError(
            f"link {name!r} does not change over time"
            + (f" (links that do: {', '.join(changing)})" if changing else " (no link does)")
        )
    t = st["time_s"].to_numpy()
    fig = Figure(figsize=(8, 5), constrained_layout=True)
    FigureCanvasAgg(fig)
    ax_r, ax_d = fig.subplots(2, 1, sharex=True)
    ax_r.step(t, st["rate_bps"].to_numpy() / 1e6, where="post", lw=1.0, color="C0", label="rate")
    if name in set(results.timeseries["link"].astype(str)):
        data = results.link(name)
        ax_r.plot(
            data.index.to_numpy(),
            data["throughput_bps"].to_numpy() / 1e6,
            lw=0.8,
            color="C1",
            label="throughput",
        )
    ax_r.set_ylabel("Mbit/s")
    ax_r.set_ylim(bottom=0)
    ax_r.legend(loc="lower right", fontsize="small")
    ax_r.grid(True, alpha=0.3)
    ax_d.step(t, 1e3 * st["delay_s"].to_numpy(), where="post", lw=1.0, color="C2")
    ax_d.set_ylabel("propagation delay (ms)")
    ax_d.set_xlabel("time (s)")
    ax_d.grid(True, alpha=0.3)
    up = st["up"].to_numpy()
    end = max(float(t[-1]), results.duration)
    for i in range(len(t)):
        if not up[i]:
            stop = float(t[i + 1]) if i + 1 < len(t) else end
            for ax in (ax_r, ax_d):
                ax.axvspan(float(t[i]), stop, color="0.85", zorder=0, lw=0)
    ax_d.set_xlim(0, end)
    fig.suptitle(
        f"{results.scenario.name}: {name} (seed {results.seed}); shaded: down",
        fontsize="medium",
    )
    return fig


def _draw_delay_series(ax: Any, data: Any) -> None:
    """The ``queue_delay_ms`` column of one link's time series on ``ax``."""
    t = data.index.to_numpy()
    ax.plot(t, data["queue_delay_ms"].to_numpy(), lw=0.8, color="C2")
    ax.set_ylabel("queueing delay (ms)")
    ax.set_xlabel("time (s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)


def plot_delay(results: Results, link: str | None = None) -> Figure:
    """The queueing delay at one link (default: the bottleneck), in two
    panels: the cumulative distribution of every packet's delay after the
    warm-up (from ``Results.delay_cdf``), with its median, 95th and 99th
    percentiles marked; and the mean delay of the packets that left the
    buffer in each sample interval against time (``queue_delay_ms``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    name = results.bottleneck if link is None else link
    cdf = results.delay_cdf(name)
    data = results.link(name)

    fig = Figure(figsize=(10, 4.5), constrained_layout=True)
    FigureCanvasAgg(fig)
    ax_c, ax_t = fig.subplots(1, 2, width_ratios=[1, 1.4])

    if len(cdf):
        # Steps through each bucket's ends: the fraction at or below a
        # bucket's lower end is the one before it.
        lo = cdf["delay_lo_ns"].to_numpy(dtype=float) / 1e6
        hi = cdf["delay_hi_ns"].to_numpy(dtype=float) / 1e6
        frac = cdf["fraction"].to_numpy()
        before = [0.0, *frac[:-1]]
        xs = [x for pair in zip(lo, hi) for x in pair]
        ys = [y for pair in zip(before, frac) for y in pair]
        ax_c.plot(xs, ys, lw=1.0, color="C2")
        for q, style in ((0.5, ":"), (0.95, "--"), (0.99, "-.")):
            v = results.delay_quantile(q, name)
            ax_c.axvline(v, color="0.4", lw=0.8, ls=style, label=f"p{round(q * 100)} {v:.3g} ms")
        ax_c.legend(loc="lower right", fontsize="small")
        n = int(cdf["packets"].sum())
        ax_c.set_title(f"{n:,} packets after the warm-up", fontsize="small")
    else:
        ax_c.text(
            0.5,
            0.5,
            "no packet left the buffer\nafter the warm-up",
            transform=ax_c.transAxes,
            ha="center",
            va="center",
        )
    ax_c.set_xlabel("queueing delay (ms)")
    ax_c.set_ylabel("fraction of packets")
    ax_c.set_ylim(0, 1.02)
    ax_c.set_xlim(left=0)
    ax_c.grid(True, alpha=0.3)

    _draw_delay_series(ax_t, data)
    warmup = results.scenario.warmup
    if warmup > 0:
        ax_t.axvspan(0, warmup, color="0.9", zorder=0, label="warm-up")
    ax_t.set_xlim(0, results.duration or 1.0)
    ax_t.set_title("mean of each sample interval", fontsize="small")

    title = f"{results.scenario.name}: queueing delay at {name} (seed {results.seed})"
    if name == results.bottleneck:
        s = results.summary()
        mean = s.get("queue_delay_mean_ms", float("nan"))
        if mean == mean:  # not NaN
            title += f", mean {mean:.3g} ms, max {s['queue_delay_max_ms']:.3g} ms"
    fig.suptitle(title, fontsize="medium")
    return fig


def _segments(t: Any, lo: Any, hi: Any) -> Any:
    import numpy as np

    return np.stack([np.column_stack([t, lo]), np.column_stack([t, hi])], axis=1)


def seq_graph_data(
    results: Results,
    flow: int,
    start: float | None = None,
    end: float | None = None,
    way: int | None = None,
) -> dict[str, Any]:
    """What :func:`plot_seq` draws for ``flow``, from ``results.seq``: for
    each of ``sent``, ``retransmitted``, ``sacked`` and ``dropped`` a
    DataFrame of ``time_s``, ``seq`` and ``end`` (bytes), and ``acked``
    with ``time_s``, ``ack`` and ``window`` (the advertised window's right
    edge); only rows from ``start`` to ``end`` seconds if given. ``way``
    (0 or 1) picks the direction of a real connection's data; by default
    the one that sent more bytes. Raises :class:`ValueError` if the flow was
    not traced."""
    seq = results.seq
    mine = seq[seq["flow"] == flow]
    if mine.empty:
        traced = sorted(set(seq["flow"].tolist()))
        raise ValueError(
            f"flow {flow} has no sequence records: name it in simulation.trace_seq, "
            "or for a real connection set emulation.trace_seq "
            f"(traced flows: {', '.join(map(str, traced)) or 'none'})"
        )
    if way is None:
        sent = mine[mine["event"] == "sent"]
        by_way = (sent["end"] - sent["seq"]).groupby(sent["way"]).sum()
        way = int(by_way.idxmax()) if len(by_way) else 0
    elif way not in (0, 1):
        raise ValueError(f"way: must be 0 or 1, not {way!r}")
    mine = mine[mine["way"] == way]
    if start is not None:
        mine = mine[mine["time_s"] >= start]
    if end is not None:
        mine = mine[mine["time_s"] <= end]
    out: dict[str, Any] = {}
    for ev in ("sent", "retransmitted", "sacked", "dropped"):
        out[ev] = mine.loc[mine["event"] == ev, ["time_s", "seq", "end"]].reset_index(drop=True)
    acks = mine.loc[mine["event"] == "acked", ["time_s", "seq", "end"]]
    out["acked"] = acks.rename(columns={"seq": "ack", "end": "window"}).reset_index(drop=True)
    return out


def plot_seq(
    results: Results,
    flow: int,
    start: float | None = None,
    end: float | None = None,
    way: int | None = None,
) -> Figure:
    """The time-sequence graph of one TCP connection, as tcptrace draws it:
    each segment sent (a short vertical bar from its first to its last
    byte), retransmissions in red, the cumulative ACK and the advertised
    window's right edge as step lines, SACKed ranges, and the segments the
    network dropped (crosses). Below, the flow's congestion window and
    slow-start threshold if ``simulation.trace_cwnd`` names it, with its
    window cuts. ``start`` and ``end`` (seconds) zoom on part of the run;
    ``way`` picks a real connection's direction (see
    :func:`seq_graph_data`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure

    d = seq_graph_data(results, flow, start, end, way)
    cw = results.cwnd[results.cwnd["flow"] == flow]
    fig = Figure(figsize=(9, 6.5 if len(cw) else 5), constrained_layout=True)
    FigureCanvasAgg(fig)
    if len(cw):
        ax, ax_w = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1.2])
    else:
        ax, ax_w = fig.subplots(1, 1), None
    mb = 1e-6
    styles = {
        "sent": ("C0", 1.0, "sent"),
        "sacked": ("C4", 2.5, "SACKed"),
        "retransmitted": ("C3", 1.6, "retransmitted"),
    }
    for ev, (color, lw, label) in styles.items():
        df = d[ev]
        segs = _segments(df["time_s"], df["seq"] * mb, df["end"] * mb)
        ax.add_collection(LineCollection(segs, colors=color, linewidths=lw, label=label))
    acks = d["acked"]
    ax.step(acks["time_s"], acks["ack"] * mb, where="post", color="C2", lw=0.9, label="ACK")
    ax.step(
        acks["time_s"],
        acks["window"] * mb,
        where="post",
        color="C8",
        lw=0.9,
        label="receive window",
    )
    dr = d["dropped"]
    ax.scatter(
        dr["time_s"],
        dr["seq"] * mb,
        marker="x",
        color="k",
        s=28,
        zorder=5,
        label="dropped in the network",
    )
    rx = d["retransmitted"]
    ax.scatter(
        rx["time_s"],
        rx["seq"] * mb,
        marker="o",
        facecolors="none",
        edgecolors="C3",
        s=30,
        zorder=4,
        label="_retransmission marker",
    )
    ax.autoscale_view()
    data = [d[k] for k in ("sent", "retransmitted") if len(d[k])]
    if data:
        lo = min(df["seq"].min() for df in data) * mb
        hi = max(df["end"].max() for df in data) * mb
        pad = 0.03 * max(hi - lo, 1e-6)
        ax.set_ylim(max(lo - pad, 0), hi + pad)
    if start is not None or end is not None:
        t0 = start if start is not None else 0.0
        ax.set_xlim(t0, end if end is not None else results.duration)
    ax.set_ylabel("sequence (MB)")
    ax.grid(True, alpha=0.3)
    down = _down_spans(results)
    for ax_ in (ax, ax_w):
        if ax_ is not None:
            for a, b in down:
                ax_.axvspan(a, b, color="0.85", zorder=0, lw=0)
    if down:
        ax.axvspan(0, 0, color="0.85", label="a link down")
    ax.legend(loc="upper left", fontsize="small")
    title = f"{results.scenario.name}: flow {flow} (seed {results.seed})"
    n_rtx, n_drop = len(d["retransmitted"]), len(dr)
    ax.set_title(f"{title}, {n_rtx} retransmissions, {n_drop} drops", fontsize="medium")
    if ax_w is None:
        ax.set_xlabel("time (s)")
        return fig
    _draw_cwnd(ax_w, results, flow)
    return fig


def _down_spans(results: Results) -> list[tuple[float, float]]:
    """The stretches of time when a link that plays a schedule was down
    (its forward direction's rows of ``link_state``)."""
    st = results.link_state
    if not len(st):
        return []
    spans = []
    for name, g in st.groupby("link", observed=True, sort=True):
        if str(name).endswith(".reverse"):
            continue
        g = g.sort_values("time_s", kind="stable")
        t, up = g["time_s"].to_numpy(), g["up"].to_numpy()
        i = 0
        while i < len(t):
            if up[i]:
                i += 1
                continue
            j = i
            while j < len(t) and not up[j]:
                j += 1
            spans.append((float(t[i]), float(t[j]) if j < len(t) else results.duration))
            i = j
    return spans


def _draw_cwnd(ax: Any, results: Results, flow: int) -> None:
    import numpy as np

    cw = results.cwnd[results.cwnd["flow"] == flow]
    kb = 1e-3
    ax.plot(cw["time_s"], cw["cwnd_bytes"] * kb, color="C0", lw=0.9, label="cwnd")
    ss = cw["ssthresh_bytes"].to_numpy()
    ax.plot(
        cw["time_s"],
        np.where(np.isfinite(ss), ss, np.nan) * kb,
        color="C1",
        lw=0.9,
        ls="--",
        label="ssthresh",
    )
    cuts = results.congestion[results.congestion["flow"] == flow]
    if len(cuts):
        ax.scatter(
            cuts["time_s"],
            cuts["cwnd_after"] * kb,
            marker="v",
            color="C3",
            s=16,
            zorder=5,
            label="window cut",
        )
    ax.set_ylabel("window (kB)")
    ax.set_xlabel("time (s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")


def plot_cwnd(results: Results) -> Figure:
    """Congestion window and slow-start threshold over time of every flow
    ``simulation.trace_cwnd`` names, one panel each."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    flows = sorted(set(results.cwnd["flow"].tolist()))
    if not flows:
        raise ValueError("no congestion window was traced: name flows in simulation.trace_cwnd")
    fig = Figure(figsize=(8, 1.2 + 1.8 * len(flows)), constrained_layout=True)
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(flows), 1, sharex=True, squeeze=False)[:, 0]
    for ax, f in zip(axes, flows):
        _draw_cwnd(ax, results, f)
        ax.set_title(f"flow {f}", fontsize="small", loc="left")
    fig.suptitle(
        f"{results.scenario.name}: congestion windows (seed {results.seed})", fontsize="medium"
    )
    return fig


def save_figure(fig: Figure, path: str | os.PathLike[str], dpi: int = 120) -> None:
    """Write ``fig`` as PNG (no timestamps in the file's metadata)."""
    fig.savefig(path, format="png", dpi=dpi, metadata={"Software": None})
