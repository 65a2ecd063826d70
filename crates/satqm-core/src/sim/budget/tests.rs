//! The estimate against measured memory, the refusal and its key, and the
//! summary without the drop log.

use super::{CONGESTION_ROW, CWND_ROW, DROP_ROW, SAMPLE_FIXED_ROW};
use crate::config::testing::{err, BASE};
use crate::config::Scenario;
use crate::probe::{CongestionLog, CwndTrace, DropLog, TimeSeries};
use crate::sim::{Host, Simulation};

fn estimate(text: &str) -> f64 {
    Simulation::estimate_memory(&Scenario::from_toml(text).unwrap(), Host::Rust).total()
}

/// Bytes of one row: the element sizes of a one-row table's columns.
fn row_bytes(cols: Vec<(&'static str, crate::probe::Column)>) -> u64 {
    use crate::probe::Column;
    cols.iter()
        .map(|(_, c)| match c {
            Column::U8(_) | Column::Bool(_) => 1,
            Column::U32(_) => 4,
            Column::U64(_) | Column::F64(_) => 8,
            Column::Text(_) => 16,
        })
        .sum()
}

#[test]
fn row_sizes_match_the_tables() {
    assert_eq!(row_bytes(TimeSeries::default().columns()), SAMPLE_FIXED_ROW);
    assert_eq!(row_bytes(DropLog::default().columns()), DROP_ROW);
    assert_eq!(
        row_bytes(CongestionLog::default().columns()),
        CONGESTION_ROW
    );
    assert_eq!(row_bytes(CwndTrace::default().columns()), CWND_ROW);
}

/// Peak resident memory measured with `/usr/bin/time -v
/// target/release/examples/run FILE` (kB), and the scenario.
const MEASURED: [(&str, f64); 2] = [
    (
        include_str!("../../../../../python/satqm/scenarios/avq2001/experiment1.toml"),
        19_832e3,
    ),
    (
        include_str!("../../../../../python/satqm/scenarios/pvq2003/fig21.toml"),
        24_248e3,
    ),
];

#[test]
fn the_estimate_is_within_a_small_factor_of_measured_memory() {
    for (text, rss) in MEASURED {
        let e = estimate(text);
        assert!(e > rss && e < 4.0 * rss, "estimate {e} vs measured {rss}");
    }
}

#[test]
fn the_default_limit_refuses_no_shipped_scenario() {
    for text in [
        include_str!("../../../../../python/satqm/scenarios/avq2001/experiment1.toml"),
        include_str!("../../../../../python/satqm/scenarios/avqred/chapter.toml"),
        include_str!("../../../../../python/satqm/scenarios/avqred/conference.toml"),
        include_str!("../../../../../python/satqm/scenarios/examples/dumbbell-droptail.toml"),
        include_str!("../../../../../python/satqm/scenarios/examples/dumbbell-hetero-rtt.toml"),
        include_str!("../../../../../python/satqm/scenarios/models/dumbbell.toml"),
        include_str!("../../../../../python/satqm/scenarios/pvq2003/fig21.toml"),
        include_str!("../../../../../python/satqm/scenarios/pvq2003/section4.toml"),
        include_str!("../../../../../python/satqm/scenarios/pvq2003/table1.toml"),
    ] {
        let s = Scenario::from_toml(text).unwrap();
        assert!(
            Simulation::check_memory(&s, Host::Rust).is_ok(),
            "{}",
            s.name
        );
    }
}

#[test]
fn huge_scenarios_are_refused_with_the_numbers() {
    let big = BASE
        .replace("pairs = 3", "pairs = 100000")
        .replace("buffer = 800", "buffer = 1000000")
        .replace("Mbps", "Gbps")
        .replace("\"10 s\"", "\"3600 s\"")
        .replace(
            "[[traffic]]",
            "[tcp]\nwindow_scaling = true\nreceive_buffer = \"64 MB\"\n[[traffic]]",
        );
    let s = Scenario::from_toml(&big).unwrap();
    let e = Simulation::check_memory(&s, Host::Rust)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("simulation: needs about "), "{e}");
    assert!(
        e.contains("the limit is 8.0 GB: raise simulation.max_memory (satqm run --max-memory)"),
        "{e}"
    );
    let web = BASE
        .replace("10 Mbps", "10 Gbps")
        .replace("\"10 s\"", "\"1000 s\"")
        .replace(
        "[[traffic]]\nkind = \"bulk\"",
        "[[traffic]]\nkind = \"web\"\nconnections = 1000000\nramp = { step = 1000000, interval = \"1 s\" }\npage_size = { min = \"10 kB\", max = \"100 kB\" }\nthink_time = \"1 s\"",
    );
    let s = Scenario::from_toml(&web).unwrap();
    let e = Simulation::check_memory(&s, Host::Rust)
        .unwrap_err()
        .to_string();
    assert!(e.contains("connections"), "{e}");
}

#[test]
fn the_limit_is_a_checked_key() {
    let with = |m: &str| {
        BASE.replace(
            "duration = \"10 s\"",
            &format!("duration = \"10 s\"\nmax_memory = {m}"),
        )
    };
    let e = estimate(BASE);
    let s = Scenario::from_toml(&with(&format!("\"{} B\"", (e * 0.9) as u64))).unwrap();
    assert!(Simulation::check_memory(&s, Host::Rust).is_err());
    let s = Scenario::from_toml(&with(&format!("\"{} B\"", (e * 1.1) as u64))).unwrap();
    assert!(Simulation::check_memory(&s, Host::Rust).is_ok());
    assert_eq!(err(&with("\"16 GB\"")), "ok");
    assert_eq!(err(&with("0")), "simulation.max_memory: must be > 0");
    assert!(err(&with("\"16 ms\"")).starts_with("simulation.max_memory: "));
    let log_drops = |v: &str| {
        err(&BASE.replace(
            "duration = \"10 s\"",
            &format!("duration = \"10 s\"\nlog_drops = {v}"),
        ))
    };
    assert_eq!(
        log_drops("-1"),
        "simulation.log_drops: must be true, false or a number of rows (>= 0), got -1"
    );
    assert!(log_drops("\"yes\"").starts_with("simulation.log_drops: "));
    assert_eq!(log_drops("1000"), "ok");
}

#[test]
fn without_the_drop_log_the_summary_is_the_same() {
    let text = BASE.replace(
        "duration = \"10 s\"",
        "duration = \"10 s\"\nwarmup = \"5 s\"",
    );
    let run = |t: &str| {
        let mut sim = Simulation::new(&Scenario::from_toml(t).unwrap()).unwrap();
        sim.run().unwrap();
        sim
    };
    let on = run(&text);
    let off = run(&text.replace("warmup = ", "log_drops = false\nwarmup = "));
    assert!(on.summary().drops_total > 0);
    assert!(on.summary().drops_total <= on.drops.time_ns.len() as u64);
    // Compared as text: NaN figures are equal there.
    assert_eq!(
        format!("{:?}", on.summary()),
        format!("{:?}", off.summary())
    );
    assert!(off.drops.time_ns.is_empty());
    assert_eq!(on.summary().drop_log_full_s, None);
    assert_eq!(off.summary().drop_log_full_s, None);

    // A log of at most `half` rows: those rows, the same counts, and the
    // time the log stopped.
    let half = on.drops.time_ns.len() / 2;
    let part = run(&text.replace("warmup = ", &format!("log_drops = {half}\nwarmup = ")));
    assert_eq!(part.drops.time_ns, on.drops.time_ns[..half]);
    assert_eq!(part.drops.flow, on.drops.flow[..half]);
    let full_at = on.drops.time_ns[half - 1] as f64 / 1e9;
    assert_eq!(part.summary().drop_log_full_s, Some(full_at));
    let mut same = part.summary();
    same.drop_log_full_s = None;
    assert_eq!(format!("{:?}", on.summary()), format!("{same:?}"));
    assert!(part
        .summary()
        .entries()
        .iter()
        .any(|&(k, _)| k == "drop_log_full_s"));
    assert!(!on
        .summary()
        .entries()
        .iter()
        .any(|&(k, _)| k == "drop_log_full_s"));
    // `true` keeps every row, as the default does at this size.
    let all = run(&text.replace("warmup = ", "log_drops = true\nwarmup = "));
    assert_eq!(all.drops.time_ns, on.drops.time_ns);
}

#[test]
fn a_capture_counts_and_its_window_bounds_it() {
    let at = |extra: &str| {
        let text = BASE
            .replace("10 Mbps", "10 Gbps")
            .replace("\"10 s\"", &format!("\"60 s\"\n{extra}"));
        Scenario::from_toml(&text).unwrap()
    };
    let none = Simulation::estimate_memory(&at(""), Host::Rust).total();
    let whole = at("capture = [\"bottleneck\"]");
    let part = &Simulation::estimate_memory(&whole, Host::Rust).parts[6];
    assert_eq!(part.name, "packet captures");
    // 10 Gbit/s of 1,500-byte packets both ways for 60 s, 128 bytes each.
    let packets = 2.0 * 10e9 / (8.0 * 1500.0) * 60.0;
    assert!((part.how.count / packets - 1.0).abs() < 0.05, "{part:?}");
    assert_eq!(part.how.each, 128.0);
    let e = Simulation::check_memory(&whole, Host::Rust)
        .unwrap_err()
        .to_string();
    assert!(e.contains("packet captures"), "{e}");
    assert!(
        e.contains("shrink simulation.capture_until or the captured links"),
        "{e}"
    );
    // Arrivals and departures: twice as many.
    let both = at("capture = [\"bottleneck\"]\ncapture_side = \"both\"");
    let twice = &Simulation::estimate_memory(&both, Host::Rust).parts[6];
    assert_eq!(twice.how.count, 2.0 * part.how.count);
    let arrivals = at("capture = [\"bottleneck\"]\ncapture_side = \"in\"");
    let once = &Simulation::estimate_memory(&arrivals, Host::Rust).parts[6];
    assert_eq!(once.how.count, part.how.count);
    let short = at("capture = [\"bottleneck\"]\ncapture_until = \"1 s\"");
    assert!(Simulation::check_memory(&short, Host::Rust).is_ok());
    let est = Simulation::estimate_memory(&short, Host::Rust).total();
    assert!(est > none && est < none + 1e9, "{est} vs {none}");
}
