"""Links that change over time (``topology.LINK.schedule``): what a run does
with rate steps, outages and trace files, and how the files a scenario
names travel with it (loading, saving, sweeps).

The exact arithmetic (serialization across a step, a delay ramp's times,
each outage policy packet by packet) is tested in the core
(``net/schedule_tests.rs``); these tests run whole scenarios."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import satqm

BASE = """\
name = "sched"
[simulation]
duration = "{duration}"
seed = 3
[topology]
kind = "dumbbell"
pairs = 4
[topology.access]
rate = "100 Mbps"
delay = "1 ms"
[topology.bottleneck]
rate = "10 Mbps"
delay = "20 ms"
buffer = 100
[topology.bottleneck.schedule]
{schedule}
[[traffic]]
kind = "bulk"
"""


def scenario(schedule: str, duration: str = "30 s", **files: str) -> satqm.Scenario:
    text = BASE.format(schedule=schedule, duration=duration)
    return satqm.Scenario.from_toml(text, files=files or None)


def bottleneck(res: satqm.Results) -> pd.DataFrame:
    return res.link("bottleneck")


def test_a_rate_step_changes_what_the_link_carries_at_its_time():
    res = satqm.run(scenario('changes = [{ at = "15 s", rate = "5 Mbps" }]'))
    ts = bottleneck(res)
    before = ts.loc[(ts.index > 5) & (ts.index <= 15), "throughput_bps"]
    after = ts.loc[ts.index > 16, "throughput_bps"]
    # Saturated by four bulk flows: one 1,500-byte packet per 0.1 s
    # interval is 0.12 Mbit/s of sampling granularity.
    assert before.min() > 10e6 - 0.13e6 and before.max() < 10e6 + 0.13e6
    assert after.min() > 5e6 - 0.13e6 and after.max() < 5e6 + 0.13e6
    state = res.link_state[res.link_state["link"] == "bottleneck"]
    at = state[state["time_s"] == 15.0]
    assert list(at["rate_bps"]) == [5_000_000, 5_000_000]  # the change, the sample
    assert (state.loc[state["time_s"] < 15, "rate_bps"] == 10_000_000).all()
    # Both directions change; the reverse link's rows say so too.
    rev = res.link_state[res.link_state["link"] == "bottleneck.reverse"]
    assert rev.loc[rev["time_s"] > 15, "rate_bps"].eq(5_000_000).all()


def test_an_outage_loses_what_is_in_flight_and_sends_nothing():
    res = satqm.run(
        scenario('changes = [{ at = "10 s", up = false }, { at = "12 s", up = true }]', "20 s")
    )
    drops = res.drops[res.drops["reason"] == "outage"]
    # The default policy: the queue waits, what is on the link is lost,
    # at the moment the link goes down (both directions).
    assert len(drops) > 0
    assert set(drops["time_s"]) == {10.0}
    ts = bottleneck(res)
    assert (ts.loc[(ts.index > 10.05) & (ts.index < 12), "throughput_bps"] == 0).all()
    assert ts.loc[(ts.index > 10.05) & (ts.index <= 12), "queue_packets"].max() > 0
    assert ts.loc[ts.index > 14, "throughput_bps"].mean() > 9e6
    state = res.link_state[res.link_state["link"] == "bottleneck"]
    down = state[~state["up"]]
    assert down["time_s"].min() == 10.0 and down["time_s"].max() < 12.0


def test_an_outage_can_drop_the_queue_and_what_arrives():
    res = satqm.run(
        scenario(
            'changes = [{ at = "10 s", up = false }, { at = "12 s", up = true }]\n'
            'outage = { queued = "drop", in_flight = "deliver" }',
            "20 s",
        )
    )
    drops = res.drops[(res.drops["reason"] == "outage") & (res.drops["link"] == "bottleneck")]
    assert (drops["time_s"] == 10.0).sum() > 0  # the queue, at once
    later = drops[drops["time_s"] > 10.0]
    assert len(later) > 0 and later["time_s"].max() < 12.0  # arrivals while down
    ts = bottleneck(res)
    assert ts.loc[(ts.index > 10.05) & (ts.index <= 12), "queue_packets"].max() == 0


def test_a_trace_file_round_trips(tmp_path):
    rng = np.random.default_rng(5)
    times = np.arange(0.0, 20.0, 2.5)
    trace = pd.DataFrame(
        {
            "time": times,
            "rate": rng.integers(2, 20, len(times)) * 1e6,
            "delay": rng.integers(10, 60, len(times)) / 1e3,
        }
    )
    (tmp_path / "sat.csv").write_text("# a test trace\n" + trace.to_csv(index=False))
    text = BASE.format(schedule='trace = "sat.csv"', duration="20 s")
    (tmp_path / "s.toml").write_text(text)
    res = satqm.run(satqm.load(tmp_path / "s.toml"))
    st = res.link_state[res.link_state["link"] == "bottleneck"]
    for row in trace.itertuples():
        at = st[st["time_s"] == row.time].iloc[0]
        assert at["rate_bps"] == round(row.rate)
        assert at["delay_s"] == pytest.approx(row.delay, abs=1e-9)
    # Saved and loaded, the run carries its trace and runs again alike.
    res.save(tmp_path / "out", plot=False)
    back = satqm.Results.load(tmp_path / "out")
    assert back.scenario.files == {"sat.csv": (tmp_path / "sat.csv").read_text()}
    pd.testing.assert_frame_equal(back.link_state, res.link_state)
    again = satqm.run(back.scenario).summary()
    for k, v in res.summary().items():
        assert again[k] == v or (np.isnan(v) and np.isnan(again[k])), k


def test_a_linear_trace_ramps_the_delay(tmp_path):
    csv = "time,delay\n0,0.020\n10,0.040\n"
    res = satqm.run(scenario('trace = "s.csv"\ninterpolate = "linear"', "10 s", **{"s.csv": csv}))
    st = res.link_state[res.link_state["link"] == "bottleneck"]
    mid = st[st["time_s"] == 5.0].iloc[0]
    assert mid["delay_s"] == pytest.approx(0.030, abs=1e-9)


def test_a_missing_trace_is_refused_naming_the_key(tmp_path):
    text = BASE.format(schedule='trace = "nowhere.csv"', duration="5 s")
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(satqm.ConfigError) as e:
        satqm.load(tmp_path / "s.toml")
    assert e.value.path == "topology.bottleneck.schedule.trace"
    assert "nowhere.csv" in str(e.value) and "cannot read" in str(e.value)


def test_bad_schedules_are_refused_naming_the_key():
    with pytest.raises(satqm.ConfigError) as e:
        scenario('changes = [{ at = "5 s", rate = "0 Mbps" }]')
    assert e.value.path == "topology.bottleneck.schedule.changes[0].rate"
    with pytest.raises(satqm.ConfigError) as e:
        scenario('trace = "t.csv"', **{"t.csv": "time,rate\n3,1e6\n1,1e6\n"})
    assert e.value.path == "topology.bottleneck.schedule.trace"
    assert "t.csv line 3" in str(e.value)


def test_avq_follows_the_link_rate():
    text = (
        BASE.format(schedule='changes = [{ at = "10 s", rate = "4 Mbps" }]', duration="20 s")
        + '[[aqm]]\nkind = "avq"\nat = "bottleneck"\nmode = "mark"\n'
    )
    res = satqm.run(satqm.Scenario.from_toml(text))
    ts = bottleneck(res)
    # The virtual capacity never exceeds the link's capacity, which fell.
    assert ts.loc[ts.index > 10.0, "aqm_vcap_bps"].max() <= 4e6
    assert ts.loc[(ts.index > 5) & (ts.index <= 10), "aqm_vcap_bps"].max() > 4e6


def test_a_sweep_carries_the_trace_to_its_runs(tmp_path):
    (tmp_path / "sat.csv").write_text("time,rate\n0,8e6\n2,4e6\n")
    text = BASE.format(schedule='trace = "sat.csv"', duration="4 s")
    (tmp_path / "s.toml").write_text(text)
    out = satqm.sweep(
        tmp_path / "s.toml",
        {"topology.bottleneck.buffer": [50, 100]},
        out=tmp_path / "sweep",
        workers=1,
    )
    assert out.ok and len(out) == 2


ROUTED = """\
name = "handover"
[simulation]
duration = "30 s"
seed = 3
[topology]
kind = "dumbbell"
pairs = 2
[topology.access]
rate = "100 Mbps"
delay = "1 ms"
[topology.bottleneck]
rate = "10 Mbps"
delay = "20 ms"
buffer = 100
[[topology.alternates]]
rate = "10 Mbps"
delay = "40 ms"
buffer = 100
[[topology.route_changes]]
at = "10 s"
via = "alternate[0]"
[[topology.route_changes]]
at = "20 s"
via = "bottleneck"
[[traffic]]
kind = "bulk"
"""


def test_a_route_change_moves_the_traffic_at_its_time():
    res = satqm.run(satqm.Scenario.from_toml(ROUTED))
    main, alt = res.link("bottleneck"), res.link("alternate[0]")
    assert alt.loc[alt.index <= 10, "throughput_bps"].max() == 0
    assert alt.loc[(alt.index > 10.1) & (alt.index <= 20), "throughput_bps"].mean() > 9e6
    # The old path drains what it held, then carries nothing until the
    # traffic comes back.
    assert main.loc[(main.index > 10.2) & (main.index <= 20), "throughput_bps"].max() == 0
    assert main.loc[main.index > 20.2, "throughput_bps"].mean() > 9e6
    assert alt.loc[alt.index > 20.2, "throughput_bps"].max() == 0
    # The ACKs move too (the reverse of the path carrying the data).
    back = res.link("alternate[0].reverse")
    assert back.loc[(back.index > 10.1) & (back.index <= 20), "throughput_bps"].min() > 0


def test_a_leo_path_plays_at_the_generators_delays(tmp_path):
    """The bent-pipe schedule of satqm.leo, played by the core: the delay a
    packet gets at each grid time is the generator's, within 1 µs
    (interpolated linearly between grid times, jumping at handovers)."""
    from datetime import datetime, timezone

    from satqm.leo import Constellation, GroundPoint, Shell, bent_pipe

    epoch = datetime(2024, 3, 1, tzinfo=timezone.utc)
    shell = Shell(altitude_km=550, inclination_deg=53, planes=72, per_plane=22, phasing=17)
    path = bent_pipe(
        Constellation.walker(shell, epoch),
        GroundPoint("terminal", 47.6, -122.3),
        GroundPoint("gateway", 46.9, -119.3),
        epoch,
        duration_s=60,
        policy="interval",
    )
    path.write_schedule(tmp_path / "leo.csv", rate=20e6)
    text = BASE.format(schedule='trace = "leo.csv"\ninterpolate = "linear"', duration="60 s")
    (tmp_path / "s.toml").write_text(text)
    res = satqm.run(satqm.load(tmp_path / "s.toml"))
    st = res.link_state[res.link_state["link"] == "bottleneck"].drop_duplicates(
        "time_s", keep="last"
    )
    want = path.table.set_index("time")["delay_s"]
    got = st.set_index("time_s")["delay_s"]
    common = [t for t in want.index if t in got.index and t > 0]
    assert len(common) >= 50
    handovers = set(path.handovers["time"])
    for t in common:
        if t not in handovers:
            assert abs(got[t] - want[t]) < 1e-6, t
    assert (st["rate_bps"] == 20_000_000).all()


def test_an_acm_schedule_plays_its_rates(tmp_path):
    from satqm.leo import AcmSchedule, rain_fade

    # A fast, deep synthetic fade: a dozen MODCODs and two outages.
    fade = rain_fade(duration_s=60, step_s=1.0, median_db=8.0, sigma_ln=0.6, beta_per_s=0.1, seed=0)
    acm = AcmSchedule.from_attenuation(
        fade.times_s, fade.values, clear_sky_esn0_db=12.0, symbol_rate_baud=5e6, margin_db=1.0
    )
    acm.write_schedule(tmp_path / "acm.csv")
    text = BASE.format(schedule='trace = "acm.csv"', duration="60 s")
    (tmp_path / "s.toml").write_text(text)
    res = satqm.run(satqm.load(tmp_path / "s.toml"))
    st = res.link_state[res.link_state["link"] == "bottleneck"].drop_duplicates(
        "time_s", keep="last"
    )
    got = st.set_index("time_s")
    table = acm.table.set_index("time")
    assert acm.summary()["outages"] >= 1 and table["rate_bps"].nunique() > 5
    for t, row in table.iterrows():
        if t in got.index and row["up"]:
            assert got.loc[t, "rate_bps"] == round(row["rate_bps"]), t
        if t in got.index:
            assert bool(got.loc[t, "up"]) == bool(row["up"]), t


def test_a_mahimahi_trace_serves_at_its_opportunities():
    # Two opportunities a millisecond for 500 ms, then one at 1,000 ms (the
    # last line, where the trace repeats): 1,001 opportunities of 1,504
    # bytes a second on average, 24.064 Mbit/s while it serves.
    # A 30 Mbit/s constant-rate source keeps packets waiting at all times.
    lines = [str(ms) for ms in range(1, 501) for _ in range(2)] + ["1000"]
    text = BASE.format(schedule='mahimahi = "up.trace"', duration="20 s").replace(
        'kind = "bulk"', 'kind = "cbr"\npairs = [0]\nrate = "30 Mbps"\npacket_size = 1500'
    )
    sc = satqm.Scenario.from_toml(text, files={"up.trace": "\n".join(lines) + "\n"})
    res = satqm.run(sc)
    ts = bottleneck(res)
    busy = ts.loc[ts.index > 5, "throughput_bps"]
    # 1,500-byte packets in 1,504-byte opportunities, each using what the
    # one before left: every byte of every opportunity carries data.
    assert busy.mean() == pytest.approx(1001 * 1504 * 8, rel=1e-3)
    on = busy[[(t % 1.0) < 0.45 and (t % 1.0) > 0.05 for t in busy.index]]
    off = busy[[(t % 1.0) > 0.65 and (t % 1.0) < 0.95 for t in busy.index]]
    assert on.min() > 20e6 and off.max() == 0
    st = res.link_state[(res.link_state["link"] == "bottleneck") & (res.link_state["time_s"] > 1)]
    # What the trace offered over each 0.1 s sample interval.
    assert set(st["rate_bps"]) <= {0, 24_064_000, 120_320}


def test_a_schedule_that_changes_nothing_changes_no_result():
    """Changes that set the values the link already has: the run is the
    fixed link's, bit for bit (the scheduled path serializes and delays
    each packet exactly as the fixed one does)."""
    fixed = satqm.run(scenario('changes = [{ at = "1 s", loss = 0 }]', "20 s"))
    text = BASE.format(schedule="", duration="20 s").replace(
        "[topology.bottleneck.schedule]\n\n", ""
    )
    plain = satqm.run(satqm.Scenario.from_toml(text))
    noop = satqm.run(
        scenario(
            'changes = [{ at = "5 s", rate = "10 Mbps", delay = "20 ms" }, '
            '{ at = "10 s", rate = "10 Mbps" }]',
            "20 s",
        )
    )
    for res in (fixed, noop):
        pd.testing.assert_frame_equal(res.flows, plain.flows)
        pd.testing.assert_frame_equal(res.drops, plain.drops)
        pd.testing.assert_frame_equal(res.timeseries, plain.timeseries)


def test_a_capture_notes_each_change_of_the_link():
    from test_capture import read

    sc = scenario(
        'changes = [{ at = "2 s", rate = "5 Mbps" }, { at = "3 s", up = false }, '
        '{ at = "3.5 s", up = true }]',
        "5 s",
    ).with_overrides(capture=["bottleneck"])
    res = satqm.run(sc)
    frames = read(res.captures["bottleneck"])
    noted = [f for f in frames if f.comment and "the link is" in f.comment]
    assert noted and noted[0].ts_ns >= 2_000_000_000
    text = " | ".join(f.comment for f in noted)
    assert "at 2.000000000 s the link is 5000000 bit/s, delay 20000000 ns, loss 0, up" in text
    # The outage and the return come together on the first packet after it.
    assert "at 3.000000000 s the link is 5000000 bit/s" in text and ", down; " in text
    assert all(not (3.0e9 <= f.ts_ns < 3.5e9) for f in frames)


@pytest.mark.parametrize("aqm", ["fq_codel", "dualpi2"])
def test_an_outage_drops_what_a_queue_discipline_holds(aqm):
    """A discipline that schedules by itself gives its packets up to an
    outage that drops the queue."""
    text = (
        BASE.format(
            schedule='changes = [{ at = "5 s", up = false }, { at = "6 s", up = true }]\n'
            'outage = { queued = "drop" }',
            duration="10 s",
        )
        + f'[[aqm]]\nkind = "{aqm}"\nat = "bottleneck"\n'
    )
    res = satqm.run(satqm.Scenario.from_toml(text))
    d = res.drops[(res.drops["reason"] == "outage") & (res.drops["link"] == "bottleneck")]
    assert (d["time_s"] == 5.0).sum() > 0
    ts = res.link("bottleneck")
    assert ts.loc[(ts.index > 5.05) & (ts.index < 6), "queue_packets"].max() == 0
    assert ts.loc[ts.index > 8, "throughput_bps"].mean() > 5e6
    p = res.packets
    assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"]


def test_a_link_that_starts_down_sends_nothing_until_up():
    res = satqm.run(
        scenario('changes = [{ at = "0 s", up = false }, { at = "2 s", up = true }]', "6 s")
    )
    st = res.link_state[res.link_state["link"] == "bottleneck"]
    assert not st[st["time_s"] < 2]["up"].any() and st[st["time_s"] >= 2]["up"].all()
    ts = bottleneck(res)
    assert (ts.loc[ts.index < 2, "throughput_bps"] == 0).all()
    assert ts.loc[ts.index > 4, "throughput_bps"].mean() > 5e6
