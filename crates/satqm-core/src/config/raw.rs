//! The scenario file as written: serde structs that mirror the TOML, one
//! per table, with no rules beyond the file's shape.
//!
//! Unknown keys are refused here (`deny_unknown_fields`), and
//! `serde_path_to_error` gives the key path of any type error or missing
//! key. Every other rule is checked by the section's validator beside this
//! file; quantities stay as written ([`Quantity`]) until then.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, Error};
use crate::units::Quantity;

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(deserialize_with = "table::one")]
    pub simulation: RawSimulation,
    #[serde(deserialize_with = "table::one")]
    pub topology: RawTopology,
    #[serde(default, deserialize_with = "table::opt")]
    pub tcp: Option<RawTcp>,
    #[serde(default, deserialize_with = "table::list")]
    pub traffic: Vec<RawTraffic>,
    #[serde(default, deserialize_with = "table::opt_list")]
    pub aqm: Option<Vec<RawAqm>>,
    #[serde(default, deserialize_with = "table::opt_list")]
    pub pep: Option<Vec<RawPep>>,
    #[serde(default, deserialize_with = "table::opt")]
    pub emulation: Option<RawEmulation>,
    /// `[files]`: the text of files the scenario names (a link
    /// schedule's `trace`), carried in the scenario itself, by name.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The text of the files the caller read for it (the core does no
    /// file input of its own), by name; these take precedence.
    #[serde(skip)]
    pub read_files: BTreeMap<String, String>,
}

/// `[emulation]`: the real hosts of an emulation and their subnet.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawEmulation {
    /// Node names of the real hosts (default: the first host pair).
    pub hosts: Option<Vec<String>>,
    /// Their IPv4 subnet, e.g. "10.200.0.0/24".
    pub subnet: Option<String>,
    /// Keep time-sequence records of every real TCP connection.
    pub trace_seq: Option<bool>,
}

/// A performance-enhancing proxy splitting TCP connections at a node
/// (RFC 3135 TCP spoofing).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPep {
    /// Node name, e.g. "left".
    pub at: String,
    /// Per-connection buffer: bytes received and not yet acknowledged
    /// downstream.
    pub buffer: Option<Quantity>,
    /// TCP options of the connections the PEP opens downstream (overrides
    /// of `[tcp]`).
    #[serde(default, deserialize_with = "table::opt")]
    pub tcp: Option<RawTcp>,
    /// Order in which held-back backbone packets enter the transmit queue.
    pub scheduling: Option<String>,
    pub quantum: Option<Quantity>,
    pub pace_rate: Option<Quantity>,
    pub backbone_header: Option<i64>,
    pub packet_overhead: Option<i64>,
    pub frame_size: Option<Quantity>,
    pub frame_overhead: Option<i64>,
}

/// One active queue management instance: its placement, mode, and the
/// algorithm's own parameters (checked by the algorithm's parser).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct RawAqm {
    pub kind: String,
    pub at: Option<String>,
    pub monitor: Option<String>,
    pub mode: Option<String>,
    #[serde(flatten)]
    pub params: BTreeMap<String, toml::Value>,
}

/// `[simulation]`: run length, seed and what the sampler records.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSimulation {
    pub duration: Quantity,
    pub seed: Option<i64>,
    pub sample_interval: Option<Quantity>,
    pub warmup: Option<Quantity>,
    /// Flow ids whose congestion window the sampler records.
    pub trace_cwnd: Option<Vec<i64>>,
    /// Record each traffic entry's delivered bytes at every sample.
    pub trace_traffic: Option<bool>,
    /// Most memory the run may need, by the up-front estimate (bytes).
    pub max_memory: Option<Quantity>,
    /// Keep the per-packet drop log (the `drops` table): all of it, none,
    /// or its first N rows.
    pub log_drops: Option<RawLogDrops>,
    /// Flow ids whose packets are recorded for sequence graphs.
    pub trace_seq: Option<Vec<i64>>,
    /// Links to write a packet capture (pcapng) of.
    pub capture: Option<Vec<String>>,
    /// Which side of the links' queues to capture: "out", "in" or "both".
    pub capture_side: Option<String>,
    /// The capture's time window.
    pub capture_from: Option<Quantity>,
    pub capture_until: Option<Quantity>,
    /// Most bytes of each captured frame.
    pub capture_snaplen: Option<i64>,
}

/// `[topology]`: the keys of every kind; `config/topology.rs` refuses those
/// the chosen kind does not use.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTopology {
    pub kind: String,
    // dumbbell
    pub pairs: Option<i64>,
    #[serde(default, deserialize_with = "table::opt")]
    pub access: Option<RawLink>,
    #[serde(default, deserialize_with = "table::opt")]
    pub receiver_access: Option<RawLink>,
    #[serde(default, deserialize_with = "table::opt")]
    pub bottleneck: Option<RawLink>,
    // ipos
    pub servers: Option<i64>,
    pub clients: Option<i64>,
    #[serde(default, deserialize_with = "table::opt")]
    pub server_links: Option<RawLink>,
    #[serde(default, deserialize_with = "table::opt")]
    pub client_links: Option<RawLink>,
    #[serde(default, deserialize_with = "table::opt")]
    pub receive: Option<RawLink>,
    #[serde(default, deserialize_with = "table::opt")]
    pub downlink: Option<RawLink>,
    #[serde(default, deserialize_with = "table::opt")]
    pub uplink: Option<RawLink>,
    // dumbbell: other paths between the routers, and when traffic moves
    #[serde(default, deserialize_with = "table::opt_list")]
    pub alternates: Option<Vec<RawLink>>,
    pub route_changes: Option<Vec<RawRouteChange>>,
}

/// From `at` on, the traffic between the dumbbell's routers goes `via`
/// this path (`"bottleneck"` or `"alternate[K]"`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRouteChange {
    pub at: Quantity,
    pub via: String,
}

/// A delay: one value, a per-packet uniform range, a per-flow range, or a
/// per-flow list (the last two only for access links).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a delay such as \"5 ms\", { uniform = [\"300 ms\", \"400 ms\"] } (per packet), { min = \"5 ms\", max = \"100 ms\" } (per flow) or a list of per-flow delays"
)]
pub enum RawDelay {
    Fixed(Quantity),
    PerPacket { uniform: [Quantity; 2] },
    PerFlowRange { min: Quantity, max: Quantity },
    PerFlowList(Vec<Quantity>),
}

/// `simulation.log_drops`: every row, none, or at most a number of rows.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "true (every drop), false (none) or the most rows to keep"
)]
pub enum RawLogDrops {
    All(bool),
    Rows(i64),
}

/// A buffer limit: packets, or a table with packets or bytes.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a buffer size: a number of packets, { packets = N } or { bytes = \"64 KiB\" }"
)]
pub enum RawBuffer {
    Packets(i64),
    #[serde(deserialize_with = "table::one")]
    Table(RawBufferTable),
}

/// `{ packets = N }` or `{ bytes = "64 KiB" }` (exactly one of them).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawBufferTable {
    pub packets: Option<i64>,
    pub bytes: Option<Quantity>,
}

/// One link's table: rate, delay, erasure and buffers.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    pub rate: Quantity,
    pub delay: RawDelay,
    /// Packet erasure probability on the forward direction, applied
    /// independently to each packet.
    pub loss: Option<f64>,
    /// Erasure probability on the reverse direction (default 0).
    pub reverse_loss: Option<f64>,
    /// A full buffer holds back packets sent by the link's own node (a
    /// PEP's backbone) instead of dropping them: lossless backpressure.
    pub backpressure: Option<bool>,
    pub buffer: Option<RawBuffer>,
    /// Buffer of the reverse direction (defaults to `buffer`).
    pub reverse_buffer: Option<RawBuffer>,
    /// Packets of the device queue below the buffer (a NIC's transmit
    /// ring, ns-3's `NetDevice` queue); default 0, none.
    pub device_queue: Option<i64>,
    /// The reverse direction's (default 0).
    pub reverse_device_queue: Option<i64>,
    /// How the link's rate, delay, erasure and state change over time.
    pub schedule: Option<RawSchedule>,
}

/// A link's `schedule`: a list of changes or a trace file, and what an
/// outage and a falling delay do to its packets.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawSchedule {
    pub changes: Option<Vec<RawChange>>,
    /// A CSV file of `time,rate,delay,loss,reverse_loss,up` rows.
    pub trace: Option<String>,
    /// A mahimahi packet-delivery trace: the link's service.
    pub mahimahi: Option<String>,
    /// How a trace's rate and delay move between rows: "step" or "linear".
    pub interpolate: Option<String>,
    /// "in_order" or "reorder": whether a packet may overtake one sent
    /// before it when the delay falls.
    pub order: Option<String>,
    pub outage: Option<RawOutage>,
}

/// One change of a link's schedule.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawChange {
    pub at: Quantity,
    pub rate: Option<Quantity>,
    pub delay: Option<Quantity>,
    pub loss: Option<f64>,
    pub reverse_loss: Option<f64>,
    pub up: Option<bool>,
    /// The rate and delay reach the values given linearly over this long.
    pub ramp: Option<Quantity>,
}

/// What an outage does to the packets queued at the link and on it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutage {
    /// "keep" or "drop".
    pub queued: Option<String>,
    /// "drop", "deliver" or "delay".
    pub in_flight: Option<String>,
}

/// `[tcp]`, or an entry's `tcp` overrides of it: every key optional.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTcp {
    pub recovery: Option<String>,
    pub cc: Option<RawCc>,
    pub mss: Option<i64>,
    pub initial_window: Option<i64>,
    pub delayed_ack: Option<bool>,
    pub delayed_ack_timeout: Option<Quantity>,
    pub window_scaling: Option<bool>,
    pub receive_buffer: Option<Quantity>,
    pub send_buffer: Option<Quantity>,
    pub ecn: Option<RawEcn>,
    pub ecn_codepoint: Option<String>,
    pub rate_cap: Option<Quantity>,
    pub pacing: Option<bool>,
    pub min_rto: Option<Quantity>,
    pub max_rto: Option<Quantity>,
    pub initial_rto: Option<Quantity>,
    pub rto_rule: Option<String>,
    pub cc_rules: Option<String>,
    pub quickack: Option<i64>,
    pub adaptive_ack: Option<bool>,
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub prr: Option<bool>,
    pub handshake: Option<bool>,
    pub dupack_threshold: Option<i64>,
    pub hybla_rtt0: Option<Quantity>,
    pub fixed_window: Option<Quantity>,
    pub initial_ssthresh: Option<Quantity>,
    pub timestamps: Option<bool>,
    pub ecn_fallback: Option<bool>,
    pub receive_autotuning: Option<bool>,
    pub dsack: Option<bool>,
    pub tso_bursts: Option<bool>,
    pub timer_hz: Option<i64>,
    pub profile: Option<String>,
}

/// `ecn`: on or off, or the feedback by name.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "true, false, or an ECN feedback: \"off\", \"classic\", \"dctcp\", \"accecn\""
)]
pub enum RawEcn {
    On(bool),
    Name(String),
}

/// A congestion control: its name, or a table of its `kind` and
/// parameters (`[tcp.cc]`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a congestion control's name, or a table with its kind and parameters"
)]
pub enum RawCc {
    Name(String),
    Table(RawCcTable),
}

/// `[tcp.cc]`: `kind` and the parameters of that kind.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct RawCcTable {
    pub kind: String,
    #[serde(flatten)]
    pub params: BTreeMap<String, toml::Value>,
}

impl RawCc {
    pub fn kind(&self) -> &str {
        match self {
            RawCc::Name(n) => n,
            RawCc::Table(t) => &t.kind,
        }
    }
}

/// Selects dumbbell pairs: `"all"`, one index, or a list of indices.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "\"all\", a pair index, a list of pair indices, or { from = i, to = j }"
)]
pub enum RawPairs {
    All(String),
    One(i64),
    List(Vec<i64>),
    Range { from: i64, to: i64 },
}

/// When a traffic entry's flows start: one time, or uniform in a range.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    untagged,
    expecting = "a start time such as \"0 s\" or { uniform = [\"0 s\", \"1 s\"] }"
)]
pub enum RawStart {
    At(Quantity),
    Uniform { uniform: [Quantity; 2] },
}

/// One `[[traffic]]` entry: one flat table for every kind;
/// `config/traffic.rs` knows which keys each kind reads and refuses the
/// others by name.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTraffic {
    pub kind: String,
    pub pairs: Option<RawPairs>,
    pub start: Option<RawStart>,
    pub stop: Option<Quantity>,
    /// bulk: bytes to send ("unlimited" or absent for no limit).
    pub size: Option<Quantity>,
    /// cbr: sending rate.
    pub rate: Option<Quantity>,
    /// cbr: datagram payload bytes.
    pub packet_size: Option<i64>,
    /// bulk, short: overrides of the scenario's `[tcp]` table.
    #[serde(default, deserialize_with = "table::opt")]
    pub tcp: Option<RawTcp>,
    /// short: new flows per second (a Poisson process).
    pub arrival_rate: Option<f64>,
    /// web: connections kept open.
    pub connections: Option<i64>,
    /// web: start-up ramp, `step` new connections every `interval`.
    #[serde(default, deserialize_with = "table::opt")]
    pub ramp: Option<RawRamp>,
    /// web: page size, uniform in [min, max].
    #[serde(default, deserialize_with = "table::opt")]
    pub page_size: Option<RawRange>,
    /// web: user think time after each page.
    pub think_time: Option<Quantity>,
    /// web_mice: closed-loop users.
    pub sessions: Option<i64>,
    /// web_mice: Pareto file sizes.
    #[serde(default, deserialize_with = "table::opt")]
    pub pareto: Option<RawPareto>,
    /// web_mice: mean of the exponential think time.
    pub think_mean: Option<Quantity>,
    /// atsp: the protocol's parameters.
    pub atsp: Option<RawAtsp>,
}

/// `atsp = { ... }` of an ATSP traffic entry (validated in `config/atsp.rs`).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawAtsp {
    pub alpha: Option<i64>,
    pub beta: Option<f64>,
    pub i: Option<f64>,
    pub h: Option<f64>,
    pub w_max: Option<f64>,
    pub w_min: Option<f64>,
    pub packet_size: Option<i64>,
    pub header: Option<i64>,
    pub cut: Option<String>,
    pub initial_rtt: Option<Quantity>,
}

/// A Pareto distribution of sizes: `scale` (the smallest size, bytes),
/// `shape`, and an optional cap `max`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPareto {
    pub scale: Quantity,
    pub shape: f64,
    pub max: Option<Quantity>,
}

/// A start-up ramp: `step` more connections every `interval`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRamp {
    pub step: i64,
    pub interval: Quantity,
}

/// A range `{ min, max }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRange {
    pub min: Quantity,
    pub max: Quantity,
}

/// Tables where the file says a table goes. serde's derived structs also
/// accept a list as the table's fields in order, so `bottleneck =
/// ["10 Mbps", "50 ms", 0.0]` would be read as a link; every struct-typed
/// key deserializes through these instead, which accept a table only.
mod table {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::value::MapAccessDeserializer;
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

    /// `T` read from a table, refusing every other TOML value.
    struct Table<T>(T);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Table<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Only<T>(PhantomData<T>);
            impl<'de, T: Deserialize<'de>> Visitor<'de> for Only<T> {
                type Value = Table<T>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a table of keys")
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Table<T>, A::Error> {
                    T::deserialize(MapAccessDeserializer::new(map)).map(Table)
                }
            }
            d.deserialize_map(Only(PhantomData))
        }
    }

    pub fn one<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
        Table::deserialize(d).map(|t| t.0)
    }

    pub fn opt<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        one(d).map(Some)
    }

    /// A list of tables (`[[traffic]]`), each element a table.
    pub fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        struct Tables<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Tables<T> {
            type Value = Vec<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of tables")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(Table(t)) = seq.next_element::<Table<T>>()? {
                    out.push(t);
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Tables(PhantomData))
    }

    pub fn opt_list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<Vec<T>>, D::Error> {
        list(d).map(Some)
    }
}

impl RawScenario {
    /// Read TOML text into the file's shape; errors name the key path.
    pub fn from_toml(text: &str) -> Result<RawScenario, Error> {
        let de = toml::Deserializer::new(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = inner.message().to_string();
            if path.is_empty() || path == "." {
                // Missing top-level sections and TOML syntax errors.
                match missing_field(&msg) {
                    Some(field) => ConfigError::new(field, "is required").into(),
                    None => Error::Parse(inner.to_string().trim().to_string()),
                }
            } else {
                match missing_field(&msg) {
                    Some(field) => {
                        ConfigError::new(format!("{path}.{field}"), "is required").into()
                    }
                    None => ConfigError::new(path, plain(&msg)).into(),
                }
            }
        })
    }
}

/// A type error in the user's words: serde says "invalid type: string
/// \"two\", expected i64" or "expected struct RawLink"; the user reads
/// "must be an integer, got string \"two\"" or "must be a table". (A list
/// where a table goes never reaches a struct, see [`table`]; an untagged
/// enum's table variant may still report "invalid length 2, expected
/// struct …".)
fn plain(msg: &str) -> String {
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        if let Some((_, expected)) = rest.split_once(", expected ") {
            if expected.starts_with("struct ") {
                return "must be a table of keys, got a list".to_string();
            }
        }
    }
    for head in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = msg.strip_prefix(head) {
            if let Some((got, expected)) = rest.rsplit_once(", expected ") {
                let got = match got {
                    "sequence" => "a list",
                    "map" => "a table",
                    g => g,
                };
                return format!("must be {}, got {got}", expected_in_words(expected));
            }
        }
    }
    msg.to_string()
}

/// What serde's "expected …" means in a scenario file.
fn expected_in_words(expected: &str) -> &str {
    match expected {
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer",
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more)",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        "a sequence" => "a list",
        "a map" => "a table",
        e if e.starts_with("struct ") || e.starts_with("map ") => "a table of keys",
        e => e,
    }
}

/// The key serde reports as missing, if that is the error.
fn missing_field(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_string())
}

#[cfg(test)]
mod tests {
    use super::plain;
    use crate::config::testing::{err, BASE};

    #[test]
    fn type_errors_name_no_rust_types() {
        assert_eq!(
            plain("invalid type: string \"two\", expected i64"),
            "must be an integer, got string \"two\""
        );
        assert_eq!(
            plain("invalid type: string \"fast\", expected struct RawLink"),
            "must be a table of keys, got string \"fast\""
        );
        assert_eq!(
            plain("invalid type: map, expected a sequence"),
            "must be a list, got a table"
        );
        assert_eq!(
            plain("invalid type: sequence, expected a table of keys"),
            "must be a table of keys, got a list"
        );
        assert_eq!(
            plain("invalid length 2, expected struct RawLink with 7 elements"),
            "must be a table of keys, got a list"
        );
        assert_eq!(
            plain("invalid value: integer `-1`, expected u32"),
            "must be a whole number (0 or more), got integer `-1`"
        );
    }

    #[test]
    fn the_file_shape_is_enforced_with_key_paths() {
        assert!(
            err(&BASE.replace("buffer = 800", "buffer = 800\nbogus = 1"))
                .starts_with("topology.bottleneck.bogus: unknown field `bogus`")
        );
        assert_eq!(
            err(&BASE.replace("[simulation]\nduration = \"10 s\"", "")),
            "simulation: is required"
        );
        assert!(
            err(&BASE.replace("buffer = 800", "buffer = { packets = 3, bits = 4 }"))
                .starts_with("topology.bottleneck.buffer: a buffer size")
        );
    }

    #[test]
    fn a_number_without_a_unit_is_refused_with_the_fix() {
        let cases = [
            (
                BASE.replace("delay = \"290 ms\"", "delay = 270"),
                r#"topology.bottleneck.delay: 270 has no unit; write "270 ms" or "270 s""#,
            ),
            (
                BASE.replace("\"10 Mbps\"", "20"),
                r#"topology.bottleneck.rate: 20 has no unit; write "20 Mbps" or "20 kbps""#,
            ),
            (
                BASE.replace("duration = \"10 s\"", "duration = 10"),
                r#"simulation.duration: 10 has no unit; write "10 ms" or "10 s""#,
            ),
            (
                BASE.replace("buffer = 800", "buffer = { bytes = 65536 }"),
                r#"topology.bottleneck.buffer.bytes: 65536 has no unit; write "65536 B" or "64 KiB""#,
            ),
            (
                format!("{BASE}size = 1500\n"),
                r#"traffic[0].size: 1500 has no unit; write "1500 B" or "1.5 kB""#,
            ),
            (
                format!("{BASE}start = {{ uniform = [0, 2] }}\n"),
                r#"traffic[0].start.uniform[1]: 2 has no unit; write "2 ms" or "2 s""#,
            ),
            (
                format!("{BASE}[tcp]\nmin_rto = 1\n"),
                r#"tcp.min_rto: 1 has no unit; write "1 ms" or "1 s""#,
            ),
            (
                format!("{BASE}[[aqm]]\nkind = \"codel\"\nat = \"bottleneck\"\ntarget = 5\n"),
                r#"aqm[0].target: 5 has no unit; write "5 ms" or "5 s""#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(err(&text), want);
        }
        // 0 is the same in every unit.
        let zero = BASE.replace("duration = \"10 s\"", "duration = \"10 s\"\nwarmup = 0");
        assert_eq!(err(&format!("{zero}start = 0\n")), "ok");
    }
}
