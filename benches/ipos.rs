//! Speed of the full IP-over-satellite gateway scenario of the AVQRED papers
//! (`scenarios/avqred/conference.toml`): 60 servers, 200 clients, 400 HTTP
//! connections through a split-TCP PEP, 20 Mbit/s downlink, 200 s of ramp
//! plus 20 simulated minutes — one run of `satqm reproduce avqred`.
//!
//! Run: `cargo bench -p satqm-core --bench ipos` (prints a Markdown table for
//! BENCHMARKS.md, with the process's CPU time beside the wall time). Each case runs in its own process (one core) so that peak
//! memory (VmHWM) belongs to that case alone; each is repeated and the best
//! wall time kept.

#[path = "common.rs"]
mod common;

use common::{cpu_s, peak_rss_kb};
use std::process::Command;
use std::time::Instant;

const BASE: &str = include_str!("../scenarios/avqred/conference.toml");
const REPEATS: usize = 2;

/// The `[[aqm]]` tables of the cases: the scenario's own RED 4, and AVQRED
/// and AVQ as `satqm reproduce avqred` sets them (Table 2).
const AQMS: [(&str, &str); 3] = [
    ("red4", ""),
    (
        "avqred",
        "[[aqm]]\nkind = \"avqred\"\nat = \"receive\"\nmonitor = \"receive\"\nmin_th = 60\nmax_th = 120\npacket_bytes = 1500\nmin_capacity = \"20 Mbps\"\nmax_capacity = \"20 Mbps\"\n",
    ),
    (
        "avq",
        "[[aqm]]\nkind = \"avq\"\nat = \"receive\"\nmonitor = \"receive\"\ngamma = 1.0\nalpha = 0.15\nvq_limit = 123750\ncapacity = \"20 Mbps\"\n",
    ),
];

fn scenario(aqm: &str) -> String {
    let table = AQMS.iter().find(|(k, _)| *k == aqm).expect("known AQM").1;
    if table.is_empty() {
        return BASE.to_string();
    }
    // The table at the start of a line (the header comment mentions `[[aqm]]` too).
    let at = BASE.find("\n[[aqm]]").expect("the scenario has an [[aqm]]") + 1;
    format!("{}{table}", &BASE[..at])
}

fn run_case(aqm: &str) {
    let text = scenario(aqm);
    let mut best = f64::INFINITY;
    let mut best_cpu = f64::INFINITY;
    let mut out = (0.0, 0.0, 0.0, 0.0);
    for _ in 0..REPEATS {
        let (t0, c0) = (Instant::now(), cpu_s());
        let mut sim = satqm_core::Simulation::from_toml(&text).expect("valid scenario");
        sim.run().expect("run");
        let wall = t0.elapsed().as_secs_f64();
        best = best.min(wall);
        best_cpu = best_cpu.min(cpu_s() - c0);
        let s = sim.summary();
        out = (
            s.duration_s,
            s.bottleneck_packets as f64,
            s.events as f64,
            s.web_pages_completed as f64,
        );
    }
    println!(
        "{best} {} {} {} {} {} {best_cpu}",
        out.0,
        out.1,
        out.2,
        out.3,
        peak_rss_kb()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--case") {
        run_case(&args[i + 1]);
        return;
    }
    let exe = std::env::current_exe().unwrap();
    println!("| AQM | simulated s | wall s | CPU s | downlink packets | packets / wall s | events / wall s | pages completed | peak RSS MB |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (aqm, _) in AQMS {
        let out = Command::new(&exe).args(["--case", aqm]).output().unwrap();
        assert!(
            out.status.success(),
            "case {aqm} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Vec<f64> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let (wall, secs, pk, ev, pages, rss, cpu) = (v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
        println!(
            "| {aqm} | {secs:.0} | {wall:.2} | {cpu:.2} | {pk:.0} | {:.0} | {:.0} | {pages:.0} | {:.1} |",
            pk / wall,
            ev / wall,
            rss / 1024.0
        );
    }
}
