"""The papers' models set beside packet-level runs (issue 4).

Three comparisons, each with a figure, rows of the agreement table
(``agreement.csv``, ``agreement.md``) and a section of ``REPORT.md``:

1. **Fluid model vs packets on the dumbbell** (Misra-Gong-Towsley,
   :func:`satqm.models.simulate_fluid`) for PI and AVQ. The dumbbell is
   ``scenarios/models/dumbbell.toml``; its ``[[aqm]]`` is built here from the
   library's design rules at run time: PI's ``(a, b)`` from
   :func:`~satqm.models.pi_design` and :func:`~satqm.models.pi_discretize`,
   AVQ's ``alpha`` from :func:`~satqm.models.avq_alpha_max`.
2. **The AVQRED chapter's ODE vs the satellite gateway** (paper 000, §8,
   Figs. 14-16): ``d(t)`` and ``ω(t)`` measured in a run of the gateway
   without AQM (:func:`satqm.models.gateway_samples_from_results`), fitted
   with Fourier series, the ODE integrated for RED and AVQRED and compared
   with packet runs of the RED and AVQRED scenarios. The gateway scenarios
   default to the chapter's parameter set of ``satqm reproduce avqred``
   (``scenarios/avqred/chapter.toml`` with RED 4 and with AVQRED of its
   Table 2); other scenario files may be given, and the measured series may
   be given instead of measured here.
3. **Fig. 21 of the parallel-VQ paper** (queue distribution, Markov chain vs
   simulation), from :mod:`satqm.experiments._pvq_fig21` when it is present.
"""

from __future__ import annotations

import copy
import math
import os
import re
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

from ._runner import Run, packaged_scenario, run_all, write_json, write_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Shipped with the package; ``scenarios/`` at the repository root links here.
DUMBBELL = "scenarios/models/dumbbell.toml"

#: The gateway comparison's default parameter set (``satqm reproduce avqred``'s
#: chapter set, 1,400-byte packets: the ODE is the chapter's).
GATEWAY_SET = "chapter"
_REPO = Path(__file__).resolve().parents[3]

#: A gateway scenario: a TOML file, or (label, parsed table) built here.
ScenarioSource = Any

#: Design choices of the dumbbell comparison (the rest comes from the scenario).
Q_REF = 100.0  # PI's reference queue, packets
PI_FS = 160.0  # PI's sampling frequency, Hz (Hollot et al.'s example)
GAMMA = 0.98  # AVQ's target utilization
VQ_PACKETS = 100.0  # AVQ's virtual buffer, packets
#: alpha = ALPHA_FRACTION x Theorem 1's bound: the AVQ paper's 0.15 / 0.177.
ALPHA_FRACTION = 0.85

#: Columns of ``agreement.csv``.
AGREEMENT_COLUMNS = (
    "part",
    "aqm",
    "quantity",
    "model",
    "simulation",
    "difference",
    "relative_difference",
)


@dataclass(frozen=True)
class Settings:
    """Durations (s) and seeds of one reproduction."""

    dumbbell_duration: float
    dumbbell_warmup: float
    dumbbell_seeds: tuple[int, ...]
    gateway_duration: float
    gateway_warmup: float
    gateway_fit_points: int
    gateway_seed: int = 1
    #: ``quick`` argument of the parallel-VQ Fig. 21 function.
    fig21_quick: bool = True

    def __post_init__(self) -> None:
        if not 0 <= self.dumbbell_warmup < self.dumbbell_duration:
            raise ValueError("dumbbell_warmup must be in [0, dumbbell_duration)")
        if not 0 <= self.gateway_warmup < self.gateway_duration:
            raise ValueError("gateway_warmup must be in [0, gateway_duration)")
        if not self.dumbbell_seeds:
            raise ValueError("dumbbell_seeds must not be empty")


#: ``--quick``: one seed; the gateway for 300 s (its 400 connections are all
#: open by 190 s) with the fit over 50 s from 200 s.
QUICK = Settings(150.0, 50.0, (1,), 300.0, 200.0, 500, fig21_quick=True)
#: Full: three seeds; the gateway for 20 minutes as in the chapter.
FULL = Settings(300.0, 50.0, (1, 2, 3), 1400.0, 200.0, 500, fig21_quick=False)


# ---------------------------------------------------------------------------
# Scenario values
# ---------------------------------------------------------------------------

_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "min": 60.0}
_RATE = {"bps": 1.0, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9}
_SIZE = {
    "b": 1.0,
    "kb": 1e3,
    "mb": 1e6,
    "gb": 1e9,
    "kib": 1024.0,
    "mib": 1024.0**2,
    "gib": 1024.0**3,
}
_QTY = re.compile(r"^\s*([0-9.eE+-]+)\s*([A-Za-z/]+)\s*$")


def quantity(value: Any, kind: str) -> float:
    """A scenario quantity in base units (s, bit/s, bytes): a number or a
    string with one of the units of ``docs/scenarios.md``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"not a {kind}: {value!r}")
    m = _QTY.match(value)
    units = {"time": _TIME, "rate": _RATE, "bytes": _SIZE}[kind]
    if not m:
        raise ValueError(f"not a {kind}: {value!r}")
    unit = m.group(2).lower().replace("bit/s", "bps")
    if unit not in units:
        raise ValueError(f"unknown {kind} unit in {value!r}")
    return float(m.group(1)) * units[unit]


def _mean_delay(spec: Any) -> float:
    """Mean of a delay: fixed, ``{min, max}``, ``{uniform = [a, b]}`` or a list."""
    if isinstance(spec, dict):
        if "uniform" in spec:
            a, b = spec["uniform"]
        else:
            a, b = spec["min"], spec["max"]
        return 0.5 * (quantity(a, "time") + quantity(b, "time"))
    if isinstance(spec, list):
        return sum(quantity(x, "time") for x in spec) / len(spec)
    return quantity(spec, "time")


def _buffer_packets(spec: Any, packet_bytes: float) -> float:
    if spec is None:
        return 1000.0
    if isinstance(spec, dict):
        if "packets" in spec:
            return float(spec["packets"])
        return quantity(spec["bytes"], "bytes") / packet_bytes
    return float(spec)


def _read_scenario(source: ScenarioSource) -> dict[str, Any]:
    """A scenario as a table: from a TOML file, or a copy of a parsed one."""
    if isinstance(source, dict):
        return copy.deepcopy(source)
    return tomllib.loads(Path(source).read_text(encoding="utf-8"))


def default_gateway_scenarios() -> tuple[dict[str, Any], dict[str, Any]]:
    """RED 4 and AVQRED on the packaged gateway scenario of :data:`GATEWAY_SET`
    (the tables ``satqm reproduce avqred`` runs)."""
    from .avqred import SETS, aqm_table, scenario_text, with_aqm

    text = scenario_text(GATEWAY_SET)
    pb = SETS[GATEWAY_SET][1]
    red = with_aqm(text, aqm_table("red4", pb), f"avqred-{GATEWAY_SET}-red4")
    avqred = with_aqm(text, aqm_table("avqred", pb), f"avqred-{GATEWAY_SET}-avqred")
    return tomllib.loads(red), tomllib.loads(avqred)


def _label(source: ScenarioSource, variant: str) -> str:
    if isinstance(source, dict):
        return f"scenarios/avqred/{GATEWAY_SET}.toml with {variant.upper()} of Table 2"
    return _show(Path(source))


def _dumps(data: dict[str, Any]) -> str:
    from satqm.sweep.canonical_toml import dumps

    return dumps(data)


def dumbbell_data() -> dict[str, Any]:
    """The dumbbell scenario, parsed."""
    return tomllib.loads(packaged_scenario(DUMBBELL))


# ---------------------------------------------------------------------------
# Part 1: fluid model vs packets on the dumbbell
# ---------------------------------------------------------------------------


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
    packet_bytes = float(d.get("tcp", {}).get("mss", 1460)) + 40.0
    C = quantity(topo["bottleneck"]["rate"], "rate") / (8.0 * packet_bytes)
    access = topo["access"]["delay"]
    recv = topo.get("receiver_access", topo["access"])["delay"]
    Tp = 2.0 * (
        _mean_delay(access) + quantity(topo["bottleneck"]["delay"], "time") + _mean_delay(recv)
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
        buffer=_buffer_packets(topo["bottleneck"].get("buffer"), packet_bytes),
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
        data["simulation"]["duration"] = float(duration)
    if warmup is not None:
        data["simulation"]["warmup"] = float(warmup)
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


def _link_stats(res: Any, link: str, warmup: float) -> dict[str, float]:
    ts = res.link(link)
    w = ts[ts.index > warmup]
    arrivals = float(w.arrivals.sum())
    return {
        "queue_mean": float(w.queue_packets.mean()),
        "queue_std": float(w.queue_packets.std(ddof=0)),
        "utilization": float(w.utilization.mean()),
        "marking": float(w.marks.sum() + w.drops.sum()) / arrivals if arrivals else math.nan,
    }


# ---------------------------------------------------------------------------
# Part 2: the AVQRED ODE vs the gateway
# ---------------------------------------------------------------------------


def no_aqm_scenario(path: ScenarioSource, duration: float) -> dict[str, Any]:
    """The gateway scenario at ``path`` without its ``[[aqm]]`` (the chapter
    measured ``d`` and ``ω`` without AQM), run for ``duration``."""
    data = _read_scenario(path)
    data.pop("aqm", None)
    data["name"] = f"{data.get('name', 'gateway')}-no-aqm"
    data["simulation"]["duration"] = float(duration)
    data["simulation"]["warmup"] = 0.0
    return data


def _with_duration(path: ScenarioSource, duration: float, warmup: float) -> dict[str, Any]:
    data = _read_scenario(path)
    data["simulation"]["duration"] = float(duration)
    data["simulation"]["warmup"] = float(warmup)
    return data


def gateway_ode_parameters(
    red_scenario: ScenarioSource, avqred_scenario: ScenarioSource
) -> dict[str, dict[str, float]]:
    """The ODE's parameters read from the two gateway scenarios.

    ``m`` = web connections; ``R`` = twice the mean one-way delay of the
    server links plus the receive link; ``mu`` = downlink rate over packets
    of ``mss + 40`` bytes; the transmit buffer (packets) bounds ``q``; RED's
    ``min_th, max_th, w_q, max_p`` and AVQRED's thresholds from their
    ``[[aqm]]``; ``tau`` = AVQRED's ``min_capacity`` / downlink rate.
    """
    out: dict[str, dict[str, float]] = {}
    for variant, path in (("red", red_scenario), ("avqred", avqred_scenario)):
        d = _read_scenario(path)
        topo = d["topology"]
        packet_bytes = float(d.get("tcp", {}).get("mss", 1460)) + 40.0
        rate = quantity(topo["downlink"]["rate"], "rate")
        m = sum(float(t.get("connections", 0)) for t in d.get("traffic", []) if t["kind"] == "web")
        if m <= 0:
            raise ValueError(f"{_label(path, variant)}: no web connections to model")
        R = 2.0 * (
            _mean_delay(topo["server_links"]["delay"]) + _mean_delay(topo["receive"]["delay"])
        )
        aqm = next((a for a in d.get("aqm", []) if a.get("kind") == variant), None)
        if aqm is None:
            raise ValueError(f"{_label(path, variant)}: no [[aqm]] of kind {variant!r}")
        p: dict[str, float] = {
            "m": m,
            "R": R,
            "mu": rate / (8.0 * packet_bytes),
            "buffer": _buffer_packets(topo["downlink"].get("buffer"), packet_bytes),
            "min_th": float(aqm["min_th"]),
            "max_th": float(aqm["max_th"]),
        }
        if variant == "red":
            p["w_q"] = float(aqm.get("w_q", 0.002))
            p["max_p"] = float(aqm.get("max_p", 0.1))
        else:
            cap = aqm.get("min_capacity")
            p["tau"] = min(1.0, quantity(cap, "rate") / rate) if cap is not None else 1.0
        out[variant] = p
    return out


# ---------------------------------------------------------------------------
# The reproduction
# ---------------------------------------------------------------------------


def _row(part: str, aqm: str, quantity_: str, model: float, sim: float) -> dict[str, Any]:
    diff = model - sim
    rel = diff / abs(sim) if sim and math.isfinite(sim) else math.nan
    return {
        "part": part,
        "aqm": aqm,
        "quantity": quantity_,
        "model": model,
        "simulation": sim,
        "difference": diff,
        "relative_difference": rel,
    }


def _markdown(rows: list[dict[str, Any]]) -> str:
    def fmt(x: Any) -> str:
        if isinstance(x, float):
            if math.isnan(x):
                return "–"
            return f"{x:.4g}"
        return str(x)

    lines = [
        "| " + " | ".join(AGREEMENT_COLUMNS) + " |",
        "|" + "|".join(["---"] * 3 + ["---:"] * 4) + "|",
    ]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r[c]) for c in AGREEMENT_COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def reproduce(
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    settings: Settings | None = None,
    red_scenario: str | os.PathLike[str] | None = None,
    avqred_scenario: str | os.PathLike[str] | None = None,
    gateway_samples: Any = None,
) -> Path:
    """Run the three comparisons; write figures, ``agreement.csv/.md`` and
    ``REPORT.md``. Returns the path of REPORT.md.

    ``settings`` overrides :data:`QUICK` / :data:`FULL`. ``red_scenario`` and
    ``avqred_scenario`` are gateway scenario files (default: RED 4 and AVQRED
    on the packaged ``scenarios/avqred/chapter.toml``, see
    :func:`default_gateway_scenarios`). ``gateway_samples`` is a measured ``d``/``ω`` source for
    :func:`satqm.models.fit_gateway_series` (CSV path, DataFrame or fitted
    :class:`~satqm.models.GatewaySeries`); by default they are measured in a
    run of the RED scenario without its AQM.
    """
    import pandas as pd

    import satqm

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    st = settings or (QUICK if quick else FULL)
    red_default, avqred_default = default_gateway_scenarios()
    red_path: ScenarioSource = red_scenario if red_scenario is not None else red_default
    avqred_path: ScenarioSource = avqred_scenario if avqred_scenario is not None else avqred_default
    for given in (red_scenario, avqred_scenario):
        if given is not None and not Path(given).is_file():
            raise FileNotFoundError(f"gateway scenario not found: {given}")

    # ----- every packet run, in one batch ------------------------------------
    design = dumbbell_design()
    dd = st.dumbbell_duration
    runs = [
        Run(
            f"dumbbell-{aqm}-{dd:g}s-s{seed}",
            _dumps(dumbbell_scenario(aqm, dd, st.dumbbell_warmup)),
            seed,
        )
        for aqm in ("pi", "avq")
        for seed in st.dumbbell_seeds
    ]
    gd, gw = st.gateway_duration, st.gateway_warmup
    gw_runs: dict[str, str] = {}
    texts = {
        "red": _dumps(_with_duration(red_path, gd, gw)),
        "avqred": _dumps(_with_duration(avqred_path, gd, gw)),
    }
    if gateway_samples is None:
        texts["no-aqm"] = _dumps(no_aqm_scenario(red_path, gd))
    for name, text in texts.items():
        gw_runs[name] = f"gateway-{name}-{gd:g}s-s{st.gateway_seed}"
        runs.append(Run(gw_runs[name], text, st.gateway_seed))
    folders = run_all(runs, out / "runs", workers=workers, progress=progress)

    rows: list[dict[str, Any]] = []
    sections: list[str] = []

    # ----- part 1 -----------------------------------------------------------
    per_seed = []
    traces: dict[str, Any] = {}
    fluid: dict[str, Any] = {}
    for aqm in ("pi", "avq"):
        sims = []
        for seed in st.dumbbell_seeds:
            res = satqm.Results.load(folders[f"dumbbell-{aqm}-{dd:g}s-s{seed}"])
            s = _link_stats(res, "bottleneck", st.dumbbell_warmup)
            sims.append(s)
            per_seed.append({"aqm": aqm, "seed": seed, **s})
            if seed == st.dumbbell_seeds[0]:
                traces[aqm] = res.link("bottleneck").queue_packets
        fl = fluid_run(aqm, design, dd)
        fluid[aqm] = fl
        fs = _fluid_stats(fl, design.C, st.dumbbell_warmup)
        for q in ("queue_mean", "queue_std", "utilization", "marking"):
            sim_mean = sum(s[q] for s in sims) / len(sims)
            rows.append(_row("fluid-dumbbell", aqm, q, fs[q], sim_mean))
    pd.DataFrame(per_seed).to_csv(out / "dumbbell_runs.csv", index=False)
    _fig_dumbbell(out / "fig_fluid_dumbbell.png", traces, fluid, design, st)
    sections.append(_section_dumbbell(design, st, rows))

    # ----- part 2 -----------------------------------------------------------
    sections.append(
        _part_gateway(out, st, red_path, avqred_path, gateway_samples, folders, gw_runs, rows)
    )

    # ----- part 3 -----------------------------------------------------------
    sections.append(_part_fig21(out, st.fig21_quick, rows, workers))

    df = pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
    df.to_csv(out / "agreement.csv", index=False)
    table_md = _markdown(rows)
    write_text(out / "agreement.md", table_md)
    write_json(out / "design.json", {"dumbbell": asdict(design), "settings": asdict(st)})

    cmd = f"satqm reproduce models{' --quick' if quick else ''} --out {out}"
    report = (
        "# The papers' models beside packet-level simulation\n\n"
        f"Command: `{cmd}`. Dumbbell: {dd:g} s per run, seeds "
        f"{', '.join(map(str, st.dumbbell_seeds))}, statistics after {st.dumbbell_warmup:g} s. "
        f"Gateway: {gd:g} s, seed {st.gateway_seed}, statistics after {gw:g} s.\n\n"
        "## Agreement (all parts)\n\n"
        f"{table_md}\n"
        "`model` is the fluid model or the ODE, `simulation` the packet-level runs (mean "
        "over seeds); `relative_difference` = (model - simulation) / |simulation|. Queues "
        "in packets, marking as a fraction of arriving packets (model: mean p).\n\n"
        + "\n".join(sections)
    )
    write_text(out / "REPORT.md", report)
    return out / "REPORT.md"


def _section_dumbbell(d: DumbbellDesign, st: Settings, rows: list[dict[str, Any]]) -> str:
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
    pi_near = all(abs(pi_m[side] - d.q_ref) <= 0.05 * d.q_ref for side in ("model", "simulation"))
    pi_line = (
        f"- PI: mean queue {pi_m['model']:.1f} (fluid) and {pi_m['simulation']:.1f} (packets) "
        f"packets, q_ref = {d.q_ref:g}"
        + (": the integral action holds both at q_ref." if pi_near else ".")
        + f" Standard deviation {pi_s['model']:.2g} (fluid) and {pi_s['simulation']:.1f} "
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


def _part_gateway(
    out: Path,
    st: Settings,
    red_path: ScenarioSource,
    avqred_path: ScenarioSource,
    samples_source: Any,
    folders: dict[str, Path],
    gw_runs: dict[str, str],
    rows: list[dict[str, Any]],
) -> str:
    import satqm
    from satqm.models import GatewaySeries, gateway_samples_from_results, simulate_avqred_ode

    gd, gw = st.gateway_duration, st.gateway_warmup
    if samples_source is None:
        noaqm = satqm.Results.load(folders[gw_runs["no-aqm"]])
        samples_source = gateway_samples_from_results(noaqm)
        samples_source.to_csv(out / "gateway_samples.csv", index=False)
        source_text = (
            f"measured in a run of `{_label(red_path, 'red 4')}` without its `[[aqm]]` "
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
    sims = {v: satqm.Results.load(folders[gw_runs[v]]) for v in ("red", "avqred")}
    stats: dict[str, dict[str, dict[str, float]]] = {}
    for v in ("red", "avqred"):
        m = ode[v].stats("q", gw)
        ts = sims[v].link("transmit")
        w = ts[ts.index > gw].queue_packets
        s = {"mean": float(w.mean()), "std": float(w.std(ddof=0))}
        stats[v] = {"model": m, "simulation": s}
        rows.append(_row("avqred-ode-gateway", v, "queue_mean", m["mean"], s["mean"]))
        rows.append(_row("avqred-ode-gateway", v, "queue_std", m["std"], s["std"]))
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
            _row(
                "avqred-ode-gateway",
                "avqred-vs-red",
                f"queue_{k}_improvement_pct",
                improvement["model"][k],
                improvement["simulation"][k],
            )
        )
    _fig_gateway(out / "fig_avqred_ode.png", ode, sims, stats, improvement, gw, gd)
    if samples is not None:
        _fig_series(out / "fig_gateway_series.png", samples, series)
    pr, pa = params["red"], params["avqred"]
    holds_model = improvement["model"]["mean"] > 0 and improvement["model"]["std"] > 0
    holds_sim = improvement["simulation"]["mean"] > 0 and improvement["simulation"]["std"] > 0
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
    red_label, avqred_label = _label(red_path, "red 4"), _label(avqred_path, "avqred")
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
The chapter's claim, a lower and steadier transmit queue with AVQRED,
**{"holds" if holds_model else "does not hold"}** in the model and
**{"holds" if holds_sim else "does not hold"}** in the packet runs here.

{notes}
Figure: `fig_avqred_ode.png` (transmit queue of the model and the packet run for
RED and AVQRED, and the mean/std bars).

Other gateway scenarios: `reproduce(..., red_scenario=..., avqred_scenario=...)`.
"""


def _show(path: Path) -> str:
    """A path relative to the repository when it is inside it."""
    try:
        return path.resolve().relative_to(_REPO).as_posix()
    except ValueError:
        return str(path)


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


def _part_fig21(
    out: Path, quick: bool, rows: list[dict[str, Any]], workers: int | None = None
) -> str:
    """Fig. 21 of the parallel-VQ paper via :func:`satqm.experiments._pvq_fig21.fig21`:
    its report quoted, its mean/std per N (Markov chain with the measured
    window against the simulated RED queue) added to the agreement rows."""
    from ._pvq_fig21 import fig21

    head = "## 3. Parallel-VQ paper, Fig. 21: queue distribution, Markov chain vs simulation\n\n"
    folder = out / "fig21"
    folder.mkdir(parents=True, exist_ok=True)
    table = fig21(folder, quick=quick, workers=workers)
    for n in sorted(set(table.N)):
        sim = table[(table.N == n) & (table.distribution == "empirical")].iloc[0]
        for dist in ("markov_chain", "gaussian"):
            mod = table[(table.N == n) & (table.distribution == dist) & (table.W_bar == "measured")]
            if len(mod):
                for q, col in (("queue_mean", "mean_pkts"), ("queue_std", "std_pkts")):
                    rows.append(
                        _row("pvq-fig21", f"red_tail-N{n}-{dist}", q,
                             float(mod.iloc[0][col]), float(sim[col]))
                    )
    gaps = [
        (int(r["aqm"].split("-")[1][1:]), r["simulation"] - r["model"])
        for r in rows
        if r["part"] == "pvq-fig21" and r["quantity"] == "queue_mean"
        and r["aqm"].endswith("markov_chain")
    ]
    if gaps and all(g < 0 for _, g in gaps):
        gap = (
            "The simulated RED queue sits below the chain's mean (by "
            + ", ".join(f"{-g:.0f} packets at N = {n}" for n, g in gaps)
            + "); docs/aqm.md (RED+Tail, Fig. 21) discusses why: the window the flows "
            "keep in flight is smaller than their mean congestion window (timeouts, "
            "fast recovery), and sigma depends on how it is measured.\n"
        )
    else:
        gap = ""
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    listing = "\n".join(f"- `fig21/{f}`" for f in files)
    text = (folder / "fig21.md").read_text(encoding="utf-8")
    for f in files:  # links relative to REPORT.md
        text = text.replace(f"]({f})", f"](fig21/{f})")
    # Its own title becomes a sub-heading of this part.
    text = re.sub(r"^# ", "### ", text, count=1, flags=re.M)
    return (
        head
        + "Written by `satqm.experiments._pvq_fig21.fig21` (runs in `fig21/runs/`):\n\n"
        + f"{listing}\n\n{text}\n"
        + gap
    )


# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------


def _save(fig: Any, path: Path) -> None:
    tmp = path.with_name(path.stem + ".tmp" + path.suffix)
    fig.savefig(tmp)
    os.replace(tmp, path)


def _new_figure(w: float, h: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def _fig_dumbbell(
    path: Path, traces: dict[str, Any], fluid: dict[str, Any], d: DumbbellDesign, st: Settings
) -> None:
    fig = _new_figure(9, 6)
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
    _save(fig, path)


def _fig_gateway(
    path: Path,
    ode: dict[str, Any],
    sims: dict[str, Any],
    stats: dict[str, dict[str, dict[str, float]]],
    improvement: dict[str, dict[str, float]],
    warmup: float,
    duration: float,
) -> None:
    import numpy as np

    fig = _new_figure(10, 8)
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
    _save(fig, path)


def _fig_series(path: Path, samples: Any, series: Any) -> None:
    import numpy as np

    fig = _new_figure(9, 5)
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
    _save(fig, path)


def tiny_settings() -> Settings:
    """Very short runs, for tests."""
    return replace(
        QUICK,
        dumbbell_duration=20.0,
        dumbbell_warmup=5.0,
        gateway_duration=30.0,
        gateway_warmup=10.0,
        gateway_fit_points=100,
    )
