//! The bytes a link's rate regulator counts for a packet beyond its IP
//! size: an encapsulation header per packet and a header per link frame.
//!
//! A satellite gateway carries IP packets in a link layer of its own (GSE,
//! ETSI TS 102 606, or ULE, RFC 4326, over MPEG-2 transport streams) inside
//! physical-layer frames (DVB-S2 BBFRAMEs, ETSI EN 302 307). Its regulator
//! counts what it transmits, so the IP rate it carries is below the
//! contracted rate. Each packet adds `per_packet` bytes; the packets fill
//! frames of `frame_data` bytes back to back (fragmented across frames, as
//! GSE and ULE allow), and each frame begun adds `frame_overhead` bytes. A
//! transmitter that runs out of packets closes its frame: the next packet
//! begins a new one (the padding of the closed frame is sent while the
//! link would be idle anyway, so it costs no time here).

/// A link's framing; all zero: none (the default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Framing {
    pub per_packet: u32,
    /// Bytes of packet data a frame carries; 0: no frames.
    pub frame_data: u32,
    pub frame_overhead: u32,
    /// Bytes of the current frame used.
    fill: u32,
}

impl Framing {
    pub fn new(per_packet: u32, frame_data: u32, frame_overhead: u32) -> Framing {
        Framing {
            per_packet,
            frame_data,
            frame_overhead,
            fill: 0,
        }
    }

    pub fn is_none(&self) -> bool {
        self.per_packet == 0 && self.frame_overhead == 0
    }

    /// The bytes the regulator counts for a packet of `size` bytes;
    /// `fresh`: the transmitter was idle (the last frame was closed).
    #[inline]
    pub fn wire_bytes(&mut self, size: u32, fresh: bool) -> u32 {
        let bytes = size + self.per_packet;
        if self.frame_data == 0 {
            return bytes;
        }
        if fresh {
            self.fill = 0;
        }
        let fd = self.frame_data as u64;
        let before = (self.fill as u64).div_ceil(fd);
        let after = self.fill as u64 + bytes as u64;
        let frames = after.div_ceil(fd) - before;
        self.fill = (after % fd) as u32;
        bytes + frames as u32 * self.frame_overhead
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_fill_frames_back_to_back() {
        // 1,000-byte data fields with 10-byte headers, 4 bytes per packet.
        let mut f = Framing::new(4, 1000, 10);
        assert_eq!(f.wire_bytes(496, true), 500 + 10, "opens a frame");
        assert_eq!(f.wire_bytes(496, false), 500, "fills it exactly");
        assert_eq!(f.wire_bytes(1496, false), 1500 + 20, "spans two more");
        assert_eq!(f.wire_bytes(96, false), 100, "in the half-used frame");
        assert_eq!(f.wire_bytes(96, true), 100 + 10, "idle: a new frame");
        // Over many packets the frame headers add frame_overhead per
        // frame_data bytes.
        let mut g = Framing::new(0, 1000, 10);
        let total: u32 = (0..1000).map(|_| g.wire_bytes(1500, false)).sum();
        assert_eq!(total, 1_500_000 + 1500 * 10);
        let mut none = Framing::default();
        assert!(none.is_none());
        assert_eq!(none.wire_bytes(1500, true), 1500);
    }
}
