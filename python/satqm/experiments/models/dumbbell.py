"""Part 1 of the models reproduction: the fluid model beside packets on the dumbbell.

The Misra-Gong-Towsley fluid model (:func:`satqm.models.simulate_fluid`) and
packet runs of ``scenarios/models/dumbbell.toml`` with the same AQM, PI and
AVQ. The scenario's ``[[aqm]]`` is built here from the library's design
rules at run time: PI's ``(a, b)`` from :func:`~satqm.models.pi_design` and
:func:`~satqm.models.pi_discretize` (Hollot et al.), AVQ's ``alpha`` from
:func:`~satqm.models.avq_alpha_max` (Theorem 1 of the AVQ paper).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from satqm.scenario import quantity_text

from .._runner import Run, packaged_scenario, save_figure
from .report import agreement_row, new_figure
from .scenario_values import (
    bits_per_second,
    buffer_packets,
    data_packet_bytes,
    dumps,
    mean_delay,
    seconds,
)
from .settings import Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Shipped with the package; ``scenarios/`` at the repository root links here.
DUMBBELL = "scenarios/models/dumbbell.toml"

#: Design choices of the dumbbell comparison (the rest comes from the scenario).
Q_REF = 100.0  # PI's reference queue, packets
PI_FS = 160.0  # PI's sampling frequency, Hz (Hollot et al.'s example)
GAMMA = 0.98  # AVQ's target utilization
VQ_PACKETS = 100.0  # AVQ's virtual buffer, packets
#: alpha = ALPHA_FRACTION x Theorem 1's bound: the AVQ paper's 0.15 / 0.177.
ALPHA_FRACTION = 0.85

#: The AQMs compared, in the order of the tables.
AQMS = ("pi", "avq")


def dumbbell_data() -> dict[str, Any]:
    """The dumbbell scenario, parsed."""
    return tomllib.loads(packaged_scenario(DUMBBELL))


@dataclass(frozen=True)
class DumbbellDesign:
    """The fluid model's inputs and the AQM parameters the library computes.

    ``C`` packets/s, ``Tp`` and ``R_max`` s, queue sizes in packets.
    """

    N: int
    C: float
    Tp: float
    buffer: float
    packet_bytes: float
    R_max: float
    q_ref: float
    pi_fs: float
    pi_kp: float
    pi_ki: float
    pi_a: float
    pi_b: float
    gamma: float
    avq_alpha_max: float
    avq_alpha: float
    vq_packets: float


def dumbbell_design(data: dict[str, Any] | None = None) -> DumbbellDesign:
    """Read ``N``, ``C``, ``Tp`` and the buffer from the scenario and apply
    the design rules: PI (Hollot et al.) for ``N⁻ = N``, ``R⁺ = Tp +
    q_ref/C``; AVQ's Theorem 1 for ``d = R⁺``, ``N``, ``gamma``."""
    from satqm.models import avq_alpha_max, pi_design, pi_discretize

    d = dumbbell_data() if data is None else data
    topo = d["topology"]
    packet_bytes = data_packet_bytes(d.get("tcp", {}))
    C = bits_per_second(topo["bottleneck"]["rate"], "topology.bottleneck.rate") / (
        8.0 * packet_bytes
    )
    recv = "receiver_access" if "receiver_access" in topo else "access"
    Tp = 2.0 * (
        mean_delay(topo["access"]["delay"], "topology.access.delay")
        + seconds(topo["bottleneck"]["delay"], "topology.bottleneck.delay")
        + mean_delay(topo[recv]["delay"], f"topology.{recv}.delay")
    )
    N = int(topo["pairs"])
    R_max = Tp + Q_REF / C
    design = pi_design(C, N, R_max)
    a, b = pi_discretize(design, PI_FS)
    alpha_max = avq_alpha_max(C=C, gamma=GAMMA, d=R_max, N=N)
    return DumbbellDesign(
        N=N,
        C=C,
        Tp=Tp,
        buffer=buffer_packets(
            topo["bottleneck"].get("buffer"), packet_bytes, "topology.bottleneck.buffer"
        ),
        packet_bytes=packet_bytes,
        R_max=R_max,
        q_ref=Q_REF,
        pi_fs=PI_FS,
        pi_kp=design.Kp,
        pi_ki=design.Ki,
        pi_a=a,
        pi_b=b,
        gamma=GAMMA,
        avq_alpha_max=alpha_max,
        avq_alpha=ALPHA_FRACTION * alpha_max,
        vq_packets=VQ_PACKETS,
    )


def dumbbell_aqm(aqm: str, design: DumbbellDesign) -> dict[str, Any]:
    """The ``[[aqm]]`` table of ``aqm`` ("pi" or "avq"), from ``design``."""
    if aqm == "pi":
        return {
            "kind": "pi",
            "at": "bottleneck",
            "mode": "mark",
            "a": design.pi_a,
            "b": design.pi_b,
            "sample_rate": design.pi_fs,
            "q_ref": design.q_ref,
        }
    if aqm == "avq":
        return {
            "kind": "avq",
            "at": "bottleneck",
            "mode": "mark",
            "gamma": design.gamma,
            "alpha": design.avq_alpha,
            "vq_limit": design.vq_packets * design.packet_bytes,
        }
    raise ValueError(f"aqm must be 'pi' or 'avq', got {aqm!r}")


def dumbbell_scenario(
    aqm: str, duration: float | None = None, warmup: float | None = None
) -> dict[str, Any]:
    """The dumbbell scenario with the ``[[aqm]]`` the library designs."""
    data = dumbbell_data()
    data["aqm"] = [dumbbell_aqm(aqm, dumbbell_design(data))]
    if duration is not None:
        data["simulation"]["duration"] = quantity_text(duration, "s")
    if warmup is not None:
        data["simulation"]["warmup"] = quantity_text(warmup, "s")
    return data


def fluid_run(aqm: str, design: DumbbellDesign, duration: float) -> Any:
    """The fluid model of the dumbbell with the same AQM parameters."""
    from satqm.models import simulate_fluid

    common = dict(buffer=design.buffer, record_interval=0.1)
    if aqm == "pi":
        return simulate_fluid(
            design.N,
            design.C,
            design.Tp,
            duration,
            aqm="pi",
            a=design.pi_a,
            b=design.pi_b,
            fs=design.pi_fs,
            q_ref=design.q_ref,
            **common,
        )
    return simulate_fluid(
        design.N,
        design.C,
        design.Tp,
        duration,
        aqm="avq",
        gamma=design.gamma,
        alpha=design.avq_alpha,
        vq_buffer=design.vq_packets,
        **common,
    )


def _fluid_stats(res: Any, C: float, warmup: float) -> dict[str, float]:
    import numpy as np

    f = res.frame()
    f = f[f.t > warmup]
    util = np.where(f.q > 0, 1.0, np.minimum(f.rate / C, 1.0))
    return {
        "queue_mean": float(f.q.mean()),
        "queue_std": float(f.q.std(ddof=0)),
        "utilization": float(util.mean()),
        "marking": float(f.p.mean()),
    }


def link_stats(res: Any, link: str, warmup: float) -> dict[str, float]:
    ts = res.link(link)
    w = ts[ts.index > warmup]
    arrivals = float(w.arrivals.sum())
    return {
        "queue_mean": float(w.queue_packets.mean()),
        "queue_std": float(w.queue_packets.std(ddof=0)),
        "utilization": float(w.utilization.mean()),
        "marking": float(w.marks.sum() + w.drops.sum()) / arrivals if arrivals else math.nan,
    }


# ----- the comparison ----------------------------------------------------------


def run_name(aqm: str, st: Settings, seed: int) -> str:
    """The folder name of a packet run of the dumbbell."""
    return f"dumbbell-{aqm}-{st.dumbbell_duration:g}s-s{seed}"


def runs(st: Settings) -> list[Run]:
    """The packet runs of the dumbbell: each AQM, each seed."""
    return [
        Run(
            run_name(aqm, st, seed),
            dumps(dumbbell_scenario(aqm, st.dumbbell_duration, st.dumbbell_warmup)),
            seed,
        )
        for aqm in AQMS
        for seed in st.dumbbell_seeds
    ]


def compare(
    out: Path,
    st: Settings,
    design: DumbbellDesign,
    folders: dict[str, Path],
    rows: list[dict[str, Any]],
) -> str:
    """Set the packet runs beside the fluid model: append agreement rows,
    write ``dumbbell_runs.csv`` and ``fig_fluid_dumbbell.png``; returns the
    report's section."""
    import pandas as pd

    from satqm.results import Results

    per_seed = []
    traces: dict[str, Any] = {}
    fluid: dict[str, Any] = {}
    for aqm in AQMS:
        sims = []
        for seed in st.dumbbell_seeds:
            res = Results.load(folders[run_name(aqm, st, seed)])
            s = link_stats(res, "bottleneck", st.dumbbell_warmup)
            sims.append(s)
            per_seed.append({"aqm": aqm, "seed": seed, **s})
            if seed == st.dumbbell_seeds[0]:
                traces[aqm] = res.link("bottleneck").queue_packets
        fl = fluid_run(aqm, design, st.dumbbell_duration)
        fluid[aqm] = fl
        fs = _fluid_stats(fl, design.C, st.dumbbell_warmup)
        for q in ("queue_mean", "queue_std", "utilization", "marking"):
            sim_mean = sum(s[q] for s in sims) / len(sims)
            rows.append(agreement_row("fluid-dumbbell", aqm, q, fs[q], sim_mean))
    pd.DataFrame(per_seed).to_csv(out / "dumbbell_runs.csv", index=False)
    _figure(out / "fig_fluid_dumbbell.png", traces, fluid, design, st)
    return _section(design, st, rows)


def _section(d: DumbbellDesign, st: Settings, rows: list[dict[str, Any]]) -> str:
    from .. import _verdict as V

    get = {(r["aqm"], r["quantity"]): r for r in rows if r["part"] == "fluid-dumbbell"}
    pi_m, avq_m = get[("pi", "queue_mean")], get[("avq", "queue_mean")]
    pi_p = get[("pi", "marking")]
    pi_s, avq_s = get[("pi", "queue_std")], get[("avq", "queue_std")]
    avq_u = get[("avq", "utilization")]
    ratio = pi_p["model"] / pi_p["simulation"] if pi_p["simulation"] else math.nan
    names = {
        "queue_mean": "queue mean",
        "queue_std": "queue std",
        "utilization": "utilization",
        "marking": "marking",
    }
    table = "\n".join(
        f"| {label} | "
        + " | ".join(
            f"{get[(aqm, q)][side]:.4g}"
            for aqm in ("pi", "avq")
            for side in ("model", "simulation")
        )
        + " |"
        for q, label in names.items()
    )
    at_q_ref = V.all_of(*(
        V.match(pi_m[side], d.q_ref, V.QUEUE, what="q_ref", name=label)
        for side, label in (("model", "fluid"), ("simulation", "packets"))
    ))
    pi_line = (
        at_q_ref.line("(Hollot et al.) PI's integral action holds the mean queue at q_ref")
        + f"\n  Standard deviation {pi_s['model']:.2g} (fluid) and {pi_s['simulation']:.1f} "
        "(packets): a fluid model that settles has no counterpart of the fluctuation of "
        "discrete windows and random marks."
    )
    cycles = avq_s["model"] > 0.1 * max(avq_m["model"], 1.0)
    avq_line = (
        f"- AVQ: mean queue {avq_m['model']:.1f} (fluid) vs {avq_m['simulation']:.1f} "
        f"(packets), std {avq_s['model']:.1f} vs {avq_s['simulation']:.1f}, utilization "
        f"{avq_u['model']:.3f} vs {avq_u['simulation']:.3f}."
        + (
            f" The fluid AVQ loop with {d.N} flows does not settle but cycles (the marking's "
            "high gain, the K12 term that Theorem 1 leaves out; docs/models.md)."
            if cycles
            else ""
        )
    )
    return f"""## 1. Fluid model vs packets on the dumbbell (PI and AVQ)

Scenario `scenarios/models/dumbbell.toml`: N = {d.N} Reno flows with ECN and no
delayed ACKs, C = {d.C:g} packets/s ({d.packet_bytes:g}-byte packets), round-trip
propagation Tp = {d.Tp * 1000:g} ms, buffer {d.buffer:g} packets. The fluid model is
`satqm.models.simulate_fluid` with the same N, C, Tp, buffer and AQM parameters.

Design rules, computed at run time from the scenario (`design.json`):

- PI (Hollot et al.): N- = {d.N}, R+ = Tp + q_ref/C = {d.R_max:.3f} s, q_ref = {d.q_ref:g}
  packets: K_p = {d.pi_kp:.4e}, K_i = {d.pi_ki:.4e}; at {d.pi_fs:g} Hz
  a = {d.pi_a:.6e}, b = {d.pi_b:.6e} (bilinear).
- AVQ (Theorem 1 of the AVQ paper): gamma = {d.gamma}, d = R+ = {d.R_max:.3f} s,
  N = {d.N}: alpha* = {d.avq_alpha_max:.5f}; the runs use alpha = {ALPHA_FRACTION} alpha* =
  {d.avq_alpha:.5f} (the AVQ paper's ratio 0.15/0.177); virtual buffer {d.vq_packets:g} packets.

Figure: `fig_fluid_dumbbell.png` (queue of the first seed and of the fluid model).
Per-seed figures: `dumbbell_runs.csv`.

| | PI: fluid | PI: packets | AVQ: fluid | AVQ: packets |
|---|---:|---:|---:|---:|
{table}

Reading the numbers:

{pi_line}
- Marking: the fluid model's p is {pi_p["model"]:.4f} (p* = 2/W*² holds the windows);
  the packet runs mark {pi_p["simulation"]:.4f} of the packets, a ratio of
  {ratio:.2f}. For the same mean window W the fluid model's equilibrium is
  p = 2/W², while the periodic sawtooth of discrete halvings (Mathis et al.:
  W = sqrt(3/(2p))) needs only p = 3/(2W²): a ratio of 4/3 = 1.33 from the
  averaging alone.
{avq_line}
"""


def _figure(
    path: Path, traces: dict[str, Any], fluid: dict[str, Any], d: DumbbellDesign, st: Settings
) -> None:
    fig = new_figure(9, 6)
    for i, aqm in enumerate(("pi", "avq")):
        ax = fig.add_subplot(2, 1, i + 1)
        q = traces[aqm]
        w = q[q.index > st.dumbbell_warmup]
        f = fluid[aqm]
        sel = f.t > st.dumbbell_warmup
        ax.plot(
            q.index,
            q.values,
            lw=0.6,
            color="tab:blue",
            label=f"packets: {w.mean():.1f} ± {w.std(ddof=0):.1f}",
        )
        ax.plot(
            f.t,
            f.q[:, 0],
            lw=1.0,
            color="tab:red",
            label=f"fluid model: {f.q[sel, 0].mean():.1f} ± {f.q[sel, 0].std():.1f}",
        )
        if aqm == "pi":
            ax.axhline(d.q_ref, color="grey", ls=":", lw=0.8)
        ax.axvline(st.dumbbell_warmup, color="grey", ls="--", lw=0.6)
        ax.set_ylabel("queue (packets)")
        title = (
            f"PI (a = {d.pi_a:.3e}, b = {d.pi_b:.3e}, q_ref = {d.q_ref:g})"
            if aqm == "pi"
            else f"AVQ (gamma = {d.gamma}, alpha = {d.avq_alpha:.4f} = {ALPHA_FRACTION} alpha*)"
        )
        ax.set_title(f"{title}; N = {d.N}, C = {d.C:g} pkt/s, Tp = {d.Tp * 1000:g} ms", fontsize=9)
        ax.legend(fontsize=8, loc="upper right")
        ax.set_xlim(0, st.dumbbell_duration)
    fig.axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    save_figure(fig, path)
