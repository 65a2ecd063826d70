//! A fixed window: the "window-limited reliable protocol without slow
//! start" a PEP may run over the satellite segment, where nothing is lost
//! to congestion (the gateway drops only before its PEP). The window never
//! grows or shrinks; losses are still repaired by the sender's loss
//! recovery and timer.

use super::{AckSample, CongestionControl, Signal, Window};

#[derive(Clone, Copy, Debug)]
pub struct Fixed {
    /// Bytes.
    pub window: f64,
}

impl CongestionControl for Fixed {
    fn on_ack(&mut self, w: &mut Window, _s: &AckSample) {
        w.cwnd = self.window;
    }

    fn ssthresh_after(&mut self, _w: &Window, _signal: Signal, _flight: u64, _mss: u32) -> f64 {
        self.window
    }

    fn loss_window(&self, _w: &Window, _mss: u32) -> f64 {
        self.window
    }

    fn initial_window(&self, _configured: f64) -> f64 {
        self.window
    }
}
