//! Run a scenario file and print its summary: `cargo run --release --example run -- FILE`.
//! With `ESTIMATE` set, print the up-front memory estimate, part by part.
/// Large blocks on huge pages, as in the `satqm` command.
#[global_allocator]
static ALLOC: satqm_core::alloc::HugePages = satqm_core::alloc::HugePages;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run FILE");
    let text = std::fs::read_to_string(&path).expect("read scenario");
    if std::env::var("ESTIMATE").is_ok() {
        if let Ok(s) = satqm_core::config::Scenario::from_toml(&text) {
            let est = satqm_core::Simulation::estimate_memory(&s, satqm_core::sim::Host::Rust);
            for p in &est.parts {
                println!(
                    "estimate {:26} {:14.0} bytes ({:.0} {} x {:.0})",
                    p.name, p.bytes, p.how.count, p.how.what, p.how.each
                );
            }
            println!("estimate {:26} {:14.0} bytes", "total", est.total());
        }
    }
    let mut sim = satqm_core::Simulation::from_toml(&text).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let t0 = std::time::Instant::now();
    sim.run().unwrap();
    let wall = t0.elapsed().as_secs_f64();
    for (k, v) in sim.summary().entries() {
        println!("{k:24} {:.6}", v.as_f64());
    }
    if std::env::var("TRACE").is_ok() {
        let ts = &sim.timeseries;
        for i in 0..ts.time_ns.len() {
            if ts.link[i] == sim.bottleneck.0 {
                let t = ts.time_ns[i] as f64 * 1e-9;
                let cw: Vec<String> = (0..sim.cwnd.time_ns.len())
                    .filter(|&j| sim.cwnd.time_ns[j] == ts.time_ns[i])
                    .map(|j| {
                        format!(
                            "{:.0}/{:.0}",
                            sim.cwnd.cwnd_bytes[j] / 1460.0,
                            sim.cwnd.ssthresh_bytes[j].min(1e9) / 1460.0
                        )
                    })
                    .collect();
                println!(
                    "t={t:7.1} util={:.3} q={:4} drops={} cwnd/ssth={}",
                    ts.utilization[i],
                    ts.queue_packets[i],
                    ts.drops[i],
                    cw.join(" ")
                );
            }
        }
    }
    for f in sim.flow_summaries() {
        println!(
            "flow {} goodput {:.0} retx {} fr {} to {} rtt {:.3}/{:.3}/{:.3}",
            f.flow,
            f.goodput_bps,
            f.retransmits,
            f.fast_retransmits,
            f.timeouts,
            f.rtt_min_s,
            f.rtt_mean_s,
            f.rtt_max_s
        );
    }
    println!(
        "wall {wall:.3} s, {:.0} bottleneck pkts/s",
        sim.summary().bottleneck_packets as f64 / wall
    );
}
