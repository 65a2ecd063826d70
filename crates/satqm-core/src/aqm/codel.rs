//! CoDel, Controlled Delay (RFC 8289), deciding at dequeue on each packet's
//! sojourn time. The RFC's dequeue loop is split into one call per
//! departing packet: after a drop the port dequeues the next packet and
//! calls again; `after_first_drop` and `law_pending` carry the loop's
//! position between calls so the sequence of decisions is the RFC's.

use super::params::ParamTable;
use super::{PacketMeta, Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct CodelParams {
    pub target: SimTime,
    pub interval: SimTime,
    pub mtu: u64,
    /// CE-mark an eligible packet whose sojourn exceeds this, if CoDel did
    /// not signal on it (Linux's `ce_threshold`).
    pub ce_threshold: Option<SimTime>,
    /// Only ECT(1) packets are eligible (L4S); else every ECN-capable one.
    pub ce_threshold_ect1: bool,
}

impl CodelParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<CodelParams, ConfigError> {
        let (target, interval) = (
            t.time("target", SimTime::from_ms(5))?,
            t.time("interval", SimTime::from_ms(100))?,
        );
        let mtu = t.f64_in("mtu", 1500.0, 0.0, true, 1e6)? as u64;
        let (ce_threshold, ce_threshold_ect1) = t.ce_threshold()?;
        Ok(CodelParams {
            target,
            interval,
            mtu,
            ce_threshold,
            ce_threshold_ect1,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Codel {
    p: CodelParams,
    first_above: Option<SimTime>,
    drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
    /// The previous call dropped the first packet of a dropping state: the
    /// RFC hands out the next packet without a drop check.
    after_first_drop: bool,
    /// The previous call dropped inside the dropping state: the RFC
    /// advances `drop_next` once it has checked the next packet.
    law_pending: bool,
    last_sojourn: SimTime,
}

impl Codel {
    pub fn new(p: CodelParams) -> Codel {
        Codel {
            p,
            first_above: None,
            drop_next: SimTime::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
            after_first_drop: false,
            law_pending: false,
            last_sojourn: SimTime::ZERO,
        }
    }

    /// `t + interval / sqrt(count)`.
    fn control_law(&self, t: SimTime) -> SimTime {
        t + SimTime::from_secs_f64(self.p.interval.secs_f64() / (self.count.max(1) as f64).sqrt())
    }

    /// RFC 8289 `dodequeue`: is it OK to drop this packet?
    fn ok_to_drop(&mut self, now: SimTime, sojourn: SimTime, q: &QueueView) -> bool {
        if sojourn < self.p.target || q.q_bytes <= self.p.mtu {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.p.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// The verdict on a packet leaving after `sojourn`: CoDel's, then,
    /// if CoDel let it pass, `ce_threshold`'s mark (as Linux's
    /// `codel_dequeue` ends).
    pub fn on_departure(
        &mut self,
        now: SimTime,
        sojourn: SimTime,
        pkt: PacketMeta,
        q: &QueueView,
    ) -> Verdict {
        let v = self.codel(now, sojourn, q);
        match self.p.ce_threshold {
            Some(th) if v == Verdict::Pass && sojourn > th => {
                let eligible = if self.p.ce_threshold_ect1 {
                    pkt.ect1
                } else {
                    pkt.ecn_capable
                };
                if eligible {
                    Verdict::Ce
                } else {
                    v
                }
            }
            _ => v,
        }
    }

    /// RFC 8289's decision on one departing packet.
    fn codel(&mut self, now: SimTime, sojourn: SimTime, q: &QueueView) -> Verdict {
        self.last_sojourn = sojourn;
        let ok = self.ok_to_drop(now, sojourn, q);
        if self.after_first_drop {
            self.after_first_drop = false;
            return Verdict::Pass;
        }
        if self.dropping {
            if !ok {
                self.dropping = false;
                self.law_pending = false;
                return Verdict::Pass;
            }
            if self.law_pending {
                self.law_pending = false;
                self.drop_next = self.control_law(self.drop_next);
            }
            if now >= self.drop_next {
                self.count += 1;
                self.law_pending = true;
                return Verdict::Mark(Reason::Early);
            }
            Verdict::Pass
        } else if ok {
            self.dropping = true;
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = if self.count > self.lastcount
                && delta > 1
                && now.saturating_sub(self.drop_next) < SimTime(16 * self.p.interval.ns())
            {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now);
            self.lastcount = self.count;
            self.after_first_drop = true;
            Verdict::Mark(Reason::Early)
        } else {
            Verdict::Pass
        }
    }

    /// A drop left the queue empty: the RFC's `dodequeue` found nothing.
    pub fn on_empty_after_drop(&mut self) {
        self.first_above = None;
        if self.law_pending {
            self.law_pending = false;
            self.dropping = false;
        }
        self.after_first_drop = false;
    }

    /// The drops of the current dropping state (`count`) and the last
    /// sojourn seen (s).
    pub fn probe(&self, put: &mut Probe) {
        put("aqm_count", self.count as f64);
        put("aqm_qdelay", self.last_sojourn.secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Outcome;

    const MS: u64 = 1_000_000;

    fn codel(th: Option<u64>, ect1: bool) -> Codel {
        Codel::new(CodelParams {
            target: SimTime(5 * MS),
            interval: SimTime(100 * MS),
            mtu: 1500,
            ce_threshold: th.map(|ms| SimTime(ms * MS)),
            ce_threshold_ect1: ect1,
        })
    }

    fn pkt(ecn_capable: bool, ect1: bool) -> PacketMeta {
        PacketMeta {
            size: 1500,
            ecn_capable,
            ect1,
        }
    }

    const BIG: QueueView = QueueView {
        q_packets: 10,
        q_bytes: 15_000,
        idle_since: None,
        departed_bytes: 0,
        rate_bps: 0,
    };

    /// Above the threshold an eligible packet is marked (not dropped,
    /// whatever the mode) while CoDel itself lets it pass; at or below it,
    /// or not ECN-capable, it passes.
    #[test]
    fn ce_threshold_marks_eligible_packets_above_it() {
        let mut c = codel(Some(2), false);
        let t = SimTime(10 * MS);
        assert_eq!(
            c.on_departure(t, SimTime(3 * MS), pkt(true, false), &BIG),
            Verdict::Ce
        );
        assert_eq!(
            c.on_departure(t, SimTime(2 * MS), pkt(true, false), &BIG),
            Verdict::Pass
        );
        assert_eq!(
            c.on_departure(t, SimTime(3 * MS), pkt(false, false), &BIG),
            Verdict::Pass
        );
        assert_eq!(
            Outcome::of(Verdict::Ce, false, true),
            Outcome::Marked(Reason::Early)
        );
        assert_eq!(Outcome::of(Verdict::Ce, false, false), Outcome::Passed);
        // ECT(1) only: an ECT(0) packet passes, an ECT(1) one is marked.
        let mut c = codel(Some(2), true);
        assert_eq!(
            c.on_departure(t, SimTime(3 * MS), pkt(true, false), &BIG),
            Verdict::Pass
        );
        assert_eq!(
            c.on_departure(t, SimTime(3 * MS), pkt(true, true), &BIG),
            Verdict::Ce
        );
        // Without a threshold nothing is marked below CoDel's own law.
        let mut c = codel(None, false);
        assert_eq!(
            c.on_departure(t, SimTime(3 * MS), pkt(true, true), &BIG),
            Verdict::Pass
        );
    }

    /// CoDel's own signal comes first: the packet that starts a dropping
    /// state gets CoDel's verdict, and the state evolves as without a
    /// threshold.
    #[test]
    fn codels_signal_takes_precedence() {
        let (mut a, mut b) = (codel(Some(1), false), codel(None, false));
        let e = pkt(true, false);
        let mut seen_signal = false;
        for k in 0..400u64 {
            let t = SimTime(k * MS);
            let (va, vb) = (
                a.on_departure(t, SimTime(20 * MS), e, &BIG),
                b.on_departure(t, SimTime(20 * MS), e, &BIG),
            );
            if vb == Verdict::Pass {
                assert_eq!(va, Verdict::Ce, "at {k} ms");
            } else {
                seen_signal = true;
                assert_eq!(va, vb, "at {k} ms");
            }
        }
        assert!(seen_signal);
        assert_eq!(a.count, b.count);
    }
}
