"""Packet captures (`simulation.capture`): read back with dpkt and tshark and
checked against satqm's own records."""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections import defaultdict

import numpy as np
import pytest
import satqm
from satqm.cli import main

dpkt = pytest.importorskip("dpkt")
from dpkt import pcapng  # noqa: E402

SERVER_PORT = 47001

#: Two SACK flows over a 2 Mbit/s, 200 ms round-trip bottleneck with a
#: 20-packet buffer: overflow drops, retransmissions, SACK blocks. The
#: flows' sequence records say which segments were retransmissions.
LOSSY = """\
name = "lossy"
[simulation]
duration = "12 s"
trace_seq = [0, 1]
capture = ["bottleneck", "access[0]", "receiver_access[0]"]
[topology]
kind = "dumbbell"
pairs = 2
[topology.access]
rate = "100 Mbps"
delay = "5 ms"
[topology.bottleneck]
rate = "2 Mbps"
delay = "100 ms"
buffer = 20
[tcp]
recovery = "sack"
[[traffic]]
kind = "bulk"
"""

#: RED marking ECN-capable flows at the bottleneck.
ECN = """\
name = "ecn"
[simulation]
duration = "10 s"
capture = ["bottleneck"]
[topology]
kind = "dumbbell"
pairs = 2
[topology.access]
rate = "100 Mbps"
delay = "5 ms"
[topology.bottleneck]
rate = "2 Mbps"
delay = "100 ms"
buffer = 100
[tcp]
recovery = "sack"
ecn = true
[[traffic]]
kind = "bulk"
[[aqm]]
kind = "red"
at = "bottleneck"
mode = "mark"
min_th = 5
max_th = 15
w_q = 0.02
max_p = 0.1
"""


class Frame:
    """One captured packet: its time, headers and comment."""

    def __init__(self, ts_ns: int, data: bytes, wire_len: int, comment: str | None) -> None:
        self.ts_ns = ts_ns
        self.eth = dpkt.ethernet.Ethernet(data)
        self.ip = self.eth.data
        self.l4 = self.ip.data
        self.wire_len = wire_len
        self.comment = comment

    @property
    def dropped(self) -> bool:
        return self.comment is not None and "dropped" in self.comment

    @property
    def flow(self) -> int:
        port = self.l4.sport if self.l4.sport != SERVER_PORT else self.l4.dport
        return port - 1024

    @property
    def payload(self) -> int:
        return self.ip.len - 4 * self.ip.hl - 4 * self.l4.off


def read(data: bytes) -> list[Frame]:
    """Every packet of a pcapng file, with its comment (dpkt's reader does
    not return options, so the blocks are walked here)."""
    assert data[:4] == b"\x0a\x0d\x0d\x0a"
    out = []
    i = 0
    while i < len(data):
        kind, length = struct.unpack_from("<II", data, i)
        if kind == 1:
            idb = pcapng.InterfaceDescriptionBlockLE(data[i : i + length])
            assert idb.linktype == dpkt.pcap.DLT_EN10MB
        if kind == 6:
            assert struct.unpack_from("<I", data, i + 8)[0] == 0, "one interface per file"
            b = pcapng.EnhancedPacketBlockLE(data[i : i + length])
            comments = [o.text for o in b.opts if o.code == 1]
            ts = (b.ts_high << 32) | b.ts_low  # nanoseconds (if_tsresol 9)
            out.append(Frame(ts, b.pkt_data, b.pkt_len, comments[0] if comments else None))
        i += length
    # dpkt's own reader agrees on the packets and their times.
    with_reader = list(pcapng.Reader(__import__("io").BytesIO(data)))
    assert len(with_reader) == len(out)
    assert all(round(t * 1e9) == f.ts_ns for (t, _), f in zip(with_reader, out))
    assert all(a.ts_ns <= b.ts_ns for a, b in zip(out, out[1:])), "in time order"
    return out


def interfaces(data: bytes) -> list[str]:
    """The names of a pcapng file's interfaces (`if_name`)."""
    names = []
    i = 0
    while i < len(data):
        kind, length = struct.unpack_from("<II", data, i)
        if kind == 1:
            idb = pcapng.InterfaceDescriptionBlockLE(data[i : i + length])
            names += [o.data.decode() for o in idb.opts if o.code == 2]
        i += length
    return names


def retransmitted(res: satqm.Results, frames: list[Frame], arrivals: bool = False) -> set[int]:
    """The numbers (from 1, as tshark counts) of the data frames of a capture
    of the bottleneck that satqm sent as retransmissions, by the flows'
    sequence records: each copy of a segment the sender emits reaches the
    bottleneck in order (the access links neither drop nor reorder), where
    the port drops it or sends it on. A capture of the departures holds the
    copies not dropped; one of the arrivals holds them all."""
    assert set(res.drops["link"]) == {"bottleneck"}
    emitted: dict[tuple[int, int], list[bool]] = defaultdict(list)
    for r in res.seq.sort_values("time_s", kind="stable").itertuples():
        if r.event in ("sent", "retransmitted"):
            emitted[(r.flow, r.seq)].append(r.event == "retransmitted")
        elif r.event == "dropped" and not arrivals:
            emitted[(r.flow, r.seq)].pop(0)
    out = set()
    for n, f in enumerate(frames, 1):
        copies = emitted[(f.flow, f.l4.seq - 1)]
        if f.payload > 0 and copies and copies.pop(0):
            out.add(n)
    return out


@pytest.fixture(scope="module")
def lossy() -> satqm.Results:
    return satqm.run(satqm.Scenario(LOSSY))


def test_one_file_per_link_direction(lossy):
    assert sorted(lossy.captures) == sorted(
        [
            "bottleneck",
            "bottleneck.reverse",
            "access[0]",
            "access[0].reverse",
            "receiver_access[0]",
            "receiver_access[0].reverse",
        ]
    )


def test_departures_are_what_the_wire_carries(lossy):
    data = lossy.captures["bottleneck"]
    assert interfaces(data) == ["bottleneck-out"]
    sent = read(data)
    # No drop in it: every frame is a packet the transmitter sent.
    assert all(f.comment is None for f in sent)
    ts = lossy.link("bottleneck")
    drops = lossy.drops[lossy.drops["link"] == "bottleneck"]
    assert len(drops) > 10
    # Every packet that arrived at the port was either sent or dropped, or is
    # still queued at the end.
    last = ts.iloc[-1]
    assert len(sent) + len(drops) + last["queue_packets"] == ts["arrivals"].sum()
    # The transmitter sends one packet at a time at the link rate: each
    # starts no earlier than the previous one's serialization ends.
    t = np.array([f.ts_ns for f in sent])
    tx = np.array([f.wire_len - 14 for f in sent]) * 8 / 2e6 * 1e9
    assert np.all(np.diff(t) >= np.floor(tx[:-1] - 64 * 8 / 2e6 * 1e9))
    # The access link drops nothing: one data packet per segment the sender sent.
    access = [f for f in read(lossy.captures["access[0]"]) if f.payload > 0]
    assert len(access) == lossy.flows.loc[0, "segments_sent"]


@pytest.fixture(scope="module")
def both() -> satqm.Results:
    """The lossy run with both sides of the bottleneck's queue captured."""
    return satqm.run(satqm.Scenario(LOSSY), capture=["bottleneck"], capture_side="both")


def test_arrivals_hold_the_drops_and_the_queue_keeps_their_order(lossy, both):
    assert sorted(both.captures) == [
        "bottleneck",
        "bottleneck.in",
        "bottleneck.reverse",
        "bottleneck.reverse.in",
    ]
    # Capturing the arrivals changes nothing else, the departures included.
    assert both.captures["bottleneck"] == lossy.captures["bottleneck"]
    assert both.flows.equals(lossy.flows)
    data = both.captures["bottleneck.in"]
    assert interfaces(data) == ["bottleneck-in"]
    arrived = read(data)
    assert len(arrived) == both.link("bottleneck")["arrivals"].sum()
    # Dropped packets: the drop log's times and flows, in order.
    dropped = [f for f in arrived if f.comment is not None]
    drops = both.drops[both.drops["link"] == "bottleneck"]
    np.testing.assert_array_equal(
        [f.ts_ns for f in dropped], np.round(drops["time_s"].to_numpy() * 1e9).astype(np.int64)
    )
    assert [f.flow for f in dropped] == drops["flow"].tolist()
    assert all(f.comment == "satqm: dropped at the port (overflow)" for f in dropped)
    # The rest leave in the order they came, each no earlier than it came;
    # those at the end are still queued.
    kept = [f for f in arrived if f.comment is None]
    sent = read(both.captures["bottleneck"])
    queued = both.link("bottleneck").iloc[-1]["queue_packets"]
    assert len(kept) == len(sent) + queued
    for a, d in zip(kept, sent):
        assert bytes(a.eth) == bytes(d.eth)
        assert a.ts_ns <= d.ts_ns <= a.ts_ns + 21 * 1500 * 8 / 2e6 * 1e9


def test_sequence_numbers_contiguous_per_flow(lossy):
    frames = read(lossy.captures["access[0]"])
    top: dict[int, int] = defaultdict(lambda: 1)
    retx = 0
    for f in frames:
        if f.payload == 0:
            continue
        seq = f.l4.seq
        if seq < top[f.flow]:
            retx += 1  # a retransmission: below the highest byte sent
        else:
            assert seq == top[f.flow], "new data starts where the last ended"
            top[f.flow] = seq + f.payload
    assert retx == lossy.flows.loc[0, "retransmits"] > 0
    assert top[0] > 1_000_000


def test_syn_carries_window_scale_and_acks_are_scaled(lossy):
    frames = read(lossy.captures["access[0].reverse"])
    synack = frames[0]
    assert synack.l4.flags & dpkt.tcp.TH_SYN and synack.l4.flags & dpkt.tcp.TH_ACK
    opts = dict(dpkt.tcp.parse_opts(synack.l4.opts))
    assert opts[dpkt.tcp.TCP_OPT_WSCALE] == b"\x09"  # 16 MiB buffer
    assert dpkt.tcp.TCP_OPT_SACKOK in opts
    # SACK blocks are below what was sent and above the cumulative ACK.
    sacks = 0
    for f in frames[1:]:
        for kind, val in dpkt.tcp.parse_opts(f.l4.opts):
            if kind == dpkt.tcp.TCP_OPT_SACK:
                blocks = struct.unpack(f">{len(val) // 4}I", val)
                for left, right in zip(blocks[::2], blocks[1::2]):
                    assert f.l4.ack < left < right
                    sacks += 1
    assert sacks > 10


def test_ce_bits_equal_the_aqm_marks():
    res = satqm.run(satqm.Scenario(ECN), capture_side="both")
    frames = read(res.captures["bottleneck"])
    # The arrivals show the packets as they came: ECN-capable, none marked.
    arrived = read(res.captures["bottleneck.in"])
    assert all(f.ip.tos & 3 == 2 for f in arrived if f.payload > 0)
    marks = res.drops[
        (res.drops["link"] == "bottleneck")
        & res.drops["reason"].isin(["early_mark", "forced_mark"])
    ]
    ce = [f for f in frames if f.comment is None and f.ip.tos & 3 == 3]
    ect = [f for f in frames if f.comment is None and f.ip.tos & 3 == 2]
    assert len(marks) > 5 and len(ect) > 100
    # Marked at arrival, still queued at the end, or sent with CE.
    queued = len(marks) - len(ce)
    assert 0 <= queued <= res.link("bottleneck").iloc[-1]["queue_packets"]
    assert [f.flow for f in ce] == marks["flow"].tolist()[: len(ce)]
    # The receivers echo them: ECE on ACKs of the reverse direction.
    back = read(res.captures["bottleneck.reverse"])
    assert any(f.l4.flags & dpkt.tcp.TH_ECE for f in back[2:])


def test_udp_window_and_snap_length(tmp_path):
    text = LOSSY.replace(
        'capture = ["bottleneck", "access[0]", "receiver_access[0]"]',
        'capture = ["bottleneck"]\ncapture_from = "1 s"\n'
        'capture_until = "2 s"\ncapture_snaplen = 200',
    )
    text = text.replace("trace_seq = [0, 1]\n", "").replace(
        'kind = "bulk"', 'kind = "cbr"\nrate = "500 kbps"\npacket_size = 500'
    )
    res = satqm.run(satqm.Scenario(text))
    frames = read(res.captures["bottleneck"])
    assert frames and all(1e9 <= f.ts_ns < 2e9 for f in frames)
    assert all(f.ip.p == 17 and f.l4.dport == SERVER_PORT for f in frames)
    assert all(f.wire_len == 14 + 500 for f in frames)
    assert all(len(f.eth) == 200 for f in frames)


def test_cli_capture_writes_files_and_names_bad_links(tmp_path, capsys):
    sc = tmp_path / "s.toml"
    sc.write_text(
        LOSSY.replace('capture = ["bottleneck", "access[0]", "receiver_access[0]"]\n', "")
    )
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                str(sc),
                "--duration",
                "2",
                "--capture",
                "bottleneck",
                "--out",
                str(out),
                "-q",
                "--no-plot",
            ]
        )
        == 0
    )
    files = sorted(p.name for p in (out / "capture").iterdir())
    assert files == ["bottleneck.pcapng", "bottleneck.reverse.pcapng"]
    assert "--capture bottleneck" in (out / "scenario.toml").read_text()
    again = satqm.Results.load(out)
    assert again.captures["bottleneck"] == (out / "capture" / "bottleneck.pcapng").read_bytes()
    assert main(["run", str(sc), "--capture", "satellite", "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert '--capture satellite: no link named "satellite"; the links are bottleneck, ' in err
    assert "receiver_access[1].reverse" in err


def test_cli_capture_side_adds_the_arrivals_and_names_bad_values(tmp_path, capsys):
    sc = tmp_path / "s.toml"
    sc.write_text(LOSSY)
    out = tmp_path / "run"
    args = ["run", str(sc), "--duration", "2", "--out", str(out), "-q", "--no-plot"]
    assert main([*args, "--capture", "bottleneck", "--capture-side", "both"]) == 0
    files = sorted(p.name for p in (out / "capture").iterdir())
    assert files == [
        "bottleneck.in.pcapng",
        "bottleneck.pcapng",
        "bottleneck.reverse.in.pcapng",
        "bottleneck.reverse.pcapng",
    ]
    assert "--capture bottleneck --capture-side both" in (out / "scenario.toml").read_text()
    again = satqm.Results.load(out)
    assert again.scenario.overrides["capture_side"] == "both"
    assert sorted(again.captures) == sorted(f[: -len(".pcapng")] for f in files)
    assert main([*args, "--capture-side", "after"]) == 2
    err = capsys.readouterr().err
    assert '--capture-side after: must be "out", "in" or "both", got "after"' in err
    no_links = LOSSY.replace('capture = ["bottleneck", "access[0]", "receiver_access[0]"]\n', "")
    sc.write_text(no_links)
    assert main([*args, "--capture-side", "in"]) == 2
    err = capsys.readouterr().err
    assert "--capture-side in: needs simulation.capture (the links to capture)" in err


def test_bad_capture_link_names_the_key():
    text = LOSSY.replace('"access[0]"', '"access[7]"')
    with pytest.raises(
        satqm.ConfigError, match=r'simulation\.capture\[1\]: no link named "access\[7\]"'
    ):
        satqm.Scenario(text)
    for side, rule in [
        ('"before"', 'must be "out", "in" or "both", got "before"'),
        ("2", "must be a string"),
    ]:
        text = LOSSY.replace("[topology]", f"capture_side = {side}\n[topology]")
        with pytest.raises(satqm.ConfigError, match=rf"simulation\.capture_side: {rule}"):
            satqm.Scenario(text)
    with pytest.raises(satqm.ConfigError, match=r"simulation\.capture_side: must be"):
        satqm.Scenario(LOSSY, capture_side=2)  # type: ignore[arg-type]


def _tshark(*args: str) -> str:
    r = subprocess.run(["tshark", *args], capture_output=True, text=True, check=True)
    return r.stdout


def _flagged(path, condition: str) -> set[int]:
    """The numbers of the frames of `path` that match tshark's `condition`."""
    out = _tshark("-r", str(path), "-Y", condition, "-T", "fields", "-e", "frame.number")
    return {int(n) for n in out.split()}


#: What tshark's TCP analysis suspects of a segment that fills a hole below
#: the highest one seen: a retransmission (or a fast or spurious one), or, if
#: it comes less than one initial round trip after that highest one, a
#: segment out of order.
SUSPECTED = (
    "tcp.analysis.retransmission || tcp.analysis.out_of_order"
    " || tcp.analysis.spurious_retransmission"
)


needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")


@needs_tshark
def test_tshark_counts_the_same_retransmissions(lossy, tmp_path):
    lossy.save(tmp_path, plot=False)
    cap = tmp_path / "capture"
    # tcpdump's view at the sender: its access link, both directions.
    sender = tmp_path / "sender.pcapng"
    subprocess.run(
        [
            "mergecap",
            "-w",
            str(sender),
            str(cap / "access[0].pcapng"),
            str(cap / "access[0].reverse.pcapng"),
        ],
        check=True,
    )
    n = len(_flagged(sender, "tcp.analysis.retransmission"))
    assert n == lossy.flows.loc[0, "retransmits"] > 0
    for f in cap.iterdir():
        bad = _flagged(f, "_ws.malformed || _ws.expert.severity == error")
        assert bad == set(), f.name


@needs_tshark
def test_tshark_suspects_exactly_the_retransmissions_that_crossed_the_bottleneck(lossy, tmp_path):
    """A capture of the bottleneck's departures is what a tap on the wire
    after its queue sees: tshark's TCP analysis suspects each segment satqm
    retransmitted that crossed the link and no other one."""
    path = tmp_path / "bottleneck.pcapng"
    path.write_bytes(lossy.captures["bottleneck"])
    truth = retransmitted(lossy, read(lossy.captures["bottleneck"]))
    # All of them, and the copies of segments dropped at the port are not.
    retx = lossy.flows["retransmits"].sum()
    dropped_again = retx - len(truth)
    assert len(truth) > 20 and 0 <= dropped_again < len(lossy.drops)
    suspected = _flagged(path, SUSPECTED)
    assert len(suspected) == len(truth)
    assert suspected == truth
    # Without the ACKs (the other direction's file) tshark cannot call one
    # spurious; it calls a retransmission out of order when it leaves less
    # than an initial round trip (here 0.22 s, the SYN to the first ACK
    # through this tap) after the connection's newest segment, as those
    # leaving the queue behind new data do. satqm's links never reorder.
    assert _flagged(path, "tcp.analysis.spurious_retransmission") == set()
    rtt = _tshark(
        "-r",
        str(path),
        "-Y",
        "tcp.analysis.initial_rtt",
        "-T",
        "fields",
        "-e",
        "tcp.analysis.initial_rtt",
    )
    assert {round(float(v), 2) for v in rtt.split()} == {0.22, 0.23}
    assert len(_flagged(path, "tcp.analysis.retransmission")) >= 1
    assert len(_flagged(path, "tcp.analysis.out_of_order")) >= 20


@needs_tshark
def test_tshark_on_the_arrivals_sees_the_drops_and_every_retransmission(both, tmp_path):
    path = tmp_path / "bottleneck.in.pcapng"
    path.write_bytes(both.captures["bottleneck.in"])
    comments = _tshark(
        "-r", str(path), "-Y", "frame.comment", "-T", "fields", "-e", "frame.comment"
    )
    assert comments.splitlines() == ["satqm: dropped at the port (overflow)"] * len(both.drops)
    truth = retransmitted(both, read(both.captures["bottleneck.in"]), arrivals=True)
    assert len(truth) == both.flows["retransmits"].sum()
    assert _flagged(path, SUSPECTED) == truth


def test_capture_off_writes_nothing(tmp_path):
    res = satqm.run(
        satqm.Scenario(
            LOSSY.replace('capture = ["bottleneck", "access[0]", "receiver_access[0]"]\n', "")
        )
    )
    assert res.captures == {}
    res.save(tmp_path, plot=False)
    assert not (tmp_path / "capture").exists()
