"""RED+Tail parallel virtual queues from Python: the pvq2003 scenario runs,
its columns exist and add up, bad parameters raise ConfigError naming the
key, and the Fig. 21 comparison runs end to end (shortened)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import satqm
from satqm.experiments import _pvq_fig21 as f21

VQ_COLUMNS = [
    "aqm_min_th",
    "aqm_max_th",
    "aqm_pd_avg",
    "aqm_vq1_packets",
    "aqm_vq2_packets",
    "aqm_vq1_bytes",
    "aqm_vq2_bytes",
    "aqm_vq1_rate_bps",
    "aqm_vq2_rate_bps",
    "aqm_vq1_arrived_bytes",
    "aqm_vq2_arrived_bytes",
    "aqm_vq1_delay_s",
    "aqm_vq2_delay_s",
]


@pytest.fixture(scope="module")
def run20():
    text = f21.scenario_for(20, duration=30.0, warmup=10.0)
    return satqm.run(satqm.Scenario.from_toml(text))


def test_scenario_file_with_red_tail_runs_and_its_columns_exist(run20):
    ts = run20.link("bottleneck")
    for c in VQ_COLUMNS:
        assert c in ts.columns
    later = ts[ts.index > 10]
    for c in ("aqm_vq2_packets", "aqm_vq1_rate_bps", "aqm_vq2_rate_bps", "aqm_min_th"):
        assert later[c].notna().all(), c
    # One physical buffer: the port's queue is the two virtual queues.
    assert (ts.queue_packets == ts.aqm_vq1_packets + ts.aqm_vq2_packets).all()
    assert (ts.queue_bytes == ts.aqm_vq1_bytes + ts.aqm_vq2_bytes).all()
    assert np.allclose(ts.aqm_vq1_rate_bps + ts.aqm_vq2_rate_bps, 6e6)
    # Dynamic thresholds keep D = maxth2 - minth2 = 60 packets.
    assert np.allclose(later.aqm_max_th - later.aqm_min_th, 60.0)
    assert (later.aqm_vq1_arrived_bytes > 0).any()
    assert (later.aqm_vq2_arrived_bytes > 0).mean() > 0.9
    # Links without RED+Tail have NaN there.
    other = run20.timeseries[run20.timeseries.link != "bottleneck"]
    assert other.aqm_vq1_packets.isna().all()
    # Drops are logged with reasons; RED drops only FTP packets.
    d = run20.drops.merge(run20.flows[["flow", "kind"]], on="flow")
    early = d[d.reason == "early_drop"]
    assert len(early) > 0 and set(early.kind.astype(str)) == {"bulk"}
    assert "web_mice" in set(run20.flows.kind.astype(str))
    # Per-flow delivered bytes never decrease.
    cw = run20.cwnd.sort_values(["flow", "time_s"])
    assert (cw.groupby("flow").delivered_bytes.diff().dropna() >= 0).all()


def test_scenario_for_sets_n_and_s():
    text = f21.scenario_for(40, web_mice=False, duration=50, warmup=10)
    info = satqm.Scenario.from_toml(text)
    assert "to = 39" in text and "web_mice" not in text
    assert f21.update_interval(40) == pytest.approx(0.40133, rel=1e-4)
    assert 'update_interval = "0.401333333 s"' in text
    assert info.duration == 50
    with pytest.raises(ValueError):
        f21.scenario_for(41)


def _with(extra: str) -> str:
    return f21.scenario_for(20, duration=5, warmup=1).replace(
        "gamma = 0.05", f"gamma = 0.05\n{extra}"
    )


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ("bogus = 1", "aqm[0].bogus"),
        ('c1_min = "-5 Mbps"', "aqm[0].c1_min"),
        ("w_p = nan", "aqm[0].w_p"),
        ('classifier = "size"', "aqm[0].classifier"),
        ('droptail_kinds = ["elephants"]', "aqm[0].droptail_kinds[0]"),
    ],
)
def test_bad_red_tail_parameters_name_the_key(extra, path):
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(_with(extra))
    assert e.value.path == path


def test_fig21_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setattr(f21, "QUICK_DURATION", 40.0)
    monkeypatch.setattr(f21, "QUICK_WARMUP", 15.0)
    table = f21.fig21(tmp_path, quick=True, workers=1)
    for name in ("fig21.png", "fig21_agreement.csv", "fig21_inputs.csv", "fig21.md", "fig21.json"):
        assert (tmp_path / name).exists()
    cols = ["N", "distribution", "W_bar", "mean_pkts", "std_pkts", "tv", "ks"]
    assert list(table.columns) == cols
    assert len(table) == 10  # per N: empirical + 2 models x 2 values of W
    assert set(table.N) == {20, 40}
    assert table.tv.between(0, 1).all() and table.ks.between(0, 1).all()
    assert (table.std_pkts > 0).all()
    inp = table.attrs["inputs"]
    for r in inp.itertuples():
        assert 3e6 < r.C2_bps < 6.1e6
        assert r.sigma_bps > 0 and r.W_bar_bits > 0
        assert math.isclose(r.S_s, r.N * 6.02e4 / 6e6)


def test_fig21_models_agree_with_each_other():
    # With S = RTT, f'(q_e) is near 0 and the chain is nearly the Gaussian
    # of eq. (21): a check of the plumbing, independent of the simulation.
    m = {"N": 20, "S_s": f21.update_interval(20), "C2_bps": 6e6, "sigma_bps": 77021.0}
    mod = f21.models(m, f21.W_PAPER_BITS)
    assert abs(mod["f_prime_q_e"]) < 1e-9
    tv, ks = f21.distances(mod["markov_chain"], mod["gaussian"])
    assert tv < 0.05 and ks < 0.03
    mean, std = f21.moments(mod["gaussian"])
    assert mean == pytest.approx(102.5 - 0.5, abs=0.6)  # q_e = N W - d C, binned at floor
    assert std == pytest.approx(8.64, abs=0.05)


PVQ_DIR = Path(__file__).resolve().parents[1] / "scenarios" / "pvq2003"


@pytest.mark.parametrize("path", sorted(PVQ_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_pvq2003_scenarios_validate(path):
    text = path.read_text()
    assert satqm.Scenario.from_toml(text).duration > 0
    if "section4" in path.stem:
        # The Adaptive RED baseline its header describes.
        head = text[: text.index("\n[[aqm]]\n") + 1]
        ared = (
            '[[aqm]]\nkind = "ared"\nmin_th = 20\nmax_th = 80\nalpha = 0.01\nbeta = 0.9\n'
            "mean_packet_size = 1000\n"
        )
        assert satqm.Scenario.from_toml(head + ared).duration == 300
