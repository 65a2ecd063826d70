//! RED+Tail: the parallel virtual queue structure of Jou, Tan and Baras, "A
//! Parallel Virtual Queue Structure for Active Queue Management" (CSHCN TR
//! 2003-18). Not a single AQM but a queue structure: a classifier, a
//! drop-tail virtual queue and an Adaptive RED virtual queue sharing one
//! physical buffer, and a bandwidth split between them.
//!
//! This file holds the parameters of the whole structure, the classifier,
//! and the Adaptive RED of virtual queue 2 with the dynamic thresholds of
//! Section V. Storage, the split and the scheduler are in
//! `queue::parallel`; the port glue in `sim.rs` asks for the class of each
//! arriving packet, and for a RED verdict on packets of the RED class.
//!
//! Dynamic thresholds (Section V), every `interval` (after Adaptive RED's
//! own `max_p` update), with `D = maxth2 - minth2` kept constant:
//!
//! ```text
//! P_d_avg > P_U:  minth2 <- minth2 (1 + gamma),  maxth2 <- minth2 + D
//! P_d_avg < P_L:  minth2 <- minth2 (1 - gamma),  maxth2 <- minth2 + D
//! ```
//!
//! `P_d_avg` is an EWMA, over the arrivals to the RED queue, of the
//! probability RED applied to each (`p_a`: 0 below `minth2`, 1 in the
//! forced region): its expectation is RED's drop rate. `maxth2` never
//! exceeds the physical buffer.

use super::ared::{Ared, AredParams};
use super::params::ParamTable;
use super::red::RedParams;
use super::{AqmProbe, PacketMeta, QueueView, Verdict};
use crate::error::ConfigError;
use crate::ids::{FlowId, FlowKind};
use crate::queue::BufferLimit;
use crate::queue::{SplitParams, VqClass};
use crate::time::SimTime;

/// How packets are sent to the two virtual queues.
#[derive(Clone, Debug, PartialEq)]
pub enum Classifier {
    /// By the kind of traffic that made the flow: kinds in the list go to
    /// the drop-tail queue, all others to the RED queue.
    Kind { droptail_kinds: Vec<FlowKind> },
    /// The paper's detector (Section III): a connection's first `packets`
    /// packets go to the drop-tail queue, the rest to the RED queue; its
    /// count restarts after `timeout` without packets.
    Age { packets: u64, timeout: SimTime },
}

/// The RED queue's thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Thresholds {
    /// Table II: fixed `minth2`, `maxth2`.
    Fixed,
    /// Section V: move both to keep `P_d_avg` in `(p_low, p_high)`.
    Dynamic { p_low: f64, p_high: f64, gamma: f64 },
}

#[derive(Clone, Debug, PartialEq)]
pub struct RedTailParams {
    /// `minth1`, `maxth1` (bytes).
    pub min_th1: f64,
    pub max_th1: f64,
    /// `C1min`, `C1max` (bit/s); defaults resolved against the link.
    pub c1_min_bps: Option<f64>,
    pub c1_max_bps: Option<f64>,
    /// `S`; `None`: the split follows `q1` at every change.
    pub update_interval: Option<SimTime>,
    /// Adaptive RED of the RED queue, gentle; thresholds in packets of
    /// `mean_packet_size` (`minth2`, `maxth2` given in bytes).
    pub ared: AredParams,
    pub thresholds: Thresholds,
    /// EWMA weight of `P_d_avg` per arrival; `None`: RED's `w_q`.
    pub w_p: Option<f64>,
    pub classifier: Classifier,
}

impl RedTailParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<RedTailParams, ConfigError> {
        let min_th1 = t.required_bytes("min_th1")?;
        let max_th1 = t.required_bytes("max_th1")?;
        if min_th1 > max_th1 {
            return Err(ConfigError::new(
                t.key_path("min_th1"),
                "must be at most max_th1",
            ));
        }
        let c1_min_bps = t.opt_rate_or_zero("c1_min")?;
        let c1_max_bps = t.opt_rate_or_zero("c1_max")?;
        if let (Some(lo), Some(hi)) = (c1_min_bps, c1_max_bps) {
            if lo > hi {
                return Err(ConfigError::new(
                    t.key_path("c1_min"),
                    "must be at most c1_max",
                ));
            }
        }
        let update_interval = t.opt_time("update_interval")?;

        let ared = red_queue(t)?;
        let thresholds = Thresholds::parse(t)?;
        let w_p = t.opt_f64("w_p")?;
        if let Some(w) = w_p {
            t.check_range("w_p", w, 0.0, true, 1.0)?;
        }

        let classifier = Classifier::parse(t)?;

        Ok(RedTailParams {
            min_th1,
            max_th1,
            c1_min_bps,
            c1_max_bps,
            update_interval,
            ared,
            thresholds,
            w_p,
            classifier,
        })
    }

    /// The split for a link of `link_bps`: `C1min` defaults to
    /// `C minth1/maxth1` (where the linear part of the rule starts, so the
    /// rate is continuous at `minth1`), `C1max` to `C` (Section VI-A's
    /// analysis). `path` prefixes error key paths (`aqm[0]`).
    pub fn split(&self, link_bps: u64, path: &str) -> Result<SplitParams, ConfigError> {
        let c = link_bps as f64;
        let c1_max = self.c1_max_bps.unwrap_or(c);
        if c1_max > c {
            return Err(ConfigError::new(
                format!("{path}.c1_max"),
                format!("must be at most the link rate ({link_bps} bit/s)"),
            ));
        }
        let c1_min = self
            .c1_min_bps
            .unwrap_or(c * self.min_th1 / self.max_th1)
            .min(c1_max);
        if let Some(lo) = self.c1_min_bps {
            if lo > c1_max {
                return Err(ConfigError::new(
                    format!("{path}.c1_min"),
                    format!("must be at most c1_max ({c1_max} bit/s)"),
                ));
            }
        }
        Ok(SplitParams {
            min_th1: self.min_th1,
            max_th1: self.max_th1,
            c1_min_bps: c1_min,
            c1_max_bps: c1_max,
            update_interval: self.update_interval,
        })
    }
}

/// The RED queue's parameters (`min_th2`, `max_th2` and Adaptive RED's
/// keys), in packets of `mean_packet_size`.
fn red_queue(t: &mut ParamTable) -> Result<AredParams, ConfigError> {
    let mean_packet_size = t.f64_in("mean_packet_size", 1000.0, 0.0, true, 1e6)?;
    let min_th2 = t.required_bytes("min_th2")?;
    let max_th2 = t.required_bytes("max_th2")?;
    if min_th2 >= max_th2 {
        return Err(ConfigError::new(
            t.key_path("min_th2"),
            "must be less than max_th2",
        ));
    }
    let w_q = if t.has("w_q") {
        t.f64_in("w_q", 0.002, 0.0, true, 1.0)?
    } else {
        f64::NAN
    };
    let red = RedParams {
        min_th: min_th2 / mean_packet_size,
        max_th: max_th2 / mean_packet_size,
        max_p: t.f64_in("max_p", 0.1, 0.0, true, 1.0)?,
        w_q,
        gentle: true,
        byte_mode: false,
        mean_packet_size,
    };
    Ok(AredParams {
        red,
        alpha: t.f64_in("alpha", 0.01, 0.0, true, 1.0)?,
        beta: t.f64_in("beta", 0.9, 0.0, true, 1.0)?,
        interval: t.time("interval", SimTime::from_ms(500))?,
    })
}
impl Thresholds {
    fn parse(t: &mut ParamTable) -> Result<Thresholds, ConfigError> {
        let dynamic_keys = ["p_low", "p_high", "gamma"];
        Ok(match t.opt_str("thresholds")?.as_deref() {
            None | Some("fixed") => {
                if let Some(k) = dynamic_keys.iter().find(|k| t.has(k)) {
                    return Err(ConfigError::new(
                        t.key_path(k),
                        "is used only with thresholds = \"dynamic\"",
                    ));
                }
                Thresholds::Fixed
            }
            Some("dynamic") => {
                let p_low = t.f64_in("p_low", 0.005, 0.0, false, 1.0)?;
                let p_high = t.f64_in("p_high", 0.01, 0.0, false, 1.0)?;
                if p_low >= p_high {
                    return Err(ConfigError::new(
                        t.key_path("p_low"),
                        "must be less than p_high",
                    ));
                }
                let gamma = t.f64_in("gamma", 0.05, 0.0, true, 1.0)?;
                if gamma >= 1.0 {
                    return Err(ConfigError::new(t.key_path("gamma"), "must be below 1"));
                }
                Thresholds::Dynamic {
                    p_low,
                    p_high,
                    gamma,
                }
            }
            Some(other) => {
                return Err(ConfigError::new(
                    t.key_path("thresholds"),
                    format!("unknown thresholds {other:?} (known: fixed, dynamic)"),
                ))
            }
        })
    }
}

impl Classifier {
    fn parse(t: &mut ParamTable) -> Result<Classifier, ConfigError> {
        Ok(match t.opt_str("classifier")?.as_deref() {
            None | Some("kind") => {
                for k in ["age_packets", "age_timeout"] {
                    if t.has(k) {
                        return Err(ConfigError::new(
                            t.key_path(k),
                            "is used only with classifier = \"age\"",
                        ));
                    }
                }
                let droptail_kinds = match t.opt_str_list("droptail_kinds")? {
                    None => vec![
                        FlowKind::Cbr,
                        FlowKind::Short,
                        FlowKind::Web,
                        FlowKind::WebMice,
                    ],
                    Some(names) => droptail_kinds(&names, &t.key_path("droptail_kinds"))?,
                };
                Classifier::Kind { droptail_kinds }
            }
            Some("age") => {
                if t.has("droptail_kinds") {
                    return Err(ConfigError::new(
                        t.key_path("droptail_kinds"),
                        "is used only with classifier = \"kind\"",
                    ));
                }
                let packets = t.required_f64("age_packets", 1.0, false, 1e12)?;
                if packets.fract() != 0.0 {
                    return Err(ConfigError::new(
                        t.key_path("age_packets"),
                        "must be a whole number of packets",
                    ));
                }
                let timeout = t
                    .opt_time("age_timeout")?
                    .ok_or_else(|| ConfigError::new(t.key_path("age_timeout"), "is required"))?;
                Classifier::Age {
                    packets: packets as u64,
                    timeout,
                }
            }
            Some(other) => {
                return Err(ConfigError::new(
                    t.key_path("classifier"),
                    format!("unknown classifier {other:?} (known: kind, age)"),
                ))
            }
        })
    }
}

/// The traffic kinds named in `droptail_kinds` (at `path`).
fn droptail_kinds(names: &[String], path: &str) -> Result<Vec<FlowKind>, ConfigError> {
    names
        .iter()
        .enumerate()
        .map(|(i, k)| {
            FlowKind::traffic(k).ok_or_else(|| {
                let known: Vec<&str> = FlowKind::TRAFFIC.iter().map(|k| k.name()).collect();
                ConfigError::new(
                    format!("{path}[{i}]"),
                    format!("unknown traffic kind {k:?} (known: {})", known.join(", ")),
                )
            })
        })
        .collect()
}

/// Per-flow classifier state, indexed by flow id (grown as flows appear).
#[derive(Clone, Debug)]
enum ClassifierState {
    /// Cached class per flow: 0 unknown, 1 drop-tail, 2 RED.
    Kind {
        droptail_kinds: Vec<FlowKind>,
        cache: Vec<u8>,
    },
    Age {
        packets: u64,
        timeout: SimTime,
        count: Vec<u64>,
        last: Vec<SimTime>,
    },
}

#[derive(Clone, Debug)]
pub struct RedTail {
    ared: Ared,
    thresholds: Thresholds,
    /// `D = maxth2 - minth2`, packets.
    gap: f64,
    /// Largest `maxth2`: the physical buffer, in packets.
    cap: f64,
    w_p: f64,
    pd_avg: f64,
    classifier: ClassifierState,
}

impl RedTail {
    /// For a link of `rate_bps` whose port buffer is `limit`.
    pub fn new(p: &RedTailParams, rate_bps: u64, limit: BufferLimit) -> RedTail {
        let ared = Ared::new(&p.ared, rate_bps);
        let red = &ared.red().p;
        let cap = match limit {
            BufferLimit::Packets(n) => n as f64,
            BufferLimit::Bytes(b) => b as f64 / red.mean_packet_size,
        };
        let gap = red.max_th - red.min_th;
        let w_p = p.w_p.unwrap_or(red.w_q);
        let classifier = match &p.classifier {
            Classifier::Kind { droptail_kinds } => ClassifierState::Kind {
                droptail_kinds: droptail_kinds.clone(),
                cache: Vec::new(),
            },
            Classifier::Age { packets, timeout } => ClassifierState::Age {
                packets: *packets,
                timeout: *timeout,
                count: Vec::new(),
                last: Vec::new(),
            },
        };
        RedTail {
            ared,
            thresholds: p.thresholds,
            gap,
            cap,
            w_p,
            pd_avg: 0.0,
            classifier,
        }
    }

    pub fn interval(&self) -> SimTime {
        self.ared.interval()
    }

    /// The virtual queue of a packet of `flow`, made by traffic of `kind`,
    /// arriving at `now`.
    pub fn classify(&mut self, now: SimTime, flow: FlowId, kind: FlowKind) -> VqClass {
        let f = flow.idx();
        match &mut self.classifier {
            ClassifierState::Kind {
                droptail_kinds,
                cache,
            } => {
                if f >= cache.len() {
                    cache.resize(f + 1, 0);
                }
                if cache[f] == 0 {
                    cache[f] = if droptail_kinds.contains(&kind) { 1 } else { 2 };
                }
                if cache[f] == 1 {
                    VqClass::DropTail
                } else {
                    VqClass::Red
                }
            }
            ClassifierState::Age {
                packets,
                timeout,
                count,
                last,
            } => {
                if f >= count.len() {
                    count.resize(f + 1, 0);
                    last.resize(f + 1, SimTime::ZERO);
                }
                if count[f] > 0 && now.saturating_sub(last[f]) > *timeout {
                    count[f] = 0;
                }
                count[f] += 1;
                last[f] = now;
                if count[f] > *packets {
                    VqClass::Red
                } else {
                    VqClass::DropTail
                }
            }
        }
    }

    /// Adaptive RED's verdict on a packet joining the RED virtual queue,
    /// whose view (before the packet joins) is `q`.
    pub fn red_arrival(&mut self, now: SimTime, pkt: PacketMeta, q: &QueueView, u: f64) -> Verdict {
        let v = self.ared.on_arrival(now, pkt, q, u);
        let p_a = self.ared.probe().prob;
        self.pd_avg = (1.0 - self.w_p) * self.pd_avg + self.w_p * p_a;
        v
    }

    /// Every `interval`: Adaptive RED's `max_p`, then the thresholds.
    pub fn on_timer(&mut self, now: SimTime, q: &QueueView) {
        self.ared.on_timer(now, q);
        let Thresholds::Dynamic {
            p_low,
            p_high,
            gamma,
        } = self.thresholds
        else {
            return;
        };
        let p = &mut self.ared.red_mut().p;
        let mut min_th = p.min_th;
        if self.pd_avg > p_high {
            min_th *= 1.0 + gamma;
            let highest = (self.cap - self.gap).max(p.min_th);
            min_th = min_th.min(highest);
        } else if self.pd_avg < p_low {
            min_th *= 1.0 - gamma;
        }
        p.min_th = min_th;
        p.max_th = min_th + self.gap;
    }

    /// Current `(minth2, maxth2)`, packets.
    pub fn thresholds(&self) -> (f64, f64) {
        let p = &self.ared.red().p;
        (p.min_th, p.max_th)
    }

    pub fn pd_avg(&self) -> f64 {
        self.pd_avg
    }

    pub fn w_q(&self) -> f64 {
        self.ared.w_q()
    }

    pub fn probe(&self) -> AqmProbe {
        let (min_th, max_th) = self.thresholds();
        AqmProbe {
            min_th,
            max_th,
            pd_avg: self.pd_avg,
            ..self.ared.probe()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn parse(extra: &str) -> Result<RedTailParams, ConfigError> {
        let base =
            "min_th1 = \"2 kB\"\nmax_th1 = \"30 kB\"\nmin_th2 = \"20 kB\"\nmax_th2 = \"80 kB\"";
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
        let swapped = "min_th1 = 1\nmax_th1 = 30\nmin_th2 = \"90 kB\"\nmax_th2 = \"80 kB\"";
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
            err("update_interval = -1"),
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
}
