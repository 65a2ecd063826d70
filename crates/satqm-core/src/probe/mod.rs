//! Measurement: columnar records that the bindings hand to Python as
//! arrays without reshaping.

/// One row per monitored link per sample interval; values describe the
/// interval ending at `time_ns` (queue lengths are instantaneous at that time).
#[derive(Debug, Default, Clone)]
pub struct TimeSeries {
    pub time_ns: Vec<u64>,
    pub link: Vec<u32>,
    /// Fraction of the interval the transmitter was busy.
    pub utilization: Vec<f64>,
    /// Bits serialized during the interval, per second.
    pub throughput_bps: Vec<f64>,
    pub queue_packets: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub drops: Vec<u64>,
    /// Packets that arrived at the port during the interval.
    pub arrivals: Vec<u64>,
    /// ECN marks made at the port during the interval.
    pub marks: Vec<u64>,
    /// Internals of the AQM acting at the link (NaN without one).
    pub aqm_avg: Vec<f64>,
    pub aqm_prob: Vec<f64>,
    pub aqm_vq_bytes: Vec<f64>,
    pub aqm_vcap_bps: Vec<f64>,
    pub aqm_price: Vec<f64>,
    pub aqm_max_p: Vec<f64>,
    pub aqm_qdelay: Vec<f64>,
    /// RED+Tail: the RED queue's thresholds (packets) and average drop
    /// probability.
    pub aqm_min_th: Vec<f64>,
    pub aqm_max_th: Vec<f64>,
    pub aqm_pd_avg: Vec<f64>,
    /// RED+Tail virtual queues (1: drop-tail, 2: RED): lengths at the
    /// sample time, service rates in force, bytes that arrived in the
    /// interval (dropped ones included), mean wait of the packets that
    /// started service in the interval.
    pub aqm_vq1_packets: Vec<f64>,
    pub aqm_vq2_packets: Vec<f64>,
    pub aqm_vq1_bytes: Vec<f64>,
    pub aqm_vq2_bytes: Vec<f64>,
    pub aqm_vq1_rate_bps: Vec<f64>,
    pub aqm_vq2_rate_bps: Vec<f64>,
    pub aqm_vq1_arrived_bytes: Vec<f64>,
    pub aqm_vq2_arrived_bytes: Vec<f64>,
    pub aqm_vq1_delay_s: Vec<f64>,
    pub aqm_vq2_delay_s: Vec<f64>,
}

/// Every packet lost inside the network.
#[derive(Debug, Default, Clone)]
pub struct DropLog {
    pub time_ns: Vec<u64>,
    pub link: Vec<u32>,
    pub flow: Vec<u32>,
    /// Index of the packet among all packets that arrived at that port.
    pub index: Vec<u64>,
    pub reason: Vec<u8>,
    /// True for data-carrying packets (TCP data, UDP), false for ACKs and
    /// handshake packets.
    pub data: Vec<bool>,
    pub size: Vec<u32>,
}

/// Congestion window of traced flows at each sample time.
#[derive(Debug, Default, Clone)]
pub struct CwndTrace {
    pub time_ns: Vec<u64>,
    pub flow: Vec<u32>,
    pub cwnd_bytes: Vec<f64>,
    pub ssthresh_bytes: Vec<f64>,
    /// Payload bytes the flow has delivered in order so far (its rate over
    /// an interval is the difference of two samples).
    pub delivered_bytes: Vec<u64>,
}

/// Every congestion-window cut of every TCP sender (fast retransmit,
/// timeout, ECN), for synchronization measures: how many connections cut
/// their windows within the same round trip.
#[derive(Debug, Default, Clone)]
pub struct CongestionLog {
    pub time_ns: Vec<u64>,
    /// The connection that cut (a PEP segment has its own flow id).
    pub flow: Vec<u32>,
    /// The end-to-end flow it carries.
    pub origin: Vec<u32>,
    /// `CutKind`: 0 fast retransmit, 1 timeout, 2 ECN.
    pub kind: Vec<u8>,
    pub cwnd_before: Vec<f64>,
    pub cwnd_after: Vec<f64>,
    pub ssthresh: Vec<f64>,
    /// Smoothed RTT at the cut, seconds (NaN before the first sample).
    pub srtt_s: Vec<f64>,
}

/// Mean and population standard deviation.
pub fn mean_std(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let (n, sum) = v.clone().fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = sum / n as f64;
    let var = v.map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    (mean, var.sqrt())
}

/// Jain's fairness index: (sum x)^2 / (n * sum x^2); 1 when all equal.
pub fn jain_index(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (x.len() as f64 * s2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_known_values() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        assert!((jain_index(&[3.0, 1.0]) - 16.0 / 20.0).abs() < 1e-12);
    }

    #[test]
    fn mean_std_population() {
        let (m, s) = mean_std([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter());
        assert_eq!(m, 5.0);
        assert_eq!(s, 2.0);
    }
}
