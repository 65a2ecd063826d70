"""Results do not move: every shipped scenario (fixed seed, short run) and
every reproduction's ``--quick`` output hash to the digests in
``tests/golden/hashes.json``. A change that must move a result updates them
with ``python -m tests.golden.outputs --write``, in its own commit, with a
regression test for the reason."""

from __future__ import annotations

import json

import pytest

from tests.golden import outputs

EXPECTED = json.loads(outputs.HASHES.read_text(encoding="utf-8"))


def _differences(got: dict[str, str], want: dict[str, str]) -> list[str]:
    out = [f"missing: {k}" for k in sorted(want.keys() - got.keys())]
    out += [f"new: {k}" for k in sorted(got.keys() - want.keys())]
    out += [f"moved: {k}" for k in sorted(want.keys() & got.keys()) if got[k] != want[k]]
    return out


def test_every_shipped_scenario_is_fingerprinted():
    names = {p.relative_to(outputs.SCENARIOS).as_posix() for p in outputs.shipped_scenarios()}
    assert names == set(EXPECTED["scenarios"])


@pytest.mark.parametrize("name", sorted(EXPECTED["scenarios"]))
def test_scenario_outputs_unchanged(name, tmp_path):
    got = outputs.scenario_digests(outputs.SCENARIOS / name, tmp_path)
    assert _differences(got, EXPECTED["scenarios"][name]) == []


@pytest.mark.parametrize("name", outputs.REPRODUCTIONS)
def test_reproduction_quick_outputs_unchanged(name, tmp_path):
    got = outputs.reproduction_digests(name, tmp_path)
    assert _differences(got, EXPECTED["reproductions"][name]) == []
