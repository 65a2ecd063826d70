//! Round-trip time estimation and the retransmission timer (RFC 6298).

use crate::time::SimTime;

/// Clock granularity G of RFC 6298 section 2.
const GRANULARITY_NS: f64 = 1e6;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt_ns: f64,
    rttvar_ns: f64,
    has_sample: bool,
    /// The current timeout, backed off after expirations.
    rto: SimTime,
    min_rto: SimTime,
    max_rto: SimTime,
}

impl RttEstimator {
    pub fn new(initial_rto: SimTime, min_rto: SimTime, max_rto: SimTime) -> Self {
        RttEstimator {
            srtt_ns: 0.0,
            rttvar_ns: 0.0,
            has_sample: false,
            rto: initial_rto.max(min_rto).min(max_rto),
            min_rto,
            max_rto,
        }
    }

    /// Feed one measurement (section 2.2 and 2.3). Per Karn's rule the
    /// caller only measures segments that were never retransmitted; a valid
    /// sample also undoes any back-off (section 5.7).
    pub fn sample(&mut self, r: SimTime) {
        let r = r.ns() as f64;
        if self.has_sample {
            self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (self.srtt_ns - r).abs();
            self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * r;
        } else {
            self.srtt_ns = r;
            self.rttvar_ns = r / 2.0;
            self.has_sample = true;
        }
        let rto = self.srtt_ns + GRANULARITY_NS.max(4.0 * self.rttvar_ns);
        self.rto = SimTime::from_ns_f64(rto)
            .max(self.min_rto)
            .min(self.max_rto);
    }

    /// Double the timeout after an expiration (section 5.5).
    pub fn back_off(&mut self) {
        self.rto = SimTime(self.rto.ns().saturating_mul(2)).min(self.max_rto);
    }

    pub fn rto(&self) -> SimTime {
        self.rto
    }

    pub fn srtt(&self) -> Option<SimTime> {
        self.has_sample.then(|| SimTime::from_ns_f64(self.srtt_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut e = RttEstimator::new(
            SimTime::from_secs(1),
            SimTime::from_ms(200),
            SimTime::from_secs(60),
        );
        assert_eq!(e.rto(), SimTime::from_secs(1));
        e.sample(SimTime::from_ms(600));
        // SRTT = 600 ms, RTTVAR = 300 ms, RTO = 600 + 4*300 = 1800 ms
        assert_eq!(e.rto(), SimTime::from_ms(1800));
        e.sample(SimTime::from_ms(600));
        // RTTVAR = 0.75*300 + 0.25*0 = 225; RTO = 600 + 900 = 1500 ms
        assert_eq!(e.rto(), SimTime::from_ms(1500));
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_ms(3000));
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), SimTime::from_secs(60));
    }

    #[test]
    fn minimum_applies() {
        let mut e = RttEstimator::new(
            SimTime::from_secs(1),
            SimTime::from_secs(1),
            SimTime::from_secs(60),
        );
        e.sample(SimTime::from_ms(10));
        assert_eq!(e.rto(), SimTime::from_secs(1));
    }
}
