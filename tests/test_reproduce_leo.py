"""`satqm reproduce leo`, quick: the AQMs and TCPs on a Starlink-like LEO
path against a fixed link of the same mean rate and delay."""

from __future__ import annotations

import pandas as pd
import pytest
from satqm.experiments import leo


@pytest.mark.slow
def test_leo_quick(tmp_path):
    report = leo.reproduce(tmp_path, quick=True, workers=2)
    text = report.read_text()
    for f in ("aqm.md", "tcp.md", "runs.csv", "links.json", "schedules/starlink-s1.csv"):
        assert (tmp_path / f).exists(), f
    df = pd.read_csv(tmp_path / "runs.csv")
    assert len(df) == 2 * (len(leo.AQMS) + len(leo.TCPS))
    a = df[df.part == "aqm"].set_index(["name", "link"])
    # The fixed link is what the papers' AQMs were designed for: each holds
    # its queue there at high utilization.
    for name in ("avq", "avqred", "codel", "pie"):
        assert a.loc[(name, "fixed"), "utilization"] > 0.8, name
    # On the LEO path, AVQRED that follows the link's rate keeps its queue
    # low; with the capacity its paper fixes, a fall of the capacity leaves
    # its virtual queue too fast and the real queue grows.
    assert (
        a.loc[("avqred", "leo"), "qdelay_p95_ms"]
        < 0.5 * a.loc[("avqred-fixed", "leo"), "qdelay_p95_ms"]
    )
    # Drop-tail fills its 500 packets; CoDel holds the delay near its target.
    assert (
        a.loc[("codel", "leo"), "qdelay_p95_ms"] < 0.5 * a.loc[("droptail", "leo"), "qdelay_p95_ms"]
    )
    t = df[df.part == "tcp"]
    assert set(t.name) == set(leo.TCPS) and (t.goodput_mbps > 0).all()
    assert "## TCP across the boundaries" in text and "## AQMs on the LEO path" in text
