//! The split-TCP PEP (RFC 3135 spoofing) on a dumbbell whose left router
//! is the PEP: the sender's connection ends there, a second connection
//! crosses the bottleneck.

mod common;

use common::*;
use satqm_core::sim::Endpoints;
use satqm_core::Simulation;

fn pep_scenario(size: &str, buffer: &str, access_loss: f64, extra_tcp: &str) -> String {
    dumbbell(
        "60 s",
        1,
        "rate = \"10 Mbps\"\ndelay = \"250 ms\"\nbuffer = 2000",
        &format!("rate = \"100 Mbps\"\ndelay = \"10 ms\"\nloss = {access_loss}\nbuffer = 2000"),
        "recovery = \"sack\"",
        &format!(
            "[[traffic]]\nkind = \"bulk\"\nsize = \"{size}\"\n\
             [topology.receiver_access]\nrate = \"100 Mbps\"\ndelay = \"10 ms\"\nbuffer = 2000\n\
             [[pep]]\nat = \"left\"\nbuffer = \"{buffer}\"\n[pep.tcp]\n{extra_tcp}"
        ),
    )
}

fn sender_of(sim: &Simulation, f: usize) -> &satqm_core::transport::tcp::TcpSender {
    match &sim.flows[f].ends {
        Endpoints::Tcp { sender, .. } => sender,
        _ => panic!("not TCP"),
    }
}

#[test]
fn transfer_is_split_acknowledged_locally_and_delivered_whole() {
    let sim = run(&pep_scenario("5 MB", "1 MB", 0.0, ""));
    // Two connections: sender -> PEP (the flow), PEP -> receiver (relay).
    assert_eq!(sim.flows.len(), 2);
    assert_eq!(sim.flows[1].kind.name(), "relay");
    assert_eq!(sim.flows[1].origin.0, 0);
    // Every byte arrives at the receiver, once, and the transfer completes.
    assert_eq!(sim.flows[0].delivered, 5_000_000);
    assert!(sim.flows[0].completed.is_some());
    // The sender sees the access RTT (2 x 10 ms), not the satellite's.
    let fs = sim.flow_summaries();
    assert!(fs[0].rtt_min_s < 0.03, "sender RTT {}", fs[0].rtt_min_s);
    assert!(fs[1].rtt_min_s > 0.5, "relay RTT {}", fs[1].rtt_min_s);
}

#[test]
fn pep_buffer_is_bounded_and_back_pressures_the_sender() {
    let sim = run(&pep_scenario("20 MB", "300 kB", 0.0, ""));
    let r = &sim.relays[0];
    assert!(r.peak <= 300_000, "PEP held {} bytes", r.peak);
    assert!(
        r.peak > 250_000,
        "the buffer filled: the bottleneck is slower than the access link"
    );
    // The sender is limited by the PEP's window, so its goodput is the
    // bottleneck's, not its access link's.
    let up = sender_of(&sim, 0);
    let acked = up.bytes_acked() as f64;
    assert!(acked * 8.0 / 60.0 < 10.5e6, "sender pushed {acked} bytes");
    // Nothing is lost anywhere: the window, not the queue, holds it back.
    assert_eq!(summary(&sim, "drops_total"), 0.0);
}

#[test]
fn sender_side_loss_is_repaired_without_a_satellite_retransmission() {
    let sim = run(&pep_scenario("5 MB", "1 MB", 0.01, ""));
    assert_eq!(sim.flows[0].delivered, 5_000_000);
    let up = sender_of(&sim, 0);
    let down = sender_of(&sim, 1);
    assert!(
        up.stats.retransmits > 10,
        "losses on the access link are repaired there"
    );
    assert_eq!(
        down.stats.retransmits, 0,
        "nothing crosses the satellite twice"
    );
}

#[test]
fn several_flows_each_get_a_chain_and_conserve_packets() {
    let text = dumbbell(
        "40 s",
        4,
        "rate = \"10 Mbps\"\ndelay = \"250 ms\"\nbuffer = 100",
        "rate = \"100 Mbps\"\ndelay = { min = \"5 ms\", max = \"40 ms\" }\nbuffer = 2000",
        "recovery = \"newreno\"",
        "[[traffic]]\nkind = \"bulk\"\n[[pep]]\nat = \"left\"\nbuffer = \"500 kB\"",
    );
    let sim = run(&text);
    assert_eq!(sim.flows.len(), 8);
    let c = sim.packet_counts();
    assert_eq!(c.created, c.delivered + c.dropped + c.in_flight);
    for r in &sim.relays {
        assert!(r.peak <= 500_000);
    }
    // End-to-end bytes are credited to the flows, not to their relays.
    let fs = sim.flow_summaries();
    for pair in 0..4 {
        assert!(fs[2 * pair].bytes_delivered > 1_000_000);
        assert_eq!(fs[2 * pair + 1].kind.name(), "relay");
        assert_eq!(fs[2 * pair + 1].bytes_delivered, 0);
    }
}

/// The PEP's backbone as a window-limited protocol without slow start: the
/// relayed connection sends its whole window at once and never shrinks it.
#[test]
fn fixed_window_backbone_has_no_slow_start() {
    let text = pep_scenario(
        "3 MB",
        "2 MB",
        0.0,
        "cc = \"fixed\"\nfixed_window = \"600 kB\"",
    );
    let mut sim = Simulation::from_toml(&text).unwrap();
    // One round trip after the transfer starts (handshakes: 20 ms + 520 ms),
    // the backbone has 600 kB in flight, not an initial window of two.
    sim.run_until(satqm_core::SimTime::from_ms(700)).unwrap();
    let down = sender_of(&sim, 1);
    assert!(
        down.snd_max - down.snd_una > 400_000,
        "in flight {}",
        down.snd_max - down.snd_una
    );
    sim.run().unwrap();
    assert_eq!(sim.flows[0].delivered, 3_000_000);
    assert_eq!(sender_of(&sim, 1).win.cwnd, 600_000.0);
}

/// A bottleneck with backpressure: when its buffer is full, packets the
/// PEP itself sends wait at the PEP instead of being dropped ("nothing is
/// dropped after the PEP"); the queue never exceeds its limit.
#[test]
fn backpressure_holds_the_peps_packets_instead_of_dropping() {
    let text = dumbbell(
        "40 s",
        3,
        "rate = \"10 Mbps\"\ndelay = \"250 ms\"\nbuffer = 20\nbackpressure = true",
        "rate = \"100 Mbps\"\ndelay = \"10 ms\"\nbuffer = 2000",
        "recovery = \"sack\"",
        "[[traffic]]\nkind = \"bulk\"\nsize = \"3 MB\"\n[[pep]]\nat = \"left\"\nbuffer = \"1 MB\"\n\
         [pep.tcp]\ncc = \"fixed\"\nfixed_window = \"400 kB\"",
    );
    let mut sim = Simulation::from_toml(&text).unwrap();
    let mut t = satqm_core::SimTime::ZERO;
    let mut held_seen = 0;
    while !sim.finished() {
        t += satqm_core::SimTime::from_ms(50);
        sim.run_until(t).unwrap();
        let b = &sim.links[sim.bottleneck.idx()];
        assert!(b.port.len() <= 20);
        held_seen = held_seen.max(b.port.held_len());
        let c = sim.packet_counts();
        assert_eq!(c.created, c.delivered + c.dropped + c.in_flight);
    }
    assert!(
        held_seen > 50,
        "three 400 kB windows overflow 20 packets: the PEP held {held_seen}"
    );
    assert_eq!(summary(&sim, "drops_total"), 0.0, "nothing is dropped");
    for f in (0..6).step_by(2) {
        assert_eq!(sim.flows[f].delivered, 3_000_000);
    }
}
