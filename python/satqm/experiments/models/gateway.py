"""Part 2 of the models reproduction: the AVQRED chapter's ODE beside the
satellite gateway (the chapter's §8, Figs. 14-16).

``d(t)`` and ``ω(t)`` are measured in a run of the gateway without AQM
(:func:`satqm.models.gateway_samples_from_results`) and fitted with Fourier
series; the ODE (:func:`satqm.models.simulate_avqred_ode`) is integrated for
RED and AVQRED and set beside packet runs of the RED and AVQRED scenarios.
The scenarios default to the chapter's parameter set of ``satqm reproduce
avqred`` (``scenarios/avqred/chapter.toml`` with RED 4 and with AVQRED of its
Table 2); other scenario files may be given, and the measured series may be
given instead of measured here.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

from satqm.scenario import quantity_text

from .._runner import Run, save_figure, write_json
from .report import agreement_row, new_figure
from .scenario_values import (
    ScenarioSource,
    bits_per_second,
    buffer_packets,
    data_packet_bytes,
    dumps,
    mean_delay,
    read_scenario,
    show,
)
from .settings import Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: The comparison's default parameter set (``satqm reproduce avqred``'s
#: chapter set, 1,400-byte packets: the ODE is the chapter's).
GATEWAY_SET = "chapter"


def default_gateway_scenarios() -> tuple[dict[str, Any], dict[str, Any]]:
    """RED 4 and AVQRED on the packaged gateway scenario of :data:`GATEWAY_SET`
    (the tables ``satqm reproduce avqred`` runs)."""
    from ..avqred import SETS, aqm_table, scenario_text, with_aqm

    text = scenario_text(GATEWAY_SET)
    pb = SETS[GATEWAY_SET][1]
    red = with_aqm(text, aqm_table("red4", pb), f"avqred-{GATEWAY_SET}-red4")
    avqred = with_aqm(text, aqm_table("avqred", pb), f"avqred-{GATEWAY_SET}-avqred")
    return tomllib.loads(red), tomllib.loads(avqred)


def label(source: ScenarioSource, variant: str) -> str:
    """How the report names a gateway scenario."""
    if isinstance(source, dict):
        return f"scenarios/avqred/{GATEWAY_SET}.toml with {variant.upper()} of Table 2"
    return show(Path(source))


def no_aqm_scenario(path: ScenarioSource, duration: float) -> dict[str, Any]:
    """The gateway scenario at ``path`` without its ``[[aqm]]`` (the chapter
    measured ``d`` and ``ω`` without AQM), run for ``duration``."""
    data = read_scenario(path)
    data.pop("aqm", None)
    data["name"] = f"{data.get('name', 'gateway')}-no-aqm"
    data["simulation"]["duration"] = quantity_text(duration, "s")
    data["simulation"]["warmup"] = "0 s"
    return data


def with_duration(path: ScenarioSource, duration: float, warmup: float) -> dict[str, Any]:
    """The gateway scenario at ``path`` run for ``duration``, measured after ``warmup``."""
    data = read_scenario(path)
    data["simulation"]["duration"] = quantity_text(duration, "s")
    data["simulation"]["warmup"] = quantity_text(warmup, "s")
    return data


def gateway_ode_parameters(
    red_scenario: ScenarioSource, avqred_scenario: ScenarioSource
) -> dict[str, dict[str, float]]:
    """The ODE's parameters read from the two gateway scenarios.

    ``m`` = web connections; ``R`` = twice the mean one-way delay of the
    server links plus the receive link; ``mu`` = downlink rate over packets
    of ``mss`` and 40 header bytes (52 with TCP timestamps); the transmit
    buffer (packets) bounds ``q``; RED's ``min_th, max_th, w_q, max_p`` and
    AVQRED's thresholds from their
    ``[[aqm]]``; ``tau`` = AVQRED's ``min_capacity`` / downlink rate.
    """
    out: dict[str, dict[str, float]] = {}
    for variant, path in (("red", red_scenario), ("avqred", avqred_scenario)):
        d = read_scenario(path)
        topo = d["topology"]
        packet_bytes = data_packet_bytes(d.get("tcp", {}))
        rate = bits_per_second(topo["downlink"]["rate"], "topology.downlink.rate")
        m = sum(float(t.get("connections", 0)) for t in d.get("traffic", []) if t["kind"] == "web")
        if m <= 0:
            raise ValueError(f"{label(path, variant)}: no web connections to model")
        R = 2.0 * (
            mean_delay(topo["server_links"]["delay"], "topology.server_links.delay")
            + mean_delay(topo["receive"]["delay"], "topology.receive.delay")
        )
        i, aqm = next(
            ((i, a) for i, a in enumerate(d.get("aqm", [])) if a.get("kind") == variant),
            (None, None),
        )
        if aqm is None:
            raise ValueError(f"{label(path, variant)}: no [[aqm]] of kind {variant!r}")
        p: dict[str, float] = {
            "m": m,
            "R": R,
            "mu": rate / (8.0 * packet_bytes),
            "buffer": buffer_packets(
                topo["downlink"].get("buffer"), packet_bytes, "topology.downlink.buffer"
            ),
            "min_th": float(aqm["min_th"]),
            "max_th": float(aqm["max_th"]),
        }
        if variant == "red":
            p["w_q"] = float(aqm.get("w_q", 0.002))
            p["max_p"] = float(aqm.get("max_p", 0.1))
        else:
            cap = aqm.get("min_capacity")
            if cap is None:
                p["tau"] = 1.0
            else:
                p["tau"] = min(1.0, bits_per_second(cap, f"aqm[{i}].min_capacity") / rate)
        out[variant] = p
    return out


# ----- the comparison ----------------------------------------------------------


def runs(
    st: Settings, red_path: ScenarioSource, avqred_path: ScenarioSource, measure: bool
) -> tuple[list[Run], dict[str, str]]:
    """The packet runs of the gateway (RED, AVQRED, and without AQM if the
    series are to be ``measure``d) and their names by variant."""
    gd, gw = st.gateway_duration, st.gateway_warmup
    texts = {
        "red": dumps(with_duration(red_path, gd, gw)),
        "avqred": dumps(with_duration(avqred_path, gd, gw)),
    }
    if measure:
        texts["no-aqm"] = dumps(no_aqm_scenario(red_path, gd))
    names = {v: f"gateway-{v}-{gd:g}s-s{st.gateway_seed}" for v in texts}
    return [Run(names[v], text, st.gateway_seed) for v, text in texts.items()], names


def compare(
    out: Path,
    st: Settings,
    red_path: ScenarioSource,
    avqred_path: ScenarioSource,
    samples_source: Any,
    folders: dict[str, Path],
    gw_runs: dict[str, str],
    rows: list[dict[str, Any]],
) -> str:
    """Fit the series (measured in the run without AQM unless
    ``samples_source`` gives them), integrate the ODE for RED and AVQRED and
    set it beside their packet runs: append agreement rows, write
    ``gateway_series.json`` (and ``gateway_samples.csv``) and the figures;
    returns the report's section."""
    from satqm.models import GatewaySeries, gateway_samples_from_results, simulate_avqred_ode
    from satqm.results import Results

    gd, gw = st.gateway_duration, st.gateway_warmup
    if samples_source is None:
        noaqm = Results.load(folders[gw_runs["no-aqm"]])
        samples_source = gateway_samples_from_results(noaqm)
        samples_source.to_csv(out / "gateway_samples.csv", index=False)
        source_text = (
            f"measured in a run of `{label(red_path, 'red 4')}` without its `[[aqm]]` "
            f"(`runs/{gw_runs['no-aqm']}`, samples in `gateway_samples.csv`)"
        )
    else:
        source_text = "given to the reproduction"
    if isinstance(samples_source, GatewaySeries):
        series = samples_source
    else:
        series = _fit_window(samples_source, gw, st.gateway_fit_points)
    samples = series.samples
    write_json(out / "gateway_series.json", series.to_dict())
    params = gateway_ode_parameters(red_path, avqred_path)
    ode = {v: simulate_avqred_ode(v, gd, series=series, **params[v]) for v in ("red", "avqred")}
    sims = {v: Results.load(folders[gw_runs[v]]) for v in ("red", "avqred")}
    stats: dict[str, dict[str, dict[str, float]]] = {}
    for v in ("red", "avqred"):
        m = ode[v].stats("q", gw)
        ts = sims[v].link("transmit")
        w = ts[ts.index > gw].queue_packets
        s = {"mean": float(w.mean()), "std": float(w.std(ddof=0))}
        stats[v] = {"model": m, "simulation": s}
        rows.append(agreement_row("avqred-ode-gateway", v, "queue_mean", m["mean"], s["mean"]))
        rows.append(agreement_row("avqred-ode-gateway", v, "queue_std", m["std"], s["std"]))
    improvement: dict[str, dict[str, float]] = {}
    for side in ("model", "simulation"):
        improvement[side] = {}
        for k in ("mean", "std"):
            red_v = stats["red"][side][k]
            improvement[side][k] = (
                100.0 * (red_v - stats["avqred"][side][k]) / red_v if red_v > 0 else math.nan
            )
    for k in ("mean", "std"):
        rows.append(
            agreement_row(
                "avqred-ode-gateway",
                "avqred-vs-red",
                f"queue_{k}_improvement_pct",
                improvement["model"][k],
                improvement["simulation"][k],
            )
        )
    _figure(out / "fig_avqred_ode.png", ode, sims, stats, improvement, gw, gd)
    if samples is not None:
        _figure_series(out / "fig_gateway_series.png", samples, series)
    pr, pa = params["red"], params["avqred"]
    from .. import _verdict as V

    lower = {
        side: V.all_of(*(
            V.below(stats["avqred"][side][k], stats["red"][side][k], V.QUEUE,
                    names=(f"{k}: AVQRED", "RED"))
            for k in ("mean", "std")
        ))
        for side in ("model", "simulation")
    }
    d_desc = ""
    if samples is not None and "d_s" in samples:
        win = samples
        d_desc = (
            f" Over the fitted window, d = {win.d_s.mean():.3g} s on average "
            f"({win.d_s.min():.3g}-{win.d_s.max():.3g} s) and ω spans "
            f"{win.omega.min():.2f}-{win.omega.max():.2f}."
        )
    notes = ""
    if samples is not None and float(samples.d_s.mean()) > 5.0:
        notes += (
            f"\nThe measured PEP delay is many seconds ({samples.d_s.mean():.0f} s on "
            "average): without AQM the PEP of this scenario holds a large backlog, where the "
            'chapter\'s PEP buffers "one+ round trip" of data.'
        )
        if stats["red"]["model"]["std"] > 0.3 * pr["buffer"]:
            notes += (
                " With such a delay the RED loop of the model swings between an empty and a "
                "full transmit queue."
            )
        notes += "\n"
    sm = stats["avqred"]["simulation"]
    if sm["std"] == 0.0 and sm["mean"] >= pr["buffer"]:
        notes += (
            "\nThe AVQRED packet run's transmit queue stays at its limit of "
            f"{pr['buffer']:g} packets: the open question of docs/gateway.md (a virtual "
            "capacity equal to the regulator's rate lets the queue random-walk up to the "
            "cap), not something the ODE describes.\n"
        )
    queue_table = "\n".join(
        [
            "| transmit queue (packets) | RED model | RED packets "
            "| AVQRED model | AVQRED packets |",
            "|---|---:|---:|---:|---:|",
        ]
        + [
            f"| {k} | "
            + " | ".join(
                f"{stats[v][side][k]:.1f}"
                for v in ("red", "avqred")
                for side in ("model", "simulation")
            )
            + " |"
            for k in ("mean", "std")
        ]
    )
    red_label, avqred_label = label(red_path, "red 4"), label(avqred_path, "avqred")
    return f"""## 2. The AVQRED ODE vs the satellite gateway (chapter Figs. 14-16)

Scenarios: RED: `{red_label}`; AVQRED: `{avqred_label}` ({gd:g} s, statistics of the
transmit queue after {gw:g} s). `d(t)` and `ω(t)` were {source_text}, fitted with
{series.d.n_harmonics} harmonics over {series.d.period:g} s (`gateway_series.json`,
`fig_gateway_series.png`).{d_desc}

ODE parameters read from the scenarios: m = {pr["m"]:g} connections, R = {pr["R"] * 1000:g} ms,
μ = {pr["mu"]:.1f} packets/s, transmit buffer {pr["buffer"]:g} packets (the ODE's
queue is clipped there: the model does not follow what the PEP then holds back);
RED: min_th {pr["min_th"]:g}, max_th {pr["max_th"]:g}, w_q {pr["w_q"]:g}, max_p {pr["max_p"]:g};
AVQRED: min_th {pa["min_th"]:g}, max_th {pa["max_th"]:g}, max_p 1, τ = {pa["tau"]:g};
δ = 1 ms, κ = 10 1/s (docs/models.md).

{queue_table}

Improvement by AVQRED (Fig. 16: (RED - AVQRED)/RED): mean
{improvement["model"]["mean"]:.0f} % (model) vs {improvement["simulation"]["mean"]:.0f} % (packets),
standard deviation {improvement["model"]["std"]:.0f} % vs {improvement["simulation"]["std"]:.0f} %.
The chapter's claim, a lower and steadier transmit queue with AVQRED
(docs/reproductions.md#verdicts):

{lower["model"].line("(Figs. 14-16) in the ODE")}
{lower["simulation"].line("(Figs. 14-16) in the packet runs")}

{notes}
Figure: `fig_avqred_ode.png` (transmit queue of the model and the packet run for
RED and AVQRED, and the mean/std bars).

Other gateway scenarios: `reproduce(..., red_scenario=..., avqred_scenario=...)`.
"""


def _fit_window(source: Any, t_from: float, n_points: int) -> Any:
    """Fit ``n_points`` samples from ``t_from`` (fewer, or from the start, if
    the samples do not reach that far)."""
    import pandas as pd

    from satqm.models import fit_gateway_series, read_gateway_samples

    if isinstance(source, (str, os.PathLike)):
        df = read_gateway_samples(source)
    else:
        df = pd.DataFrame(source)
    if (df["time_s"] >= t_from).sum() < 3:
        t_from = float(df["time_s"].iloc[0])
    n = int(min(n_points, (df["time_s"] >= t_from).sum()))
    return fit_gateway_series(df, t_from=t_from, n_points=n)


def _figure(
    path: Path,
    ode: dict[str, Any],
    sims: dict[str, Any],
    stats: dict[str, dict[str, dict[str, float]]],
    improvement: dict[str, dict[str, float]],
    warmup: float,
    duration: float,
) -> None:
    import numpy as np

    fig = new_figure(10, 8)
    names = {"red": "RED 4", "avqred": "AVQRED"}
    for i, v in enumerate(("red", "avqred")):
        ax = fig.add_subplot(3, 1, i + 1)
        q = sims[v].link("transmit").queue_packets
        sm, mm = stats[v]["simulation"], stats[v]["model"]
        ax.plot(
            q.index,
            q.values,
            lw=0.5,
            color="tab:blue",
            label=f"packets: {sm['mean']:.1f} ± {sm['std']:.1f}",
        )
        ax.plot(
            ode[v].t,
            ode[v].q,
            lw=0.8,
            color="tab:red",
            label=f"ODE: {mm['mean']:.1f} ± {mm['std']:.1f}",
        )
        ax.axvline(warmup, color="grey", ls="--", lw=0.6)
        ax.set_xlim(0, duration)
        ax.set_ylabel("transmit queue (pkts)")
        ax.set_title(f"{names[v]} transmit queue (chapter Fig. {14 + i})", fontsize=9)
        ax.legend(fontsize=8, loc="upper right")
    ax = fig.add_subplot(3, 2, 5)
    x = np.arange(2)
    for j, (side, color) in enumerate((("model", "tab:red"), ("simulation", "tab:blue"))):
        means = [stats[v][side]["mean"] for v in ("red", "avqred")]
        stds = [stats[v][side]["std"] for v in ("red", "avqred")]
        ax.bar(
            x + (j - 0.5) * 0.35,
            means,
            0.35,
            yerr=stds,
            color=color,
            alpha=0.7,
            label="ODE" if side == "model" else "packets",
        )
    ax.set_xticks(x, ["RED 4", "AVQRED"])
    ax.set_ylabel("queue mean ± std")
    ax.legend(fontsize=8)
    ax = fig.add_subplot(3, 2, 6)
    for j, (side, color) in enumerate((("model", "tab:red"), ("simulation", "tab:blue"))):
        vals = [improvement[side]["mean"], improvement[side]["std"]]
        ax.bar(
            x + (j - 0.5) * 0.35,
            vals,
            0.35,
            color=color,
            alpha=0.7,
            label="ODE" if side == "model" else "packets",
        )
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks(x, ["mean", "std"])
    ax.set_ylabel("improvement by AVQRED (%)")
    ax.set_title("chapter Fig. 16", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)


def _figure_series(path: Path, samples: Any, series: Any) -> None:
    import numpy as np

    fig = new_figure(9, 5)
    t = samples.time_s.to_numpy(float)
    tt = np.linspace(t[0], t[-1], 2000)
    panels = (
        ("d_s", series.d, "PEP buffering delay d (s)"),
        ("omega", series.omega, "load variation ω"),
    )
    for i, (col, ser, label) in enumerate(panels):
        ax = fig.add_subplot(2, 1, i + 1)
        ax.plot(t, samples[col], lw=0.5, color="tab:blue", label="measured (100 ms)")
        ax.plot(
            tt,
            ser(tt),
            lw=1.0,
            color="tab:red",
            label=f"Fourier series, {ser.n_harmonics} harmonics",
        )
        ax.set_ylabel(label)
        ax.legend(fontsize=8, loc="upper right")
    fig.axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    save_figure(fig, path)
