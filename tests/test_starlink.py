"""satqm.leo.starlink: the Starlink-like schedule preset.

The schedule is reproducible by seed, its boundaries fall every 15 s at the
configured phase of the UTC minute, its spikes are exact steps, it writes a
CSV that reads back, and a 10-minute schedule's statistics fall within the
tolerances of the measurements they come from (placeholders only against the
preset's own parameters). Bad parameters are refused by name.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from satqm.leo import (
    StarlinkLike,
    starlink_schedule,
    starlink_statistics,
    write_starlink_schedule,
)
from satqm.leo.starlink import (
    COLUMNS,
    NS_PER_S,
    schedule_values,
    starlink_draws,
)

TEN_MIN_S = 600.0
#: A 10-minute schedule: 60 000 jitter slots plus one row at each end-spike start.
MAX_ROWS_10_MIN = 61_000
NO_JITTER = StarlinkLike(jitter_mean_abs_step_ms=0.0)


def _boundaries_s(df: pd.DataFrame, params: StarlinkLike) -> np.ndarray:
    """Times at which the loss rises to the boundary burst (the spike's start)."""
    burst = df["loss"].to_numpy() > params.downlink_loss
    rises = burst & ~np.r_[False, burst[:-1]]
    return df["time"].to_numpy()[rises]


def _delay_at(df: pd.DataFrame, t_s: float) -> float:
    """The delay in force at t_s (the step schedule's last row at or before it)."""
    k = np.searchsorted(df["time"].to_numpy(), t_s + 1e-12, side="right") - 1
    return float(df["delay"].to_numpy()[k])


def test_reproducible_by_seed():
    a = starlink_schedule(60, seed=7)
    b = starlink_schedule(60, seed=7)
    pd.testing.assert_frame_equal(a, b)
    c = starlink_schedule(60, seed=8)
    assert len(c) == len(a)
    assert not np.array_equal(a["delay"].to_numpy(), c["delay"].to_numpy())
    assert a.attrs["user_capacity_bps"] != c.attrs["user_capacity_bps"]


@pytest.mark.parametrize(
    ("start_s", "first_s"), [(0.0, 12.0), (50.0, 7.0), (12.0, 0.0), (57.5, 14.5)]
)
def test_boundaries_every_15_s_at_the_phase(start_s, first_s):
    df = starlink_schedule(TEN_MIN_S, seed=3, start_second_of_minute=start_s)
    b = _boundaries_s(df, StarlinkLike())
    assert b[0] == pytest.approx(first_s, abs=1e-9)
    np.testing.assert_allclose(np.diff(b), 15.0, atol=1e-9)
    assert len(b) == len(np.arange(first_s, TEN_MIN_S, 15.0))
    seconds_of_minute = np.round((start_s + b) % 60.0, 6)
    assert set(seconds_of_minute) <= {12.0, 27.0, 42.0, 57.0}
    # the rate changes at the boundaries and nowhere else
    rate = df["rate"].to_numpy()
    changes = df["time"].to_numpy()[1:][rate[1:] != rate[:-1]]
    np.testing.assert_allclose(changes, b[b > 0], atol=1e-9)


def test_phase_is_configurable():
    params = StarlinkLike(phase_s=3.0)
    b = _boundaries_s(starlink_schedule(60, seed=1, params=params), params)
    np.testing.assert_allclose(b, [3.0, 18.0, 33.0, 48.0], atol=1e-9)


def test_spike_is_exact_without_jitter():
    p = NO_JITTER
    df = starlink_schedule(TEN_MIN_S, seed=5, params=p, start_second_of_minute=50.0)
    for b in _boundaries_s(df, p)[1:-1]:
        base = _delay_at(df, b + 1.0)  # the interval's own delay, after the spike
        before = _delay_at(df, b - 1.0)  # the previous interval's
        for t in np.arange(b, b + p.spike_s - 1e-9, 0.01):
            assert _delay_at(df, t) - base == pytest.approx(p.spike_ms / 2000, abs=1e-12)
        assert _delay_at(df, b + p.spike_s) == base
        for t in (b - p.end_spike_s, b - 0.01):
            assert _delay_at(df, t) - before == pytest.approx(p.end_spike_ms / 2000, abs=1e-12)
        assert _delay_at(df, b - p.end_spike_s - 1e-6) == before


def test_spike_is_exact_with_jitter():
    """With jitter, the spike is exactly on top of the interval's base + jitter."""
    p = StarlinkLike()
    draws = starlink_draws(120, seed=2, params=p)
    df = starlink_schedule(120, seed=2, params=p)
    t_ns = np.round(df["time"].to_numpy() * NS_PER_S).astype(np.int64)
    interval = draws.interval_of(t_ns)
    slot = t_ns // draws.jitter_step_ns
    plain = np.maximum(draws.base_rtt_ms[interval] + draws.jitter_ms[slot], p.rtt_floor_ms)
    excess = 2000 * df["delay"].to_numpy() - plain
    b = draws.boundaries_ns[draws.boundaries_ns < draws.duration_ns]
    since = t_ns - b[np.clip(np.searchsorted(b, t_ns, side="right") - 1, 0, None)]
    spike = (t_ns >= b[0]) & (since < round(p.spike_s * NS_PER_S))
    np.testing.assert_allclose(excess[spike], p.spike_ms, atol=1e-9)
    assert spike.sum() == len(b) * 14  # 140 ms of 10 ms rows after each boundary
    np.testing.assert_array_equal(schedule_values(draws, p, t_ns)["delay"], df["delay"].to_numpy())


def test_losses_by_direction():
    p = StarlinkLike()
    df = starlink_schedule(60, seed=1, params=p)
    burst = df["loss"].to_numpy() > p.downlink_loss
    assert set(df["loss"][~burst]) == {p.downlink_loss}  # forward = downlink
    assert set(df["reverse_loss"][~burst]) == {p.uplink_loss}  # reverse = uplink
    inside = p.downlink_loss + p.boundary_loss - p.downlink_loss * p.boundary_loss
    np.testing.assert_allclose(df["loss"][burst], inside)


def _check_rows(stats: pd.DataFrame) -> None:
    checked = stats[stats["within"].notna()]
    bad = checked[~checked["within"].astype(bool)]
    assert bad.empty, bad[["statistic", "value", "reference", "tolerance"]].to_string()


def test_statistics_of_ten_minutes_at_seed_1():
    df = starlink_schedule(TEN_MIN_S, seed=1)
    stats = starlink_statistics(df)
    assert list(stats.columns[:2]) == ["statistic", "value"]
    assert {"reference", "tolerance", "source", "within"} <= set(stats.columns)
    _check_rows(stats)
    by = stats.set_index("statistic")["value"]
    assert by["period_s"] == pytest.approx(15.0, abs=0.01)
    assert by["boundary_phase_s"] == pytest.approx(12.0, abs=0.01)
    assert by["spike_duration_start_ms"] == pytest.approx(140.0, abs=10.0)
    assert by["background_loss_downlink"] == pytest.approx(1e-4)
    assert by["background_loss_uplink"] == pytest.approx(2e-3)
    # rows checked against the preset's own placeholders say so, in both columns
    own = stats["source"].str.startswith("placeholder")
    assert (own == stats["reference"].str.contains("(preset)", regex=False)).all()


@pytest.mark.parametrize(("seed", "start_s"), [(2, 0.0), (3, 50.0), (7, 33.3)])
def test_statistics_of_ten_minutes_other_seeds(seed, start_s):
    df = starlink_schedule(TEN_MIN_S, seed=seed, start_second_of_minute=start_s)
    _check_rows(starlink_statistics(df, capacity_runs=1000))


def test_placeholder_statistics_follow_the_preset():
    """Changed placeholders move their statistics with them (self-consistency)."""
    p = StarlinkLike(boundary_loss=0.3, capacity_sigma=0.5, end_spike_ms=0.0)
    stats = starlink_statistics(starlink_schedule(TEN_MIN_S, seed=4, params=p), capacity_runs=10)
    placeholder = stats[stats["source"].str.startswith("placeholder")]
    assert len(placeholder) >= 5
    _check_rows(placeholder)


def test_csv_reads_back(tmp_path):
    path = write_starlink_schedule(tmp_path / "starlink.csv", TEN_MIN_S, seed=1)
    text = path.read_text(encoding="utf-8")
    comments = [line for line in text.splitlines() if line.startswith("#")]
    assert "StarlinkLike" in comments[0]
    assert any("seed 1" in line for line in comments)
    assert any('interpolate = "step"' in line for line in comments)
    assert any(line.startswith("# param boundary_loss = ") for line in comments)
    back = pd.read_csv(path, comment="#")
    assert tuple(back.columns) == COLUMNS
    assert len(back) <= MAX_ROWS_10_MIN
    t = back["time"].to_numpy()
    assert t[0] == 0 and (np.diff(t) >= 0).all() and t[-1] < TEN_MIN_S
    assert back.iloc[0].notna().all()  # the first row sets every value
    full = back.ffill()
    assert (full["rate"] > 0).all()
    assert ((full["loss"] >= 0) & (full["loss"] < 1)).all()
    assert ((full["reverse_loss"] >= 0) & (full["reverse_loss"] < 1)).all()
    assert (full["delay"] >= 0).all() and full["delay"].notna().all()
    df = starlink_schedule(TEN_MIN_S, seed=1)
    np.testing.assert_allclose(full["time"], df["time"], atol=1e-9)
    np.testing.assert_allclose(full["delay"], df["delay"], atol=1e-9)
    np.testing.assert_allclose(full["rate"], df["rate"], atol=0.5)
    np.testing.assert_allclose(full["loss"], df["loss"], rtol=1e-10)
    # the statistics read the file as they read the DataFrame
    stats = starlink_statistics(back, capacity_runs=10)
    _check_rows(stats[~stats["statistic"].str.startswith("capacity_user")])


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"interval_s": -15.0}, "interval_s"),
        ({"interval_s": 0.0}, "interval_s"),
        ({"jitter_step_s": 0.0}, "jitter_step_s"),
        ({"spike_ms": -1.0}, "spike_ms"),
        ({"jitter_mean_abs_step_ms": float("nan")}, "jitter_mean_abs_step_ms"),
        ({"rtt_quantiles_ms": ((0, 20), (0.25, 40), (0.5, 30), (1, 80))}, "rtt_quantiles_ms"),
        ({"rtt_quantiles_ms": ((0, 20), (0.5, 40), (0.25, 50), (1, 80))}, "rtt_quantiles_ms"),
        ({"rtt_quantiles_ms": ((0.1, 20), (1, 80))}, "rtt_quantiles_ms"),
        ({"capacity_quantiles_bps": ((0, 0), (1, 1e6))}, "capacity_quantiles_bps"),
        ({"boundary_loss": 1.0}, "boundary_loss"),
        ({"downlink_loss": 1.5}, "downlink_loss"),
        ({"uplink_loss": -0.1}, "uplink_loss"),
        ({"user_capacity_bps": 0}, "user_capacity_bps"),
        ({"capacity_sigma": -0.3}, "capacity_sigma"),
        ({"spike_s": 10.0, "end_spike_s": 5.0}, "spike_s"),
        ({"stratified": "yes"}, "stratified"),
    ],
)
def test_bad_parameters_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        StarlinkLike(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"duration_s": -5.0}, "duration_s"),
        ({"duration_s": 0.0}, "duration_s"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"start_second_of_minute": 60.0}, "start_second_of_minute"),
    ],
)
def test_bad_arguments_are_named(kwargs, name):
    args = {"duration_s": 60.0, "seed": 1, **kwargs}
    with pytest.raises(ValueError, match=name):
        starlink_schedule(**args)


def test_given_user_capacity_and_lists():
    p = StarlinkLike(user_capacity_bps=50e6, rtt_quantiles_ms=[[0, 30], [1, 30]])
    assert p.rtt_quantiles_ms == ((0.0, 30.0), (1.0, 30.0))
    df = starlink_schedule(60, seed=1, params=replace(p, jitter_mean_abs_step_ms=0.0))
    assert df.attrs["user_capacity_bps"] == 50e6
    assert np.median(df["rate"]) == pytest.approx(50e6, rel=0.5)
    away = df[(df["loss"] == p.downlink_loss) & (df["time"] % 15 > 1) & (df["time"] % 15 < 11)]
    np.testing.assert_allclose(away["delay"], 0.015)
