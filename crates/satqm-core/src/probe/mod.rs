//! Measurement: columnar records that the bindings hand to Python as
//! arrays without reshaping.
//!
//! Each record table is declared once, with [`columns!`]: the struct of
//! column vectors and its [`columns`](TimeSeries::columns) list, by name and
//! in order, come from the one declaration, so the bindings never name a
//! column. (The Python side declares each table's dtypes for pandas in
//! `satqm/results.py`; a test checks that it, the type stubs and these
//! tables agree.)

use crate::ids::FlowKind;

/// One column of a result table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Text(Vec<&'static str>),
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U8(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Text(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A type a result column can hold.
pub trait ColumnValue: Copy {
    fn column(values: Vec<Self>) -> Column;
}

macro_rules! column_value {
    ($($t:ty => $variant:ident),*) => {
        $(impl ColumnValue for $t {
            fn column(values: Vec<Self>) -> Column {
                Column::$variant(values)
            }
        })*
    };
}
column_value!(u8 => U8, u32 => U32, u64 => U64, f64 => F64, bool => Bool);

impl ColumnValue for FlowKind {
    fn column(values: Vec<Self>) -> Column {
        Column::Text(values.into_iter().map(FlowKind::name).collect())
    }
}

/// Declare a columnar record table: a struct of `Vec` columns with a
/// `columns()` list of them, by name, in declaration order.
///
/// A table whose last columns depend on the run (the AQMs' internals) ends
/// with `; pub name: NamedColumns,` after the fixed columns: its columns
/// follow the fixed ones.
macro_rules! columns {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* pub $field:ident : Vec<$ty:ty>, )*
            $( ; $(#[$xm:meta])* pub $xfield:ident : NamedColumns, )?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Default, Clone)]
        pub struct $name {
            $( $(#[$fm])* pub $field: Vec<$ty>, )*
            $( $(#[$xm])* pub $xfield: NamedColumns, )?
        }

        impl $name {
            /// Every column, by name, in order.
            pub fn columns(&self) -> Vec<(&'static str, Column)> {
                #[allow(unused_mut)]
                let mut cols = vec![$( (stringify!($field), <$ty as ColumnValue>::column(self.$field.clone())), )*];
                $( cols.extend(self.$xfield.columns()); )?
                cols
            }
        }
    };
}

impl std::ops::Index<&str> for NamedColumns {
    type Output = [f64];

    /// The column called `name`; panics if no row named it.
    fn index(&self, name: &str) -> &[f64] {
        self.get(name).unwrap_or_else(|| {
            panic!(
                "no column {name:?} (the run has {:?})",
                self.cols.iter().map(|c| c.0).collect::<Vec<_>>()
            )
        })
    }
}

/// Columns of numbers whose names come with the values, row by row (the
/// internals each AQM reports, [`crate::aqm::Probe`]): a column starts at
/// the first row that names it, with NaN in the rows before, and a row
/// that does not name a column gets NaN there. Columns keep the order
/// they first appeared in.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NamedColumns {
    rows: usize,
    cols: Vec<(&'static str, Vec<f64>)>,
}

impl NamedColumns {
    /// Add one row: `fill` writes its values by name, each name at most
    /// once.
    pub fn push_row(&mut self, fill: impl FnOnce(&mut crate::aqm::Probe)) {
        let rows = self.rows;
        let cols = &mut self.cols;
        fill(&mut |name: &'static str, v: f64| {
            let col = match cols.iter_mut().position(|(n, _)| *n == name) {
                Some(i) => &mut cols[i].1,
                None => {
                    cols.push((name, vec![f64::NAN; rows]));
                    &mut cols.last_mut().expect("just pushed").1
                }
            };
            debug_assert_eq!(col.len(), rows, "{name} written twice in a row");
            col.push(v);
        });
        self.rows += 1;
        for (_, c) in &mut self.cols {
            c.resize(self.rows, f64::NAN);
        }
    }

    /// The rows so far.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The column called `name`, if any row named it.
    pub fn get(&self, name: &str) -> Option<&[f64]> {
        self.cols
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c.as_slice())
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.cols.iter().map(|(n, _)| *n)
    }

    /// Every column, by name, in order.
    pub fn columns(&self) -> Vec<(&'static str, Column)> {
        self.cols
            .iter()
            .map(|(n, c)| (*n, Column::F64(c.clone())))
            .collect()
    }
}

/// Declare a row type whose result table is a list of rows: the struct and
/// a `columns(rows)` that turns rows into named columns, in declaration
/// order. Fields after `;` are kept in the row but not in the table.
macro_rules! rows {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* pub $field:ident : $ty:ty, )*
            ;
            $( $(#[$im:meta])* pub $ifield:ident : $ity:ty, )*
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone)]
        pub struct $name {
            $( $(#[$fm])* pub $field: $ty, )*
            $( $(#[$im])* pub $ifield: $ity, )*
        }

        impl $name {
            /// The table of `rows`: every column, by name, in order.
            pub fn columns(rows: &[$name]) -> Vec<(&'static str, Column)> {
                vec![$( (
                    stringify!($field),
                    <$ty as ColumnValue>::column(rows.iter().map(|r| r.$field).collect()),
                ), )*]
            }
        }
    };
}
pub(crate) use rows;

pub mod seq;
pub use seq::{SeqEvent, SeqTrace, SeqTracer};

columns! {
    /// One row per monitored link per sample interval; values describe the
    /// interval ending at `time_ns` (queue lengths are instantaneous at that time).
    pub struct TimeSeries {
        pub time_ns: Vec<u64>,
        pub link: Vec<u32>,
        /// Fraction of the interval the transmitter was busy.
        pub utilization: Vec<f64>,
        /// Bits serialized during the interval, per second.
        pub throughput_bps: Vec<f64>,
        pub queue_packets: Vec<u32>,
        pub queue_bytes: Vec<u64>,
        /// Mean queueing delay (sojourn in the buffer, `net/sojourn.rs`) of
        /// the packets that left the buffer during the interval, ms; NaN if
        /// none did.
        pub queue_delay_ms: Vec<f64>,
        pub drops: Vec<u64>,
        /// Packets that arrived at the port during the interval.
        pub arrivals: Vec<u64>,
        /// ECN marks made at the port during the interval.
        pub marks: Vec<u64>,
        ;
        /// The internals of the AQM acting at the link and of its buffer's
        /// discipline, as each names them (`aqm_avg`, `aqm_prob`, …;
        /// `docs/aqm.md` lists them by algorithm): one column per name any
        /// link reports, NaN on the rows of links that do not.
        pub aqm: NamedColumns,
    }
}

columns! {
    /// The state of each link that plays a schedule (`topology.*.schedule`):
    /// a row at the start, at every change of its schedule, and at every
    /// sample time. Empty when no link changes over time.
    pub struct LinkState {
        pub time_ns: Vec<u64>,
        pub link: Vec<u32>,
        /// The rate in force, bit/s.
        pub rate_bps: Vec<u64>,
        /// The propagation delay a packet whose serialization ends now
        /// gets, ns (the least one, with random delays).
        pub delay_ns: Vec<u64>,
        /// The erasure probability of this direction.
        pub loss: Vec<f64>,
        pub up: Vec<bool>,
    }
}

columns! {
    /// Each monitored link's queueing delays after the warm-up, as the
    /// histograms it keeps (`net/sojourn.rs`): one row per non-empty bucket,
    /// by link (in the time series' order), every packet's first, then the
    /// L4S packets' if any, shortest first.
    pub struct DelayHist {
        pub link: Vec<u32>,
        /// Which packets: 0 every packet, 1 those carrying ECT(1) (L4S).
        pub packets_of: Vec<u8>,
        /// The bucket's delays, ns, both ends included.
        pub delay_lo_ns: Vec<u64>,
        pub delay_hi_ns: Vec<u64>,
        pub packets: Vec<u64>,
    }
}

columns! {
    /// Every packet lost inside the network.
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
}

columns! {
    /// Congestion window of traced flows at each sample time.
    pub struct CwndTrace {
        pub time_ns: Vec<u64>,
        pub flow: Vec<u32>,
        pub cwnd_bytes: Vec<f64>,
        pub ssthresh_bytes: Vec<f64>,
        /// Payload bytes the flow has delivered in order so far (its rate over
        /// an interval is the difference of two samples).
        pub delivered_bytes: Vec<u64>,
        /// The pacing rate in force, bit/s of payload (NaN: unpaced).
        pub pacing_rate_bps: Vec<f64>,
        /// The congestion control's state: 0 for one without states; BBR
        /// 1 STARTUP, 2 DRAIN, 3 PROBE_BW, 4 PROBE_RTT; BBRv3 5-8 its
        /// PROBE_BW phases DOWN, CRUISE, REFILL, UP.
        pub cc_state: Vec<u8>,
        /// BBR's pacing and cwnd gains (NaN for other controls): the
        /// pacing gain shows PROBE_BW's cycle.
        pub pacing_gain: Vec<f64>,
        pub cwnd_gain: Vec<f64>,
        /// BBR's bottleneck-bandwidth estimate, bit/s of payload (NaN for
        /// other controls).
        pub bw_estimate_bps: Vec<f64>,
        /// BBR's min-RTT estimate, seconds (NaN for other controls or
        /// before a sample).
        pub min_rtt_s: Vec<f64>,
    }
}

columns! {
    /// Each traffic entry's payload bytes delivered in order to its
    /// receivers since the start of the run, at every sample time
    /// (`simulation.trace_traffic`); its rate over an interval is the
    /// difference of two samples. The count is the flows table's
    /// `bytes_delivered` summed over the entry's flows.
    pub struct TrafficTrace {
        pub time_ns: Vec<u64>,
        /// The traffic entry, by its index in `[[traffic]]`.
        pub traffic: Vec<u32>,
        pub delivered_bytes: Vec<u64>,
    }
}

columns! {
    /// Every congestion-window cut of every TCP sender (fast retransmit,
    /// timeout, ECN), for synchronization measures: how many connections cut
    /// their windows within the same round trip.
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
/// NaN when there is nothing to share out: no values, or all of them 0 (no
/// flow delivered anything), where the formula is 0/0.
pub fn jain_index(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        return f64::NAN;
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

    /// Nothing delivered, nothing to be fair about: undefined, not 1.
    #[test]
    fn jain_is_nan_when_no_flow_delivered() {
        assert!(jain_index(&[0.0, 0.0, 0.0]).is_nan());
        assert!(jain_index(&[0.0]).is_nan());
        assert!(jain_index(&[]).is_nan());
    }

    #[test]
    fn mean_std_population() {
        let (m, s) = mean_std([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter());
        assert_eq!(m, 5.0);
        assert_eq!(s, 2.0);
    }

    /// A column starts where it is first named, with NaN before; rows that
    /// do not name it get NaN; order is first appearance.
    #[test]
    fn named_columns_fill_the_gaps_with_nan() {
        let mut t = NamedColumns::default();
        t.push_row(|put| put("aqm_a", 1.0));
        t.push_row(|put| {
            put("aqm_b", 2.0);
            put("aqm_a", 3.0);
        });
        t.push_row(|_| {});
        assert_eq!(t.len(), 3);
        assert_eq!(t.names().collect::<Vec<_>>(), ["aqm_a", "aqm_b"]);
        let a = &t["aqm_a"];
        assert_eq!((a[0], a[1]), (1.0, 3.0));
        assert!(a[2].is_nan());
        let b = &t["aqm_b"];
        assert!(b[0].is_nan() && b[2].is_nan());
        assert_eq!(b[1], 2.0);
        assert!(t.get("aqm_c").is_none());
        let cols = t.columns();
        assert_eq!(cols.len(), 2);
        assert!(cols.iter().all(|(_, c)| c.len() == 3));
    }
}
