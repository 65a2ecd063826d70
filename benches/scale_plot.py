"""Draw the cost curve of ``cargo bench -p satqm-core --bench scale``.

Reads the Markdown table the benchmark prints (one or more files, rows
concatenated) and draws bottleneck packets per CPU-second and peak memory
per flow against the number of flows, one line per bottleneck rate.

    cargo bench -p satqm-core --bench scale > scale.md
    python benches/scale_plot.py scale.md --out docs/scale.png
"""

from __future__ import annotations

import argparse
from pathlib import Path


def read_rows(paths: list[Path]) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for path in paths:
        header: list[str] | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("|"):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if header is None:
                header = cells
            elif not cells[0].startswith("-"):
                rows.append(dict(zip(header, cells)))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path("scale.png"))
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_rows(args.tables)
    rates = sorted(
        {r["bottleneck"] for r in rows},
        key=lambda s: float(s.split()[0]) * (1000 if "G" in s else 1),
    )
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for rate in rates:
        pts = sorted((int(r["flows"]), r) for r in rows if r["bottleneck"] == rate)
        n = [p[0] for p in pts]
        ax1.plot(n, [float(p[1]["packets / CPU s"]) / 1e6 for p in pts], "o-", label=rate)
        ax2.plot(n, [float(p[1]["KB / flow"]) for p in pts], "o-", label=rate)
    ax1.set(xscale="log", xlabel="flows", ylabel="M bottleneck packets per CPU-second")
    ax2.set(xscale="log", yscale="log", xlabel="flows", ylabel="peak memory per flow, KiB")
    for ax in (ax1, ax2):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(title="bottleneck")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
