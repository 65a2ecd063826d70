"""A device queue below a link's buffer (``device_queue``): a FIFO the buffer
feeds as soon as it has room, as a Linux qdisc feeds its driver's transmit
ring and an ns-3 queue disc its ``NetDevice`` queue."""

from __future__ import annotations

import numpy as np
import pytest
import satqm

BASE = """\
name = "device-queue"

[simulation]
duration = "30 s"
warmup = "5 s"
seed = 3

[topology]
kind = "dumbbell"
pairs = 3

[topology.access]
rate = "100 Mbps"
delay = "5 ms"
buffer = 10000

[topology.bottleneck]
rate = "10 Mbps"
delay = "40 ms"
{bottleneck}

[tcp]
recovery = "sack"

{aqm}

[[traffic]]
kind = "bulk"
pairs = [0, 1, 2]
start = {{ uniform = ["0 s", "1 s"] }}
"""

FQ = '[[aqm]]\nkind = "fq_codel"\nat = "bottleneck"'


def _run(bottleneck: str, aqm: str = "") -> satqm.Results:
    return satqm.run(satqm.Scenario.from_toml(BASE.format(bottleneck=bottleneck, aqm=aqm)))


def test_no_device_queue_is_the_default() -> None:
    a = _run("buffer = 60")
    b = _run("buffer = 60\ndevice_queue = 0\nreverse_device_queue = 0")
    assert a.flows.equals(b.flows)
    assert a.timeseries.equals(b.timeseries)


def test_a_fifo_does_not_care_where_its_room_is() -> None:
    """A drop-tail FIFO of 60 packets and one of 59 above a one-packet
    device queue send the same packets in the same order and drop the same
    ones: the device is filled first, so both hold 60 whenever they are
    full. Only the sojourn moves: it ends when a packet enters the device,
    one serialization before it is sent (1.2 ms for 1,500 bytes at
    10 Mbit/s) for a packet that waited behind another."""
    fifo = _run("buffer = 60")
    dev = _run("buffer = 59\ndevice_queue = 1")
    assert fifo.flows.equals(dev.flows)
    assert fifo.drops.equals(dev.drops)
    a, b = fifo.link(), dev.link()
    assert np.array_equal(a["queue_packets"], b["queue_packets"])
    assert a["queue_packets"].max() > 40, "the buffer filled"
    sa, sb = fifo.summary(), dev.summary()
    # the buffer filled and stayed busy: nearly every packet waited behind another
    assert sa["queue_delay_mean_ms"] - sb["queue_delay_mean_ms"] == pytest.approx(1.2, abs=0.01)
    assert sa["queue_delay_max_ms"] - sb["queue_delay_max_ms"] == pytest.approx(1.2, abs=1e-6)


def test_a_schedulers_choice_is_made_a_packet_early() -> None:
    """Behind FQ-CoDel the device queue changes what is sent when (the
    scheduler chooses at the start of the previous serialization) and the
    sojourns CoDel acts on; the queue the time series shows includes the
    device's packet."""
    fq = _run("buffer = 60", FQ)
    dev = _run("buffer = 59\ndevice_queue = 1", FQ)
    assert not fq.flows.equals(dev.flows)
    assert dev.delay_quantile(0.9) < fq.delay_quantile(0.9)
    q = dev.link()["queue_packets"]
    assert q.max() <= 60
    assert dev.summary()["goodput_total_bps"] > 0.9e7


OUTAGE = """buffer = 59
device_queue = 1
[topology.bottleneck.schedule]
changes = [{{ at = "10 s", up = false }}, {{ at = "11 s", up = true }}]
outage = {{ queued = "{queued}", in_flight = "drop" }}"""


def test_an_outage_takes_the_device_queue_with_the_buffer() -> None:
    """A link that goes down drops what waits in its device queue with
    what waits in its buffer (``queued = "drop"``), or keeps both and sends
    them when it is up again (``"keep"``); packets are conserved either
    way."""
    lost = {}
    for queued in ("drop", "keep"):
        res = _run(OUTAGE.format(queued=queued))
        p = res.packets
        assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"], queued
        d = res.drops
        d = d[(d["link"] == "bottleneck") & (d["reason"] == "outage")]
        lost[queued] = int((d["time_s"] == 10.0).sum())
        ts = res.link()
        down = ts.loc[10.5:10.9, "queue_packets"]
        if queued == "keep":
            # the buffer's 59 and the device's 1 wait, and go when it is up
            assert (down == 60).all()
            assert ts.loc[11.05:11.5, "throughput_bps"].max() > 8e6
        else:
            assert (down == 0).all()
    # what was on the line is lost either way; what waited only with "drop"
    assert lost["drop"] > lost["keep"] > 0


@pytest.mark.parametrize(
    "bottleneck, key",
    [
        ("buffer = 60\ndevice_queue = -1", "topology.bottleneck.device_queue"),
        ("buffer = 60\ndevice_queue = 200000", "topology.bottleneck.device_queue"),
        ('buffer = 60\nreverse_device_queue = "1"', "topology.bottleneck.reverse_device_queue"),
        ("buffer = 60\nbackpressure = true\ndevice_queue = 1", "topology.bottleneck.device_queue"),
    ],
)
def test_bad_device_queues_are_refused_by_key(bottleneck: str, key: str) -> None:
    with pytest.raises(satqm.ConfigError) as e:
        satqm.Scenario.from_toml(BASE.format(bottleneck=bottleneck, aqm="")).check()
    assert str(e.value).startswith(key), str(e.value)
