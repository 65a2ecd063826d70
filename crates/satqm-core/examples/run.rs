//! Run a scenario file and print its summary: `cargo run --release --example run -- FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: run FILE");
    let text = std::fs::read_to_string(&path).expect("read scenario");
    let mut sim = satqm_core::Simulation::from_toml(&text).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let t0 = std::time::Instant::now();
    sim.run().unwrap();
    let wall = t0.elapsed().as_secs_f64();
    for (k, v) in sim.summary() {
        println!("{k:24} {v:.6}");
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
        sim.summary()
            .iter()
            .find(|(k, _)| *k == "bottleneck_packets")
            .unwrap()
            .1
            / wall
    );
}
