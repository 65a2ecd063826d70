//! Gibbens–Kelly virtual queue (Gibbens & Kelly, "Resource pricing and the
//! evolution of congestion control", Automatica 1999): a virtual queue with
//! the real buffer's size, drained at `gamma * C`; an arrival that would
//! overflow it is signalled.
//!
//! ```text
//! VQ <- max(VQ - gamma C (t - s), 0)
//! VQ + b > limit: signal          else VQ <- VQ + b
//! ```
//!
//! With `busy_period = true` an overflow opens a marking period that lasts
//! until the virtual queue next empties: every arrival in it is signalled,
//! and one that fits still joins the virtual queue (Kunniyur & Srikant's
//! AVQ paper describes Gibbens and Kelly's queue this way; the AVQRED
//! papers signal only the overflowing arrivals, the default).

use super::params::ParamTable;
use super::vq::VirtualQueue;
use super::{PacketMeta, Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::queue::BufferLimit;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct GkvqParams {
    pub gamma: f64,
    /// Virtual buffer in bytes; `None`: the real buffer.
    pub vq_limit: Option<f64>,
    /// Bytes per packet when the real buffer is counted in packets.
    pub mean_packet_size: f64,
    /// The capacity C the virtual queue is derived from, bit/s; `None`: the
    /// rate of the link the AQM acts at. At a gateway's receive queue the
    /// real capacity is the space link's, not the receive link's.
    pub capacity: Option<u64>,
    /// Signal every arrival from an overflow to the end of the virtual
    /// queue's busy period, not only the overflowing ones.
    pub busy_period: bool,
}

impl GkvqParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<GkvqParams, ConfigError> {
        let mut p = GkvqParams::parse_vq(t)?;
        p.busy_period = t.bool("busy_period", false)?;
        Ok(p)
    }

    /// The virtual queue's keys, which AVQ shares (signalling only
    /// overflowing arrivals).
    pub(crate) fn parse_vq(t: &mut ParamTable) -> Result<GkvqParams, ConfigError> {
        Ok(GkvqParams {
            gamma: t.f64_in("gamma", 0.98, 0.0, true, 1.0)?,
            vq_limit: match t.opt_f64("vq_limit")? {
                Some(v) => Some(t.check_range("vq_limit", v, 0.0, true, 1e12)?),
                None => None,
            },
            mean_packet_size: t.f64_in("mean_packet_size", 1500.0, 0.0, true, 1e6)?,
            capacity: t.opt_rate("capacity")?,
            busy_period: false,
        })
    }

    pub(crate) fn capacity_bps(&self, link_rate_bps: u64) -> f64 {
        self.capacity.unwrap_or(link_rate_bps) as f64
    }

    pub(crate) fn limit_bytes(&self, limit: BufferLimit) -> f64 {
        self.vq_limit.unwrap_or(match limit {
            BufferLimit::Bytes(b) => b as f64,
            BufferLimit::Packets(n) => n as f64 * self.mean_packet_size,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Gkvq {
    vq: VirtualQueue,
    rate_bps: f64,
    limit: f64,
    busy_period: bool,
    /// An overflow happened and the virtual queue has not emptied since.
    marking: bool,
    /// `gamma`, and whether `capacity` was given (else the link's rate).
    gamma: f64,
    capacity_given: bool,
}

impl Gkvq {
    pub fn new(p: &GkvqParams, rate_bps: u64, limit: BufferLimit) -> Gkvq {
        Gkvq {
            vq: VirtualQueue::default(),
            rate_bps: p.gamma * p.capacity_bps(rate_bps),
            limit: p.limit_bytes(limit),
            busy_period: p.busy_period,
            marking: false,
            gamma: p.gamma,
            capacity_given: p.capacity.is_some(),
        }
    }

    /// The virtual rate `gamma C` follows the link's rate `C`, unless
    /// `capacity` fixed `C`.
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        if !self.capacity_given {
            self.rate_bps = self.gamma * rate_bps as f64;
        }
    }

    pub fn on_arrival(
        &mut self,
        now: SimTime,
        pkt: PacketMeta,
        _q: &QueueView,
        _u: f64,
    ) -> Verdict {
        self.vq.drain(now, self.rate_bps);
        if self.vq.bytes <= 0.0 {
            self.marking = false;
        }
        let b = pkt.size as f64;
        if self.vq.bytes + b > self.limit {
            self.marking = self.busy_period;
            Verdict::Mark(Reason::Early)
        } else {
            self.vq.bytes += b;
            if self.marking {
                Verdict::Mark(Reason::Early)
            } else {
                Verdict::Pass
            }
        }
    }

    /// The virtual queue (bytes) and its service rate (bit/s).
    pub fn probe(&self, put: &mut Probe) {
        put("aqm_vq_bytes", self.vq.bytes);
        put("aqm_vcap_bps", self.rate_bps);
    }
}
