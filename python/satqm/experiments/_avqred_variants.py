"""The gateway's modelling alternatives for ``satqm reproduce avqred``.

The papers' testbed was real equipment; three of its behaviours are
modelling choices in satqm, each with alternatives (docs/gateway.md):

- the servers' TCP: satqm's RFC profile, or a Linux stack of 2009
  (``profile = "linux-2009"``: SACK, Linux's retransmission timer, RFC 3390
  initial window, CUBIC, timestamps in 1,500-byte packets; docs/linux.md);
- the PEP's scheduling of its backbone: one FIFO across connections,
  deficit round robin across connections, or a backbone paced at the
  contracted 20 Mbit/s or a little above it (``[[pep]] scheduling``,
  ``pace_rate``);
- the byte accounting across the gateway: none (the space link carries the
  IP packets one for one), GSE over DVB-S2, with or without a compressed
  backbone header, or ULE over MPEG-2 transport streams
  (``[[pep]] backbone_header``, ``packet_overhead``, ``frame_size``,
  ``frame_overhead``).

Each cell runs RED 4 and AVQRED on the conference set with every seed of
the main table; each figure is averaged over the seeds, and the papers'
claims comparing the two are judged within the cell, seed by seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ._runner import fmt_ci, mean_ci

#: Servers' TCP profile: the text added to the web traffic's ``[traffic.tcp]``.
#: A Linux server sends the timestamps option, 12 of the 1,500-byte packet's
#: bytes: 1,448 of payload where the RFC servers carry 1,460.
PROFILES = {"rfc": "", "linux-2009": 'profile = "linux-2009"\nmss = 1448\n'}

#: PEP scheduling: the text added to the gateway's ``[[pep]]``.
SCHEDULING = {
    "fifo": "",
    "drr": 'scheduling = "drr"\n',
    "paced": 'pace_rate = "20 Mbps"\n',
    # Above the space link's 20 Mbit/s, far below the 100 Mbit/s at which
    # the receive queue can hand the PEP a burst: the transmit queue is fed
    # 10 % (2 Mbit/s, 1.2 s to fill its 200 packets from empty) or 25 %
    # (5 Mbit/s, 0.5 s) faster than it drains while the backbone has data.
    "paced-22": 'pace_rate = "22 Mbps"\n',
    "paced-25": 'pace_rate = "25 Mbps"\n',
}

#: Byte accounting: the text added to the gateway's ``[[pep]]``, and where
#: the numbers come from.
ACCOUNTING = {
    "none": ("", "IP packets carried one for one"),
    "gse": (
        'packet_overhead = 10\nframe_size = "6041 B"\nframe_overhead = 10\n',
        "GSE (ETSI TS 102 606): 10-byte header of an unfragmented PDU (2 fixed, 2 protocol "
        "type, 6 label); DVB-S2 normal BBFRAME at code rate 3/4 (ETSI EN 302 307): 6,041-byte "
        "data field, 10-byte BBHEADER",
    ),
    "gse-hc": (
        'backbone_header = 4\npacket_overhead = 10\nframe_size = "6041 B"\nframe_overhead = 10\n',
        "GSE over DVB-S2 as above, and the backbone's 40-byte TCP/IP header compressed to "
        "4 bytes (RFC 1144/RFC 6846-style TCP header compression)",
    ),
    "ule": (
        'packet_overhead = 8\nframe_size = "184 B"\nframe_overhead = 4\n',
        "ULE (RFC 4326): 4-byte header and 4-byte CRC-32, no destination address; MPEG-2 "
        "transport stream packets of 188 bytes, 4 of header (ISO/IEC 13818-1)",
    ),
}

#: The cells run (profile, scheduling, accounting); the first is the main
#: table's (Table 2 runs are reused for it).
CELLS = [
    ("rfc", "fifo", "none"),
    ("linux-2009", "fifo", "none"),
    ("rfc", "drr", "none"),
    ("rfc", "paced", "none"),
    ("rfc", "fifo", "gse"),
    ("rfc", "fifo", "gse-hc"),
    ("rfc", "fifo", "ule"),
    ("linux-2009", "drr", "gse-hc"),
    ("linux-2009", "drr", "ule"),
    ("rfc", "paced-22", "none"),
    ("rfc", "paced-25", "none"),
]
#: ``--quick`` runs fewer: the servers' TCP, pacing, GSE with header
#: compression, and the combination closest to the papers.
QUICK_CELLS = [CELLS[i] for i in (0, 1, 3, 5, 8)]
#: The per-run figures (columns of ``run_stats``) the table and the claims use.
FIGURES = (
    "throughput_mbps",
    "throughput_std_kbps",
    "drops_20min",
    "tq_mean",
    "tq_std",
    "tq_above_min_th",
    "tq_above_max_th",
    "clustered_fraction",
)
AQMS = ("red4", "avqred")

CLAIMS = {
    "red_oscillates": "RED's transmit queue oscillates beyond its 60-120 region",
    "avqred_steady": "AVQRED keeps the transmit queue steadier and lower than RED's",
    "utilization": "AVQRED's utilization within about 1 % of RED's, with a lower std",
    "clustering": "AVQRED's drops less clustered than RED's",
}


def cell_name(cell: tuple[str, str, str]) -> str:
    return "/".join(cell)


def apply(text: str, cell: tuple[str, str, str]) -> str:
    """The packaged scenario ``text`` under ``cell``'s alternatives."""
    profile, scheduling, accounting = cell
    if 'at = "gateway"\n' not in text or "[traffic.tcp]\n" not in text:
        raise ValueError("the scenario has no gateway PEP or no [traffic.tcp] table")
    extra = SCHEDULING[scheduling] + ACCOUNTING[accounting][0]
    out = text.replace('at = "gateway"\n', 'at = "gateway"\n' + extra, 1)
    return out.replace("[traffic.tcp]\n", "[traffic.tcp]\n" + PROFILES[profile], 1)


def aggregate(runs: Any) -> Any:
    """One cell's runs (a DataFrame with columns ``aqm``, ``seed`` and the
    :data:`FIGURES`, one row per AQM and seed) reduced to one row per AQM:
    each figure's mean over the seeds, its 95 % confidence half-width
    (``<figure>_ci``, NaN with one seed) and the number of seeds (``seeds``).
    A run without the figure (NaN: no drops to cluster) is left out of its
    mean."""
    import pandas as pd

    out = {}
    for aqm, g in runs.groupby("aqm", sort=False):
        if g.seed.duplicated().any():
            raise ValueError(f"{aqm}: more than one run of the same seed in one cell")
        row = {"seeds": float(len(g))}
        for f in FIGURES:
            xs = [x for x in g[f] if not math.isnan(x)]
            row[f], row[f + "_ci"] = mean_ci(xs) if xs else (math.nan, math.nan)
        out[aqm] = row
    return pd.DataFrame.from_dict(out, orient="index")


#: The satellite link (Mbit/s): the scale of the utilization claim's margin.
LINK_MBPS = 20.0


def verdicts(red: Sequence[Any], aq: Sequence[Any]) -> dict[str, Any]:
    """The papers' claims, AVQRED against RED 4 in one cell, judged seed by
    seed (docs/reproductions.md#verdicts): ``red`` and ``aq`` are rows of
    run_stats, one per seed, in the same order. Returns a
    :class:`~satqm.experiments._verdict.Verdict` per claim."""
    from . import _verdict as V

    def f(rows: Sequence[Any], col: str, scale: float = 1.0) -> list[float]:
        return [float(getattr(r, col)) * scale for r in rows]

    share = {"scale": LINK_MBPS, "unit": "Mbit/s", "digits": 2}
    return {
        "red_oscillates": V.bound(
            f(red, "tq_above_max_th"), V.FRACTION.runs.abs, V.FRACTION, below=False,
            name="fraction of the samples with RED 4's queue above 120 packets",
            level_text="the margin for a fraction of the samples",
        ),
        "avqred_steady": V.all_of(
            V.below(f(aq, "tq_mean"), f(red, "tq_mean"), V.QUEUE,
                    names=("mean: AVQRED", "RED 4")),
            V.below(f(aq, "tq_std"), f(red, "tq_std"), V.QUEUE, names=("std: AVQRED", "RED 4")),
        ),
        "utilization": V.all_of(
            V.same(f(aq, "throughput_mbps"), f(red, "throughput_mbps"), V.SHARE,
                   names=("AVQRED", "RED 4"), **share),
            V.below(f(aq, "throughput_std_kbps"), f(red, "throughput_std_kbps"), V.STATISTIC,
                    unit="kbit/s", digits=0, names=("std: AVQRED", "RED 4")),
        ),
        "clustering": V.below(
            f(aq, "clustered_fraction", 100.0), f(red, "clustered_fraction", 100.0),
            V.STATISTIC, unit="%", digits=1, names=("drops in runs: AVQRED", "RED 4"),
        ),
    }


def criteria() -> dict[str, str]:
    """Each claim's criterion in words (for one seed)."""
    from types import SimpleNamespace

    row = SimpleNamespace(**dict.fromkeys(FIGURES, 1.0))
    return {k: v.criterion for k, v in verdicts([row], [row]).items()}


def claims(red: Any, aq: Any) -> dict[str, bool]:
    """Whether each claim holds for one seed's runs (rows of run_stats)."""
    return {k: v.holds for k, v in verdicts([red], [aq]).items()}


def distance(
    red: Any, aq: Any, paper3: dict[str, tuple[float, float]], paper4: dict[str, int]
) -> float:
    """Mean |log ratio| of Table 3's std and Table 4's drops to the paper's
    (RED 4 and AVQRED): 0 is the paper; 0.69 is a factor of 2 on average."""
    terms = []
    for key, r in (("red4", red), ("avqred", aq)):
        terms.append(abs(math.log(max(r.throughput_std_kbps, 1e-9) / paper3[key][1])))
        terms.append(abs(math.log(max(r.drops_20min, 1.0) / paper4[key])))
    return sum(terms) / len(terms)


def table(rows: list[dict[str, Any]]) -> str:
    """The variant table: one line per cell and AQM (means over the seeds,
    ± 95 % confidence half-widths when there are several), the claims per
    cell (judged seed by seed; with several seeds, in how many of them each
    holds)."""
    out = [
        "| profile | scheduling | accounting | AQM | throughput (Mbit/s) | std (kbit/s) | "
        "drops in 20 min | transmit queue mean | std | > 60 | > 120 | drops in runs ≥ 2 |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        for label, s in (("RED 4", r["red4"]), ("AVQRED", r["avqred"])):
            out.append(
                f"| {r['cell'][0]} | {r['cell'][1]} | {r['cell'][2]} | {label} | "
                f"{fmt_ci(s.throughput_mbps, s.throughput_mbps_ci)} | "
                f"{fmt_ci(s.throughput_std_kbps, s.throughput_std_kbps_ci, digits=0)} | "
                f"{_count(s.drops_20min, s.drops_20min_ci)} | "
                f"{fmt_ci(s.tq_mean, s.tq_mean_ci, digits=1)} | "
                f"{fmt_ci(s.tq_std, s.tq_std_ci, digits=1)} | "
                f"{100 * s.tq_above_min_th:.0f} % | {100 * s.tq_above_max_th:.0f} % | "
                f"{_pct(s.clustered_fraction)} |"
            )
    out += [
        "",
        "| profile | scheduling | accounting | "
        + " | ".join(CLAIMS.values())
        + " | claims holding | distance to Tables 3-4 |",
        "|---|---|---|" + "---|" * len(CLAIMS) + "---:|---:|",
    ]
    for r in rows:
        c = r["claims"]
        out.append(
            f"| {r['cell'][0]} | {r['cell'][1]} | {r['cell'][2]} | "
            + " | ".join(_verdict(c[k], [s[k] for s in r.get("per_seed", [])]) for k in CLAIMS)
            + f" | {sum(c.values())} | {r['distance']:.2f} |"
        )
    return "\n".join(out) + "\n"


def _verdict(holds: bool, per_seed: list[bool]) -> str:
    """A claim's verdict (in every seed), and in how many seeds it holds."""
    from ._verdict import HOLDS, NOT_REPRODUCED

    text = HOLDS if holds else NOT_REPRODUCED
    if len(per_seed) > 1:
        text += f" ({sum(per_seed)}/{len(per_seed)})"
    return text


def _count(m: float, h: float) -> str:
    return f"{m:,.0f}" + ("" if math.isnan(h) else f" ± {h:,.0f}")


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f} %"


def criteria_list() -> str:
    """The claims' criteria, one line each."""
    return "\n".join(f"- {CLAIMS[k]}: {c}" for k, c in criteria().items()) + "\n"


def holds_under(rows: list[dict[str, Any]]) -> str:
    """For each claim, the cells under which it holds."""
    lines = []
    for k, text in CLAIMS.items():
        cells = [cell_name(r["cell"]) for r in rows if r["claims"][k]]
        lines.append(
            f"- {text}: "
            + (", ".join(f"`{c}`" for c in cells) if cells else "**holds under no variant**")
        )
    return "\n".join(lines) + "\n"


def best(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The cell with the most claims holding, then the smallest distance."""
    return min(rows, key=lambda r: (-sum(r["claims"].values()), r["distance"]))
