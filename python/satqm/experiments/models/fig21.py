"""Part 3 of the models reproduction: Fig. 21 of the parallel-VQ paper, the
queue distribution of the Markov chain beside the simulated RED queue."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .report import agreement_row


def compare(out: Path, quick: bool, rows: list[dict[str, Any]], workers: int | None = None) -> str:
    """Fig. 21 of the parallel-VQ paper via :func:`satqm.experiments._pvq_fig21.fig21`:
    its report quoted, its mean/std per N (Markov chain with the measured
    window against the simulated RED queue) added to the agreement rows."""
    from .._pvq_fig21 import fig21

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
                        agreement_row(
                            "pvq-fig21",
                            f"red_tail-N{n}-{dist}",
                            q,
                            float(mod.iloc[0][col]),
                            float(sim[col]),
                        )
                    )
    gaps = [
        (int(r["aqm"].split("-")[1][1:]), r["simulation"] - r["model"])
        for r in rows
        if r["part"] == "pvq-fig21"
        and r["quantity"] == "queue_mean"
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
