"""The models reproduction's agreement table, its REPORT.md, and its figure files."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .._runner import write_json, write_text

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


def agreement_row(part: str, aqm: str, quantity: str, model: float, sim: float) -> dict[str, Any]:
    """One row of the agreement table: a model's value beside the simulation's."""
    diff = model - sim
    rel = diff / abs(sim) if sim and math.isfinite(sim) else math.nan
    return {
        "part": part,
        "aqm": aqm,
        "quantity": quantity,
        "model": model,
        "simulation": sim,
        "difference": diff,
        "relative_difference": rel,
    }


def agreement_markdown(rows: list[dict[str, Any]]) -> str:
    """The agreement table in Markdown (4 significant digits)."""

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


def write_report(
    out: Path,
    rows: list[dict[str, Any]],
    sections: list[str],
    design: Any,
    st: Any,
    quick: bool,
) -> Path:
    """Write ``agreement.csv``, ``agreement.md``, ``design.json`` and
    ``REPORT.md`` (the agreement table, then each part's section); returns
    the path of REPORT.md."""
    import pandas as pd

    df = pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
    df.to_csv(out / "agreement.csv", index=False)
    table_md = agreement_markdown(rows)
    write_text(out / "agreement.md", table_md)
    write_json(out / "design.json", {"dumbbell": asdict(design), "settings": asdict(st)})

    dd, gd, gw = st.dumbbell_duration, st.gateway_duration, st.gateway_warmup
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


# ----- figures ------------------------------------------------------------------


def new_figure(w: float, h: float) -> Any:
    """A Figure on an Agg canvas (no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=110)
    FigureCanvasAgg(fig)
    return fig
