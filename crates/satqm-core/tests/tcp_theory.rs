//! TCP against theory: link filling, the Mathis et al. throughput formula,
//! fairness among equal flows, the receive-window cap.

mod common;

use common::*;

fn sample_mean(sim: &satqm_core::Simulation, from_s: f64) -> f64 {
    let ts = &sim.timeseries;
    let b = sim.bottleneck.0;
    let v: Vec<f64> = (0..ts.time_ns.len())
        .filter(|&i| ts.link[i] == b && ts.time_ns[i] as f64 * 1e-9 > from_s)
        .map(|i| ts.utilization[i])
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// On a lossless path (the receive window, 1 MB, exceeds the 750 kB
/// bandwidth-delay product and fits in the buffer) one flow of any variant
/// fills a 10 Mbit/s GEO bottleneck once slow start is over.
#[test]
fn one_flow_fills_a_lossless_path() {
    for recovery in ["tahoe", "reno", "newreno", "sack"] {
        let text = dumbbell(
            "60 s",
            1,
            "rate = \"10 Mbps\"\ndelay = \"290 ms\"\nbuffer = 1000",
            "rate = \"100 Mbps\"\ndelay = \"5 ms\"",
            &format!("recovery = \"{recovery}\"\nreceive_buffer = \"1 MB\""),
            "[[traffic]]\nkind = \"bulk\"",
        );
        let sim = run(&text);
        assert_eq!(summary(&sim, "drops_total"), 0.0, "{recovery}: lossless");
        let u = sample_mean(&sim, 15.0);
        assert!(u > 0.995, "{recovery}: utilization {u:.4} after slow start");
    }
}

/// With SACK and a buffer of one bandwidth-delay product, one flow keeps
/// the bottleneck busy after recovering from its slow-start overshoot (the
/// ~500 losses of that overshoot are repaired in about one round trip).
#[test]
fn one_sack_flow_fills_the_bottleneck_after_overshoot() {
    let text = dumbbell(
        "120 s",
        1,
        "rate = \"10 Mbps\"\ndelay = \"290 ms\"\nbuffer = 500",
        "rate = \"100 Mbps\"\ndelay = \"5 ms\"",
        "recovery = \"sack\"",
        "[[traffic]]\nkind = \"bulk\"",
    );
    let sim = run(&text);
    assert!(
        summary(&sim, "drops_total") > 100.0,
        "slow start overshoots"
    );
    assert_eq!(summary(&sim, "timeouts_total"), 0.0);
    let u = sample_mean(&sim, 20.0);
    assert!(u > 0.99, "utilization {u:.4} after recovery");
}

/// Mathis, Semke, Mahdavi, Ott (1997): rate = (MSS / RTT) * C / sqrt(p),
/// C = sqrt(3/2) ~ 1.22 with an ACK per segment, sqrt(3/4) ~ 0.87 with
/// delayed ACKs. Random loss, no queueing (a fast bottleneck), ten
/// independent flows averaged.
#[test]
fn reno_goodput_matches_mathis_formula() {
    let rtt = 0.1; // 2 * (5 + 40 + 5) ms
    for recovery in ["reno", "newreno"] {
        for &(p, delayed) in &[(1e-3f64, false), (1e-2, false), (1e-3, true), (1e-2, true)] {
            let text = dumbbell(
                "400 s",
                10,
                &format!("rate = \"1 Gbps\"\ndelay = \"40 ms\"\nbuffer = 5000\nloss = {p}"),
                "rate = \"10 Gbps\"\ndelay = \"5 ms\"\nbuffer = 5000",
                &format!("recovery = \"{recovery}\"\ndelayed_ack = {delayed}\nmss = 1460\nmin_rto = \"200 ms\""),
                "[[traffic]]\nkind = \"bulk\"",
            )
            .replace("[simulation]", "[simulation]\nwarmup = \"20 s\"");
            let sim = run(&text);
            let per_flow = summary(&sim, "goodput_total_bps") / 10.0;
            let c = if delayed {
                (3.0f64 / 4.0).sqrt()
            } else {
                (3.0f64 / 2.0).sqrt()
            };
            let mathis = 1460.0 * 8.0 / rtt * c / p.sqrt();
            let ratio = per_flow / mathis;
            assert!(
                (0.75..=1.25).contains(&ratio),
                "{recovery} p={p} delack={delayed}: {per_flow:.0} bit/s vs Mathis {mathis:.0} (ratio {ratio:.2})"
            );
        }
    }
}

/// Equal-RTT flows sharing a drop-tail bottleneck share it fairly.
#[test]
fn equal_flows_share_fairly() {
    for n in [5u32, 10] {
        let text = dumbbell(
            "60 s",
            n,
            "rate = \"10 Mbps\"\ndelay = \"50 ms\"\nbuffer = 100",
            "rate = \"100 Mbps\"\ndelay = \"5 ms\"",
            "recovery = \"newreno\"",
            "[[traffic]]\nkind = \"bulk\"\nstart = { uniform = [\"0 s\", \"1 s\"] }",
        );
        let sim = run(&text);
        let j = summary(&sim, "jain_index");
        assert!(j > 0.9, "N={n}: Jain's index {j:.3}");
    }
}

/// Without window scaling a flow can have at most 65,535 bytes in flight:
/// goodput <= 65,535 * 8 / RTT however fast the path.
#[test]
fn receive_window_caps_throughput_without_scaling() {
    let text = dumbbell(
        "60 s",
        1,
        "rate = \"100 Mbps\"\ndelay = \"290 ms\"\nbuffer = 1000",
        "rate = \"1 Gbps\"\ndelay = \"5 ms\"",
        "window_scaling = false",
        "[[traffic]]\nkind = \"bulk\"",
    )
    .replace("[simulation]", "[simulation]\nwarmup = \"10 s\"");
    let sim = run(&text);
    let g = summary(&sim, "goodput_total_bps");
    let rtt = sim.flow_summaries()[0].rtt_min_s;
    let cap = 65_535.0 * 8.0 / rtt;
    assert!(
        g <= cap && g > 0.95 * cap,
        "goodput {g:.0} vs cap {cap:.0} (RTT {rtt:.4} s)"
    );
    // With scaling on, the same path carries far more.
    let sim = run(&text.replace(
        "window_scaling = false",
        "window_scaling = true\nrecovery = \"sack\"",
    ));
    assert!(summary(&sim, "goodput_total_bps") > 10.0 * cap);
}

/// A per-connection rate cap paces the sender: goodput is the cap times the
/// payload share of each packet, and nothing queues at the bottleneck.
#[test]
fn rate_cap_paces_the_sender() {
    let text = dumbbell(
        "30 s",
        2,
        "rate = \"10 Mbps\"\ndelay = \"50 ms\"\nbuffer = 100",
        "rate = \"100 Mbps\"\ndelay = \"5 ms\"",
        "rate_cap = \"2 Mbps\"",
        "[[traffic]]\nkind = \"bulk\"",
    )
    .replace("[simulation]", "[simulation]\nwarmup = \"5 s\"");
    let sim = run(&text);
    for f in sim.flow_summaries() {
        let expected = 2e6 * 1460.0 / 1500.0;
        assert!(
            (f.goodput_bps / expected - 1.0).abs() < 0.02,
            "flow {}: {:.0} vs {expected:.0}",
            f.flow,
            f.goodput_bps
        );
    }
    assert_eq!(summary(&sim, "drops_total"), 0.0);
    assert!(summary(&sim, "queue_mean_packets") < 1.0);
}

/// A bulk source stops sending new data at its stop time; a fixed-size one
/// delivers exactly its size and records its completion.
#[test]
fn bulk_start_stop_and_size() {
    let text = dumbbell(
        "40 s",
        2,
        "rate = \"10 Mbps\"\ndelay = \"50 ms\"\nbuffer = 100",
        "rate = \"100 Mbps\"\ndelay = \"5 ms\"",
        "",
        "[[traffic]]\nkind = \"bulk\"\npairs = 0\nstart = \"2 s\"\nstop = \"10 s\"\n\
         [[traffic]]\nkind = \"bulk\"\npairs = 1\nsize = \"3 MB\"\nstart = \"1 s\"",
    );
    let mut sim = satqm_core::Simulation::from_toml(&text).unwrap();
    sim.run_until(satqm_core::SimTime::from_secs(2)).unwrap();
    assert_eq!(sim.flows[0].delivered, 0, "not started before 2 s");
    sim.run_until(satqm_core::SimTime::from_secs(12)).unwrap();
    let at_stop = sim.flows[0].delivered;
    assert!(at_stop > 0);
    sim.run().unwrap();
    assert_eq!(
        sim.flows[0].delivered, at_stop,
        "nothing new after stop + 2 s"
    );
    assert_eq!(sim.flows[1].delivered, 3_000_000);
    let done = sim.flows[1]
        .completed
        .expect("fixed-size transfer completes");
    assert!(
        done.secs_f64() > 3.4 && done.secs_f64() < 10.0,
        "3 MB at <= 10 Mbit/s takes > 2.4 s: {done}"
    );
}

/// TCP Hybla on a GEO path regrows the window it loses far faster than
/// Reno (rho^2 = 576 times per round trip): with random loss, its goodput
/// is several times Reno's. The receive window (1 MB, above the 750 kB
/// bandwidth-delay product) bounds both, so queue overflow plays no part.
#[test]
fn hybla_outperforms_reno_over_geo_with_losses() {
    let text = |cc: &str| {
        dumbbell(
            "200 s",
            1,
            "rate = \"10 Mbps\"\ndelay = \"290 ms\"\nbuffer = 800\nloss = 0.001",
            "rate = \"100 Mbps\"\ndelay = \"5 ms\"",
            &format!("recovery = \"sack\"\ncc = \"{cc}\"\nreceive_buffer = \"1 MB\""),
            "[[traffic]]\nkind = \"bulk\"",
        )
        .replace("[simulation]", "[simulation]\nwarmup = \"20 s\"")
    };
    let reno = summary(&run(&text("reno")), "goodput_total_bps");
    let hybla = summary(&run(&text("hybla")), "goodput_total_bps");
    assert!(
        hybla > 3.0 * reno,
        "Hybla {hybla:.0} vs Reno {reno:.0} bit/s"
    );
}
