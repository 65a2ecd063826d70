"""Drop-clustering measures on hand-made drop logs and on a real run."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import satqm
from satqm.analysis import drop_clustering


def log(rows):
    df = pd.DataFrame(rows, columns=["time_s", "link", "flow", "index", "reason"])
    df["link"] = df["link"].astype("category")
    df["reason"] = df["reason"].astype("category")
    return df


def test_runs_of_consecutive_indices():
    # indices 10, 11, 12 | 20 | 30, 31 at "q"; one drop elsewhere and one mark ignored
    d = log(
        [
            (0.01, "q", 1, 10, "early_drop"),
            (0.02, "q", 2, 11, "early_drop"),
            (0.03, "q", 3, 12, "forced_drop"),
            (0.50, "q", 1, 20, "early_drop"),
            (1.20, "q", 4, 30, "overflow"),
            (1.21, "q", 4, 31, "overflow"),
            (1.30, "other", 4, 32, "overflow"),
            (1.40, "q", 5, 33, "early_mark"),
        ]
    )
    c = drop_clustering(d, "q", bin_s=0.1, window_s=1.0, end_s=2.0)
    assert c.drops == 6
    assert c.runs == 3
    assert c.max_run == 3
    assert c.mean_run == 2.0
    assert c.clustered_fraction == pytest.approx(5 / 6)
    # 20 bins of 0.1 s: counts 3, 0, 0, 0, 0, 1, 0, ..., 2 (bin 12), 0...
    counts = [3, 0, 0, 0, 0, 1] + [0] * 6 + [2] + [0] * 7
    m = sum(counts) / 20
    var = sum((x - m) ** 2 for x in counts) / 20
    assert c.dispersion == pytest.approx(var / m)
    # window [0, 1): flows 1, 2, 3 -> 3; window [1, 2): flow 4 -> 1
    assert c.flows_per_window_mean == 2.0
    assert c.flows_per_window_max == 3


def test_no_drops_gives_nan():
    c = drop_clustering(log([]), "q")
    assert c.drops == 0 and math.isnan(c.mean_run)


def test_bad_windows_are_refused():
    with pytest.raises(ValueError):
        drop_clustering(log([]), "q", bin_s=0)


def test_on_a_real_run_counts_match_the_summary(tiny_text):
    res = satqm.run(satqm.Scenario.from_toml(tiny_text.replace("pairs = 2", "pairs = 10")
                                             .replace("trace_cwnd = [0, 1]", "")), duration=20)
    c = drop_clustering(res.drops, "bottleneck")
    assert c.drops == res.summary()["drops_bottleneck"] > 0
    assert 1 <= c.runs <= c.drops
    assert 1 <= c.flows_per_window_max <= 10
