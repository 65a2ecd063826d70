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
