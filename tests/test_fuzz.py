"""The scenario fuzzer: any scenario is refused cleanly or runs correctly.

Scenarios are built from the schema the core states (tests/fuzz_schema.py)
and judged by tests/fuzz_check.py in a worker process, so that a crash of
the native core is seen and counted instead of ending the session.

The normal run tries 1,500 cases. The long run (docs/reliability.md)::

    SATQM_FUZZ_EXAMPLES=10000 SATQM_FUZZ_REPORT=fuzz-report.json \\
        python -m pytest tests/test_fuzz.py -k fuzz_refused_or_runs

counts every outcome, keeps going past findings, writes the counts and
the failing cases to the report, and fails at the end if there were any.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import satqm
from conftest import tiny_dict, to_toml
from fuzz_check import (
    BAD_ERROR,
    CRASH,
    DURATION,
    EXCEPTION,
    INVARIANT,
    OUTCOMES,
    RAN,
    REFUSED,
    TIMEOUT,
    decode,
    encode,
    error_problems,
    invariant_violations,
    judge,
)
from fuzz_schema import FUZZ_BASE, as_case, mutated_scenarios, schema, valid_scenarios
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from satqm.results import DETERMINISTIC_FILES

HERE = Path(__file__).resolve().parent

#: Cases of the main fuzz test: 1,500 normally, more on request.
EXAMPLES = int(os.environ.get("SATQM_FUZZ_EXAMPLES", "1500"))
#: Where the long run writes its counts (and then it does not stop at the
#: first finding).
REPORT = os.environ.get("SATQM_FUZZ_REPORT")
#: Wall seconds one case may take in the worker before it counts as hung.
CASE_TIMEOUT = float(os.environ.get("SATQM_FUZZ_TIMEOUT", "60"))


class Worker:
    """A `python tests/fuzz_check.py` process judging one case at a time."""

    def __init__(self, command: list[str] | None = None) -> None:
        self.command = command or [sys.executable, str(HERE / "fuzz_check.py")]
        self.proc: subprocess.Popen[str] | None = None

    def _discard(self) -> int:
        """Close a dead (or hung: killed here) worker's pipes; its exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.kill()
        code = self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except BrokenPipeError:
                    pass
        self.proc = None
        return code

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is not None and self.proc.poll() is not None:
            self._discard()
        if self.proc is None:
            self.proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])},
            )
        return self.proc

    def judge(self, case: str | bytes, save: str | None = None) -> dict[str, Any]:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        msg = {**encode(case), "duration": DURATION, "save": save}
        try:
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(CASE_TIMEOUT)
        if not ready:
            self._discard()
            return {"outcome": TIMEOUT, "detail": f"no answer in {CASE_TIMEOUT:g} s"}
        line = proc.stdout.readline()
        if not line:
            code = self._discard()
            how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
            return {"outcome": CRASH, "detail": f"the worker died ({how})"}
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            self.proc.wait(timeout=30)
            self._discard()


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()


@pytest.fixture(scope="module")
def tally():
    """Outcome counts and findings of the main fuzz test; written to
    SATQM_FUZZ_REPORT if set, and a long run with findings fails here."""
    counts: collections.Counter[str] = collections.Counter({k: 0 for k in OUTCOMES})
    findings: list[dict[str, Any]] = []
    yield counts, findings
    if REPORT:
        Path(REPORT).write_text(
            json.dumps(
                {"cases": sum(counts.values()), "counts": counts, "findings": findings}, indent=1
            )
        )
        assert not findings, f"{len(findings)} findings; see {REPORT}"


def cases() -> st.SearchStrategy[str | bytes]:
    return st.one_of(valid_scenarios().map(as_case), mutated_scenarios())


@pytest.mark.slow
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=REPORT is None,
    database=None,  # derandomized: nothing to remember, and no .hypothesis/ in the repo
)
@given(cases())
def test_fuzz_refused_or_runs(worker: Worker, tally: Any, case: str | bytes) -> None:
    counts, findings = tally
    r = worker.judge(case)
    counts[r["outcome"]] += 1
    if r["outcome"] in (REFUSED, RAN):
        return
    if REPORT:
        findings.append({**r, **encode(case)})
        return
    pytest.fail(f"{r['outcome']}: {r['detail']}\n--- case ---\n{decode(encode(case))!r}")


# ----- properties of valid runs -------------------------------------------------------


def _run_valid(data: dict[str, Any]) -> satqm.Results:
    try:
        sc = satqm.Scenario.from_toml(to_toml(data), duration=DURATION)
    except satqm.ConfigError as e:
        assert not error_problems(e), error_problems(e)
        assume(False)
        raise
    return satqm.run(sc)


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("SATQM_FUZZ_PROPERTY_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
@given(valid_scenarios())
def test_valid_runs_keep_invariants(data: dict[str, Any]) -> None:
    """Packets conserved, utilization in [0, 1], goodput (per flow and in
    total) at most the bottleneck rate over the measurement window, the
    bottleneck queue within its limit, measured_s = end - warm-up."""
    res = _run_valid(data)
    assert invariant_violations(res) == []


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("SATQM_FUZZ_DETERMINISM_EXAMPLES", "10")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
@given(valid_scenarios())
def test_same_seed_same_files_in_two_processes(
    worker: Worker, tmp_path_factory: pytest.TempPathFactory, data: dict[str, Any]
) -> None:
    res = _run_valid(data)
    d = tmp_path_factory.mktemp("det")
    here = res.save(d / "here", plot=False)
    r = worker.judge(to_toml(data), save=str(d / "there"))
    assert r["outcome"] == RAN, r
    for name in DETERMINISTIC_FILES:
        a, b = (here / name).read_bytes(), (d / "there" / name).read_bytes()
        assert a == b, f"{name} differs between two processes with the same seed"


# ----- the fuzzer's own machinery --------------------------------------------------


def test_schema_is_read_from_the_core() -> None:
    """The fuzzer learns the kinds and keys from the core's refusals: a kind
    or key added to the core reaches the fuzzer without a list to update."""
    s = schema()
    assert {"droptail", "red", "avq", "avqred", "codel", "red_tail"} <= set(s.words["aqm[*].kind"])
    assert {"bulk", "cbr", "web", "web_mice"} <= set(s.words["traffic[*].kind"])
    assert {"dumbbell", "ipos"} == set(s.words["topology.kind"])
    assert {"duration", "seed", "warmup"} <= set(s.keys["simulation"])
    assert {"rate", "delay", "buffer", "reverse_buffer"} <= set(s.keys["topology.bottleneck"])
    assert "min_th" in s.keys["aqm[*]:red"]
    # every AQM kind's parameters are known, shipped in a scenario or not
    for kind in s.words["aqm[*].kind"]:
        assert f"aqm[*]:{kind}" in s.keys, kind


def test_every_shipped_base_runs() -> None:
    """The fuzzer's starting points are valid once squeezed into 1 s."""
    for name, data in schema().bases.items():
        res = satqm.run(satqm.Scenario.from_toml(to_toml(data), duration=DURATION))
        assert invariant_violations(res) == [], name


def test_fuzz_base_is_valid() -> None:
    res = satqm.run(satqm.Scenario.from_toml(FUZZ_BASE))
    assert len(res.flows) == 3
    assert set(res.flows["kind"]) == {"bulk", "cbr"}


def test_worker_counts_a_crash() -> None:
    """A worker that dies on a case is a crash, and the next case gets a
    new worker."""
    w = Worker([sys.executable, "-c", "import os; os.abort()"])
    try:
        for _ in range(2):
            r = w.judge(FUZZ_BASE)
            assert r["outcome"] == CRASH and "SIGABRT" in r["detail"], r
    finally:
        w.close()


def test_judge_names_every_outcome() -> None:
    assert judge(FUZZ_BASE)["outcome"] == RAN
    assert judge("x = ")["outcome"] == REFUSED
    assert judge(b'name = "caf\xe9"\n')["outcome"] == REFUSED
    assert {BAD_ERROR, EXCEPTION, INVARIANT, TIMEOUT} <= set(OUTCOMES)


# ----- findings: each one a regression test -----------------------------------------


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("topology", "bottleneck"), [1, 2]),
        (("topology", "access"), ["1 ms"]),
        (("simulation",), ["1 s"]),
        (("tcp",), ["newreno"]),
        (("traffic", 0, "tcp"), ["sack", "reno"]),
        (("traffic",), [["bulk", "all"]]),
    ],
)
def test_a_list_where_a_table_goes_is_refused_in_words(path: tuple, value: list) -> None:
    """A list given for a table was refused as "invalid length 2, expected
    struct RawLink with 7 elements" (serde reads a list as a struct's
    fields in order)."""
    d = tiny_dict()
    parent = d
    for k in path[:-1]:
        parent = parent[k]
    parent[path[-1]] = value
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(to_toml(d))
    assert error_problems(e.value) == []
    assert e.value.rule == "must be a table of keys, got a list"


def test_a_list_of_a_tables_fields_in_order_is_refused() -> None:
    d = tiny_dict()
    d["topology"]["bottleneck"] = ["10 Mbps", "50 ms", 0.0, 0.0, False, 20, 20]
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(to_toml(d))
    assert e.value.path == "topology.bottleneck"
    assert e.value.rule == "must be a table of keys, got a list"
