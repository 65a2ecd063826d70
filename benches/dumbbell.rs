//! Speed of the simulator on the dumbbell of `scenarios/examples/dumbbell-droptail.toml`
//! with N bulk NewReno flows: wall time, bottleneck packets per wall-second,
//! events per wall-second and peak memory, for N = 3, 30, 300 and 60 s /
//! 600 s of simulated time.
//!
//! Run: `cargo bench -p satqm-core --bench dumbbell` (prints a Markdown
//! table for BENCHMARKS.md). Each case runs in its own process so that peak
//! memory (VmHWM) belongs to that case alone; each is repeated and the best
//! wall time kept.

use std::process::Command;
use std::time::Instant;

const BASE: &str = include_str!("../scenarios/examples/dumbbell-droptail.toml");
const REPEATS: usize = 3;

fn scenario(n: u32, secs: u32) -> String {
    BASE.replace("pairs = 3", &format!("pairs = {n}"))
        .replace("duration = \"120 s\"", &format!("duration = \"{secs} s\""))
        .replace("trace_cwnd = [0]", "")
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn run_case(n: u32, secs: u32) {
    let text = scenario(n, secs);
    let mut best = f64::INFINITY;
    let mut packets = 0.0;
    let mut events = 0.0;
    for _ in 0..REPEATS {
        let t0 = Instant::now();
        let mut sim = satqm_core::Simulation::from_toml(&text).expect("valid scenario");
        sim.run().expect("run");
        let wall = t0.elapsed().as_secs_f64();
        best = best.min(wall);
        let s = sim.summary();
        let get = |k: &str| s.iter().find(|(x, _)| *x == k).unwrap().1;
        packets = get("bottleneck_packets");
        events = get("events");
    }
    println!("{n} {secs} {best} {packets} {events} {}", peak_rss_kb());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--case") {
        run_case(args[i + 1].parse().unwrap(), args[i + 2].parse().unwrap());
        return;
    }
    let exe = std::env::current_exe().unwrap();
    println!("| flows | simulated s | wall s | bottleneck packets | packets / wall s | events / wall s | peak RSS MB |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for n in [3u32, 30, 300] {
        for secs in [60u32, 600] {
            let out = Command::new(&exe)
                .args(["--case", &n.to_string(), &secs.to_string()])
                .output()
                .unwrap();
            let line = String::from_utf8_lossy(&out.stdout);
            let v: Vec<f64> = line
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let (wall, pk, ev, rss) = (v[2], v[3], v[4], v[5]);
            println!(
                "| {n} | {secs} | {wall:.3} | {pk:.0} | {:.0} | {:.0} | {:.1} |",
                pk / wall,
                ev / wall,
                rss / 1024.0
            );
        }
    }
}
