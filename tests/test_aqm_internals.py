"""Each AQM and queue discipline reports its own internals in the time
series (``aqm_…`` columns, named where the algorithm writes them): a run
gets the columns of the algorithms it has and no others, NaN on the rows of
links that do not report them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import satqm
from conftest import TINY


def _run(aqm: str, **kw) -> satqm.Results:
    return satqm.run(satqm.Scenario.from_toml(TINY + aqm), **kw)


def _internals(res: satqm.Results) -> list[str]:
    return [c for c in res.timeseries.columns if c.startswith("aqm_")]


CASES = {
    "droptail": ("", []),
    "red": (
        '[[aqm]]\nkind = "red"\nmin_th = 5\nmax_th = 15\n',
        ["aqm_avg", "aqm_prob", "aqm_count", "aqm_max_p"],
    ),
    "pie": ('[[aqm]]\nkind = "pie"\n', ["aqm_prob", "aqm_qdelay"]),
    "codel": ('[[aqm]]\nkind = "codel"\n', ["aqm_count", "aqm_qdelay"]),
    "avq": ('[[aqm]]\nkind = "avq"\n', ["aqm_vq_bytes", "aqm_vcap_bps"]),
    "rem": ('[[aqm]]\nkind = "rem"\n', ["aqm_price", "aqm_prob"]),
    "dualpi2": (
        '[[aqm]]\nkind = "dualpi2"\n',
        ["aqm_prob", "aqm_p_c", "aqm_p_cl", "aqm_l_packets", "aqm_c_packets"],
    ),
    "fq_codel": ('[[aqm]]\nkind = "fq_codel"\n', ["aqm_new_flows", "aqm_old_flows"]),
    "cobalt": ('[[aqm]]\nkind = "cobalt"\n', ["aqm_count", "aqm_prob"]),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    text, names = CASES[request.param]
    return request.param, _run(text), names


def test_a_run_has_the_columns_of_its_algorithms_only(case):
    kind, res, names = case
    assert _internals(res) == names, kind
    ts = res.timeseries
    at = ts[ts["link"] == "bottleneck"]
    other = ts[ts["link"] != "bottleneck"]
    assert len(other) > 0
    for c in names:
        assert ts[c].dtype == np.float64
        assert other[c].isna().all(), (kind, c)  # the reverse link has no AQM
        assert at[c].notna().all(), (kind, c)


def test_dualpi2s_probabilities_are_coupled():
    res = _run(CASES["dualpi2"][0])
    b = res.link()
    assert (b.aqm_prob > 0).any()
    # p_c = p'^2 and p_cl = min(k p', 1) with k = 2, to the 2^-32 grid.
    np.testing.assert_allclose(b.aqm_p_c, b.aqm_prob**2, atol=2**-31)
    np.testing.assert_allclose(b.aqm_p_cl, np.minimum(2 * b.aqm_prob, 1), atol=2**-31)
    # The two queues hold what the port's queue holds.
    assert (b.aqm_l_packets + b.aqm_c_packets == b.queue_packets).all()


def test_fq_lists_hold_the_active_flows():
    b = _run(CASES["fq_codel"][0]).link()
    assert (b.aqm_new_flows + b.aqm_old_flows).max() >= 1
    # Two TCP flows and their handshakes: no more than a few queues at once.
    assert (b.aqm_new_flows + b.aqm_old_flows).max() <= 4


def test_two_algorithms_in_one_run_share_the_table():
    text = TINY + (
        '[[aqm]]\nkind = "pie"\nat = "bottleneck"\n'
        '[[aqm]]\nkind = "red"\nat = "bottleneck.reverse"\nmin_th = 5\nmax_th = 15\n'
    )
    res = satqm.run(satqm.Scenario.from_toml(text))
    fwd, rev = res.link("bottleneck"), res.link("bottleneck.reverse")
    assert _internals(res) == ["aqm_prob", "aqm_qdelay", "aqm_avg", "aqm_count", "aqm_max_p"]
    assert fwd.aqm_qdelay.notna().all() and fwd.aqm_avg.isna().all()
    assert rev.aqm_avg.notna().all() and rev.aqm_qdelay.isna().all()
    assert fwd.aqm_prob.notna().all() and rev.aqm_prob.notna().all()


def test_internals_survive_a_save_and_load(tmp_path):
    res = _run(CASES["red"][0])
    res.save(tmp_path / "r")
    back = satqm.Results.load(tmp_path / "r")
    assert _internals(back) == _internals(res)
    for c in _internals(res):
        a, b = res.timeseries[c].to_numpy(), back.timeseries[c].to_numpy()
        assert np.array_equal(a, b, equal_nan=True)


def test_a_folder_with_every_internal_column_still_loads(tmp_path):
    """Folders written when every run carried the 20 internal columns (most
    of them NaN) load with those columns, as float."""
    import pandas as pd

    res = _run("")
    res.save(tmp_path / "r")
    path = tmp_path / "r" / "timeseries.parquet"
    ts = pd.read_parquet(path)
    ts["aqm_avg"] = math.nan
    ts["aqm_vq1_delay_s"] = math.nan
    ts.to_parquet(path)
    back = satqm.Results.load(tmp_path / "r")
    assert _internals(back) == ["aqm_avg", "aqm_vq1_delay_s"]
    assert back.timeseries["aqm_avg"].dtype == np.float64
