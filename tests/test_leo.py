"""satqm.leo: Walker shells, TLE/OMM catalogues, the bent-pipe path and its
link schedule, checked against Skyfield as an independent reference.

Skyfield is used here only: it parses the same element sets (or takes the same
``Satrec``), places ground points with ``wgs84.latlon`` and measures
``(satellite - ground).at(t)``: its own time scales, TEME rotation and
topocentric frame. Tolerances:

* with UT1 - UTC taken from Skyfield's table (``dut1_s=t.dut1``), ranges agree
  to 1 cm and elevations to 1e-6 deg (the two compute the same frames);
* with the default ``dut1_s=0`` (UT1 = UTC), delays agree within 1 us
  (300 m of range) and elevations within 0.01 deg. The Earth's rotation angle
  is then off by UT1 - UTC: -0.003 s on 2024-03-01 in Skyfield 1.55's table
  (1 m, 1e-4 deg), but +0.16 s where Skyfield 1.45 extrapolates its older
  table (40 m, 0.005 deg);
* served sets are compared outside a band of 0.02 deg around the mask, where
  that error could flip a satellite across it.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest
from satqm.leo import POLICIES, Constellation, GroundPoint, Shell, bent_pipe
from satqm.leo.bentpipe import served_pairs
from satqm.leo.frames import C_M_PER_S, look_angles

skyfield_api = pytest.importorskip("skyfield.api")
from skyfield.api import EarthSatellite, load, wgs84  # noqa: E402
from skyfield.framelib import itrs  # noqa: E402

EPOCH = datetime(2024, 3, 1, tzinfo=timezone.utc)
#: Starlink's first shell (SpaceX's FCC modification application
#: SAT-MOD-20190830-00087): 550 km, 53 deg, 72 planes of 22; the filing gives
#: no Walker phasing, 17 is assumed.
STARLINK_1 = Shell(altitude_km=550, inclination_deg=53, planes=72, per_plane=22, phasing=17)
TERMINAL = GroundPoint("redmond", 47.674, -122.121, 50.0)
GATEWAY = GroundPoint("gateway", 46.9, -119.3, 300.0)
#: Seconds after EPOCH at which Skyfield is asked (grid times of a 1 s step).
SAMPLES_S = np.array([0.0, 37.0, 123.0, 301.0, 599.0])
MASK_DEG = 25.0
BAND_DEG = 0.02
#: Elevation tolerance with UT1 = UTC (see the module docstring).
EL_TOL_DEG = 0.01

ISS = (
    "ISS (ZARYA)\n"
    "1 25544U 98067A   19343.69339541  .00001764  00000-0  38792-4 0  9991\n"
    "2 25544  51.6439 211.2001 0007417  17.6667  85.6398 15.50103472202482\n"
)
STARLINK_LIKE = (
    "0 STARLINK-LIKE\n"
    "1 44714U 19074B   24061.00000000  .00001000  00000-0  75000-4 0  9991\n"
    "2 44714  53.0540 120.0000 0001400  90.0000 270.0000 15.06400000239588\n"
)
OMM_FIELDS = (
    "OBJECT_NAME,OBJECT_ID,EPOCH,MEAN_MOTION,ECCENTRICITY,INCLINATION,RA_OF_ASC_NODE,"
    "ARG_OF_PERICENTER,MEAN_ANOMALY,EPHEMERIS_TYPE,CLASSIFICATION_TYPE,NORAD_CAT_ID,"
    "ELEMENT_SET_NO,REV_AT_EPOCH,BSTAR,MEAN_MOTION_DOT,MEAN_MOTION_DDOT"
)
OMM_ISS = (
    "ISS (ZARYA),1998-067A,2019-12-09T16:38:29.363424,15.50103472,.0007417,51.6439,211.2001,"
    "17.6667,85.6398,0,U,25544,999,20248,.38792E-4,.1764E-4,0"
)


@pytest.fixture(scope="module")
def ts():
    return load.timescale(builtin=True)


@pytest.fixture(scope="module")
def starlink():
    return Constellation.walker(STARLINK_1, EPOCH)


def _skyfield_look(ts, satrecs, point, when, offsets_s):
    """Skyfield's (elevation deg, range m), (n_satellites, n_times)."""
    t = ts.utc(when.year, when.month, when.day, when.hour, when.minute, when.second + offsets_s)
    ground = wgs84.latlon(point.lat_deg, point.lon_deg, elevation_m=point.alt_m)
    el = np.empty((len(satrecs), len(offsets_s)))
    rng = np.empty_like(el)
    for i, sat in enumerate(satrecs):
        alt, _az, dist = (EarthSatellite.from_satrec(sat, ts) - ground).at(t).altaz()
        el[i], rng[i] = alt.degrees, dist.m
    return el, rng, t


@pytest.fixture(scope="module")
def skyfield_starlink(ts, starlink):
    el_t, r_t, t = _skyfield_look(ts, starlink.satrecs, TERMINAL, EPOCH, SAMPLES_S)
    el_g, r_g, _ = _skyfield_look(ts, starlink.satrecs, GATEWAY, EPOCH, SAMPLES_S)
    return {"el_t": el_t, "r_t": r_t, "el_g": el_g, "r_g": r_g, "dut1_s": t.dut1}


# -- against Skyfield --------------------------------------------------------


@pytest.mark.parametrize("matched_dut1", [False, True])
def test_ranges_and_elevations_match_skyfield(starlink, skyfield_starlink, matched_dut1):
    sky = skyfield_starlink
    dut1_s = float(np.mean(sky["dut1_s"])) if matched_dut1 else 0.0
    ecef = starlink.ecef_m(EPOCH, SAMPLES_S, dut1_s)
    el_t, r_t = look_angles(ecef, TERMINAL)
    el_g, r_g = look_angles(ecef, GATEWAY)
    above = (sky["el_t"] > 0) & (sky["el_g"] > 0)  # satellites a bent pipe could use
    assert above.sum() > 20
    delay_err_s = np.abs((r_t + r_g) - (sky["r_t"] + sky["r_g"]))[above] / C_M_PER_S
    el_err_deg = np.maximum(np.abs(el_t - sky["el_t"]), np.abs(el_g - sky["el_g"]))[above]
    if matched_dut1:
        assert delay_err_s.max() < 0.01 / C_M_PER_S  # 1 cm
        assert el_err_deg.max() < 1e-6
    else:
        assert delay_err_s.max() < 1e-6
        assert el_err_deg.max() < EL_TOL_DEG


def test_served_sets_match_skyfield(starlink, skyfield_starlink):
    sky = skyfield_starlink
    served = served_pairs(starlink, TERMINAL, GATEWAY, EPOCH, SAMPLES_S, MASK_DEG)
    sky_serves = (sky["el_t"] >= MASK_DEG) & (sky["el_g"] >= MASK_DEG)
    near_mask = (np.abs(sky["el_t"] - MASK_DEG) < BAND_DEG) | (
        np.abs(sky["el_g"] - MASK_DEG) < BAND_DEG
    )
    for k in range(len(SAMPLES_S)):
        ours = set(served.sat_idx[served.first[k] : served.first[k + 1]].tolist())
        theirs = set(np.flatnonzero(sky_serves[:, k]).tolist())
        unsure = set(np.flatnonzero(near_mask[:, k]).tolist())
        assert theirs, "the terminal and gateway share some satellite at every sample"
        assert ours - unsure == theirs - unsure


def test_bent_pipe_follows_skyfields_highest_satellite(starlink, skyfield_starlink):
    sky = skyfield_starlink
    path = bent_pipe(starlink, TERMINAL, GATEWAY, EPOCH, 600.0, step_s=1.0)
    rows = path.table.set_index("time").loc[SAMPLES_S]
    serves = (sky["el_t"] >= MASK_DEG) & (sky["el_g"] >= MASK_DEG)
    for k, (_, row) in enumerate(rows.iterrows()):
        best = int(np.argmax(np.where(serves[:, k], sky["el_t"][:, k], -np.inf)))
        assert row["satellite"] == starlink.names[best]
        assert row["up"] == 1
        sky_delay_s = (sky["r_t"][best, k] + sky["r_g"][best, k]) / C_M_PER_S
        assert abs(row["delay_s"] - sky_delay_s) < 1e-6
        assert abs(row["elev_terminal_deg"] - sky["el_t"][best, k]) < EL_TOL_DEG
        assert abs(row["elev_gateway_deg"] - sky["el_g"][best, k]) < EL_TOL_DEG
    tab = path.table
    assert np.allclose(tab["delay_s"], (tab["range_up_m"] + tab["range_down_m"]) / 299_792_458.0)


def test_tle_round_trip_against_skyfield(ts):
    cons = Constellation.from_tle(ISS + "\n" + STARLINK_LIKE)
    assert cons.names == ["ISS (ZARYA)", "STARLINK-LIKE"]
    assert [s.satnum for s in cons.satrecs] == [25544, 44714]
    assert cons.epoch == datetime(2024, 3, 1, tzinfo=timezone.utc)
    for text, sat in zip((ISS, STARLINK_LIKE), cons.satrecs):
        _name, line1, line2 = text.splitlines()
        sky_sat = EarthSatellite(line1, line2, ts=ts)  # Skyfield's own parse
        assert sky_sat.model.jdsatepoch + sky_sat.model.jdsatepochF == pytest.approx(
            sat.jdsatepoch + sat.jdsatepochF, abs=1e-9
        )
        start = datetime(2019, 12, 9, 17, tzinfo=timezone.utc)
        if sat.satnum == 44714:
            start = EPOCH
        offsets = np.arange(0.0, 5400.0, 300.0)
        t = ts.utc(start.year, start.month, start.day, start.hour, 0, offsets)
        # the Earth-fixed position, with Skyfield's UT1 - UTC
        index = [cons.satrecs.index(sat)]
        ours = cons.ecef_m(start, offsets, float(np.mean(t.dut1)), indices=index)
        theirs = sky_sat.at(t).frame_xyz(itrs).m.T
        # Skyfield's ITRS adds polar motion only when given its table; none here.
        assert np.abs(ours[0] - theirs).max() < 1.0


def test_tle_from_file_and_bare_two_line_sets(tmp_path):
    path = tmp_path / "sats.tle"
    bare = "\n".join(ISS.splitlines()[1:]) + "\n"
    path.write_text(bare + STARLINK_LIKE, encoding="utf-8")
    cons = Constellation.from_tle(path)
    assert cons.names == ["SAT25544", "STARLINK-LIKE"]
    assert Constellation.from_tle(str(path)).names == cons.names


def test_omm_csv_json_and_xml_match_the_tle(tmp_path):
    tle = Constellation.from_tle(ISS)
    csv_path = tmp_path / "iss.csv"
    csv_path.write_text(OMM_FIELDS + "\n" + OMM_ISS + "\n", encoding="utf-8")
    record = dict(zip(OMM_FIELDS.split(","), OMM_ISS.split(",")))
    json_record = {
        k: (v if k in ("OBJECT_NAME", "OBJECT_ID", "EPOCH", "CLASSIFICATION_TYPE") else float(v))
        for k, v in record.items()
    }
    for k in ("EPHEMERIS_TYPE", "NORAD_CAT_ID", "ELEMENT_SET_NO", "REV_AT_EPOCH"):
        json_record[k] = int(json_record[k])
    json_path = tmp_path / "iss.json"
    json_path.write_text(json.dumps([json_record]), encoding="utf-8")
    meta = ("OBJECT_NAME", "OBJECT_ID")
    tle_params = ("EPHEMERIS_TYPE", "CLASSIFICATION_TYPE", "NORAD_CAT_ID", "ELEMENT_SET_NO")
    tle_params += ("REV_AT_EPOCH", "BSTAR", "MEAN_MOTION_DOT", "MEAN_MOTION_DDOT")

    def tags(keys):
        return "".join(f"<{k}>{record[k]}</{k}>" for k in keys)

    mean = [k for k in record if k not in meta + tle_params]
    xml_path = tmp_path / "iss.xml"
    xml_path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?><ndm><omm><body><segment>'
        f"<metadata>{tags(meta)}</metadata><data><meanElements>{tags(mean)}</meanElements>"
        f"<tleParameters>{tags(tle_params)}</tleParameters></data>"
        "</segment></body></omm></ndm>",
        encoding="utf-8",
    )
    start = datetime(2019, 12, 9, 17, tzinfo=timezone.utc)
    offsets = np.arange(0.0, 3600.0, 600.0)
    want = tle.teme_km(start, offsets)
    for path in (csv_path, json_path, xml_path):
        cons = Constellation.from_omm(path)
        assert cons.names == ["ISS (ZARYA)"]
        assert np.abs(cons.teme_km(start, offsets) - want).max() < 1e-3  # km: 1 m


# -- Walker geometry ---------------------------------------------------------


def test_walker_shell_geometry(starlink):
    from sgp4.api import SatrecArray

    assert len(starlink) == 1584
    assert starlink.names[0] == "P00S00" and starlink.names[3 * 22 + 17] == "P03S17"
    assert len(set(starlink.names)) == 1584
    sat0 = starlink.satrecs[0]
    offsets_s = np.arange(0.0, 5800.0, 20.0)  # one orbit (95.6 min) and a bit
    _e, r, v = SatrecArray(starlink.satrecs).sgp4(
        np.full(offsets_s.shape, sat0.jdsatepoch), sat0.jdsatepochF + offsets_s / 86400.0
    )
    alt_km = np.linalg.norm(r, axis=2) - 6378.135
    # SGP4 mean elements against osculating radius: the orbit mean is within
    # 1 km of the shell's altitude, each instant within 10 km (J2's terms).
    assert np.abs(alt_km.mean(axis=1) - 550.0).max() < 1.0
    assert np.abs(alt_km - 550.0).max() < 10.0
    h = np.cross(r[:, 0], v[:, 0])
    inc_deg = np.degrees(np.arccos(h[:, 2] / np.linalg.norm(h, axis=1)))
    assert np.abs(inc_deg - 53.0).max() < 0.05
    raan_deg = (np.degrees(np.arctan2(h[:, 0], -h[:, 1])) % 360.0).reshape(72, 22)
    wrap = lambda x: (x + 180.0) % 360.0 - 180.0  # noqa: E731
    # osculating nodes wander by a few 1/100 deg along the orbit (J2); their
    # mean over each plane's 22 satellites is the plane's node
    plane_deg = raan_deg[:, :1] + wrap(raan_deg - raan_deg[:, :1]).mean(axis=1, keepdims=True)
    assert np.abs(wrap(raan_deg - plane_deg)).max() < 0.1  # one node per plane
    spacing = wrap(np.diff(plane_deg[:, 0], append=plane_deg[0, 0] + 360.0))
    assert np.abs(spacing - 5.0).max() < 0.005  # 360 / 72, evenly
    # argument of latitude: 360 s / 22 + 360 * 17 p / 1584
    node = np.stack([np.cos(np.radians(raan_deg.ravel())), np.sin(np.radians(raan_deg.ravel()))])
    r0 = r[:, 0] / np.linalg.norm(r[:, 0], axis=1)[:, None]
    u = np.degrees(np.arctan2(r0[:, 2] / np.sin(np.radians(inc_deg)), (r0[:, :2] * node.T).sum(1)))
    want = [STARLINK_1.mean_anomaly_deg(p, s) for p in range(72) for s in range(22)]
    assert np.abs(wrap(u - np.array(want))).max() < 0.2
    assert STARLINK_1.mean_anomaly_deg(1, 0) == pytest.approx(360.0 * 17 / 1584)


def test_walker_notation():
    shell = Shell.from_notation("53:1584/72/17", altitude_km=550)
    assert shell == STARLINK_1
    assert shell.notation() == "53:1584/72/17"
    star = Shell(780, 86.4, 6, 11, 2, raan_spread_deg=180.0)  # Iridium-like Walker star
    assert [star.raan_deg(p) for p in range(6)] == [0.0, 30.0, 60.0, 90.0, 120.0, 150.0]


# -- policies ------------------------------------------------------------------


@pytest.fixture(scope="module")
def paths(starlink):
    return {
        policy: bent_pipe(
            starlink, TERMINAL, GATEWAY, EPOCH, 600.0, step_s=2.0, policy=policy, interval_s=15.0
        )
        for policy in POLICIES
    }


def test_highest_elevation_takes_the_highest(starlink, paths):
    path = paths["highest_elevation"]
    served = served_pairs(starlink, TERMINAL, GATEWAY, EPOCH, path.table["time"].to_numpy(), 25.0)
    for k, el in enumerate(path.table["elev_terminal_deg"]):
        assert el == served.elev_terminal_deg[served.first[k] : served.first[k + 1]].max()


def test_interval_reassigns_on_its_instants_or_on_loss(starlink, paths):
    path = paths["interval"]
    times = path.table["time"].to_numpy()
    assert {15.0, 45.0, 75.0} <= set(times)  # inserted: a 2 s step misses them
    assert np.all(np.diff(times) > 0)
    sats = path.table["satellite"].to_numpy()
    served = served_pairs(starlink, TERMINAL, GATEWAY, EPOCH, times, 25.0)
    index = {n: i for i, n in enumerate(starlink.names)}
    assert len(path.handovers) > 0
    for t, old in zip(path.handovers["time"], path.handovers["from_satellite"]):
        k = int(np.searchsorted(times, t))
        still = index[old] in served.sat_idx[served.first[k] : served.first[k + 1]]
        assert t % 15.0 == 0.0 or not still
        assert sats[k - 1] == old


def test_longest_visible_keeps_its_satellite_while_it_serves(starlink, paths):
    path = paths["longest_visible"]
    times = path.table["time"].to_numpy()
    served = served_pairs(starlink, TERMINAL, GATEWAY, EPOCH, times, 25.0)
    index = {n: i for i, n in enumerate(starlink.names)}
    for t, old in zip(path.handovers["time"], path.handovers["from_satellite"]):
        k = int(np.searchsorted(times, t))
        assert index[old] not in served.sat_idx[served.first[k] : served.first[k + 1]]
    assert len(path.handovers) < len(paths["highest_elevation"].handovers)


# -- the schedule ----------------------------------------------------------------


def _replay(schedule: pd.DataFrame, t: float) -> pd.Series:
    """The row in force at time t: the last row at or before t."""
    return schedule[schedule["time"] <= t + 1e-9].iloc[-1]


def _check_schedule(path, csv_path, rate=None):
    text = csv_path.read_text("utf-8")
    assert text.startswith("# ")
    assert "2024-03-01T00:00:00" in text and "policy:" in text
    sched = pd.read_csv(csv_path, comment="#")
    assert list(sched.columns)[:3] == ["time", "delay", "up"]
    times = sched["time"].to_numpy()
    assert np.all(np.diff(times) >= 0)
    assert times[0] == 0.0 and times[-1] == path.table["time"].iloc[-1]
    if rate is not None:
        assert (sched["rate"] == rate).all()
    # every grid time: the row in force says what the table says
    for _, row in path.table.iterrows():
        now = _replay(sched, row["time"])
        assert now["up"] == row["up"]
        if row["up"]:
            assert now["delay"] == pytest.approx(row["delay_s"], rel=1e-10)
    # handovers: two rows at the time, the old delay then the new one
    for _, ho in path.handovers.iterrows():
        at = sched[sched["time"] == ho["time"]]
        assert len(at) == 2 and (at["up"] == 1).all()
        assert at["delay"].iloc[0] == pytest.approx(ho["delay_before_s"], rel=1e-10)
        assert at["delay"].iloc[1] == pytest.approx(ho["delay_after_s"], rel=1e-10)
    # delay moves only within a served stretch or at a jump
    same_t = np.diff(times) == 0
    jumps = np.flatnonzero(same_t)
    assert len(jumps) >= len(path.handovers) + 2 * len(path.outages) - 2
    return sched


def test_schedule_has_a_jump_at_each_handover(paths, tmp_path):
    path = paths["interval"]
    out = path.write_schedule(tmp_path / "leo.csv", rate=100e6)
    sched = _check_schedule(path, out, rate=100e6)
    assert (sched["up"] == 1).all()
    assert len(path.handovers) > 0


def test_schedule_goes_down_in_an_outage(tmp_path):
    sparse = Constellation.walker(Shell(550, 53, 6, 4, 1), EPOCH)  # 24 satellites
    path = bent_pipe(sparse, TERMINAL, GATEWAY, EPOCH, 3600.0, step_s=5.0, min_elevation_deg=10.0)
    assert 0 < path.table["up"].sum() < len(path.table)
    assert len(path.outages) > 0
    sched = _check_schedule(path, path.write_schedule(tmp_path / "sparse.csv"))
    assert (sched["up"] == 0).any()
    assert "rate" not in sched.columns
    for _, out in path.outages.iterrows():
        during = sched[(sched["time"] >= out["start"]) & (sched["time"] <= out["end"])]
        down = during[during["up"] == 0]
        assert len(down) >= 1 and down["delay"].nunique() == 1  # held, unchanged
        if not math.isnan(out["delay_before_s"]):
            assert down["delay"].iloc[0] == pytest.approx(out["delay_before_s"], rel=1e-10)
    no_sat = path.table[path.table["up"] == 0]
    assert no_sat["satellite"].isna().all() and no_sat["delay_s"].isna().all()


def test_schedule_when_nothing_ever_serves(tmp_path):
    """The path is there to look at (down throughout); a schedule of it is
    refused, since the link would never be up."""
    one = Constellation.from_tle(STARLINK_LIKE)
    far = GroundPoint("far", -80.0, 0.0)
    path = bent_pipe(one, far, far, EPOCH, 60.0, step_s=10.0)
    assert (path.table["up"] == 0).all()
    with pytest.raises(ValueError, match="never be up"):
        path.write_schedule(tmp_path / "down.csv")


# -- bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: Shell(-550, 53, 72, 22, 17), "altitude_km"),
        (lambda: Shell(550, 190, 72, 22, 17), "inclination_deg"),
        (lambda: Shell(550, 53, 0, 22, 17), "planes"),
        (lambda: Shell(550, 53, 72, 22.5, 17), "per_plane"),
        (lambda: Shell(550, 53, 72, 22, 72), "phasing"),
        (lambda: Shell(550, 53, 72, 22, -1), "phasing"),
        (lambda: Shell(550, 53, 72, 22, 17, raan_spread_deg=0), "raan_spread_deg"),
        (lambda: Shell.from_notation("53:1584/71/17", 550), "planes (71) must divide"),
        (lambda: Shell.from_notation("53-1584-72", 550), "notation"),
        (lambda: GroundPoint("x", 91.0, 0.0), "lat_deg"),
        (lambda: GroundPoint("x", 0.0, float("nan")), "lon_deg"),
        (lambda: Constellation.walker(STARLINK_1, "2024-03-01"), "epoch"),
        (lambda: Constellation.from_tle("/nonexistent/sats.tle"), "path_or_text"),
        (lambda: Constellation.from_omm("/nonexistent/sats.json"), "path"),
    ],
)
def test_bad_parameters_are_named(make, name):
    with pytest.raises(ValueError, match=name.replace("(", r"\(").replace(")", r"\)")):
        make()


@pytest.mark.parametrize(
    ("text", "lineno"),
    [
        (ISS.replace("9991\n", "9992\n"), 2),  # checksum of line 1
        (ISS.replace("202482", "20248"), 3),  # line 2 short
        (ISS.replace("2 25544  51", "2 25545  51").replace("202482", "202483"), 3),  # numbers
        ("\n".join(ISS.splitlines()[:2]) + "\n", 2),  # line 1 alone
        ("ISS\nNOT A TLE\n", 2),  # a second name line
        ("2 25544  51.6439\n", 1),  # line 2 first
    ],
)
def test_bad_tle_names_the_line(text, lineno):
    with pytest.raises(ValueError, match=f"TLE line {lineno}:"):
        Constellation.from_tle(text)


def test_bad_omm_names_the_record(tmp_path):
    bad = tmp_path / "bad.csv"
    short = OMM_FIELDS.replace(",BSTAR", "")
    row = OMM_ISS.replace(",.38792E-4", "")
    bad.write_text(f"{short}\n{row}\n{row}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="record 1 has no field BSTAR"):
        Constellation.from_omm(bad)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"policy": "nearest"}, "policy"),
        ({"step_s": 0.0}, "step_s"),
        ({"duration_s": -1.0}, "duration_s"),
        ({"interval_s": float("inf")}, "interval_s"),
        ({"min_elevation_deg": 90.0}, "min_elevation_deg"),
        ({"start": 0}, "start"),
        ({"dut1_s": 2.0}, "dut1_s"),
    ],
)
def test_bad_bent_pipe_arguments_are_named(kwargs, name):
    one = Constellation.from_tle(STARLINK_LIKE)
    args = {"start": EPOCH, "duration_s": 60.0, **kwargs}
    with pytest.raises(ValueError, match=name):
        bent_pipe(one, TERMINAL, GATEWAY, **args)


def test_bad_rate_is_named(paths, tmp_path):
    with pytest.raises(ValueError, match="rate"):
        paths["interval"].write_schedule(tmp_path / "x.csv", rate=-1.0)
