"""Results do not move: every shipped scenario (fixed seed, short run) and
every reproduction's ``--quick`` output match the fingerprints in
``tests/golden/hashes.json`` and ``tests/golden/values.json``: the core's
output bit for bit, the reproductions' analysis by value (see
``tests/golden/outputs.py``). A change that must move a result updates them
with ``python -m tests.golden.outputs --write``, in its own commit, with a
regression test for the reason."""

from __future__ import annotations

import pytest

from tests.golden import outputs

EXPECTED = outputs.expected()


def test_every_shipped_scenario_is_fingerprinted():
    names = {p.relative_to(outputs.SCENARIOS).as_posix() for p in outputs.shipped_scenarios()}
    assert names == set(EXPECTED["scenarios"])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED["scenarios"]))
def test_scenario_outputs_unchanged(name, tmp_path):
    got = outputs.scenario_digests(outputs.SCENARIOS / name, tmp_path)
    assert outputs.differences(got, EXPECTED["scenarios"][name]) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", outputs.REPRODUCTIONS)
def test_reproduction_quick_outputs_unchanged(name, tmp_path):
    got = outputs.reproduction_digests(name, tmp_path)
    assert outputs.differences(got, EXPECTED["reproductions"][name]) == []


def _fingerprint_after(tmp_path, files: dict[str, str]):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return outputs.folder_digests(tmp_path)


ANALYSIS = "case,queue_mean,verdict\nred,80.66562633832302,holds\navq,4.6065698525866505,fails\n"


def test_analysis_files_compare_by_value(tmp_path):
    """The last bits a BLAS kernel or a vector unit moves (here 10⁻¹¹, as an
    ODE integration moves between processors) are not a moved result; a
    change in the third digit, a lost number or a changed word is."""
    want = _fingerprint_after(tmp_path / "a", {"agreement.csv": ANALYSIS})
    blas = ANALYSIS.replace("80.66562633832302", "80.66562633832304").replace(
        "4.6065698525866505", "4.606569852586477"
    )
    assert (
        outputs.differences(_fingerprint_after(tmp_path / "b", {"agreement.csv": blas}), want) == []
    )
    moved = ANALYSIS.replace("80.66562633832302", "80.7")
    assert outputs.differences(
        _fingerprint_after(tmp_path / "c", {"agreement.csv": moved}), want
    ) == ["moved: agreement.csv (number 0: 80.7, expected 80.6656263383)"]
    worded = ANALYSIS.replace("fails", "holds")
    assert outputs.differences(
        _fingerprint_after(tmp_path / "d", {"agreement.csv": worded}), want
    ) == ["moved: agreement.csv (text)"]
    fewer = ANALYSIS.replace(",4.6065698525866505", ",")
    assert outputs.differences(_fingerprint_after(tmp_path / "e", {"agreement.csv": fewer}), want)


def test_a_saved_run_compares_bit_for_bit(tmp_path):
    """Inside a saved run (a folder with run.json) every file is the core's
    output and must not move by a single bit."""
    run = {"runs/x/run.json": "{}", "runs/x/summary.json": '{"goodput": 80.66562633832302}'}
    want = _fingerprint_after(tmp_path / "a", run)
    assert "runs/x/summary.json" not in want[1]
    nudged = dict(run, **{"runs/x/summary.json": '{"goodput": 80.66562633832304}'})
    assert outputs.differences(_fingerprint_after(tmp_path / "b", nudged), want) == [
        "moved: runs/x/summary.json (content)"
    ]


def test_numbers_inside_names_stay_in_the_text():
    text, numbers = outputs.split_numbers("N20-mice s1 fig21 4602fb9a: 13.1 -3.2e-05 nan")
    assert text == "N20-mice s1 fig21 4602fb9a: # # #"
    assert numbers[:2] == [13.1, -3.2e-05]
