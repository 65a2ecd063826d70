"""Beyond the papers: L4S behind DualPI2 (RFC 9332) on terrestrial and GEO
paths, against a single-queue AQM and flow queuing (``satqm reproduce l4s``).

RFC 9332 claims three things of its dual-queue coupled AQM, and leaves open
how they fare on a long path:

- **Low latency for L4S traffic**: the L queue's delay stays around a
  millisecond (its 99th percentile below 1 ms plus a packet's
  serialisation at the rates of its experiments), while classic traffic
  waits near the PI2 target (15 ms);
- **Rough rate balance** between a scalable flow (TCP Prague, DCTCP) and a
  classic one (CUBIC, Reno) under the coupling factor k = 2 (section 2.1);
- **Full utilization**, the classic queue's target holding the link busy.

Each claim is checked per link, per pair of flows (Prague with CUBIC,
DCTCP with Reno) and per discipline: DualPI2; PIE, a single queue that
marks ECT(1) as it marks ECT(0) (the classic treatment of ECN, RFC 3168);
FQ-CoDel, which gives each flow its own queue; and FQ-CoDel with
``ce_threshold = 1 ms`` for ECT(1) packets (the L4S mode of Linux and
ns-3). The links: 40 Mbit/s with a 20 ms base RTT (RFC 9332 Appendix A's
setting) and 20 Mbit/s with a 600 ms base RTT (GEO), each with a buffer of
250 ms at the link rate or one bandwidth-delay product, whichever is
larger. DualPI2 runs with RFC 9332 Appendix A's defaults, with Linux's
native L AQM (a step at 1 ms that waits for a third packet), and with its
gains set for the largest RTT expected (``rtt_max``) at the GEO path's
700 ms: does either choice carry the RFC's claims to a GEO path?
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

from satqm.experiments._runner import Run, ci_cell, run_all, write_json, write_text

#: name -> rate (Mbit/s), base RTT (ms), and the warm-up left out and the
#: duration (s) of a full and of a quick run.
LINKS: dict[str, dict[str, Any]] = {
    "terrestrial": {"rate": 40.0, "rtt": 20.0, "full": (10.0, 70.0), "quick": (10.0, 30.0)},
    "geo": {"rate": 20.0, "rtt": 600.0, "full": (100.0, 600.0), "quick": (60.0, 200.0)},
}

#: name -> (the scalable flow's [tcp] table, the classic flow's).
MIXES: dict[str, tuple[str, str]] = {
    "prague-cubic": ('cc = "prague"', 'cc = "cubic"'),
    "dctcp-reno": ('cc = "dctcp", ecn_codepoint = "ect1"', 'cc = "reno"'),
}

#: name -> [[aqm]] table body (at the bottleneck).
AQMS: dict[str, str] = {
    "dualpi2": 'kind = "dualpi2"\n',
    # Linux's native L AQM: a step at 1 ms, no mark with two packets or
    # fewer queued (sch_dualpi2.c's step_thresh and its two-MTU guard).
    "dualpi2-step": 'kind = "dualpi2"\nmin_th = "1 ms"\nrange = 0\nth_len = 2\n',
    # RFC 9332's gains for the largest RTT expected, set to the GEO path's.
    "dualpi2-rtt700": 'kind = "dualpi2"\nrtt_max = "700 ms"\n',
    "pie": 'kind = "pie"\nmode = "mark"\n',
    # DualPI2's coupling in one FIFO (the PI2 of De Schepper et al. 2016).
    "pi2": 'kind = "pi2"\n',
    "fq_codel": 'kind = "fq_codel"\n',
    "fq_codel-ce1ms": 'kind = "fq_codel"\nce_threshold = "1 ms"\nce_threshold_ect1 = true\n',
}

#: The claims and their criteria (checked on every seed).
L_P99_MARGIN_MS = 1.0
BALANCE = (0.5, 2.0)
CLASSIC_MEDIAN_MS = (5.0, 25.0)
UTILIZATION = 0.95
PACKET_BYTES = 1500


def _scenario(name: str, link: dict[str, float], mix: str, aqm: str, quick: bool) -> str:
    rate, rtt = link["rate"], link["rtt"]
    warmup, duration = link["quick" if quick else "full"]
    bdp = rate * 1e6 / 8 * rtt / 1e3
    buffer_bytes = max(rate * 1e6 / 8 * 0.25, bdp)
    # 1 ms each way on the access links; the rest on the bottleneck.
    bottleneck_delay = rtt / 2 - 2.0
    scalable, classic = MIXES[mix]
    return f"""name = "{name}"
[simulation]
duration = "{duration:g} s"
warmup = "{warmup:g} s"
sample_interval = "100 ms"

[topology]
kind = "dumbbell"
pairs = 2

[topology.access]
rate = "1 Gbps"
delay = "1 ms"
buffer = 10000

[topology.bottleneck]
rate = "{rate:g} Mbps"
delay = "{bottleneck_delay:g} ms"
buffer = {{ bytes = "{buffer_bytes:.0f} B" }}

[tcp]
mss = 1448
recovery = "sack"
initial_window = 10
window_scaling = true
receive_buffer = "64 MB"

[[aqm]]
at = "bottleneck"
{aqm}
[[traffic]]
kind = "bulk"
pairs = [0]
start = {{ uniform = ["0 s", "1 s"] }}
tcp = {{ {scalable} }}

[[traffic]]
kind = "bulk"
pairs = [1]
start = {{ uniform = ["0 s", "1 s"] }}
tcp = {{ {classic} }}
"""


def serialisation_ms(rate_mbps: float) -> float:
    """One 1,500-byte packet's transmission time at ``rate_mbps``."""
    return PACKET_BYTES * 8 / (rate_mbps * 1e6) * 1e3


def _stats(res: Any) -> dict[str, float]:
    s = res.summary()
    f = res.flows.set_index("flow")
    scalable, classic = float(f.loc[0, "goodput_bps"]), float(f.loc[1, "goodput_bps"])
    return {
        "goodput_l_mbps": scalable / 1e6,
        "goodput_c_mbps": classic / 1e6,
        "ratio": scalable / classic if classic > 0 else math.inf,
        "utilization": s["utilization_mean"],
        "l_p50_ms": res.delay_quantile(0.5, packets="l4s"),
        "l_p99_ms": res.delay_quantile(0.99, packets="l4s"),
        "c_p50_ms": res.delay_quantile(0.5, packets="classic"),
        "c_p99_ms": res.delay_quantile(0.99, packets="classic"),
        "marks": float(s["marks_total"]),
        "drops": float(s["drops_total"]),
        "timeouts_l": float(f.loc[0, "timeouts"]),
        "timeouts_c": float(f.loc[1, "timeouts"]),
    }


def claims(row: dict[str, float], rate_mbps: float) -> dict[str, bool]:
    """Each claim of RFC 9332 on one run."""
    lo, hi = BALANCE
    clo, chi = CLASSIC_MEDIAN_MS
    return {
        "l_delay": row["l_p99_ms"] < L_P99_MARGIN_MS + serialisation_ms(rate_mbps),
        "balance": lo <= row["ratio"] <= hi,
        "classic_delay": clo <= row["c_p50_ms"] <= chi,
        "utilization": row["utilization"] >= UTILIZATION,
    }


CLAIMS = {
    "l_delay": "L4S packets' 99th-percentile queueing delay below "
    f"{L_P99_MARGIN_MS:g} ms plus one packet's serialisation",
    "balance": f"scalable-to-classic goodput ratio within [{BALANCE[0]:g}, {BALANCE[1]:g}]",
    "classic_delay": "classic packets' median queueing delay within "
    f"[{CLASSIC_MEDIAN_MS[0]:g}, {CLASSIC_MEDIAN_MS[1]:g}] ms (the PI2 target, 15 ms)",
    "utilization": f"bottleneck busy at least {UTILIZATION:.0%} of the time",
}


def reproduce(
    out: Path,
    quick: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Run every link x mix x discipline; write ``runs.csv``, ``l4s.md`` and
    REPORT.md. ``quick``: one seed and shorter runs instead of three.
    Returns the path of REPORT.md."""
    import pandas as pd

    import satqm

    out = Path(out)
    seeds = [1] if quick else [1, 2, 3]
    runs: list[Run] = []
    for seed in seeds:
        for lname, link in LINKS.items():
            for mix in MIXES:
                for aname, aqm in AQMS.items():
                    name = f"{lname}-{mix}-{aname}"
                    runs.append(
                        Run(f"{name}-s{seed}", _scenario(name, link, mix, aqm, quick), seed)
                    )
    folders = run_all(runs, out / "runs", workers=workers, progress=progress)

    rows = []
    for r in runs:
        lname, rest = r.name.split("-", 1)
        mix = next(m for m in MIXES if rest.startswith(m + "-"))
        aname = rest[len(mix) + 1 :].rsplit("-s", 1)[0]
        stats = _stats(satqm.Results.load(folders[r.name]))
        held = claims(stats, LINKS[lname]["rate"])
        rows.append(
            {"link": lname, "mix": mix, "aqm": aname, "seed": r.seed, **stats}
            | {f"holds_{k}": v for k, v in held.items()}
        )
    df = pd.DataFrame(rows)
    df.to_csv(out / "runs.csv", index=False)
    table = _table(df)
    write_text(out / "l4s.md", table)
    write_json(out / "claims.json", _verdicts(df))

    durations = ", ".join(
        f"{k} {v['quick' if quick else 'full'][1]:g} s with the first "
        f"{v['quick' if quick else 'full'][0]:g} s left out"
        for k, v in LINKS.items()
    )
    report = f"""# Beyond the papers: L4S behind DualPI2 on terrestrial and GEO paths

Command: `satqm reproduce l4s{" --quick" if quick else ""} --out {out}`
({len(seeds)} seed(s): {", ".join(map(str, seeds))}; runs of {durations}).

One scalable flow (ECT(1)) and one classic flow share a bottleneck of
40 Mbit/s with a 20 ms base RTT (`terrestrial`, RFC 9332 Appendix A's
setting) or 20 Mbit/s with a 600 ms base RTT (`geo`); the buffer holds
250 ms at the link rate or one bandwidth-delay product, whichever is
larger. `prague-cubic`: TCP Prague (AccECN) against CUBIC;
`dctcp-reno`: DCTCP (ECT(1)) against Reno. Disciplines: `dualpi2`
(RFC 9332 Appendix A's defaults: 15 ms target, k = 2, `rtt_max` 100 ms,
the L queue's ramp from 0.8 ms to 1.2 ms); `dualpi2-step` (Linux's native
L AQM: a step at 1 ms, no mark with two packets or fewer queued);
`dualpi2-rtt700` (the defaults with `rtt_max` = 700 ms, which sets the
PI2 gains, RFC 9332 A.1); `pie` (one queue, ECN marking as RFC 3168 treats every
ECN-capable packet); `pi2` (DualPI2's coupled marking in a single queue:
k·p' for ECT(1), p'² for the others); `fq_codel` (a queue per flow, CoDel marking);
`fq_codel-ce1ms` (the same with every ECT(1) packet CE-marked above 1 ms
of sojourn). Queueing delays are the bottleneck's, per class of packet
(`Results.delay_quantile(q, packets=...)`); goodput over the measured
window. Means over seeds, with the 95 % confidence half-width where there
are several.

{table}
## The claims, per cell

A claim holds in a cell when it holds in every seed (the number of seeds
in which it holds is given).

{_verdict_table(df)}
Criteria:
{chr(10).join(f"- `{k}`: {v}" for k, v in CLAIMS.items())}

## What this does not model

- A single-queue coupled PI2 (one FIFO marking ECT(1) with k·p' and
  classic packets with p'²) is not among the disciplines; PIE stands for
  the single queue.
- One flow of each kind; no short flows, no unresponsive traffic.
- The L4S experiments of RFC 9332 also vary the RTT mix; here both flows
  share the base RTT.
"""
    write_text(out / "REPORT.md", report)
    return out / "REPORT.md"


def _table(df: Any) -> str:
    lines = [
        "| link | flows | discipline | scalable Mbit/s | classic Mbit/s | ratio | utilization "
        "| L4S delay p50 ms | p99 ms | classic delay p50 ms | p99 ms | timeouts |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for link in LINKS:
        for mix in MIXES:
            for aqm in AQMS:
                g = df[(df.link == link) & (df.mix == mix) & (df.aqm == aqm)]
                timeouts = list(g.timeouts_l + g.timeouts_c)
                lines.append(
                    f"| {link} | {mix} | {aqm} | {ci_cell(list(g.goodput_l_mbps), 2)} | "
                    f"{ci_cell(list(g.goodput_c_mbps), 2)} | {ci_cell(list(g.ratio), 2)} | "
                    f"{ci_cell(list(g.utilization), 3)} | {ci_cell(list(g.l_p50_ms), 2)} | "
                    f"{ci_cell(list(g.l_p99_ms), 2)} | {ci_cell(list(g.c_p50_ms), 1)} | "
                    f"{ci_cell(list(g.c_p99_ms), 1)} | {ci_cell(timeouts, 1)} |"
                )
    return "\n".join(lines) + "\n"


def _verdicts(df: Any) -> dict[str, dict[str, list[bool]]]:
    out: dict[str, dict[str, list[bool]]] = {}
    for (link, mix, aqm), g in df.groupby(["link", "mix", "aqm"], sort=False):
        g = g.sort_values("seed")
        out[f"{link}/{mix}/{aqm}"] = {k: [bool(x) for x in g[f"holds_{k}"]] for k in CLAIMS}
    return out


def _verdict_table(df: Any) -> str:
    v = _verdicts(df)
    head = "| link | flows | discipline | " + " | ".join(f"`{k}`" for k in CLAIMS) + " |"
    lines = [head, "|---|---|---|" + "---|" * len(CLAIMS)]
    for key, per in v.items():
        link, mix, aqm = key.split("/")
        cells = []
        for k in CLAIMS:
            seeds = per[k]
            word = "holds" if all(seeds) else "not reproduced"
            cells.append(f"{word} ({sum(seeds)}/{len(seeds)})")
        lines.append(f"| {link} | {mix} | {aqm} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
