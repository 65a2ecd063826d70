"""The public Python API: load, run, step, look at results, save and load them."""

from __future__ import annotations

import io
import json
import math
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
import satqm
from conftest import TINY
from satqm import _core

SHORT = 20.0  # seconds simulated in the example runs


def _without(table, names):
    """An Arrow table without the columns ``names`` (``Table.select``, which
    the oldest pyarrow the requirements allow has; ``drop_columns`` came
    later)."""
    return table.select([c for c in table.column_names if c not in names])


@pytest.fixture(scope="module")
def droptail(droptail_path) -> satqm.Results:
    return satqm.run(droptail_path, duration=SHORT)


# ----- scenarios ---------------------------------------------------------------


def test_load_example(droptail_path):
    sc = satqm.load(droptail_path)
    assert isinstance(sc, satqm.Scenario)
    assert sc.name == "dumbbell-droptail"
    assert sc.seed == 1
    assert sc.duration == pytest.approx(120.0)
    assert sc.flows == 3
    assert sc.sample_interval == pytest.approx(0.1)
    assert sc.warmup == 0.0
    assert sc.path == droptail_path
    assert sc.text == droptail_path.read_text(encoding="utf-8")
    assert sc.data["topology"]["pairs"] == 3
    assert sc.overrides == {}
    assert "dumbbell-droptail" in repr(sc)


def test_from_toml_and_overrides():
    sc = satqm.Scenario.from_toml(TINY)
    assert (sc.name, sc.seed, sc.duration, sc.flows) == ("tiny", 1, 3.0, 2)
    o = sc.with_overrides(seed=7)
    assert (o.seed, o.duration) == (7, 3.0)
    o2 = o.with_overrides(duration=1.5)
    assert (o2.seed, o2.duration) == (7, 1.5)
    assert o2.overrides == {"seed": 7, "duration": 1.5}
    assert o2.text == sc.text  # the text is never rewritten
    assert sc.with_overrides() is sc
    assert satqm.Scenario.from_toml(TINY, seed=7) == o
    assert satqm.Scenario.from_toml(TINY) != o


def test_bad_override_is_config_error():
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(TINY, duration=-1)
    assert e.value.path == "simulation.duration"
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(TINY, seed=-3)
    assert (e.value.path, e.value.rule) == ("simulation.seed", "must be >= 0")
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(TINY, seed=2**64)
    assert e.value.path == "simulation.seed"
    with pytest.raises(satqm.ConfigError):
        satqm.Scenario.from_toml(TINY, seed=1.5)  # type: ignore[arg-type]


def test_warmup_override():
    """`warmup=` replaces simulation.warmup wherever `duration=` is taken; a
    duration not longer than the file's warm-up blames the duration."""
    text = TINY.replace('duration = "3 s"', 'duration = "3 s"\nwarmup = "2 s"')
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text, duration=1.5)
    assert e.value.path == "simulation.duration"
    assert "warm-up (simulation.warmup = 2 s)" in e.value.rule and "warmup=" in e.value.rule
    assert e.value.warmup_s == 2.0
    sc = satqm.Scenario.from_toml(text, duration=1.5, warmup=0.5)
    assert (sc.duration, sc.warmup) == (1.5, 0.5)
    assert sc.overrides == {"duration": 1.5, "warmup": 0.5}
    assert satqm.Scenario.from_toml(text).with_overrides(duration=1.5, warmup=0.5) == sc
    assert sc.with_overrides(seed=4).warmup == 0.5  # kept
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text, warmup=3)
    assert (e.value.path, e.value.rule) == (
        "simulation.warmup",
        "must be less than simulation.duration",
    )
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text, warmup="1 s")  # type: ignore[arg-type]
    assert e.value.path == "simulation.warmup"
    res = satqm.run(satqm.Scenario.from_toml(text), duration=1.5, warmup=0.5)
    assert res.scenario.warmup == 0.5
    assert res.summary()["measured_s"] == pytest.approx(1.0)
    assert satqm.Simulation(satqm.Scenario.from_toml(text), warmup=0).scenario.warmup == 0.0


def test_warmup_override_round_trips_through_a_results_folder(tmp_path):
    text = TINY.replace('duration = "3 s"', 'duration = "3 s"\nwarmup = "2 s"')
    res = satqm.run(satqm.Scenario.from_toml(text, duration=1.5, warmup=0.5))
    out = res.save(tmp_path / "run", plot=False)
    doc = json.loads((out / "summary.json").read_text())
    assert doc["overrides"] == {"duration_s": 1.5, "warmup_s": 0.5}
    assert "--duration 1.5 --warmup 0.5" in (out / "scenario.toml").read_text()
    back = satqm.Results.load(out)
    assert back.scenario == res.scenario and back.scenario.warmup == 0.5


def test_config_error_shape_and_pickle():
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(TINY.replace('rate = "10 Mbps"', "rate = 0"))
    err = e.value
    assert isinstance(err, ValueError)
    assert err.path == "topology.bottleneck.rate"
    assert err.rule == "must be > 0"
    assert str(err) == "topology.bottleneck.rate: must be > 0"
    # Sweeps run in worker processes: the error must survive pickling.
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is satqm.ConfigError
    assert (back.path, back.rule) == (err.path, err.rule)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        satqm.load(tmp_path / "nope.toml")


def test_public_names():
    assert satqm.__version__ == _core.__version__
    assert issubclass(satqm.ConfigError, ValueError)
    assert issubclass(satqm.SimulationError, RuntimeError)
    for name in satqm.__all__:
        assert hasattr(satqm, name)


# ----- results -----------------------------------------------------------------


def test_timeseries_columns_and_dtypes(droptail):
    ts = droptail.timeseries
    assert list(ts.columns) == [
        "time_s",
        "link",
        "utilization",
        "throughput_bps",
        "queue_packets",
        "queue_bytes",
        "queue_delay_ms",
        "drops",
        "arrivals",
        "marks",
    ]
    assert ts["time_s"].dtype == np.float64
    assert isinstance(ts["link"].dtype, pd.CategoricalDtype)
    assert list(ts["link"].cat.categories) == droptail.links
    for c in ("queue_packets", "queue_bytes", "drops"):
        assert ts[c].dtype == np.int64
    assert len(ts) > 0
    # one row per monitored link per sample, every 100 ms up to the end
    b = droptail.link()
    assert b.index[0] == pytest.approx(0.1)
    assert b.index[-1] == pytest.approx(SHORT)
    assert len(b) == round(SHORT / 0.1)
    assert np.all(np.diff(b.index.to_numpy()) > 0)


def test_utilization_in_unit_interval(droptail):
    u = droptail.timeseries["utilization"]
    assert u.between(0.0, 1.0 + 1e-12).all()
    s = droptail.summary()
    assert 0.0 <= s["utilization_mean"] <= 1.0
    assert 0.0 < s["jain_index"] <= 1.0 + 1e-12


def test_drops_frame(droptail):
    d = droptail.drops
    assert list(d.columns) == ["time_s", "link", "flow", "index", "reason", "data", "size"]
    assert isinstance(d["link"].dtype, pd.CategoricalDtype)
    assert isinstance(d["reason"].dtype, pd.CategoricalDtype)
    assert list(d["reason"].cat.categories) == droptail.drop_reasons
    assert "overflow" in droptail.drop_reasons
    assert d["data"].dtype == bool
    assert len(d) > 0, "an 800-packet buffer overflows in slow start"
    assert set(d["reason"]) <= set(droptail.drop_reasons)
    assert (d["size"] > 0).all()
    assert d["time_s"].is_monotonic_increasing
    assert len(d) == droptail.packets["dropped"]
    assert droptail.summary()["drops_total"] == len(d)


def test_flows_and_cwnd_frames(droptail):
    f = droptail.flows
    assert len(f) == 3
    assert list(f["flow"]) == [0, 1, 2]
    for c in ("flow", "pair", "bytes_delivered", "segments_sent", "retransmits", "timeouts"):
        assert f[c].dtype == np.int64
    assert set(f["kind"]) == {"bulk"}
    assert (f["bytes_delivered"] > 0).all()
    # The aggregate is what all flows delivered over the measurement window
    # (no warm-up here); per-flow goodput is over each flow's own lifetime.
    s = droptail.summary()
    total = f["bytes_delivered"].sum() * 8 / (s["duration_s"] - s["warmup_s"])
    assert s["goodput_total_bps"] == pytest.approx(total)
    assert f["completion_s"].isna().all()  # unlimited transfers never complete

    c = droptail.cwnd
    assert list(c.columns) == [
        "time_s",
        "flow",
        "cwnd_bytes",
        "ssthresh_bytes",
        "delivered_bytes",
        "pacing_rate_bps",
        "cc_state",
        "pacing_gain",
        "cwnd_gain",
        "bw_estimate_bps",
        "min_rtt_s",
    ]
    assert set(c["flow"]) == {0}  # trace_cwnd = [0]
    assert (c["cwnd_bytes"] > 0).all()
    # NewReno, unpaced: no controller state.
    assert (c["cc_state"] == "none").all() and c["pacing_rate_bps"].isna().all()


def test_summary_keys_and_copy(droptail):
    s = droptail.summary()
    for k in (
        "utilization_mean",
        "utilization_std",
        "throughput_mean_bps",
        "queue_mean_packets",
        "queue_std_packets",
        "drops_total",
        "goodput_total_bps",
        "jain_index",
        "bottleneck_packets",
        "events",
    ):
        assert k in s, k
        assert isinstance(s[k], float)
    s["utilization_mean"] = -1.0
    assert droptail.summary()["utilization_mean"] != -1.0
    assert droptail.seed == 1
    assert droptail.scenario.name == "dumbbell-droptail"
    assert droptail.wall_time_s is not None and droptail.wall_time_s > 0
    assert droptail.duration == SHORT


def test_packet_conservation(droptail):
    p = droptail.packets
    assert set(p) == {"created", "delivered", "dropped", "in_flight"}
    assert p["created"] > 0
    assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"]


def test_conservation_in_every_step():
    sim = satqm.Simulation(satqm.Scenario.from_toml(TINY))
    while not sim.finished:
        sim.run_until(sim.now + 0.25)
        p = sim.results().packets
        assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"]


def test_link_helper(droptail):
    b = droptail.link("bottleneck")
    assert b.index.name == "time_s"
    assert "link" not in b.columns
    with pytest.raises(KeyError, match="no link"):
        droptail.link("nowhere")


# ----- stepping ----------------------------------------------------------------


def _assert_same(a: satqm.Results, b: satqm.Results) -> None:
    for name in ("timeseries", "delay_hist", "drops", "flows", "cwnd"):
        pdt.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    assert a.summary() == b.summary() or _nan_equal(a.summary(), b.summary())
    assert a.packets == b.packets
    assert a.links == b.links


def _nan_equal(x: dict, y: dict) -> bool:
    return x.keys() == y.keys() and all(
        (x[k] == y[k]) or (x[k] != x[k] and y[k] != y[k]) for k in x
    )


def test_stepwise_equals_run(droptail_path):
    whole = satqm.run(droptail_path, duration=SHORT)
    sim = satqm.Simulation(droptail_path, duration=SHORT)
    assert (sim.now, sim.end, sim.finished) == (0.0, SHORT, False)
    # uneven steps, including ones that land exactly on sample times
    t = 0.0
    for step in (0.05, 0.1, 0.333, 1.0, 0.1, 2.7):
        t += step
        assert sim.run_until(t) == pytest.approx(t)
        assert sim.now == pytest.approx(t)
    while not sim.finished:
        sim.run_until(sim.now + 1.7)
    assert sim.now == pytest.approx(SHORT)
    assert sim.run_until(SHORT + 100) == pytest.approx(SHORT)  # clamped to the end
    stepped = sim.results()
    _assert_same(whole, stepped)
    assert stepped.summary()["events"] == sim.events


def test_run_until_rejects_bad_times():
    sim = satqm.Simulation(satqm.Scenario.from_toml(TINY))
    for t in (float("nan"), float("inf"), -1.0):
        with pytest.raises(ValueError):
            sim.run_until(t)


def test_results_mid_run_then_continue():
    sim = satqm.Simulation(satqm.Scenario.from_toml(TINY))
    sim.run_until(1.0)
    mid = sim.results()
    assert mid.timeseries["time_s"].max() == pytest.approx(1.0)
    sim.run()
    assert sim.finished
    assert len(sim.results().timeseries) > len(mid.timeseries)


def test_progress_bar_writes_to_console():
    from rich.console import Console

    buf = io.StringIO()
    res = satqm.run(satqm.Scenario.from_toml(TINY), progress=Console(file=buf, width=120))
    assert "tiny" in buf.getvalue()
    _assert_same(res, satqm.run(satqm.Scenario.from_toml(TINY)))


def test_run_accepts_scenario_and_path(droptail_path):
    a = satqm.run(satqm.load(droptail_path), seed=5, duration=5)
    b = satqm.run(str(droptail_path), seed=5, duration=5)
    assert a.seed == b.seed == 5
    _assert_same(a, b)
    with pytest.raises(TypeError):
        satqm.run(42)  # type: ignore[arg-type]


# ----- files -------------------------------------------------------------------


def test_save_load_round_trip(droptail, tmp_path):
    out = droptail.save(tmp_path / "run", plot=True)
    names = {p.name for p in out.iterdir()}
    assert names == {
        "timeseries.parquet",
        "delay_hist.parquet",
        "drops.parquet",
        "flows.parquet",
        "cwnd.parquet",
        "congestion.parquet",
        "summary.json",
        "run.json",
        "scenario.toml",
        "plot.png",
    }
    assert not [n for n in names if n.endswith(".tmp")]
    assert (out / "plot.png").read_bytes().startswith(b"\x89PNG")

    doc = json.loads((out / "summary.json").read_text())
    assert doc["seed"] == 1
    assert doc["scenario"] == "dumbbell-droptail"
    assert doc["satqm_version"] == satqm.__version__
    assert doc["summary"]["utilization_mean"] == droptail.summary()["utilization_mean"]
    assert "wall_time_s" not in json.dumps(doc)
    assert json.loads((out / "run.json").read_text())["wall_time_s"] > 0

    text = (out / "scenario.toml").read_text()
    assert text.endswith(droptail.scenario.text)
    assert "seed = 1" in text.splitlines()[0] and "duration = 20 s" in text.splitlines()[0]

    back = satqm.Results.load(out)
    _assert_same(droptail, back)
    assert back.scenario == droptail.scenario
    assert back.scenario.duration == SHORT
    assert back.seed == droptail.seed
    assert back.wall_time_s == pytest.approx(droptail.wall_time_s)
    # saving what was loaded writes the same files
    again = back.save(tmp_path / "again", plot=False)
    for name in satqm.results.DETERMINISTIC_FILES:
        assert (again / name).read_bytes() == (out / name).read_bytes(), name


def test_saved_scenario_runs_again(droptail, tmp_path):
    out = droptail.save(tmp_path / "r", plot=False)
    assert not (out / "plot.png").exists()
    rerun = satqm.run(satqm.load(out / "scenario.toml"), duration=SHORT)
    _assert_same(droptail, rerun)


def test_round_trip_with_no_drops_and_no_cwnd(tmp_path):
    text = TINY.replace("buffer = 20", "buffer = 100000").replace("trace_cwnd = [0, 1]\n", "")
    res = satqm.run(satqm.Scenario.from_toml(text), duration=0.5)
    assert len(res.drops) == 0 and len(res.cwnd) == 0
    back = satqm.Results.load(res.save(tmp_path / "r", plot=False))
    _assert_same(res, back)
    assert list(back.drops["reason"].cat.categories) == res.drop_reasons


def test_plot_figure(droptail):
    fig = droptail.plot()
    axes = fig.get_axes()
    assert len(axes) == 3
    assert "utilization" in axes[0].get_ylabel() and "%" in axes[0].get_ylabel()
    assert "packets" in axes[1].get_ylabel()
    # the queue also as the delay it makes
    assert axes[2].get_ylabel() == "queueing delay (ms)"
    assert len(axes[2].get_lines()[0].get_xdata()) == len(droptail.link())
    assert "(s)" in axes[2].get_xlabel()


QUEUE_DELAY = [f"queue_delay_{k}_ms" for k in ("mean", "p50", "p95", "p99", "max")]


def test_queue_delay_summary_and_distribution(droptail):
    s = droptail.summary()
    for k in QUEUE_DELAY:
        assert isinstance(s[k], float) and s[k] >= 0.0, k
    p50, p95, p99, top = (s[f"queue_delay_{k}_ms"] for k in ("p50", "p95", "p99", "max"))
    assert p50 <= p95 <= p99 <= top
    assert s["queue_delay_mean_ms"] <= top
    # An 800-packet buffer on 10 Mbit/s fills in slow start: at most
    # 800 packets of 1,500 bytes wait ahead of one (1.2 ms each).
    assert 100.0 < top <= 800 * 1.2
    # The distribution holds every packet the bottleneck sent (no warm-up
    # here), and reads the summary's percentiles.
    cdf = droptail.delay_cdf()
    assert list(cdf.columns) == ["delay_lo_ns", "delay_hi_ns", "packets", "fraction"]
    assert cdf["packets"].sum() == s["bottleneck_packets"]
    assert cdf["fraction"].iloc[-1] == 1.0 and cdf["fraction"].is_monotonic_increasing
    for q in (50, 95, 99):
        got = min(droptail.delay_quantile(q / 100), top)
        assert got == s[f"queue_delay_p{q}_ms"], q
    # Every monitored link has its distribution.
    assert set(droptail.delay_hist["link"]) == set(droptail.timeseries["link"])
    assert droptail.delay_cdf("bottleneck.reverse")["packets"].sum() > 0
    with pytest.raises(KeyError, match="not monitored"):
        droptail.delay_cdf("access[0]")


def test_queue_delay_of_l4s_and_classic_packets(droptail, tmp_path):
    # No ECT(1) packet: every row counts all packets, the L4S distribution
    # is empty and the classic one is the whole.
    assert set(droptail.delay_hist["packets_of"]) == {"all"}
    assert droptail.delay_cdf(packets="l4s").empty
    assert math.isnan(droptail.delay_quantile(0.99, packets="l4s"))
    assert droptail.delay_cdf(packets="classic")["packets"].sum() == (
        droptail.delay_cdf()["packets"].sum()
    )
    with pytest.raises(ValueError, match="packets"):
        droptail.delay_cdf(packets="ect1")
    # One Prague (ECT(1)) and one CUBIC flow on a FIFO: the two classes
    # add up to every packet, bucket by bucket.
    text = (Path(satqm.__file__).parent / "scenarios" / "l4s" / "coexistence.toml").read_text()
    text = text.replace('[[aqm]]\nkind = "dualpi2"\nat = "bottleneck"\n', "")
    assert "dualpi2" not in text
    r = satqm.run(satqm.Scenario.from_toml(text, duration=10, warmup=2))
    every = r.delay_cdf()
    l4s, classic = r.delay_cdf(packets="l4s"), r.delay_cdf(packets="classic")
    assert len(l4s) and len(classic)
    assert l4s["packets"].sum() + classic["packets"].sum() == every["packets"].sum()
    # Saved and loaded, and a folder written before the column loads.
    out = r.save(tmp_path / "r", plot=False)
    back = satqm.Results.load(out)
    assert back.delay_quantile(0.99, packets="l4s") == r.delay_quantile(0.99, packets="l4s")
    import pyarrow.parquet as pq

    t = pq.read_table(out / "delay_hist.parquet")
    pq.write_table(_without(t, ["packets_of"]), out / "delay_hist.parquet")
    old = satqm.Results.load(out)
    assert set(old.delay_hist["packets_of"]) == {"all"}


def test_queue_delay_time_series(droptail):
    b = droptail.link()
    d = b["queue_delay_ms"]
    # A mean over the packets that left the buffer in the interval: there
    # is one exactly when the transmitter started sending in it.
    assert (d.notna() == (b["throughput_bps"] > 0)).all()
    assert (d.dropna() >= 0).all()
    s = droptail.summary()
    assert d.max() <= s["queue_delay_max_ms"]
    assert d.min() <= s["queue_delay_mean_ms"] <= d.max()
    # An 800-packet buffer fills in slow start: then a packet waits for
    # about as many 1.2 ms transmissions as the queue holds.
    assert d.max() > 0.5 * b["queue_packets"].max() * 1.2


def test_old_folders_without_queue_delay_load(droptail, tmp_path):
    # Folders written before the queueing delay was measured.
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = droptail.save(tmp_path / "old", plot=False)
    (out / "delay_hist.parquet").unlink()
    ts = pq.read_table(out / "timeseries.parquet")
    pq.write_table(_without(ts, ["queue_delay_ms"]), out / "timeseries.parquet")
    assert isinstance(ts, pa.Table)
    back = satqm.Results.load(out)
    assert back.timeseries["queue_delay_ms"].isna().all()
    assert back.delay_hist.empty and back.delay_cdf().empty
    back.plot()
    back.plot_delay()


def test_old_folders_without_cc_columns_load(droptail, tmp_path):
    # Folders written before the window trace showed the pacing rate and
    # the congestion control's state.
    import pyarrow.parquet as pq

    out = droptail.save(tmp_path / "old", plot=False)
    cw = pq.read_table(out / "cwnd.parquet")
    new = ["pacing_rate_bps", "cc_state", "pacing_gain", "cwnd_gain"]
    new += ["bw_estimate_bps", "min_rtt_s"]
    pq.write_table(_without(cw, new), out / "cwnd.parquet")
    back = satqm.Results.load(out)
    assert list(back.cwnd.columns) == list(droptail.cwnd.columns)
    assert (back.cwnd["cc_state"] == "none").all()
    assert back.cwnd["pacing_rate_bps"].isna().all()
    assert list(back.cwnd["cc_state"].cat.categories) == satqm.results.CC_STATES


@pytest.mark.parametrize(("cc", "startup_gain"), [("bbr", 739 / 256), ("bbr3", 4 * math.log(2))])
def test_bbr_state_in_the_window_trace(tmp_path, cc, startup_gain):
    # BBR's state, gains and pacing rate are traced, and survive a save.
    text = TINY.replace('recovery = "newreno"', f'recovery = "sack"\ncc = "{cc}"')
    assert f'cc = "{cc}"' in text
    res = satqm.run(satqm.Scenario.from_toml(text))
    cw = res.cwnd
    assert list(cw["cc_state"].cat.categories) == satqm.results.CC_STATES
    assert "startup" in set(cw["cc_state"].astype(str))
    paced = cw["pacing_rate_bps"].dropna()
    assert len(paced) and (paced > 0).all()
    gains = cw.loc[cw["cc_state"] == "startup", "pacing_gain"]
    assert len(gains) and np.allclose(gains, startup_gain)
    back = satqm.Results.load(res.save(tmp_path / cc, plot=False))
    assert back.cwnd.equals(cw)


def test_bom_is_tolerated(tmp_path):
    p = tmp_path / "bom.toml"
    p.write_bytes(b"\xef\xbb\xbf" + TINY.encode())
    assert satqm.load(p).name == "tiny"


def test_stub_matches_compiled_module():
    """_core.pyi lists exactly what the compiled module provides."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(_core.__file__).with_name("_core.pyi").read_text())
    top: set[str] = set()
    sim_members: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        if isinstance(node, ast.ClassDef) and node.name == "Simulation":
            sim_members = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} - {
                "__new__"
            }
    public = {n for n in top if not n.startswith("_") or n == "__version__"}
    runtime = {n for n in dir(_core) if not n.startswith("_") or n == "__version__"}
    assert public == runtime
    runtime_sim = {n for n in dir(_core.Simulation) if not n.startswith("_")}
    assert sim_members == runtime_sim


def test_parse_quantity_reads_units_as_scenarios_do():
    assert _core.parse_quantity("290 ms", "time") == pytest.approx(0.29)
    assert _core.parse_quantity("10 Mbps", "rate") == 10e6
    assert _core.parse_quantity("64 KiB", "bytes") == 65536.0
    assert _core.parse_quantity("1500 B", "bytes") == 1500.0
    assert _core.parse_quantity(0, "bytes") == 0.0
    with pytest.raises(satqm.ConfigError) as e:
        _core.parse_quantity(1500, "bytes", "pep[0].buffer")
    assert e.value.path == "pep[0].buffer"
    assert e.value.rule == '1500 has no unit; write "1500 B" or "1.5 kB"'
    with pytest.raises(satqm.ConfigError) as e:
        _core.parse_quantity("10 furlongs", "time", "links[0].delay")
    assert e.value.path == "links[0].delay"
    with pytest.raises(ValueError):
        _core.parse_quantity("1 s", "speed")
    with pytest.raises(satqm.ConfigError):
        _core.parse_quantity(True, "time")


def test_results_before_the_warmup_report_no_measurement(tmp_path):
    sc = satqm.Scenario.from_toml(TINY.replace("[simulation]", '[simulation]\nwarmup = "2 s"'))
    sim = satqm.Simulation(sc)
    sim.run_until(1.0)
    res = sim.results()
    s = res.summary()
    assert s["measured_s"] == 0.0
    assert math.isnan(s["goodput_total_bps"])  # not inf
    assert not res.measured
    assert "no measurement yet" in repr(res)
    back = satqm.Results.load(res.save(tmp_path / "r", plot=False))
    assert math.isnan(back.summary()["goodput_total_bps"])
    assert not back.measured
    sim.run()
    assert sim.results().measured


def test_the_bottleneck_is_the_link_the_summary_describes(tmp_path):
    # The IP-over-satellite gateway's bottleneck is its transmit queue.
    text = (Path(satqm.__file__).parent / "scenarios" / "avqred" / "conference.toml").read_text()
    sc = satqm.Scenario(text.replace('warmup = "200 s"', 'warmup = "10 s"'), duration=30)
    res = satqm.run(sc)
    assert res.bottleneck == "transmit"
    lk = res.link()
    measured = lk[lk.index > 10.0]
    assert measured["utilization"].mean() == pytest.approx(res.summary()["utilization_mean"])
    assert satqm.Results.load(res.save(tmp_path / "r", plot=False)).bottleneck == "transmit"


def test_a_run_shorter_than_one_sample_interval_saves_and_plots(tmp_path):
    sc = satqm.Scenario.from_toml(TINY.replace('duration = "3 s"', 'duration = "50 ms"'))
    res = satqm.run(sc)
    assert res.timeseries.empty
    assert res.link().empty
    out = res.save(tmp_path / "r")  # draws plot.png
    assert (out / "plot.png").stat().st_size > 0
    assert satqm.Results.load(out).timeseries.empty
    with pytest.raises(KeyError, match="no link named"):
        res.link("nowhere")


def test_old_scenario_names_forward_with_a_warning():
    import satqm.scenario

    with pytest.warns(DeprecationWarning, match="use satqm.run"):
        assert satqm.scenario.run is satqm.run
    with pytest.warns(DeprecationWarning, match="use satqm.Simulation"):
        assert satqm.scenario.Simulation is satqm.Simulation
    with pytest.raises(AttributeError):
        satqm.scenario.nothing  # noqa: B018


def test_a_full_disk_leaves_no_partial_run_folder(tmp_path, monkeypatch):
    import errno

    import satqm.results as results_mod

    res = satqm.run(satqm.Scenario.from_toml(TINY))
    real = results_mod._write_parquet
    calls = []

    def full_after_two(path, df):
        calls.append(path)
        if len(calls) > 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, df)

    monkeypatch.setattr(results_mod, "_write_parquet", full_after_two)
    out = tmp_path / "run"
    with pytest.raises(OSError) as e:
        res.save(out, plot=False)
    assert e.value.errno == errno.ENOSPC
    assert not out.exists()
    # Into a folder that was there: only what this save wrote goes.
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    calls.clear()
    with pytest.raises(OSError):
        res.save(out, plot=False)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_scenario_text_where_a_path_is_expected_says_what_to_do(droptail_path):
    # A path never holds a line break; a scenario's text does. Passing the
    # text to satqm.run() used to fail with "File name too long".
    text = droptail_path.read_text()
    with pytest.raises(ValueError, match=r"Scenario\.from_toml"):
        satqm.run(text)
    # The text through from_toml runs.
    assert satqm.Scenario.from_toml(text, duration=1.0).name == "dumbbell-droptail"
