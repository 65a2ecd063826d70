//! Speed of the simulator on the dumbbell of `scenarios/examples/dumbbell-droptail.toml`
//! with N bulk NewReno flows: wall time, bottleneck packets per wall-second,
//! events per wall-second and peak memory, for N = 3, 30, 300 and 60 s /
//! 600 s of simulated time.
//!
//! Run: `cargo bench -p satqm-core --bench dumbbell` (prints a Markdown
//! table for BENCHMARKS.md, with the process's CPU time beside the wall
//! time: steadier on a shared machine). Each case runs in its own process so that peak
//! memory (VmHWM) belongs to that case alone; each is repeated and the best
//! wall time kept.

#[path = "common.rs"]
mod common;

use common::{cpu_s, peak_rss_kb};
use std::process::Command;
use std::time::Instant;

const BASE: &str = include_str!("../scenarios/examples/dumbbell-droptail.toml");
const REPEATS: usize = 3;

/// AQM tables for the overhead comparison (thresholds suit the 800-packet
/// buffer of the example).
const AQMS: [(&str, &str); 16] = [
    ("droptail", ""),
    ("red", "[[aqm]]\nkind = \"red\"\nmin_th = 100\nmax_th = 300"),
    ("ared", "[[aqm]]\nkind = \"ared\"\nmin_th = 100\nmax_th = 300"),
    ("gkvq", "[[aqm]]\nkind = \"gkvq\""),
    ("avq", "[[aqm]]\nkind = \"avq\""),
    ("avqred", "[[aqm]]\nkind = \"avqred\"\nmin_th = 100\nmax_th = 300\nmin_capacity = \"9.8 Mbps\"\nmax_capacity = \"9.8 Mbps\""),
    ("pi", "[[aqm]]\nkind = \"pi\"\na = 1.822e-5\nb = 1.816e-5\nsample_rate = 160\nq_ref = 200"),
    ("rem", "[[aqm]]\nkind = \"rem\""),
    ("pie", "[[aqm]]\nkind = \"pie\""),
    ("codel", "[[aqm]]\nkind = \"codel\""),
    ("fq_codel", "[[aqm]]\nkind = \"fq_codel\""),
    ("dualpi2", "[[aqm]]\nkind = \"dualpi2\""),
    ("fq_pie", "[[aqm]]\nkind = \"fq_pie\""),
    ("fq_cobalt", "[[aqm]]\nkind = \"fq_cobalt\""),
    ("cobalt", "[[aqm]]\nkind = \"cobalt\""),
    ("pi2", "[[aqm]]\nkind = \"pi2\""),
];

fn scenario(n: u32, secs: u32, aqm: &str) -> String {
    let table = AQMS.iter().find(|(k, _)| *k == aqm).expect("known AQM").1;
    let text = BASE
        .replace("pairs = 3", &format!("pairs = {n}"))
        .replace("duration = \"120 s\"", &format!("duration = \"{secs} s\""))
        .replace("trace_cwnd = [0]", "");
    format!("{text}\n{table}\n")
}

fn run_case(n: u32, secs: u32, aqm: &str) {
    let text = scenario(n, secs, aqm);
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    let mut packets = 0.0;
    let mut events = 0.0;
    for _ in 0..REPEATS {
        let (t0, c0) = (Instant::now(), cpu_s());
        let mut sim = satqm_core::Simulation::from_toml(&text).expect("valid scenario");
        sim.run().expect("run");
        let wall = t0.elapsed().as_secs_f64();
        best = best.min(wall);
        best_cpu = best_cpu.min(cpu_s() - c0);
        let s = sim.summary();
        packets = s.bottleneck_packets as f64;
        events = s.events as f64;
    }
    println!(
        "{n} {secs} {best} {packets} {events} {} {best_cpu}",
        peak_rss_kb()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--case") {
        run_case(
            args[i + 1].parse().unwrap(),
            args[i + 2].parse().unwrap(),
            &args[i + 3],
        );
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let case = |n: u32, secs: u32, aqm: &str| -> Vec<f64> {
        let out = Command::new(&exe)
            .args(["--case", &n.to_string(), &secs.to_string(), aqm])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect()
    };
    println!("| flows | simulated s | wall s | CPU s | bottleneck packets | packets / wall s | packets / CPU s | events / wall s | peak RSS MB |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for n in [3u32, 30, 300] {
        for secs in [60u32, 600] {
            let v = case(n, secs, "droptail");
            let (wall, pk, ev, rss, cpu) = (v[2], v[3], v[4], v[5], v[6]);
            println!(
                "| {n} | {secs} | {wall:.3} | {cpu:.3} | {pk:.0} | {:.0} | {:.0} | {:.0} | {:.1} |",
                pk / wall,
                pk / cpu,
                ev / wall,
                rss / 1024.0
            );
        }
    }
    println!();
    println!("AQM at the bottleneck, 300 flows, 600 s simulated:");
    println!();
    println!("| AQM | wall s | bottleneck packets | packets / wall s | vs DropTail |");
    println!("|---|---:|---:|---:|---:|");
    let mut base = 0.0;
    for (aqm, _) in AQMS {
        let v = case(300, 600, aqm);
        let rate = v[3] / v[2];
        if aqm == "droptail" {
            base = rate;
        }
        println!(
            "| {aqm} | {:.3} | {:.0} | {rate:.0} | {:+.1} % |",
            v[2],
            v[3],
            (rate / base - 1.0) * 100.0
        );
    }
}
