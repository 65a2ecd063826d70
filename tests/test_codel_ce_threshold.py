"""CoDel's ``ce_threshold`` on a single queue (Linux ``codel_impl.h``): an
eligible packet whose sojourn exceeds the threshold is CE-marked when CoDel
itself lets it pass; with ``ce_threshold_ect1`` only ECT(1) packets are
eligible (the L4S mode)."""

from __future__ import annotations

import pytest
import satqm

BASE = """\
name = "codel-ce"

[simulation]
duration = "20 s"
warmup = "5 s"
seed = 1

[topology]
kind = "dumbbell"
pairs = 2

[topology.access]
rate = "1000 Mbps"
delay = "1 ms"
buffer = 10000

[topology.bottleneck]
rate = "40 Mbps"
delay = "8 ms"
buffer = 1000

[tcp]
mss = 1448
recovery = "sack"

[[aqm]]
kind = "codel"
at = "bottleneck"
{aqm}

[[traffic]]
kind = "bulk"
pairs = [0]
start = "0 s"
tcp = {{ cc = "dctcp", ecn_codepoint = "ect1" }}

[[traffic]]
kind = "bulk"
pairs = [1]
start = "0 s"
tcp = {{ cc = "reno", ecn = true }}
"""


def _marks_by_flow(res: satqm.Results) -> dict[int, int]:
    d = res.drops[(res.drops["link"] == "bottleneck") & (res.drops["reason"] == "early_mark")]
    return d["flow"].value_counts().to_dict()


def test_ect1_packets_are_marked_above_the_threshold_and_classic_ones_are_not():
    res = satqm.run(
        satqm.Scenario.from_toml(
            BASE.format(aqm='ce_threshold = "1 ms"\nce_threshold_ect1 = true\nmode = "mark"')
        )
    )
    dctcp, reno = 0, 1  # the traffic entries' order
    marks = _marks_by_flow(res)
    # The DCTCP flow's packets carry the threshold's marks; the Reno flow's
    # (ECT(0)) only CoDel's own, one per interval / sqrt(count) at most.
    assert marks.get(dctcp, 0) > 1000
    assert marks.get(dctcp, 0) > 20 * marks.get(reno, 0)


def test_every_ecn_capable_packet_is_eligible_without_ect1():
    res = satqm.run(satqm.Scenario.from_toml(BASE.format(aqm='ce_threshold = "1 ms"')))
    marks = _marks_by_flow(res)
    # Both flows negotiate ECN; both see the threshold's marks, in the
    # default drop mode too (the threshold only marks).
    assert len(marks) == 2 and min(marks.values()) > 0


@pytest.mark.parametrize("kind", ["codel", "fq_codel"])
def test_ect1_without_a_threshold_is_refused(kind: str) -> None:
    text = BASE.format(aqm="ce_threshold_ect1 = true").replace('kind = "codel"', f'kind = "{kind}"')
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(text).check()
    assert "aqm[0].ce_threshold_ect1" in str(e.value) and "ce_threshold" in str(e.value)
