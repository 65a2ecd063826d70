//! The measurement window: what a run's and a flow's figures cover.

mod common;

use satqm_core::{SimTime, Simulation};

use common::*;

const BOTTLENECK: &str = "rate = \"10 Mbps\"\ndelay = \"20 ms\"\nbuffer = 100";
const ACCESS: &str = "rate = \"100 Mbps\"\ndelay = \"5 ms\"";

fn three_flows(duration: &str, simulation: &str) -> String {
    dumbbell(
        duration,
        3,
        BOTTLENECK,
        ACCESS,
        "",
        "[[traffic]]\nkind = \"bulk\"",
    )
    .replace("[simulation]", &format!("[simulation]\n{simulation}"))
}

/// The warm-up snapshot is taken at the warm-up time, not at the first
/// sample after it: a sample interval longer than the measured period
/// changes nothing.
#[test]
fn goodput_does_not_depend_on_the_sample_grid() {
    let fine = run(&three_flows(
        "12 s",
        "warmup = \"10 s\"\nsample_interval = \"100 ms\"",
    ));
    let coarse = run(&three_flows(
        "12 s",
        "warmup = \"10 s\"\nsample_interval = \"7 s\"",
    ));
    let (f, c) = (fine.summary(), coarse.summary());
    assert!(f.goodput_total_bps <= 10e6, "{}", f.goodput_total_bps);
    assert!(f.goodput_total_bps > 9e6, "{}", f.goodput_total_bps);
    assert_eq!(f.goodput_total_bps, c.goodput_total_bps);
    let (ff, cf) = (fine.flow_summaries(), coarse.flow_summaries());
    for (a, b) in ff.iter().zip(&cf) {
        assert_eq!(a.bytes_in_window, b.bytes_in_window);
    }
}

/// A flow's window ends at its stop: what arrives after (data that was in
/// the buffers) does not count.
#[test]
fn a_stopped_flow_counts_bytes_up_to_its_stop() {
    let text = dumbbell(
        "20 s",
        1,
        "rate = \"1 Mbps\"\ndelay = \"100 ms\"\nbuffer = 1000",
        ACCESS,
        "",
        "[[traffic]]\nkind = \"bulk\"\nstop = \"5 s\"",
    );
    let sim = run(&text);
    let f = &sim.flow_summaries()[0];
    assert!(
        f.goodput_bps <= 1e6,
        "goodput {} over 1 Mbit/s",
        f.goodput_bps
    );
    assert!(f.goodput_bps > 0.5e6, "goodput {}", f.goodput_bps);
    // More arrived after the stop than is counted.
    assert!(f.bytes_delivered > f.bytes_in_window);
    let s = sim.summary();
    assert!(s.goodput_total_bps <= 1e6);
}

/// Before the warm-up ends there is no measurement: rates are NaN, not
/// infinite, and the window is empty.
#[test]
fn no_rates_before_the_warmup_ends() {
    let mut sim = Simulation::from_toml(&three_flows("20 s", "warmup = \"10 s\"")).unwrap();
    sim.run_until(SimTime::from_secs(5)).unwrap();
    let s = sim.summary();
    assert_eq!(s.measured_s, 0.0);
    assert!(s.goodput_total_bps.is_nan());
    assert!(s.web_births_per_s.is_nan());
    for f in sim.flow_summaries() {
        assert_eq!(f.bytes_in_window, 0);
        assert_eq!(f.goodput_bps, 0.0);
    }
    sim.run_until(SimTime::from_secs(12)).unwrap();
    let s = sim.summary();
    assert_eq!(s.measured_s, 2.0);
    assert!(s.goodput_total_bps > 9e6 && s.goodput_total_bps <= 10e6);
}

/// The summary's queueing delays are those of every packet that left the
/// bottleneck's buffer from the warm-up on, and of no other.
#[test]
fn queue_delays_count_every_packet_from_the_warmup_on() {
    let mut sim = Simulation::from_toml(&three_flows("20 s", "warmup = \"10 s\"")).unwrap();
    sim.run_until(SimTime::from_ns(10_000_000_000 - 1)).unwrap();
    let b = sim.bottleneck;
    let before = sim.links[b.idx()].port.tx_packets_total();
    sim.run().unwrap();
    let port = &sim.links[b.idx()].port;
    let after_warmup = port.tx_packets_total() - before;
    assert!(after_warmup > 8000, "{after_warmup}");
    let s = port.sojourns().expect("the bottleneck is measured");
    assert_eq!(s.histogram().len(), after_warmup);
    assert_eq!(s.figures().packets, after_warmup);
    let hist = sim.delay_hist();
    let rows = (0..hist.link.len()).filter(|&i| hist.link[i] == b.0);
    assert_eq!(rows.map(|i| hist.packets[i]).sum::<u64>(), after_warmup);
    let sum = sim.summary();
    assert!(sum.queue_delay_p50_ms <= sum.queue_delay_p95_ms);
    assert!(sum.queue_delay_p95_ms <= sum.queue_delay_p99_ms);
    assert!(sum.queue_delay_p99_ms <= sum.queue_delay_max_ms);
    // 100 packets of 1,500 bytes ahead at most, 1.2 ms each at 10 Mbit/s.
    assert!(
        sum.queue_delay_max_ms <= 120.0,
        "{}",
        sum.queue_delay_max_ms
    );
    assert!(sum.queue_delay_mean_ms > 1.0, "{}", sum.queue_delay_mean_ms);
}

/// Three classes on one bottleneck: bulk, CBR and web mice.
fn classes(trace: bool) -> String {
    dumbbell(
        "20 s",
        4,
        "rate = \"2 Mbps\"\ndelay = \"20 ms\"\nbuffer = 50",
        ACCESS,
        "",
        "[[traffic]]\nkind = \"bulk\"\npairs = [0, 1]\n\
         [[traffic]]\nkind = \"cbr\"\npairs = 2\nrate = \"200 kbps\"\npacket_size = 500\nstart = \"3 s\"\n\
         [[traffic]]\nkind = \"web_mice\"\npairs = 3\nsessions = 20\n\
         pareto = { scale = \"2 kB\", shape = 1.3 }\nthink_mean = \"1 s\"",
    )
    .replace(
        "[simulation]",
        &format!("[simulation]\nsample_interval = \"300 ms\"\ntrace_traffic = {trace}"),
    )
}

/// The traffic trace counts each entry's delivered bytes as the flows do:
/// its last sample is the entry's flows' total, less what arrived after it.
#[test]
fn the_traffic_trace_agrees_with_the_flows() {
    let sim = run(&classes(true));
    let t = &sim.traffic;
    let samples = (20_000 / 300) as usize;
    assert_eq!(t.time_ns.len(), 3 * samples);
    let flows = sim.flow_summaries();
    let kinds = ["bulk", "cbr", "web_mice"];
    // At most one interval at the bottleneck's rate arrives after the last
    // sample (here 0.2 s, since 20 s is not on the 300 ms grid).
    let slack = (2e6 / 8.0 * 0.2) as u64;
    for (entry, kind) in kinds.iter().enumerate() {
        let rows: Vec<usize> = (0..t.time_ns.len())
            .filter(|&i| t.traffic[i] == entry as u32)
            .collect();
        assert_eq!(rows.len(), samples);
        let bytes: Vec<u64> = rows.iter().map(|&i| t.delivered_bytes[i]).collect();
        assert!(
            bytes.windows(2).all(|w| w[0] <= w[1]),
            "{kind}: not cumulative"
        );
        let total: u64 = flows
            .iter()
            .filter(|f| f.kind.name() == *kind)
            .map(|f| f.bytes_delivered)
            .sum();
        let last = *bytes.last().unwrap();
        assert!(last > 0, "{kind}: nothing delivered");
        assert!(
            last <= total && total - last <= slack,
            "{kind}: {last} vs {total}"
        );
    }
    // CBR starts at 3 s: nothing before.
    let cbr_first = (0..t.time_ns.len()).find(|&i| t.traffic[i] == 1).unwrap();
    assert_eq!(t.delivered_bytes[cbr_first], 0);
}

/// Off by default; on, it changes nothing else.
#[test]
fn the_traffic_trace_is_off_by_default_and_changes_nothing() {
    let off = run(&classes(false).replace("trace_traffic = false\n", ""));
    let on = run(&classes(true));
    assert!(off.traffic.time_ns.is_empty());
    assert!(!on.traffic.time_ns.is_empty());
    // By their text, since NaN columns never compare equal.
    let text = |sim: &satqm_core::Simulation| {
        let flows = satqm_core::sim::FlowSummary::columns(&sim.flow_summaries());
        format!(
            "{:?}",
            (sim.timeseries.columns(), sim.drops.columns(), flows)
        )
    };
    assert!(text(&off) == text(&on), "the trace changed the run");
}
