//! When a TCP timer fires.
//!
//! satqm's timers are exact by default: a timeout of `d` armed at `now`
//! fires at `now + d`. Linux arms its TCP timers (retransmission, RACK's
//! reordering timeout, the tail loss probe and the delayed ACK) in
//! jiffies on the kernel's timer wheel (`kernel/time/timer.c`), which
//! makes each fire a little late:
//!
//! * the timeout is converted to whole ticks of `1/HZ` s, rounded up
//!   (`usecs_to_jiffies()`), and counted from the current tick;
//! * the wheel files a timer `Δ` ticks ahead in a level of granularity
//!   8^level ticks (level 0 below 63 ticks, level 1 below 504, level 2
//!   below 4,032, …) and rounds its expiry up to the next multiple of
//!   that granularity, never down (`calc_index()`, `calc_wheel_index()`):
//!   a timer due in 0.75 s at HZ = 250 (188 ticks, level 1) fires 4–32 ms
//!   after it is due, one due in 40 ms (10 ticks, level 0) 4–8 ms after.
//!
//! [`TimerClock::hz`] models that wheel for a kernel built with
//! `CONFIG_HZ = hz`; [`TimerClock::EXACT`] keeps the timers exact.

use crate::time::SimTime;

/// Ticks per level-granularity step (`LVL_CLK_SHIFT`): each level is 8
/// times coarser than the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// Buckets per level (`LVL_SIZE`, 64); a level takes timers up to
/// `(LVL_SIZE - 1) << (level * LVL_CLK_SHIFT)` ticks ahead.
const LVL_SIZE: u64 = 64;
/// The wheel's levels (`LVL_DEPTH` for HZ > 100): timers beyond the last
/// are filed in it.
const LVL_DEPTH: u32 = 9;

/// How a sender or receiver turns a timeout into the time its timer
/// fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerClock {
    /// The kernel's tick rate; 0 for exact timers.
    hz: u64,
    /// A tick in nanoseconds where that is a whole number (HZ = 100, 250,
    /// 1000, …), 0 otherwise.
    tick_ns: u64,
}

impl TimerClock {
    /// Timers fire exactly when due.
    pub const EXACT: TimerClock = TimerClock { hz: 0, tick_ns: 0 };

    /// Linux's timer wheel ticking `hz` times a second (0: exact).
    pub fn hz(hz: u32) -> TimerClock {
        let hz = hz as u64;
        let whole = hz > 0 && 1_000_000_000 % hz == 0;
        TimerClock {
            hz,
            tick_ns: if whole { 1_000_000_000 / hz } else { 0 },
        }
    }

    /// Whether timers fire on a tick (a timer wheel), not exactly.
    pub fn ticks(&self) -> bool {
        self.hz > 0
    }

    /// When a timer armed at `now` to expire after `timeout` fires.
    pub fn fires(&self, now: SimTime, timeout: SimTime) -> SimTime {
        if self.hz == 0 {
            return now + timeout;
        }
        if self.tick_ns > 0 {
            // Whole-nanosecond ticks: the same in 64 bits.
            let tick = self.tick_ns;
            let delta = timeout.ns().div_ceil(tick);
            return SimTime(bucket(now.ns() / tick + delta, delta) * tick);
        }
        let hz = self.hz as u128;
        let ns = 1_000_000_000u128;
        // The current tick (jiffies) and the timeout in whole ticks,
        // rounded up.
        let jiffies = (now.ns() as u128 * hz / ns) as u64;
        let delta = (timeout.ns() as u128 * hz).div_ceil(ns) as u64;
        // The tick it fires on begins at tick/hz seconds.
        SimTime((bucket(jiffies + delta, delta) as u128 * ns).div_ceil(hz) as u64)
    }
}

/// The tick a timer `delta` ticks ahead, expiring at tick `expires`,
/// fires on: the wheel files it at the level `delta` falls in and rounds
/// its expiry up to the next multiple of that level's granularity
/// (`calc_wheel_index()`, `calc_index()`).
fn bucket(expires: u64, delta: u64) -> u64 {
    let shift = level_for(delta) * LVL_CLK_SHIFT;
    ((expires >> shift) + 1) << shift
}

/// The wheel level a timer `delta` ticks ahead goes to
/// (`calc_wheel_index()`: level n starts at `LVL_START(n)`).
fn level_for(delta: u64) -> u32 {
    let mut level = 0;
    while level + 1 < LVL_DEPTH {
        let start = (LVL_SIZE - 1) << (level * LVL_CLK_SHIFT);
        if delta < start {
            break;
        }
        level += 1;
    }
    level
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::from_ms(v)
    }

    #[test]
    fn exact_timers_fire_when_due() {
        assert_eq!(TimerClock::EXACT.fires(ms(1_234), ms(750)), ms(1_984));
        assert!(!TimerClock::EXACT.ticks());
    }

    #[test]
    fn a_short_timer_fires_on_the_tick_after_its_expiry() {
        // HZ = 250: 4 ms ticks. Armed at 10 ms (tick 2) for 40 ms (10
        // ticks): expires at tick 12, level 0 rounds up to tick 13, 52 ms.
        let c = TimerClock::hz(250);
        assert_eq!(c.fires(ms(10), ms(40)), ms(52));
        // A timeout of part of a tick is a whole tick.
        assert_eq!(c.fires(ms(8), SimTime::from_us(1)), ms(16));
        // Armed just before a tick ends: counted from the tick it is in.
        assert_eq!(c.fires(SimTime::from_us(11_999), ms(40)), ms(52));
    }

    #[test]
    fn a_longer_timer_fires_on_its_levels_granularity() {
        let c = TimerClock::hz(250);
        // 62 ticks ahead: still level 0 (one tick late at most).
        assert_eq!(c.fires(SimTime::ZERO, ms(248)), ms(252));
        // 63 ticks: level 1, eight-tick (32 ms) buckets: tick 63 rounds
        // up to 64.
        assert_eq!(c.fires(SimTime::ZERO, ms(252)), ms(256));
        // An RTO of 756 ms (189 ticks) armed at tick 0: tick 192.
        assert_eq!(c.fires(SimTime::ZERO, ms(756)), ms(768));
        // Exactly on a bucket's edge: the next bucket (never early).
        assert_eq!(c.fires(SimTime::ZERO, ms(768)), ms(800));
        // 504 ticks and more: level 2, 64-tick (256 ms) buckets.
        assert_eq!(c.fires(SimTime::ZERO, ms(2_016)), ms(2_048));
        // Armed at tick 25 for 750 ticks: expires at 775, up to 832.
        assert_eq!(c.fires(ms(100), ms(3_000)), ms(3_328));
    }

    #[test]
    fn whole_nanosecond_ticks_take_a_shortcut_to_the_same_times() {
        for hz in [100u32, 250, 1000] {
            let fast = TimerClock::hz(hz);
            let general = TimerClock {
                hz: hz as u64,
                tick_ns: 0,
            };
            assert!(fast.tick_ns > 0);
            for k in 0..3_000u64 {
                let now = SimTime(k * 3_999_977);
                let timeout = SimTime(k * k * 7_919 % 20_000_000_000);
                assert_eq!(fast.fires(now, timeout), general.fires(now, timeout));
            }
        }
        assert_eq!(TimerClock::hz(300).tick_ns, 0);
    }

    #[test]
    fn a_timer_never_fires_before_it_is_due_nor_a_level_step_late() {
        for hz in [100u32, 250, 300, 1000] {
            let c = TimerClock::hz(hz);
            let tick = 1e9 / hz as f64;
            for k in 0..2_000u64 {
                let now = SimTime(k * 7_919_117);
                let timeout = SimTime(k * k * 3_001 % 5_000_000_000);
                let at = c.fires(now, timeout);
                assert!(
                    at >= now + timeout,
                    "hz {hz}: {at:?} before {:?}",
                    now + timeout
                );
                let delta = (timeout.ns() as f64 / tick).ceil();
                let gran = 8f64.powi(level_for(delta as u64) as i32);
                let late = (at.ns() - (now + timeout).ns()) as f64;
                assert!(late <= (gran + 1.0) * tick + 1.0, "hz {hz}: {late} ns late");
            }
        }
    }
}
