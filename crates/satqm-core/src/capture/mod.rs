//! Packet captures of chosen links, in the pcapng format that Wireshark,
//! tshark and tcpdump read: one file per link direction, nanosecond
//! timestamps, one Ethernet frame per packet the link transmits
//! (`headers.rs` builds the frames).
//!
//! Packets the link's port drops (a full buffer, an AQM's drop) and packets
//! the link erases (its `loss`) are in the capture too, at the time they
//! were lost, each with a comment saying so (`pkt_comment` in Wireshark);
//! ECN marks show in the IP header of the packet as transmitted.
//!
//! The files grow in memory during the run; [`Captures::files`] hands them
//! over at the end. A time window and a snap length bound their size.

pub mod headers;

use std::borrow::Cow;
use std::time::Duration;

use pcap_file::pcapng::blocks::enhanced_packet::{EnhancedPacketBlock, EnhancedPacketOption};
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;

pub use headers::FlowWire;

use crate::ids::LinkId;
use crate::packet::Packet;
use crate::time::SimTime;

/// What a capture sets: its time window and snap length.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureSpec {
    /// The names of the links to capture, as the scenario gives them (a
    /// link's name takes its `.reverse` direction too).
    pub links: Vec<String>,
    /// Packets from `from` (inclusive) to `until` (exclusive) are written.
    pub from: SimTime,
    pub until: SimTime,
    /// Most bytes of each frame written (headers first, then zeros for the
    /// payload).
    pub snaplen: u32,
}

/// How a packet appears in a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tap {
    /// The transmitter started sending it.
    Sent,
    /// Sent, then erased on the link (its `loss`).
    Erased,
    /// The port dropped it, for the reason named.
    Dropped(&'static str),
}

/// One link direction's capture.
struct File {
    name: String,
    ends: (u32, u32),
    writer: PcapNgWriter<Vec<u8>>,
    packets: u64,
}

/// The captures of a run. Links not captured cost one test of `slot` per
/// packet (done by the caller through the link's `captured` flag).
pub struct Captures {
    /// Index in `files` of each link's capture (`u32::MAX`: none).
    slot: Vec<u32>,
    files: Vec<File>,
    from: SimTime,
    until: SimTime,
    snaplen: u32,
    frame: Vec<u8>,
}

impl std::fmt::Debug for Captures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Captures")
            .field("files", &self.files.len())
            .finish()
    }
}

impl Captures {
    /// No capture at all.
    pub fn none() -> Captures {
        Captures {
            slot: Vec::new(),
            files: Vec::new(),
            from: SimTime::ZERO,
            until: SimTime::ZERO,
            snaplen: 0,
            frame: Vec::new(),
        }
    }

    /// Captures of `links` (id, name, (from node, to node), rate in bit/s)
    /// among `n_links`, by `spec`.
    pub fn new(
        spec: &CaptureSpec,
        n_links: usize,
        links: &[(LinkId, String, (u32, u32), u64)],
    ) -> Captures {
        let mut c = Captures::none();
        c.slot = vec![u32::MAX; n_links];
        (c.from, c.until, c.snaplen) = (spec.from, spec.until, spec.snaplen);
        for (id, name, ends, rate) in links {
            c.slot[id.idx()] = c.files.len() as u32;
            let mut writer = PcapNgWriter::new(Vec::new()).expect("writing to memory");
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::ETHERNET,
                snaplen: spec.snaplen,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(name.clone())),
                    InterfaceDescriptionOption::IfDescription(Cow::Owned(format!(
                        "satqm link {name}"
                    ))),
                    InterfaceDescriptionOption::IfSpeed(*rate),
                    InterfaceDescriptionOption::IfTsResol(9),
                ],
            };
            writer.write_pcapng_block(idb).expect("writing to memory");
            c.files.push(File {
                name: name.clone(),
                ends: *ends,
                writer,
                packets: 0,
            });
        }
        c
    }

    /// Whether any link is captured.
    pub fn any(&self) -> bool {
        !self.files.is_empty()
    }

    /// Whether link `l` is captured.
    pub fn captures(&self, l: LinkId) -> bool {
        self.slot.get(l.idx()).is_some_and(|&s| s != u32::MAX)
    }

    /// Write `pkt` (of a flow with wire settings `wire`), seen on link `l`
    /// at `now` as `tap`.
    #[inline(never)]
    pub fn record(&mut self, l: LinkId, now: SimTime, pkt: &Packet, wire: &FlowWire, tap: Tap) {
        let Some(&slot) = self.slot.get(l.idx()) else {
            return;
        };
        if slot == u32::MAX || now < self.from || now >= self.until {
            return;
        }
        let file = &mut self.files[slot as usize];
        let len = headers::frame(&mut self.frame, pkt, file.ends, wire);
        let keep = len.min(self.snaplen as usize);
        self.frame.resize(keep, 0);
        let options = match tap {
            Tap::Sent => Vec::new(),
            Tap::Erased => vec![EnhancedPacketOption::Comment(Cow::Borrowed(
                "satqm: erased on the link (loss)",
            ))],
            Tap::Dropped(reason) => vec![EnhancedPacketOption::Comment(Cow::Owned(format!(
                "satqm: dropped at the port ({reason})"
            )))],
        };
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: Duration::from_nanos(now.ns()),
            original_len: len as u32,
            data: Cow::Borrowed(&self.frame),
            options,
        };
        file.writer
            .write_pcapng_block(epb)
            .expect("writing to memory");
        file.packets += 1;
    }

    /// Bytes written so far, over every file.
    pub fn bytes(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.writer.get_ref().len() as u64)
            .sum()
    }

    /// The captures: each link direction's name, its packets and its pcapng
    /// bytes.
    pub fn files(&self) -> Vec<(String, u64, &[u8])> {
        self.files
            .iter()
            .map(|f| (f.name.clone(), f.packets, f.writer.get_ref().as_slice()))
            .collect()
    }
}
