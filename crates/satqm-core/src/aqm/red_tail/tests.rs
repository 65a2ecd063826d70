use super::*;
use crate::aqm::params::ParamTable;
use crate::error::ConfigError;
use std::collections::BTreeMap;

fn parse(extra: &str) -> Result<RedTailParams, ConfigError> {
    let base = "min_th1 = \"2 kB\"\nmax_th1 = \"30 kB\"\nmin_th2 = \"20 kB\"\nmax_th2 = \"80 kB\"";
    let mut map: BTreeMap<String, toml::Value> = toml::from_str(base).unwrap();
    // `extra` adds keys or replaces the base's.
    map.extend(toml::from_str::<BTreeMap<String, toml::Value>>(extra).unwrap());
    let mut t = ParamTable::new("aqm[0]", map);
    let p = RedTailParams::parse(&mut t)?;
    t.finish("red_tail")?;
    Ok(p)
}

fn err(extra: &str) -> String {
    parse(extra).unwrap_err().to_string()
}

#[test]
fn table_ii_parameters() {
    let p = parse("").unwrap();
    assert_eq!((p.min_th1, p.max_th1), (2000.0, 30_000.0));
    assert_eq!((p.ared.red.min_th, p.ared.red.max_th), (20.0, 80.0));
    assert_eq!((p.ared.alpha, p.ared.beta), (0.01, 0.9));
    assert!(p.ared.red.gentle);
    assert_eq!(p.thresholds, Thresholds::Fixed);
    let s = p.split(3_000_000, "aqm[0]").unwrap();
    assert_eq!(s.c1_max_bps, 3e6);
    assert!((s.c1_min_bps - 2e5).abs() < 1e-6);
    assert_eq!(s.update_interval, None);
}

#[test]
fn bad_parameters_name_their_key() {
    assert_eq!(err("bogus = 1").split(':').next(), Some("aqm[0].bogus"));
    assert_eq!(err("c1_max = \"-1 Mbps\""), "aqm[0].c1_max: must be >= 0");
    assert!(err("c1_min = nan").starts_with("aqm[0].c1_min: must be a finite"));
    assert_eq!(
        err("c1_min = \"2 Mbps\"\nc1_max = \"1 Mbps\""),
        "aqm[0].c1_min: must be at most c1_max"
    );
    // c1_min above the link rate (the default c1_max).
    let e = parse("c1_min = \"2 Mbps\"")
        .unwrap()
        .split(1_000_000, "aqm[0]")
        .map(|_| ())
        .unwrap_err();
    assert!(e.to_string().starts_with("aqm[0].c1_min"), "{e}");
    let p = parse("c1_max = \"5 Mbps\"").unwrap();
    assert!(p
        .split(3_000_000, "aqm[0]")
        .unwrap_err()
        .to_string()
        .starts_with("aqm[0].c1_max: must be at most the link rate"));
    let swapped =
        "min_th1 = \"40 kB\"\nmax_th1 = \"30 kB\"\nmin_th2 = \"20 kB\"\nmax_th2 = \"80 kB\"";
    let map: BTreeMap<String, toml::Value> = toml::from_str(swapped).unwrap();
    let e = RedTailParams::parse(&mut ParamTable::new("aqm[0]", map)).unwrap_err();
    assert_eq!(e.to_string(), "aqm[0].min_th1: must be at most max_th1");
    let swapped = "min_th1 = \"1 B\"\nmax_th1 = \"30 B\"\nmin_th2 = \"90 kB\"\nmax_th2 = \"80 kB\"";
    let map: BTreeMap<String, toml::Value> = toml::from_str(swapped).unwrap();
    let e = RedTailParams::parse(&mut ParamTable::new("aqm[0]", map)).unwrap_err();
    assert_eq!(e.to_string(), "aqm[0].min_th2: must be less than max_th2");
    assert!(err("min_th2 = nan").starts_with("aqm[0].min_th2: must be a finite"));
    assert_eq!(
        err("p_low = 0.01"),
        "aqm[0].p_low: is used only with thresholds = \"dynamic\""
    );
    assert_eq!(
        err("thresholds = \"dynamic\"\np_low = 0.02\np_high = 0.01"),
        "aqm[0].p_low: must be less than p_high"
    );
    assert!(err("thresholds = \"sliding\"").starts_with("aqm[0].thresholds: unknown"));
    assert!(err("droptail_kinds = [\"mice\"]")
        .starts_with("aqm[0].droptail_kinds[0]: unknown traffic kind"));
    assert_eq!(
        err("classifier = \"age\"\nage_packets = 50"),
        "aqm[0].age_timeout: is required"
    );
    assert_eq!(
        err("update_interval = \"-1 s\""),
        "aqm[0].update_interval: must be > 0"
    );
}

fn busy(q: u32) -> QueueView {
    QueueView {
        q_packets: q,
        q_bytes: q as u64 * 1000,
        idle_since: None,
        departed_bytes: 0,
        rate_bps: 8_000_000,
    }
}

const PKT: PacketMeta = PacketMeta {
    size: 1000,
    ecn_capable: false,
    ect1: false,
};

#[test]
fn kind_classifier() {
    let p = parse("").unwrap();
    let mut rt = RedTail::new(&p, 8_000_000, BufferLimit::Packets(160));
    let t = SimTime::ZERO;
    assert_eq!(rt.classify(t, FlowId(3), FlowKind::Bulk), VqClass::Red);
    assert_eq!(
        rt.classify(t, FlowId(0), FlowKind::WebMice),
        VqClass::DropTail
    );
    assert_eq!(rt.classify(t, FlowId(1), FlowKind::Cbr), VqClass::DropTail);
    assert_eq!(
        rt.classify(t, FlowId(2), FlowKind::Short),
        VqClass::DropTail
    );
    assert_eq!(rt.classify(t, FlowId(3), FlowKind::Bulk), VqClass::Red);
    let p = parse("droptail_kinds = [\"bulk\"]").unwrap();
    let mut rt = RedTail::new(&p, 8_000_000, BufferLimit::Packets(160));
    assert_eq!(rt.classify(t, FlowId(0), FlowKind::Bulk), VqClass::DropTail);
    assert_eq!(rt.classify(t, FlowId(1), FlowKind::Web), VqClass::Red);
}

#[test]
fn age_classifier_moves_long_connections_to_red() {
    let p = parse("classifier = \"age\"\nage_packets = 3\nage_timeout = \"1 s\"").unwrap();
    let mut rt = RedTail::new(&p, 8_000_000, BufferLimit::Packets(160));
    let at = |ms| SimTime::from_ms(ms);
    let f = FlowId(7);
    let seen: Vec<_> = (0..5)
        .map(|i| rt.classify(at(i * 100), f, FlowKind::Bulk))
        .collect();
    use VqClass::*;
    assert_eq!(seen, vec![DropTail, DropTail, DropTail, Red, Red]);
    // Another connection starts its own count.
    assert_eq!(rt.classify(at(500), FlowId(2), FlowKind::Bulk), DropTail);
    // Silent for more than the timeout: a new connection.
    assert_eq!(rt.classify(at(1401), f, FlowKind::Bulk), DropTail);
    assert_eq!(rt.classify(at(1402), f, FlowKind::Bulk), DropTail);
}

#[test]
fn dynamic_thresholds_follow_the_drop_probability() {
    let p = parse(
        "thresholds = \"dynamic\"\np_low = 0.01\np_high = 0.02\ngamma = 0.05\nw_q = 1.0\nw_p = 1.0",
    )
    .unwrap();
    let mut rt = RedTail::new(&p, 8_000_000, BufferLimit::Packets(160));
    let t = SimTime::ZERO;
    // avg = 50 packets: p_b = max_p (50 - 20)/60 = 0.05 > P_U.
    rt.red_arrival(t, PKT, &busy(50), 0.99);
    assert!(rt.pd_avg() > 0.02);
    rt.on_timer(t, &busy(50));
    let (lo, hi) = rt.thresholds();
    assert!(
        (lo - 21.0).abs() < 1e-9 && (hi - 81.0).abs() < 1e-9,
        "{lo} {hi}"
    );
    // Below minth: p = 0 < P_L, thresholds fall by 5 %.
    rt.red_arrival(t, PKT, &busy(5), 0.99);
    assert_eq!(rt.pd_avg(), 0.0);
    rt.on_timer(t, &busy(5));
    let (lo, hi) = rt.thresholds();
    assert!((lo - 19.95).abs() < 1e-9 && (hi - 79.95).abs() < 1e-9);
    // In the band: unchanged.
    rt.pd_avg = 0.015;
    rt.on_timer(t, &busy(5));
    assert_eq!(rt.thresholds(), (lo, hi));
    // Never past the buffer: maxth2 <= 160 packets.
    rt.pd_avg = 0.5;
    for _ in 0..200 {
        rt.on_timer(t, &busy(5));
        rt.pd_avg = 0.5;
    }
    let (lo, hi) = rt.thresholds();
    assert!((hi - 160.0).abs() < 1e-9 && (hi - lo - 60.0).abs() < 1e-9);
    // Fixed thresholds never move.
    let mut fixed = RedTail::new(&parse("").unwrap(), 8_000_000, BufferLimit::Packets(160));
    fixed.pd_avg = 0.5;
    fixed.on_timer(t, &busy(5));
    assert_eq!(fixed.thresholds(), (20.0, 80.0));
}
