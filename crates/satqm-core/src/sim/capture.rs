//! What a run records packet by packet when the scenario asks: packet
//! captures (which links they tap, and what the wire headers need to know
//! of each flow, `capture/`) and the sequence records of traced flows
//! (`probe/seq.rs`).

use super::{Endpoints, Flow, Simulation};
use crate::capture::{CaptureSpec, Captures, FlowWire};
use crate::error::ConfigError;
use crate::ids::{FlowId, LinkId};
use crate::probe::SeqTracer;
use crate::transport::tcp::Recovery;

/// The per-packet recorders, in one place so that the ports' sink, built
/// for every packet, carries one reference for them.
#[derive(Debug)]
pub struct Taps {
    pub captures: Captures,
    pub seq: SeqTracer,
}

/// Most link names an error lists before "and N more".
const LIST_AT_MOST: usize = 24;

impl Simulation {
    /// Tap the links `spec` names: a name captures that link and, if it has
    /// one, its `.reverse` direction.
    pub(super) fn start_captures(&mut self, spec: &CaptureSpec) -> Result<(), ConfigError> {
        let mut chosen: Vec<LinkId> = Vec::new();
        for (i, name) in spec.links.iter().enumerate() {
            let found: Vec<LinkId> = self
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.name == *name || l.name == format!("{name}.reverse"))
                .map(|(j, _)| LinkId(j as u32))
                .collect();
            if found.is_empty() {
                return Err(ConfigError::new(
                    format!("simulation.capture[{i}]"),
                    format!("no link named {name:?}; the links are {}", self.link_list()),
                ));
            }
            for l in found {
                if !chosen.contains(&l) {
                    chosen.push(l);
                }
            }
        }
        chosen.sort();
        let links: Vec<_> = chosen
            .iter()
            .map(|&l| {
                let link = &mut self.links[l.idx()];
                link.tap_out = spec.side.departures();
                link.tap_in = spec.side.arrivals();
                let ends = (link.from.0, link.to.0);
                (l, link.name.clone(), ends, link.rate().bps())
            })
            .collect();
        self.taps.captures = Captures::new(spec, self.links.len(), &links);
        Ok(())
    }

    /// The links' names for an error message (the first few).
    fn link_list(&self) -> String {
        let names: Vec<&str> = self.links.iter().map(|l| l.name.as_str()).collect();
        if names.len() <= LIST_AT_MOST {
            return names.join(", ");
        }
        format!(
            "{}, and {} more",
            names[..LIST_AT_MOST].join(", "),
            names.len() - LIST_AT_MOST
        )
    }
}

/// The wire settings of flow `f`'s packets.
pub(super) fn flow_wire(flows: &[Flow], f: FlowId) -> FlowWire {
    match flows.get(f.idx()).map(|fl| &fl.ends) {
        Some(Endpoints::Tcp { sender, .. }) => {
            let cfg = sender.config();
            let mut w = FlowWire::new(
                f.0,
                cfg.window_scaling.then(|| cfg.max_advertised_window()),
                cfg.recovery == Recovery::Sack,
                cfg.mss,
            );
            w.window = cfg.max_advertised_window();
            w.timestamps = cfg.timestamps;
            w
        }
        _ => FlowWire::new(f.0, None, false, 0),
    }
}
