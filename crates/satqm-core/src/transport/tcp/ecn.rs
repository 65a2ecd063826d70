//! The sender's reading of ECN feedback other than RFC 3168's: how many of
//! the segments an ACK newly delivered arrived CE-marked.
//!
//! * DCTCP's feedback (RFC 8257 section 3.2): the receiver sets ECE on an
//!   ACK exactly when the segments it acknowledges were CE-marked, so every
//!   segment an ECE-carrying ACK delivers counts as marked (Linux's
//!   `tcp_count_delivered()` with `FLAG_ECE`).
//! * AccECN (RFC 9768): every ACK carries the receiver's count of CE-marked
//!   segments modulo 8 (the ACE field: AE, CWR, ECE), starting from 5. The
//!   sender keeps its own count and takes the increase modulo 8. If the ACK
//!   newly delivered more than 7 segments the field may have wrapped; the
//!   sender then assumes the most marks the field allows, the largest count
//!   not above the segments delivered that is congruent to the increase
//!   modulo 8 (RFC 9768 appendix A.2.1's conservative reading, as Linux's
//!   `__tcp_accecn_process()` does without the AccECN option).
//!
//! "Newly delivered" counts segments cumulatively acknowledged or SACKed
//! for the first time; without SACK each duplicate ACK counts one segment
//! delivered and the cumulative ACK that follows counts only the rest, as
//! Linux counts a Reno connection's duplicate ACKs as SACKed segments.

use crate::packet::flags;

/// AccECN's initial value of the CE packet counter (RFC 9768 section
/// 3.2.1: r.cep and s.cep start at 5).
pub const ACE_INIT: u64 = 5;

/// The CE-marked segments an AccECN ACK reports beyond `counted`, given
/// that it newly delivered `delivered` segments.
#[inline]
pub fn accecn_ce_delta(ack_flags: u8, counted: u64, delivered: u64) -> u64 {
    let ace = flags::ace(ack_flags) as u64;
    let delta = (ace + 8 - (counted + ACE_INIT) % 8) % 8;
    if delivered <= 7 {
        delta
    } else {
        delivered - ((delivered - delta) & 7)
    }
}

/// The sender's running counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct FeedbackReader {
    /// CE-marked segments fed back so far.
    pub delivered_ce: u64,
    /// Without SACK: duplicate ACKs counted as delivered segments that the
    /// cumulative ACK has not yet covered.
    dup_delivered: u64,
}

impl FeedbackReader {
    /// Segments newly delivered by an ACK that moved the delivered point
    /// (`snd_una` plus the SACKed bytes above it) by `progress` bytes.
    pub fn delivered(&mut self, progress: u64, mss: u32, sack: bool, dupack: bool) -> u64 {
        let segs = progress.div_ceil(mss as u64);
        if sack {
            return segs;
        }
        if dupack {
            self.dup_delivered += 1;
            return 1;
        }
        let counted = self.dup_delivered.min(segs);
        self.dup_delivered -= counted;
        segs - counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(ace: u8) -> u8 {
        flags::ace_flags(ace)
    }

    #[test]
    fn ace_delta_modulo_8_from_the_initial_5() {
        // Nothing marked yet: the receiver's counter is 5.
        assert_eq!(accecn_ce_delta(ack(5), 0, 2), 0);
        assert_eq!(accecn_ce_delta(ack(6), 0, 2), 1);
        assert_eq!(accecn_ce_delta(ack(7), 0, 2), 2);
        // 5 + 3 = 8 wraps to 0.
        assert_eq!(accecn_ce_delta(ack(0), 0, 3), 3);
        // 10 counted: the sender expects (5 + 10) mod 8 = 7; ACE 1 is 2 more.
        assert_eq!(accecn_ce_delta(ack(1), 10, 2), 2);
        assert_eq!(accecn_ce_delta(ack(7), 10, 2), 0);
    }

    /// Appendix A.2.1: an ACK delivering more than 7 segments may hide a
    /// wrap; the sender assumes the largest count consistent with the field.
    #[test]
    fn ace_wraps_resolved_conservatively_on_large_acks() {
        // 7 delivered: no wrap possible.
        assert_eq!(accecn_ce_delta(ack(5), 0, 7), 0);
        // 8 delivered, field unchanged: 0 or 8 marks; assume 8.
        assert_eq!(accecn_ce_delta(ack(5), 0, 8), 8);
        // 20 delivered, field +3: 3, 11 or 19; assume 19.
        assert_eq!(accecn_ce_delta(ack(0), 0, 20), 19);
        // 12 delivered, field +6: 6 (14 > 12).
        assert_eq!(accecn_ce_delta(ack(3), 0, 12), 6);
    }

    #[test]
    fn delivered_counts_sack_progress_or_duplicate_acks() {
        let mut r = FeedbackReader::default();
        assert_eq!(r.delivered(2920, 1460, true, false), 2);
        assert_eq!(r.delivered(100, 1460, true, false), 1);
        assert_eq!(r.delivered(0, 1460, true, true), 0);
        // Without SACK: three duplicate ACKs, then a cumulative ACK for
        // five segments delivers the two not yet counted.
        for _ in 0..3 {
            assert_eq!(r.delivered(0, 1460, false, true), 1);
        }
        assert_eq!(r.delivered(5 * 1460, 1460, false, false), 2);
        assert_eq!(r.delivered(2 * 1460, 1460, false, false), 2);
    }
}
