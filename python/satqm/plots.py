"""Figures of a run, drawn without pyplot (no global state, any backend).

The figures are plain :class:`matplotlib.figure.Figure` objects on an Agg
canvas: save them with :func:`save_figure` or ``fig.savefig``, or show them in
a notebook.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from satqm.results import Results

__all__ = ["plot_link", "save_figure"]


def plot_link(results: Results, link: str | None = None) -> Figure:
    """Utilization (%) and queue length (packets) of one link against time.

    Two stacked axes sharing the time axis; ``link`` defaults to the
    bottleneck. The warm-up period, if any, is shaded.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    name = results.bottleneck if link is None else link
    data = results.link(name)
    t = data.index.to_numpy()

    fig = Figure(figsize=(8, 5), constrained_layout=True)
    FigureCanvasAgg(fig)
    ax_u, ax_q = fig.subplots(2, 1, sharex=True)

    ax_u.plot(t, 100.0 * data["utilization"].to_numpy(), lw=0.8, color="C0")
    ax_u.set_ylabel("utilization (%)")
    ax_u.set_ylim(0, 105)
    ax_u.grid(True, alpha=0.3)

    ax_q.plot(t, data["queue_packets"].to_numpy(), lw=0.8, color="C1")
    ax_q.set_ylabel("queue (packets)")
    ax_q.set_xlabel("time (s)")
    ax_q.set_ylim(bottom=0)
    ax_q.grid(True, alpha=0.3)

    warmup = results.scenario.warmup
    if warmup > 0:
        for ax in (ax_u, ax_q):
            ax.axvspan(0, warmup, color="0.9", zorder=0, label="warm-up")
    if len(t):
        ax_q.set_xlim(0, max(float(t[-1]), results.duration))
    else:
        ax_q.set_xlim(0, results.duration or 1.0)
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


def save_figure(fig: Figure, path: str | os.PathLike[str], dpi: int = 120) -> None:
    """Write ``fig`` as PNG (no timestamps in the file's metadata)."""
    fig.savefig(path, format="png", dpi=dpi, metadata={"Software": None})
