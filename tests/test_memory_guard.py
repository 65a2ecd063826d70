"""The memory estimate against measured peaks, what it counts (backlogs behind
backpressure, the results Python builds), the check of what grows as a run
goes, and the pacing too fast to simulate that validation refuses."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import satqm
import satqm._core as core

from tests.conftest import TINY


def _scale(n: int, rate_mbps: int, secs: int) -> str:
    """The scale bench's dumbbell (benches/scale.rs): N bulk SACK flows."""
    bdp = max(2, round(rate_mbps * 1e6 * 0.1 / 8 / 1500))
    return textwrap.dedent(
        f"""\
        name = "scale"
        [simulation]
        duration = "{secs} s"
        seed = 1
        sample_interval = "100 ms"
        [topology]
        kind = "dumbbell"
        pairs = {n}
        [topology.access]
        rate = "{rate_mbps * 10} Mbps"
        delay = "2.5 ms"
        buffer = 1000
        [topology.bottleneck]
        rate = "{rate_mbps} Mbps"
        delay = "45 ms"
        buffer = {bdp}
        [tcp]
        recovery = "sack"
        mss = 1460
        initial_window = 2
        delayed_ack = true
        window_scaling = true
        [[traffic]]
        kind = "bulk"
        pairs = "all"
        start = {{ uniform = ["0 s", "1 s"] }}
        """
    )


#: Runs the satqm command and reports the peak of its own address space.
#: The child's VmHWM, not ru_maxrss: the latter also counts the pages the
#: child shared with the test process between fork and exec, which is the
#: whole pytest process late in a run of the suite.
_PEAK = """\
import sys
from satqm.cli import main
rc = main(sys.argv[1:])
with open("/proc/self/status") as f:
    hwm = next(line for line in f if line.startswith("VmHWM:"))
print(int(hwm.split()[1]))
sys.exit(rc)
"""


def _peak_mb(args: list[str]) -> float:
    """The peak resident memory of ``satqm ARGS`` run in a child process, MB."""
    r = subprocess.run(
        [sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[-1]) * 1024 / 1e6


@pytest.mark.parametrize(("flows", "rate_mbps", "secs"), [(10, 10, 20), (1000, 100, 4)])
def test_the_estimate_is_one_to_four_times_the_peak_of_satqm_run(tmp_path, flows, rate_mbps, secs):
    text = _scale(flows, rate_mbps, secs)
    path = tmp_path / "scale.toml"
    path.write_text(text)
    estimate = core.estimate_memory(text)["total"] / 1e6
    peak = _peak_mb(
        [
            "run",
            str(path),
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ]
    )
    assert 1.0 <= estimate / peak <= 4.0, f"estimate {estimate:.1f} MB, peak {peak:.1f} MB"


def test_the_estimate_counts_the_results_python_builds():
    py = core.estimate_memory(TINY)
    rust = core.estimate_memory(TINY, host="rust")
    assert py["base"] > rust["base"]
    parts = {p[0]: p[1] for p in py["parts"]}
    rust_parts = {p[0]: p[1] for p in rust["parts"]}
    # Numpy arrays, a DataFrame and an Arrow table besides the core's rows.
    assert parts["sampler"] == pytest.approx(4 * rust_parts["sampler"])
    assert parts["drop and congestion logs"] == pytest.approx(
        4 * rust_parts["drop and congestion logs"]
    )
    assert parts["flows"] > rust_parts["flows"]


#: One host whose access link holds its packets back rather than dropping
#: them (``backpressure``), 100 Mbit/s, behind a fast bottleneck.
_BACKPRESSURE = """\
name = "backpressure"
[simulation]
duration = "{secs} s"
seed = 1
[topology]
kind = "dumbbell"
pairs = 1
[topology.access]
rate = "100 Mbps"
delay = "5 ms"
buffer = 100
backpressure = true
[topology.bottleneck]
rate = "1 Gbps"
delay = "20 ms"
buffer = 100
[tcp]
window_scaling = true
[[traffic]]
kind = "cbr"
rate = "{cbr}"
packet_size = 1000
"""


def test_a_cbr_source_above_its_backpressure_link_is_refused_up_front():
    """200 Mbit/s offered to a 100 Mbit/s link that drops nothing: half of it
    waits in the host, 12,500 packets more every second of the run."""
    text = _BACKPRESSURE.format(secs=1000, cbr="200 Mbps")
    est = core.estimate_memory(text)
    held = {p[0]: p for p in est["parts"]}["packets held back by backpressure"]
    assert held[2] == pytest.approx(12_500 * 1000)
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario(text, max_memory="1 GB")
    assert e.value.path == "simulation"
    assert "packets held back by backpressure: 12,500,000 packets held back" in e.value.rule
    assert "the limit is 1.0 GB" in e.value.rule
    # A run short enough for its backlog is accepted.
    satqm.Scenario(_BACKPRESSURE.format(secs=10, cbr="200 Mbps"), max_memory="1 GB")


#: In a child process: a CBR source that fills its host's link, and a bulk
#: transfer from the same host. The estimate sees no backlog (the CBR rate is
#: the link's); the transfer's share of the link makes one, which grows for
#: as long as the run goes. The limit is 4 MB above the estimate.
_GROWS = textwrap.dedent(
    """
    import sys
    import satqm, satqm._core as core
    text = sys.stdin.read()
    limit = f'{int(core.estimate_memory(text)["total"] + 4e6)} B'
    sim = satqm.Simulation(satqm.Scenario(text, max_memory=limit))
    try:
        sim.run()
        print("finished")
    except satqm.SimulationError as e:
        # Where it stops does not depend on how the run is divided.
        stepped = satqm.Simulation(satqm.Scenario(text, max_memory=limit))
        try:
            while True:
                stepped.run_until(stepped.now + 0.5)
        except satqm.SimulationError:
            assert stepped.now == sim.now, (stepped.now, sim.now)
        res = sim.results()
        print(f"stopped {sim.now} {sim.end} {res.summary()['duration_s']} {len(res.timeseries)}")
        print(e)
    """
)


def test_a_backlog_that_outgrows_the_estimate_stops_the_run_with_its_results():
    text = _BACKPRESSURE.format(secs=60, cbr="100 Mbps") + '[[traffic]]\nkind = "bulk"\n'
    r = subprocess.run(
        [sys.executable, "-c", _GROWS], input=text, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr  # not killed by a signal
    head, message = r.stdout.split("\n", 1)
    word, now, end, duration, samples = head.split()
    assert word == "stopped", r.stdout
    assert 0 < float(now) < float(end) == 60
    # The results so far: the summary over the time simulated, the samples.
    assert float(duration) == float(now)
    assert int(samples) >= 2 * int(float(now) / 0.1)
    assert message.startswith(
        "out of memory: the packets held back by backpressure (most at link access[0]) grew to "
    ), message
    assert "above simulation.max_memory = " in message
    assert "the results recorded up to t = " in message


def test_the_cli_reports_the_stop_and_exits_1(tmp_path):
    text = _BACKPRESSURE.format(secs=60, cbr="100 Mbps") + '[[traffic]]\nkind = "bulk"\n'
    path = tmp_path / "grows.toml"
    path.write_text(text)
    limit = f"{int(core.estimate_memory(text)['total'] + 4e6)} B"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "satqm.cli",
            "run",
            str(path),
            "--out",
            str(tmp_path / "o"),
            "--quiet",
            "--max-memory",
            limit,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    assert "simulation failed at " in r.stderr
    assert "out of memory: the packets held back by backpressure" in r.stderr


def test_runs_within_their_estimate_are_not_stopped():
    """A limit just above the estimate: a run that stays within each part of
    it runs to the end."""
    limit = f"{int(core.estimate_memory(TINY)['total'] + 1)} B"
    res = satqm.run(satqm.Scenario(TINY, max_memory=limit))
    assert res.summary()["duration_s"] == 3


def _refusal(text: str) -> satqm.ConfigError:
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text)
    return e.value


def test_atsp_paced_one_packet_per_nanosecond_is_refused():
    def atsp(rtt: str) -> str:
        return TINY.replace(
            'kind = "bulk"', f'kind = "atsp"\natsp = {{ w_max = 500, initial_rtt = "{rtt}" }}'
        ).replace("trace_cwnd = [0, 1]\n", "")

    e = _refusal(atsp("1 ns"))
    assert e.path == "traffic[0].atsp.initial_rtt"
    assert e.rule.startswith("must be at least 2000 ns: the first alpha = 20 packets")
    satqm.Scenario.from_toml(atsp("2 us"))


def test_cbr_paced_one_packet_per_nanosecond_is_refused():
    def cbr(rate: str) -> str:
        return TINY.replace(
            'kind = "bulk"', f'kind = "cbr"\nrate = "{rate}"\npacket_size = 1000'
        ).replace("trace_cwnd = [0, 1]\n", "")

    e = _refusal(cbr("10 Tbps"))
    assert e.path == "traffic[0].rate"
    assert "every 1 ns" in e.rule and "at most 80000000000 bit/s" in e.rule
    satqm.Scenario.from_toml(cbr("10 Mbps"))


def test_the_backpressure_case_does_not_take_the_interpreter_down():
    """The case that aborted the interpreter: far more offered than the link
    carries, behind backpressure. It is refused before it runs."""
    text = _BACKPRESSURE.format(secs=10, cbr="80 Gbps")
    code = "import sys, satqm\ntry:\n    satqm.run(satqm.Scenario.from_toml(sys.stdin.read()))\n"
    code += "except satqm.ConfigError as e:\n    print(e.path, '|', e.rule)\n"
    r = subprocess.run(
        [sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("simulation | needs about "), r.stdout
    assert "packets held back by backpressure" in r.stdout
