//! Round-trip time estimation and the retransmission timer: RFC 6298's,
//! or Linux's (`tcp_rtt_estimator()` and `tcp_set_rto()` in
//! `net/ipv4/tcp_input.c`).
//!
//! Both smooth the samples with gains 1/8 (SRTT) and 1/4 (the mean
//! deviation). RFC 6298 sets RTO = SRTT + max(G, 4·RTTVAR), at least the
//! minimum RTO, so on a path with a steady RTT the timeout falls to the RTT
//! itself. Linux instead keeps, per window of data, the largest of the
//! deviation terms (4·mdev) and never lets the variance term fall below
//! `tcp_rto_min` (200 ms): RTO = SRTT + max(4·mdev over the last window,
//! rto_min), decaying by a quarter of the difference per window; and a
//! sample below SRTT moves the deviation with an eighth of the usual gain,
//! so a falling RTT does not inflate the timeout.

use crate::time::SimTime;

/// Clock granularity G of RFC 6298 section 2.
const GRANULARITY_NS: f64 = 1e6;

/// Which rule sets the timeout from the samples, and which samples the
/// sender takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoRule {
    /// RFC 6298: SRTT + max(G, 4·RTTVAR), at least the minimum RTO; one
    /// sample per ACK that covers new data, from the newest segment it
    /// covers, none from an ACK covering a retransmission (Karn's rule).
    Rfc6298,
    /// Linux: SRTT + the variance term held at least at the minimum RTO.
    /// With timestamps (`tcp_timestamps = 1`) every ACK of new data is
    /// timed, from the oldest segment it covers, a retransmitted one by its
    /// last sending (the echoed timestamp); and since Linux 3.15 a
    /// duplicate ACK is timed by the oldest segment it newly SACKs
    /// (`tcp_ack_update_rtt()`), so the timer follows a queue that grows
    /// during a recovery.
    Linux,
    /// Linux 2.6.2x: as [`RtoRule::Linux`], without SACK timing.
    Linux2009,
}

impl RtoRule {
    /// Linux's estimator, whichever version.
    pub fn is_linux(self) -> bool {
        matches!(self, RtoRule::Linux | RtoRule::Linux2009)
    }
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    rule: RtoRule,
    srtt_ns: f64,
    /// RFC 6298's RTTVAR; under Linux's rule `mdev_us`, four times the
    /// smoothed mean deviation.
    rttvar_ns: f64,
    /// Linux: the largest `4·mdev` of the current window of data
    /// (`mdev_max_us`), at least the minimum RTO.
    mdev_max_ns: f64,
    /// Linux: the variance term of the timeout (`rttvar_us`).
    linux_var_ns: f64,
    /// Linux: the current window of data ends when the cumulative ACK
    /// passes this (`rtt_seq`).
    window_end: u64,
    has_sample: bool,
    /// The current timeout, backed off after expirations.
    rto: SimTime,
    min_rto: SimTime,
    max_rto: SimTime,
}

impl RttEstimator {
    pub fn new(rule: RtoRule, initial_rto: SimTime, min_rto: SimTime, max_rto: SimTime) -> Self {
        RttEstimator {
            rule,
            srtt_ns: 0.0,
            rttvar_ns: 0.0,
            mdev_max_ns: 0.0,
            linux_var_ns: 0.0,
            window_end: 0,
            has_sample: false,
            rto: initial_rto.max(min_rto).min(max_rto),
            min_rto,
            max_rto,
        }
    }

    /// Feed one measurement, taken on an ACK that moved the cumulative ACK
    /// to `snd_una` with `snd_nxt` the next byte to send (RFC 6298 sections
    /// 2.2 and 2.3, or Linux's estimator). Per Karn's rule the caller only
    /// measures segments that were never retransmitted; a valid sample also
    /// undoes any back-off (section 5.7).
    pub fn sample(&mut self, r: SimTime, snd_una: u64, snd_nxt: u64) {
        let r = r.ns() as f64;
        let rto = match self.rule {
            RtoRule::Rfc6298 => {
                if self.has_sample {
                    self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (self.srtt_ns - r).abs();
                    self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * r;
                } else {
                    self.srtt_ns = r;
                    self.rttvar_ns = r / 2.0;
                }
                self.srtt_ns + GRANULARITY_NS.max(4.0 * self.rttvar_ns)
            }
            RtoRule::Linux | RtoRule::Linux2009 => self.linux_sample(r, snd_una, snd_nxt),
        };
        self.has_sample = true;
        self.rto = SimTime::from_ns_f64(rto)
            .max(self.min_rto)
            .min(self.max_rto);
    }

    /// Linux's `tcp_rtt_estimator()`; returns SRTT plus the variance term
    /// (`__tcp_set_rto()`).
    fn linux_sample(&mut self, r: f64, snd_una: u64, snd_nxt: u64) -> f64 {
        let floor = self.min_rto.ns() as f64;
        if !self.has_sample {
            self.srtt_ns = r;
            self.rttvar_ns = 2.0 * r; // 4·mdev with mdev = r/2: RTO = 3·r
            self.linux_var_ns = self.rttvar_ns.max(floor);
            self.mdev_max_ns = self.linux_var_ns;
            self.window_end = snd_nxt;
            return self.srtt_ns + self.linux_var_ns;
        }
        let err = r - self.srtt_ns;
        self.srtt_ns += err / 8.0;
        let step = if err < 0.0 {
            // Falling RTT: an eighth of the gain (Linux's variant of an
            // Eifel finding), so the timeout does not grow as the RTT drops.
            let e = -err - self.rttvar_ns / 4.0;
            if e > 0.0 {
                e / 8.0
            } else {
                e
            }
        } else {
            err - self.rttvar_ns / 4.0
        };
        self.rttvar_ns += step;
        if self.rttvar_ns > self.mdev_max_ns {
            self.mdev_max_ns = self.rttvar_ns;
            self.linux_var_ns = self.linux_var_ns.max(self.mdev_max_ns);
        }
        if snd_una > self.window_end {
            // A window of data has passed: decay towards its largest
            // deviation, and start the next one from the floor.
            if self.mdev_max_ns < self.linux_var_ns {
                self.linux_var_ns -= (self.linux_var_ns - self.mdev_max_ns) / 4.0;
            }
            self.window_end = snd_nxt;
            self.mdev_max_ns = floor;
        }
        self.srtt_ns + self.linux_var_ns
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
            RtoRule::Rfc6298,
            SimTime::from_secs(1),
            SimTime::from_ms(200),
            SimTime::from_secs(60),
        );
        assert_eq!(e.rto(), SimTime::from_secs(1));
        e.sample(SimTime::from_ms(600), 0, 0);
        // SRTT = 600 ms, RTTVAR = 300 ms, RTO = 600 + 4*300 = 1800 ms
        assert_eq!(e.rto(), SimTime::from_ms(1800));
        e.sample(SimTime::from_ms(600), 0, 0);
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
            RtoRule::Rfc6298,
            SimTime::from_secs(1),
            SimTime::from_secs(1),
            SimTime::from_secs(60),
        );
        e.sample(SimTime::from_ms(10), 0, 0);
        assert_eq!(e.rto(), SimTime::from_secs(1));
    }

    #[test]
    fn linux_variance_term_is_floored_at_rto_min() {
        // The GEO case of Linux's TCP_INFO: a steady RTT of 585 ms gives
        // RTO = 585 + 200 ms, where RFC 6298 falls to the RTT itself.
        let new = |rule| {
            RttEstimator::new(
                rule,
                SimTime::from_secs(1),
                SimTime::from_ms(200),
                SimTime::from_secs(120),
            )
        };
        let (mut linux, mut rfc) = (new(RtoRule::Linux), new(RtoRule::Rfc6298));
        // One sample per window of data: the first sample's large variance
        // term (2·RTT) decays by a quarter per window down to the floor.
        for k in 0..200u64 {
            let seq = k * 10_000;
            linux.sample(SimTime::from_ms(585), seq, seq + 10_000);
            rfc.sample(SimTime::from_ms(585), seq, seq + 10_000);
        }
        assert_eq!(linux.rto(), SimTime::from_ms(785));
        assert!(rfc.rto() < SimTime::from_ms(590), "{}", rfc.rto());
    }

    #[test]
    fn linux_first_sample_and_window_decay() {
        let mut e = RttEstimator::new(
            RtoRule::Linux,
            SimTime::from_secs(1),
            SimTime::from_ms(200),
            SimTime::from_secs(120),
        );
        // First sample r: srtt = r, 4·mdev = 2r, RTO = 3r.
        e.sample(SimTime::from_ms(100), 0, 1000);
        assert_eq!(e.rto(), SimTime::from_ms(300));
        // Within the same window (snd_una <= 1000) the variance term keeps
        // its maximum, 200 ms: srtt = 100, RTO = 300 ms.
        e.sample(SimTime::from_ms(100), 1000, 2000);
        assert_eq!(e.rto(), SimTime::from_ms(300));
        // The next window: 4·mdev is now 112.5 ms (3/4 of 3/4 of 200), the
        // window's maximum restarts at the 200 ms floor, and the term decays
        // by a quarter of (200 - 200) = 0: still 200 ms.
        e.sample(SimTime::from_ms(100), 2000, 3000);
        assert_eq!(e.rto(), SimTime::from_ms(300));
        // A sample 40 ms above SRTT: 4·mdev = 0.75·112.5 + 40 ≈ 124 ms is
        // below the floor: SRTT moves by 5 ms and the term stays 200 ms.
        e.sample(SimTime::from_ms(140), 3000, 4000);
        assert_eq!(e.rto(), SimTime::from_ms(305));
    }
}
