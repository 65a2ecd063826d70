"""Byun & Baras, "Adaptive Virtual Queue Random Early Detection in Satellite
Networks" (book chapter, papers/000_...; conference version, papers/003_...).

The emulated IP-over-satellite system (scenarios/avqred/): 400 HTTP
connections from 60 servers to 200 clients through a hub gateway whose PEP
splits every connection, a 20 Mbit/s satellite downlink behind the
gateway's transmit queue. Table 2's AQM settings are run at the gateway with
Table 1's placement: RED 1-4 watch the transmit queue and drop at the
receive queue (before the PEP); AVQ and AVQRED watch and drop at the receive
queue. Both parameter sets: the chapter's 1,400-byte packets (59-packet
target) and the conference version's 1,500-byte packets (55-packet target).

Written: Table 3 (utilization mean and standard deviation) and Table 4
(total drops) beside the paper's numbers; the transmit queue of RED 4, AVQ
and AVQRED (whole run and the 50-150 s zoom); the drop pattern over the
first 1,000 and 3,000 packets arriving at the receive queue; the drop
clustering and window-synchronization measures; a sensitivity run of
AVQRED's virtual capacity; REPORT.md with each claim checked.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable

from . import _avqred_variants as V
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

#: Parameter sets: scenario file, average downlink packet (bytes).
SETS: dict[str, tuple[str, int]] = {
    "chapter": ("scenarios/avqred/chapter.toml", 1400),
    "conference": ("scenarios/avqred/conference.toml", 1500),
}

#: Table 2: RED's (w_q, max_p); thresholds 60 and 120 for RED and AVQRED.
RED = {"red1": (0.02, 0.5), "red2": (0.05, 0.7), "red3": (0.10, 0.5), "red4": (0.10, 0.7)}
MIN_TH, MAX_TH = 60, 120
LINK_BPS = 20e6
AVQ_BUFFER_BYTES = 123_750  # 20 Mbit/s x 33 ms x 1.5 (section 6.2)
AQMS = ("red1", "red2", "red3", "red4", "avq", "avqred")
LABEL = {
    "red1": "RED 1",
    "red2": "RED 2",
    "red3": "RED 3",
    "red4": "RED 4",
    "avq": "AVQ",
    "avqred": "AVQRED",
}

#: Table 3 (Mbit/s, kbit/s) and Table 4 (drops in 20 minutes); the two
#: versions of the paper print the same numbers.
PAPER_TABLE3 = {
    "red1": (19.8, 135),
    "red2": (19.8, 117),
    "red3": (19.8, 108),
    "red4": (19.8, 107),
    "avq": (19.5, 49),
    "avqred": (19.7, 47),
}
PAPER_TABLE4 = {
    "red1": 486_932,
    "red2": 491_798,
    "red3": 492_025,
    "red4": 492_999,
    "avq": 484_639,
    "avqred": 484_582,
}

#: AVQRED virtual capacity as a fraction of the link, for the sensitivity runs.
SENSITIVITY = (0.99, 0.98)

#: Further sensitivity runs (conference set, first seed): name -> (AQM, what
#: changes, description). Each varies one modelling choice the papers leave
#: open; ``satqm reproduce avqred`` reports them beside the main runs.
VARIANTS: dict[str, tuple[str, str, str]] = {
    "avq-accepted": (
        "avq",
        "count_rejected",
        "AVQ, C' depleted only by accepted arrivals (`count_rejected = false`)",
    ),
    "red4-rto200": ("red4", "min_rto", "RED 4, servers' minimum RTO 200 ms (Linux)"),
    "avqred-rto200": ("avqred", "min_rto", "AVQRED, servers' minimum RTO 200 ms (Linux)"),
}


def scenario_text(which: str) -> str:
    return packaged_scenario(SETS[which][0])


def aqm_table(
    aqm: str, packet_bytes: int, capacity_fraction: float = 1.0, count_rejected: bool = True
) -> str:
    """The ``[[aqm]]`` table of one of Table 2's settings (``count_rejected``:
    AVQ's, see docs/aqm.md)."""
    if aqm in RED:
        w_q, max_p = RED[aqm]
        return (
            '[[aqm]]\nkind = "red"\nat = "receive"\nmonitor = "transmit"\n'
            f"min_th = {MIN_TH}\nmax_th = {MAX_TH}\nw_q = {w_q}\nmax_p = {max_p}\n"
            f"mean_packet_size = {packet_bytes}\n"
        )
    if aqm == "avq":
        # gamma 100 %, B = 123,750 bytes; alpha "arbitrary" in the paper: the
        # AVQ paper's 0.15. C is the space link's 20 Mbit/s.
        return (
            '[[aqm]]\nkind = "avq"\nat = "receive"\nmonitor = "receive"\n'
            f'gamma = 1.0\nalpha = 0.15\nvq_limit = {AVQ_BUFFER_BYTES}\ncapacity = "20 Mbps"\n'
            + ("" if count_rejected else "count_rejected = false\n")
        )
    if aqm == "avqred":
        cap = f"{LINK_BPS * capacity_fraction:.0f} bps"
        return (
            '[[aqm]]\nkind = "avqred"\nat = "receive"\nmonitor = "receive"\n'
            f"min_th = {MIN_TH}\nmax_th = {MAX_TH}\npacket_bytes = {packet_bytes}\n"
            f'min_capacity = "{cap}"\nmax_capacity = "{cap}"\n'
        )
    raise KeyError(aqm)


def with_aqm(
    text: str, table: str, name: str, duration: float | None = None, warmup: float | None = None
) -> str:
    """The scenario with its ``[[aqm]]`` table replaced (and its name, duration, warmup)."""
    return set_run(before_aqm(text) + table, name=name, duration=duration, warmup=warmup)


def run_stats(res: Any, start: float, packet_bytes: int) -> dict[str, float]:
    """Figures of one run over the measurement window (t > start)."""
    import numpy as np

    from satqm.analysis import drop_clustering, synchronization

    tx = res.link("transmit")
    tx = tx[tx.index > start]
    rx = res.link("receive")
    rx = rx[rx.index > start]
    span = float(tx.index.max() - start)
    q = tx.queue_packets.to_numpy(dtype=float)
    thr = tx.throughput_bps.to_numpy(dtype=float)
    drops = float(rx.drops.sum())
    clus = drop_clustering(res.drops, "receive", start_s=start, bin_s=0.1, window_s=1.0)
    web = res.flows[res.flows.kind == "web"].flow
    sync = synchronization(res.congestion, flows=web, start_s=start, window_s=1.0)
    cuts = res.congestion
    cuts = cuts[(cuts.time_s > start) & cuts.flow.isin(web)]
    s = res.summary()
    return {
        "throughput_mbps": float(thr.mean() / 1e6),
        "throughput_std_kbps": float(thr.std() / 1e3),
        "thr_below_95pct": float(np.mean(thr < 0.95 * LINK_BPS)),
        "utilization": float(tx.utilization.mean()),
        "tq_mean": float(q.mean()),
        "tq_std": float(q.std()),
        "tq_above_max_th": float(np.mean(q > MAX_TH)),
        "tq_below_min_th": float(np.mean(q < MIN_TH)),
        "tq_above_min_th": float(np.mean(q > MIN_TH)),
        "tq_at_cap": float(np.mean(q >= q.max())) if q.size else math.nan,
        "rq_mean": float(rx.queue_packets.mean()),
        "drops": drops,
        "drops_per_s": drops / span,
        "drops_20min": drops / span * 1200.0,
        "drop_pct": 100.0 * drops / float(rx.arrivals.sum()),
        "clustered_fraction": clus.clustered_fraction,
        "mean_run": clus.mean_run,
        "max_run": float(clus.max_run),
        "drop_dispersion": clus.dispersion,
        "sync_per_s_mean": sync.per_window_mean,
        "sync_per_s_p95": sync.per_window_p95,
        "sync_dispersion": sync.dispersion,
        "cuts_per_s": sync.cuts / span,
        "timeout_cut_fraction": float((cuts.kind == "timeout").mean()) if len(cuts) else math.nan,
        "tq_empty": float(np.mean(q == 0)),
        "births_per_s": float(s.get("web_births_per_s", math.nan)),
        "pages_completed": float(s.get("web_pages_completed", math.nan)),
        "wall_s": float(res.wall_time_s or math.nan),
        "packet_bytes": float(packet_bytes),
    }


def reproduce(
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    warmup: float = 200.0,
    measured: float | None = None,
) -> Path:
    """Run Table 2's settings on both parameter sets; write tables, figures, REPORT.md.

    Full: three seeds, 200 s of ramp-up then 20 simulated minutes measured.
    ``quick``: one seed, 200 s measured. ``warmup`` and ``measured`` (s)
    override the run's length (for tests and exploration: before 190 s not
    all 400 connections are open). Returns the path of REPORT.md.
    """
    import pandas as pd

    import satqm

    out = Path(out)
    seeds = [1] if quick else [1, 2, 3]
    if measured is None:
        measured = 200.0 if quick else 1200.0
    if not (warmup >= 0 and measured > 0):
        raise ValueError(f"need warmup >= 0 and measured > 0, got {warmup}, {measured}")
    duration = warmup + measured
    runs: list[Run] = []
    meta: dict[str, dict[str, Any]] = {}
    for which, (_, pkt) in SETS.items():
        base = scenario_text(which)
        for aqm in AQMS:
            for seed in seeds:
                name = f"{which}-{aqm}-s{seed}"
                text = with_aqm(
                    base, aqm_table(aqm, pkt), f"avqred-{which}-{aqm}", duration, warmup
                )
                runs.append(Run(name, text, seed))
                meta[name] = {
                    "set": which,
                    "aqm": aqm,
                    "seed": seed,
                    "capacity": 1.0,
                    "variant": "",
                }
    # Sensitivity of AVQRED to its virtual capacity (conference set, first seed).
    base = scenario_text("conference")
    for frac in SENSITIVITY:
        name = f"conference-avqred{round(frac * 100)}-s{seeds[0]}"
        text = with_aqm(
            base, aqm_table("avqred", 1500, frac), f"avqred-cap{frac:g}", duration, warmup
        )
        runs.append(Run(name, text, seeds[0]))
        meta[name] = {
            "set": "conference",
            "aqm": "avqred",
            "seed": seeds[0],
            "capacity": frac,
            "variant": "",
        }
    for variant, (aqm, change, _) in VARIANTS.items():
        name = f"conference-{variant}-s{seeds[0]}"
        table = aqm_table(aqm, 1500, count_rejected=change != "count_rejected")
        text = with_aqm(base, table, f"avqred-{variant}", duration, warmup)
        if change == "min_rto":
            text = re.sub(r"^\[tcp\]\n", '[tcp]\nmin_rto = "200 ms"\n', text, count=1, flags=re.M)
        runs.append(Run(name, text, seeds[0]))
        meta[name] = {
            "set": "conference",
            "aqm": aqm,
            "seed": seeds[0],
            "capacity": 1.0,
            "variant": variant,
        }
    # The gateway's modelling alternatives, every seed (the first cell is
    # Table 2's runs).
    cells = V.QUICK_CELLS if quick else V.CELLS
    for cell in cells[1:]:
        for aqm in V.AQMS:
            tag = "-".join(cell)
            text = V.apply(
                with_aqm(base, aqm_table(aqm, 1500), f"avqred-{aqm}-{tag}", duration, warmup), cell
            )
            for seed in seeds:
                name = f"conference-{aqm}-{tag}-s{seed}"
                runs.append(Run(name, text, seed))
                meta[name] = {
                    "set": "conference",
                    "aqm": aqm,
                    "seed": seed,
                    "capacity": 1.0,
                    "variant": "cell:" + V.cell_name(cell),
                }

    folders = run_all(runs, out / "runs", workers=workers, progress=progress)

    rows = []
    for r in runs:
        res = satqm.Results.load(folders[r.name])
        m = meta[r.name]
        rows.append({"run": r.name, **m, **run_stats(res, warmup, SETS[m["set"]][1])})
    df = pd.DataFrame(rows)
    df.to_csv(out / "runs.csv", index=False)
    main = df[(df.capacity == 1.0) & (df.variant == "")]

    def agg(which: str, aqm: str, col: str) -> tuple[float, float]:
        g = main[(main.set == which) & (main.aqm == aqm)]
        return mean_ci(list(g[col]))

    # Table 3 and Table 4 beside the paper.
    t3 = [
        "| AQM | paper: mean (Mbit/s) | paper: std (kbit/s) | "
        + " | ".join(f"{w}: mean (Mbit/s) | {w}: std (kbit/s)" for w in SETS)
        + " |",
        "|---|---:|---:|" + "---:|---:|" * len(SETS),
    ]
    t4 = [
        "| AQM | paper: drops in 20 min | "
        + " | ".join(f"{w}: drops in 20 min | {w}: drop %" for w in SETS)
        + " |",
        "|---|---:|" + "---:|---:|" * len(SETS),
    ]
    for aqm in AQMS:
        pm, ps = PAPER_TABLE3[aqm]
        cells3, cells4 = [], []
        for w in SETS:
            cells3.append(fmt_ci(*agg(w, aqm, "throughput_mbps")))
            cells3.append(fmt_ci(*agg(w, aqm, "throughput_std_kbps"), digits=0))
            d, h = agg(w, aqm, "drops_20min")
            cells4.append(f"{d:,.0f}" + ("" if math.isnan(h) else f" ± {h:,.0f}"))
            cells4.append(fmt_ci(*agg(w, aqm, "drop_pct"), digits=1))
        t3.append(f"| {LABEL[aqm]} | {pm} | {ps} | " + " | ".join(cells3) + " |")
        t4.append(f"| {LABEL[aqm]} | {PAPER_TABLE4[aqm]:,} | " + " | ".join(cells4) + " |")
    table3 = "\n".join(t3) + "\n"
    table4 = "\n".join(t4) + "\n"
    write_text(out / "table3.md", table3)
    write_text(out / "table4.md", table4)

    # Queue, drop clustering and synchronization.
    qc = [
        "| set | AQM | transmit queue mean | std | time > max_th | time < min_th | "
        "drops in runs ≥ 2 | mean run | longest run | drops/100 ms dispersion | "
        "connections cutting per s (mean / p95) | cut-count dispersion |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for w in SETS:
        for aqm in AQMS:
            v = {
                c: agg(w, aqm, c)[0]
                for c in (
                    "tq_mean",
                    "tq_std",
                    "tq_above_max_th",
                    "tq_below_min_th",
                    "clustered_fraction",
                    "mean_run",
                    "max_run",
                    "drop_dispersion",
                    "sync_per_s_mean",
                    "sync_per_s_p95",
                    "sync_dispersion",
                )
            }
            qc.append(
                f"| {w} | {LABEL[aqm]} | {v['tq_mean']:.1f} | {v['tq_std']:.1f} | "
                f"{100 * v['tq_above_max_th']:.0f} % | {100 * v['tq_below_min_th']:.0f} % | "
                f"{100 * v['clustered_fraction']:.1f} % | {v['mean_run']:.2f} | "
                f"{v['max_run']:.0f} | {v['drop_dispersion']:.1f} | "
                f"{v['sync_per_s_mean']:.1f} / {v['sync_per_s_p95']:.0f} | "
                f"{v['sync_dispersion']:.2f} |"
            )
    queue_md = "\n".join(qc) + "\n"
    write_text(out / "queue_and_drops.md", queue_md)

    first = df[(df.set == "conference") & (df.seed == seeds[0])]
    sens = first[(first.aqm == "avqred") & (first.variant == "")]
    sens = sens.sort_values("capacity", ascending=False)
    sv = [
        "| run | throughput (Mbit/s) | std (kbit/s) | transmit queue mean | std | "
        "drops/s | cuts by timeout |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def sens_row(label: str, r: Any) -> str:
        return (
            f"| {label} | {r.throughput_mbps:.2f} | {r.throughput_std_kbps:.0f} | "
            f"{r.tq_mean:.1f} | {r.tq_std:.1f} | {r.drops_per_s:.0f} | "
            f"{100 * r.timeout_cut_fraction:.0f} % |"
        )

    for _, r in sens.iterrows():
        sv.append(sens_row(f"AVQRED at {r.capacity * 20:g} Mbit/s ({100 * r.capacity:g} %)", r))
    for variant, (aqm, _, label) in VARIANTS.items():
        base_row = first[(first.aqm == aqm) & (first.variant == "") & (first.capacity == 1.0)]
        if aqm != "avqred":  # AVQRED at 100 % is listed above
            sv.append(sens_row(f"{LABEL[aqm]} (Table 2)", base_row.iloc[0]))
        sv.append(sens_row(label, first[first.variant == variant].iloc[0]))
    sens_md = "\n".join(sv) + "\n"
    write_text(out / "sensitivity.md", sens_md)
    cell_rows = _cells(df[df.set == "conference"], cells)
    variants_md = V.table(cell_rows)
    write_text(out / "variants.md", variants_md)

    for w in SETS:
        _figures(
            out,
            w,
            {
                a: satqm.Results.load(folders[f"{w}-{a}-s{seeds[0]}"])
                for a in ("red4", "avq", "avqred")
            },
            warmup,
            duration,
        )

    report = _report(
        out, quick, seeds, warmup, duration, main, agg, table3, table4, queue_md, sens_md, first
    )
    report += _variants_section(cell_rows, variants_md, seeds)
    write_text(out / "REPORT.md", report)
    write_json(
        out / "settings.json",
        {
            "seeds": seeds,
            "warmup_s": warmup,
            "duration_s": duration,
            "aqm_tables": {w: {a: aqm_table(a, SETS[w][1]) for a in AQMS} for w in SETS},
        },
    )
    return out / "REPORT.md"


def _cells(conf: Any, cells: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """RED 4 and AVQRED of each cell (the conference set's runs ``conf``)
    averaged over the seeds, with the claims judged in the cell seed by seed
    (a claim holds when it holds in every seed) and each seed's own verdict."""
    rows = []
    for i, cell in enumerate(cells):
        tag = "" if i == 0 else "cell:" + V.cell_name(cell)
        runs = conf[conf.aqm.isin(V.AQMS) & (conf.variant == tag) & (conf.capacity == 1.0)]
        mean = V.aggregate(runs)
        red, aq = mean.loc["red4"], mean.loc["avqred"]
        seeds = sorted(set(runs.seed))
        pick = {
            a: [runs[(runs.aqm == a) & (runs.seed == seed)].iloc[0] for seed in seeds]
            for a in V.AQMS
        }
        per_seed = [V.claims(r, q) for r, q in zip(pick["red4"], pick["avqred"])]
        judged = V.verdicts(pick["red4"], pick["avqred"])
        rows.append(
            {
                "cell": cell,
                "red4": red,
                "avqred": aq,
                "per_seed": per_seed,
                "claims": {k: v.holds for k, v in judged.items()},
                "distance": V.distance(red, aq, PAPER_TABLE3, PAPER_TABLE4),
            }
        )
    return rows


def _variants_section(rows: list[dict[str, Any]], table: str, seeds: list[int]) -> str:
    b = V.best(rows)
    base = rows[0]
    acct = "\n".join(f"- `{k}`: {v[1]}" for k, v in V.ACCOUNTING.items())
    which = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))}"
    note = (
        ""
        if len(seeds) == 1
        else "Each figure is the mean over the seeds ± its 95 % confidence half-width. "
        "A claim holds when it holds in every seed; after the verdict, the number of "
        "seeds in which it holds.\n\n"
    )
    return f"""
## The gateway's modelling alternatives (conference set, {which})

Each cell runs RED 4 and AVQRED with the servers' TCP profile, the PEP's
scheduling of its backbone and the byte accounting across the gateway
named in its first three columns (docs/gateway.md); `rfc/fifo/none` is
the packaged scenarios' (the runs above). Accounting:

{acct}

{table}
{note}The claims are judged within each cell, AVQRED against RED 4
(docs/reproductions.md#verdicts):

{V.criteria_list()}
"Distance" is the mean absolute log ratio of RED 4's and AVQRED's 100 ms
throughput std and drops to Tables 3 and 4 (0: the papers' numbers; 0.69:
a factor of 2 on average).

Under which variants each claim holds:

{V.holds_under(rows)}
Closest to the papers: `{V.cell_name(b["cell"])}` ({sum(b["claims"].values())} of
{len(V.CLAIMS)} claims, distance {b["distance"]:.2f}; the packaged
`{V.cell_name(base["cell"])}`: {sum(base["claims"].values())} claims, distance
{base["distance"]:.2f}). docs/gateway.md says which defaults the packaged
scenarios use and why.
"""


def _report(
    out: Path,
    quick: bool,
    seeds: list[int],
    warmup: float,
    duration: float,
    main: Any,
    agg: Callable[[str, str, str], tuple[float, float]],
    table3: str,
    table4: str,
    queue_md: str,
    sens_md: str,
    first: Any,
) -> str:
    from . import _verdict as Vd

    claims: list[str] = []

    def claim(text: str, verdict: Any, detail: str = "") -> None:
        claims.append(verdict.line(text) + (f"\n  {detail}" if detail else ""))

    def v(w: str, a: str, c: str) -> float:
        return agg(w, a, c)[0]

    def rows(w: str, a: str) -> list[Any]:
        g = main[(main.set == w) & (main.aqm == a)].sort_values("seed")
        return [r for _, r in g.iterrows()]

    def col(w: str, a: str, c: str, scale: float = 1.0) -> list[float]:
        return [float(r[c]) * scale for r in rows(w, a)]

    def lowest(w: str, aqms: Any, c: str, scale: float = 1.0) -> list[float]:
        """Per seed, the lowest value among ``aqms``."""
        per = [col(w, a, c, scale) for a in aqms]
        return [min(x) for x in zip(*per)]

    numbers: list[str] = []
    for w in SETS:
        judged = V.verdicts(rows(w, "red4"), rows(w, "avqred"))
        claim(
            f"[{w}] RED's transmit queue oscillates and exceeds its 60-120 region",
            judged["red_oscillates"],
            f"RED 4: mean {v(w, 'red4', 'tq_mean'):.1f}, std {v(w, 'red4', 'tq_std'):.1f} "
            f"packets; below 60 for {100 * v(w, 'red4', 'tq_below_min_th'):.0f} % of the "
            "100 ms samples.",
        )
        claim(
            f"[{w}] AVQRED keeps the transmit queue steady and lower than RED's",
            judged["avqred_steady"],
            f"AVQRED at the 200-packet cap {100 * v(w, 'avqred', 'tq_at_cap'):.0f} % of the "
            "time.",
        )
        claim(
            f"[{w}] AVQRED's utilization is within about 1 % of RED's, with a lower "
            "standard deviation",
            judged["utilization"],
            f"Paper 19.7 (47) and 19.8 (107). 100 ms samples below 19 Mbit/s: AVQRED "
            f"{100 * v(w, 'avqred', 'thr_below_95pct'):.1f} %, RED 4 "
            f"{100 * v(w, 'red4', 'thr_below_95pct'):.1f} % (`utilization_{w}.png`; the "
            "papers' Figs. 6-7 and 8: AVQRED \"maintains just enough data to fill up the "
            "20 Mbps pipe whereas RED's utilization is oscillatory and unstable\").",
        )
        others = [a for a in AQMS if a != "avqred"]
        claim(
            f"[{w}] AVQRED's drops are the least clustered",
            Vd.below(col(w, "avqred", "clustered_fraction", 100.0),
                     lowest(w, others, "clustered_fraction", 100.0), Vd.STATISTIC, unit="%",
                     digits=1, names=("drops in runs of 2 or more: AVQRED", "the lowest other")),
            "Drops in runs of 2 or more: "
            + ", ".join(f"{LABEL[a]} {100 * v(w, a, 'clustered_fraction'):.1f} %" for a in AQMS)
            + ".",
        )
        claim(
            f"[{w}] fewer connections cut their windows together under AVQRED than under RED",
            Vd.below(col(w, "avqred", "sync_dispersion"), lowest(w, RED, "sync_dispersion"),
                     Vd.STATISTIC, names=("cut-count dispersion: AVQRED", "the lowest RED")),
            "Dispersion of the number of connections cutting per second (1 = independent): "
            + ", ".join(f"{LABEL[a]} {v(w, a, 'sync_dispersion'):.2f}" for a in AQMS) + ".",
        )
        numbers += _paper_numbers(w, v)
    births = v("conference", "avqred", "births_per_s")

    def variant(name: str, col: str) -> float:
        rows = first[first.variant == name]
        return float(rows[col].iloc[0]) if len(rows) else math.nan

    avq_u, avq_p = v("conference", "avq", "throughput_mbps"), v("conference", "avq", "drop_pct")
    red_std = v("conference", "red4", "throughput_std_kbps")
    disp = {(w, a): v(w, a, "sync_dispersion") for w in SETS for a in AQMS}
    if all(x < 1 for x in disp.values()):
        sync_text = (
            "The timeouts also spread the cuts out: for every AQM the number of "
            "connections cutting per second is less dispersed than independent cuts "
            "would be (index below 1 in both sets), so there is little global "
            "synchronization for AVQRED to remove."
        )
    else:
        sync_text = (
            "Cut-count dispersion above 1 (clustered cuts) occurs for: "
            + ", ".join(sorted({LABEL[a] for (_, a), x in disp.items() if x >= 1}))
            + "."
        )
    return f"""# AVQRED (Byun & Baras): the IP-over-satellite emulation in satqm

Command: `satqm reproduce avqred{" --quick" if quick else ""} --out {out}`
({len(seeds)} seed(s): {", ".join(map(str, seeds))}; each run {duration:g} s simulated,
measured over {warmup:g}-{duration:g} s; all 400 connections are open by 190 s).
Scenarios: `scenarios/avqred/chapter.toml` (1,400-byte packets) and
`scenarios/avqred/conference.toml` (1,500-byte packets), Table 2's AQM
tables substituted (`settings.json`). Means over seeds ± 95 % confidence
half-widths.

## Table 3: satellite-link throughput, mean and standard deviation (100 ms samples)

{table3}
## Table 4: drops at the receive queue, scaled to 20 minutes

{table4}
## Transmit queue, drop clustering, window synchronization

{queue_md}
Drop clustering is measured on the drop log at the receive queue, each
drop's index among the packets arriving there (`satqm.analysis.drop_clustering`);
synchronization on the congestion log of the servers' connections: the
number of distinct connections cutting their window in each 1 s window
(about one end-to-end round trip; `satqm.analysis.synchronization`).
Figures: `utilization_<set>.png` (the satellite link's throughput per
100 ms after the ramp-up: chapter Figs. 6-7, conference Fig. 8),
`transmit_queue_<set>.png` (whole run and the 50-150 s zoom),
`drop_pattern_<set>.png` (the first 1,000 and 3,000 packets arriving at the
receive queue after {warmup:g} s).

## The papers' claims here

Each claim judged seed by seed, with its criterion (docs/reproductions.md#verdicts).

{chr(10).join(claims)}

## The papers' numbers

Each value of Tables 3 and 4 (the mean over seeds) against the papers'.

{chr(10).join(numbers)}

## Sensitivity (conference set, seed {seeds[0]})

{sens_md}
## What differs from the papers, and why

- **AVQRED's transmit queue.** With the papers' setting (virtual capacity =
  the 20 Mbit/s regulator rate) AVQRED admits, over any long stretch,
  about 20 Mbit/s of packets at the receive queue, because 400 connections
  keep its virtual queue in the 60-120 packet region. In satqm the PEP
  relays the same bytes in packets of the same size, so the transmit queue
  is fed at its own service rate: a critically loaded queue, which wanders
  high and far (up to its 200-packet buffer, the PEP buffers holding the
  rest). The paper measured 19.7 Mbit/s under AVQRED, 1.5 % below the link:
  its transmit queue was fed below its service rate. In the real gateway
  some bytes counted at the receive queue are not carried over the
  satellite one-for-one (the PEP's backbone protocol replaces the TCP/IP
  headers; the regulator counts its own framing). The papers do not give
  that accounting; the packaged scenarios count none, the variant table
  below runs GSE and ULE framing with and without a compressed backbone
  header, and the sensitivity table shows the transmit queue with a
  virtual capacity of 99 and 98 % of the link.
- **AVQ's throughput.** AVQ with Table 2's setting carried {avq_u:.2f} Mbit/s
  (paper 19.5) while dropping {avq_p:.1f} % of arrivals. In the AVQ
  paper's pseudocode every arrival, dropped or not, depletes the virtual
  capacity, so the *offered* rate settles at gamma C and the link carries
  about gamma C (1 - p) = {20 * (1 - avq_p / 100):.1f} Mbit/s. Depleting it only
  by accepted arrivals (`count_rejected = false`, docs/aqm.md) AVQ carries
  {variant("avq-accepted", "throughput_mbps"):.2f} Mbit/s (sensitivity table). The papers'
  description ("minus the bytes that were just received") allows either;
  the reproduction runs the pseudocode.
- **Timeouts, throughput variation and synchronization.** 400 connections
  share 20 Mbit/s, about 50 kbit/s each: under one packet per server round
  trip, so most window cuts are retransmission timeouts, not fast
  retransmits ({100 * v("conference", "red4", "timeout_cut_fraction"):.0f} % for RED 4,
  {100 * v("conference", "avqred", "timeout_cut_fraction"):.0f} % for AVQRED). With the RFC 6298
  minimum RTO of 1 s, stretches in which many connections wait out a timeout
  empty the transmit queue ({100 * v("conference", "red4", "tq_empty"):.1f} % of RED 4's
  samples); the 100 ms throughput's standard deviation is {red_std:.0f} kbit/s
  for RED 4 (paper: 107); with a 200 ms minimum RTO (Linux) it is
  {variant("red4-rto200", "throughput_std_kbps"):.0f} kbit/s. {sync_text}
- **Load and birth rate.** The web model follows the text (400 connections,
  250-550 KB pages, 10 s think time, 5 Mbit/s cap); it offers far more than
  20 Mbit/s, so every AQM runs in heavy overload, as Table 4's drop counts
  (about 400 drops/s) say the emulation did. satqm's birth rate is
  {births:.1f} connections/s, not the papers' 20/s: at 20 Mbit/s, pages of
  400 KB can complete at most about 6 per second, so the papers' count must
  include connections that are not whole-page transfers.
- **Not in the papers, chosen here:** the servers' TCP (NewReno, delayed
  ACKs, initial window 2); the PEP backbone (SACK, initial window 10, 2 MB
  window, no delayed ACKs: with them its 0.6-0.93 s round trip plus a 200 ms
  delayed ACK exceeds the 1 s minimum RTO and it times out spuriously);
  the per-connection PEP buffer (500 kB, about one satellite round
  trip at the 5 Mbit/s connection cap); the transmit buffer (200 packets;
  when full, the PEP holds its packets back and nothing is dropped after
  the PEP); AVQ's alpha (0.15; the papers call it arbitrary).
- **Utilization** is the satellite link's throughput (bits serialized on
  the downlink per 100 ms sample, headers included), as the papers' Mbit/s
  figures suggest.
"""


def _paper_numbers(w: str, v: Callable[[str, str, str], float]) -> list[str]:
    """One verdict per column of Tables 3 and 4 for parameter set ``w``: it
    holds when every AQM's value (mean over seeds) matches the papers'."""
    from . import _verdict as Vd

    out = []
    for table, what, col, paper, q, kw in (
        ("3", "mean throughputs", "throughput_mbps", lambda a: PAPER_TABLE3[a][0], Vd.SHARE,
         {"scale": LINK_BPS / 1e6, "unit": "Mbit/s", "digits": 2}),
        ("3", "throughput standard deviations", "throughput_std_kbps",
         lambda a: PAPER_TABLE3[a][1], Vd.STATISTIC, {"unit": "kbit/s", "digits": 0}),
        ("4", "drops in 20 minutes", "drops_20min", lambda a: PAPER_TABLE4[a], Vd.STATISTIC,
         {"digits": 0}),
    ):
        cells = {LABEL[a]: Vd.match(v(w, a, col), paper(a), q, **kw) for a in AQMS}
        out.append(Vd.each(cells, q, **kw).line(f"[{w}] (Table {table}) the {what}"))
    return out


def _figures(out: Path, which: str, res: dict[str, Any], warmup: float, duration: float) -> None:
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    def save(fig: Any, name: str) -> None:
        tmp = out / (name + ".tmp.png")
        fig.savefig(tmp)
        tmp.replace(out / name)

    fig = Figure(figsize=(10, 7), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(3, 2, sharey=True)
    for row, aqm in enumerate(("red4", "avq", "avqred")):
        ts = res[aqm].link("transmit")
        for col, (lo, hi) in enumerate(((0.0, duration), (warmup + 50, warmup + 150))):
            ax = axes[row][col]
            w = ts[(ts.index > lo) & (ts.index <= hi)]
            ax.plot(w.index, w.queue_packets, lw=0.6)
            ax.axhspan(MIN_TH, MAX_TH, color="orange", alpha=0.15, lw=0)
            ax.set_xlim(lo, hi)
            ax.set_title(f"{LABEL[aqm]}" + (" (50-150 s after ramp-up)" if col else ""), fontsize=9)
            if col == 0:
                ax.set_ylabel("transmit queue (packets)")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle(f"Transmit queue, {which} parameter set (RED region shaded)", fontsize=10)
    fig.tight_layout()
    save(fig, f"transmit_queue_{which}.png")

    fig = Figure(figsize=(10, 6), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(3, 2)
    for row, aqm in enumerate(("red4", "avq", "avqred")):
        r = res[aqm]
        rx = r.link("receive")
        d = r.drops[(r.drops.link == "receive") & (r.drops.time_s > warmup)]
        # Index of the first packet arriving after the warm-up.
        first = int(rx[rx.index <= warmup].arrivals.sum())
        for col, n in enumerate((1000, 3000)):
            ax = axes[row][col]
            idx = d["index"].to_numpy(dtype=np.int64) - first
            idx = idx[(idx >= 0) & (idx < n)]
            marks = np.zeros(n)
            marks[idx] = 1
            ax.vlines(np.nonzero(marks)[0], 0, 1, lw=0.5)
            ax.set_xlim(0, n)
            ax.set_yticks([])
            ax.set_title(
                f"{LABEL[aqm]}: drops among {n:,} arriving packets ({int(marks.sum())} dropped)",
                fontsize=9,
            )
    for ax in axes[-1]:
        ax.set_xlabel("n-th packet arriving at the receive queue")
    fig.tight_layout()
    save(fig, f"drop_pattern_{which}.png")

    # Chapter Figs. 6-7, conference Fig. 8: the satellite link's utilization.
    fig = Figure(figsize=(10, 5), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 1, sharex=True, sharey=True)
    for ax, group in zip(axes, (("red4",), ("avq", "avqred"))):
        for aqm in group:
            ts = res[aqm].link("transmit")
            w = ts[ts.index > warmup]
            ax.plot(w.index, w.throughput_bps / 1e6, lw=0.5, label=LABEL[aqm])
        ax.axhline(LINK_BPS / 1e6, color="k", lw=0.5, ls=":")
        ax.set_ylabel("Mbit/s per 100 ms")
        ax.legend(fontsize=8, loc="lower right")
    axes[0].set_title(
        f"Satellite-link utilization, {which} set (RED 4: chapter Fig. 6; "
        "AVQ and AVQRED: Fig. 7; conference Fig. 8)",
        fontsize=9,
    )
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    save(fig, f"utilization_{which}.png")
