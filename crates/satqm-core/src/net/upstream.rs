//! What waits upstream of a port with backpressure: the packets of the
//! link's own node that found no room in its buffer, held in their host.
//!
//! The port decides only *that* a local sender's packet waits (the buffer
//! is full, others wait before it, or the host may not release it yet) and
//! lets waiting packets in as room frees. *Which* packet goes next and
//! *when* it may go is the host's: a gateway's PEP serves its connections'
//! buffers in turn and may pace its backbone (`gateway/held.rs`).

use crate::packet::Packet;
use crate::time::SimTime;

/// The host queue behind a port with backpressure, with each packet's
/// arrival index at the port.
pub trait Upstream: std::fmt::Debug + Send + Sync {
    /// Packets waiting.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A packet that found no room waits, after those already waiting.
    fn push_back(&mut self, pkt: Packet, index: u64);

    /// The size of the packet to let in next.
    fn front_size(&mut self) -> Option<u32>;

    /// The packet to let in next, taken out.
    fn pop_front(&mut self) -> Option<(Packet, u64)>;

    /// Does the host release its packets at a pace of its own?
    fn paced(&self) -> bool;

    /// May a packet of the host enter the port at `now`, as far as the
    /// pace goes?
    fn pace_ok(&self, now: SimTime) -> bool;

    /// A packet of `size` bytes from the host entered the port at `now`.
    fn entered(&mut self, now: SimTime, size: u32);

    /// When the port must look again at the waiting packets, for the pace
    /// (none if unpaced or nothing waits).
    fn next_release(&self) -> Option<SimTime>;
}
