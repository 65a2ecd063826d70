"""Fingerprints of satqm's deterministic outputs, to prove a change moves no result.

Every shipped scenario is run at a fixed seed and a short duration, and each
paper reproduction with ``--quick``; what they write is reduced to SHA-256
digests. ``tests/golden/hashes.json`` holds the digests of the current code,
and ``tests/test_golden.py`` recomputes and compares them.

Two kinds of output, compared two ways:

* **The core's output, bit for bit.** Every file of a saved run (a folder
  holding ``run.json``: its Parquet tables, ``summary.json`` and
  ``scenario.toml``) and every Parquet table anywhere. Parquet tables are
  hashed by content (column names, then each column's values), not by file
  bytes, so that a newer pyarrow writing a different ``created_by`` string
  does not look like a moved result; other files as bytes.
* **The reproductions' analysis, by value.** The other JSON, CSV and
  Markdown files a reproduction writes (fits, ODE integrations, tables,
  reports) pass through numpy, scipy and pandas, whose last bits change
  with the library version, its BLAS and the processor's vector
  instructions. Such a file is split into its text with every number taken
  out (hashed, so every word, verdict and column must stay the same) and
  its numbers, kept in ``values.json`` and compared with a relative
  tolerance of :data:`RTOL` (absolute :data:`ATOL` near zero). That is far
  below any change a model or a fix makes, and far above the 10⁻¹¹ that a
  different BLAS kernel moves an ODE solution by.

Wall-clock columns and files that record the machine (``wall_s``,
``run.json``) and pictures are left out.

Regenerate the digests only when a result is meant to move (a bug fix, with
its own regression test):

    python -m tests.golden.outputs --write
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"
HASHES = Path(__file__).with_name("hashes.json")
VALUES = Path(__file__).with_name("values.json")

SEED = 7
#: Seconds simulated after the scenario's warm-up.
MEASURED = 20.0
REPRODUCTIONS = ("atsp", "avq2001", "avqred", "l4s", "models", "pvq2003")
#: Outputs that record the machine, the clock or a picture, not a result
#: (a run's `.files.json` holds SHA-256 of its Parquet bytes, which name
#: the pyarrow version that wrote them).
SKIP_SUFFIXES = (".png",)
SKIP_NAMES = ("run.json", ".files.json")
#: CSV columns that are wall-clock times.
WALL_COLUMNS = ("wall_s", "wall_time_s")
#: Tolerance for the numbers of files compared by value.
RTOL = 1e-6
ATOL = 1e-9
#: A digest of a file compared by value starts with this: it covers the
#: file's text with the numbers taken out, and its numbers are in VALUES.
BY_VALUE = "text:"

#: A number as text: an integer, decimal or exponent form, or nan/inf. Digits
#: right after a letter or underscore belong to a name (``s1``, ``N20``,
#: ``fig21``) and stay in the text.
NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![A-Za-z0-9_])"
    r"|(?<![A-Za-z])[-+]?(?:nan|NaN|inf|Infinity)(?![A-Za-z])"
)
#: Significant digits kept of each number in VALUES (well past RTOL).
KEPT_DIGITS = 12


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


def csv_text(path: Path) -> str:
    """A CSV file's text without its wall-clock columns."""
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
    return text


def split_numbers(text: str) -> tuple[str, list[float]]:
    """The text with each number replaced by ``#``, and the numbers."""
    numbers = [float(m) for m in NUMBER.findall(text)]
    return NUMBER.sub("#", text), numbers


def _kept(x: float) -> float | str:
    """A number as VALUES stores it (JSON has no nan or inf)."""
    return float(f"{x:.{KEPT_DIGITS}g}") if math.isfinite(x) else str(x)


def numbers_differ(got: list[float | str], want: list[float | str]) -> str | None:
    """Where two lists of numbers differ by more than the tolerance, or None."""
    if len(got) != len(want):
        return f"{len(got)} numbers, expected {len(want)}"
    for i, (a, b) in enumerate(zip(got, want)):
        a, b = float(a), float(b)
        if a == b or (math.isnan(a) and math.isnan(b)):
            continue
        if not math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL):
            return f"number {i}: {a!r}, expected {b!r}"
    return None


def in_saved_run(path: Path, folder: Path) -> bool:
    """Whether ``path`` (inside ``folder``) belongs to a run that
    ``Results.save`` wrote."""
    inside = path.relative_to(folder).parents
    return any((folder / d / "run.json").is_file() for d in inside)


def folder_digests(folder: Path) -> tuple[dict[str, str], dict[str, list[float | str]]]:
    """Digests of what ``folder`` holds, and the numbers of the files that
    are compared by value (see the module's doc)."""
    digests: dict[str, str] = {}
    numbers: dict[str, list[float | str]] = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.suffix in SKIP_SUFFIXES or p.name in SKIP_NAMES:
            continue
        rel = p.relative_to(folder).as_posix()
        if p.suffix == ".parquet":
            digests[rel] = table_digest(p)
            continue
        if p.suffix not in (".csv", ".json", ".md"):
            digests[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            continue
        text = csv_text(p) if p.suffix == ".csv" else p.read_text(encoding="utf-8")
        if in_saved_run(p, folder):
            digests[rel] = hashlib.sha256(text.encode()).hexdigest()
        else:
            skeleton, values = split_numbers(text)
            digests[rel] = BY_VALUE + hashlib.sha256(skeleton.encode()).hexdigest()
            numbers[rel] = [_kept(x) for x in values]
    return digests, numbers


def shipped_scenarios() -> list[Path]:
    return sorted(SCENARIOS.rglob("*.toml"))


Fingerprint = tuple[dict[str, str], dict[str, list[float | str]]]


def scenario_digests(path: Path, work: Path) -> Fingerprint:
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


def reproduction_digests(name: str, work: Path) -> Fingerprint:
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


def differences(got: Fingerprint, want: Fingerprint) -> list[str]:
    """What moved between two fingerprints of one output folder, file by file."""
    (gd, gv), (wd, wv) = got, want
    out = [f"missing: {k}" for k in sorted(wd.keys() - gd.keys())]
    out += [f"new: {k}" for k in sorted(gd.keys() - wd.keys())]
    for k in sorted(wd.keys() & gd.keys()):
        if gd[k] != wd[k]:
            what = "text" if wd[k].startswith(BY_VALUE) else "content"
            out.append(f"moved: {k} ({what})")
        elif k in wv:
            why = numbers_differ(gv.get(k, []), wv[k])
            if why:
                out.append(f"moved: {k} ({why})")
    return out


def expected() -> dict[str, dict[str, Fingerprint]]:
    """The stored fingerprints, as ``{"scenarios"|"reproductions": {name: (digests, numbers)}}``."""
    hashes = json.loads(HASHES.read_text(encoding="utf-8"))
    values = json.loads(VALUES.read_text(encoding="utf-8"))
    return {
        kind: {n: (d, values[kind].get(n, {})) for n, d in names.items()}
        for kind, names in hashes.items()
    }


def compute(work: Path) -> dict[str, dict[str, Fingerprint]]:
    scen = {
        p.relative_to(SCENARIOS).as_posix(): scenario_digests(p, work / "scenarios")
        for p in shipped_scenarios()
    }
    repro = {n: reproduction_digests(n, work / "reproduce") for n in REPRODUCTIONS}
    return {"scenarios": scen, "reproductions": repro}


def main(argv: list[str] | None = None) -> int:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {HASHES.name} and {VALUES.name}")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        doc = compute(Path(tmp))
    hashes = {kind: {n: fp[0] for n, fp in names.items()} for kind, names in doc.items()}
    values = {kind: {n: fp[1] for n, fp in names.items() if fp[1]} for kind, names in doc.items()}
    hashes_text = json.dumps(hashes, indent=1, sort_keys=True) + "\n"
    # One line a file: its numbers.
    values_text = (
        "{\n"
        + ",\n".join(
            f" {json.dumps(kind)}: {{\n"
            + ",\n".join(
                f"  {json.dumps(n)}: {{\n"
                + ",\n".join(
                    f"   {json.dumps(f)}: {json.dumps(nums)}" for f, nums in sorted(files.items())
                )
                + "\n  }"
                for n, files in sorted(names.items())
            )
            + "\n }"
            for kind, names in sorted(values.items())
        )
        + "\n}\n"
    )
    if args.write:
        HASHES.write_text(hashes_text, encoding="utf-8")
        VALUES.write_text(values_text, encoding="utf-8")
        print(f"wrote {HASHES} and {VALUES}")
    else:
        sys.stdout.write(hashes_text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
