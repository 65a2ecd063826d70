//! A virtual queue: a byte counter drained at a rate, the core of GKVQ,
//! AVQ and AVQRED.

use crate::time::SimTime;

#[derive(Clone, Debug, Default)]
pub struct VirtualQueue {
    /// Bytes in the virtual queue.
    pub bytes: f64,
    /// Time of the last drain.
    pub last: SimTime,
}

impl VirtualQueue {
    /// Drain at `rate_bps` from the last drain time to `now`.
    pub fn drain(&mut self, now: SimTime, rate_bps: f64) -> f64 {
        let dt = now.saturating_sub(self.last).secs_f64();
        self.bytes = (self.bytes - rate_bps * dt / 8.0).max(0.0);
        self.last = now;
        dt
    }
}
