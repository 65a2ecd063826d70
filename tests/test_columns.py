"""The result columns are declared once in the core (probe tables, flow
rows); the type stubs and the DataFrame schemas of ``satqm.results`` must
name the same columns, in the same order."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import satqm
from conftest import TINY
from satqm import _core
from satqm.results import _SCHEMAS, PROBE_PREFIX

STUB = Path(satqm.__file__).with_name("_core.pyi")
#: TypedDict of the stub for each raw table.
STUB_CLASSES = {
    "timeseries": "_TimeSeriesColumns",
    "delay_hist": "_DelayHistColumns",
    "drops": "_DropColumns",
    "cwnd": "_CwndColumns",
    "congestion": "_CongestionColumns",
    "traffic": "_TrafficColumns",
    "flows": "_FlowColumns",
    "seq": "_SeqColumns",
    "link_state": "_LinkStateColumns",
}
#: Columns the DataFrames carry in seconds where the core has nanoseconds.
IN_SECONDS = {"time_ns": "time_s", "delay_ns": "delay_s"}


def _stub_fields() -> dict[str, list[str]]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]
    return out


@pytest.fixture(scope="module")
def raw():
    sim = _core.Simulation(TINY)
    sim.run()
    return sim.results()


def _fixed(table: str, names) -> list[str]:
    """The columns every run has: without the time series' AQM internals,
    which depend on the run's AQMs."""
    return [c for c in names if not (table == "timeseries" and c.startswith(PROBE_PREFIX))]


@pytest.mark.parametrize("table", sorted(STUB_CLASSES))
def test_stub_names_the_core_columns_in_order(raw, table):
    assert _stub_fields()[STUB_CLASSES[table]] == _fixed(table, raw[table])


@pytest.mark.parametrize("table", sorted(STUB_CLASSES))
def test_results_schema_names_the_core_columns(raw, table):
    # The DataFrames carry time in seconds where the core has nanoseconds,
    # and order flows' columns for reading; the set of columns is the same.
    core = {IN_SECONDS.get(c, c) for c in _fixed(table, raw[table])}
    assert set(_SCHEMAS[table]) == core
