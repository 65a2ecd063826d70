//! Typed indices into the simulator's entity vectors.

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u32);

        impl $name {
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A host or router.
    NodeId
);
id_type!(
    /// A unidirectional link with its output port.
    LinkId
);
id_type!(
    /// A transport flow (one TCP connection or one UDP stream).
    FlowId
);
id_type!(
    /// An application instance (traffic source or sink).
    AppId
);
id_type!(
    /// An AQM placed on a port (index into the simulation's AQMs).
    AqmId
);
id_type!(
    /// A PEP relay joining two TCP connections.
    RelayId
);

/// What made a flow: the traffic kind of its scenario entry, or a PEP that
/// opened it as the next segment of a split connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlowKind {
    Bulk,
    Cbr,
    Short,
    Web,
    WebMice,
    /// An ATSP bulk transfer.
    Atsp,
    /// A connection a PEP opened to carry another flow onward.
    Relay,
    /// A real connection (one 5-tuple, both directions) between two
    /// emulated hosts, carried by the simulator in real time.
    Real,
}

impl FlowKind {
    /// The kinds a scenario's `[[traffic]]` entries can create.
    pub const TRAFFIC: [FlowKind; 6] = [
        FlowKind::Bulk,
        FlowKind::Cbr,
        FlowKind::Short,
        FlowKind::Web,
        FlowKind::WebMice,
        FlowKind::Atsp,
    ];

    /// The name used in scenario files and result tables.
    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Bulk => "bulk",
            FlowKind::Cbr => "cbr",
            FlowKind::Short => "short",
            FlowKind::Web => "web",
            FlowKind::WebMice => "web_mice",
            FlowKind::Atsp => "atsp",
            FlowKind::Relay => "relay",
            FlowKind::Real => "real",
        }
    }

    /// The traffic kind named `name` (not `relay`, which no entry makes).
    pub fn traffic(name: &str) -> Option<FlowKind> {
        FlowKind::TRAFFIC.into_iter().find(|k| k.name() == name)
    }
}
