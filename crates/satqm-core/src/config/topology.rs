//! Validates `[topology]`: the kind, its host counts, and each link's rate,
//! delay, erasure and buffers, into the [`Topology`] the builders in
//! `topology/` wire up.
//!
//! Keys that belong to the other topology kind are refused by name; a
//! per-flow delay (a range or a list) is accepted only on access links, and
//! a list must give one delay per host.

use std::collections::BTreeMap;

use crate::error::ConfigError;
use crate::net::DelayModel;
use crate::queue::BufferLimit;
use crate::time::SimTime;
use crate::topology::{AccessDelay, AccessSpec, Dumbbell, Ipos, LinkSpec, Topology};
use crate::units::{int_in, probability, quantity_bytes, quantity_rate, quantity_time};

use super::raw::{RawBuffer, RawBufferTable, RawDelay, RawLink, RawTopology};
use super::schedule;

/// The topology a scenario describes.
pub(super) fn topology(
    t: &RawTopology,
    files: &BTreeMap<String, String>,
) -> Result<Topology, ConfigError> {
    match t.kind.as_str() {
        "dumbbell" => Ok(Topology::Dumbbell(dumbbell(t, files)?)),
        "ipos" => Ok(Topology::Ipos(ipos(t, files)?)),
        other => Err(ConfigError::new(
            "topology.kind",
            format!("unknown topology {other:?} (known: \"dumbbell\", \"ipos\")"),
        )),
    }
}

fn dumbbell(t: &RawTopology, files: &BTreeMap<String, String>) -> Result<Dumbbell, ConfigError> {
    only_keys(
        t,
        &[
            "pairs",
            "access",
            "receiver_access",
            "bottleneck",
            "alternates",
            "route_changes",
        ],
    )?;
    let pairs = count(&t.pairs, "topology.pairs")?;
    let access = access(
        required(&t.access, "topology.access")?,
        "topology.access",
        pairs,
        "pairs",
    )?;
    let receiver_access = match &t.receiver_access {
        Some(r) => self::access(r, "topology.receiver_access", pairs, "pairs")?,
        None => access.clone(),
    };
    let mut alternates = Vec::new();
    for (k, l) in t.alternates.iter().flatten().enumerate() {
        let path = format!("topology.alternates[{k}]");
        alternates.push(core_link(&Some(l.clone()), &path, files)?);
    }
    let mut route_changes: Vec<(SimTime, usize)> = Vec::new();
    for (i, c) in t.route_changes.iter().flatten().enumerate() {
        let path = format!("topology.route_changes[{i}]");
        let at = quantity_time(&c.at, &format!("{path}.at"), true)?;
        if let Some(&(prev, _)) = route_changes.last() {
            if at <= prev {
                return Err(ConfigError::new(
                    format!("{path}.at"),
                    format!(
                        "must be later than topology.route_changes[{}].at ({} s)",
                        i - 1,
                        prev.secs_f64()
                    ),
                ));
            }
        }
        let via = match c.via.as_str() {
            "bottleneck" => 0,
            v => v
                .strip_prefix("alternate[")
                .and_then(|r| r.strip_suffix(']'))
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|&k| k < alternates.len())
                .map(|k| k + 1)
                .ok_or_else(|| {
                    ConfigError::new(
                        format!("{path}.via"),
                        format!(
                            "unknown path {v:?} (known: \"bottleneck\"{})",
                            (0..alternates.len())
                                .map(|k| format!(", \"alternate[{k}]\""))
                                .collect::<String>()
                        ),
                    )
                })?,
        };
        route_changes.push((at, via));
    }
    Ok(Dumbbell {
        pairs,
        access,
        receiver_access,
        bottleneck: core_link(&t.bottleneck, "topology.bottleneck", files)?,
        alternates,
        route_changes,
    })
}

fn ipos(t: &RawTopology, files: &BTreeMap<String, String>) -> Result<Ipos, ConfigError> {
    only_keys(
        t,
        &[
            "servers",
            "clients",
            "server_links",
            "client_links",
            "receive",
            "downlink",
            "uplink",
        ],
    )?;
    let servers = count(&t.servers, "topology.servers")?;
    let clients = count(&t.clients, "topology.clients")?;
    let server_links = access(
        required(&t.server_links, "topology.server_links")?,
        "topology.server_links",
        servers,
        "servers",
    )?;
    let client_links = access(
        required(&t.client_links, "topology.client_links")?,
        "topology.client_links",
        clients,
        "clients",
    )?;
    Ok(Ipos {
        servers,
        clients,
        server_links,
        client_links,
        receive: core_link(&t.receive, "topology.receive", files)?,
        downlink: core_link(&t.downlink, "topology.downlink", files)?,
        uplink: core_link(&t.uplink, "topology.uplink", files)?,
    })
}

/// Refuse keys that belong to another topology kind.
fn only_keys(t: &RawTopology, allowed: &[&str]) -> Result<(), ConfigError> {
    let present = [
        ("pairs", t.pairs.is_some()),
        ("access", t.access.is_some()),
        ("receiver_access", t.receiver_access.is_some()),
        ("bottleneck", t.bottleneck.is_some()),
        ("servers", t.servers.is_some()),
        ("clients", t.clients.is_some()),
        ("server_links", t.server_links.is_some()),
        ("client_links", t.client_links.is_some()),
        ("receive", t.receive.is_some()),
        ("downlink", t.downlink.is_some()),
        ("uplink", t.uplink.is_some()),
        ("alternates", t.alternates.is_some()),
        ("route_changes", t.route_changes.is_some()),
    ];
    for (k, set) in present {
        if set && !allowed.contains(&k) {
            return Err(ConfigError::new(
                format!("topology.{k}"),
                format!("is not used by topology kind {:?}", t.kind),
            ));
        }
    }
    Ok(())
}

fn required<'a, T>(v: &'a Option<T>, path: &str) -> Result<&'a T, ConfigError> {
    v.as_ref()
        .ok_or_else(|| ConfigError::new(path, "is required"))
}

/// A required number of hosts (pairs, servers, clients).
fn count(v: &Option<i64>, path: &str) -> Result<u32, ConfigError> {
    Ok(int_in(*required(v, path)?, path, 1, 100_000)? as u32)
}

/// The access links of `n` hosts (`hosts` names them in errors): a list of
/// per-flow delays must give one per host.
fn access(l: &RawLink, path: &str, n: u32, hosts: &str) -> Result<AccessSpec, ConfigError> {
    let (link, delay) = link(l, path, true)?;
    if let AccessDelay::List(v) = &delay {
        if v.len() != n as usize {
            return Err(ConfigError::new(
                format!("{path}.delay"),
                format!("lists {} delays for {n} {hosts}", v.len()),
            ));
        }
    }
    Ok(AccessSpec { link, delay })
}

/// A required link that is not an access link (one delay for all flows).
fn core_link(
    l: &Option<RawLink>,
    path: &str,
    files: &BTreeMap<String, String>,
) -> Result<LinkSpec, ConfigError> {
    let l = required(l, path)?;
    let mut spec = link(l, path, false)?.0;
    if let Some(s) = &l.schedule {
        let start = schedule::Start {
            rate: spec.rate,
            delay: spec.delay.min(),
            loss: spec.loss,
            reverse_loss: spec.reverse_loss,
        };
        let spath = format!("{path}.schedule");
        if spec.backpressure {
            return Err(ConfigError::new(
                spath,
                "a link with backpressure (a PEP's transmit queue) cannot change over time yet",
            ));
        }
        spec.schedule = Some(Box::new(schedule::schedule(s, &spath, start, files)?));
    }
    Ok(spec)
}

/// One link; `per_flow_delay_ok` for access links, whose delay may differ
/// per flow.
fn link(
    l: &RawLink,
    path: &str,
    per_flow_delay_ok: bool,
) -> Result<(LinkSpec, AccessDelay), ConfigError> {
    if per_flow_delay_ok && l.schedule.is_some() {
        return Err(ConfigError::new(
            format!("{path}.schedule"),
            "a schedule is allowed on the bottleneck and the IPoS receive, downlink \
             and uplink links, not on access links",
        ));
    }
    let rate = quantity_rate(&l.rate, &format!("{path}.rate"))?;
    let (delay, access) = delay(&l.delay, &format!("{path}.delay"), per_flow_delay_ok)?;
    let loss = erasure(l.loss, &format!("{path}.loss"))?;
    let reverse_loss = erasure(l.reverse_loss, &format!("{path}.reverse_loss"))?;
    let buf = match &l.buffer {
        Some(b) => buffer(b, &format!("{path}.buffer"))?,
        None => BufferLimit::Packets(1000),
    };
    let reverse_buffer = match &l.reverse_buffer {
        Some(b) => buffer(b, &format!("{path}.reverse_buffer"))?,
        None => buf,
    };
    let backpressure = l.backpressure.unwrap_or(false);
    let forward_device_queue = device_queue(l.device_queue, &format!("{path}.device_queue"))?;
    if backpressure && forward_device_queue > 0 {
        return Err(ConfigError::new(
            format!("{path}.device_queue"),
            "a link with backpressure (a PEP's transmit queue) cannot have a device queue yet",
        ));
    }
    let reverse_device_queue = device_queue(
        l.reverse_device_queue,
        &format!("{path}.reverse_device_queue"),
    )?;
    Ok((
        LinkSpec {
            rate,
            delay,
            loss,
            reverse_loss,
            backpressure,
            buffer: buf,
            reverse_buffer,
            device_queue: forward_device_queue,
            reverse_device_queue,
            schedule: None,
        },
        access,
    ))
}

/// A link's delay model, and the per-flow delays of an access link (for a
/// per-flow delay, the model holds the smallest or first one).
fn delay(
    d: &RawDelay,
    dpath: &str,
    per_flow_delay_ok: bool,
) -> Result<(DelayModel, AccessDelay), ConfigError> {
    match d {
        RawDelay::Fixed(q) => {
            let d = DelayModel::Fixed(quantity_time(q, dpath, true)?);
            Ok((d, AccessDelay::Same(d)))
        }
        RawDelay::PerPacket { uniform: [a, b] } => {
            let lo = quantity_time(a, &format!("{dpath}.uniform[0]"), true)?;
            let hi = quantity_time(b, &format!("{dpath}.uniform[1]"), true)?;
            if lo > hi {
                return Err(ConfigError::new(
                    dpath,
                    "uniform range must have low <= high",
                ));
            }
            let d = DelayModel::Uniform(lo, hi);
            Ok((d, AccessDelay::Same(d)))
        }
        RawDelay::PerFlowRange { min, max } if per_flow_delay_ok => {
            let lo = quantity_time(min, &format!("{dpath}.min"), true)?;
            let hi = quantity_time(max, &format!("{dpath}.max"), true)?;
            if lo > hi {
                return Err(ConfigError::new(dpath, "min must be <= max"));
            }
            Ok((DelayModel::Fixed(lo), AccessDelay::Range(lo, hi)))
        }
        RawDelay::PerFlowList(v) if per_flow_delay_ok => {
            if v.is_empty() {
                return Err(ConfigError::new(dpath, "list of per-flow delays is empty"));
            }
            let mut ds = Vec::with_capacity(v.len());
            for (i, q) in v.iter().enumerate() {
                ds.push(quantity_time(q, &format!("{dpath}[{i}]"), true)?);
            }
            Ok((DelayModel::Fixed(ds[0]), AccessDelay::List(ds)))
        }
        _ => Err(ConfigError::new(
            dpath,
            "per-flow delays ({ min, max } or a list) are allowed only on access links",
        )),
    }
}

/// A packet erasure probability below 1 (0 if absent).
fn erasure(v: Option<f64>, path: &str) -> Result<f64, ConfigError> {
    let p = probability(v.unwrap_or(0.0), path)?;
    if p >= 1.0 {
        return Err(ConfigError::new(
            path,
            "must be < 1 (every packet would be lost)",
        ));
    }
    Ok(p)
}

/// A device queue's size in packets (0, the default: none).
fn device_queue(v: Option<i64>, path: &str) -> Result<u32, ConfigError> {
    Ok(int_in(v.unwrap_or(0), path, 0, 100_000)? as u32)
}

fn buffer(b: &RawBuffer, path: &str) -> Result<BufferLimit, ConfigError> {
    match b {
        RawBuffer::Packets(n) => Ok(BufferLimit::Packets(
            int_in(*n, path, 1, 100_000_000)? as u32
        )),
        RawBuffer::Table(RawBufferTable {
            packets: Some(n),
            bytes: None,
        }) => Ok(BufferLimit::Packets(
            int_in(*n, &format!("{path}.packets"), 1, 100_000_000)? as u32,
        )),
        RawBuffer::Table(RawBufferTable {
            packets: None,
            bytes: Some(q),
        }) => {
            let b = quantity_bytes(q, &format!("{path}.bytes"))?;
            if b < 64 {
                return Err(ConfigError::new(
                    format!("{path}.bytes"),
                    "must be at least 64 bytes",
                ));
            }
            Ok(BufferLimit::Bytes(b))
        }
        RawBuffer::Table(_) => Err(ConfigError::new(
            path,
            "give exactly one of `packets` or `bytes`",
        )),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};
    use crate::config::Scenario;
    use crate::net::DelayModel;
    use crate::queue::BufferLimit;
    use crate::time::{Rate, SimTime};
    use crate::topology::Topology;

    #[test]
    fn base_parses_with_units() {
        let s = Scenario::from_toml(BASE).unwrap();
        let Topology::Dumbbell(d) = &s.topology else {
            panic!()
        };
        assert_eq!(d.bottleneck.rate, Rate(10_000_000));
        assert_eq!(d.bottleneck.delay, DelayModel::Fixed(SimTime::from_ms(290)));
        assert_eq!(d.bottleneck.buffer, BufferLimit::Packets(800));
        assert_eq!(s.traffic[0].pairs, vec![0, 1, 2]);
        assert_eq!(s.sample_interval, SimTime::from_ms(100));
    }

    #[test]
    fn errors_name_the_key() {
        assert_eq!(
            err(&BASE.replace("\"10 Mbps\"", "\"-5 Mbps\"")),
            "topology.bottleneck.rate: must be > 0"
        );
        assert_eq!(
            err(&BASE.replace("\"10 Mbps\"", "0")),
            "topology.bottleneck.rate: must be > 0"
        );
        assert!(err(&BASE.replace("\"10 Mbps\"", "nan"))
            .starts_with("topology.bottleneck.rate: must be a finite"));
        assert!(err(&BASE.replace("\"10 Mbps\"", "\"10 Mfoo\"")).contains("unknown unit"));
        assert_eq!(
            err(&BASE.replace("pairs = 3", "pairs = 0")),
            "topology.pairs: must be between 1 and 100000"
        );
    }

    #[test]
    fn a_device_queue_is_a_count_of_packets_on_a_fixed_link() {
        let s = Scenario::from_toml(&BASE.replace(
            "buffer = 800",
            "buffer = 799\ndevice_queue = 1\nreverse_device_queue = 2",
        ))
        .unwrap();
        let Topology::Dumbbell(d) = &s.topology else {
            panic!()
        };
        assert_eq!(
            (d.bottleneck.device_queue, d.bottleneck.reverse_device_queue),
            (1, 2)
        );
        assert_eq!(d.access.link.device_queue, 0, "none unless asked for");
        assert!(
            err(&BASE.replace("buffer = 800", "buffer = 800\ndevice_queue = -1"))
                .starts_with("topology.bottleneck.device_queue: must be between 0 and")
        );
        assert!(
            err(&BASE.replace("buffer = 800", "buffer = 800\nreverse_device_queue = 1.5"))
                .starts_with("topology.bottleneck.reverse_device_queue")
        );
        assert!(Scenario::from_toml(&BASE.replace(
            "buffer = 800",
            "buffer = 800\ndevice_queue = 1\n[topology.bottleneck.schedule]\n\
             changes = [{ at = \"1 s\", rate = \"5 Mbps\" }]"
        ))
        .is_ok());
        assert!(err(&BASE.replace(
            "buffer = 800",
            "buffer = 800\nbackpressure = true\ndevice_queue = 1"
        ))
        .starts_with("topology.bottleneck.device_queue: a link with backpressure"));
    }

    #[test]
    fn per_flow_delays_are_checked_per_host() {
        assert_eq!(
            err(&BASE.replace("delay = \"5 ms\"", "delay = [\"5 ms\", \"6 ms\"]")),
            "topology.access.delay: lists 2 delays for 3 pairs"
        );
        assert_eq!(
            err(&BASE.replace(
                "delay = \"290 ms\"",
                "delay = { min = \"5 ms\", max = \"9 ms\" }"
            )),
            "topology.bottleneck.delay: per-flow delays ({ min, max } or a list) are allowed only on access links"
        );
        assert_eq!(
            err(&BASE.replace("pairs = 3", "pairs = 3\nservers = 2")),
            "topology.servers: is not used by topology kind \"dumbbell\""
        );
    }
}
