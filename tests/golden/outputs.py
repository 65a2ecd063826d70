"""Fingerprints of satqm's deterministic outputs, to prove a change moves no result.

Every shipped scenario is run at a fixed seed and a short duration, and each
paper reproduction with ``--quick``; what they write is reduced to SHA-256
digests. ``tests/golden/hashes.json`` holds the digests of the current code,
and ``tests/test_golden.py`` recomputes and compares them.

Parquet tables are hashed by content (column names, then each column's
values), not by file bytes, so that a newer pyarrow writing a different
``created_by`` string does not look like a moved result. JSON, CSV and
Markdown files are hashed as bytes, except the columns and files that hold
wall-clock times or machine details (``wall_s``, ``run.json``) and the
pictures.

Regenerate the digests only when a result is meant to move (a bug fix, with
its own regression test):

    python -m tests.golden.outputs --write
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"
HASHES = Path(__file__).with_name("hashes.json")

SEED = 7
#: Seconds simulated after the scenario's warm-up.
MEASURED = 20.0
REPRODUCTIONS = ("atsp", "avq2001", "avqred", "models", "pvq2003")
#: Outputs that record the machine, the clock or a picture, not a result
#: (a run's `.files.json` holds SHA-256 of its Parquet bytes, which name
#: the pyarrow version that wrote them).
SKIP_SUFFIXES = (".png",)
SKIP_NAMES = ("run.json", ".files.json")
#: CSV columns that are wall-clock times.
WALL_COLUMNS = ("wall_s", "wall_time_s")


def table_digest(path: Path) -> str:
    """SHA-256 of a Parquet table's content: names and values, column by column."""
    import numpy as np
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    h = hashlib.sha256()
    h.update(str(table.num_rows).encode())
    for name, col in zip(table.column_names, table.columns):
        h.update(b"\x00col\x00" + name.encode())
        values = col.to_numpy()
        if values.dtype.kind in "biuf":
            h.update(values.dtype.str.encode())
            h.update(np.ascontiguousarray(values).tobytes())
        else:
            h.update("\x1f".join(map(str, values.tolist())).encode())
    return h.hexdigest()


def csv_digest(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if lines:
        header = lines[0].split(",")
        drop = [i for i, c in enumerate(header) if c in WALL_COLUMNS]
        if drop:
            import csv

            rows = list(csv.reader(io.StringIO(text)))
            rows = [[v for i, v in enumerate(r) if i not in drop] for r in rows]
            text = "\n".join(",".join(r) for r in rows)
    return hashlib.sha256(text.encode()).hexdigest()


def folder_digests(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.suffix in SKIP_SUFFIXES or p.name in SKIP_NAMES:
            continue
        rel = p.relative_to(folder).as_posix()
        if p.suffix == ".parquet":
            out[rel] = table_digest(p)
        elif p.suffix == ".csv":
            out[rel] = csv_digest(p)
        else:
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def shipped_scenarios() -> list[Path]:
    return sorted(SCENARIOS.rglob("*.toml"))


def scenario_digests(path: Path, work: Path) -> dict[str, str]:
    import satqm

    full = satqm.load(path)
    # The shortest of these that the file allows (traffic may start late).
    for duration in (full.warmup + MEASURED, full.warmup + 6 * MEASURED, full.duration):
        try:
            sc = satqm.load(path, seed=SEED, duration=duration)
            break
        except satqm.ConfigError:
            if duration == full.duration:
                raise
    out = work / path.relative_to(SCENARIOS).with_suffix("").as_posix().replace("/", "-")
    satqm.run(sc).save(out, plot=False)
    return folder_digests(out)


def reproduction_digests(name: str, work: Path) -> dict[str, str]:
    """Run ``satqm reproduce NAME --quick`` in ``work`` (the same command line
    every time, since the report quotes it) and fingerprint what it wrote."""
    work.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        [sys.executable, "-m", "satqm.cli", "reproduce", name, "--quick", "--out", name],
        cwd=work, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if r.returncode != 0:
        raise RuntimeError(f"satqm reproduce {name} --quick failed:\n{r.stderr}")
    return folder_digests(work / name)


def compute(work: Path) -> dict[str, dict[str, dict[str, str]]]:
    scen = {
        p.relative_to(SCENARIOS).as_posix(): scenario_digests(p, work / "scenarios")
        for p in shipped_scenarios()
    }
    repro = {n: reproduction_digests(n, work / "reproduce") for n in REPRODUCTIONS}
    return {"scenarios": scen, "reproductions": repro}


def main(argv: list[str] | None = None) -> int:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {HASHES.name}")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        doc = compute(Path(tmp))
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    if args.write:
        HASHES.write_text(text, encoding="utf-8")
        print(f"wrote {HASHES}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
