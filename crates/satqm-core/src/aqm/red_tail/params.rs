//! RED+Tail's parameters, read from the `[[aqm]]` table: the drop-tail
//! queue's thresholds and bandwidth split, the RED queue (Adaptive RED with
//! fixed or dynamic thresholds), and the classifier.

use super::super::ared::AredParams;
use super::super::params::ParamTable;
use super::super::red::RedParams;
use crate::error::ConfigError;
use crate::ids::FlowKind;
use crate::queue::SplitParams;
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
