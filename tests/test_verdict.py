"""The verdict criteria every reproduction shares (satqm.experiments._verdict)."""

from __future__ import annotations

import math

import pytest
from satqm.experiments import _verdict as V


def test_match_is_within_the_larger_of_the_relative_tolerance_and_the_floor():
    # Queue statistics: 25 % of the paper's value, at least 1 packet.
    assert V.match(16.3, 13.11, V.QUEUE).holds  # 3.19 <= 3.28
    assert not V.match(16.5, 13.11, V.QUEUE).holds  # 3.39 > 3.28
    assert V.match(1.9, 1.0, V.QUEUE).holds  # the 1-packet floor, not 0.25
    assert not V.match(2.1, 1.0, V.QUEUE).holds
    # Judged on the mean over seeds.
    assert V.match([10.0, 16.0], 13.11, V.QUEUE).holds
    # A share of a link: 2 % of its capacity, in the values' unit.
    assert V.match(19.35, 19.7, V.SHARE, scale=20.0, unit="Mbit/s").holds
    assert not V.match(19.25, 19.7, V.SHARE, scale=20.0, unit="Mbit/s").holds
    assert not V.match(math.nan, 1.0, V.QUEUE).holds


def test_a_verdict_line_states_its_numbers_and_its_criterion():
    v = V.match(18.88, 13.11, V.QUEUE)
    assert v.word == "not reproduced"
    line = v.line("Table 1, mean queue before the short flows")
    assert line.startswith("- **not reproduced**: Table 1, mean queue")
    assert "18.9 vs 13.1 packets" in line
    assert (
        "criterion: within ±3.28 packets of the paper's value: 25 % of it, at least 1 packet"
        in line
    )
    assert V.match(13.0, 13.11, V.QUEUE).line("x").startswith("- **holds**: x")


def test_an_ordering_needs_the_margin_in_every_seed():
    # Loss: 10 % of the other, at least 0.05 percentage points.
    assert V.below([1.2, 1.3], [2.9, 3.0], V.LOSS).holds
    assert not V.below(0.95, 1.0, V.LOSS).holds  # 5 % apart: within the margin
    assert not V.below(0.0, 0.04, V.LOSS).holds  # under the 0.05-point floor
    v = V.below([1.0, 2.9], [2.0, 3.0], V.LOSS)  # the mean is below, seed 2 is not
    assert not v.holds and "in every seed (1 of 2)" in v.criterion
    assert V.above(0.30, 0.05, V.FRACTION).holds
    assert not V.above(0.14, 0.05, V.FRACTION).holds  # 9 points of the samples
    # "Not above": no worse than the other, within the margin.
    assert V.not_above(0.01, 0.0, V.LOSS).holds
    assert not V.not_above(0.2, 0.1, V.LOSS).holds
    with pytest.raises(ValueError, match="one value per seed"):
        V.below([1.0, 2.0], [3.0], V.LOSS)


def test_same_and_bound():
    # Two of satqm's throughputs on a 20 Mbit/s link: 1 % of it apart at most.
    assert V.same(19.70, 19.83, V.SHARE, scale=20.0, unit="Mbit/s").holds
    assert not V.same(19.50, 19.83, V.SHARE, scale=20.0, unit="Mbit/s").holds
    assert "apart by at most 1 % of the link's capacity (0.2 Mbit/s)" in V.same(
        19.7, 19.8, V.SHARE, scale=20.0, unit="Mbit/s"
    ).criterion
    b = V.bound([0.87, 0.4], V.MOST, V.FRACTION, below=False, level_text="most of the time")
    assert not b.holds and "above 0.50 (most of the time), in every seed (1 of 2)" in b.criterion
    assert V.bound(11.0, 20.0, V.QUEUE, below=True).holds


def test_windows_and_parts():
    w = V.window("100-120 s", V.above(64.0, 18.9, V.QUEUE))
    assert w.holds and w.numbers.startswith("100-120 s: 64.0 packets against 18.9")
    both = V.all_of(V.match(0.98, 0.98, V.SHARE), V.below(1.0, 5.0, V.QUEUE))
    assert both.holds and ";" in both.criterion
    assert not V.all_of(both, V.match(2.0, 1.0, V.SHARE)).holds
    # "Fast": a slow start's round trips to the bandwidth-delay product.
    assert V.fill_time(500, 0.6) == pytest.approx(9 * 0.6)


def test_a_value_printed_with_one_digit_and_a_column_of_matches():
    # "A dip to about 0.9": known to ±0.05, wider than Jain's 0.01.
    assert V.match(0.86, 0.9, V.FAIRNESS, printed=0.05).holds
    v = V.match(0.746, 0.9, V.FAIRNESS, printed=0.05)
    assert not v.holds and "±0.05" in v.criterion and "half the last digit" in v.criterion
    assert not V.match(0.86, 0.9, V.FAIRNESS).holds
    # A table's column: holds when every cell matches; the others are named.
    cells = {"RED": V.match(19.83, 19.8, V.SHARE, scale=20.0, unit="Mbit/s"),
             "AVQ": V.match(16.82, 19.5, V.SHARE, scale=20.0, unit="Mbit/s")}
    col = V.each(cells, V.SHARE, scale=20.0, unit="Mbit/s")
    assert not col.holds
    assert col.numbers == "1 of 2 within; outside: AVQ 16.820 vs 19.500 Mbit/s"
    assert col.criterion == (
        "each within 2 % of the link's capacity (0.4 Mbit/s) of the paper's value"
    )
    assert V.each({"RED": cells["RED"]}, V.SHARE).holds
    assert V.paper_rule(V.LOSS) == "25 % of the paper's value, at least 0.05 percentage points"
