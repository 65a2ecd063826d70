//! Web mice: closed-loop users that each fetch a file of Pareto-distributed
//! size over a new TCP connection, think for an exponentially distributed
//! time once it has arrived, and fetch again, as the web traffic of the
//! parallel-virtual-queue paper (Jou, Tan, Baras 2003, Section II: HTTP
//! sessions with Pareto file sizes, K = 2.3 KB, alpha = 1.3, mean 10 KB, and
//! exponential think times of mean 50 s).
//!
//! ```text
//! size  = min(K / U^(1/alpha), max),  U uniform in (0, 1]    (bytes, at least 1)
//! think ~ Exponential(mean)
//! ```
//!
//! Each user draws from its own random stream, so adding users does not
//! change what the others draw.

use crate::rng::Rng;
use crate::time::SimTime;
use crate::transport::tcp::TcpConfig;

#[derive(Debug, Clone)]
pub struct WebMouse {
    /// The host pair it runs on (sender side serves the file).
    pub pair: u32,
    /// Pareto scale `K`, bytes.
    scale: f64,
    /// Pareto shape `alpha`.
    shape: f64,
    /// Largest file, bytes.
    max: Option<u64>,
    think_mean_s: f64,
    pub tcp: TcpConfig,
    /// No new fetch at or after this time.
    pub stop: Option<SimTime>,
    rng: Rng,
}

impl WebMouse {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        pair: u32,
        scale: f64,
        shape: f64,
        max: Option<u64>,
        think_mean: SimTime,
        tcp: TcpConfig,
        stop: Option<SimTime>,
        rng: Rng,
    ) -> WebMouse {
        WebMouse {
            pair,
            scale,
            shape,
            max,
            think_mean_s: think_mean.secs_f64(),
            tcp,
            stop,
            rng,
        }
    }

    /// Draw uniformly in `[lo, hi]` from the user's own stream (its start).
    pub fn uniform_time(&mut self, lo: SimTime, hi: SimTime) -> SimTime {
        SimTime(self.rng.uniform_u64(lo.ns(), hi.ns()))
    }

    /// The size of the next file, bytes.
    pub fn file_size(&mut self) -> u64 {
        let u = 1.0 - self.rng.uniform(); // (0, 1]
        let x = self.scale / u.powf(1.0 / self.shape);
        let x = match self.max {
            Some(m) => x.min(m as f64),
            None => x.min(1e12),
        };
        (x.round() as u64).max(1)
    }

    /// The next think time.
    pub fn think(&mut self) -> SimTime {
        SimTime::from_secs_f64(self.rng.exponential(self.think_mean_s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pareto_sizes_and_exponential_think_times() {
        let mut m = WebMouse::new(
            0,
            2300.0,
            1.3,
            None,
            SimTime::from_secs(50),
            TcpConfig::default(),
            None,
            Rng::stream(1, "web-mice", 0),
        );
        let n = 200_000;
        let sizes: Vec<u64> = (0..n).map(|_| m.file_size()).collect();
        assert!(sizes.iter().all(|&s| s >= 2300));
        // P[X > x] = (K/x)^alpha: at x = 4 K, 4^-1.3 = 0.1649.
        let tail = sizes.iter().filter(|&&s| s > 9200).count() as f64 / n as f64;
        assert!((tail - 0.1649).abs() < 0.005, "tail {tail}");
        // The median is K 2^(1/alpha) = 3,938 bytes.
        let mut s = sizes.clone();
        s.sort_unstable();
        let med = s[n / 2] as f64;
        assert!((med / 3938.0 - 1.0).abs() < 0.02, "median {med}");
        let think: f64 = (0..n).map(|_| m.think().secs_f64()).sum::<f64>() / n as f64;
        assert!((think / 50.0 - 1.0).abs() < 0.01, "mean think {think}");
        let mut capped = WebMouse::new(
            0,
            2300.0,
            1.3,
            Some(10_000),
            SimTime::from_secs(1),
            TcpConfig::default(),
            None,
            Rng::stream(1, "web-mice", 1),
        );
        assert!((0..10_000).all(|_| capped.file_size() <= 10_000));
    }
}
