//! CoDel, Controlled Delay (RFC 8289), deciding at dequeue on each packet's
//! sojourn time. The RFC's dequeue loop is split into one call per
//! departing packet: after a drop the port dequeues the next packet and
//! calls again; `after_first_drop` and `law_pending` carry the loop's
//! position between calls so the sequence of decisions is the RFC's.

use super::params::ParamTable;
use super::{Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct CodelParams {
    pub target: SimTime,
    pub interval: SimTime,
    pub mtu: u64,
}

impl CodelParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<CodelParams, ConfigError> {
        Ok(CodelParams {
            target: t.time("target", SimTime::from_ms(5))?,
            interval: t.time("interval", SimTime::from_ms(100))?,
            mtu: t.f64_in("mtu", 1500.0, 0.0, true, 1e6)? as u64,
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

    pub fn on_departure(&mut self, now: SimTime, sojourn: SimTime, q: &QueueView) -> Verdict {
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
