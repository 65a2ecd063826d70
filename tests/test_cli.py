"""The `satqm` command, run as a separate process as users run it."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import satqm
from conftest import TINY
from satqm import cli


def satqm_cmd(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satqm.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return p


def test_run_writes_results(droptail_path, tmp_path):
    out = tmp_path / "out"
    r = satqm_cmd("run", str(droptail_path), "--out", str(out), "--duration", "10", "--seed", "3")
    assert r.returncode == 0, r.stderr
    for name in (
        "timeseries.parquet",
        "drops.parquet",
        "flows.parquet",
        "cwnd.parquet",
        "summary.json",
        "run.json",
        "scenario.toml",
        "plot.png",
    ):
        assert (out / name).is_file(), name
    doc = json.loads((out / "summary.json").read_text())
    assert doc["seed"] == 3
    assert doc["duration_s"] == 10.0
    assert doc["overrides"] == {"seed": 3, "duration_s": 10.0}
    assert 0.0 <= doc["summary"]["utilization_mean"] <= 1.0
    # the summary table and where the results went
    assert "Jain" in r.stdout
    (delay,) = [line for line in r.stdout.splitlines() if "queueing delay" in line]
    s = doc["summary"]
    for k in ("mean", "p95", "p99"):
        assert f"{k} {s[f'queue_delay_{k}_ms']:.3g}" in delay, delay
    (marks,) = [line for line in r.stdout.splitlines() if "ECN marks" in line]
    assert marks.split()[-2] == "0", marks  # drop-tail marks nothing
    assert str(out) in r.stdout.replace("\n", "")
    assert "Traceback" not in r.stderr
    # and the folder reads back
    res = satqm.Results.load(out)
    assert res.seed == 3 and res.duration == 10.0


def test_jain_is_na_when_no_flow_delivered_anything(tmp_path):
    # A 5 s one-way bottleneck: nothing arrives within the 3 s run, so
    # fairness among the flows is undefined: NaN, null in summary.json, n/a
    # in the table (not 1).
    scenario = tmp_path / "far.toml"
    scenario.write_text(TINY.replace('delay = "50 ms"', 'delay = "5 s"'))
    out = tmp_path / "out"
    r = satqm_cmd("run", str(scenario), "--out", str(out), "--no-plot")
    assert r.returncode == 0, r.stderr
    (jain,) = [line for line in r.stdout.splitlines() if "Jain" in line]
    assert "n/a" in jain, r.stdout
    doc = json.loads((out / "summary.json").read_text())
    assert doc["summary"]["goodput_total_bps"] == 0.0
    assert doc["summary"]["jain_index"] is None
    assert math.isnan(satqm.Results.load(out).summary()["jain_index"])


def test_plot_delay_writes_its_own_file(tiny_file, tmp_path):
    out = tmp_path / "out"
    r = satqm_cmd("run", str(tiny_file), "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    before = (out / "plot.png").read_bytes()
    r = satqm_cmd("plot", "delay", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out / "delay-bottleneck.png")
    assert (out / "delay-bottleneck.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "plot.png").read_bytes() == before  # not overwritten
    r = satqm_cmd("plot", "delay", str(out), "--link", "bottleneck.reverse")
    assert r.returncode == 0, r.stderr
    assert (out / "delay-bottleneck.reverse.png").is_file()
    r = satqm_cmd("plot", "delay", str(out), "--link", "access[0]")
    assert r.returncode == 2
    assert "not monitored" in r.stderr and "Traceback" not in r.stderr


def test_run_quiet_prints_nothing(tiny_file, tmp_path):
    r = satqm_cmd("run", str(tiny_file), "--out", str(tmp_path / "o"), "--quiet", "--no-plot")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and r.stderr == ""
    assert (tmp_path / "o" / "summary.json").is_file()
    assert not (tmp_path / "o" / "plot.png").exists()


def test_check_ok(droptail_path):
    r = satqm_cmd("check", str(droptail_path))
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert "\n" not in line
    assert line.startswith("OK dumbbell-droptail")
    assert "120 s" in line and "3 flows" in line


def test_check_overrides(droptail_path):
    r = satqm_cmd("check", str(droptail_path), "--duration", "7.5", "--seed", "9")
    assert r.returncode == 0, r.stderr
    assert "7.5 s" in r.stdout and "seed 9" in r.stdout


def test_check_bad_value(tiny_file):
    tiny_file.write_text(TINY.replace('rate = "10 Mbps"', 'rate = "-10 Mbps"'))
    r = satqm_cmd("check", str(tiny_file))
    assert r.returncode == 2
    assert "error: " in r.stderr
    assert "topology.bottleneck.rate: must be > 0" in r.stderr
    assert str(tiny_file) in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


def test_run_bad_value_exits_2_and_writes_nothing(tiny_file, tmp_path):
    tiny_file.write_text(TINY.replace("[tcp]", "[tcp]\nbogus = 1"))
    out = tmp_path / "o"
    r = satqm_cmd("run", str(tiny_file), "--out", str(out))
    assert r.returncode == 2
    assert "tcp.bogus: unknown field" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()


def test_unwritable_out_fails_before_running(tiny_file, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = satqm_cmd("run", str(tiny_file), "--out", str(blocker / "sub"), "--quiet")
    assert r.returncode == 2
    assert "cannot create" in r.stderr
    assert "Traceback" not in r.stderr


def test_duration_shorter_than_the_warmup_names_warmup(tmp_path):
    f = tmp_path / "warm.toml"
    f.write_text(TINY.replace('duration = "3 s"', 'duration = "3 s"\nwarmup = "2 s"'))
    r = satqm_cmd("check", str(f), "--duration", "1.5")
    assert r.returncode == 2
    assert "--duration 1.5: not longer than the scenario's 2 s warm-up" in r.stderr
    assert "add --warmup S with S < 1.5" in r.stderr
    assert "must be less than simulation.duration" not in r.stderr
    r = satqm_cmd("check", str(f), "--duration", "1.5", "--warmup", "2.5")
    assert r.returncode == 2 and "--warmup 2.5: must be less than --duration 1.5" in r.stderr
    r = satqm_cmd("check", str(f), "--warmup", "3")
    assert r.returncode == 2 and "--warmup 3: must be less than simulation.duration" in r.stderr
    r = satqm_cmd("check", str(f), "--warmup", "-1")
    assert r.returncode == 2 and "--warmup -1: must be >= 0" in r.stderr
    out = tmp_path / "out"
    r = satqm_cmd("run", str(f), "--duration", "1.5", "--warmup", "0.5s", "--out", str(out), "-q")
    assert r.returncode == 0, r.stderr
    res = satqm.Results.load(out)
    assert (res.duration, res.scenario.warmup) == (1.5, 0.5)
    assert res.summary()["measured_s"] == pytest.approx(1.0)


def test_a_run_that_needed_max_memory_reads_back(tmp_path):
    """A results folder keeps --max-memory, so `satqm plot` and
    Results.load accept a run the file's own limit would refuse."""
    f = tmp_path / "big.toml"
    f.write_text(TINY.replace("seed = 1\n", 'seed = 1\nmax_memory = "1 kB"\n'))
    out = tmp_path / "out"
    r = satqm_cmd("run", str(f), "--max-memory", "1 GB", "--out", str(out), "-q", "--no-plot")
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "summary.json").read_text())["overrides"] == {"max_memory": "1 GB"}
    assert satqm.Results.load(out).scenario.overrides == {"max_memory": "1 GB"}
    r = satqm_cmd("plot", "cwnd", str(out))
    assert r.returncode == 0, r.stderr


def test_invalid_toml(tiny_file):
    tiny_file.write_text("[simulation\n")
    r = satqm_cmd("check", str(tiny_file))
    assert r.returncode == 2
    assert "invalid TOML" in r.stderr
    assert "Traceback" not in r.stderr


def test_missing_file(tmp_path):
    r = satqm_cmd("check", str(tmp_path / "nope.toml"))
    assert r.returncode == 2
    assert "nope.toml: no such file" in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_flags_name_the_flag(tiny_file):
    r = satqm_cmd("check", str(tiny_file), "--duration", "-1")
    assert r.returncode == 2
    assert "--duration -1: must be > 0" in r.stderr
    r = satqm_cmd("check", str(tiny_file), "--duration", "nan")
    assert r.returncode == 2 and "--duration" in r.stderr
    r = satqm_cmd("check", str(tiny_file), "--seed", "x")
    assert r.returncode == 2 and "--seed" in r.stderr


def test_debug_shows_traceback(tiny_file):
    tiny_file.write_text(TINY.replace("pairs = 2", "pairs = 0"))
    r = satqm_cmd("--debug", "check", str(tiny_file))
    assert r.returncode == 2
    assert "Traceback" in r.stderr
    assert "topology.pairs: must be between" in r.stderr
    r = satqm_cmd("check", str(tiny_file), "--debug")  # after the command too
    assert r.returncode == 2 and "Traceback" in r.stderr


def test_version():
    r = satqm_cmd("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"satqm {satqm.__version__}"


@pytest.mark.parametrize("args", [[], ["run"], ["check"]])
def test_help(args):
    r = satqm_cmd(*args, "--help")
    assert r.returncode == 0
    assert r.stdout.startswith("usage: satqm")


def test_no_command_is_usage_error():
    r = satqm_cmd()
    assert r.returncode == 2
    assert "usage:" in r.stderr


def test_out_is_a_file(tiny_file, tmp_path):
    f = tmp_path / "file"
    f.write_text("")
    r = satqm_cmd("run", str(tiny_file), "--out", str(f), "--quiet")
    assert r.returncode == 2
    assert "not a directory" in r.stderr


def test_ctrl_c_exits_130(droptail_path, tmp_path):
    # Long enough to still be running when interrupted (about 10 s of work).
    out = tmp_path / "o"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "satqm.cli",
            "run",
            str(droptail_path),
            "--out",
            str(out),
            "--duration",
            "100000",
            "--no-plot",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as in a terminal, even when the tests were started in the
        # background with SIGINT ignored (which the child would inherit).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert p.stderr is not None
        first = p.stderr.readline()  # printed once the run has started
        assert first.startswith("running dumbbell-droptail"), first
        time.sleep(0.3)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    assert "interrupted at" in err
    assert "Traceback" not in err
    assert not (out / "summary.json").exists()


def test_main_in_process(tiny_file, tmp_path, capsys):
    assert cli.main(["check", str(tiny_file)]) == 0
    assert capsys.readouterr().out.startswith("OK tiny")
    assert cli.main(["run", str(tiny_file), "--out", str(tmp_path / "o"), "-q", "--no-plot"]) == 0
    assert cli.main(["check", str(tmp_path / "missing.toml")]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.skipif(os.name == "nt", reason="console script layout differs")
def test_console_script_if_installed(tiny_file):
    exe = Path(sys.executable).with_name("satqm")
    if not exe.exists():
        pytest.skip("satqm console script not installed next to this Python")
    r = subprocess.run(
        [str(exe), "check", str(tiny_file)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("OK tiny")


def test_run_shorter_than_one_sample_interval(tmp_path):
    from conftest import TINY

    p = tmp_path / "short.toml"
    p.write_text(TINY.replace('duration = "3 s"', 'duration = "50 ms"'))
    r = subprocess.run(
        [sys.executable, "-m", "satqm.cli", "run", str(p), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "shorter than one sample interval" in r.stdout
    assert (tmp_path / "out" / "plot.png").exists()


def test_plot_files_are_named_apart_and_printed(tmp_path, capsys):
    """A zoomed time-sequence graph and a link's plot get names of their
    own: neither overwrites the whole graph nor the run's plot.png."""
    text = TINY.replace("trace_cwnd = [0, 1]", "trace_cwnd = [0, 1]\ntrace_seq = [0]")
    run = satqm.run(satqm.Scenario(text)).save(tmp_path / "run", plot=False)
    (run / "plot.png").write_bytes(b"the run's plot")
    (run / "seq-flow0.png").write_bytes(b"the whole graph")

    def plot(*args: str) -> Path:
        assert cli.main(["plot", *args]) == 0
        return Path(capsys.readouterr().out.strip())

    assert plot("seq", str(run), "--flow", "0", "--from", "1", "--until", "2.5") == (
        run / "seq-flow0-1-2.5s.png"
    )
    assert plot("seq", str(run), "--flow", "0", "--from", "1") == run / "seq-flow0-from-1s.png"
    assert plot("seq", str(run), "--flow", "0", "--until", "2") == run / "seq-flow0-until-2s.png"
    assert plot("link", str(run)) == run / "plot-bottleneck.png"
    assert plot("link", str(run), "--link", "bottleneck.reverse") == (
        run / "plot-bottleneck.reverse.png"
    )
    assert plot("link", str(run), "--out", str(tmp_path / "l.png")) == tmp_path / "l.png"
    assert (run / "plot.png").read_bytes() == b"the run's plot"
    assert (run / "seq-flow0.png").read_bytes() == b"the whole graph"
    for p in run.glob("*.png"):
        assert p.name in ("plot.png", "seq-flow0.png") or p.read_bytes()[:4] == b"\x89PNG"
    assert plot("seq", str(run), "--flow", "0") == run / "seq-flow0.png"
    assert (run / "seq-flow0.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["link", "--from", "1"], "--from applies to `satqm plot seq` only, not to link"),
        (["cwnd", "--until", "1"], "--until applies to `satqm plot seq` only, not to cwnd"),
        (["cwnd", "--flow", "0"], "--flow applies to `satqm plot seq` only, not to cwnd"),
        (["seq", "--flow", "0", "--link", "bottleneck"], "--link applies to `satqm plot link`"),
        (["delay", "--flow", "0"], "--flow applies to `satqm plot seq` only, not to delay"),
        (["delay", "--from", "1"], "--from applies to `satqm plot seq` only, not to delay"),
        (["seq", "--flow", "0", "--from", "2", "--until", "1"], "--from must come first"),
    ],
)
def test_plot_refuses_options_that_do_not_apply(tmp_path, capsys, args, message):
    assert cli.main(["plot", args[0], str(tmp_path), *args[1:]]) == 2
    assert message in capsys.readouterr().err


def test_validate_help_and_docs_give_the_runs_the_code_makes():
    """`satqm validate --help` and docs/validation.md say how long the runs
    of each set are, and docs/validation.md how many there are."""
    import re

    from satqm.validation import scenarios as S

    r = satqm_cmd("validate", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert f"the quick subset, {S.QUICK_DURATION_S:g} s runs" in text
    assert f"the full set's {S.FULL_DURATION_S:g} s" in text
    doc = (Path(__file__).resolve().parents[1] / "docs" / "validation.md").read_text("utf-8")
    cc_durations = sorted({link["duration_s"] for link in S.LINKS.values()})
    for flags, quick in (("--quick", True), ("", False)):
        everything = S.scenarios(quick)
        fq_runs = [d for d in everything if d["aqm"]["kind"].startswith("fq_")]
        runs = [d for d in everything if d["tcp"]["cc"] == "reno" and d not in fq_runs]
        cc_runs = [d for d in everything if d["tcp"]["cc"] != "reno"]
        line = re.search(rf"^satqm validate ns3 {flags} *# .*$", doc, re.M)
        assert line is not None, flags
        dur = S.QUICK_DURATION_S if quick else S.FULL_DURATION_S
        assert f"{len(runs)} runs of {dur:g} s" in line.group(0)
        assert {d["duration_s"] for d in runs} == {dur}
        # the congestion-control runs keep their links' durations in both sets
        durations = " or ".join(f"{x:g}" for x in cc_durations)
        assert f"{len(cc_runs)} CUBIC, BBR and DCTCP runs of {durations} s" in line.group(0)
        assert sorted({d["duration_s"] for d in cc_runs}) == cc_durations
        assert f"{len(fq_runs)} flow-queuing runs of {durations} s" in line.group(0)
        assert sorted({d["duration_s"] for d in fq_runs}) == cc_durations


def test_reproduce_workers(monkeypatch, tmp_path, capsys):
    """`--workers 0` runs in this process, as for sweeps (it meant one
    process per CPU); a negative count is refused."""
    from satqm.experiments import _runner

    seen = []

    def execute(todo, store, report, workers):
        seen.append(workers)

    monkeypatch.setattr(_runner, "execute", execute)
    _runner.run_all([_runner.Run("a", TINY, 1), _runner.Run("b", TINY, 2)], tmp_path, workers=0)
    assert seen == [0]
    with pytest.raises(SystemExit) as e:
        cli.main(["reproduce", "models", "--workers", "-1", "--out", str(tmp_path)])
    assert e.value.code == 2 and "--workers: must be >= 0" in capsys.readouterr().err
