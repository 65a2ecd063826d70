//! How the simulator's cost grows with the number of flows and the
//! bottleneck rate: the dumbbell with N bulk SACK flows, N = 1 … 100,000,
//! on a bottleneck of 10 Mbit/s … 10 Gbit/s.
//!
//! The path: 45 ms one way on the bottleneck and 2.5 ms on each access link
//! (a 100 ms round trip), access links ten times the bottleneck's rate, the
//! bottleneck's buffer one bandwidth-delay product (rate × 100 ms in
//! 1,500-byte packets), starts spread over the first second. Each case runs
//! for the longer of 10 s and the time the bottleneck needs for about
//! 830,000 packets (1,000 s at 10 Mbit/s, 100 s at 100 Mbit/s, 10 s from
//! 1 Gbit/s up).
//!
//! Run: `cargo bench -p satqm-core --bench scale` (every point), or limit the
//! grid: `-- --flows 1,10,100 --rates 10,100` (rates in Mbit/s); `--seconds S`
//! runs every case for S simulated seconds instead. `--scenario N RATE [S]`
//! prints one case's scenario (benches/scale_ns3.py gives it to ns-3). Prints a
//! Markdown table for BENCHMARKS.md, with the CPU time of the case's process
//! beside its wall time (steadier on a shared machine). Each case runs in its own process so
//! that peak memory (VmHWM) belongs to that case alone; one run per case
//! (the large ones take minutes).

#[path = "common.rs"]
mod common;

use common::{cpu_s, peak_rss_kb};
use std::process::Command;
use std::time::Instant;

const FLOWS: [u32; 6] = [1, 10, 100, 1_000, 10_000, 100_000];
const RATES_MBPS: [u64; 4] = [10, 100, 1_000, 10_000];

/// Simulated seconds of a case at `rate_mbps`.
fn duration_s(rate_mbps: u64) -> u64 {
    (10_000 / rate_mbps).max(10)
}

fn scenario(n: u32, rate_mbps: u64, secs: u64) -> String {
    let bdp = ((rate_mbps as f64 * 1e6 * 0.1 / 8.0 / 1500.0).round() as u64).max(2);
    let access = rate_mbps * 10;
    format!(
        r#"name = "scale"
[simulation]
duration = "{secs} s"
seed = 1
sample_interval = "100 ms"
max_memory = "1000 GB"

[topology]
kind = "dumbbell"
pairs = {n}

[topology.access]
rate = "{access} Mbps"
delay = "2.5 ms"
buffer = 1000

[topology.bottleneck]
rate = "{rate_mbps} Mbps"
delay = "45 ms"
buffer = {bdp}

[tcp]
recovery = "sack"
mss = 1460
initial_window = 2
delayed_ack = true
window_scaling = true

[[traffic]]
kind = "bulk"
pairs = "all"
start = {{ uniform = ["0 s", "1 s"] }}
"#
    )
}

/// Resident memory of this process now (VmRSS), KiB.
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn run_case(n: u32, rate_mbps: u64, secs: u64) {
    let text = scenario(n, rate_mbps, secs);
    let before = rss_kb();
    let cpu0 = cpu_s();
    let t0 = Instant::now();
    let mut sim = satqm_core::Simulation::from_toml(&text).expect("valid scenario");
    let build = t0.elapsed().as_secs_f64();
    sim.run().expect("run");
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_s() - cpu0;
    let s = sim.summary();
    println!(
        "{wall} {build} {} {} {} {} {cpu} {}",
        s.bottleneck_packets,
        s.events,
        peak_rss_kb(),
        before,
        s.goodput_total_bps
    );
}

fn list<T: std::str::FromStr>(args: &[String], key: &str) -> Option<Vec<T>> {
    let i = args.iter().position(|a| a == key)?;
    Some(
        args.get(i + 1)?
            .split(',')
            .filter_map(|x| x.replace('_', "").parse().ok())
            .collect(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    for mode in ["--case", "--scenario"] {
        if let Some(i) = args.iter().position(|a| a == mode) {
            let n = args[i + 1].parse().unwrap();
            let rate = args[i + 2].parse().unwrap();
            let secs = args
                .get(i + 3)
                .map_or(duration_s(rate), |s| s.parse().unwrap());
            if mode == "--case" {
                run_case(n, rate, secs);
            } else {
                print!("{}", scenario(n, rate, secs));
            }
            return;
        }
    }
    let flows = list(&args, "--flows").unwrap_or(FLOWS.to_vec());
    let rates = list(&args, "--rates").unwrap_or(RATES_MBPS.to_vec());
    let seconds: Option<u64> = list(&args, "--seconds").and_then(|v| v.first().copied());
    let exe = std::env::current_exe().unwrap();
    println!("| flows | bottleneck | simulated s | wall s | CPU s | of which build s | bottleneck packets | packets / CPU s | events / packet | peak RSS MB | KB / flow |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &rate in &rates {
        let secs = seconds.unwrap_or(duration_s(rate));
        for &n in &flows {
            let out = Command::new(&exe)
                .args([
                    "--case",
                    &n.to_string(),
                    &rate.to_string(),
                    &secs.to_string(),
                ])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "case {n} x {rate} Mbit/s failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: Vec<f64> = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let (wall, build, pk, ev, hwm, before, cpu) =
                (v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
            let bottleneck = if rate >= 1000 {
                format!("{} Gbit/s", rate / 1000)
            } else {
                format!("{rate} Mbit/s")
            };
            println!(
                "| {n} | {bottleneck} | {secs} | {wall:.2} | {cpu:.2} | {build:.2} | {pk:.0} | {:.0} | {:.2} | {:.1} | {:.2} |",
                pk / cpu,
                ev / pk.max(1.0),
                hwm / 1024.0,
                (hwm - before) / n as f64
            );
        }
    }
}
