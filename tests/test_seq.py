"""Sequence records (`simulation.trace_seq`), the time-sequence graph and
the notebook views."""

from __future__ import annotations

import copy
import struct
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import satqm
from satqm.cli import main

#: Two SACK flows through a 20-packet buffer: drops, retransmissions, SACK.
TRACED = """\
name = "traced"
[simulation]
duration = "12 s"
trace_seq = [0]
trace_cwnd = [0]
capture = ["access[0]"]
[topology]
kind = "dumbbell"
pairs = 2
[topology.access]
rate = "100 Mbps"
delay = "5 ms"
[topology.bottleneck]
rate = "2 Mbps"
delay = "100 ms"
buffer = 20
[tcp]
recovery = "sack"
[[traffic]]
kind = "bulk"
"""


@pytest.fixture(scope="module")
def res() -> satqm.Results:
    return satqm.run(satqm.Scenario(TRACED))


def _rows(res, event):
    s = res.seq
    return s[(s["flow"] == 0) & (s["event"] == event)]


def test_only_the_traced_flow_is_recorded(res):
    assert set(res.seq["flow"]) == {0}
    assert set(res.seq["event"]) == {"sent", "retransmitted", "acked", "sacked", "dropped"}
    sent, retx = _rows(res, "sent"), _rows(res, "retransmitted")
    assert len(sent) + len(retx) == res.flows.loc[0, "segments_sent"]
    assert len(retx) == res.flows.loc[0, "retransmits"]
    # New data is contiguous; resent data is below the highest byte sent.
    np.testing.assert_array_equal(sent["seq"].to_numpy()[1:], sent["end"].to_numpy()[:-1])
    drops = res.drops[(res.drops["flow"] == 0) & res.drops["data"]]
    np.testing.assert_allclose(_rows(res, "dropped")["time_s"], drops["time_s"], rtol=0, atol=0)


def test_sack_blocks_equal_those_in_the_capture(res):
    dpkt = pytest.importorskip("dpkt")
    from test_capture import read

    frames = read(res.captures["access[0].reverse"])
    blocks = []
    for f in frames:
        for kind, val in dpkt.tcp.parse_opts(f.l4.opts):
            if kind == dpkt.tcp.TCP_OPT_SACK:
                b = struct.unpack(f">{len(val) // 4}I", val)
                blocks += [(left - 1, right - 1) for left, right in zip(b[::2], b[1::2])]
    sacked = _rows(res, "sacked")
    assert len(blocks) > 10
    assert blocks == list(zip(sacked["seq"], sacked["end"]))
    # Data leaves the sender when satqm says it does, or later if it waits
    # for its access link.
    sent = [(f.ts_ns, f.l4.seq - 1) for f in read(res.captures["access[0]"]) if f.payload > 0]
    rec = res.seq[(res.seq["flow"] == 0) & res.seq["event"].isin(["sent", "retransmitted"])]
    lag = np.array([t for t, _ in sent]) - np.round(rec["time_s"].to_numpy() * 1e9)
    assert [s for _, s in sent] == rec["seq"].tolist()
    assert lag.min() == 0 and (lag >= 0).all()


def test_seq_graph_shows_a_retransmission_at_each_drop(res, tmp_path):
    fig = res.plot_seq(0)
    ax = fig.axes[0]
    by_label = {c.get_label(): c for c in ax.collections}
    drops = by_label["dropped in the network"].get_offsets()
    retx = by_label["retransmitted"].get_segments()
    assert len(drops) == len(_rows(res, "dropped")) > 3
    for t, lo in drops:
        later = [s for s in retx if s[0][0] > t and abs(s[0][1] - lo) < 1e-12]
        assert later, f"no retransmission of the segment dropped at {t:.3f} s"
    sent = by_label["sent"].get_segments()
    assert len(sent) == len(_rows(res, "sent"))
    # The window panel shows the traced congestion window.
    assert [ln.get_label() for ln in fig.axes[1].lines] == ["cwnd", "ssthresh"]


def test_untraced_flow_is_refused(res):
    with pytest.raises(
        ValueError, match=r"flow 1 has no sequence records: .*trace_seq \(traced flows: 0\)"
    ):
        res.plot_seq(1)


def test_a_simulated_connection_is_one_way_and_a_real_one_draws_its_busier_way(res):
    from satqm.plots import seq_graph_data

    assert set(res.seq["way"]) == {0}
    # A connection whose rows are mostly of way 1 (as a real download's
    # would be) draws way 1 unless asked for way 0.
    both = copy.copy(res)
    flipped = res.seq.assign(way=1)
    few = res.seq[res.seq["event"] == "sent"].head(3)
    both.seq = pd.concat([flipped, few], ignore_index=True)
    assert len(seq_graph_data(both, 0)["sent"]) == len(_rows(res, "sent"))
    assert len(seq_graph_data(both, 0, way=0)["sent"]) == 3
    with pytest.raises(ValueError, match="way: must be 0 or 1"):
        seq_graph_data(both, 0, way=2)


def test_cli_plot_seq_and_cwnd(res, tmp_path, capsys):
    res.save(tmp_path / "run", plot=False)
    assert (tmp_path / "run" / "seq.parquet").exists()
    again = satqm.Results.load(tmp_path / "run")
    assert again.seq.equals(res.seq)
    assert main(["plot", "seq", str(tmp_path / "run"), "--flow", "0"]) == 0
    assert (tmp_path / "run" / "seq-flow0.png").stat().st_size > 10_000
    assert main(["plot", "cwnd", str(tmp_path / "run"), "--out", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").exists()
    assert main(["plot", "seq", str(tmp_path / "run"), "--flow", "1"]) == 2
    assert "--flow 1: flow 1 has no sequence records" in capsys.readouterr().err
    assert main(["plot", "seq", str(tmp_path), "--flow", "0"]) == 2
    assert "not a results folder" in capsys.readouterr().err


def test_results_show_themselves_in_a_notebook(res):
    page = res._repr_html_()
    assert "<table>" in page and "utilization_mean" in page
    assert "data:image/png;base64," in page


def test_sweeps_show_their_tables(tmp_path):
    base = satqm.Scenario(TRACED.replace('capture = ["access[0]"]\n', ""), duration=1.0)
    sweep = satqm.Sweep(base, grid={"topology.bottleneck.buffer": [10, 20]})
    page = sweep._repr_html_()
    assert page.count("<tr") == 3 and "topology.bottleneck.buffer" in page
    done = sweep.run(tmp_path / "sw", workers=0, progress=False)
    page = done._repr_html_()
    assert page.count("<tr") == 3 and "goodput_total_bps" in page and "done" in page


def test_import_satqm_leaves_matplotlib_out():
    code = "import sys, satqm; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
