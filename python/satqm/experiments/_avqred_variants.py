"""The gateway's modelling alternatives for ``satqm reproduce avqred``.

The papers' testbed was real equipment; three of its behaviours are
modelling choices in satqm, each with alternatives (docs/gateway.md):

- the servers' TCP: satqm's RFC profile, or a Linux stack of 2009
  (``profile = "linux-2009"``: SACK, 200 ms minimum RTO, RFC 3390 initial
  window; docs/scenarios.md);
- the PEP's scheduling of its backbone: one FIFO across connections,
  deficit round robin across connections, or a backbone paced at the
  contracted 20 Mbit/s (``[[pep]] scheduling``, ``pace_rate``);
- the byte accounting across the gateway: none (the space link carries the
  IP packets one for one), GSE over DVB-S2, with or without a compressed
  backbone header, or ULE over MPEG-2 transport streams
  (``[[pep]] backbone_header``, ``packet_overhead``, ``frame_size``,
  ``frame_overhead``).

Each cell runs RED 4 and AVQRED on the conference set; the papers' claims
comparing the two are judged within the cell.
"""

from __future__ import annotations

import math
from typing import Any

#: Servers' TCP profile: the text added to the web traffic's ``[traffic.tcp]``.
PROFILES = {"rfc": "", "linux-2009": 'profile = "linux-2009"\n'}

#: PEP scheduling: the text added to the gateway's ``[[pep]]``.
SCHEDULING = {
    "fifo": "",
    "drr": 'scheduling = "drr"\n',
    "paced": 'pace_rate = "20 Mbps"\n',
}

#: Byte accounting: the text added to the gateway's ``[[pep]]``, and where
#: the numbers come from.
ACCOUNTING = {
    "none": ("", "IP packets carried one for one"),
    "gse": (
        "packet_overhead = 10\nframe_size = 6041\nframe_overhead = 10\n",
        "GSE (ETSI TS 102 606): 10-byte header of an unfragmented PDU (2 fixed, 2 protocol "
        "type, 6 label); DVB-S2 normal BBFRAME at code rate 3/4 (ETSI EN 302 307): 6,041-byte "
        "data field, 10-byte BBHEADER",
    ),
    "gse-hc": (
        "backbone_header = 4\npacket_overhead = 10\nframe_size = 6041\nframe_overhead = 10\n",
        "GSE over DVB-S2 as above, and the backbone's 40-byte TCP/IP header compressed to "
        "4 bytes (RFC 1144/RFC 6846-style TCP header compression)",
    ),
    "ule": (
        "packet_overhead = 8\nframe_size = 184\nframe_overhead = 4\n",
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
]
#: ``--quick`` runs fewer: the servers' TCP, pacing, GSE with header
#: compression, and the combination closest to the papers.
QUICK_CELLS = [CELLS[i] for i in (0, 1, 3, 5, 8)]
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


def claims(red: Any, aq: Any) -> dict[str, bool]:
    """The papers' claims, AVQRED against RED 4 in one cell (rows of run_stats)."""
    return {
        "red_oscillates": bool(red.tq_std > 0.5 * red.tq_mean and red.tq_above_max_th > 0.05),
        "avqred_steady": bool(aq.tq_std < red.tq_std and aq.tq_mean < red.tq_mean),
        "utilization": bool(
            abs(aq.throughput_mbps - red.throughput_mbps) / red.throughput_mbps < 0.015
            and aq.throughput_std_kbps < red.throughput_std_kbps
        ),
        "clustering": bool(aq.clustered_fraction < red.clustered_fraction),
    }


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
    """The sensitivity table: one line per cell and AQM, the claims per cell."""
    out = [
        "| profile | scheduling | accounting | AQM | throughput (Mbit/s) | std (kbit/s) | "
        "drops in 20 min | transmit queue mean | std | > 60 | > 120 | drops in runs ≥ 2 |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        for label, s in (("RED 4", r["red4"]), ("AVQRED", r["avqred"])):
            out.append(
                f"| {r['cell'][0]} | {r['cell'][1]} | {r['cell'][2]} | {label} | "
                f"{s.throughput_mbps:.2f} | {s.throughput_std_kbps:.0f} | "
                f"{s.drops_20min:,.0f} | {s.tq_mean:.1f} | {s.tq_std:.1f} | "
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
            + " | ".join("holds" if c[k] else "no" for k in CLAIMS)
            + f" | {sum(c.values())} | {r['distance']:.2f} |"
        )
    return "\n".join(out) + "\n"


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f} %"


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
