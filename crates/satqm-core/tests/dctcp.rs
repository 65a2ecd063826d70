//! DCTCP (RFC 8257) against Reno with RFC 3168 ECN, on the dumbbell through
//! a step marker at K packets (RED with min_th = K - 1, max_th = K, w_q = 1,
//! max_p = 1, marking: every arrival that finds K or more packets queued is
//! CE-marked), as the DCTCP paper's and ns-3's experiments use.

mod common;

use common::*;
use satqm_core::Simulation;

const K: u32 = 20;

fn scenario(tcp: &str, seed: u32) -> String {
    let text = dumbbell(
        "60 s",
        10,
        "rate = \"10 Mbps\"\ndelay = \"10 ms\"\nbuffer = 200",
        "rate = \"100 Mbps\"\ndelay = { min = \"1 ms\", max = \"5 ms\" }",
        &format!("recovery = \"sack\"\nmin_rto = \"200 ms\"\n{tcp}"),
        &format!(
            "[[traffic]]\nkind = \"bulk\"\nstart = {{ uniform = [\"0 s\", \"1 s\"] }}\n\
             [[aqm]]\nkind = \"red\"\nmin_th = {}\nmax_th = {K}\nmax_p = 1\nw_q = 1\nmode = \"mark\"",
            K - 1
        ),
    );
    text.replace(
        "[simulation]",
        &format!("[simulation]\nwarmup = \"10 s\"\nseed = {seed}\nsample_interval = \"10 ms\""),
    )
}

/// Bottleneck queue samples (packets) and utilization after the warm-up.
fn queue_and_utilization(sim: &Simulation) -> (Vec<f64>, f64) {
    let ts = &sim.timeseries;
    let rows: Vec<usize> = (0..ts.time_ns.len())
        .filter(|&i| ts.link[i] == sim.bottleneck.0 && ts.time_ns[i] > 10_000_000_000)
        .collect();
    let mut q: Vec<f64> = rows.iter().map(|&i| ts.queue_packets[i] as f64).collect();
    q.sort_by(f64::total_cmp);
    let util = rows.iter().map(|&i| ts.utilization[i]).sum::<f64>() / rows.len() as f64;
    (q, util)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn quantile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn std(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
}

#[test]
fn dctcp_holds_the_queue_near_k_where_reno_oscillates() {
    let d = run(&scenario("cc = \"dctcp\"", 1));
    let r = run(&scenario("ecn = true", 1));
    let (dq, du) = queue_and_utilization(&d);
    let (rq, ru) = queue_and_utilization(&r);
    let report = format!(
        "DCTCP: queue mean {:.1} p1 {} p99 {} std {:.1}, utilization {du:.4}, drops {}, marks {}\n\
         Reno:  queue mean {:.1} p1 {} p99 {} std {:.1}, utilization {ru:.4}, drops {}, marks {}",
        mean(&dq),
        quantile(&dq, 0.01),
        quantile(&dq, 0.99),
        std(&dq),
        summary(&d, "drops_total"),
        summary(&d, "marks_total"),
        mean(&rq),
        quantile(&rq, 0.01),
        quantile(&rq, 0.99),
        std(&rq),
        summary(&r, "drops_total"),
        summary(&r, "marks_total"),
    );
    eprintln!("{report}");
    // DCTCP: the queue sits near K, the link full, nothing dropped.
    assert!(
        (mean(&dq) - K as f64).abs() < 5.0,
        "DCTCP's mean queue near K\n{report}"
    );
    assert!(quantile(&dq, 0.99) < 2.0 * K as f64, "{report}");
    assert!(du > 0.99, "{report}");
    assert_eq!(summary(&d, "drops_total"), 0.0, "{report}");
    // Reno halving at each mark: the queue swings wider and empties, the
    // link goes idle.
    assert!(std(&rq) > 1.5 * std(&dq), "{report}");
    assert!(quantile(&rq, 0.01) < quantile(&dq, 0.01), "{report}");
    assert!(ru < du - 0.01, "{report}");
}

/// AccECN's feedback carries the same marks: DCTCP over it holds the queue
/// as with its own echo.
#[test]
fn dctcp_over_accecn_and_ect1_holds_the_queue_too() {
    let a = run(&scenario(
        "cc = \"dctcp\"\necn = \"accecn\"\necn_codepoint = \"ect1\"",
        2,
    ));
    let (q, u) = queue_and_utilization(&a);
    let report = format!(
        "DCTCP/AccECN: queue mean {:.1} p99 {}, utilization {u:.4}, drops {}",
        mean(&q),
        quantile(&q, 0.99),
        summary(&a, "drops_total")
    );
    eprintln!("{report}");
    assert!((mean(&q) - K as f64).abs() < 5.0, "{report}");
    assert!(u > 0.99, "{report}");
    assert_eq!(summary(&a, "drops_total"), 0.0, "{report}");
}

/// TCP Prague (AccECN, ECT(1), growth on unmarked segments through its
/// reductions; its pacing is not modelled) holds the queue as DCTCP does.
#[test]
fn prague_holds_the_queue_near_k() {
    let p = run(&scenario("cc = \"prague\"", 1));
    let (q, u) = queue_and_utilization(&p);
    let report = format!(
        "Prague: queue mean {:.1} p1 {} p99 {} std {:.1}, utilization {u:.4}, drops {}, marks {}",
        mean(&q),
        quantile(&q, 0.01),
        quantile(&q, 0.99),
        std(&q),
        summary(&p, "drops_total"),
        summary(&p, "marks_total"),
    );
    eprintln!("{report}");
    assert!((mean(&q) - K as f64).abs() < 5.0, "{report}");
    assert!(quantile(&q, 0.99) < 2.0 * K as f64, "{report}");
    assert!(u > 0.99, "{report}");
    assert_eq!(summary(&p, "drops_total"), 0.0, "{report}");
}

#[test]
fn same_scenario_and_seed_same_results() {
    for tcp in [
        "cc = \"dctcp\"",
        "cc = \"dctcp\"\necn = \"accecn\"",
        "cc = \"prague\"",
        "ecn = \"dctcp\"\ncc = { kind = \"bbr3\", ecn_max_rtt = \"0 s\" }",
    ] {
        let a = run(&scenario(tcp, 3));
        let b = run(&scenario(tcp, 3));
        assert_eq!(a.timeseries.queue_packets, b.timeseries.queue_packets);
        assert_eq!(a.summary().entries().len(), b.summary().entries().len());
        for ((k, x), (_, y)) in a.summary().entries().into_iter().zip(b.summary().entries()) {
            assert_eq!(format!("{x:?}"), format!("{y:?}"), "{k}");
        }
    }
}

/// BBRv3 with ECN as Google's v3 answers it (`ecn_max_rtt = "0 s"`: marks
/// heeded at any RTT, as its L4S test scripts set it): through the step
/// marker the marks bound its volume, and its queue is half of what it
/// keeps when it ignores them, as it does with the default 5 ms bound on
/// this path's 24–40 ms round trips (both send ECN-capable segments, so
/// neither loses packets to the marker).
#[test]
fn bbr3_heeds_marks_below_its_rtt_bound() {
    let cc = |extra: &str| format!("ecn = \"dctcp\"\ncc = {{ kind = \"bbr3\"{extra} }}");
    let e = run(&scenario(&cc(", ecn_max_rtt = \"0 s\""), 1));
    let far = run(&scenario(&cc(""), 1));
    let (eq, eu) = queue_and_utilization(&e);
    let (fq, fu) = queue_and_utilization(&far);
    let report = format!(
        "BBRv3 heeding marks: queue mean {:.1} p99 {}, utilization {eu:.4}, drops {}, marks {}\n\
         BBRv3 ignoring them: queue mean {:.1} p99 {}, utilization {fu:.4}, drops {}, marks {}",
        mean(&eq),
        quantile(&eq, 0.99),
        summary(&e, "drops_total"),
        summary(&e, "marks_total"),
        mean(&fq),
        quantile(&fq, 0.99),
        summary(&far, "drops_total"),
        summary(&far, "marks_total"),
    );
    eprintln!("{report}");
    assert!(mean(&eq) < 0.75 * mean(&fq), "{report}");
    assert!(quantile(&eq, 0.99) < quantile(&fq, 0.99), "{report}");
    assert!(eu > 0.95, "{report}");
    assert!(
        summary(&e, "drops_total") < 0.01 * summary(&e, "marks_total"),
        "{report}"
    );
}
