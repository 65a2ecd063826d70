//! A fixed window: the "window-limited reliable protocol without slow
//! start" a PEP may run over the satellite segment, where nothing is lost
//! to congestion (the gateway drops only before its PEP). The window never
//! grows or shrinks; losses are still repaired by the sender's loss
//! recovery and timer.

use super::{CongestionControl, Window};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
pub struct Fixed {
    /// Bytes.
    pub window: f64,
}

impl CongestionControl for Fixed {
    fn on_ack(
        &mut self,
        w: &mut Window,
        _acked: u64,
        _mss: u32,
        _rtt: Option<SimTime>,
        _now: SimTime,
    ) {
        w.cwnd = self.window;
    }

    fn ssthresh_after_loss(&mut self, _w: &Window, _flight: u64, _mss: u32) -> f64 {
        self.window
    }

    fn loss_window(&self, _w: &Window, _mss: u32) -> f64 {
        self.window
    }

    fn initial_window(&self, _configured: f64) -> f64 {
        self.window
    }
}
