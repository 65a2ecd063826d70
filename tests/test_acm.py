"""satqm.leo.acm: the DVB-S2 MODCOD table, ACM selection (margin,
hysteresis), fade traces to a step link schedule, the synthetic rain fade."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from satqm.leo import (
    MODCODS,
    AcmSchedule,
    acm_rate,
    modcod,
    rain_fade,
    read_fade_trace,
    select_modcod,
)
from satqm.leo.acm import K_BCH_NORMAL

MODULATIONS = ("QPSK", "8PSK", "16APSK", "32APSK")
RATES = ("1/4", "1/3", "2/5", "1/2", "3/5", "2/3", "3/4", "4/5", "5/6", "8/9", "9/10")


def names(idx) -> list:
    return [None if i < 0 else MODCODS[i].name for i in np.atleast_1d(idx)]


# --- the table -------------------------------------------------------------


def test_the_table_has_the_28_modcods_of_dvb_s2_in_order():
    assert len(MODCODS) == 28
    assert [m.name for m in MODCODS] == (
        [f"QPSK {r}" for r in RATES]
        + [f"8PSK {r}" for r in ("3/5", "2/3", "3/4", "5/6", "8/9", "9/10")]
        + [f"16APSK {r}" for r in ("2/3", "3/4", "4/5", "5/6", "8/9", "9/10")]
        + [f"32APSK {r}" for r in ("3/4", "4/5", "5/6", "8/9", "9/10")]
    )
    assert MODCODS[0].table_efficiency == 0.490243 and MODCODS[0].esn0_db == -2.35
    assert MODCODS[-1].table_efficiency == 4.453027 and MODCODS[-1].esn0_db == 16.05


@pytest.mark.parametrize("modulation", MODULATIONS)
def test_efficiency_and_threshold_rise_with_the_code_rate(modulation):
    rows = [m for m in MODCODS if m.modulation == modulation]
    rates = [RATES.index(m.code_rate) for m in rows]
    assert rates == sorted(rates)
    effs = [m.table_efficiency for m in rows]
    thrs = [m.esn0_db for m in rows]
    assert all(a < b for a, b in zip(effs, effs[1:]))
    assert all(a < b for a, b in zip(thrs, thrs[1:]))


@pytest.mark.parametrize("m", MODCODS, ids=lambda m: m.name)
def test_the_framing_reproduces_the_tables_efficiency(m):
    # (K_BCH - 80-bit BBHEADER) / (90-symbol PLHEADER + 64800 / bits per symbol)
    n_symbols = 90 + 64800 // m.bits_per_symbol
    assert m.plframe_symbols() == n_symbols
    assert m.efficiency() == pytest.approx((K_BCH_NORMAL[m.code_rate] - 80) / n_symbols)
    assert abs(m.efficiency() - m.table_efficiency) < 1e-6
    # The efficiency is below the modulation's bits times the code rate.
    num, den = map(int, m.code_rate.split("/"))
    assert m.efficiency() < m.bits_per_symbol * num / den


def test_pilots_add_36_symbols_after_every_16_slots():
    blocks = {"QPSK": 22, "8PSK": 14, "16APSK": 11, "32APSK": 8}
    for m in MODCODS:
        extra = m.plframe_symbols(pilots=True) - m.plframe_symbols()
        assert extra == 36 * blocks[m.modulation], m.name
        assert m.efficiency(pilots=True) == pytest.approx(
            m.efficiency() * m.plframe_symbols() / m.plframe_symbols(pilots=True)
        )
    assert modcod("QPSK 1/4").plframe_symbols(pilots=True) == 33282


def test_modcods_are_found_by_name():
    assert modcod("8psk_3/5") is MODCODS[11]
    assert modcod(" 32APSK-9/10 ") is MODCODS[-1]
    with pytest.raises(ValueError, match="name: unknown MODCOD '64APSK 9/10'"):
        modcod("64APSK 9/10")


# --- selection ---------------------------------------------------------------


@pytest.mark.parametrize("margin_db", [0.0, 1.5])
def test_a_modcod_is_taken_exactly_at_its_threshold_plus_margin(margin_db):
    m = modcod("QPSK 1/2")
    at = m.esn0_db + margin_db
    below = np.nextafter(at, -np.inf)
    assert names(select_modcod([at, below], margin_db)) == ["QPSK 1/2", "QPSK 2/5"]
    assert acm_rate(at, 1e6, margin_db) == pytest.approx(m.efficiency() * 1e6)
    # The lowest: below it the link is down, rate 0.
    low = MODCODS[0].esn0_db + margin_db
    assert acm_rate(low, 1e6, margin_db) == pytest.approx(MODCODS[0].efficiency() * 1e6)
    assert acm_rate(low - 1e-9, 1e6, margin_db) == 0.0
    assert names(select_modcod(low - 1e-9, margin_db)) == [None]


def test_the_most_efficient_closing_modcod_wins():
    # At 6.5 dB QPSK 9/10 (6.42) closes and is more efficient than 8PSK 3/5
    # (5.50); QPSK 8/9 (6.20) is less efficient than 8PSK 3/5 and never taken.
    esn0 = np.array([5.6, 6.3, 6.5, 12.8, 13.0, 30.0])
    assert names(select_modcod(esn0)) == [
        "8PSK 3/5",
        "8PSK 3/5",
        "QPSK 9/10",
        "32APSK 3/4",  # 12.73: more efficient than 16APSK 8/9 (12.89)
        "32APSK 3/4",
        "32APSK 9/10",
    ]
    sweep = np.linspace(-5, 20, 2001)
    assert "QPSK 8/9" not in names(select_modcod(sweep))
    rate = acm_rate(sweep, 1e6)
    assert np.all(np.diff(rate) >= 0)


def test_selection_is_vectorised_and_keeps_the_shape():
    esn0 = np.array([[0.0, 5.0], [10.0, 20.0]])
    rate = acm_rate(esn0, 2e6, pilots=True)
    assert rate.shape == (2, 2)
    for x, r in zip(esn0.ravel(), rate.ravel()):
        assert r == acm_rate(float(x), 2e6, pilots=True)
    assert isinstance(acm_rate(3.0, 1e6), float)


def test_a_subset_of_modcods_restricts_the_choice():
    esn0 = [0.0, 5.0, 9.0, 20.0]
    got = select_modcod(esn0, modcods=["QPSK 1/2", "QPSK 3/4", "8PSK 2/3"])
    assert names(got) == [None, "QPSK 3/4", "8PSK 2/3", "8PSK 2/3"]


def test_hysteresis_switches_down_at_once_and_up_late():
    h = 0.5
    up_at = modcod("QPSK 1/2").esn0_db + h  # 1.5 dB
    # A rising then falling ramp around QPSK 1/2's threshold (1.00 dB).
    esn0 = [0.5, 0.99, 1.0, 1.2, 1.49, up_at, 1.2, 1.0, 0.999, 1.2, 1.49]
    got = names(select_modcod(esn0, hysteresis_db=h))
    assert got == [
        "QPSK 2/5",  # starts as a switch up: 0.5 >= -0.30 + 0.5
        "QPSK 2/5",
        "QPSK 2/5",  # 1/2 closes at 1.0 but is taken only at 1.5
        "QPSK 2/5",
        "QPSK 2/5",
        "QPSK 1/2",  # exactly threshold + hysteresis
        "QPSK 1/2",  # kept on the way down while it closes
        "QPSK 1/2",
        "QPSK 2/5",  # down at once below 1.00
        "QPSK 2/5",
        "QPSK 2/5",
    ]
    # Without hysteresis: the plain rule at every sample.
    assert names(select_modcod(esn0)) == ["QPSK 2/5" if x < 1.0 else "QPSK 1/2" for x in esn0]


def test_hysteresis_skips_over_several_modcods_down_and_up_from_an_outage():
    h = 1.0
    esn0 = [12.0, -5.0, -2.35, -1.35, 12.0]
    got = names(select_modcod(esn0, margin_db=0.0, hysteresis_db=h))
    # 12 dB with 1 dB of hysteresis: the best with threshold <= 11 dB is
    # 16APSK 3/4 (10.21 dB), not 16APSK 4/5 (11.03 dB); down to no MODCOD at
    # once; up again to QPSK 1/4 only at -2.35 + 1 dB.
    assert got == ["16APSK 3/4", None, None, "QPSK 1/4", "16APSK 3/4"]
    with pytest.raises(ValueError, match="esn0_db must be a 1-D series"):
        select_modcod(np.zeros((2, 2)), hysteresis_db=h)


# --- schedules -----------------------------------------------------------


def read_schedule(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, comment="#", dtype={"rate": "Float64"})


def test_the_schedule_has_one_row_per_change_and_up_0_where_the_link_cannot_close(tmp_path):
    times = np.arange(12.0) * 0.5
    esn0 = np.array([10.0, 10.1, 10.2, 3.0, 3.1, -4.0, -3.0, 0.0, 0.2, 16.1, 16.1, 16.0])
    acm = AcmSchedule.from_esn0(times, esn0, 30e6, margin_db=0.0)
    assert list(acm.table.columns) == ["time", "esn0_db", "modcod", "efficiency", "rate_bps", "up"]
    assert list(acm.table["up"]) == [1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1]
    path = acm.write_schedule(tmp_path / "acm.csv", delay_s=0.26)
    text = path.read_text()
    assert text.startswith("# link schedule: DVB-S2 ACM capacity (satqm.leo.acm)\n")
    assert "\ntime,rate,up,delay\n" in text
    sched = read_schedule(path)
    assert list(sched.columns) == ["time", "rate", "up", "delay"]
    assert list(sched["time"]) == [0.0, 1.5, 2.0, 2.5, 3.5, 4.5, 5.5]
    assert list(sched["up"]) == [1, 1, 1, 0, 1, 1, 1]
    assert sched["rate"].isna().tolist() == [False, False, False, True, False, False, False]
    assert (sched["delay"] == 0.26).all()
    assert sched["time"].is_monotonic_increasing
    # Rates are whole bit/s of the MODCOD in force.
    want = [
        modcod("16APSK 2/3"),  # 10 dB: 8.97 closes, 8PSK 8/9 (10.69) does not
        modcod("QPSK 3/5"),  # 3.0 dB
        modcod("QPSK 2/3"),  # 3.1 dB: exactly its threshold
        None,  # -4 dB, then -3 dB (no row: no change)
        modcod("QPSK 2/5"),  # 0 dB, then 0.2 dB (no row)
        modcod("32APSK 9/10"),  # 16.1 dB, then 16.1 (no row)
        modcod("32APSK 8/9"),  # 16.0 dB: below 9/10's 16.05
    ]
    for m, r in zip(want, sched["rate"]):
        if m is not None:
            assert r == round(m.efficiency() * 30e6)
    # The row in force at every sample agrees with the table.
    k = np.searchsorted(sched["time"].to_numpy(), times, side="right") - 1
    assert (sched["up"].to_numpy()[k] == acm.table["up"].to_numpy()).all()
    held = sched["rate"].ffill().to_numpy(dtype=float)[k]
    up = acm.table["up"].to_numpy() == 1
    assert np.allclose(held[up], acm.table["rate_bps"].to_numpy()[up], atol=0.5)


def test_a_schedule_without_delay_and_with_pilots(tmp_path):
    acm = AcmSchedule.from_esn0([0.0, 10.0], [5.0, 5.0], 1e6, pilots=True)
    sched = read_schedule(acm.write_schedule(tmp_path / "a.csv"))
    assert list(sched.columns) == ["time", "rate", "up"]
    assert len(sched) == 1
    assert sched["rate"][0] == round(modcod("QPSK 4/5").efficiency(pilots=True) * 1e6)
    assert "pilots on" in (tmp_path / "a.csv").read_text()


def test_from_attenuation_subtracts_the_fade_from_the_clear_sky_esn0():
    times = [0.0, 1.0, 2.0]
    att = [0.0, 3.0, 20.0]
    acm = AcmSchedule.from_attenuation(times, att, 12.0, 30e6, margin_db=1.0)
    assert list(acm.table["esn0_db"]) == [12.0, 9.0, -8.0]
    assert list(acm.table["attenuation_db"]) == att
    assert list(acm.table["modcod"]) == ["16APSK 3/4", "8PSK 3/4", None]
    assert acm.summary()["availability"] == pytest.approx(1.0)  # down at the last sample only
    assert acm.summary()["outages"] == 1


def test_a_fade_trace_file_is_read_with_its_header(tmp_path):
    f = tmp_path / "fade.csv"
    f.write_text("# measured\ntime_s,attenuation_db\n0,0.5\n1,1.5\n\n2.5,0.25\n")
    trace = read_fade_trace(f)
    assert trace.kind == "attenuation_db"
    assert list(trace.times_s) == [0.0, 1.0, 2.5]
    assert list(trace.values) == [0.5, 1.5, 0.25]
    g = tmp_path / "esn0.csv"
    g.write_text("0,10\n1,11\n")
    assert read_fade_trace(g, kind="esn0_db").kind == "esn0_db"


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("time_s,attenuation_db\n0,1\n1,x\n", None, "fade.csv line 3: '1,x' is not two numbers"),
        ("time_s,attenuation_db\n0,1\n1,nan\n", None, "line 3: '1,nan' is not two finite"),
        ("time_s,attenuation_db\n0,1\n2,1\n1,1\n", None, "line 4: time 1.0 s does not increase"),
        ("time_s,attenuation_db\n0,1\n1,1\n1,1\n", None, "line 4: time 1.0 s does not increase"),
        ("# c\ntime_s,attenuation_db\n0,1,2\n", None, "line 3: expected 2 cells, got 3"),
        ("time_s,rain\n0,1\n", None, "line 1: the second column must be attenuation_db"),
        ("t,attenuation_db\n0,1\n", None, "line 1: the first column must be time_s"),
        ("0,1\n", None, "has no header"),
        ("time_s,esn0_db\n", None, "has no rows"),
        ("-1,1\n", "esn0_db", "line 1: time -1.0 s is negative"),
    ],
)
def test_bad_fade_traces_name_the_line(tmp_path, text, kind, message):
    f = tmp_path / "fade.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        read_fade_trace(f, kind=kind)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: acm_rate(5.0, -1e6), "symbol_rate_baud must be > 0, got -1000000.0"),
        (lambda: acm_rate(5.0, 0), "symbol_rate_baud must be > 0"),
        (lambda: acm_rate([1.0, math.nan], 1e6), r"esn0_db must be finite: esn0_db\[1\] is nan"),
        (lambda: acm_rate(5.0, 1e6, margin_db=math.inf), "margin_db must be finite"),
        (lambda: acm_rate(5.0, 1e6, hysteresis_db=-1), "hysteresis_db must be >= 0"),
        (
            lambda: acm_rate(5.0, 1e6, modcods=["QPSK 1/2", "QPSK 7/8"]),
            "modcods: unknown MODCOD 'QPSK 7/8'",
        ),
        (lambda: acm_rate(5.0, 1e6, modcods=[]), "modcods must name at least one"),
        (
            lambda: AcmSchedule.from_esn0([0, 2, 1], [1, 1, 1], 1e6),
            r"times_s must increase strictly: times_s\[2\] = 1.0 after times_s\[1\] = 2.0",
        ),
        (
            lambda: AcmSchedule.from_esn0([0, 1, 1], [1, 1, 1], 1e6),
            r"times_s must increase strictly: times_s\[2\]",
        ),
        (lambda: AcmSchedule.from_esn0([-1, 1], [1, 1], 1e6), "times_s must be >= 0"),
        (lambda: AcmSchedule.from_esn0([0, 1], [1, 1, 1], 1e6), "times_s has 2 samples"),
        (
            lambda: AcmSchedule.from_esn0([0, 1], [1, math.nan], 1e6),
            r"esn0_db must be finite: esn0_db\[1\] is nan",
        ),
        (lambda: AcmSchedule.from_esn0([0, 1], [1, 1], -5), "symbol_rate_baud must be > 0"),
        (
            lambda: AcmSchedule.from_attenuation([0, 1], [0, math.nan], 12, 1e6),
            r"attenuation_db must be finite: attenuation_db\[1\]",
        ),
        (
            lambda: AcmSchedule.from_attenuation([0, 1], [0, 1], math.nan, 1e6),
            "clear_sky_esn0_db must be finite",
        ),
        (lambda: rain_fade(10, 0, 1, 1), "step_s must be > 0"),
        (lambda: rain_fade(10, 1, 0, 1), "median_db must be > 0"),
        (lambda: rain_fade(10, 1, 1, -1), "sigma_ln must be >= 0"),
        (lambda: rain_fade(10, 1, 1, 1, beta_per_s=0), "beta_per_s must be > 0"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_negative_delay_is_refused(tmp_path):
    acm = AcmSchedule.from_esn0([0.0], [5.0], 1e6)
    with pytest.raises(ValueError, match="delay_s must be >= 0"):
        acm.write_schedule(tmp_path / "x.csv", delay_s=-0.1)


# --- the synthetic rain fade ---------------------------------------------------


def test_the_rain_fade_is_reproducible_by_seed():
    a = rain_fade(600, 1.0, 2.0, 1.0, seed=11)
    b = rain_fade(600, 1.0, 2.0, 1.0, seed=11)
    c = rain_fade(600, 1.0, 2.0, 1.0, seed=12)
    assert np.array_equal(a.values, b.values)
    assert not np.array_equal(a.values, c.values)
    assert a.kind == "attenuation_db"
    assert list(a.times_s[:3]) == [0.0, 1.0, 2.0] and a.times_s[-1] == 600.0
    assert len(a.times_s) == 601
    assert (a.values > 0).all()
    assert "synthetic" in a.source and "seed 11" in a.source


def test_the_rain_fade_has_the_stated_lognormal_statistics():
    median_db, sigma_ln, beta = 3.0, 0.8, 0.5
    fade = rain_fade(200_000, 1.0, median_db, sigma_ln, beta_per_s=beta, seed=5)
    ln_a = np.log(fade.values)
    # AR(1) with a = exp(-0.5): the mean of 200 001 samples has a standard
    # deviation of about sigma * sqrt((1 + a) / (1 - a) / n) = 0.0036.
    assert ln_a.mean() == pytest.approx(math.log(median_db), abs=0.02)
    assert ln_a.std() == pytest.approx(sigma_ln, rel=0.02)
    x = (ln_a - ln_a.mean()) / ln_a.std()
    lag1 = float(np.mean(x[1:] * x[:-1]))
    assert lag1 == pytest.approx(math.exp(-beta), abs=0.01)


def test_a_synthetic_fade_makes_a_schedule_end_to_end(tmp_path):
    fade = rain_fade(600, 1.0, 2.0, 1.0, seed=6)
    acm = AcmSchedule.from_attenuation(
        fade.times_s, fade.values, 12.0, 30e6, margin_db=1.0, hysteresis_db=0.5, source=fade.source
    )
    path = acm.write_schedule(tmp_path / "geo.csv", delay_s=0.2605)
    assert f"# source: {fade.source}\n" in path.read_text()
    sched = read_schedule(path)
    assert len(sched) == len(acm.schedule_rows()) == acm.summary()["modcod_changes"] + 1
    assert len(sched) < len(fade.times_s)
