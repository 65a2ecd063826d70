//! Validates `[[pep]]` entries: performance-enhancing proxies that split
//! TCP connections at a node (RFC 3135), each with its per-connection
//! buffer and the TCP options of the connections it opens downstream.

use crate::error::ConfigError;
use crate::transport::tcp::TcpConfig;
use crate::units::quantity_bytes;

use super::raw::{RawPep, RawTcp};
use super::tcp::tcp_for;

/// A PEP at node `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct PepConfig {
    pub at: String,
    /// Bytes received and not yet acknowledged downstream, per connection.
    pub buffer: u64,
    pub tcp: TcpConfig,
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
        let tcp = tcp_for(tcp_base, p.tcp.as_ref(), &format!("{path}.tcp"))?;
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
        pep.push(PepConfig {
            at: p.at.clone(),
            buffer,
            tcp,
        });
    }
    Ok(pep)
}
