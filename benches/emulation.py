"""Real TCP through a satqm link in real time: goodput and lateness by rate.

    sudo python benches/emulation.py [--rates 10,100,1000] [--seconds 10] [--delay-ms 10]

For each bottleneck rate (Mbit/s), one Linux TCP connection (iperf3 if it
is installed, else a Python bulk sender; the kernel's default congestion
control) crosses a dumbbell's bottleneck of that rate, with DELAY one way
and a buffer of one bandwidth-delay product, for SECONDS. Prints a
Markdown table: the connection's goodput, the packets carried, and how late
the emulator wrote them (median, 99th percentile, maximum), with the load
average before the run. Needs root and /dev/net/tun.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

import satqm

SCENARIO = """
name = "emulation-bench-{rate}"
[simulation]
duration = "{duration} s"
sample_interval = "100 ms"
[topology]
kind = "dumbbell"
pairs = 1
[topology.access]
rate = "100 Gbps"
delay = "0 ms"
buffer = 100000
[topology.bottleneck]
rate = "{rate} Mbps"
delay = "{delay} ms"
buffer = {buffer}
[emulation]
"""

SENDER = """
import socket, sys, time
s = socket.socket()
s.connect((sys.argv[1], 5201))
buf = b"x" * 262144
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    s.send(buf)
s.close()
"""
RECEIVER = """
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5201))
s.listen(1)
c, _ = s.accept()
while c.recv(1 << 20):
    pass
"""


def one(rate: float, seconds: float, delay_ms: float) -> dict[str, float]:
    bdp = max(100, int(rate * 1e6 * 2 * delay_ms / 1e3 / 8 / 1500))
    text = SCENARIO.format(rate=rate, duration=seconds + 5, delay=delay_ms, buffer=bdp)
    emu = satqm.Emulation(satqm.Scenario.from_toml(text), warmup=2)
    iperf = shutil.which("iperf3")
    load = os.getloadavg()[0]
    with emu:
        dst = emu.address("receiver[0]")
        if iperf:
            emu.popen("receiver[0]", [iperf, "-s", "-1"], stdout=-3)
            time.sleep(0.5)
            emu.run("sender[0]", [iperf, "-c", dst, "-t", str(seconds)], stdout=-3)
        else:
            emu.popen("receiver[0]", [sys.executable, "-c", RECEIVER])
            time.sleep(0.5)
            emu.run("sender[0]", [sys.executable, "-c", SENDER, dst, str(seconds)])
    res = emu.results
    assert res is not None
    s = res.summary()
    real = res.flows[res.flows["kind"] == "real"]
    return {
        "rate": rate,
        "goodput": float(real["goodput_bps"].max()) / 1e6,
        "packets": s["real_packets_in"],
        "p50": s["lateness_p50_ms"] * 1e3,
        "p99": s["lateness_p99_ms"] * 1e3,
        "max": s["lateness_max_ms"] * 1e3,
        "load": load,
        "realtime": float(emu.report.get("realtime", False)),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rates", default="10,100,1000", help="bottleneck rates, Mbit/s")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--delay-ms", type=float, default=10.0)
    a = p.parse_args()
    print("| rate (Mbit/s) | goodput (Mbit/s) | real packets | lateness p50 (µs) "
          "| p99 (µs) | max (µs) | load before | real-time priority |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in (float(x) for x in a.rates.split(",")):
        row = one(r, a.seconds, a.delay_ms)
        print(
            f"| {row['rate']:g} | {row['goodput']:.1f} | {row['packets']:,.0f} | "
            f"{row['p50']:.0f} | {row['p99']:.0f} | {row['max']:.0f} | {row['load']:.2f} | "
            f"{'yes' if row['realtime'] else 'no'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
