//! BBR on a long path with a deep drop-tail buffer: the standing queue it
//! keeps, the goodput it gets, its PROBE_RTT period, its determinism.
//!
//! The path: 10 Mbit/s, 98 ms one way plus 1 ms access links on each side
//! (RTT 200 ms, a bandwidth-delay product of 250 kB, 167 packets of 1,500
//! bytes) and a drop-tail buffer of 2,000 packets (12 BDPs).

mod common;

use common::*;
use satqm_core::Simulation;

/// Packets of 1,500 bytes in one bandwidth-delay product.
const BDP_PACKETS: f64 = 10e6 * 0.2 / 8.0 / 1500.0;
/// The payload rate of the bottleneck: 1,460 of every 1,500 bytes.
const PAYLOAD_BPS: f64 = 10e6 * 1460.0 / 1500.0;

fn path(pairs: u32, cc: &str, seed: u64) -> Simulation {
    path_with_buffer(pairs, cc, seed, 2000)
}

fn path_with_buffer(pairs: u32, cc: &str, seed: u64, buffer: u32) -> Simulation {
    path_with_cc(pairs, &format!("cc = \"{cc}\""), seed, buffer)
}

/// The path with `cc` the congestion control's line (or `[tcp.cc]` table)
/// at the end of `[tcp]`.
fn path_with_cc(pairs: u32, cc: &str, seed: u64, buffer: u32) -> Simulation {
    let traced: Vec<u32> = (0..pairs).collect();
    run(&format!(
        r#"
[simulation]
duration = "60 s"
warmup = "10 s"
seed = {seed}
sample_interval = "100 ms"
trace_cwnd = {traced:?}
[topology]
kind = "dumbbell"
pairs = {pairs}
[topology.access]
rate = "100 Mbps"
delay = "1 ms"
buffer = 1000
[topology.bottleneck]
rate = "10 Mbps"
delay = "98 ms"
buffer = {buffer}
[tcp]
profile = "linux"
receive_buffer = "16 MB"
send_buffer = "32 MB"
{cc}
[[traffic]]
kind = "bulk"
"#
    ))
}

/// The times flow `f` entered PROBE_RTT (state 4), from the window trace.
fn probe_rtt_entries(sim: &Simulation, f: u32) -> Vec<f64> {
    state_entries(sim, f, 4)
}

/// The times flow `f` entered state `state`, from the window trace.
fn state_entries(sim: &Simulation, f: u32, state: u8) -> Vec<f64> {
    let c = &sim.cwnd;
    let mut out = Vec::new();
    let mut prev = 0;
    for i in (0..c.time_ns.len()).filter(|&i| c.flow[i] == f) {
        if c.cc_state[i] == state && prev != state {
            out.push(c.time_ns[i] as f64 * 1e-9);
        }
        prev = c.cc_state[i];
    }
    out
}

/// One BBR flow paces at its bandwidth estimate and keeps the buffer
/// nearly empty (cwnd_gain 2 bounds it by one BDP); CUBIC and Reno fill
/// the same buffer. BBR's goodput is within 10 % of the link's payload
/// rate.
#[test]
fn one_bbr_flow_keeps_the_queue_small_where_cubic_and_reno_fill_it() {
    let bbr = path(1, "bbr", 1);
    let q = summary(&bbr, "queue_mean_packets");
    assert!(q <= BDP_PACKETS, "BBR standing queue {q:.1} packets");
    let g = summary(&bbr, "goodput_total_bps");
    assert!(g >= 0.9 * PAYLOAD_BPS, "BBR goodput {g:.0} bit/s");
    assert_eq!(summary(&bbr, "drops_total"), 0.0);
    // Its bandwidth estimate is the payload rate of the bottleneck.
    let c = &bbr.cwnd;
    let last = c.time_ns.len() - 1;
    let bw = c.bw_estimate_bps[last];
    assert!((bw - PAYLOAD_BPS).abs() < 0.01 * PAYLOAD_BPS, "bw {bw:.0}");
    assert!(c.pacing_rate_bps[last] > 0.7 * bw);
    for cc in ["cubic", "reno"] {
        let sim = path(1, cc, 1);
        let q = summary(&sim, "queue_mean_packets");
        assert!(q > 3.0 * BDP_PACKETS, "{cc} standing queue {q:.1} packets");
        assert_eq!(sim.cwnd.cc_state.iter().filter(|&&s| s != 0).count(), 0);
        assert!(sim.cwnd.pacing_rate_bps.iter().all(|r| r.is_nan()));
    }
}

/// One flow's pacing (1 % below the bottleneck) empties the queue in
/// every cycle, so after its first PROBE_RTT its RTT samples repeat the
/// path's exact minimum. Linux since 5.10 starts the min-RTT window again
/// only on a lower sample: PROBE_RTT comes every 10 s plus its own 200 ms
/// and a round. With the earlier rule (an equal sample too), the repeats
/// put every PROBE_RTT off once the estimate is the path's minimum.
#[test]
fn one_flow_probes_rtt_every_ten_seconds_unless_an_equal_rtt_refreshes() {
    let sim = path(1, "bbr", 1);
    let e = probe_rtt_entries(&sim, 0);
    assert!(e.len() >= 5, "PROBE_RTT at {e:?}");
    for w in e.windows(2) {
        let gap = w[1] - w[0];
        assert!((10.0..11.0).contains(&gap), "PROBE_RTT at {e:?}");
    }
    let old = path_with_cc(
        1,
        "[tcp.cc]\nkind = \"bbr\"\nmin_rtt_on_equal = true",
        1,
        2000,
    );
    // The min RTT of STARTUP expires once, and the first PROBE_RTT's
    // equals the path's; after the second, none.
    let e = probe_rtt_entries(&old, 0);
    assert!(
        e.len() <= 2 && e.iter().all(|&t| t < 25.0),
        "PROBE_RTT at {e:?}"
    );
    let (new_util, old_util) = (
        summary(&sim, "utilization_mean"),
        summary(&old, "utilization_mean"),
    );
    eprintln!("utilization: {new_util:.4} with PROBE_RTT every 10 s, {old_util:.4} without");
    assert!(new_util < old_util);
}

/// Two BBR flows keep a standing queue of about one BDP (each one's
/// inflight is capped at twice its share of the BDP), and their min-RTT
/// estimates expire every 10 s: PROBE_RTT shows in the trace at that
/// period (10 s after the last refresh, plus its own 200 ms and a round).
#[test]
fn two_bbr_flows_probe_rtt_every_ten_seconds() {
    let sim = path(2, "bbr", 1);
    let q = summary(&sim, "queue_mean_packets");
    assert!(q <= 1.25 * BDP_PACKETS, "standing queue {q:.1} packets");
    assert!(q >= 0.5 * BDP_PACKETS, "standing queue {q:.1} packets");
    for f in 0..2 {
        let e = probe_rtt_entries(&sim, f);
        assert!(e.len() >= 4, "flow {f}: PROBE_RTT at {e:?}");
        for w in e.windows(2) {
            let gap = w[1] - w[0];
            assert!((10.0..12.0).contains(&gap), "flow {f}: PROBE_RTT at {e:?}");
        }
    }
    // The gain cycle: PROBE_BW's pacing gains 1.25, 0.75 and 1 all show.
    let c = &sim.cwnd;
    for g in [1.25, 0.75, 1.0] {
        assert!(
            (0..c.time_ns.len()).any(|i| c.cc_state[i] == 3 && c.pacing_gain[i] == g),
            "gain {g} never sampled"
        );
    }
}

/// The same seed gives the same run, to the bit.
#[test]
fn bbr_is_deterministic() {
    let a = path(2, "bbr", 5);
    let b = path(2, "bbr", 5);
    assert_eq!(a.cwnd.cwnd_bytes, b.cwnd.cwnd_bytes);
    assert_eq!(a.cwnd.pacing_gain, b.cwnd.pacing_gain);
    assert_eq!(a.cwnd.cc_state, b.cwnd.cc_state);
    assert_eq!(
        summary(&a, "goodput_total_bps"),
        summary(&b, "goodput_total_bps")
    );
}

/// BBRv3 on the deep buffer keeps the queue small too, cycles through
/// ProbeBW's DOWN, CRUISE, REFILL and UP, and enters PROBE_RTT about every
/// 5 s (its ProbeRTTInterval, plus the episode).
#[test]
fn bbr3_on_a_deep_buffer() {
    let sim = path(2, "bbr3", 1);
    let q = summary(&sim, "queue_mean_packets");
    assert!(q <= BDP_PACKETS, "standing queue {q:.1} packets");
    let g = summary(&sim, "goodput_total_bps");
    assert!(g >= 0.9 * PAYLOAD_BPS, "goodput {g:.0} bit/s");
    for f in 0..2 {
        let e = probe_rtt_entries(&sim, f);
        assert!(e.len() >= 8, "flow {f}: PROBE_RTT at {e:?}");
        for w in e.windows(2) {
            let gap = w[1] - w[0];
            assert!((5.0..6.0).contains(&gap), "flow {f}: PROBE_RTT at {e:?}");
        }
        for state in 5..=8 {
            assert!(
                !state_entries(&sim, f, state).is_empty(),
                "flow {f}: ProbeBW phase {state} never sampled"
            );
        }
    }
}

/// On a buffer of 20 packets (an eighth of the BDP) BBR v1, which does
/// not respond to loss, loses thousands of packets; BBRv3 bounds its
/// flight at the loss it met while probing and cuts its short-term model
/// on loss, losing a twentieth of that, and still carries most of the
/// link.
#[test]
fn bbr3_responds_to_loss_where_bbr_does_not() {
    let v1 = path_with_buffer(2, "bbr", 1, 20);
    let v3 = path_with_buffer(2, "bbr3", 1, 20);
    let (d1, d3) = (summary(&v1, "drops_total"), summary(&v3, "drops_total"));
    assert!(d1 > 1000.0, "BBR v1 drops {d1}");
    assert!(d3 < d1 / 10.0, "BBRv3 drops {d3} against v1's {d1}");
    let g = summary(&v3, "goodput_total_bps");
    assert!(g >= 0.85 * PAYLOAD_BPS, "BBRv3 goodput {g:.0} bit/s");
}
