//! Validates `[[pep]]` entries: performance-enhancing proxies that split
//! TCP connections at a node (RFC 3135), each with its per-connection
//! buffer, the TCP options of the connections it opens downstream, and the
//! gateway's handling of its backbone: the order and pace in which held
//! packets enter the transmit queue, the backbone's header size, and the
//! framing its rate regulator counts.

use crate::error::ConfigError;
use crate::gateway::HeldOrder;
use crate::transport::tcp::TcpConfig;
use crate::units::{int_in, quantity_bytes, quantity_rate};

use super::raw::{RawPep, RawTcp};
use super::tcp::tcp_for;

/// A PEP at node `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct PepConfig {
    pub at: String,
    /// Bytes received and not yet acknowledged downstream, per connection.
    pub buffer: u64,
    /// The backbone's TCP (with its `header`).
    pub tcp: TcpConfig,
    pub backbone: Backbone,
}

/// How the gateway carries the PEP's backbone onto its space link (the
/// link out of the PEP's node with `backpressure`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backbone {
    pub order: HeldOrder,
    /// The backbone sends at most at this rate, bit/s.
    pub pace_rate: Option<u64>,
    /// Encapsulation bytes per packet counted by the regulator.
    pub packet_overhead: u32,
    /// Bytes of packet data per link frame (0: no frames).
    pub frame_size: u32,
    /// Header bytes per link frame.
    pub frame_overhead: u32,
}

impl Backbone {
    /// Today's gateway: one FIFO, unpaced, no framing.
    pub fn is_plain(&self) -> bool {
        *self
            == Backbone {
                order: HeldOrder::Fifo,
                pace_rate: None,
                packet_overhead: 0,
                frame_size: 0,
                frame_overhead: 0,
            }
    }
}

/// Every `[[pep]]` entry, at most one per node; `tcp_base` is the
/// scenario's `[tcp]` table, which each entry's `tcp` overrides.
pub(super) fn peps(
    raw: Option<&Vec<RawPep>>,
    tcp_base: &RawTcp,
) -> Result<Vec<PepConfig>, ConfigError> {
    let mut pep: Vec<PepConfig> = Vec::new();
    for (i, p) in raw.into_iter().flatten().enumerate() {
        let path = format!("pep[{i}]");
        let buffer = match &p.buffer {
            Some(q) => quantity_bytes(q, &format!("{path}.buffer"))?,
            None => 1 << 20,
        };
        let mut tcp = tcp_for(tcp_base, p.tcp.as_ref(), &format!("{path}.tcp"))?;
        if buffer < tcp.mss as u64 {
            return Err(ConfigError::new(
                format!("{path}.buffer"),
                "must hold at least one MSS",
            ));
        }
        if pep.iter().any(|q| q.at == p.at) {
            return Err(ConfigError::new(
                format!("{path}.at"),
                format!("node {:?} already has a PEP", p.at),
            ));
        }
        if let Some(h) = p.backbone_header {
            tcp.header = int_in(h, &format!("{path}.backbone_header"), 0, 120)? as u32;
        }
        let backbone = backbone(p, &tcp, &path)?;
        pep.push(PepConfig {
            at: p.at.clone(),
            buffer,
            tcp,
            backbone,
        });
    }
    Ok(pep)
}

/// The backbone keys of one entry.
fn backbone(p: &RawPep, tcp: &TcpConfig, path: &str) -> Result<Backbone, ConfigError> {
    let key = |k: &str| format!("{path}.{k}");
    let quantum = match &p.quantum {
        Some(q) => Some(int_in(
            quantity_bytes(q, &key("quantum"))? as i64,
            &key("quantum"),
            1,
            1 << 24,
        )? as u32),
        None => None,
    };
    let order = match p.scheduling.as_deref() {
        None | Some("fifo") => {
            if quantum.is_some() {
                return Err(ConfigError::new(
                    key("quantum"),
                    "is used only with scheduling = \"drr\"",
                ));
            }
            HeldOrder::Fifo
        }
        Some("drr") => HeldOrder::Drr {
            // One backbone packet by default.
            quantum: quantum.unwrap_or(tcp.mss + tcp.header),
        },
        Some(other) => {
            return Err(ConfigError::new(
                key("scheduling"),
                format!("unknown scheduling {other:?} (known: fifo, drr)"),
            ))
        }
    };
    let pace_rate = match &p.pace_rate {
        Some(q) => Some(quantity_rate(q, &key("pace_rate"))?.bps()),
        None => None,
    };
    let small = |v: Option<i64>, k: &str| -> Result<u32, ConfigError> {
        v.map_or(Ok(0), |v| int_in(v, &key(k), 0, 1000).map(|v| v as u32))
    };
    let frame_size = match &p.frame_size {
        Some(q) => int_in(
            quantity_bytes(q, &key("frame_size"))? as i64,
            &key("frame_size"),
            64,
            1 << 20,
        )? as u32,
        None => 0,
    };
    let frame_overhead = small(p.frame_overhead, "frame_overhead")?;
    if frame_overhead > 0 && frame_size == 0 {
        return Err(ConfigError::new(
            key("frame_overhead"),
            "needs frame_size (the bytes of data a frame carries)",
        ));
    }
    Ok(Backbone {
        order,
        pace_rate,
        packet_overhead: small(p.packet_overhead, "packet_overhead")?,
        frame_size,
        frame_overhead,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};
    use crate::config::Scenario;
    use crate::gateway::HeldOrder;

    fn pep(keys: &str) -> String {
        format!("{BASE}\n[[pep]]\nat = \"left\"\n{keys}\n")
    }

    #[test]
    fn backbone_keys() {
        let s = Scenario::from_toml(&pep("scheduling = \"drr\"\npace_rate = \"20 Mbps\"\nbackbone_header = 4\npacket_overhead = 10\nframe_size = \"6041 B\"\nframe_overhead = 10")).unwrap();
        let p = &s.pep[0];
        assert_eq!(p.tcp.header, 4);
        assert_eq!(p.backbone.order, HeldOrder::Drr { quantum: 1464 });
        assert_eq!(p.backbone.pace_rate, Some(20_000_000));
        assert_eq!(
            (
                p.backbone.packet_overhead,
                p.backbone.frame_size,
                p.backbone.frame_overhead
            ),
            (10, 6041, 10)
        );
        let plain = Scenario::from_toml(&pep("")).unwrap();
        assert!(plain.pep[0].backbone.is_plain() && plain.pep[0].tcp.header == 40);
    }

    #[test]
    fn backbone_errors_name_the_key() {
        assert_eq!(
            err(&pep("scheduling = \"wfq\"")),
            "pep[0].scheduling: unknown scheduling \"wfq\" (known: fifo, drr)"
        );
        assert_eq!(
            err(&pep("quantum = \"1500 B\"")),
            "pep[0].quantum: is used only with scheduling = \"drr\""
        );
        assert_eq!(
            err(&pep("frame_overhead = 10")),
            "pep[0].frame_overhead: needs frame_size (the bytes of data a frame carries)"
        );
        assert!(err(&pep("backbone_header = 500"))
            .starts_with("pep[0].backbone_header: must be between 0 and 120"));
    }
}
