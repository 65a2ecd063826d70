//! Validates `[[traffic]]` entries into [`Traffic`]: the host pairs, start
//! and stop common to every entry, then one short function per kind (bulk,
//! cbr, short, web, web_mice, atsp).
//!
//! An entry is one flat table whatever its kind ([`RawTraffic`]); the list
//! of keys each kind reads ([`Kind::reads`]) lets a key meant for another
//! kind be refused by name (`traffic[0].rate: is not used by traffic of
//! kind "bulk"`).

use crate::error::ConfigError;
use crate::time::{Rate, SimTime};
use crate::transport::atsp::AtspConfig;
use crate::transport::tcp::TcpConfig;
use crate::units::{int_in, quantity_bytes, quantity_rate, quantity_time, Quantity};

use super::raw::{RawPairs, RawStart, RawTcp, RawTraffic};
use super::tcp::tcp_for;

/// When an entry's flows start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StartSpec {
    At(SimTime),
    /// Each flow's start drawn uniformly in the range.
    Uniform(SimTime, SimTime),
}

/// What an entry sends, and how.
#[derive(Clone, Debug, PartialEq)]
pub enum TrafficKind {
    /// FTP-like bulk transfer over TCP; `size: None` is unlimited.
    Bulk { size: Option<u64>, tcp: TcpConfig },
    /// Constant bit rate over UDP.
    Cbr { rate: Rate, packet_size: u32 },
    /// Short TCP transfers of `size` bytes arriving as a Poisson process of
    /// `arrival_rate` flows per second, each on a pair drawn uniformly from
    /// the entry's pairs (the AVQ paper's "short flows of 20 packets").
    Short {
        size: u64,
        arrival_rate: f64,
        tcp: TcpConfig,
    },
    /// HTTP-like closed loop (the AVQRED emulation): `connections` slots,
    /// opened `ramp_step` at a time every `ramp_interval`; each slot fetches
    /// a page of uniform size from a random server to a random client over
    /// TCP, waits `think_time` once it has arrived, then opens a new
    /// connection.
    Web {
        connections: u32,
        ramp_step: u32,
        ramp_interval: SimTime,
        page_min: u64,
        page_max: u64,
        think_time: SimTime,
        tcp: TcpConfig,
    },
    /// Web mice (the parallel-VQ paper's web traffic): `sessions` users,
    /// spread over the entry's pairs in turn; each fetches a file of Pareto
    /// size (`scale` bytes, `shape`, capped at `max`) over a new TCP
    /// connection, thinks for an exponential time of mean `think_mean`
    /// once it has arrived, and fetches again.
    WebMice {
        sessions: u32,
        scale: f64,
        shape: f64,
        max: Option<u64>,
        think_mean: SimTime,
        tcp: TcpConfig,
    },
    /// An unlimited ATSP transfer on each pair (`transport/atsp/`).
    Atsp(AtspConfig),
}

/// One validated `[[traffic]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Traffic {
    pub kind: TrafficKind,
    pub pairs: Vec<u32>,
    pub start: StartSpec,
    pub stop: Option<SimTime>,
}

/// The traffic kinds a scenario may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bulk,
    Cbr,
    Short,
    Web,
    WebMice,
    Atsp,
}

impl Kind {
    fn from_name(name: &str) -> Option<Kind> {
        match name {
            "bulk" | "ftp" => Some(Kind::Bulk),
            "cbr" => Some(Kind::Cbr),
            "short" => Some(Kind::Short),
            "web" => Some(Kind::Web),
            "web_mice" => Some(Kind::WebMice),
            "atsp" => Some(Kind::Atsp),
            _ => None,
        }
    }

    /// The keys this kind reads among those only some kinds read (every
    /// kind reads `kind`, `start` and `stop`). An unknown kind is refused by
    /// its name, after the keys that belong to one known kind only.
    fn reads(kind: Option<Kind>) -> &'static [&'static str] {
        match kind {
            Some(Kind::Bulk) => &["pairs", "size", "tcp"],
            Some(Kind::Cbr) => &["pairs", "rate", "packet_size"],
            Some(Kind::Short) => &["pairs", "size", "arrival_rate", "tcp"],
            Some(Kind::Web) => &["connections", "ramp", "page_size", "think_time", "tcp"],
            Some(Kind::WebMice) => &["pairs", "sessions", "pareto", "think_mean", "tcp"],
            Some(Kind::Atsp) => &["pairs", "atsp"],
            None => &["pairs", "size", "tcp", "rate", "packet_size"],
        }
    }
}

/// Every entry of `[[traffic]]`; at least one is required unless the
/// scenario is `emulated` (its real hosts may be all its traffic).
/// `tcp_base` is the scenario's `[tcp]` table, `n_pairs` the host pairs the
/// topology offers.
pub(super) fn traffic(
    raw: &[RawTraffic],
    tcp_base: &RawTcp,
    n_pairs: u32,
    duration: SimTime,
    emulated: bool,
) -> Result<Vec<Traffic>, ConfigError> {
    if raw.is_empty() && !emulated {
        return Err(ConfigError::new(
            "traffic",
            "required: at least one traffic source (or an [emulation] section with real hosts)",
        ));
    }
    raw.iter()
        .enumerate()
        .map(|(i, t)| entry(t, &format!("traffic[{i}]"), tcp_base, n_pairs, duration))
        .collect()
}

fn entry(
    t: &RawTraffic,
    path: &str,
    tcp_base: &RawTcp,
    n_pairs: u32,
    duration: SimTime,
) -> Result<Traffic, ConfigError> {
    let pairs = pairs(t.pairs.as_ref(), path, n_pairs)?;
    let start = start(t.start.as_ref(), path, duration)?;
    let stop = stop(t.stop.as_ref(), path, start)?;
    let kind = Kind::from_name(&t.kind);
    refuse_unread(t, path, kind)?;
    let kind = match kind {
        Some(Kind::Bulk) => bulk(t, path, tcp_base)?,
        Some(Kind::Cbr) => cbr(t, path)?,
        Some(Kind::Short) => short(t, path, tcp_base)?,
        Some(Kind::Web) => web(t, path, tcp_base)?,
        Some(Kind::WebMice) => web_mice(t, path, tcp_base)?,
        Some(Kind::Atsp) => TrafficKind::Atsp(super::atsp::atsp(t.atsp.as_ref(), path)?),
        None => {
            return Err(ConfigError::new(
                format!("{path}.kind"),
                format!(
                    "unknown traffic kind {:?} (known: bulk, cbr, short, web, web_mice, atsp)",
                    t.kind
                ),
            ))
        }
    };
    Ok(Traffic {
        kind,
        pairs,
        start,
        stop,
    })
}

/// Refuse the first key set that the entry's kind does not read.
fn refuse_unread(t: &RawTraffic, path: &str, kind: Option<Kind>) -> Result<(), ConfigError> {
    // In checking order: the first key set that the kind does not read is
    // the one reported.
    let present = [
        ("arrival_rate", t.arrival_rate.is_some()),
        ("sessions", t.sessions.is_some()),
        ("pareto", t.pareto.is_some()),
        ("think_mean", t.think_mean.is_some()),
        ("connections", t.connections.is_some()),
        ("ramp", t.ramp.is_some()),
        ("page_size", t.page_size.is_some()),
        ("think_time", t.think_time.is_some()),
        ("rate", t.rate.is_some()),
        ("packet_size", t.packet_size.is_some()),
        ("size", t.size.is_some()),
        ("pairs", t.pairs.is_some()),
        ("tcp", t.tcp.is_some()),
        ("atsp", t.atsp.is_some()),
    ];
    let reads = Kind::reads(kind);
    for (key, set) in present {
        if set && !reads.contains(&key) {
            return Err(ConfigError::new(
                format!("{path}.{key}"),
                format!("is not used by traffic of kind {:?}", t.kind),
            ));
        }
    }
    Ok(())
}

/// The pairs an entry runs on (all of them if absent).
fn pairs(p: Option<&RawPairs>, path: &str, n_pairs: u32) -> Result<Vec<u32>, ConfigError> {
    let last = n_pairs as i64 - 1;
    match p {
        None => Ok((0..n_pairs).collect()),
        Some(RawPairs::All(s)) if s == "all" => Ok((0..n_pairs).collect()),
        Some(RawPairs::All(s)) => Err(ConfigError::new(
            format!("{path}.pairs"),
            format!("expected \"all\", a pair index or a list, got {s:?}"),
        )),
        Some(RawPairs::One(i)) => Ok(vec![int_in(*i, &format!("{path}.pairs"), 0, last)? as u32]),
        Some(RawPairs::Range { from, to }) => {
            let lo = int_in(*from, &format!("{path}.pairs.from"), 0, last)?;
            let hi = int_in(*to, &format!("{path}.pairs.to"), 0, last)?;
            if lo > hi {
                return Err(ConfigError::new(
                    format!("{path}.pairs"),
                    "from must be <= to",
                ));
            }
            Ok((lo as u32..=hi as u32).collect())
        }
        Some(RawPairs::List(v)) => {
            if v.is_empty() {
                return Err(ConfigError::new(format!("{path}.pairs"), "is empty"));
            }
            v.iter()
                .enumerate()
                .map(|(j, i)| Ok(int_in(*i, &format!("{path}.pairs[{j}]"), 0, last)? as u32))
                .collect()
        }
    }
}

/// When the entry's flows start (0 if absent): before the run ends.
fn start(s: Option<&RawStart>, path: &str, duration: SimTime) -> Result<StartSpec, ConfigError> {
    let start = match s {
        None => StartSpec::At(SimTime::ZERO),
        Some(RawStart::At(q)) => StartSpec::At(quantity_time(q, &format!("{path}.start"), true)?),
        Some(RawStart::Uniform { uniform: [a, b] }) => {
            let lo = quantity_time(a, &format!("{path}.start.uniform[0]"), true)?;
            let hi = quantity_time(b, &format!("{path}.start.uniform[1]"), true)?;
            if lo > hi {
                return Err(ConfigError::new(
                    format!("{path}.start"),
                    "uniform range must have low <= high",
                ));
            }
            StartSpec::Uniform(lo, hi)
        }
    };
    let earliest = match start {
        StartSpec::At(s) => s,
        StartSpec::Uniform(s, _) => s,
    };
    if earliest >= duration {
        return Err(ConfigError::new(
            format!("{path}.start"),
            "must be before simulation.duration",
        ));
    }
    Ok(start)
}

/// When the entry's flows stop, if they do: after the latest start.
fn stop(
    q: Option<&Quantity>,
    path: &str,
    start: StartSpec,
) -> Result<Option<SimTime>, ConfigError> {
    let Some(q) = q else { return Ok(None) };
    let s = quantity_time(q, &format!("{path}.stop"), false)?;
    let latest = match start {
        StartSpec::At(s) => s,
        StartSpec::Uniform(_, hi) => hi,
    };
    if s <= latest {
        return Err(ConfigError::new(
            format!("{path}.stop"),
            "must be after start",
        ));
    }
    Ok(Some(s))
}

/// `v`, or the error that `key` is required for `what`.
fn required<'a, T>(
    v: &'a Option<T>,
    path: &str,
    key: &str,
    what: &str,
) -> Result<&'a T, ConfigError> {
    v.as_ref()
        .ok_or_else(|| ConfigError::new(format!("{path}.{key}"), format!("is required for {what}")))
}

fn bulk(t: &RawTraffic, path: &str, tcp_base: &RawTcp) -> Result<TrafficKind, ConfigError> {
    let size = match &t.size {
        None => None,
        Some(Quantity::Text(s)) if s == "unlimited" => None,
        Some(q) => Some(quantity_bytes(q, &format!("{path}.size"))?),
    };
    let tcp = tcp_for(tcp_base, t.tcp.as_ref(), &format!("{path}.tcp"))?;
    Ok(TrafficKind::Bulk { size, tcp })
}

/// The shortest time a source may leave between two packets: ten million
/// packets a second (120 Gbit/s of 1,500-byte packets). A source paced
/// faster is a slip of units, not a network, and would hold or drop
/// packets by the billion.
pub(super) const MIN_PACKET_GAP: SimTime = SimTime(100);

fn cbr(t: &RawTraffic, path: &str) -> Result<TrafficKind, ConfigError> {
    let rate = required(&t.rate, path, "rate", "cbr traffic")?;
    let rate = quantity_rate(rate, &format!("{path}.rate"))?;
    let packet_size = match t.packet_size {
        Some(p) => int_in(p, &format!("{path}.packet_size"), 1, 65_507)? as u32,
        None => 1000,
    };
    let gap = rate.tx_time(packet_size);
    if gap < MIN_PACKET_GAP {
        return Err(ConfigError::new(
            format!("{path}.rate"),
            format!(
                "sends a {packet_size}-byte packet every {} ns, faster than satqm paces a \
                 source (packets at least {} ns apart): at most {} bit/s at this packet_size",
                gap.ns(),
                MIN_PACKET_GAP.ns(),
                packet_size as u64 * 8 * 1_000_000_000 / MIN_PACKET_GAP.ns(),
            ),
        ));
    }
    Ok(TrafficKind::Cbr { rate, packet_size })
}

fn short(t: &RawTraffic, path: &str, tcp_base: &RawTcp) -> Result<TrafficKind, ConfigError> {
    let size = required(&t.size, path, "size", "short flows")?;
    let size = quantity_bytes(size, &format!("{path}.size"))?;
    let arrival_rate = *required(&t.arrival_rate, path, "arrival_rate", "short flows")?;
    if !(arrival_rate.is_finite() && arrival_rate > 0.0 && arrival_rate <= 1e6) {
        return Err(ConfigError::new(
            format!("{path}.arrival_rate"),
            "must be in (0, 1e6] flows per second",
        ));
    }
    let tcp = tcp_for(tcp_base, t.tcp.as_ref(), &format!("{path}.tcp"))?;
    Ok(TrafficKind::Short {
        size,
        arrival_rate,
        tcp,
    })
}

fn web(t: &RawTraffic, path: &str, tcp_base: &RawTcp) -> Result<TrafficKind, ConfigError> {
    let connections = *required(&t.connections, path, "connections", "web traffic")?;
    let connections = int_in(connections, &format!("{path}.connections"), 1, 1_000_000)? as u32;
    let (ramp_step, ramp_interval) = match &t.ramp {
        Some(r) => (
            int_in(r.step, &format!("{path}.ramp.step"), 1, 1_000_000)? as u32,
            quantity_time(&r.interval, &format!("{path}.ramp.interval"), true)?,
        ),
        None => (connections, SimTime::ZERO),
    };
    let page = required(&t.page_size, path, "page_size", "web traffic")?;
    let page_min = quantity_bytes(&page.min, &format!("{path}.page_size.min"))?;
    let page_max = quantity_bytes(&page.max, &format!("{path}.page_size.max"))?;
    if page_min > page_max {
        return Err(ConfigError::new(
            format!("{path}.page_size"),
            "min must be <= max",
        ));
    }
    let think_time = match &t.think_time {
        Some(q) => quantity_time(q, &format!("{path}.think_time"), true)?,
        None => SimTime::ZERO,
    };
    let tcp = tcp_for(tcp_base, t.tcp.as_ref(), &format!("{path}.tcp"))?;
    Ok(TrafficKind::Web {
        connections,
        ramp_step,
        ramp_interval,
        page_min,
        page_max,
        think_time,
        tcp,
    })
}

fn web_mice(t: &RawTraffic, path: &str, tcp_base: &RawTcp) -> Result<TrafficKind, ConfigError> {
    let sessions = *required(&t.sessions, path, "sessions", "web_mice")?;
    let sessions = int_in(sessions, &format!("{path}.sessions"), 1, 1_000_000)? as u32;
    let par = required(&t.pareto, path, "pareto", "web_mice")?;
    let scale = quantity_bytes(&par.scale, &format!("{path}.pareto.scale"))? as f64;
    if !par.shape.is_finite() || par.shape <= 0.0 || par.shape > 100.0 {
        return Err(ConfigError::new(
            format!("{path}.pareto.shape"),
            "must be in (0, 100]",
        ));
    }
    let max = match &par.max {
        None => None,
        Some(q) => {
            let m = quantity_bytes(q, &format!("{path}.pareto.max"))?;
            if (m as f64) < scale {
                return Err(ConfigError::new(
                    format!("{path}.pareto.max"),
                    "must be at least pareto.scale",
                ));
            }
            Some(m)
        }
    };
    let think_mean = required(&t.think_mean, path, "think_mean", "web_mice")?;
    let think_mean = quantity_time(think_mean, &format!("{path}.think_mean"), true)?;
    let tcp = tcp_for(tcp_base, t.tcp.as_ref(), &format!("{path}.tcp"))?;
    Ok(TrafficKind::WebMice {
        sessions,
        scale,
        shape: par.shape,
        max,
        think_mean,
        tcp,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};

    fn with(entry: &str) -> String {
        BASE.replace("kind = \"bulk\"", entry)
    }

    #[test]
    fn unknown_kinds_are_refused() {
        assert_eq!(
            err(&with("kind = \"ftpx\"")).split(':').next(),
            Some("traffic[0].kind")
        );
    }

    #[test]
    fn keys_of_other_kinds_are_refused_by_name() {
        assert_eq!(
            err(&with("kind = \"bulk\"\nrate = \"5 Mbps\"")),
            "traffic[0].rate: is not used by traffic of kind \"bulk\""
        );
        assert_eq!(
            err(&with("kind = \"cbr\"\nrate = \"5 Mbps\"\nsize = \"10 B\"")),
            "traffic[0].size: is not used by traffic of kind \"cbr\""
        );
        assert_eq!(
            err(&with(
                "kind = \"web\"\nconnections = 2\npairs = 1\nrate = \"5 Mbps\""
            )),
            "traffic[0].rate: is not used by traffic of kind \"web\""
        );
        // The first key in the checking order is reported, and keys of one
        // known kind go before an unknown kind.
        assert_eq!(
            err(&with(
                "kind = \"ftpx\"\nthink_time = \"1 s\"\narrival_rate = 1"
            )),
            "traffic[0].arrival_rate: is not used by traffic of kind \"ftpx\""
        );
    }

    #[test]
    fn each_kind_names_its_required_keys() {
        assert_eq!(
            err(&with("kind = \"cbr\"")),
            "traffic[0].rate: is required for cbr traffic"
        );
        assert_eq!(
            err(&with("kind = \"short\"\nsize = \"1000 B\"")),
            "traffic[0].arrival_rate: is required for short flows"
        );
        assert_eq!(
            err(&with("kind = \"web\"\nconnections = 2")),
            "traffic[0].page_size: is required for web traffic"
        );
        assert_eq!(
            err(&with("kind = \"web_mice\"\nsessions = 2")),
            "traffic[0].pareto: is required for web_mice"
        );
    }

    #[test]
    fn a_cbr_source_paced_faster_than_100_ns_is_refused() {
        assert_eq!(
            err(&with(
                "kind = \"cbr\"\nrate = \"10 Tbps\"\npacket_size = 1000"
            )),
            "traffic[0].rate: sends a 1000-byte packet every 1 ns, faster than satqm paces a \
             source (packets at least 100 ns apart): at most 80000000000 bit/s at this packet_size"
        );
        assert_eq!(
            err(&with(
                "kind = \"cbr\"\nrate = \"80 Gbps\"\npacket_size = 1000"
            )),
            "ok"
        );
    }
}
