//! ATSP end to end on the paper's dumbbell (10 Mbit/s, 290 ms bottleneck,
//! 800-packet buffer, PI marking): packet conservation, determinism,
//! fairness, and losses that do not cut the rate.

mod common;

use proptest::prelude::*;
use satqm_core::{SimTime, Simulation};

use common::*;

/// The paper's PI with Kp, Ki read as gains (T = 1/C, C in 1,500-byte
/// packets per second).
const PI: &str = r#"
[[aqm]]
kind = "pi"
mode = "mark"
q_ref = 300
sample_rate = 833.333
kp = 2.607e-5
ki = 2.508e-5
"#;

fn scenario(duration: &str, loss: f64, atsp: &str, extra: &str) -> String {
    dumbbell(
        duration,
        3,
        &format!("rate = \"10 Mbps\"\ndelay = \"290 ms\"\nbuffer = 800\nloss = {loss}"),
        "rate = \"100 Mbps\"\ndelay = \"5 ms\"\nbuffer = 1000",
        "",
        &format!(
            "{PI}\n[[traffic]]\nkind = \"atsp\"\nstart = {{ uniform = [\"0 s\", \"1 s\"] }}\natsp = {{ w_max = 500{atsp} }}\n{extra}"
        ),
    )
    .replace("[simulation]", "[simulation]\nsample_interval = \"1 s\"")
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}

/// Run to `t1`, note each flow's delivered bytes, run to `t2`: the flows'
/// goodputs (bit/s) in between.
fn window(text: &str, t1: u64, t2: u64) -> (Simulation, Vec<f64>) {
    let mut sim = Simulation::from_toml(text).unwrap();
    sim.run_until(SimTime::from_secs(t1)).unwrap();
    let before: Vec<u64> = sim.flows.iter().map(|f| f.delivered).collect();
    sim.run_until(SimTime::from_secs(t2)).unwrap();
    let g = sim
        .flows
        .iter()
        .zip(before)
        .map(|(f, b)| (f.delivered - b) as f64 * 8.0 / (t2 - t1) as f64)
        .collect();
    (sim, g)
}

#[test]
fn three_senders_share_fairly_and_the_queue_settles_near_q_ref() {
    let (sim, g) = window(&scenario("90 s", 0.0, "", ""), 60, 90);
    assert!(jain(&g) >= 0.99, "Jain {} of {g:?}", jain(&g));
    let total: f64 = g.iter().sum();
    // 10 Mbit/s less the headers (40 of 1,500 bytes).
    assert!(total > 0.95 * 10e6 * 1460.0 / 1500.0, "{total}");
    let q = &sim.timeseries;
    let late: Vec<f64> = (0..q.time_ns.len())
        .filter(|&i| q.link[i] == sim.bottleneck.0 && q.time_ns[i] >= 60_000_000_000)
        .map(|i| q.queue_packets[i] as f64)
        .collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!((mean - 300.0).abs() < 60.0, "queue mean {mean}");
}

#[test]
fn erasures_do_not_cut_the_rate() {
    let (_, clean) = window(&scenario("90 s", 0.0, "", ""), 60, 90);
    let (sim, lossy) = window(&scenario("90 s", 1e-3, "", ""), 60, 90);
    let (a, b): (f64, f64) = (clean.iter().sum(), lossy.iter().sum());
    assert!(b > 0.95 * a, "goodput {a} -> {b}");
    let retx: u64 = sim
        .flows
        .iter()
        .map(|f| match &f.ends {
            satqm_core::sim::Endpoints::Atsp { sender, .. } => sender.stats.retransmits,
            _ => 0,
        })
        .sum();
    assert!(retx > 0, "erasures were resent");
}

#[test]
fn same_seed_same_run() {
    let text = scenario("20 s", 1e-3, "", "");
    let (a, b) = (run(&text), run(&text));
    assert_eq!(a.timeseries.queue_packets, b.timeseries.queue_packets);
    assert_eq!(a.drops.time_ns, b.drops.time_ns);
    let c = run(&text.replace("[simulation]", "[simulation]\nseed = 7"));
    assert_ne!(a.drops.time_ns, c.drops.time_ns);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    /// Every packet created is delivered, dropped or still in a link, at
    /// every step, whatever the ATSP parameters, losses and cross traffic.
    #[test]
    fn atsp_packets_are_conserved(
        alpha in 1u32..40,
        beta in 0.0f64..0.01,
        h in 0.0f64..200.0,
        w_max in 5.0f64..900.0,
        loss in prop_oneof![Just(0.0), 0.0f64..0.05],
        compound in any::<bool>(),
        cbr in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let cut = if compound { "compound" } else { "cycle_base" };
        let extra = if cbr {
            "[[traffic]]\nkind = \"cbr\"\npairs = 0\nrate = \"4 Mbps\"\nstart = \"2 s\"\nstop = \"8 s\"\n"
        } else {
            ""
        };
        let text = scenario(
            "12 s",
            loss,
            &format!(", alpha = {alpha}, beta = {beta}, h = {h}, cut = \"{cut}\"").replace("w_max = 500", ""),
            extra,
        )
        .replace("w_max = 500", &format!("w_max = {w_max}"))
        .replace("[simulation]", &format!("[simulation]\nseed = {seed}"));
        let mut sim = Simulation::from_toml(&text).unwrap();
        let mut t = SimTime::ZERO;
        while !sim.finished() {
            t += SimTime::from_ms(700);
            sim.run_until(t).unwrap();
            let c = sim.packet_counts();
            prop_assert_eq!(c.created, c.delivered + c.dropped + c.in_flight, "{:?}", c);
        }
        prop_assert!(sim.flows.iter().all(|f| f.delivered > 0));
    }
}
