//! Active queue management: one file per algorithm, each a pure state
//! machine over explicit inputs (see `docs/aqm.md` for the exact rules).
//!
//! An algorithm never reads a clock, a queue or a random generator: the
//! simulator passes the time, the packet, a [`QueueView`] of the queue it
//! *monitors*, and one uniform draw `u` per arrival. The port where it
//! *acts* may be another one (the AVQRED papers' Table 1: RED watching the
//! transmit queue and dropping at the receive queue). The queue glue in
//! `net/port.rs`, not the algorithm, turns a [`Verdict`] into an ECN mark or
//! a drop by one rule ([`Outcome::of`]), counts it by reason, and tells the
//! algorithm the outcome ([`Aqm::on_outcome`]).
//!
//! Parameters (`XParams`) are validated once from the scenario; the state
//! lives in the algorithm's struct.

mod ared;
mod avq;
mod avqred;
mod codel;
mod gkvq;
pub mod params;
mod pi;
mod pie;
mod red;
pub mod red_tail;
mod rem;
pub mod replay;
mod vq;

pub use ared::{Ared, AredParams};
pub use avq::{Avq, AvqParams};
pub use avqred::{AvqRed, AvqRedParams};
pub use codel::{Codel, CodelParams};
pub use gkvq::{Gkvq, GkvqParams};
pub use pi::{Pi, PiParams};
pub use pie::{Pie, PieParams};
pub use red::{Red, RedParams};
pub use red_tail::{Classifier, RedTail, RedTailParams, Thresholds};
pub use rem::{Rem, RemParams};

use crate::error::ConfigError;
use crate::queue::{
    BufferLimit, CobaltParams, DualPi2Params, DualScheduler, FlowAqmParams, FqParams, Overflow,
};
use crate::time::SimTime;
use params::ParamTable;

pub use crate::queue::QueueView;

impl PacketMeta {
    /// What an AQM sees of `pkt`.
    #[inline(always)]
    pub fn of(pkt: &crate::packet::Packet) -> PacketMeta {
        PacketMeta {
            size: pkt.size,
            ecn_capable: pkt.ecn_capable(),
            ect1: pkt.has(crate::packet::flags::ECT1),
        }
    }
}

/// The packet being judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMeta {
    pub size: u32,
    pub ecn_capable: bool,
    /// It carries ECT(1), L4S's codepoint (RFC 9331).
    pub ect1: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A random or virtual-queue congestion signal.
    Early,
    /// The deterministic region (RED above max_th).
    Forced,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// A congestion signal: an ECN mark where the scenario asks for marks
    /// and the packet is ECN-capable, a drop otherwise.
    Mark(Reason),
    /// Always a drop.
    Drop(Reason),
    /// A CE mark if the packet is ECN-capable, whatever the AQM's `mode`;
    /// else nothing (CoDel's `ce_threshold`, as Linux's `codel_impl.h`).
    Ce,
}

/// What the port made of a verdict (see [`Outcome::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Marked CE and let through.
    Marked(Reason),
    Dropped(Reason),
}

impl Outcome {
    /// The one rule for carrying out a verdict: a `Mark` is an ECN mark if
    /// the AQM signals by marking (`ecn`, the scenario's `mode = "mark"`)
    /// and the packet is ECN-capable, a drop otherwise; a `Drop` is a drop.
    #[inline]
    pub fn of(verdict: Verdict, ecn: bool, ecn_capable: bool) -> Outcome {
        match verdict {
            Verdict::Pass => Outcome::Passed,
            Verdict::Mark(r) if ecn && ecn_capable => Outcome::Marked(r),
            Verdict::Mark(r) | Verdict::Drop(r) => Outcome::Dropped(r),
            Verdict::Ce if ecn_capable => Outcome::Marked(Reason::Early),
            Verdict::Ce => Outcome::Passed,
        }
    }

    /// The packet goes on (passed or marked).
    #[inline]
    pub fn admitted(self) -> bool {
        !matches!(self, Outcome::Dropped(_))
    }
}

/// Where an AQM or a queue discipline writes its internals at a sample:
/// one call per value, with its column's name in the time series
/// (`aqm_…`). Each algorithm names its values where it writes them, so a
/// new algorithm adds no column to the others' runs.
pub type Probe<'a> = dyn FnMut(&'static str, f64) + 'a;

/// Validated parameters of one algorithm. Defaults that depend on the port
/// (link rate, buffer) are resolved by [`AqmParams::build`].
#[derive(Clone, Debug, PartialEq)]
pub enum AqmParams {
    DropTail,
    Red(RedParams),
    Ared(AredParams),
    Gkvq(GkvqParams),
    Avq(AvqParams),
    AvqRed(AvqRedParams),
    Pi(PiParams),
    Rem(RemParams),
    Pie(PieParams),
    Codel(CodelParams),
    /// Not one algorithm but a queue structure (two virtual queues, a
    /// classifier and a bandwidth split); the port gets parallel queues.
    RedTail(RedTailParams),
    /// A queue discipline (flow queues, a scheduler and an AQM on each:
    /// FQ-CoDel, FQ-PIE, FQ-COBALT, or one COBALT queue): the port's
    /// buffer becomes it (`queue/fq.rs`).
    Fq(FqParams),
    /// L4S's coupled dual queue, or the single-queue coupled PI2: the
    /// port's buffer becomes it (`queue/dualpi2.rs`).
    DualPi2(DualPi2Params),
}

/// Whether `kind` marks ECN-capable packets when the entry gives no
/// `mode`: FQ-CoDel does, as Linux's and ns-3's do, and COBALT, as CAKE
/// does; Linux's FQ-PIE, like every other AQM here, drops.
pub fn default_marks(kind: &str) -> bool {
    matches!(kind, "fq_codel" | "fq_cobalt" | "cobalt")
}

pub const KINDS: &str = "droptail, red, ared, gkvq, avq, avqred, pi, rem, pie, codel, red_tail, \
     fq_codel, fq_pie, fq_cobalt, cobalt, dualpi2, pi2";

impl AqmParams {
    /// Read the parameters of `kind` from `t`, refusing unknown keys.
    pub fn parse(kind: &str, t: &mut ParamTable) -> Result<AqmParams, ConfigError> {
        let p = match kind {
            "droptail" => AqmParams::DropTail,
            "red" => AqmParams::Red(RedParams::parse(t, false)?),
            "ared" => AqmParams::Ared(AredParams::parse(t)?),
            "gkvq" => AqmParams::Gkvq(GkvqParams::parse(t)?),
            "avq" => AqmParams::Avq(AvqParams::parse(t)?),
            "avqred" => AqmParams::AvqRed(AvqRedParams::parse(t)?),
            "pi" => AqmParams::Pi(PiParams::parse(t)?),
            "rem" => AqmParams::Rem(RemParams::parse(t)?),
            "pie" => AqmParams::Pie(PieParams::parse(t)?),
            "codel" => AqmParams::Codel(CodelParams::parse(t)?),
            "red_tail" => AqmParams::RedTail(RedTailParams::parse(t)?),
            "fq_codel" | "fq_pie" | "fq_cobalt" | "cobalt" => AqmParams::Fq(parse_fq(kind, t)?),
            "dualpi2" => AqmParams::DualPi2(parse_dualpi2(t, false)?),
            "pi2" => AqmParams::DualPi2(parse_dualpi2(t, true)?),
            other => {
                return Err(ConfigError::new(
                    t.key_path("kind"),
                    format!("unknown AQM {other:?} (known: {KINDS})"),
                ))
            }
        };
        t.finish(kind)?;
        Ok(p)
    }

    /// An algorithm monitoring a port of `rate_bps` and acting on one with
    /// buffer `limit`.
    pub fn build(&self, rate_bps: u64, limit: BufferLimit) -> Aqm {
        match self {
            AqmParams::DropTail => Aqm::DropTail,
            AqmParams::Red(p) => Aqm::Red(Red::new(p.clone())),
            AqmParams::Ared(p) => Aqm::Ared(Ared::new(p, rate_bps)),
            AqmParams::Gkvq(p) => Aqm::Gkvq(Gkvq::new(p, rate_bps, limit)),
            AqmParams::Avq(p) => Aqm::Avq(Avq::new(p, rate_bps, limit)),
            AqmParams::AvqRed(p) => Aqm::AvqRed(AvqRed::new(p, rate_bps)),
            AqmParams::Pi(p) => Aqm::Pi(Pi::new(p.clone())),
            AqmParams::Rem(p) => Aqm::Rem(Rem::new(p.clone(), rate_bps)),
            AqmParams::Pie(p) => Aqm::Pie(Pie::new(p.clone())),
            AqmParams::Codel(p) => Aqm::Codel(Codel::new(p.clone())),
            AqmParams::RedTail(p) => Aqm::RedTail(Box::new(RedTail::new(p, rate_bps, limit))),
            AqmParams::Fq(p) => Aqm::Scheduler(match &p.aqm {
                FlowAqmParams::Pie(pie) => Some(pie.t_update),
                _ => None,
            }),
            AqmParams::DualPi2(p) => Aqm::Scheduler(Some(p.tupdate)),
        }
    }

    /// Whether the algorithm decides at dequeue (and so must act where it
    /// monitors).
    pub fn acts_at_dequeue(&self) -> bool {
        matches!(self, AqmParams::Codel(_))
    }

    /// Whether this is a queue structure of its port (RED+Tail): it must
    /// monitor the port it acts on.
    pub fn is_queue_structure(&self) -> bool {
        matches!(
            self,
            AqmParams::RedTail(_) | AqmParams::Fq(_) | AqmParams::DualPi2(_)
        )
    }
}

/// DualPI2's parameters (`[[aqm]] kind = "dualpi2"`), defaults from RFC 9332
/// Appendix A.1: the gains and the update period derive from `target` and
/// `rtt_max` unless given. `single`: the single-queue coupled PI2 (`kind =
/// "pi2"`), which has no L queue and so none of its keys.
fn parse_dualpi2(t: &mut ParamTable, single: bool) -> Result<DualPi2Params, ConfigError> {
    let target = t.time("target", SimTime::from_ms(15))?;
    let rtt_max = t.time("rtt_max", SimTime::from_ms(100))?;
    let secs = |s: SimTime| s.ns() as f64 * 1e-9;
    if rtt_max == SimTime::ZERO {
        return Err(ConfigError::new(t.key_path("rtt_max"), "must be > 0"));
    }
    let tupdate = match t.opt_time("tupdate")? {
        Some(u) => u,
        None => SimTime::from_secs_f64(secs(target).min(secs(rtt_max) / 3.0)),
    };
    if tupdate == SimTime::ZERO {
        return Err(ConfigError::new(t.key_path("tupdate"), "must be > 0"));
    }
    let alpha = match t.opt_f64("alpha")? {
        Some(a) => t.check_range("alpha", a, 0.0, false, 1e6)?,
        None => 0.1 * secs(tupdate) / (secs(rtt_max) * secs(rtt_max)),
    };
    let beta = match t.opt_f64("beta")? {
        Some(b) => t.check_range("beta", b, 0.0, false, 1e6)?,
        None => 0.3 / secs(rtt_max),
    };
    if single {
        // No L queue: its ramp, scheduler and credit stay unread (unknown
        // keys).
        return Ok(DualPi2Params {
            target,
            tupdate,
            alpha,
            beta,
            k: t.f64_in("k", 2.0, 0.0, true, 1e3)?,
            min_th: SimTime::from_us(800),
            range: SimTime::from_us(400),
            th_len: 1,
            p_lmax: t.f64_in("p_lmax", 1.0, 0.0, true, 1.0)?,
            tshift: SimTime::from_ms(50),
            scheduler: DualScheduler::TimeShiftedFifo,
            classic_protection: 10,
            mtu: 1500,
            single_queue: true,
        });
    }
    let scheduler = match t.opt_str("scheduler")?.as_deref() {
        None | Some("tsfifo") => DualScheduler::TimeShiftedFifo,
        Some("wrr") => DualScheduler::Wrr,
        Some(other) => {
            return Err(ConfigError::new(
                t.key_path("scheduler"),
                format!("{other:?}: must be \"tsfifo\" (time-shifted FIFO) or \"wrr\""),
            ))
        }
    };
    Ok(DualPi2Params {
        target,
        tupdate,
        alpha,
        beta,
        k: t.f64_in("k", 2.0, 0.0, true, 1e3)?,
        min_th: t.time("min_th", SimTime::from_us(800))?,
        range: t.time_or_zero("range", SimTime::from_us(400))?,
        th_len: t.whole_in("th_len", 1, 0.0, 1e6)?,
        p_lmax: t.f64_in("p_lmax", 1.0, 0.0, true, 1.0)?,
        tshift: t.time("tshift", SimTime::from_ms(50))?,
        scheduler,
        classic_protection: t.whole_in("classic_protection", 10, 0.0, 100.0)?,
        mtu: t.whole_in("mtu", 1500, 1.0, 1e6)?,
        single_queue: false,
    })
}

/// A flow-queuing discipline's parameters (`[[aqm]] kind = "fq_codel"`,
/// `"fq_pie"`, `"fq_cobalt"`, or `"cobalt"`: one queue); `ecn` comes from
/// the entry's `mode`. Defaults are Linux's (`sch_fq_codel.c`,
/// `sch_fq_pie.c`) and, for COBALT, ns-3's `CobaltQueueDisc`.
fn parse_fq(kind: &str, t: &mut ParamTable) -> Result<FqParams, ConfigError> {
    let d = FqParams::default();
    let single = kind == "cobalt";
    let (flows, quantum) = if single {
        (1, d.quantum)
    } else {
        (
            t.whole_in("flows", d.flows, 1.0, 65536.0)?,
            t.whole_in("quantum", d.quantum, 1.0, 1e6)?,
        )
    };
    let aqm = match kind {
        "fq_codel" => FlowAqmParams::Codel {
            target: t.time("target", SimTime::from_ms(5))?,
            interval: t.time("interval", SimTime::from_ms(100))?,
        },
        "fq_pie" => FlowAqmParams::Pie(crate::aqm::PieParams::parse(t)?),
        _ => {
            let c = CobaltParams::default();
            FlowAqmParams::Cobalt(CobaltParams {
                target: t.time("target", c.target)?,
                interval: t.time("interval", c.interval)?,
                p_inc: t.f64_in("p_inc", c.p_inc, 0.0, false, 1.0)?,
                p_dec: t.f64_in("p_dec", c.p_dec, 0.0, false, 1.0)?,
                blue_threshold: t.time("blue_threshold", c.blue_threshold)?,
            })
        }
    };
    if let FlowAqmParams::Cobalt(c) = &aqm {
        if c.interval.ns() >= 1 << 32 {
            return Err(ConfigError::new(
                t.key_path("interval"),
                "must be below 4.29 s (COBALT's control law is 32-bit fixed point)",
            ));
        }
    }
    // Linux's FQ-PIE and a single COBALT queue drop the arrival when full;
    // FQ-CoDel and FQ-COBALT drop from the fattest queue.
    let default_overflow = if matches!(kind, "fq_pie" | "cobalt") {
        "tail"
    } else {
        "fattest"
    };
    let overflow = if single {
        Overflow::Tail
    } else {
        match t
            .opt_str("overflow")?
            .as_deref()
            .unwrap_or(default_overflow)
        {
            "tail" => Overflow::Tail,
            "fattest" => Overflow::Fattest,
            other => {
                return Err(ConfigError::new(
                    t.key_path("overflow"),
                    format!(
                        "{other:?}: must be \"tail\" (drop the arrival) or \"fattest\" \
                         (drop from the head of the largest queue)"
                    ),
                ))
            }
        }
    };
    // Only what the discipline uses is read: the others stay unknown keys.
    let drop_batch = match overflow {
        Overflow::Fattest => t.whole_in("drop_batch", d.drop_batch, 1.0, 1e6)?,
        Overflow::Tail => d.drop_batch,
    };
    let mtu = match kind {
        "fq_codel" => t.f64_in("mtu", d.mtu as f64, 0.0, true, 1e6)? as u64,
        _ => d.mtu,
    };
    let (ce_threshold, ce_threshold_ect1) = t.ce_threshold()?;
    Ok(FqParams {
        flows,
        quantum,
        mtu,
        drop_batch,
        overflow,
        ecn: false,
        ce_threshold,
        ce_threshold_ect1,
        aqm,
    })
}

/// Enum dispatch over the algorithms (no trait objects on the hot path).
#[derive(Clone, Debug)]
pub enum Aqm {
    DropTail,
    Red(Red),
    Ared(Ared),
    Gkvq(Gkvq),
    Avq(Avq),
    AvqRed(AvqRed),
    Pi(Pi),
    Rem(Rem),
    Pie(Pie),
    Codel(Codel),
    RedTail(Box<RedTail>),
    /// A queue discipline whose state is the port's buffer (flow queuing,
    /// DualPI2): it decides at enqueue and dequeue itself, so as an AQM it
    /// passes every packet; its periodic update, if it has one, runs on
    /// this AQM's timer.
    Scheduler(Option<SimTime>),
}

impl Aqm {
    #[inline]
    pub fn on_arrival(&mut self, now: SimTime, pkt: PacketMeta, q: &QueueView, u: f64) -> Verdict {
        match self {
            Aqm::DropTail | Aqm::Codel(_) | Aqm::Scheduler(_) => Verdict::Pass,
            Aqm::Red(a) => a.on_arrival(now, pkt, q, u),
            Aqm::Ared(a) => a.on_arrival(now, pkt, q, u),
            Aqm::Gkvq(a) => a.on_arrival(now, pkt, q, u),
            Aqm::Avq(a) => a.on_arrival(now, pkt, q, u),
            Aqm::AvqRed(a) => a.on_arrival(now, pkt, q, u),
            Aqm::Pi(a) => a.on_arrival(now, pkt, q, u),
            Aqm::Rem(a) => a.on_arrival(now, pkt, q, u),
            Aqm::Pie(a) => a.on_arrival(now, pkt, q, u),
            // A port's arrivals reach RED+Tail through `classify_arrival`;
            // given one view, this is the verdict for a packet of the RED
            // class.
            Aqm::RedTail(a) => a.red_arrival(now, pkt, q, u),
        }
    }

    /// Whether the algorithm sorts arrivals into its buffer's classes
    /// itself ([`classify_arrival`](Self::classify_arrival)), by the
    /// traffic kind of their flows (RED+Tail).
    #[inline]
    pub fn classifies(&self) -> bool {
        matches!(self, Aqm::RedTail(_))
    }

    /// The verdict on a packet of `flow` (traffic of `kind`) arriving at
    /// the buffer it structures: RED+Tail chooses its virtual queue, counts
    /// it there and judges a packet of the RED queue on that queue's own
    /// view. An admitted packet joins the queue chosen
    /// ([`Buffer::push`]). Out of line: most ports do not classify.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn classify_arrival(
        &mut self,
        now: SimTime,
        flow: crate::ids::FlowId,
        kind: crate::ids::FlowKind,
        pkt: PacketMeta,
        u: f64,
        buffer: &mut crate::queue::Buffer,
    ) -> Verdict {
        let Aqm::RedTail(rt) = self else {
            unreachable!("classify_arrival on an algorithm that does not classify")
        };
        let class = rt.classify(now, flow, kind);
        let vqs = buffer
            .parallel_mut()
            .expect("a red_tail port has parallel queues");
        vqs.count_arrival(class, pkt.size);
        match class {
            crate::queue::VqClass::DropTail => Verdict::Pass,
            crate::queue::VqClass::Red => {
                rt.red_arrival(now, pkt, &vqs.view(crate::queue::VqClass::Red, now), u)
            }
        }
    }

    /// The port carried out this algorithm's verdict on an arrival as
    /// `outcome` (AVQRED counts admitted packets in its virtual queue).
    #[inline]
    pub fn on_outcome(&mut self, pkt: PacketMeta, outcome: Outcome) {
        if let Aqm::AvqRed(a) = self {
            a.on_outcome(pkt, outcome);
        }
    }

    /// A packet left the monitored queue after `sojourn`; `q` is the view
    /// after it left.
    #[inline]
    pub fn on_departure(
        &mut self,
        now: SimTime,
        sojourn: SimTime,
        pkt: PacketMeta,
        q: &QueueView,
    ) -> Verdict {
        match self {
            Aqm::Codel(a) => a.on_departure(now, sojourn, pkt, q),
            Aqm::Pie(a) => {
                a.on_departure(sojourn, q);
                Verdict::Pass
            }
            _ => Verdict::Pass,
        }
    }

    /// Whether the algorithm needs to hear of departures (PIE's delay
    /// estimate, CoDel's decisions); the port skips the call otherwise.
    pub fn needs_departures(&self) -> bool {
        matches!(self, Aqm::Pie(_) | Aqm::Codel(_))
    }

    /// Period of the algorithm's own updates, if it has any.
    pub fn timer_interval(&self) -> Option<SimTime> {
        match self {
            Aqm::Ared(a) => Some(a.interval()),
            Aqm::Pi(a) => Some(a.interval()),
            Aqm::Rem(a) => Some(a.interval()),
            Aqm::Pie(a) => Some(a.interval()),
            Aqm::RedTail(a) => Some(a.interval()),
            Aqm::Scheduler(iv) => *iv,
            _ => None,
        }
    }

    pub fn on_timer(&mut self, now: SimTime, q: &QueueView) {
        match self {
            Aqm::Ared(a) => a.on_timer(now, q),
            Aqm::Pi(a) => a.on_timer(q),
            Aqm::Rem(a) => a.on_timer(q),
            Aqm::Pie(a) => a.on_timer(q),
            Aqm::RedTail(a) => a.on_timer(now, q),
            _ => {}
        }
    }

    /// A drop at dequeue left the queue empty (CoDel's loop ends).
    /// The rate of the link it monitors changed (a link that plays a
    /// schedule): what was derived from the rate follows it, unless a
    /// parameter fixed it (`docs/aqm.md`, "Links that change").
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        match self {
            Aqm::Ared(a) => a.set_link_rate(rate_bps),
            Aqm::Gkvq(a) => a.set_link_rate(rate_bps),
            Aqm::Avq(a) => a.set_link_rate(rate_bps),
            Aqm::AvqRed(a) => a.set_link_rate(rate_bps),
            Aqm::Rem(a) => a.set_link_rate(rate_bps),
            Aqm::RedTail(a) => a.set_link_rate(rate_bps),
            // RED reads the rate of each arrival's view; PIE measures its
            // departure rate; the others use no rate.
            Aqm::DropTail
            | Aqm::Red(_)
            | Aqm::Pi(_)
            | Aqm::Pie(_)
            | Aqm::Codel(_)
            | Aqm::Scheduler(_) => {}
        }
    }

    pub fn on_empty_after_drop(&mut self) {
        if let Aqm::Codel(a) = self {
            a.on_empty_after_drop();
        }
    }

    pub fn probe(&self, put: &mut Probe) {
        match self {
            Aqm::DropTail | Aqm::Scheduler(_) => {}
            Aqm::Red(a) => a.probe(put),
            Aqm::Ared(a) => a.probe(put),
            Aqm::Gkvq(a) => a.probe(put),
            Aqm::Avq(a) => a.probe(put),
            Aqm::AvqRed(a) => a.probe(put),
            Aqm::Pi(a) => a.probe(put),
            Aqm::Rem(a) => a.probe(put),
            Aqm::Pie(a) => a.probe(put),
            Aqm::Codel(a) => a.probe(put),
            Aqm::RedTail(a) => a.probe(put),
        }
    }
}

/// `p_b / (1 - count * p_b)`, the inter-mark spreading of Floyd & Jacobson
/// (1993), section 7; 1 once `count * p_b >= 1`.
#[inline]
pub(crate) fn spread(p_b: f64, count: i64) -> f64 {
    let d = 1.0 - count as f64 * p_b;
    if d <= 0.0 {
        1.0
    } else {
        (p_b / d).min(1.0)
    }
}
