//! The send buffer: how much of what the application writes the socket
//! takes in, as Linux's does (`tcp_sendmsg()`, `sk_stream_memory_free()`
//! and `sk_stream_write_space()` in `net/core/stream.c`).
//!
//! Every segment not yet acknowledged keeps its memory, so a socket whose
//! buffer is full cannot take more data from the application, however
//! large cwnd is: on a long, fast path this, not cwnd, caps a single
//! connection's flight (with Linux's default `tcp_wmem[2]` of 4 MiB, about
//! 2,200 to 2,800 segments of 1,448 bytes: some 30 to 55 Mbit/s over a GEO
//! round trip).
//!
//! Memory is counted as Linux counts it: each buffer (`sk_buff`) costs its
//! payload plus [`BUFFER_OVERHEAD`]. Linux puts as many segments in one
//! buffer as it sends in about a millisecond at its pacing rate, at least
//! two (`tcp_tso_autosize()`), so the overhead per segment falls as the
//! rate grows; SACKed segments are merged into few buffers
//! (`tcp_shift_skb_data()`) and counted without overhead here.
//!
//! A writer blocked on a full buffer is woken only when a third of the
//! buffer is free again (free space at least half the memory in use,
//! `sk_stream_write_space()`); it then fills the buffer again. A bulk
//! sender's flight therefore swings between two thirds of the buffer and
//! all of it while the buffer, not cwnd, is the limit.

/// Memory Linux charges per buffer beyond its payload
/// (`SKB_TRUESIZE(MAX_TCP_HEADER)`: the `sk_buff`, its shared info and the
/// header room reserved in front of the data).
pub const BUFFER_OVERHEAD: u64 = 896;

/// Linux's largest segmentation-offload buffer, in segments of 1,448
/// bytes (`gso_max_size` 65,536).
const MAX_SEGS_PER_BUFFER: u64 = 45;

#[derive(Clone, Debug)]
pub struct SendBuffer {
    /// `SO_SNDBUF`: at most `net.ipv4.tcp_wmem[2]`, bytes of memory.
    size: u64,
    /// Bytes the application has written into the socket that are not
    /// yet sent.
    unsent: u64,
    /// The writer found the buffer full and sleeps until a third of it is
    /// free.
    blocked: bool,
}

impl SendBuffer {
    pub fn new(size: u64) -> SendBuffer {
        SendBuffer {
            size,
            unsent: 0,
            blocked: false,
        }
    }

    /// New data the socket holds and may send, given `written` bytes the
    /// application has beyond what was sent and `in_flight` bytes of
    /// memory held by unacknowledged segments; lets the writer fill the
    /// buffer if it is awake.
    pub fn sendable(&mut self, written: u64, in_flight: u64) -> u64 {
        self.unsent = self.unsent.min(written);
        let used = in_flight + self.unsent;
        if self.blocked && 3 * used > 2 * self.size {
            return self.unsent;
        }
        let want = written - self.unsent;
        let take = self.size.saturating_sub(used).min(want);
        self.unsent += take;
        self.blocked = take < want;
        self.unsent
    }

    /// The application waits for room: it has more to write than the
    /// buffer took in.
    pub fn writer_blocked(&self) -> bool {
        self.blocked
    }

    /// `len` bytes of it were sent.
    pub fn sent(&mut self, len: u64) {
        self.unsent = self.unsent.saturating_sub(len);
    }

    /// Memory per unacknowledged segment beyond its payload, for segments
    /// of `mss` bytes sent at `pacing_rate` bytes per second (`None`: not
    /// known yet, Linux's unlimited initial rate).
    pub fn overhead_per_segment(mss: u32, pacing_rate: Option<f64>) -> f64 {
        let per_buffer = match pacing_rate {
            // tcp_tso_autosize(): the bytes of 1/1024 s at the pacing rate.
            Some(r) => ((r / 1024.0) / mss as f64).floor() as u64,
            None => MAX_SEGS_PER_BUFFER,
        };
        BUFFER_OVERHEAD as f64 / per_buffer.clamp(2, MAX_SEGS_PER_BUFFER) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_writer_waits_for_a_third_of_the_buffer() {
        let mut b = SendBuffer::new(3000);
        // Unlimited data: the writer fills the buffer and blocks.
        assert_eq!(b.sendable(u64::MAX / 2, 0), 3000);
        b.sent(3000);
        // 3,000 bytes in flight: nothing more.
        assert_eq!(b.sendable(u64::MAX / 2, 3000), 0);
        // 2,100 in use: more than two thirds; still asleep.
        assert_eq!(b.sendable(u64::MAX / 2, 2100), 0);
        // 2,000: it wakes and fills the buffer again.
        assert_eq!(b.sendable(u64::MAX / 2, 2000), 1000);
        // A writer with little to write never blocks.
        let mut b = SendBuffer::new(3000);
        assert_eq!(b.sendable(500, 2800), 200);
        assert_eq!(b.sendable(500, 0), 500);
    }

    #[test]
    fn overhead_falls_with_the_rate() {
        // 10 Mbit/s: under two segments per millisecond, two per buffer.
        let slow = SendBuffer::overhead_per_segment(1448, Some(1.25e6));
        assert_eq!(slow, 448.0);
        // 100 Mbit/s at twice the rate in slow start: 16 per buffer.
        let fast = SendBuffer::overhead_per_segment(1448, Some(25e6));
        assert!((fast - 896.0 / 16.0).abs() < 1e-9, "{fast}");
        assert_eq!(SendBuffer::overhead_per_segment(1448, None), 896.0 / 45.0);
    }
}
