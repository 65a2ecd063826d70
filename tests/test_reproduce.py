"""Paper reproductions run end to end (quick settings)."""

from __future__ import annotations

import re
import subprocess
import sys

import pandas as pd
import pytest
from satqm import experiments
from satqm.experiments import avq2001


def test_list_names_every_reproduction():
    r = subprocess.run(
        [sys.executable, "-m", "satqm", "reproduce", "--list"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    for name in experiments.REPRODUCTIONS:
        assert name in r.stdout


def test_unknown_reproduction_is_bad_input(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "satqm", "reproduce", "nope", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert "unknown reproduction 'nope'" in r.stderr


def test_design_rules_come_from_the_library():
    d = avq2001.design()
    assert avq2001.ALPHA < d.avq_alpha_max  # the paper's alpha is stable by Theorem 1
    assert 0 < d.pi_b < d.pi_a < 1e-2


@pytest.mark.slow
def test_avq2001_quick(tmp_path):
    report = avq2001.reproduce(tmp_path, quick=True, workers=2)
    text = report.read_text()
    for f in ("table1.md", "comparison.md", "fig1_queue.png", "fig2_vcap.png", "runs.csv"):
        assert (tmp_path / f).exists(), f
    df = pd.read_csv(tmp_path / "runs.csv")
    assert len(df) == 10  # 5 schemes x mark/drop x 1 seed
    avq = df[(df.aqm == "avq") & (df["mode"] == "mark")].iloc[0]
    # AVQ with marking holds the link near gamma with a small queue.
    assert abs(avq.after_utilization - 0.98) < 0.03
    assert avq.after_queue_mean < 30
    assert avq.after_loss_pct < 1.0
    assert "13.11" in text and "20.44" in text  # the paper's Table 1 beside ours
    # Every verdict states its criterion and its numbers; a Table 1 mean is
    # said to hold only within the criterion (25 % of the paper's value, at
    # least 1 packet): 18.9 packets before the short flows is not 13.11.
    verdicts = [
        line for line in text.splitlines()
        if line.startswith(("- **holds**", "- **not reproduced**", "- **does not hold**"))
    ]
    assert len(verdicts) == 9
    assert all(" (criterion: " in line and "does not hold" not in line for line in verdicts)
    for when, paper in (("before", 13.11), ("after", 20.44)):
        line = next(v for v in verdicts if f"queue's mean {when} the short flows" in v)
        ours = avq[f"{when}_queue_mean"]
        assert f"{ours:.1f} vs {paper:.1f} packets" in line
        inside = abs(ours - paper) <= max(0.25 * paper, 1.0)
        assert line.startswith("- **holds**") == inside
        assert line.startswith("- **not reproduced**") != inside
    assert avq.before_queue_mean > 13.11 * 1.25
    # The start-up transient is reported apart from the steady state.
    assert "## Start-up transient" in text
    startup = text.split("## Start-up transient")[1].split("##")[0]
    m = re.search(r"over 0-(\d+) s .* the queue averages ([\d.]+) packets", startup)
    assert m and int(m[1]) > 0 and float(m[2]) > avq2001.SMALL_QUEUE
    # Finished runs are kept and not redone.
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/summary.json")}
    avq2001.reproduce(tmp_path, quick=True, workers=1)
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/summary.json")}
    assert before == after


def test_batches_run_through_the_sweep_executors_and_keep_only_run_files(tmp_path):
    from conftest import TINY
    from satqm.experiments._runner import Run, RunFailed, run_all
    from satqm.results import DETERMINISTIC_FILES

    runs = [Run("tiny-a-s1", TINY, 1), Run("bad", "name = 1\n", 1), Run("tiny-b-s2", TINY, 2)]
    seen: list[tuple[int, int]] = []
    try:
        run_all(runs, tmp_path / "runs", workers=2, progress=lambda d, t: seen.append((d, t)))
    except RunFailed as e:
        assert "1 of 3 runs failed" in str(e) and "bad: ConfigError" in str(e)
    else:
        raise AssertionError("a failed run must raise RunFailed")
    assert seen[0] == (0, 3) and seen[-1] == (3, 3)
    # A run's folder holds what Results.save writes, nothing else; no debris.
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["tiny-a-s1", "tiny-b-s2"]
    for name in ("tiny-a-s1", "tiny-b-s2"):
        names = {p.name for p in (tmp_path / "runs" / name).iterdir()}
        assert names == {*DETERMINISTIC_FILES, "run.json", "plot.png", ".files.json"}
    # In this process, the same bytes; finished runs are not redone.
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/summary.json")}
    folders = run_all(runs[::2] + [Run("tiny-c-s2", TINY, 2)], tmp_path / "runs", workers=1)
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/summary.json")}
    assert after.items() >= before.items() and len(after) == 3
    for f in DETERMINISTIC_FILES:
        b = (folders["tiny-b-s2"] / f).read_bytes()
        assert (folders["tiny-c-s2"] / f).read_bytes() == b, f


def test_a_damaged_named_run_is_redone_and_an_intact_one_kept(tmp_path):
    from conftest import TINY
    from satqm.experiments._runner import Run, run_all
    from satqm.sweep.store import NamedRuns

    runs = [Run("a", TINY, 1), Run("b", TINY, 2)]
    folders = run_all(runs, tmp_path, workers=1)
    store = NamedRuns(tmp_path)
    assert store.check("a") is None and store.check("b") is None
    good = {p.name: p.read_bytes() for p in folders["a"].glob("*.parquet")}
    # A truncated table (a copy cut short, a disk error).
    table = next(folders["a"].glob("*.parquet"))
    table.write_bytes(table.read_bytes()[:100])
    assert "bytes" in store.check("a")
    # The same contents with one byte changed.
    summary = folders["b"] / "summary.json"
    text = summary.read_bytes()
    summary.write_bytes(text.replace(b"0", b"1", 1))
    assert "changed" in store.check("b")
    kept = (folders["b"] / "timeseries.parquet").stat().st_mtime_ns
    run_all(runs, tmp_path, workers=1)
    assert store.check("a") is None and store.check("b") is None
    assert {p.name: p.read_bytes() for p in folders["a"].glob("*.parquet")} == good
    assert (folders["b"] / "timeseries.parquet").stat().st_mtime_ns != kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_a_saved_run_of_another_scenario_or_seed_is_redone(tmp_path):
    # A reproduction changed since its runs were saved: the run is redone,
    # not read back as if it were the new one.
    from conftest import TINY
    from satqm.experiments._runner import Run, run_all

    folders = run_all([Run("a", TINY, 1), Run("b", TINY, 1)], tmp_path, workers=1)
    kept = {n: (folders[n] / "summary.json").stat().st_mtime_ns for n in ("a", "b")}
    other = TINY.replace('name = "', 'name = "other-', 1)
    assert other != TINY
    run_all([Run("a", other, 1), Run("b", TINY, 2)], tmp_path, workers=1)
    for n in ("a", "b"):
        assert (folders[n] / "summary.json").stat().st_mtime_ns != kept[n], n
    assert "other-" in (folders["a"] / "scenario.toml").read_text()
    assert "with seed = 2," in (folders["b"] / "scenario.toml").read_text()
    # The same scenario and seed again: kept.
    again = (folders["a"] / "summary.json").stat().st_mtime_ns
    run_all([Run("a", other, 1)], tmp_path, workers=1)
    assert (folders["a"] / "summary.json").stat().st_mtime_ns == again


def test_a_named_run_from_before_records_is_kept_while_it_reads(tmp_path):
    from conftest import TINY
    from satqm.experiments._runner import Run, run_all
    from satqm.sweep.store import NAMED_RECORD, NamedRuns

    folders = run_all([Run("a", TINY, 1)], tmp_path, workers=1)
    (folders["a"] / NAMED_RECORD).unlink()
    store = NamedRuns(tmp_path)
    assert store.ready("a")
    (folders["a"] / "summary.json").write_text("{ not json")
    assert not store.ready("a") and not folders["a"].exists()
