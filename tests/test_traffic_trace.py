"""Delivered bytes over time per traffic entry (`simulation.trace_traffic`)."""

from __future__ import annotations

import numpy as np
import pytest
import satqm

#: Three classes on a 2 Mbit/s bottleneck: FTP bulk, CBR from 3 s, web mice.
CLASSES = """\
name = "classes"
[simulation]
duration = "20 s"
sample_interval = "300 ms"
trace_traffic = true
[topology]
kind = "dumbbell"
pairs = 4
[topology.access]
rate = "100 Mbps"
delay = "5 ms"
[topology.bottleneck]
rate = "2 Mbps"
delay = "20 ms"
buffer = 50
[[traffic]]
kind = "bulk"
pairs = [0, 1]
[[traffic]]
kind = "cbr"
pairs = 2
rate = "200 kbps"
packet_size = 500
start = "3 s"
[[traffic]]
kind = "web_mice"
pairs = 3
sessions = 20
pareto = { scale = "2 kB", shape = 1.3 }
think_mean = "1 s"
"""

KINDS = ["bulk", "cbr", "web_mice"]


@pytest.fixture(scope="module")
def res() -> satqm.Results:
    return satqm.run(satqm.Scenario(CLASSES))


def test_last_sample_matches_the_flows_table(res):
    tr = res.traffic
    n = 20_000 // 300
    assert len(tr) == 3 * n
    # At most what the bottleneck carries between the last sample (19.8 s)
    # and the end (20 s) is missing from the last sample.
    slack = 2e6 / 8 * 0.2
    for entry, kind in enumerate(KINDS):
        rows = tr[tr["traffic"] == entry]
        assert np.all(np.diff(rows["delivered_bytes"].to_numpy()) >= 0)
        last = int(rows["delivered_bytes"].iloc[-1])
        total = int(res.flows.loc[res.flows["kind"] == kind, "bytes_delivered"].sum())
        assert 0 < last <= total
        assert total - last <= slack, (kind, last, total)


def test_throughput_over_time(res):
    th = res.traffic_throughput()
    assert list(th.columns) == ["time_s", "traffic", "throughput_bps"]
    cbr = th[th["traffic"] == 1]
    # Nothing before the CBR source starts; its rate once it runs.
    assert (cbr.loc[cbr["time_s"] < 3.0, "throughput_bps"] == 0).all()
    goodput = res.flows.loc[res.flows["kind"] == "cbr", "goodput_bps"].sum()
    assert 150e3 < goodput < 200e3
    assert cbr.loc[cbr["time_s"] > 3.0, "throughput_bps"].mean() == pytest.approx(goodput, rel=0.02)
    # The rates add up to the bytes: each interval's rate times its length.
    for entry in range(3):
        g = th[th["traffic"] == entry]
        bytes_ = (g["throughput_bps"] * 0.3 / 8).sum()
        last = res.traffic.loc[res.traffic["traffic"] == entry, "delivered_bytes"].iloc[-1]
        assert bytes_ == pytest.approx(last, rel=1e-9)
    # The classes share the link: together they carry at most its rate
    # (in-order delivery is bursty after a loss, so not in every interval).
    total = th.groupby("time_s")["throughput_bps"].sum()
    assert 0.85 * 2e6 < total.mean() <= 2e6


def test_saved_and_loaded(res, tmp_path):
    res.save(tmp_path / "run", plot=False)
    assert (tmp_path / "run" / "traffic.parquet").exists()
    again = satqm.Results.load(tmp_path / "run")
    assert again.traffic.equals(res.traffic)


def test_off_by_default_writes_nothing_new(tmp_path):
    text = CLASSES.replace("trace_traffic = true\n", "")
    off = satqm.run(satqm.Scenario(text))
    assert len(off.traffic) == 0
    off.save(tmp_path / "run", plot=False)
    assert not (tmp_path / "run" / "traffic.parquet").exists()
    assert len(satqm.Results.load(tmp_path / "run").traffic) == 0
    with pytest.raises(ValueError, match="simulation.trace_traffic"):
        off.traffic_throughput()


def test_bad_value_names_the_key():
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(CLASSES.replace("trace_traffic = true", "trace_traffic = 1"))
    assert e.value.path == "simulation.trace_traffic"
    assert "must be true or false" in str(e.value)
