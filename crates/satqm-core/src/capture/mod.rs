//! Packet captures of chosen links, in the pcapng format that Wireshark,
//! tshark and tcpdump read: nanosecond timestamps, one Ethernet frame per
//! packet (`headers.rs` builds the frames), one file per link direction
//! and side of its queue.
//!
//! - **Departures** (`LINK`, interface `LINK-out`): what a tap on the wire
//!   after the queue sees: each packet the transmitter sends, stamped when
//!   its serialization starts. A packet the link erases (its `loss`) was
//!   sent: it is there, with a comment saying so.
//! - **Arrivals** (`LINK.in`, interface `LINK-in`): what a tap in front of
//!   the port sees: each packet that reaches it, stamped at its arrival, as
//!   it arrived (before any ECN mark); a packet the port refused at once (a
//!   full buffer, an AQM's drop on arrival) carries a comment naming why.
//!
//! Each file is one tap's view in the order its packets passed it, so the
//! TCP analysis of tshark, which follows a connection through a file in
//! order, sees what a real tap there would. A file holding both views
//! would show every packet twice to that analysis (it tracks a connection
//! by addresses and ports, whatever the interface): the views are apart,
//! and `mergecap` joins them, their interfaces named apart, for reading.
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

/// Which side of a link's queue a capture taps (`simulation.capture_side`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Side {
    /// Departures only: the wire after the queue.
    #[default]
    Out,
    /// Arrivals only: in front of the port, drops included.
    In,
    /// Both, in two files.
    Both,
}

impl Side {
    /// The names the scenario uses, by variant.
    pub const NAMES: [(&'static str, Side); 3] =
        [("out", Side::Out), ("in", Side::In), ("both", Side::Both)];

    pub fn parse(name: &str) -> Option<Side> {
        Side::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, s)| s)
    }

    /// Whether the departures are captured.
    pub fn departures(self) -> bool {
        matches!(self, Side::Out | Side::Both)
    }

    /// Whether the arrivals are captured.
    pub fn arrivals(self) -> bool {
        matches!(self, Side::In | Side::Both)
    }
}

/// What a capture sets: its links, side, time window and snap length.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureSpec {
    /// The names of the links to capture, as the scenario gives them (a
    /// link's name takes its `.reverse` direction too).
    pub links: Vec<String>,
    pub side: Side,
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
    /// Departures: the transmitter started sending it.
    Sent,
    /// Departures: sent, then erased on the link (its `loss`).
    Erased,
    /// Arrivals: the port took it in (to send, to queue or to hold back).
    Arrived,
    /// Arrivals: the port refused it, for the reason named.
    Dropped(&'static str),
}

impl Tap {
    fn departure(self) -> bool {
        matches!(self, Tap::Sent | Tap::Erased)
    }
}

/// No file.
const NONE: u32 = u32::MAX;

/// What one file of a link direction shows.
#[derive(Clone, Copy)]
enum View {
    Departures,
    Arrivals,
}

/// One link direction's capture of one side.
struct File {
    name: String,
    ends: (u32, u32),
    writer: PcapNgWriter<Vec<u8>>,
    packets: u64,
    /// What changed on the link (a schedule) since the last packet
    /// written: the next packet's comment says it.
    note: Option<String>,
}

/// The files of one link: indices in `Captures::files` (`NONE`: not
/// captured).
#[derive(Clone, Copy)]
struct Slot {
    out: u32,
    arrivals: u32,
}

/// A link to capture: its id, name, (from node, to node) and rate in
/// bit/s.
pub type Tapped = (LinkId, String, (u32, u32), u64);

/// The captures of a run. Links not captured cost one test of a flag per
/// packet (done by the caller through the link's flags).
pub struct Captures {
    slot: Vec<Slot>,
    files: Vec<File>,
    from: SimTime,
    until: SimTime,
    snaplen: u32,
    frame: Vec<u8>,
    /// The last arrival at a port whose arrivals are captured, written
    /// once the port has judged it: when the next one comes or when the
    /// files are read (see [`Captures::arriving`]).
    pending: Option<Arrival>,
}

/// An arrival not yet written.
struct Arrival {
    link: LinkId,
    at: SimTime,
    /// The packet as it arrived, before any mark.
    pkt: Packet,
    wire: FlowWire,
    /// A real packet's bytes.
    real: Option<Vec<u8>>,
    /// Why the port refused it, if it did.
    refused: Option<&'static str>,
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
            pending: None,
        }
    }

    /// Captures of `links` among `n_links`, by `spec`.
    pub fn new(spec: &CaptureSpec, n_links: usize, links: &[Tapped]) -> Captures {
        let mut c = Captures::none();
        c.slot = vec![
            Slot {
                out: NONE,
                arrivals: NONE,
            };
            n_links
        ];
        (c.from, c.until, c.snaplen) = (spec.from, spec.until, spec.snaplen);
        for (id, name, ends, rate) in links {
            if spec.side.departures() {
                c.slot[id.idx()].out = c.files.len() as u32;
                c.open(name, View::Departures, *ends, *rate);
            }
            if spec.side.arrivals() {
                c.slot[id.idx()].arrivals = c.files.len() as u32;
                c.open(name, View::Arrivals, *ends, *rate);
            }
        }
        c
    }

    /// Start the file of link `link`'s `view`: `LINK` with the interface
    /// `LINK-out` for the departures, `LINK.in` with `LINK-in` for the
    /// arrivals.
    fn open(&mut self, link: &str, view: View, ends: (u32, u32), rate: u64) {
        let (name, side, what) = match view {
            View::Departures => (link.to_owned(), "out", "departures (after the queue)"),
            View::Arrivals => (
                format!("{link}.in"),
                "in",
                "arrivals (before the queue, drops included)",
            ),
        };
        let mut writer = PcapNgWriter::new(Vec::new()).expect("writing to memory");
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::ETHERNET,
            snaplen: self.snaplen,
            options: vec![
                InterfaceDescriptionOption::IfName(Cow::Owned(format!("{link}-{side}"))),
                InterfaceDescriptionOption::IfDescription(Cow::Owned(format!(
                    "satqm link {link}: {what}"
                ))),
                InterfaceDescriptionOption::IfSpeed(rate),
                InterfaceDescriptionOption::IfTsResol(9),
            ],
        };
        writer.write_pcapng_block(idb).expect("writing to memory");
        self.files.push(File {
            name,
            ends,
            writer,
            packets: 0,
            note: None,
        });
    }

    /// Whether any link is captured.
    pub fn any(&self) -> bool {
        !self.files.is_empty()
    }

    /// Whether link `l`'s arrivals are captured.
    pub fn arrivals(&self, l: LinkId) -> bool {
        self.slot.get(l.idx()).is_some_and(|s| s.arrivals != NONE)
    }

    /// `pkt` (of a flow with wire settings `wire`) reaches link `l`'s port
    /// at `now`, before the port judges it. It is written to the arrivals
    /// once judged: the port judges a packet within the event it arrives
    /// in, so the next arrival, or the reading of the files, finds it
    /// judged. Each arrivals file thus keeps the order of its arrivals.
    pub fn arriving(
        &mut self,
        l: LinkId,
        now: SimTime,
        pkt: &Packet,
        wire: FlowWire,
        real: Option<&[u8]>,
    ) {
        self.write_pending();
        self.pending = Some(Arrival {
            link: l,
            at: now,
            pkt: *pkt,
            wire,
            real: real.map(<[u8]>::to_vec),
            refused: None,
        });
    }

    /// The port refused the packet with id `uid` at `now`, for `reason`:
    /// the arrival not yet written, if this is it, carries the reason. A
    /// packet refused later (an AQM deciding at dequeue) is written as it
    /// arrived: a packet that joins a queue at `now` cannot leave it
    /// before a later event.
    pub fn refused(&mut self, now: SimTime, uid: u64, reason: &'static str) {
        if let Some(a) = &mut self.pending {
            if a.pkt.uid == uid && a.at == now {
                a.refused = Some(reason);
            }
        }
    }

    /// Write the arrival not yet written, if any.
    fn write_pending(&mut self) {
        if let Some(a) = self.pending.take() {
            let tap = match a.refused {
                Some(reason) => Tap::Dropped(reason),
                None => Tap::Arrived,
            };
            self.record(a.link, a.at, &a.pkt, &a.wire, tap, a.real.as_deref());
        }
    }

    /// Write `pkt` (of a flow with wire settings `wire`; `real` its bytes if
    /// it is a real packet), seen on link `l` at `now` as `tap`, to the file
    /// of that side if it is captured.
    #[inline(never)]
    pub fn record(
        &mut self,
        l: LinkId,
        now: SimTime,
        pkt: &Packet,
        wire: &FlowWire,
        tap: Tap,
        real: Option<&[u8]>,
    ) {
        let Some(slot) = self.slot.get(l.idx()) else {
            return;
        };
        let at = if tap.departure() {
            slot.out
        } else {
            slot.arrivals
        };
        if at == NONE || now < self.from || now >= self.until {
            return;
        }
        let file = &mut self.files[at as usize];
        let len = headers::frame(&mut self.frame, pkt, file.ends, wire, real);
        let keep = len.min(self.snaplen as usize);
        self.frame.resize(keep, 0);
        let mut options = match tap {
            Tap::Sent | Tap::Arrived => Vec::new(),
            Tap::Erased => vec![EnhancedPacketOption::Comment(Cow::Borrowed(
                "satqm: erased on the link (loss)",
            ))],
            Tap::Dropped(reason) => vec![EnhancedPacketOption::Comment(Cow::Owned(format!(
                "satqm: dropped at the port ({reason})"
            )))],
        };
        if let Some(note) = file.note.take() {
            options.push(EnhancedPacketOption::Comment(Cow::Owned(note)));
        }
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

    /// Link `l`, whose departures are captured, changed at `now` (its
    /// schedule): the next packet written to its file carries `state` in
    /// a comment, after the changes before it.
    pub fn link_changed(&mut self, l: LinkId, now: SimTime, state: &str) {
        let Some(slot) = self.slot.get(l.idx()) else {
            return;
        };
        if slot.out == NONE || now < self.from || now >= self.until {
            return;
        }
        let file = &mut self.files[slot.out as usize];
        let line = format!("satqm: at {:.9} s the link is {state}", now.secs_f64());
        file.note = Some(match file.note.take() {
            Some(before) => format!("{before}; {line}"),
            None => line,
        });
    }

    /// Bytes written so far, over every file.
    pub fn bytes(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.writer.get_ref().len() as u64)
            .sum()
    }

    /// The captures: each file's name (`LINK` for a link direction's
    /// departures, `LINK.in` for its arrivals), its packets and its pcapng
    /// bytes.
    pub fn files(&mut self) -> Vec<(String, u64, &[u8])> {
        self.write_pending();
        self.files
            .iter()
            .map(|f| (f.name.clone(), f.packets, f.writer.get_ref().as_slice()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::packet::PacketKind;

    fn data(uid: u64) -> Packet {
        let mut p = Packet::new(uid, FlowId(0), NodeId(0), NodeId(3), PacketKind::TcpData);
        (p.seq, p.len, p.size) = (1460 * uid, 1460, 1500);
        p
    }

    fn captures(side: Side) -> Captures {
        let spec = CaptureSpec {
            links: vec!["bottleneck".into()],
            side,
            from: SimTime::ZERO,
            until: SimTime::from_secs_f64(10.0),
            snaplen: 96,
        };
        let l = (LinkId(1), "bottleneck".to_owned(), (1, 2), 1_000_000);
        Captures::new(&spec, 2, &[l])
    }

    fn count(haystack: &[u8], needle: &str) -> usize {
        haystack
            .windows(needle.len())
            .filter(|w| *w == needle.as_bytes())
            .count()
    }

    #[test]
    fn each_side_has_its_file_and_interface() {
        let mut c = captures(Side::Both);
        let wire = FlowWire::new(0, None, true, 1460);
        let t = SimTime::from_secs_f64(1.0);
        c.arriving(LinkId(1), t, &data(1), wire, None);
        c.record(LinkId(1), t, &data(1), &wire, Tap::Sent, None);
        // Another link, not captured.
        c.arriving(LinkId(0), t, &data(2), wire, None);
        let files = c.files();
        let names: Vec<_> = files.iter().map(|f| (f.0.as_str(), f.1)).collect();
        assert_eq!(names, [("bottleneck", 1), ("bottleneck.in", 1)]);
        assert_eq!(count(files[0].2, "bottleneck-out"), 1);
        assert_eq!(count(files[1].2, "bottleneck-in"), 1);
        let out = captures(Side::Out).files().len();
        let arrivals = captures(Side::In).files().len();
        assert_eq!((out, arrivals), (1, 1));
    }

    #[test]
    fn a_refusal_on_arrival_is_written_with_it_and_a_later_one_not() {
        let mut c = captures(Side::In);
        let wire = FlowWire::new(0, None, true, 1460);
        let (t1, t2) = (SimTime::from_secs_f64(1.0), SimTime::from_secs_f64(2.0));
        // Refused as it arrived.
        c.arriving(LinkId(1), t1, &data(1), wire, None);
        c.refused(t1, 1, "overflow");
        // Queued, then dropped at dequeue by an AQM, later.
        c.arriving(LinkId(1), t1, &data(2), wire, None);
        c.refused(t2, 2, "early_drop");
        // Another packet's refusal does not name this one.
        c.arriving(LinkId(1), t2, &data(3), wire, None);
        c.refused(t2, 9, "overflow");
        let files = c.files();
        assert_eq!(files[0].1, 3);
        assert_eq!(
            count(files[0].2, "satqm: dropped at the port (overflow)"),
            1
        );
        assert_eq!(count(files[0].2, "early_drop"), 0);
    }
}
