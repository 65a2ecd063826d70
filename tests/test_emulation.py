"""Real Linux TCP and UDP through satqm's links (satqm.Emulation).

These tests need root and /dev/net/tun, and skip with that reason where
either is missing. They check what the emulator controls, exactly: every
packet a namespace sent is delivered, dropped with a reason, or still in
flight; each delivery's delay is the links' plus the queueing, within the
lateness the run measured; the kernel resends what the network dropped and
sees the marks the AQM made. A loaded machine may make a run late (the
summary says by how much) but does not turn them red.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import satqm
from satqm.emulation import cleanup_leftovers, missing_requirement

pytestmark = [
    pytest.mark.skipif(missing_requirement() is not None, reason=str(missing_requirement())),
    pytest.mark.slow,
    # A loaded machine makes a run late; the run records and reports it
    # (real_packets.late_s), and the assertions allow for it.
    pytest.mark.filterwarnings("ignore::satqm.emulation.EmulationLate"),
]

GEO = """
name = "emu-geo"
[simulation]
duration = "{duration} s"
sample_interval = "100 ms"
[topology]
kind = "dumbbell"
pairs = {pairs}
[topology.access]
rate = "1000 Mbps"
delay = "0 ms"
buffer = 10000
[topology.bottleneck]
rate = "10 Mbps"
delay = "250 ms"
buffer = 500
[emulation]
"""

# A TCP bulk sender and receiver in Python, so the tests need no iperf3;
# the sender prints the kernel's TCP_INFO figures as JSON at the end.
SENDER = textwrap.dedent(
    """
    import json, socket, struct, sys, time
    host, cc, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    s.connect((host, 5001))
    buf = b"x" * 65536
    end = time.monotonic() + secs
    while time.monotonic() < end:
        s.send(buf)
    # Until the receiver has everything: every drop is behind us, resent.
    s.shutdown(socket.SHUT_WR)
    s.recv(1)
    info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    # struct tcp_info: u8 x8, u32 x24 ...: rtt (us) at 68, total_retrans at 100
    rtt, = struct.unpack_from("I", info, 68)
    min_rtt, = struct.unpack_from("I", info, 148)
    total_retrans, = struct.unpack_from("I", info, 100)
    print(json.dumps({"rtt_us": rtt, "min_rtt_us": min_rtt, "total_retrans": total_retrans}))
    sys.stdout.flush()
    s.close()
    """
)
RECEIVER = textwrap.dedent(
    """
    import socket
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 5001))
    s.listen(1)
    c, _ = s.accept()
    while c.recv(1 << 20):
        pass
    c.close()
    """
)


def _sc(text: str) -> satqm.Scenario:
    return satqm.Scenario.from_toml(text)


def _bulk(emu: satqm.Emulation, cc: str, secs: float) -> dict[str, int]:
    emu.popen("receiver[0]", [sys.executable, "-c", RECEIVER])
    time.sleep(0.3)
    done = emu.run(
        "sender[0]",
        [sys.executable, "-c", SENDER, emu.address("receiver[0]"), cc, str(secs)],
        capture_output=True,
        text=True,
        timeout=secs + 30,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _kernel_offers(cc: str) -> bool:
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
            return cc in f.read().split()
    except OSError:
        return False


def _check_conservation(res: satqm.Results, only_real: bool = True) -> None:
    p = res.packets
    assert p["created"] == p["delivered"] + p["dropped"] + p["in_flight"]
    rp = res.real_packets
    if only_real:
        assert len(rp) == p["created"], "every real packet recorded as it entered"
        assert rp["delivered_s"].notna().sum() == p["delivered"]
    marks = res.drops["reason"].astype(str).str.endswith("mark")
    assert int((~marks).sum()) == p["dropped"], "every drop in the drop log"


@pytest.mark.parametrize("cc", ["reno", "cubic"])
def test_real_tcp_through_a_geo_drop_tail_link(cc: str) -> None:
    if not _kernel_offers(cc):
        pytest.skip(f"the kernel does not offer {cc}")
    duration = 30.0
    text = GEO.format(duration=duration + 5, pairs=1) + "trace_seq = true\n"
    emu = satqm.Emulation(_sc(text), warmup=0)
    with emu:
        info = _bulk(emu, cc, duration)
    res = emu.results
    assert res is not None
    _check_conservation(res)
    s = res.summary()
    # Each packet's delay: the links' (250 ms) and its serialisation,
    # plus at most a full buffer's wait (500 x 1.2 ms), within the lateness
    # the run measured on either side (the entry time is read late too).
    rp = res.real_packets.dropna()
    delay = rp["delivered_s"] - rp["entered_s"]
    late = s["lateness_max_ms"] / 1e3
    assert delay.min() >= 0.250
    assert delay.max() <= 0.250 + 0.0013 + 501 * 0.0012 + late
    # Every packet the network dropped is one the kernel sent again: the
    # sequence records, taken from the sender's packets as they entered,
    # show each dropped segment's first byte sent once more after the drop.
    data_drops = int(res.drops["data"].sum())
    assert data_drops > 0, "a 500-packet buffer overflows under one bulk flow"
    assert info["total_retrans"] >= data_drops
    conn = res.connections[res.connections["dst_port"] == 5001]["flow"].iloc[0]
    seq = res.seq[(res.seq["flow"] == conn) & (res.seq["way"] == 0)]
    drops = seq[seq["event"] == "dropped"]
    assert len(drops) == data_drops, "each dropped data segment in the sequence records"
    sends = seq[seq["event"].isin(["sent", "retransmitted"])]
    t, lo, hi = (sends[k].to_numpy() for k in ("time_s", "seq", "end"))
    for d_t, d_seq in zip(drops["time_s"], drops["seq"]):
        assert ((t > d_t) & (lo <= d_seq) & (d_seq < hi)).any(), f"byte {d_seq} never resent"
    retransmitted = (sends["event"] == "retransmitted").sum()
    assert data_drops <= retransmitted <= info["total_retrans"]
    # The time-sequence graph is drawn from them.
    assert res.plot_seq(int(conn)) is not None
    # The kernel's RTT: 500 ms and the queueing, never below the links'.
    assert 0.5 <= info["min_rtt_us"] / 1e6 < 0.5 + 0.02 + late
    # The flows table shows the connection, of kind real, and what it carried.
    real = res.flows[res.flows["kind"] == "real"]
    assert len(real) == len(res.connections) >= 1
    assert res.connections["dst_port"].eq(5001).any()
    assert real["bytes_delivered"].max() > 0.5 * 10e6 / 8 * duration * 0.5
    assert s["lateness_p50_ms"] >= 0


def test_red_marks_reach_the_kernel_as_ce() -> None:
    if not _kernel_offers("reno"):
        pytest.skip("the kernel does not offer reno")
    text = GEO.format(duration=30, pairs=1) + textwrap.dedent(
        """
        [[aqm]]
        kind = "red"
        mode = "mark"
        min_th = 50
        max_th = 150
        max_p = 0.1
        w_q = 0.002
        """
    )
    emu = satqm.Emulation(_sc(text), warmup=0)
    with emu:
        subprocess.run(
            ["ip", "netns", "exec", emu.netns("sender[0]"), "sysctl", "-qw", "net.ipv4.tcp_ecn=1"],
            check=True,
        )
        subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                emu.netns("receiver[0]"),
                "sysctl",
                "-qw",
                "net.ipv4.tcp_ecn=1",
            ],
            check=True,
        )
        _bulk(emu, "reno", 10)
        netstat = emu.run(
            "receiver[0]", ["cat", "/proc/net/netstat"], capture_output=True, text=True
        )
    res = emu.results
    assert res is not None
    _check_conservation(res)
    d = res.drops
    is_mark = d["reason"].astype(str).str.endswith("mark")
    marks = int(is_mark.sum())
    assert marks > 0, "RED marked the ECN-capable connection"
    # A packet marked on arrival and then refused by a full buffer is in the
    # log twice (same link, same arrival index); the kernel never sees it.
    dropped = set(zip(d["link"][~is_mark], d["index"][~is_mark]))
    lost_marks = sum((k in dropped) for k in zip(d["link"][is_mark], d["index"][is_mark]))
    lines = [line.split() for line in netstat.stdout.splitlines()]
    ipext = [row for row in lines if row and row[0] == "IpExt:"]
    counters = dict(zip(ipext[0][1:], map(int, ipext[1][1:])))
    # Every mark the AQM logged reached the receiving kernel as CE.
    assert counters["InCEPkts"] == marks - lost_marks, (counters, marks, lost_marks)


PING = textwrap.dedent(
    """
    import json, socket, struct, sys, time
    def checksum(b):
        s = sum(struct.unpack(f"!{len(b) // 2}H", b))
        s = (s >> 16) + (s & 0xFFFF)
        return ~(s + (s >> 16)) & 0xFFFF
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(5)
    sent, rtts = {}, {}
    for i in range(3):
        echo = struct.pack("!BBHHH", 8, 0, 0, 0x5A71, i) + b"satqm-ping" * 4
        echo = echo[:2] + struct.pack("!H", checksum(echo)) + echo[4:]
        sent[i] = time.monotonic()
        s.sendto(echo, (sys.argv[1], 0))
        time.sleep(0.1)
    while len(rtts) < 3:
        data = s.recv(2048)
        typ, _code, _sum, ident, n = struct.unpack_from("!BBHHH", data, (data[0] & 15) * 4)
        if typ == 0 and ident == 0x5A71:
            rtts[n] = time.monotonic() - sent[n]
    print(json.dumps(sorted(rtts.values())))
    """
)


def test_a_udp_flow_above_the_link_rate_loses_what_the_drop_log_says() -> None:
    # Whole frames in the capture (its default keeps the headers only).
    text = GEO.format(duration=10, pairs=1).replace(
        'sample_interval = "100 ms"',
        'sample_interval = "100 ms"\ncapture = ["bottleneck"]\ncapture_snaplen = 2000',
    )
    emu = satqm.Emulation(_sc(text), warmup=0)
    sender = textwrap.dedent(
        """
        import socket, sys, time
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        payload = b"u" * 1372          # 1,400-byte IP packets
        gap = 1400 * 8 / 15e6          # 15 Mbit/s
        t = time.monotonic()
        for i in range(5000):
            s.sendto(payload, (sys.argv[1], 9000))
            t += gap
            while time.monotonic() < t:
                pass
        """
    )
    with emu:
        emu.run("sender[0]", [sys.executable, "-c", sender, emu.address("receiver[0]")], timeout=60)
        time.sleep(1.0)
        # ICMP crosses too: echo requests the receiving kernel answers, once
        # the queue has drained.
        ping = emu.run(
            "sender[0]",
            [sys.executable, "-c", PING, emu.address("receiver[0]")],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert ping.returncode == 0, ping.stderr
    rtts = json.loads(ping.stdout)
    res = emu.results
    assert res is not None
    _check_conservation(res)
    late = res.summary()["lateness_max_ms"] / 1e3
    assert all(0.5 <= r < 0.5 + 0.01 + 2 * late for r in rtts), rtts
    icmp = res.connections[res.connections["protocol"] == 1]
    assert len(icmp) == 1
    # One flow holds all ICMP between the two hosts: the echoes (68 bytes)
    # and the receiver's port-unreachable replies to the UDP flow.
    rp = res.real_packets
    echo = rp[(rp["flow"] == int(icmp["flow"].iloc[0])) & (rp["size"] == 68)]
    assert len(echo) == 6 and echo["delivered_s"].notna().all(), "3 requests, 3 replies"
    udp = res.connections[res.connections["protocol"] == 17]
    assert len(udp) == 1
    f = int(udp["flow"].iloc[0])
    rp = res.real_packets[res.real_packets["flow"] == f]
    assert len(rp) == 5000
    lost = int(rp["delivered_s"].isna().sum())
    assert lost == int((res.drops["flow"] == f).sum()) + res.packets["in_flight"]
    assert lost > 1000, "a third of 15 Mbit/s does not fit in 10"
    # The bottleneck's capture holds the real packets it sent, bytes and all.
    dpkt = pytest.importorskip("dpkt")
    frames = [
        dpkt.ethernet.Ethernet(buf)
        for _ts, buf in dpkt.pcapng.Reader(io.BytesIO(res.captures["bottleneck"]))
    ]
    udp_out = [e.data for e in frames if isinstance(e.data.data, dpkt.udp.UDP)]
    assert len(udp_out) == 5000 - int((res.drops["flow"] == f).sum())
    assert all(ip.len == 1400 and ip.data.dport == 9000 for ip in udp_out)
    assert all(bytes(ip.data.data) == b"u" * 1372 for ip in udp_out)


def test_real_and_simulated_flows_share_the_link() -> None:
    # The run lasts until the real sender is done (leaving `with` stops it);
    # its duration only bounds it, with room for the kernel to drain a full
    # send buffer at its share of the link after 25 s of sending.
    text = GEO.format(duration=80, pairs=4) + textwrap.dedent(
        """
        [tcp]
        profile = "linux"

        [[aqm]]
        kind = "red"
        min_th = 50
        max_th = 150
        max_p = 0.1
        w_q = 0.002

        [[traffic]]
        kind = "bulk"
        pairs = [1, 2, 3]
        """
    )
    emu = satqm.Emulation(_sc(text), warmup=10)
    with emu:
        _bulk(emu, "reno", 25)
    res = emu.results
    assert res is not None
    fl = res.flows
    assert set(fl["kind"].astype(str)) >= {"bulk", "real"}
    assert (fl[fl["kind"] == "bulk"]["goodput_bps"] > 0.3e6).all()
    real = fl[(fl["kind"] == "real")]
    assert real["goodput_bps"].max() > 0.3e6, "the real connection gets a share"
    # Busy: the three simulated flows (Linux's profile) alone keep the link
    # 86 % utilized over this window (an offline run of the same scenario);
    # the real connection adds to that, however fast the machine is.
    assert res.summary()["utilization_mean"] > 0.8


def test_namespaces_left_by_a_killed_emulation_are_removed() -> None:
    from pyroute2 import netns

    child = textwrap.dedent(
        """
        import sys, time, satqm
        emu = satqm.Emulation(satqm.Scenario.from_toml(sys.argv[1]), duration=60)
        emu.start()
        print("started", flush=True)
        time.sleep(60)
        """
    )
    p = subprocess.Popen(
        [sys.executable, "-c", child, GEO.format(duration=60, pairs=1)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "started"
    mine = [n for n in netns.listnetns() if n.startswith(f"satqm-{p.pid}-")]
    assert len(mine) == 2
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    p.stdout.close()
    assert set(cleanup_leftovers()) >= set(mine)
    assert not [n for n in netns.listnetns() if n.startswith(f"satqm-{p.pid}-")]


def test_without_an_emulation_section_it_says_so() -> None:
    with pytest.raises(satqm.ConfigError, match="emulation"):
        satqm.Emulation(
            _sc(
                GEO.format(duration=5, pairs=1).replace("[emulation]", "")
                + '[[traffic]]\nkind = "bulk"\n'
            )
        )


def test_a_quic_transfer_crosses_the_link() -> None:
    pytest.importorskip("aioquic")
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "quic_transfer.py")
    emu = satqm.Emulation(_sc(GEO.format(duration=25, pairs=1)), warmup=0)
    with emu:
        emu.popen("receiver[0]", [sys.executable, example, "server", "--bytes", "500000"])
        time.sleep(1.5)
        out = emu.run(
            "sender[0]",
            [sys.executable, example, "client", emu.address("receiver[0]")],
            capture_output=True,
            text=True,
            timeout=20,
        )
    assert "received 500000 bytes" in out.stdout, out.stderr
    res = emu.results
    assert res is not None
    _check_conservation(res)
    assert (res.connections["protocol"] == 17).all()
    assert res.connections["dst_port"].eq(4433).any()


def test_satqm_shell_runs_a_command_in_a_real_host(tmp_path) -> None:
    path = tmp_path / "geo.toml"
    path.write_text(GEO.format(duration=10, pairs=1))
    show = "import os, sys; print(os.environ['SATQM_ADDR_RECEIVER_0_']); sys.exit(3)"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "satqm",
            "shell",
            str(path),
            "--host",
            "sender[0]",
            "--",
            sys.executable,
            "-c",
            show,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == "10.200.0.2"
    assert "sender[0]: 10.200.0.1" in done.stderr
    assert "lateness" in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_satqm_shell_cleans_up_on_a_signal(tmp_path, sig) -> None:
    from pyroute2 import netns

    path = tmp_path / "geo.toml"
    path.write_text(GEO.format(duration=60, pairs=1))
    p = subprocess.Popen(
        [sys.executable, "-m", "satqm", "shell", str(path), "--", "sleep", "60"],
        stderr=subprocess.PIPE,
        text=True,
        # A child started in the background ignores SIGINT unless told not to.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert p.stderr is not None
    for line in p.stderr:
        if line.startswith("running "):
            break
    mine = [n for n in netns.listnetns() if n.startswith(f"satqm-{p.pid}-")]
    assert len(mine) == 2
    p.send_signal(sig)
    p.wait(30)
    p.stderr.close()
    assert p.returncode != 0
    assert not [n for n in netns.listnetns() if n.startswith(f"satqm-{p.pid}-")]


def test_a_real_connection_crosses_the_gateways_peps_end_to_end() -> None:
    from pathlib import Path

    text = (Path(__file__).parent.parent / "scenarios/avqred/conference.toml").read_text()
    text = text.replace('duration = "1400 s"', 'duration = "20 s"')
    text = text.replace('warmup = "200 s"', 'warmup = "0 s"')
    text = text.replace("servers = 60", "servers = 2").replace("clients = 200", "clients = 4")
    text = text[: text.index("[[traffic]]")]
    text += '[[traffic]]\nkind = "bulk"\npairs = [1]\n'
    text += '[emulation]\nhosts = ["server[0]", "client[0]"]\n'
    emu = satqm.Emulation(_sc(text))
    with emu:
        emu.popen("client[0]", [sys.executable, "-c", RECEIVER])
        time.sleep(0.5)
        _ = emu.run(
            "server[0]",
            [sys.executable, "-c", SENDER, emu.address("client[0]"), "reno", "8"],
            capture_output=True,
            timeout=40,
        )
    res = emu.results
    assert res is not None
    _check_conservation(res, only_real=False)
    kinds = res.flows["kind"].astype(str)
    # The simulated bulk flow is split by both PEPs (two relayed
    # connections); the real connection is one flow, end to end.
    assert (kinds == "relay").sum() == 2
    real = res.flows[kinds == "real"]
    assert len(real) == 1 and real["bytes_delivered"].iloc[0] > 1e6
