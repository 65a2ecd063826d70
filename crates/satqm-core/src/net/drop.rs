//! Why a packet left the network without being delivered, or was marked:
//! the reasons the drop log and the ports' counters use.

use crate::aqm::{Outcome, Reason};

/// Why a packet left the network without being delivered, or was marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer was full.
    Overflow = 0,
    /// Random erasure on the link (the scenario's `loss`).
    Erasure = 1,
    /// An AQM's random or virtual-queue signal, as a drop.
    EarlyDrop = 2,
    /// An AQM's deterministic region (RED above max_th), as a drop.
    ForcedDrop = 3,
    /// An AQM's early signal as an ECN mark (the packet goes on).
    EarlyMark = 4,
    /// An AQM's forced signal as an ECN mark.
    ForcedMark = 5,
    /// The link was down (a schedule's outage).
    Outage = 6,
}

impl DropReason {
    pub const ALL: [DropReason; 7] = [
        DropReason::Overflow,
        DropReason::Erasure,
        DropReason::EarlyDrop,
        DropReason::ForcedDrop,
        DropReason::EarlyMark,
        DropReason::ForcedMark,
        DropReason::Outage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Erasure => "erasure",
            DropReason::EarlyDrop => "early_drop",
            DropReason::ForcedDrop => "forced_drop",
            DropReason::EarlyMark => "early_mark",
            DropReason::ForcedMark => "forced_mark",
            DropReason::Outage => "outage",
        }
    }

    /// Marks leave the packet in the network.
    pub fn is_mark(self) -> bool {
        matches!(self, DropReason::EarlyMark | DropReason::ForcedMark)
    }

    /// How an AQM's signal was carried out (`None`: the packet passed).
    pub fn of(outcome: Outcome) -> Option<DropReason> {
        match outcome {
            Outcome::Passed => None,
            Outcome::Marked(Reason::Early) => Some(DropReason::EarlyMark),
            Outcome::Marked(Reason::Forced) => Some(DropReason::ForcedMark),
            Outcome::Dropped(Reason::Early) => Some(DropReason::EarlyDrop),
            Outcome::Dropped(Reason::Forced) => Some(DropReason::ForcedDrop),
        }
    }
}
