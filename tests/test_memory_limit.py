"""The up-front memory estimate: huge scenarios are refused with a
ConfigError before anything is built, ``simulation.max_memory`` and
``--max-memory`` set the limit, and ``simulation.log_drops = false`` keeps
the summary while leaving the drops table empty."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest
import satqm

from tests.conftest import DROPTAIL, TINY, tiny_dict, to_toml

#: Run in a child process with its address space capped at 2 GiB: a
#: scenario that began to allocate would fail there, not pass.
_CAPPED = textwrap.dedent(
    """
    import resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    import satqm
    t = time.perf_counter()
    try:
        satqm.Simulation(satqm.Scenario.from_toml(sys.stdin.read()))
    except satqm.ConfigError as e:
        print(f"{time.perf_counter() - t:.3f}", e.path, "|", e.rule)
    """
)


def _refused_quickly(text: str) -> tuple[str, str]:
    r = subprocess.run(
        [sys.executable, "-c", _CAPPED], input=text, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    secs, rest = r.stdout.strip().split(" ", 1)
    assert float(secs) < 1.0
    path, rule = rest.split(" | ", 1)
    return path, rule


def test_100000_pairs_on_a_fast_link_for_ten_minutes_are_refused():
    d = tiny_dict()
    d["simulation"]["duration"] = "600 s"
    d["topology"]["pairs"] = 100_000
    d["topology"]["access"].update(buffer=100_000, rate="10 Gbps")
    d["topology"]["bottleneck"].update(buffer=1_000_000, rate="10 Gbps")
    d["tcp"].update(window_scaling=True, receive_buffer="64 MB")
    path, rule = _refused_quickly(to_toml(d))
    assert path == "simulation"
    assert re.match(r"needs about [\d.]+ [GT]B \(", rule), rule
    assert "the limit is 8.0 GB: raise simulation.max_memory" in rule


def test_a_million_web_users_are_refused():
    d = tiny_dict()
    d["simulation"]["duration"] = "1000 s"
    d["topology"]["bottleneck"]["rate"] = "10 Gbps"
    d["traffic"] = [
        {
            "kind": "web",
            "connections": 1_000_000,
            "ramp": {"step": 1_000_000, "interval": "1 s"},
            "page_size": {"min": "10 kB", "max": "100 kB"},
            "think_time": "1 s",
        }
    ]
    path, rule = _refused_quickly(to_toml(d))
    assert path == "simulation"
    assert "connections" in rule and "raise simulation.max_memory" in rule


def _estimate(text: str) -> float:
    """The estimate in bytes, as the refusal under a tiny limit states it."""
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario(text, max_memory="1 kB")
    m = re.match(r"needs about ([\d.]+) (bytes|kB|MB|GB|TB)", e.value.rule)
    assert m, e.value.rule
    unit = {"bytes": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[m.group(2)]
    return float(m.group(1)) * unit


def test_just_over_a_lowered_limit_is_refused_and_passes_when_raised():
    est = _estimate(TINY)
    below = TINY.replace("seed = 1\n", f'seed = 1\nmax_memory = "{math.floor(est * 0.9)} B"\n')
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(below)
    assert e.value.path == "simulation" and "raise simulation.max_memory" in e.value.rule
    above = TINY.replace("seed = 1\n", f'seed = 1\nmax_memory = "{math.ceil(est * 1.1)} B"\n')
    satqm.run(satqm.Scenario.from_toml(above), duration=0.2)
    # The override replaces the file's value.
    sc = satqm.Scenario(below, max_memory=f"{est * 1.1 / 1e6:.3f} MB")
    satqm.run(sc, duration=0.2)


def test_max_memory_and_log_drops_are_checked_keys():
    for value, rule in [
        ("0", "must be > 0"),
        ('"-1 GB"', "must be > 0"),
        ('"16 ms"', 'unknown unit "ms"'),
        ("true", "must be"),
    ]:
        with pytest.raises(satqm.ConfigError) as e:
            satqm.Scenario.from_toml(
                TINY.replace("seed = 1\n", f"seed = 1\nmax_memory = {value}\n")
            )
        assert e.value.path == "simulation.max_memory" and e.value.rule.startswith(rule)
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(TINY.replace("seed = 1\n", 'seed = 1\nlog_drops = "no"\n'))
    assert e.value.path == "simulation.log_drops"
    assert "true (every drop), false (none) or the most rows to keep" in e.value.rule
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(TINY.replace("seed = 1\n", "seed = 1\nlog_drops = -5\n"))
    assert e.value.path == "simulation.log_drops"
    assert e.value.rule == "must be true, false or a number of rows (>= 0), got -5"


def test_without_the_drop_log_the_summary_is_the_same():
    on = satqm.run(satqm.Scenario.from_toml(TINY))
    off = satqm.run(
        satqm.Scenario.from_toml(TINY.replace("seed = 1\n", "seed = 1\nlog_drops = false\n"))
    )
    assert on.summary()["drops_total"] > 0 and len(on.drops) > 0
    assert len(off.drops) == 0
    a, b = on.summary(), off.summary()
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])), k


def test_a_drop_log_at_its_most_rows_warns_and_keeps_the_counts(tmp_path):
    on = satqm.run(satqm.Scenario.from_toml(TINY))
    n = len(on.drops) // 3
    assert n > 0
    capped = satqm.Scenario.from_toml(TINY.replace("seed = 1\n", f"seed = 1\nlog_drops = {n}\n"))
    with pytest.warns(satqm.DropLogFull, match=f"first {n:,} rows"):
        part = satqm.run(capped)
    assert len(part.drops) == n
    pd.testing.assert_frame_equal(part.drops, on.drops.iloc[:n])
    a, b = on.summary(), part.summary()
    assert b.pop("drop_log_full_s") == pytest.approx(on.drops.time_s.iloc[n - 1])
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])), k
    # The saved run says so too.
    back = satqm.Results.load(part.save(tmp_path / "run", plot=False))
    assert "drop_log_full_s" in back.summary()
    assert "drop_log_full_s" not in on.summary()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satqm.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_says_when_the_drop_log_stopped(tmp_path):
    path = tmp_path / "capped.toml"
    path.write_text(TINY.replace("seed = 1\n", "seed = 1\nlog_drops = 2\n"))
    r = _cli("run", str(path), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "satqm: warning: " in r.stderr and "drop log kept its first 2 rows" in r.stderr


def test_cli_max_memory_overrides_the_limit(tmp_path):
    r = _cli("check", str(DROPTAIL), "--max-memory", "1 MB")
    assert r.returncode == 2
    assert "simulation: needs about" in r.stderr and "the limit is 1.0 MB" in r.stderr
    r = _cli("check", str(DROPTAIL), "--max-memory", "0")
    assert r.returncode == 2 and "--max-memory 0: must be > 0" in r.stderr
    t = time.perf_counter()
    r = _cli(
        "run",
        str(DROPTAIL),
        "--out",
        str(tmp_path / "o"),
        "--duration",
        "1",
        "--max-memory",
        "1 GB",
        "--quiet",
        "--no-plot",
    )
    assert r.returncode == 0, r.stderr
    assert time.perf_counter() - t < 60
    header = (tmp_path / "o" / "scenario.toml").read_text()
    assert "--max-memory '1 GB'" in header
