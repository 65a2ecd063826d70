"""Same scenario and seed, same bytes; another seed, other results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas.testing as pdt
import pytest
import satqm
from satqm.results import DETERMINISTIC_FILES

DURATION = 10.0


def _files(d: Path) -> dict[str, bytes]:
    return {name: (d / name).read_bytes() for name in DETERMINISTIC_FILES}


@pytest.fixture(scope="module")
def hetero(hetero_path) -> satqm.Scenario:
    return satqm.load(hetero_path, duration=DURATION)


def test_same_seed_same_bytes(hetero, tmp_path):
    a = satqm.run(hetero, seed=11).save(tmp_path / "a", plot=False)
    b = satqm.run(hetero, seed=11).save(tmp_path / "b", plot=False)
    fa, fb = _files(a), _files(b)
    for name in DETERMINISTIC_FILES:
        assert fa[name] == fb[name], f"{name} differs between two runs with seed 11"


def test_same_bytes_from_another_process(hetero, hetero_path, tmp_path):
    """The command line in a fresh interpreter writes what this process writes."""
    here = satqm.run(hetero, seed=4).save(tmp_path / "here", plot=False)
    there = tmp_path / "there"
    r = subprocess.run(
        [sys.executable, "-m", "satqm.cli", "run", str(hetero_path), "--out", str(there),
         "--seed", "4", "--duration", str(DURATION), "--quiet", "--no-plot"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _files(here) == _files(there)


def test_parquet_has_no_clock_metadata(hetero, tmp_path):
    import pyarrow.parquet as pq

    out = satqm.run(hetero).save(tmp_path / "r", plot=False)
    for name in ("timeseries", "drops", "flows", "cwnd"):
        md = pq.read_metadata(out / f"{name}.parquet").metadata or {}
        blob = b" ".join(k + b"=" + v for k, v in md.items()).lower()
        for word in (b"time_created", b"created_at", b"timestamp", b"hostname"):
            assert word not in blob, (name, word)


def test_different_seeds_differ(hetero, tmp_path):
    a = satqm.run(hetero, seed=1)
    b = satqm.run(hetero, seed=2)
    # the seed draws the access delays and start times
    assert not a.flows["start_s"].equals(b.flows["start_s"])
    assert not a.flows["rtt_min_s"].equals(b.flows["rtt_min_s"])
    assert a.summary() != b.summary()
    fa = _files(a.save(tmp_path / "a", plot=False))
    fb = _files(b.save(tmp_path / "b", plot=False))
    assert fa["timeseries.parquet"] != fb["timeseries.parquet"]
    assert fa["flows.parquet"] != fb["flows.parquet"]


def test_seed_from_file_equals_seed_override(hetero_path):
    # hetero-rtt's file says seed = 1: passing seed=1 changes nothing in the data
    a = satqm.run(hetero_path, duration=DURATION)
    b = satqm.run(hetero_path, seed=1, duration=DURATION)
    for name in ("timeseries", "drops", "flows", "cwnd"):
        pdt.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)


def test_start_uniform_depends_on_seed(droptail_path):
    # dumbbell-droptail draws its start times from { uniform = ["0 s", "1 s"] }
    starts = {
        tuple(satqm.run(droptail_path, seed=s, duration=2).flows["start_s"]) for s in range(4)
    }
    assert len(starts) == 4
