"""benches/scale_ns3.py: the scale bench's dumbbell written for the ns-3 program.

The scenario is the one benches/scale.rs writes (its template is read from
that file, so a change there shows here); the translation needs no ns-3. The
last test runs one small point in ns-3 and is skipped without it (or with
SATQM_SKIP_NS3=1).
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest
import satqm
from satqm.validation.ns3.run import PARAMS

ROOT = Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location("scale_ns3", ROOT / "benches" / "scale_ns3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


M = _load()


def scale_rs_scenario(n: int, rate_mbps: int, secs: int, bdp: int) -> str:
    """The scenario benches/scale.rs writes, from its own template."""
    src = (ROOT / "benches" / "scale.rs").read_text()
    m = re.search(r'format!\(\s*r#"(.*?)"#', src, re.S)
    assert m, "benches/scale.rs: scenario template not found"
    text = m.group(1)
    values = {"secs": secs, "n": n, "access": rate_mbps * 10, "rate_mbps": rate_mbps, "bdp": bdp}
    for key, v in values.items():
        text = text.replace("{" + key + "}", str(v))
    text = text.replace("{{", "{").replace("}}", "}")
    assert "{" not in re.sub(r"start = \{ uniform", "", text), "unfilled placeholder"
    return text


def test_one_point_matches_the_scale_bench():
    # 10 flows on 100 Mbit/s: one BDP is 100 Mbit/s x 100 ms / 1500 B = 833 packets
    text = scale_rs_scenario(10, 100, 30, 833)
    sc = satqm.Scenario.from_toml(text)
    assert sc.flows == 10 and sc.duration == 30.0
    p = M.ns3_params(text)
    assert set(p) <= set(PARAMS)
    assert p["nFlows"] == 10 and p["duration"] == 30.0 and p["seed"] == 1
    assert p["bottleneckRate"] == 100e6 and p["bottleneckDelay"] == 0.045
    assert p["accessRate"] == 1000e6
    assert p["accessDelays"] == [0.0025] and p["accessDelayRx"] == 0.0025
    # round trip 2 x (2.5 + 45 + 2.5) ms = 100 ms, as the bench says
    assert 2 * (p["accessDelays"][0] + p["bottleneckDelay"] + p["accessDelayRx"]) == pytest.approx(
        0.1
    )
    # satqm counts waiting packets; ns-3 holds queue disc + one device packet
    assert p["bufferPackets"] + p["deviceQueuePackets"] == 833
    assert p["accessBufferPackets"] == 1000
    assert p["queueDisc"] == "droptail"
    assert p["sack"] is True and p["tcp"] == "NewReno" and p["recovery"] == "classic"
    assert p["mss"] == 1460 and p["initialCwnd"] == 2
    assert p["delAckCount"] == 2 and p["delAckTimeout"] == 0.2
    assert p["windowScaling"] is True and p["rcvBuf"] == p["sndBuf"] == 16 * 1024 * 1024
    assert p["minRto"] == 1.0 and p["initialRto"] == 1.0
    assert p["timestamps"] is False and p["limitedTransmit"] is False
    assert p["startSpread"] == 1.0 and "startTimes" not in p
    assert p["warmup"] == 0.0 and p["sampleInterval"] == 30.0


def test_gigabit_units_and_largest_buffer():
    p = M.ns3_params(scale_rs_scenario(10, 10_000, 3, 83_333))
    assert p["bottleneckRate"] == 10e9 and p["accessRate"] == 100e9
    assert p["bufferPackets"] == 83_332 and p["duration"] == 3.0


def test_a_key_without_translation_is_refused():
    text = scale_rs_scenario(3, 10, 10, 83).replace(
        'delay = "45 ms"', 'delay = "45 ms"\nloss = 0.01'
    )
    with pytest.raises(ValueError, match=r"topology\.bottleneck\.loss"):
        M.ns3_params(text)
    text = scale_rs_scenario(3, 10, 10, 83).replace('["0 s", "1 s"]', '["0.5 s", "1 s"]')
    with pytest.raises(ValueError, match=r"traffic\[0\]\.start"):
        M.ns3_params(text)


def test_points_option():
    assert M.parse_points("10:100:30, 1_000:10:300") == [(10, 100, 30), (1000, 10, 300)]
    with pytest.raises(ValueError, match="--points"):
        M.parse_points("10:100")


def _ns3_missing() -> str | None:
    if os.environ.get("SATQM_SKIP_NS3"):
        return "SATQM_SKIP_NS3 is set"
    from satqm.validation.ns3 import build

    return None if build.available() else "ns-3 or a C++ compiler is not installed"


@pytest.mark.skipif(_ns3_missing() is not None, reason=_ns3_missing() or "")
def test_ns3_runs_a_small_point():
    from satqm.validation.ns3 import build

    p = M.ns3_params(scale_rs_scenario(2, 10, 5, 83))
    r = M.measure_ns3(build.ensure_binary(), p, limit=600)
    assert r["over"] is False
    # 10 Mbit/s for a little under 5 s (starts, slow start), 1502-byte frames
    assert 1_000 < r["packets"] < 10e6 * 5 / 8 / 1502
    assert 0 < r["goodput_bps"] < 10e6
    assert 0 < r["run_cpu_s"] <= r["cpu_s"]
