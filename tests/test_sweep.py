"""Parameter sweeps: plan, run on a local pool or Dask, resume, fail, aggregate.

Kill and interrupt tests run the sweep in subprocesses (or kill worker
processes only, identified by the pid in their ``runs/.tmp-*`` folder), so the
test process itself is never at risk.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import satqm
from conftest import DROPTAIL, EXAMPLES, tiny_dict
from satqm.results import DETERMINISTIC_FILES
from satqm.sweep import Sweep, SweepBusy, SweepResult, store, sweep
from satqm.sweep.canonical_toml import dumps

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

GRID = {"topology.bottleneck.buffer": [10, 40], "tcp.recovery": ["newreno", "sack"]}
RUN_FILES = (*DETERMINISTIC_FILES, "params.json")


def slow_dict(duration: str = "200 s") -> dict:
    """TINY at 100 Mbit/s for ``duration``: about 0.5 s of wall time per run
    at 200 s, long enough to catch a run in the middle."""
    d = tiny_dict()
    d["simulation"]["duration"] = duration
    d["simulation"]["trace_cwnd"] = []
    d["topology"]["bottleneck"]["rate"] = "100 Mbps"
    d["topology"]["bottleneck"]["buffer"] = 100
    return d


def satqm_cmd(*args: str, timeout: float = 120, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satqm.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )


def write_sweep_file(tmp_path: Path, body: str, base: dict | None = None) -> Path:
    (tmp_path / "base.toml").write_text(dumps(base if base is not None else tiny_dict()))
    p = tmp_path / "sweep.toml"
    p.write_text('base = "base.toml"\n' + body)
    return p


def finished(out: Path) -> list[str]:
    d = out / "runs"
    return sorted(p.name for p in d.iterdir() if not p.name.startswith(".")) if d.is_dir() else []


def run_files(out: Path) -> dict[str, bytes]:
    files = {}
    for rid in finished(out):
        for name in RUN_FILES:
            files[f"{rid}/{name}"] = (out / "runs" / rid / name).read_bytes()
    return files


def assert_complete(out: Path, n: int) -> SweepResult:
    """Every planned run present once, readable, and nothing half-written."""
    res = SweepResult.load(out)
    assert len(res) == n
    assert res.ok, res.manifest[["index", "status", "error"]]
    assert sorted(res.manifest["run_id"]) == finished(out)
    assert store.tmp_dirs(out) == []
    assert not any((out / "failed").glob("*")) if (out / "failed").exists() else True
    for rid in finished(out):
        r = satqm.Results.load(out / "runs" / rid)
        assert r.summary()["duration_s"] > 0
        for name in ("timeseries", "drops", "flows", "cwnd"):
            pd.read_parquet(out / "runs" / rid / f"{name}.parquet")
    pd.read_parquet(out / "manifest.parquet")
    return res


def child_pids() -> set[int]:
    """Our direct children (Linux /proc)."""
    me, kids = os.getpid(), set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == me:
                kids.add(int(d.name))
    return kids


def kill_first_running_worker(out: Path, allowed: set[int] | None, stop: threading.Event) -> list:
    """In a thread: SIGKILL the worker running the first run seen in
    progress (its pid is in the ``.tmp-`` folder name). Returns [pid] once done."""
    killed: list = []

    def work() -> None:
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            for p in store.tmp_dirs(out):
                try:
                    pid = int(p.name.split("-")[-2])
                except ValueError:
                    continue
                ok = pid in (allowed if allowed is not None else child_pids())
                if ok and pid != os.getpid():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        continue
                    killed.append(pid)
                    return
            time.sleep(0.01)

    t = threading.Thread(target=work, daemon=True)
    t.start()
    killed.append(t)
    return killed


def boom_on_seed_2(sc: satqm.Scenario) -> satqm.Results:
    """A run function that fails for seed 2 (top level: workers import it)."""
    if sc.seed == 2:
        raise RuntimeError("boom on seed 2")
    return satqm.run(sc)


# ----- the TOML writer -------------------------------------------------------


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_toml_writer_round_trips_the_examples(path):
    data = tomllib.loads(path.read_text())
    text = dumps(data)
    assert tomllib.loads(text) == data
    assert dumps(tomllib.loads(text)) == text  # canonical: a fixed point
    satqm.Scenario(text)


def test_toml_writer_tricky_values():
    data = {
        "name": 'quo"te \\ back\tslash\nnew ☃ \x01',
        "a.b": 1,
        "x": [1, 2.5, "s", True, {"k": 1e-7}],
        "f": 1e300,
        "neg": -0.0,
        "t": {"inner": {"deep": [1, 2]}, "empty": {}},
        "arr": [{"a": 1, "sub": {"b": 2}}, {"a": 2}],
        "empty_list": [],
    }
    assert tomllib.loads(dumps(data)) == data
    with pytest.raises(TypeError, match="NoneType"):
        dumps({"a": None})


# ----- planning --------------------------------------------------------------


def test_plan_order_ids_and_params():
    sw = Sweep(tiny_dict(), GRID, seeds=[1, 2])
    pts = sw.points
    assert len(sw) == 8
    assert sw.axes == ["topology.bottleneck.buffer", "tcp.recovery"]
    # first grid key slowest, seeds fastest
    first = [(p.params["topology.bottleneck.buffer"], p.params["tcp.recovery"], p.seed)
             for p in pts[:3]]  # fmt: skip
    assert first == [(10, "newreno", 1), (10, "newreno", 2), (10, "sack", 1)]
    assert [p.index for p in pts] == list(range(8))
    for p in pts:
        data = tomllib.loads(p.text)
        assert data["topology"]["bottleneck"]["buffer"] == p.params["topology.bottleneck.buffer"]
        assert data["tcp"]["recovery"] == p.params["tcp.recovery"]
        assert p.run_id == store.make_run_id(p.text, p.seed, satqm.__version__)
        assert len(p.run_id) == 16
    assert len({p.run_id for p in pts}) == 8
    # the same sweep planned again: the same ids and the same default folder
    again = Sweep(tiny_dict(), GRID, seeds=[1, 2])
    assert [p.run_id for p in again.points] == [p.run_id for p in pts]
    assert again.default_out() == sw.default_out()


def test_plan_runs_fixed_and_seed_forms():
    sw = Sweep(
        tiny_dict(),
        {"topology.bottleneck.buffer": [10, 40]},
        runs=[{"tcp.recovery": "sack", "tcp.mss": 1000}, {"tcp.recovery": "reno"}],
        fixed={"simulation.duration": "2 s", "aqm": [{"kind": "red", "at": "bottleneck",
                                                      "min_th": 5, "max_th": 15}]},
        seeds={"from": 3, "count": 2},
    )  # fmt: skip
    assert len(sw) == 2 * 2 * 2
    assert sw.axes == ["topology.bottleneck.buffer", "tcp.recovery", "tcp.mss"]
    assert sw.seeds == [3, 4]
    p = sw.points[-1]
    # a key a [[runs]] entry leaves out keeps the base value
    assert p.params == {"topology.bottleneck.buffer": 40, "tcp.recovery": "reno", "tcp.mss": 1460}
    data = tomllib.loads(p.text)
    assert data["simulation"]["duration"] == "2 s"
    assert data["aqm"][0]["kind"] == "red"
    # without seeds: one run each, with the scenario's own seed
    red = {"kind": "red", "at": "bottleneck", "min_th": 5, "max_th": 15}
    sw1 = Sweep(tiny_dict(), {"aqm[0].max_p": [0.05, 0.1]}, fixed={"aqm": [red]})
    assert [p.seed for p in sw1.points] == [1, 1]
    # a Scenario's own seed/duration overrides are kept
    sc = satqm.Scenario(dumps(tiny_dict()), duration=1.5, seed=9)
    p0 = Sweep(sc, {"tcp.recovery": ["sack"]}).points[0]
    assert p0.seed == 9
    assert tomllib.loads(p0.text)["simulation"]["duration"] == "1.5 s"
    # and so is a warm-up override
    d = tiny_dict()
    d["simulation"]["warmup"] = "2 s"
    sc = satqm.Scenario(dumps(d), duration=1.5, warmup=0.5)
    p0 = Sweep(sc, {"tcp.recovery": ["sack"]}).points[0]
    assert tomllib.loads(p0.text)["simulation"]["warmup"] == "0.5 s"
    # and the links to capture
    sc = satqm.Scenario(dumps(tiny_dict()), capture=["bottleneck"])
    p0 = Sweep(sc, {"tcp.recovery": ["sack"]}).points[0]
    assert tomllib.loads(p0.text)["simulation"]["capture"] == ["bottleneck"]


def _refused(match_key: str, **kw) -> satqm.ConfigError:
    with pytest.raises(satqm.ConfigError) as ei:
        Sweep(kw.pop("base", None) or tiny_dict(), **kw)
    assert ei.value.path == match_key, str(ei.value)
    assert match_key in str(ei.value)
    return ei.value


def test_bad_axes_are_refused_naming_the_key():
    e = _refused("topology.bottleneck.buffr", grid={"topology.bottleneck.buffr": [1, 2]})
    assert "unknown field" in str(e)
    _refused("topology.botleneck.buffer", grid={"topology.botleneck.buffer": [1, 2]})
    e = _refused("aqm[0].max_p", grid={"aqm[0].max_p": [0.1]})  # TINY has no [[aqm]]
    assert "no aqm" in str(e)
    e = _refused("traffic[3].size", grid={"traffic[3].size": [1000]})
    assert "traffic[3]" in str(e)
    _refused("tcp.recovery.x", grid={"tcp.recovery.x": [1]})
    _refused("topology..buffer", grid={"topology..buffer": [1]})


def test_bad_values_are_refused_naming_the_key():
    e = _refused("topology.bottleneck.buffer", grid={"topology.bottleneck.buffer": [10, "abc"]})
    assert '"abc"' in str(e)
    e = _refused("tcp.mss", grid={"tcp.mss": [1460, 1460.5]})
    assert "1460.5" in str(e)
    _refused("tcp.recovery", grid={"tcp.recovery": ["newreno", "cubic-ish"]})
    _refused("tcp.ecn", runs=[{"tcp.ecn": "yes"}])
    _refused("simulation.duration", fixed={"simulation.duration": "-1 s"})
    e = _refused("tcp.mss", grid={"tcp.mss": [None]})
    assert "NoneType" in str(e)
    _refused("tcp.mss", grid={"tcp.mss": 1460})  # not a list
    _refused("tcp.mss", grid={"tcp.mss": []})
    _refused("tcp.mss", grid={"tcp.mss": [1000, 1000]})
    _refused("tcp.mss", grid={"tcp.mss": [1000]}, fixed={"tcp.mss": 1000})
    _refused("simulation.seed", grid={"simulation.seed": [1, 2]}, seeds=[1])
    _refused("seeds", seeds=[1, 1])
    _refused("seeds", seeds=[-1])
    _refused("seeds", seeds="12")
    _refused("seeds", seeds=10)


def test_a_bare_number_on_a_dimensioned_axis_is_refused():
    e = _refused("topology.bottleneck.delay", grid={"topology.bottleneck.delay": ["50 ms", 270]})
    assert str(e) == (
        'topology.bottleneck.delay: 270 (grid): 270 has no unit; write "270 ms" or "270 s"'
    )
    e = _refused("simulation.duration", fixed={"simulation.duration": 30})
    assert 'write "30 ms" or "30 s"' in str(e)
    # Dimensionless keys take plain numbers, and 0 needs no unit.
    sw = Sweep(tiny_dict(), {"topology.bottleneck.loss": [0.0, 0.01]},
               fixed={"simulation.warmup": 0})  # fmt: skip
    assert len(sw) == 2


def test_invalid_combinations_are_refused():
    red = {"kind": "red", "at": "bottleneck", "min_th": 5, "max_th": 15}
    # each value is fine with the base, the combination is not
    e = _refused(
        "aqm[0].min_th",
        grid={"aqm[0].min_th": [5, 30], "aqm[0].max_th": [20, 40]},
        fixed={"aqm": [red]},
    )
    assert "30" in str(e) and "max_th" in str(e)
    # values only valid together are accepted
    sw = Sweep(tiny_dict(), {"aqm[0].min_th": [20, 30], "aqm[0].max_th": [40, 60]},
               fixed={"aqm": [red]})  # fmt: skip
    assert len(sw) == 4


def test_nothing_runs_on_bad_input(tmp_path):
    f = write_sweep_file(tmp_path, '[grid]\n"topology.bottleneck.buffr" = [1, 2]\n')
    out = tmp_path / "out"
    r = satqm_cmd("sweep", str(f), "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert "topology.bottleneck.buffr" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()
    f = write_sweep_file(tmp_path, '[grid]\n"tcp.mss" = [1000, "big"]\n')
    r = satqm_cmd("sweep", str(f), "--out", str(out))
    assert r.returncode == 2 and "tcp.mss" in r.stderr and "big" in r.stderr, r.stderr
    assert not out.exists()


def test_sweep_file_forms(tmp_path):
    red = '[[aqm]]\nkind = "red"\nat = "bottleneck"\nmin_th = 5\nmax_th = 15\n'
    base = tomllib.loads(dumps(tiny_dict()) + red)
    f = write_sweep_file(
        tmp_path,
        "seeds = { from = 1, count = 3 }\n"
        "[grid]\n"
        '"topology.bottleneck.buffer" = [10, 20]\n'
        'tcp.recovery = ["newreno", "sack"]\n'  # unquoted dotted key: same thing
        "[set]\n"
        'simulation.duration = "2 s"\n'
        '"topology.access.buffer" = { bytes = "1 MB" }\n'  # an inline table value
        "[[runs]]\n"
        '"aqm[0].max_p" = 0.05\n'
        "[[runs]]\n"
        '"aqm[0].max_p" = 0.2\n',
        base=base,
    )
    sw = Sweep.from_file(f)
    assert sw.axes == ["topology.bottleneck.buffer", "tcp.recovery", "aqm[0].max_p"]
    assert len(sw) == 2 * 2 * 2 * 3
    data = tomllib.loads(sw.points[0].text)
    assert data["simulation"]["duration"] == "2 s"
    assert data["topology"]["access"]["buffer"] == {"bytes": "1 MB"}
    assert data["aqm"][0]["max_p"] == 0.05
    for body, key in [
        ('bse = "x"\n', "bse"),
        ("[grid]\nfoo = 3\n", "foo"),
        ("seeds = [1, 1]\n", "seeds"),
    ]:
        f = write_sweep_file(tmp_path, body)
        with pytest.raises(satqm.ConfigError) as ei:
            Sweep.from_file(f)
        assert ei.value.path == key, str(ei.value)
    (tmp_path / "nobase.toml").write_text('base = "missing.toml"\n')
    with pytest.raises(satqm.ConfigError, match="missing.toml"):
        Sweep.from_file(tmp_path / "nobase.toml")


# ----- running ---------------------------------------------------------------


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory) -> SweepResult:
    """The 8-run sweep on the local pool of 2 processes."""
    out = tmp_path_factory.mktemp("local") / "sweep"
    return sweep(tiny_dict(), GRID, seeds=[1, 2], out=out, workers=2, progress=False)


def test_local_pool_runs_everything(local_sweep):
    res = assert_complete(local_sweep.out, 8)
    m = res.manifest
    assert list(m.columns[:6]) == [
        "index", "run_id", "status", "topology.bottleneck.buffer", "tcp.recovery", "seed",
    ]  # fmt: skip
    assert m["topology.bottleneck.buffer"].tolist() == [10, 10, 10, 10, 40, 40, 40, 40]
    assert "utilization_mean" in res.metrics and "seed" not in res.metrics
    # the manifest on disk is what the result holds
    on_disk = pd.read_parquet(local_sweep.out / "manifest.parquet")
    pd.testing.assert_frame_equal(on_disk, m, check_dtype=False)
    # the stored run is the run
    p = Sweep(tiny_dict(), GRID, seeds=[1, 2]).points[5]
    direct = satqm.run(satqm.Scenario(p.text, seed=p.seed))
    assert pd.Series(res.results(5).summary()).equals(pd.Series(direct.summary()))
    assert res.results(p.run_id).seed == p.seed
    params = json.loads((res.run_dir(5) / "params.json").read_text())
    assert params["params"] == p.params and params["seed"] == p.seed
    timings = pd.read_parquet(local_sweep.out / "timings.parquet")
    assert len(timings) == 8 and (timings["wall_time_s"] > 0).all()


def test_resume_skips_finished_and_redoes_missing(tmp_path):
    out = tmp_path / "s"
    res = sweep(tiny_dict(), GRID, seeds=[1], out=out, workers=0, progress=False)
    assert res.ok
    stamps = {rid: (out / "runs" / rid / "run.json").stat().st_mtime_ns for rid in finished(out)}
    gone = res.manifest["run_id"][1]
    import shutil

    shutil.rmtree(out / "runs" / gone)
    (out / "runs" / ".tmp-deadbeefdeadbeef-host-1-abcd").mkdir()  # a killed run's leftovers
    mid = SweepResult.load(out)
    assert mid.counts() == {"done": 3, "failed": 0, "missing": 1}
    again = sweep(tiny_dict(), GRID, seeds=[1], out=out, workers=0, progress=False)
    assert_complete(out, 4)
    for rid, t in stamps.items():
        if rid != gone:
            assert (out / "runs" / rid / "run.json").stat().st_mtime_ns == t, "re-ran a done run"
    assert again.ok
    # a bigger grid in the same folder runs only the new points
    bigger = dict(GRID, **{"topology.bottleneck.buffer": [10, 40, 80]})
    res3 = sweep(tiny_dict(), bigger, seeds=[1], out=out, workers=0, progress=False)
    assert res3.ok and len(res3) == 6
    for rid, t in stamps.items():
        if rid != gone:
            assert (out / "runs" / rid / "run.json").stat().st_mtime_ns == t


def test_failed_run_is_recorded_and_the_others_finish(tmp_path):
    out = tmp_path / "f"
    grid = {"topology.bottleneck.buffer": [10, 40]}
    res = sweep(tiny_dict(), grid, seeds=[1, 2], out=out, workers=2, progress=False,
                simulate=boom_on_seed_2)  # fmt: skip
    assert res.counts() == {"done": 2, "failed": 2, "missing": 0}
    bad = res.failures
    assert bad["seed"].tolist() == [2, 2]
    assert all(e == "RuntimeError: boom on seed 2" for e in bad["error"])
    rec = json.loads((out / "failed" / f"{bad['run_id'].iloc[0]}.json").read_text())
    assert rec["error_type"] == "RuntimeError" and "boom_on_seed_2" in rec["traceback"]
    assert math.isnan(bad["utilization_mean"].iloc[0])
    assert store.tmp_dirs(out) == []
    # status from the command line: failed runs named, exit 1
    r = satqm_cmd("sweep", "status", str(out))
    assert r.returncode == 1, r.stderr
    assert "2 done, 2 failed, 0 missing" in r.stdout and "boom on seed 2" in r.stdout
    # run again (with a run function that works): only the failed ones run
    res2 = sweep(tiny_dict(), grid, seeds=[1, 2], out=out, workers=2, progress=False)
    assert_complete(out, 4)
    assert res2.ok
    r = satqm_cmd("sweep", "status", str(out))
    assert r.returncode == 0 and "4 done, 0 failed, 0 missing" in r.stdout


def test_a_killed_pool_worker_still_leaves_a_complete_sweep(tmp_path):
    out = tmp_path / "k"
    stop = threading.Event()
    killed = kill_first_running_worker(out, None, stop)
    try:
        res = sweep(slow_dict(), {"topology.bottleneck.buffer": [50, 100, 200]}, seeds=[1, 2],
                    out=out, workers=2, progress=False)  # fmt: skip
    finally:
        stop.set()
        killed[0].join()
    assert len(killed) == 2, "no worker was caught mid-run"
    assert_complete(out, 6)
    assert res.ok


def _start_cli_sweep(f: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "satqm.cli", "sweep", str(f), "--out", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: signal it and its workers only
        # Ctrl-C as in a terminal, even when the tests themselves were
        # started in the background with SIGINT ignored (which a child
        # would inherit).
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_runs(out: Path, n: int, p: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(finished(out)) < n:
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the sweep did not get going"
        time.sleep(0.02)


def _group_gone(pgid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


SLOW_SWEEP = 'seeds = [1, 2]\n[grid]\n"topology.bottleneck.buffer" = [50, 100, 200, 400]\n'


def test_sigkill_halfway_then_resume(tmp_path):
    f = write_sweep_file(tmp_path, SLOW_SWEEP, slow_dict())
    out = tmp_path / "out"
    p = _start_cli_sweep(f, out, "--workers", "2")
    try:
        _wait_for_runs(out, 3, p)
        os.killpg(p.pid, signal.SIGKILL)  # the driver and its workers, as in a crash
        p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert _group_gone(p.pid)
    n = len(finished(out))
    assert 3 <= n < 8, n
    r = satqm_cmd("sweep", str(f), "--out", str(out), "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert f"{n} already done" in r.stderr
    assert "8 runs: 8 done, 0 failed, 0 missing" in r.stdout
    assert_complete(out, 8)


def test_ctrl_c_stops_cleanly_and_resumes(tmp_path):
    f = write_sweep_file(tmp_path, SLOW_SWEEP, slow_dict())
    out = tmp_path / "out"
    p = _start_cli_sweep(f, out, "--workers", "2")
    try:
        _wait_for_runs(out, 1, p)
        os.killpg(p.pid, signal.SIGINT)  # Ctrl-C in a terminal: the whole group
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert p.returncode == 130, err
    assert "interrupted" in err and "run the same command again" in err
    assert "Traceback" not in err
    assert _group_gone(p.pid), "worker processes outlived the interrupted sweep"
    assert store.tmp_dirs(out) == []
    mid = SweepResult.load(out)
    assert mid.counts()["failed"] == 0 and 1 <= mid.counts()["done"] < 8
    r = satqm_cmd("sweep", str(f), "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    assert_complete(out, 8)


def test_one_sweep_per_folder_at_a_time(tmp_path):
    out = tmp_path / "busy"
    out.mkdir()
    with store.locked(out), pytest.raises(SweepBusy):
        sweep(tiny_dict(), GRID, out=out, workers=0, progress=False)


# ----- aggregation -----------------------------------------------------------


def test_aggregate_mean_and_ci(local_sweep):
    from scipy import stats

    agg = local_sweep.aggregate()
    assert list(agg.index.names) == ["topology.bottleneck.buffer", "tcp.recovery"]
    assert len(agg) == 4
    m = local_sweep.manifest
    sel = m[(m["topology.bottleneck.buffer"] == 40) & (m["tcp.recovery"] == "sack")]
    x = sel["utilization_mean"].to_numpy()
    row = agg.loc[(40, "sack"), "utilization_mean"]
    assert row["n"] == 2
    assert row["mean"] == pytest.approx(x.mean())
    assert row["std"] == pytest.approx(x.std(ddof=1))
    assert row["ci95"] == pytest.approx(stats.t.ppf(0.975, 1) * x.std(ddof=1) / math.sqrt(2))
    by_one = local_sweep.aggregate(by="tcp.recovery", metrics=["utilization_mean"])
    assert by_one[("utilization_mean", "n")].tolist() == [4, 4]
    pooled = local_sweep.aggregate(by=[], metrics="drops_total")
    assert pooled[("drops_total", "n")].tolist() == [8]
    with pytest.raises(KeyError, match="not an axis"):
        local_sweep.aggregate(by="tcp.mss")
    with pytest.raises(KeyError, match="not a summary metric"):
        local_sweep.aggregate(metrics="utilisation")


def test_tables_and_plot(local_sweep):
    md = local_sweep.table("utilization_mean", by="tcp.recovery")
    lines = md.strip().splitlines()
    assert lines[0].startswith("| tcp.recovery | n | utilization_mean (mean) | ± 95 % CI |")
    assert len(lines) == 4
    csv = local_sweep.table("utilization_mean", fmt="csv")
    back = pd.read_csv(__import__("io").StringIO(csv))
    assert list(back.columns) == [
        "topology.bottleneck.buffer", "tcp.recovery", "n", "mean", "ci95", "std",
    ]  # fmt: skip
    assert len(back) == 4
    fig = local_sweep.plot("queue_mean_packets", x="topology.bottleneck.buffer", hue="tcp.recovery")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "topology.bottleneck.buffer"
    assert len(ax.get_legend().get_texts()) == 2
    fig2 = local_sweep.plot("queue_mean_packets", x="tcp.recovery",
                            where={"topology.bottleneck.buffer": 40})  # fmt: skip
    assert [t.get_text() for t in fig2.axes[0].get_xticklabels()] == ["newreno", "sack"]
    with pytest.raises(ValueError, match="also vary"):
        local_sweep.plot("queue_mean_packets", x="tcp.recovery")


def test_cli_table_status_dry_run(local_sweep, tmp_path):
    r = satqm_cmd("sweep", "table", str(local_sweep.out), "--metric", "utilization_mean",
                  "--by", "tcp.recovery")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("| tcp.recovery |")
    r = satqm_cmd("sweep", "table", str(local_sweep.out), "--metric", "nope")
    assert r.returncode == 2 and "not a summary metric" in r.stderr
    r = satqm_cmd("sweep", "status", str(local_sweep.out))
    assert r.returncode == 0 and "8 runs: 8 done, 0 failed, 0 missing" in r.stdout
    r = satqm_cmd("sweep", "status", str(tmp_path))
    assert r.returncode == 2 and "not a sweep folder" in r.stderr
    f = write_sweep_file(tmp_path, 'seeds = [1, 2, 3]\n[grid]\n"tcp.recovery" = ["reno", "sack"]\n')
    r = satqm_cmd("sweep", str(f), "--dry-run")
    assert r.returncode == 0 and "6 runs of tiny" in r.stdout, r.stderr
    r = satqm_cmd("sweep", str(f))
    assert r.returncode == 2 and "--out" in r.stderr


def test_cli_table_prints_every_metric_asked_for(local_sweep, capsys):
    from satqm.cli import main

    args = ["sweep", "table", str(local_sweep.out), "--by", "tcp.recovery"]
    metrics = ["--metric", "utilization_mean", "--metric", "drops_total"]
    assert main([*args, *metrics]) == 0
    out = capsys.readouterr().out
    # one table per metric, a blank line between them
    assert out == (
        local_sweep.table("utilization_mean", by="tcp.recovery")
        + "\n"
        + local_sweep.table("drops_total", by="tcp.recovery")
    )
    assert out.split("\n\n")[1].startswith("| tcp.recovery | n | drops_total (mean) |")
    assert main([*args, *metrics, "--csv"]) == 0
    back = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert list(back.columns) == ["tcp.recovery", "metric", "n", "mean", "ci95", "std"]
    assert back["metric"].tolist() == ["utilization_mean"] * 2 + ["drops_total"] * 2
    one = pd.read_csv(__import__("io").StringIO(local_sweep.table("drops_total", "tcp.recovery",
                                                                  fmt="csv")))  # fmt: skip
    pd.testing.assert_frame_equal(
        back[back["metric"] == "drops_total"].drop(columns="metric").reset_index(drop=True), one
    )
    assert main([*args, *metrics, "--metric", "nope"]) == 2
    assert "'nope' is not a summary metric" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["status", "{dir}", "--retries", "3"], "--retries does not apply to 'satqm sweep status'"),
        (["status", "{dir}", "--workers", "0"], "--workers does not apply to 'satqm sweep status'"),
        (["table", "{dir}", "--metric", "m", "--retries", "0"], "--retries does not apply"),
        (["{file}", "--dry-run", "--metric", "m"], "--metric does not apply to 'satqm sweep FILE'"),
        (["{file}", "--dry-run", "--csv"], "--csv does not apply to 'satqm sweep FILE'"),
    ],
)
def test_cli_refuses_options_of_another_sweep_command(tmp_path, capsys, args, message):
    from satqm.cli import main

    f = write_sweep_file(tmp_path, '[grid]\n"tcp.recovery" = ["reno", "sack"]\n')
    argv = [a.format(dir=tmp_path, file=f) for a in args]
    assert main(["sweep", *argv]) == 2
    assert message in capsys.readouterr().err


def test_examples_sweep_file_plans():
    """docs/sweeps.md's first example, on the shipped example scenario."""
    sw = Sweep(DROPTAIL, {"topology.bottleneck.buffer": [100, 400, 800],
                          "tcp.recovery": ["newreno", "sack"]},
               seeds=range(3), fixed={"simulation.duration": "30 s"})  # fmt: skip
    assert len(sw) == 18


# ----- Dask (last: its cluster lives until the end of the module) -----------


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    # Dashboard on a free port: a fixed one may be taken on a shared machine
    # (and the warning that says so fails the test).
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with cluster, distributed.Client(cluster) as client:
        yield client


def test_local_and_dask_and_serial_write_the_same_bytes(local_sweep, dask_client, tmp_path):
    d = sweep(tiny_dict(), GRID, seeds=[1, 2], out=tmp_path / "dask", client=dask_client,
              progress=False)  # fmt: skip
    s = sweep(tiny_dict(), GRID, seeds=[1, 2], out=tmp_path / "serial", workers=0,
              progress=False)  # fmt: skip
    ref_files = run_files(local_sweep.out)
    assert len(ref_files) == 8 * len(RUN_FILES)
    for other in (d, s):
        assert_complete(other.out, 8)
        assert (other.out / "manifest.parquet").read_bytes() == (
            local_sweep.out / "manifest.parquet"
        ).read_bytes()
        assert run_files(other.out) == ref_files


def test_a_killed_dask_worker_still_leaves_a_complete_sweep(dask_client, tmp_path):
    out = tmp_path / "kd"
    stop = threading.Event()
    pids = set(dask_client.run(os.getpid).values())
    killed = kill_first_running_worker(out, pids, stop)
    try:
        res = sweep(slow_dict(), {"topology.bottleneck.buffer": [50, 100, 200]}, seeds=[1, 2],
                    out=out, client=dask_client, progress=False)  # fmt: skip
    finally:
        stop.set()
        killed[0].join()
    assert len(killed) == 2, "no worker was caught mid-run"
    assert_complete(out, 6)
    assert res.ok


def test_runs_leaving_out_a_key_aggregate(tmp_path):
    """A key only some [[runs]] give (and the base lacks) is missing elsewhere."""
    red = {"kind": "red", "at": "bottleneck", "min_th": 5, "max_th": 15}
    res = sweep(
        tiny_dict(),
        runs=[{"aqm[0].max_p": 0.1}, {"aqm[0].max_p": 0.02, "aqm[0].gentle": True}],
        fixed={"aqm": [red], "simulation.duration": "1 s"},
        seeds=[1, 2],
        out=tmp_path / "r",
        workers=0,
        progress=False,
    )
    assert res.ok
    assert res.manifest["aqm[0].gentle"].isna().tolist() == [True, True, False, False]
    agg = res.aggregate(metrics="utilization_mean")
    assert agg[("utilization_mean", "n")].tolist() == [2, 2]
    table = res.table("utilization_mean")
    assert "| 0.1 |  | 2 |" in table and "| 0.02 | true | 2 |" in table


def test_aqm_axes_are_labelled_readably(tmp_path, capsys):
    """A sweep over [[aqm]] tables labels its rows `bottleneck=pie`, not JSON;
    labels stay one per value."""
    from satqm.cli import main

    pie = {"kind": "pie", "at": "bottleneck"}
    red = {"kind": "red", "at": "bottleneck", "min_th": 5, "max_th": 15}
    codel = {"kind": "codel", "at": "bottleneck.reverse"}
    res = sweep(
        tiny_dict(),
        {"aqm": [[pie], [red], [pie, codel], []]},
        fixed={"simulation.duration": "0.5 s"},
        out=tmp_path / "aqm",
        workers=0,
        progress=False,
    )
    labels = [
        "bottleneck=pie",
        "bottleneck=red(max_th=15, min_th=5)",
        "bottleneck=pie, bottleneck.reverse=codel",
        "none",
    ]
    assert res.manifest["aqm"].tolist() == labels
    table = res.table("drops_total")
    assert [line.split(" | ")[0] for line in table.splitlines()[2:]] == [f"| {x}" for x in labels]
    assert "{" not in table
    fig = res.plot("drops_total", x="aqm")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == labels
    assert main(["sweep", "status", str(res.out)]) == 0
    # the run parameters keep the tables themselves
    assert json.loads((res.run_dir(0) / "params.json").read_text())["params"]["aqm"] == [pie]
    capsys.readouterr()


def test_axis_labels_that_would_clash_fall_back_to_json():
    a = [{"kind": "red", "at": "b", "n": "x), c=red(n=1"}]
    b = [{"kind": "red", "at": "b", "n": "x"}, {"kind": "red", "at": "c", "n": 1}]
    assert store.label(a) == store.label(b) == "b=red(n=x), c=red(n=1)"
    assert store._column([a, b]) == [store.display(a), store.display(b)]
    assert store._column([a, []]) == [store.label(a), "none"]


def test_cli_on_a_dask_scheduler(local_sweep, dask_client, tmp_path):
    """`satqm sweep --scheduler ADDR` runs on the cluster, same files."""
    body = 'seeds = [1, 2]\n[grid]\n"topology.bottleneck.buffer" = [10, 40]\n'
    body += '"tcp.recovery" = ["newreno", "sack"]\n'
    f = write_sweep_file(tmp_path, body)
    out = tmp_path / "out"
    addr = dask_client.scheduler.address
    r = satqm_cmd("sweep", str(f), "--out", str(out), "--scheduler", addr)
    assert r.returncode == 0, r.stderr
    assert f"Dask scheduler {addr}" in r.stderr
    assert run_files(out) == run_files(local_sweep.out)
    assert (out / "manifest.parquet").read_bytes() == (
        local_sweep.out / "manifest.parquet"
    ).read_bytes()
    env = dict(os.environ, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="2s")
    r = satqm_cmd("sweep", str(f), "--out", str(out), "--scheduler", "tcp://127.0.0.1:9", env=env)
    assert r.returncode == 2 and "cannot connect" in r.stderr, r.stderr


# ----- damaged run folders, a killed parent, a full disk -------------------------


def _truncate(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def test_a_damaged_run_folder_is_reported_and_redone(tmp_path):
    out = tmp_path / "d"
    res = sweep(tiny_dict(), GRID, seeds=[1], out=out, workers=0, progress=False)
    assert res.ok
    before = run_files(out)
    params = json.loads((res.run_dir(0) / "params.json").read_text())
    rec = params["files"]["timeseries.parquet"]
    data = (res.run_dir(0) / "timeseries.parquet").read_bytes()
    assert rec["bytes"] == len(data) and len(rec["sha256"]) == 64
    stamps = {rid: (out / "runs" / rid / "run.json").stat().st_mtime_ns for rid in finished(out)}
    _truncate(res.run_dir(0) / "timeseries.parquet")  # a truncated Parquet table
    _truncate(res.run_dir(1) / "summary.json")  # a truncated summary
    (res.run_dir(2) / "run.json").write_text("{")  # a damaged wall-clock record
    damaged = {res.manifest["run_id"][i] for i in (0, 1, 2)}
    mid = SweepResult.load(out)
    assert mid.counts() == {"done": 1, "failed": 3, "missing": 0}
    for i in (0, 1, 2):
        assert "damaged" in mid.manifest["error"][i]
        with pytest.raises(KeyError, match="failed"):
            mid.results(i)
    assert "timeseries.parquet" in mid.manifest["error"][0]
    r = satqm_cmd("sweep", "status", str(out))
    assert r.returncode == 1, r.stderr
    assert "1 done, 3 failed, 0 missing" in r.stdout
    assert "damaged: #0, #1, #2" in r.stdout and "summary.json" in r.stdout
    # a resume redoes exactly the damaged runs, and they come out as they were
    again = sweep(tiny_dict(), GRID, seeds=[1], out=out, workers=0, progress=False)
    assert again.ok
    assert_complete(out, 4)
    assert run_files(out) == before
    for rid, t in stamps.items():
        changed = (out / "runs" / rid / "run.json").stat().st_mtime_ns != t
        assert changed == (rid in damaged), rid
    r = satqm_cmd("sweep", "status", str(out))
    assert r.returncode == 0 and "4 done, 0 failed, 0 missing" in r.stdout


def _sweep_processes(pid: int) -> list:
    import psutil

    return [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]


def test_sigkill_of_the_parent_takes_its_workers_along(tmp_path):
    import psutil

    f = write_sweep_file(tmp_path, SLOW_SWEEP, slow_dict())
    out = tmp_path / "out"
    p = _start_cli_sweep(f, out, "--workers", "2", "--quiet")
    try:
        _wait_for_runs(out, 2, p)
        procs = _sweep_processes(p.pid)
        assert len(procs) >= 3, procs  # the driver and its two workers
        os.kill(p.pid, signal.SIGKILL)  # the driver only, as the OOM killer would
        p.communicate(timeout=30)
        _, alive = psutil.wait_procs(procs, timeout=5)
        alive = [q for q in alive if q.is_running() and q.status() != psutil.STATUS_ZOMBIE]
        assert alive == [], f"processes of the killed sweep still run: {alive}"
        n = len(finished(out))
        time.sleep(1.5)
        assert len(finished(out)) == n, "runs were published after the sweep was killed"
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
    assert n < 8, n
    r = satqm_cmd("sweep", str(f), "--out", str(out), "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "8 runs: 8 done, 0 failed, 0 missing" in r.stdout
    assert_complete(out, 8)
    ref = tmp_path / "ref"
    r = satqm_cmd("sweep", str(f), "--out", str(ref), "--workers", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    assert run_files(out) == run_files(ref)
    assert (out / "manifest.parquet").read_bytes() == (ref / "manifest.parquet").read_bytes()


def _live(procs: list) -> list:
    import psutil

    _, alive = psutil.wait_procs(procs, timeout=10)
    return [q for q in alive if q.is_running() and q.status() != psutil.STATUS_ZOMBIE]


def test_ten_sigkills_at_random_moments_then_resume_byte_identical(tmp_path):
    """The sweep is killed ten times at moments drawn from a seeded generator
    (from interpreter start-up to the manifest's writing; the whole process
    group as in a crash, or the driver only as the OOM killer would), each
    time resumed by the same command; no process outlives a kill, and the
    finished sweep is byte-identical to one never interrupted."""
    import random

    import psutil

    f = write_sweep_file(tmp_path, SLOW_SWEEP, slow_dict())
    out = tmp_path / "out"
    rng = random.Random(1124)
    for k in range(10):
        p = _start_cli_sweep(f, out, "--workers", "2", "--quiet")
        try:
            time.sleep(rng.uniform(0.0, 2.5))
            try:
                procs = _sweep_processes(p.pid)
            except psutil.NoSuchProcess:
                procs = []
            if k % 2:
                os.kill(p.pid, signal.SIGKILL)
            else:
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate(timeout=30)
            assert _live(procs) == [], f"kill {k}: processes of the killed sweep still run"
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
        assert _group_gone(p.pid), f"kill {k}: the sweep's process group outlived it"
    r = satqm_cmd("sweep", str(f), "--out", str(out), "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert "8 runs: 8 done, 0 failed, 0 missing" in r.stdout
    assert_complete(out, 8)
    ref = tmp_path / "ref"
    r = satqm_cmd("sweep", str(f), "--out", str(ref), "--workers", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    assert run_files(out) == run_files(ref)
    assert (out / "manifest.parquet").read_bytes() == (ref / "manifest.parquet").read_bytes()


def test_a_resume_waits_for_the_workers_of_a_killed_sweep(tmp_path, monkeypatch):
    """A worker that outlives its sweep holds the folder until it ends."""
    out = tmp_path / "w"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from satqm.sweep import store; "
         "store.hold_worker_lock(sys.argv[1]); print('held', flush=True); time.sleep(60)",
         str(out)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(store, "WORKER_LOCK_WAIT_S", 0.5)
        with pytest.raises(SweepBusy, match="worker processes"):
            sweep(tiny_dict(), GRID, out=out, workers=0, progress=False)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert sweep(tiny_dict(), GRID, out=out, workers=0, progress=False).ok


def _disk_fills_after(monkeypatch, k: int) -> None:
    """Results.save writes part of a run, then raises ENOSPC, after ``k`` runs."""
    import errno

    from satqm.results import Results

    real = Results.save
    calls = {"n": 0}

    def save(self, directory, *, plot=True):
        calls["n"] += 1
        if calls["n"] > k:
            Path(directory, "summary.json").write_text('{"summ')
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, directory, plot=plot)

    monkeypatch.setattr(Results, "save", save)


def test_a_full_disk_keeps_the_finished_runs_and_says_so(tmp_path, monkeypatch, capsys):
    from satqm import cli

    f = write_sweep_file(tmp_path, 'seeds = [1, 2]\n[grid]\n"tcp.recovery" = ["reno", "sack"]\n')
    out = tmp_path / "full"
    _disk_fills_after(monkeypatch, 2)
    code = cli.main(["sweep", str(f), "--out", str(out), "--workers", "0", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "internal error" not in err and "this is a bug" not in err
    assert "no space left on" in err
    assert "2 runs finished are kept; free space and run the same command again" in err
    assert len(finished(out)) == 2
    assert store.tmp_dirs(out) == [] and not list((out / "runs").glob(".*"))
    m = pd.read_parquet(out / "manifest.parquet")
    assert m["status"].tolist() == ["done", "done", "missing", "missing"]
    assert not (out / "failed").exists() or not any((out / "failed").iterdir())
    # space freed: the same command does the rest
    monkeypatch.undo()
    assert cli.main(["sweep", str(f), "--out", str(out), "--workers", "0", "--quiet"]) == 0
    assert_complete(out, 4)


def test_a_full_disk_without_room_for_the_manifest(tmp_path, monkeypatch):
    import errno

    from satqm.sweep import files

    out = tmp_path / "full"
    _disk_fills_after(monkeypatch, 1)

    def no_room(path, df):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "write_parquet_atomic", no_room)
    with pytest.raises(store.DiskFull, match="1 runs finished are kept") as e:
        sweep(tiny_dict(), GRID, seeds=[1], out=out, workers=0, progress=False)
    assert e.value.errno == errno.ENOSPC
    assert len(finished(out)) == 1 and store.tmp_dirs(out) == []
