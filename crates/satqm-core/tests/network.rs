//! Links, timing and packet conservation.

mod common;

use proptest::prelude::*;
use satqm_core::{SimTime, Simulation};

use common::*;

/// One 1,500-byte datagram crosses access (100 Mbit/s, 5 ms), bottleneck
/// (10 Mbit/s, 290 ms) and access again: 120 us + 5 ms + 1.2 ms + 290 ms +
/// 120 us + 5 ms = 301.44 ms, to the nanosecond.
#[test]
fn serialization_and_propagation_are_exact() {
    let text = dumbbell(
        "1 s",
        1,
        "rate = \"10 Mbps\"\ndelay = \"290 ms\"",
        "rate = \"100 Mbps\"\ndelay = \"5 ms\"",
        "",
        "[[traffic]]\nkind = \"cbr\"\nrate = \"1 Mbps\"\npacket_size = 1500\nstop = \"10 ms\"",
    );
    let mut sim = Simulation::from_toml(&text).unwrap();
    let arrival = SimTime::from_us(301_440);
    sim.run_until(SimTime(arrival.ns() - 1)).unwrap();
    assert_eq!(sim.flows[0].delivered, 0);
    sim.run_until(arrival).unwrap();
    assert_eq!(sim.flows[0].delivered, 1500 - 28);
}

/// Back-to-back packets leave the bottleneck one serialization time apart.
#[test]
fn queued_packets_are_spaced_by_serialization_time() {
    // 20 Mbit/s CBR into a 10 Mbit/s bottleneck: the queue builds and the
    // k-th packet arrives at first + k * 1.2 ms.
    let text = dumbbell(
        "1 s",
        1,
        "rate = \"10 Mbps\"\ndelay = \"10 ms\"\nbuffer = 100",
        "rate = \"100 Mbps\"\ndelay = \"1 ms\"",
        "",
        "[[traffic]]\nkind = \"cbr\"\nrate = \"20 Mbps\"\npacket_size = 1500\nstop = \"5 ms\"",
    );
    let mut sim = Simulation::from_toml(&text).unwrap();
    // First: 120 us + 1 ms + 1.2 ms + 10 ms + 120 us + 1 ms = 13.44 ms.
    let first = 13_440_000u64;
    for k in 0..5u64 {
        let t = first + k * 1_200_000;
        sim.run_until(SimTime(t - 1)).unwrap();
        assert_eq!(sim.flows[0].delivered, k * 1472, "packet {k} not early");
        sim.run_until(SimTime(t)).unwrap();
        assert_eq!(sim.flows[0].delivered, (k + 1) * 1472, "packet {k} on time");
    }
}

#[test]
fn per_packet_random_delay_keeps_fifo_order_and_range() {
    let text = dumbbell(
        "5 s",
        1,
        "rate = \"20 Mbps\"\ndelay = { uniform = [\"300 ms\", \"400 ms\"] }\nbuffer = 1000",
        "rate = \"100 Mbps\"\ndelay = \"0 ms\"",
        "",
        "[[traffic]]\nkind = \"cbr\"\nrate = \"10 Mbps\"\npacket_size = 1000\nstop = \"2 s\"",
    );
    let mut sim = Simulation::from_toml(&text).unwrap();
    let mut last = 0;
    let mut t = SimTime::ZERO;
    while t < SimTime::from_secs(3) {
        t += SimTime::from_us(50);
        sim.run_until(t).unwrap();
        let d = sim.flows[0].delivered;
        assert!(d >= last);
        last = d;
        // FIFO: the bottleneck line's arrival times never decrease.
        let line: Vec<_> = sim.links[0].line.iter().map(|x| x.0).collect();
        assert!(line.windows(2).all(|w| w[0] <= w[1]));
    }
    assert_eq!(last, 2500 * 972, "all datagrams delivered");
}

#[test]
fn same_seed_same_run_different_seed_different_run() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/examples/dumbbell-hetero-rtt.toml"
    ))
    .unwrap();
    let text = text.replace("duration = \"120 s\"", "duration = \"20 s\"");
    let a = run(&text);
    let b = run(&text);
    assert_eq!(a.drops.time_ns, b.drops.time_ns);
    assert_eq!(a.timeseries.queue_packets, b.timeseries.queue_packets);
    let c = run(&text.replace("seed = 1", "seed = 2"));
    assert_ne!(a.timeseries.queue_packets, c.timeseries.queue_packets);
}

fn check_conservation(sim: &Simulation) {
    let c = sim.packet_counts();
    assert_eq!(c.created, c.delivered + c.dropped + c.in_flight, "{c:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Every packet created is delivered, dropped with a reason, or still
    /// inside a link, at every step of random scenarios; queues never
    /// exceed their limits; finite transfers arrive whole.
    #[test]
    fn packets_are_conserved(
        pairs in 1u32..5,
        rate_mbps in 1u32..50,
        delay_ms in 0u32..300,
        buffer in 1u32..60,
        loss in prop_oneof![Just(0.0), 0.0f64..0.05],
        recovery in prop_oneof![Just("tahoe"), Just("reno"), Just("newreno"), Just("sack")],
        delayed_ack in any::<bool>(),
        size_kb in 1u64..400,
        cbr in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let mut traffic = format!("[[traffic]]\nkind = \"bulk\"\nsize = \"{size_kb} kB\"\nstart = {{ uniform = [\"0 s\", \"1 s\"] }}\n");
        if cbr {
            traffic += "[[traffic]]\nkind = \"cbr\"\npairs = 0\nrate = \"2 Mbps\"\nstart = \"0.5 s\"\nstop = \"3 s\"\n";
        }
        let text = dumbbell(
            "30 s",
            pairs,
            &format!("rate = \"{rate_mbps} Mbps\"\ndelay = \"{delay_ms} ms\"\nbuffer = {buffer}\nloss = {loss}\nreverse_loss = {}", loss / 2.0),
            "rate = \"100 Mbps\"\ndelay = { min = \"1 ms\", max = \"20 ms\" }\nbuffer = 20",
            &format!("recovery = \"{recovery}\"\ndelayed_ack = {delayed_ack}\nmin_rto = \"200 ms\""),
            &traffic,
        ).replace("[simulation]", &format!("[simulation]\nseed = {seed}"));
        let mut sim = Simulation::from_toml(&text).unwrap();
        let mut t = SimTime::ZERO;
        while !sim.finished() {
            t += SimTime::from_ms(700);
            sim.run_until(t).unwrap();
            check_conservation(&sim);
            for l in &sim.links {
                if let satqm_core::queue::BufferLimit::Packets(n) = l.port.limit() {
                    prop_assert!(l.port.len() <= n as usize);
                }
            }
        }
        for f in sim.flows.iter().filter(|f| f.kind.name() == "bulk") {
            prop_assert!(f.delivered <= size_kb * 1000);
            if f.completed.is_some() {
                prop_assert_eq!(f.delivered, size_kb * 1000);
            }
        }
    }
}

/// Every result table's columns have one length (a column the sampler or a
/// log forgot to push would not).
#[test]
fn result_tables_have_columns_of_one_length() {
    let text = dumbbell(
        "20 s",
        3,
        "rate = \"10 Mbps\"\ndelay = \"50 ms\"\nbuffer = 20",
        "rate = \"100 Mbps\"\ndelay = \"5 ms\"",
        "",
        "[[traffic]]\nkind = \"bulk\"",
    )
    .replace("[simulation]", "[simulation]\ntrace_cwnd = [0, 1]");
    let sim = run(&text);
    let fs = sim.flow_summaries();
    let tables = [
        ("timeseries", sim.timeseries.columns()),
        ("drops", sim.drops.columns()),
        ("cwnd", sim.cwnd.columns()),
        ("congestion", sim.congestion.columns()),
        ("flows", satqm_core::sim::FlowSummary::columns(&fs)),
    ];
    for (name, cols) in tables {
        let n = cols[0].1.len();
        assert!(n > 0, "{name} is empty");
        for (col, c) in &cols {
            assert_eq!(c.len(), n, "{name}.{col}");
        }
    }
}
