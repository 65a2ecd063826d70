#![allow(dead_code)]
use satqm_core::Simulation;

/// A dumbbell scenario with the given pieces spliced in.
pub fn dumbbell(
    duration: &str,
    pairs: u32,
    bottleneck: &str,
    access: &str,
    tcp: &str,
    traffic: &str,
) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
[topology]
kind = "dumbbell"
pairs = {pairs}
[topology.access]
{access}
[topology.bottleneck]
{bottleneck}
[tcp]
{tcp}
{traffic}
"#
    )
}

pub fn run(text: &str) -> Simulation {
    let mut sim = Simulation::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    sim.run().unwrap();
    sim
}

/// The summary figure named `key`, as a number.
pub fn summary(sim: &Simulation, key: &str) -> f64 {
    sim.summary()
        .entries()
        .into_iter()
        .find(|(k, _)| *k == key)
        .unwrap_or_else(|| panic!("no summary figure {key:?}"))
        .1
        .as_f64()
}
