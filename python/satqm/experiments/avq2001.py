"""Kunniyur & Srikant, "Analysis and design of an adaptive virtual queue (AVQ)
algorithm for active queue management", SIGCOMM 2001 (papers/002_...).

Experiment 1 (section 3): 180 FTP flows over a 10 Mbit/s link that marks
with AVQ (gamma 0.98, alpha 0.15, 100-packet buffer, 1,000-byte packets,
round-trip propagation delays in 40-130 ms), short flows of 20 packets
arriving at 30 per second from t = 100 s. The paper reports the queue's
mean and standard deviation before and after the short flows (Table 1) and
plots the queue and the virtual capacity (Figures 1 and 2). It then
compares AVQ with RED, REM, PI and GKVQ, marking and dropping; that part of
the paper is cut off in our copy, so the comparison here reports our
numbers with the paper's qualitative claims.

The design rules are the library's (``satqm.models``), not typed in: AVQ's
alpha is checked against Theorem 1's bound, and PI's gains come from the
Hollot et al. design rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ._runner import (
    Run,
    before_aqm,
    fmt_ci,
    mean_ci,
    packaged_scenario,
    run_all,
    set_run,
    write_json,
    write_text,
)

#: Shipped with the package; `scenarios/` at the repository root links here.
SCENARIO = "scenarios/avq2001/experiment1.toml"

#: Table 1 of the paper: queue length (packets), mean and standard deviation.
PAPER_TABLE1 = {"before": (13.11, 10.39), "after": (20.44, 15.17)}

#: Measurement windows (s): before the short flows, after their transient.
BEFORE = (50.0, 100.0)
AFTER_START = 120.0

LINK_PKTS_PER_S = 10e6 / (8 * 1000)  # 10 Mbit/s of 1,000-byte packets
MAX_RTT_S = 0.21  # the paper's design delay: 130 ms + 100 packets / C
N_FTP = 180
GAMMA = 0.98
ALPHA = 0.15


def scenario_text() -> str:
    return packaged_scenario(SCENARIO)


@dataclass(frozen=True)
class Design:
    """Parameters the library computes for this experiment."""

    avq_alpha_max: float
    pi_a: float
    pi_b: float
    pi_fs: float
    pi_q_ref: float


def design() -> Design:
    from satqm.models.avq import avq_alpha_max
    from satqm.models.pi import pi_design, pi_discretize

    alpha_max = avq_alpha_max(C=LINK_PKTS_PER_S, gamma=GAMMA, d=MAX_RTT_S, N=N_FTP)
    fs = 160.0
    a, b = pi_discretize(pi_design(LINK_PKTS_PER_S, N_FTP, MAX_RTT_S), fs)
    return Design(avq_alpha_max=alpha_max, pi_a=a, pi_b=b, pi_fs=fs, pi_q_ref=20.0)


def aqm_tables(d: Design) -> dict[str, str]:
    """The ``[[aqm]]`` table of each scheme (mode added per run)."""
    return {
        "avq": f"kind = \"avq\"\ngamma = {GAMMA}\nalpha = {ALPHA}\nmean_packet_size = 1000",
        "gkvq": f"kind = \"gkvq\"\ngamma = {GAMMA}\nmean_packet_size = 1000",
        "red": "kind = \"red\"\nmin_th = 20\nmax_th = 60\nmax_p = 0.1\nw_q = 0.002\n"
        "mean_packet_size = 1000",
        "rem": "kind = \"rem\"\ngamma = 0.001\nalpha = 0.1\nphi = 1.001\nq_ref = 20\n"
        "mean_packet_size = 1000",
        "pi": f"kind = \"pi\"\na = {d.pi_a!r}\nb = {d.pi_b!r}\nsample_rate = {d.pi_fs}\n"
        f"q_ref = {d.pi_q_ref}",
    }


def with_aqm(text: str, table: str, mode: str, duration: float | None = None) -> str:
    """The experiment's scenario with its ``[[aqm]]`` replaced."""
    out = f"{before_aqm(text)}[[aqm]]\nat = \"bottleneck\"\nmode = \"{mode}\"\n{table}\n"
    return set_run(out, duration=duration)


def window_stats(res: Any, lo: float, hi: float) -> dict[str, float]:
    """Bottleneck figures over samples in (lo, hi]."""
    ts = res.link("bottleneck")
    w = ts[(ts.index > lo) & (ts.index <= hi)]
    arrivals = float(w.arrivals.sum())
    return {
        "queue_mean": float(w.queue_packets.mean()),
        "queue_std": float(w.queue_packets.std(ddof=0)),
        "utilization": float(w.utilization.mean()),
        "loss_pct": 100.0 * float(w.drops.sum()) / arrivals if arrivals else math.nan,
        "mark_pct": 100.0 * float(w.marks.sum()) / arrivals if arrivals else math.nan,
        # AVQ's virtual capacity; the other AQMs have none.
        "vcap_mbps": float(w["aqm_vcap_bps"].mean()) / 1e6 if "aqm_vcap_bps" in w else math.nan,
    }


def reproduce(
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Run the experiment and the comparison; write tables, figures and REPORT.md.

    ``quick``: one seed and 160 s instead of three seeds and 200 s.
    Returns the path of REPORT.md.
    """
    import satqm

    out = Path(out)
    seeds = [1] if quick else [1, 2, 3]
    duration = 160.0 if quick else 200.0
    d = design()
    tables = aqm_tables(d)
    base = scenario_text()
    runs = [
        Run(f"{name}-{mode}-s{seed}", with_aqm(base, table, mode, duration), seed)
        for name, table in tables.items()
        for mode in ("mark", "drop")
        for seed in seeds
    ]
    folders = run_all(runs, out / "runs", workers=workers, progress=progress)

    rows: list[dict[str, Any]] = []
    medians: list[float] = []  # the queue's median after the short flows, per run
    for r in runs:
        res = satqm.Results.load(folders[r.name])
        name, mode, _ = r.name.split("-")
        before = window_stats(res, *BEFORE)
        transient = window_stats(res, BEFORE[1], AFTER_START)
        after = window_stats(res, AFTER_START, duration)
        s = res.summary()
        medians.append(float(_queue(res, AFTER_START, duration).median()))
        rows.append(
            {
                "aqm": name,
                "mode": mode,
                "seed": r.seed,
                **{f"before_{k}": v for k, v in before.items()},
                **{f"transient_{k}": v for k, v in transient.items()},
                **{f"after_{k}": v for k, v in after.items()},
                "short_flow_time_s": s.get("short_flow_time_mean_s", math.nan),
                "timeouts": s.get("timeouts_total", math.nan),
            }
        )

    import pandas as pd

    df = pd.DataFrame(rows)
    df.to_csv(out / "runs.csv", index=False)

    # Table 1: AVQ, marking.
    avq = df[(df.aqm == "avq") & (df["mode"] == "mark")]
    t1 = {}
    for when in ("before", "after"):
        for stat in ("mean", "std"):
            t1[(when, stat)] = mean_ci(list(avq[f"{when}_queue_{stat}"]))
    table1 = [
        "| queue (packets) | before short flows: paper | before: satqm | "
        "after short flows: paper | after: satqm |",
        "|---|---:|---:|---:|---:|",
    ]
    for i, stat in enumerate(("mean", "std")):
        label = "average" if stat == "mean" else "standard deviation"
        table1.append(
            f"| {label} | {PAPER_TABLE1['before'][i]:.2f} | {fmt_ci(*t1[('before', stat)])} | "
            f"{PAPER_TABLE1['after'][i]:.2f} | {fmt_ci(*t1[('after', stat)])} |"
        )
    table1_md = "\n".join(table1) + "\n"
    write_text(out / "table1.md", table1_md)

    # The comparison, after the short flows arrive.
    comp = ["| AQM | mode | utilization | loss % | marks % | queue mean | queue std | "
            "short-flow time s |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    agg: dict[tuple[str, str], dict[str, float]] = {}
    for (name, mode), g in df.groupby(["aqm", "mode"], sort=False):
        v = {
            "util": mean_ci(list(g.after_utilization))[0],
            "loss": mean_ci(list(g.after_loss_pct))[0],
            "mark": mean_ci(list(g.after_mark_pct))[0],
            "qm": mean_ci(list(g.after_queue_mean))[0],
            "qs": mean_ci(list(g.after_queue_std))[0],
            "sft": mean_ci(list(g.short_flow_time_s))[0],
        }
        agg[(str(name), str(mode))] = v
        comp.append(
            f"| {name.upper()} | {mode} | {v['util']:.3f} | {v['loss']:.2f} | {v['mark']:.2f} | "
            f"{v['qm']:.1f} | {v['qs']:.1f} | {v['sft']:.2f} |"
        )
    comparison_md = "\n".join(comp) + "\n"
    write_text(out / "comparison.md", comparison_md)

    _figures(out, satqm.Results.load(folders[f"avq-mark-s{seeds[0]}"]), duration)

    # Claims (docs/reproductions.md#verdicts), each judged seed by seed.
    startup, settled = _startup(
        [satqm.Results.load(folders[f"avq-mark-s{s}"]) for s in seeds], avq
    )
    claims = _claims(df.assign(after_queue_median=medians), tables, seeds, duration, settled)

    report = f"""# AVQ (Kunniyur & Srikant, SIGCOMM 2001): Experiment 1 in satqm

Command: `satqm reproduce avq2001{' --quick' if quick else ''} --out {out}`
({len(seeds)} seed(s): {', '.join(map(str, seeds))}; {duration:g} s simulated per run;
windows: before = {BEFORE[0]:g}-{BEFORE[1]:g} s, after = {AFTER_START:g}-{duration:g} s).

Scenario: `scenarios/avq2001/experiment1.toml`. Design rules from `satqm.models`:
AVQ alpha = {ALPHA} against Theorem 1's bound alpha* = {d.avq_alpha_max:.3f}
(C = 1250 packets/s, gamma = {GAMMA}, d = {MAX_RTT_S} s, N = {N_FTP}); PI from the
Hollot et al. rule (N- = {N_FTP}, R+ = {MAX_RTT_S} s) at {d.pi_fs:g} Hz:
a = {d.pi_a:.4e}, b = {d.pi_b:.4e}, q_ref = {d.pi_q_ref:g} packets.

## Table 1: AVQ queue before and after the short flows

{table1_md}
## Comparison after the short flows (means over seeds)

{comparison_md}
RED: min_th 20, max_th 60, max_p 0.1, w_q 0.002. REM: gamma 0.001, alpha 0.1,
phi 1.001, q_ref 20. GKVQ: gamma 0.98. The paper's comparison tables are cut
off in our copy, so only its stated conclusions are checked.

{startup}
## The paper's claims here

Criteria: docs/reproductions.md#verdicts.

{chr(10).join(claims)}

## What differs from the paper, and why

- ns-2's TCP details the paper does not state are set to ns-2's defaults of
  the time (initial window 1, no delayed ACKs, 200 ms minimum RTO, no
  handshake). With ECN, a window of one segment that keeps receiving echoes
  backs off exponentially, as ns-2's agents do (docs/engine.md); without
  that, 180 flows cannot go below one packet per round trip and no marking
  scheme could hold the queue.
- Round-trip propagation delays are drawn per host pair from 40-130 ms;
  the paper does not say how they were spread.
- The start-up transient and the queue after the short flows: see
  docs/avq2001.md.
- Figures: `fig1_queue.png` (queue, seed {seeds[0]}) and `fig2_vcap.png` (AVQ's virtual
  capacity).
"""
    write_text(out / "REPORT.md", report)
    write_json(out / "design.json", d.__dict__)
    return out / "REPORT.md"

#: The paper's "small" queue: "Except during transients introduced by load
#: changes, the queue lengths are small, less than 20 packets."
SMALL_QUEUE = 20.0
#: Stretches (s) over which the start-up transient's end is found.
SETTLE_STEP = 10.0


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _queue(res: Any, lo: float, hi: float) -> Any:
    q = res.link("bottleneck").queue_packets
    return q[(q.index > lo) & (q.index <= hi)]


def _claims(df: Any, tables: dict[str, str], seeds: list[int], duration: float,
            settled: str) -> list[str]:
    """The paper's claims, one verdict line each (values per seed);
    ``settled`` says what the queue is once the start-up transient is over."""
    from . import _verdict as V

    def col(name: str, mode: str, c: str) -> list[float]:
        g = df[(df.aqm == name) & (df["mode"] == mode)].sort_values("seed")
        return [float(x) for x in g[c]]

    def best_other(mode: str, c: str) -> list[float]:
        """Per seed, the lowest value among the other schemes."""
        return [min(col(n, mode, c)[i] for n in tables if n != "avq") for i in range(len(seeds))]

    out = []
    for when, i, label in (("before", 0, "mean"), ("before", 1, "standard deviation"),
                           ("after", 0, "mean"), ("after", 1, "standard deviation")):
        stat = "mean" if i == 0 else "std"
        window = f"{BEFORE[0]:g}-{BEFORE[1]:g} s" if when == "before" else (
            f"{AFTER_START:g}-{duration:g} s")
        v = V.match(col("avq", "mark", f"{when}_queue_{stat}"), PAPER_TABLE1[when][i], V.QUEUE)
        out.append(V.window(window, v).line(
            f"(Table 1) AVQ marking: the queue's {label} {when} the short flows is "
            f"{PAPER_TABLE1[when][i]:.2f} packets"))
    before, after = col("avq", "mark", "before_queue_mean"), col("avq", "mark", "after_queue_mean")
    transient = col("avq", "mark", "transient_queue_mean")
    util = col("avq", "mark", "after_utilization")
    out.append(V.match(util, GAMMA, V.SHARE, what=f"gamma = {GAMMA}", name="utilization").line(
        f"(Sec. 3) AVQ keeps the link's utilization near gamma = {GAMMA} "
        f"({AFTER_START:g}-{duration:g} s)"))
    out.append(V.all_of(
        V.window(f"{BEFORE[1]:g}-{AFTER_START:g} s against {BEFORE[0]:g}-{BEFORE[1]:g} s",
                 V.above(transient, before, V.QUEUE)),
        V.window(f"{AFTER_START:g}-{duration:g} s, median",
                 V.bound(col("avq", "mark", "after_queue_median"), SMALL_QUEUE, V.QUEUE,
                         below=True, level_text="the paper's \"less than 20 packets\"")),
    ).line("(Fig. 1) at 100 s the queue jumps up because of the short flows, then the "
           "system stabilizes and the queue is small once again"))
    out.append(V.window(
        f"{AFTER_START:g}-{duration:g} s against {BEFORE[0]:g}-{BEFORE[1]:g} s",
        V.above(after, before, V.QUEUE),
    ).line("(Table 1) the queue is longer after the short flows than before "
           "(13.11 -> 20.44 packets)") + (
        f"\n  The {BEFORE[0]:g}-{BEFORE[1]:g} s window holds the end of the start-up "
        f"transient (above; {settled}). With the short flows AVQ's virtual capacity "
        f"settles lower ({_mean(col('avq', 'mark', 'after_vcap_mbps')):.2f} Mbit/s against "
        f"{_mean(col('avq', 'mark', 'before_vcap_mbps')):.2f} before)."))
    drop_q = col("avq", "drop", "after_queue_mean")
    out.append(V.below(drop_q, best_other("drop", "after_queue_mean"), V.QUEUE,
                       names=("AVQ", "the lowest other")).line(
        "(Sec. 3) when the link drops instead of marking, AVQ has a smaller queue than "
        "the other schemes") + "\n  Queue means (drop mode): " + ", ".join(
        f"{n.upper()} {_mean(col(n, 'drop', 'after_queue_mean')):.1f}"
        for n in tables) + f"; AVQ's utilization is then "
        f"{_mean(col('avq', 'drop', 'after_utilization')):.2f} with "
        f"{_mean(col('avq', 'drop', 'after_loss_pct')):.0f} % loss: 180 flows "
        "sharing 1,250 packets/s need less than one packet per round trip, which drops "
        "enforce only through timeouts.")
    out.append(V.all_of(
        V.match(util, GAMMA, V.SHARE, what=f"gamma = {GAMMA}", name="utilization"),
        V.not_above(col("avq", "mark", "after_loss_pct"), best_other("mark", "after_loss_pct"),
                    V.LOSS, names=("AVQ", "the lowest other")),
    ).line("(Sec. 3) with marking, AVQ achieves high utilization and low packet loss")
        + "\n  Loss % (mark mode): " + ", ".join(
        f"{n.upper()} {_mean(col(n, 'mark', 'after_loss_pct')):.2f}" for n in tables)
        + ".")
    return out


def _startup(results: list[Any], avq: Any) -> tuple[str, str]:
    """The report's paragraph on the start-up transient of AVQ marking (the
    180 flows start together, and the queue stays high until the virtual
    capacity has come down from gamma C), and a phrase on the queue in the
    rest of Table 1's "before" window."""
    import numpy as np

    rows = []
    for res in results:
        q = res.link("bottleneck").queue_packets
        settle = BEFORE[1]
        for lo in np.arange(0.0, BEFORE[1], SETTLE_STEP):
            w = q[(q.index > lo) & (q.index <= lo + SETTLE_STEP)]
            if len(w) and float(w.mean()) < SMALL_QUEUE:
                settle = float(lo)
                break
        start = q[q.index <= settle]
        vcap = res.link("bottleneck").aqm_vcap_bps
        rows.append({
            "settle": settle,
            "mean": float(start.mean()),
            "max": float(start.max()),
            "above": float((start >= SMALL_QUEUE).mean()),
            "tail": float(_queue(res, BEFORE[0], max(settle, BEFORE[0])).mean())
            if settle > BEFORE[0] else float("nan"),
            "rest": float(_queue(res, max(settle, BEFORE[0]), BEFORE[1]).mean()),
            "vcap_end": float(vcap[vcap.index <= settle].iloc[-1]) / 1e6,
        })
    n = len(rows)

    def m(k: str) -> float:
        return sum(r[k] for r in rows) / n

    marks = float(avq.before_mark_pct.mean())
    text = (
        f"## Start-up transient (AVQ marking)\n\n"
        f"The 180 FTP flows start together. The queue stays high until AVQ's virtual "
        f"capacity has come down from gamma C = {GAMMA * 10:g} Mbit/s to where its marks "
        f"hold 180 flows at about one packet per round trip: over 0-{m('settle'):.0f} s "
        f"(until the first {SETTLE_STEP:g} s stretch with a mean below "
        f"{SMALL_QUEUE:g} packets{', mean over seeds' if n > 1 else ''}) the queue "
        f"averages {m('mean'):.1f} packets (highest {m('max'):.0f}, the buffer is 100), "
        f"at or above {SMALL_QUEUE:g} packets in {100 * m('above'):.0f} % of the samples, "
        f"and the virtual capacity reaches {m('vcap_end'):.2f} Mbit/s; "
        f"{marks:.0f} % of the arriving packets are marked over "
        f"{BEFORE[0]:g}-{BEFORE[1]:g} s. "
    )
    if m("settle") > BEFORE[0]:
        text += (
            f"The window of Table 1's \"before\" column, {BEFORE[0]:g}-{BEFORE[1]:g} s, "
            f"holds the last {m('settle') - BEFORE[0]:.0f} s of it: the queue averages "
            f"{m('tail'):.1f} packets there and {m('rest'):.1f} over the rest of the "
            f"window. "
        )
    text += (
        "The paper allows transients at load changes (\"Except during transients "
        "introduced by load changes, the queue lengths are small\") and does not say how "
        "long its start-up took nor over which stretch Table 1's \"before\" column is "
        "taken.\n"
    )
    settled = (f"over {m('settle'):.0f}-{BEFORE[1]:g} s the queue averages {m('rest'):.1f} "
               "packets")
    return text, settled


def _figures(out: Path, res: Any, duration: float) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ts = res.link("bottleneck")
    for fname, col, label, scale in (
        ("fig1_queue.png", "queue_packets", "queue length (packets)", 1.0),
        ("fig2_vcap.png", "aqm_vcap_bps", "AVQ virtual capacity (Mbit/s)", 1e-6),
    ):
        fig = Figure(figsize=(8, 3.2), dpi=110)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.plot(ts.index, ts[col] * scale, lw=0.7)
        ax.axvline(100, color="grey", ls="--", lw=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(label)
        ax.set_xlim(0, duration)
        ax.set_title("AVQ, 180 FTP flows; short flows from 100 s", fontsize=10)
        fig.tight_layout()
        tmp = out / (fname + ".tmp.png")
        fig.savefig(tmp)
        tmp.replace(out / fname)
