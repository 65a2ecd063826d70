//! `[emulation]`: which hosts of the topology are real in an emulation
//! (`satqm shell`, `satqm emulate`) and their addresses. An offline run
//! leaves these hosts without real traffic.

use std::net::Ipv4Addr;

use super::raw::RawEmulation;
use crate::error::ConfigError;

/// The subnet real hosts are numbered in when the scenario names none.
pub const DEFAULT_SUBNET: &str = "10.200.0.0/24";

/// The real hosts of an emulation.
#[derive(Clone, Debug, PartialEq)]
pub struct EmulationSpec {
    /// Node names of the real hosts; `None`: the first host pair's two
    /// ends (its sender, then its receiver).
    pub hosts: Option<Vec<String>>,
    /// The subnet's network address and prefix length: the `i`-th real
    /// host has the subnet's address `i + 1`.
    pub network: Ipv4Addr,
    pub prefix: u8,
    /// Keep time-sequence records of every real TCP connection (the
    /// results' `seq` table).
    pub trace_seq: bool,
}

impl EmulationSpec {
    /// The address of the `i`-th real host.
    pub fn address(&self, i: usize) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.network) + i as u32 + 1)
    }
}

pub(super) fn emulation(raw: Option<&RawEmulation>) -> Result<Option<EmulationSpec>, ConfigError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let subnet = raw.subnet.as_deref().unwrap_or(DEFAULT_SUBNET);
    let bad = |why: &str| ConfigError::new("emulation.subnet", format!("{subnet:?}: {why}"));
    let (addr, len) = subnet
        .split_once('/')
        .ok_or_else(|| bad("must be an IPv4 subnet such as \"10.200.0.0/24\""))?;
    let addr: Ipv4Addr = addr
        .trim()
        .parse()
        .map_err(|_| bad("not an IPv4 address"))?;
    let prefix: u8 = len
        .trim()
        .parse()
        .ok()
        .filter(|p| (8..=30).contains(p))
        .ok_or_else(|| bad("the prefix length must be 8 to 30"))?;
    let mask = u32::MAX << (32 - prefix);
    if u32::from(addr) & !mask != 0 {
        return Err(bad("host bits are set; give the network address"));
    }
    if let Some(hosts) = &raw.hosts {
        if hosts.len() < 2 {
            return Err(ConfigError::new(
                "emulation.hosts",
                "must name at least two hosts",
            ));
        }
        for (i, h) in hosts.iter().enumerate() {
            if hosts[..i].contains(h) {
                return Err(ConfigError::new(
                    format!("emulation.hosts[{i}]"),
                    format!("{h:?} is named twice"),
                ));
            }
        }
        // The broadcast address and the network's own are not hosts'.
        if hosts.len() as u64 + 2 > 1u64 << (32 - prefix) {
            return Err(bad(&format!("too small for {} hosts", hosts.len())));
        }
    }
    Ok(Some(EmulationSpec {
        hosts: raw.hosts.clone(),
        network: addr,
        prefix,
        trace_seq: raw.trace_seq.unwrap_or(false),
    }))
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};

    #[test]
    fn bad_emulation_sections_name_their_key() {
        let with = |t: &str| err(&format!("{BASE}\n[emulation]\n{t}"));
        assert_eq!(with(""), "ok");
        assert_eq!(with("hosts = [\"sender[0]\", \"receiver[1]\"]"), "ok");
        assert!(with("hosts = [\"sender[0]\"]").starts_with("emulation.hosts:"));
        assert!(with("hosts = [\"a\", \"a\"]").starts_with("emulation.hosts[1]:"));
        assert!(with("subnet = \"10.1.0.0\"").starts_with("emulation.subnet:"));
        assert!(with("subnet = \"10.1.0.1/24\"").contains("host bits"));
        assert!(with("subnet = \"10.1.0.0/31\"").contains("prefix"));
        assert!(with("subnet = \"300.1.0.0/24\"").contains("not an IPv4"));
        assert!(
            with("subnet = \"10.1.0.0/30\"\nhosts = [\"a\", \"b\", \"c\"]").contains("too small")
        );
        assert!(with("colour = 1").starts_with("emulation"));
    }
}
