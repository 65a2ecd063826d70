//! The IP-over-satellite topology with PEPs at the gateway and terminal,
//! and the web traffic of the AVQRED emulation.

mod common;

use common::*;
use satqm_core::{SimTime, Simulation};

fn ipos(traffic: &str, aqm: &str, duration: &str) -> String {
    format!(
        r#"
[simulation]
duration = "{duration}"
[topology]
kind = "ipos"
servers = 4
clients = 6
[topology.server_links]
rate = "100 Mbps"
delay = {{ min = "20 ms", max = "40 ms" }}
[topology.client_links]
rate = "100 Mbps"
delay = "2 ms"
[topology.receive]
rate = "100 Mbps"
delay = "0 ms"
[topology.downlink]
rate = "20 Mbps"
delay = {{ uniform = ["305 ms", "405 ms"] }}
buffer = 100000
[topology.uplink]
rate = "1 Mbps"
delay = {{ uniform = ["300 ms", "400 ms"] }}
[tcp]
recovery = "sack"
[[pep]]
at = "gateway"
buffer = "1 MB"
[pep.tcp]
initial_window = 10
[[pep]]
at = "terminal"
buffer = "1 MB"
{traffic}
{aqm}
"#
    )
}

#[test]
fn a_transfer_crosses_three_connections_with_their_own_rtts() {
    let text = ipos(
        "[[traffic]]\nkind = \"bulk\"\npairs = 0\nsize = \"2 MB\"",
        "",
        "60 s",
    );
    let sim = run(&text);
    assert_eq!(
        sim.flows.len(),
        3,
        "server->gateway, gateway->terminal, terminal->client"
    );
    assert_eq!(sim.flows[0].delivered, 2_000_000);
    assert!(sim.flows[0].completed.is_some());
    let fs = sim.flow_summaries();
    // Server side: 40-80 ms; satellite hop: 2 x (305..405 ms); client side: 4 ms.
    assert!(
        fs[0].rtt_min_s > 0.04 && fs[0].rtt_min_s < 0.09,
        "{}",
        fs[0].rtt_min_s
    );
    assert!(
        fs[1].rtt_min_s > 0.6 && fs[1].rtt_min_s < 0.85,
        "{}",
        fs[1].rtt_min_s
    );
    assert!(fs[2].rtt_min_s < 0.01, "{}", fs[2].rtt_min_s);
    assert_eq!(summary(&sim, "drops_total"), 0.0);
}

#[test]
fn web_slots_ramp_up_and_replace_connections_after_think_time() {
    let web =
        "[[traffic]]\nkind = \"web\"\nconnections = 12\nramp = { step = 4, interval = \"10 s\" }\n\
               page_size = { min = \"20 kB\", max = \"40 kB\" }\nthink_time = \"5 s\"";
    let mut sim = Simulation::from_toml(&ipos(web, "", "120 s")).unwrap();
    sim.run().unwrap();
    // The ramp: 4 slots start at 0 s, 4 at 10 s, 4 at 20 s.
    for step in 0..3u64 {
        let at = SimTime::from_secs(10 * step);
        let n = sim
            .flows
            .iter()
            .filter(|f| f.kind.name() == "web" && f.start == at)
            .count();
        assert_eq!(n, 4, "ramp step at {at}");
    }
    // Each later page starts one think time after the slot's previous one
    // arrived.
    let done: Vec<f64> = sim
        .flows
        .iter()
        .filter_map(|f| f.completed)
        .map(|c| c.secs_f64())
        .collect();
    let later: Vec<f64> = sim
        .flows
        .iter()
        .filter(|f| f.kind.name() == "web" && f.start > SimTime::from_secs(20))
        .map(|f| f.start.secs_f64())
        .collect();
    assert!(!later.is_empty());
    for s in &later {
        assert!(
            done.iter().any(|c| (s - c - 5.0).abs() < 1e-9),
            "start {s} is 5 s after a completion"
        );
    }
    let done: Vec<_> = sim
        .flows
        .iter()
        .filter(|f| f.kind.name() == "web" && f.completed.is_some())
        .collect();
    // Small pages over a 0.7 s satellite RTT: a few seconds each, then 5 s
    // of thought: every slot fetches many pages in two minutes.
    assert!(done.len() > 60, "{} pages fetched", done.len());
    for f in &done {
        let size = f.delivered;
        assert!((20_000..=40_000).contains(&size), "page of {size} bytes");
    }
    let c = sim.packet_counts();
    assert_eq!(c.created, c.delivered + c.dropped + c.in_flight);
}

/// The AVQRED papers' Table 1 placement for RED: it watches the transmit
/// queue and drops at the receive queue; nothing is dropped after the PEP.
#[test]
fn red_watching_the_transmit_queue_drops_only_at_the_receive_queue() {
    let bulk = "[[traffic]]\nkind = \"bulk\"\npairs = { from = 0, to = 5 }";
    let red = "[[aqm]]\nkind = \"red\"\nat = \"receive\"\nmonitor = \"transmit\"\n\
               min_th = 60\nmax_th = 120\nw_q = 0.02\nmax_p = 0.5";
    let sim = run(&ipos(bulk, red, "90 s"));
    let receive = sim.links.iter().position(|l| l.name == "receive").unwrap() as u32;
    assert!(sim.drops.link.len() > 10, "RED acts");
    assert!(
        sim.drops.link.iter().all(|&l| l == receive),
        "drops only at the receive queue"
    );
    let transmit = &sim.links[sim.bottleneck.idx()];
    assert_eq!(transmit.name, "transmit");
    assert_eq!(transmit.port.drops_total(), 0);
}

/// The gateway's backbone served by deficit round robin, paced at
/// 15 Mbit/s and framed: every transfer arrives whole, and the space link
/// carries at most the pace.
#[test]
fn a_paced_framed_drr_backbone_delivers_everything_at_its_pace() {
    let bulk = "[[traffic]]\nkind = \"bulk\"\nsize = \"2 MB\"";
    let text = ipos(bulk, "", "30 s")
        .replace("buffer = 100000", "buffer = 200\nbackpressure = true")
        .replace(
            "at = \"gateway\"\nbuffer = \"1 MB\"",
            "at = \"gateway\"\nbuffer = \"1 MB\"\nscheduling = \"drr\"\npace_rate = \"15 Mbps\"\n\
             backbone_header = 4\npacket_overhead = 10\nframe_size = \"6041 B\"\nframe_overhead = 10",
        );
    let sim = run(&text);
    let ends: Vec<_> = sim
        .flows
        .iter()
        .filter(|f| f.kind.name() == "bulk")
        .collect();
    assert_eq!(ends.len(), 6);
    assert!(ends
        .iter()
        .all(|f| f.delivered == 2_000_000 && f.completed.is_some()));
    let tx = sim.links.iter().find(|l| l.name == "transmit").unwrap();
    let last = ends.iter().filter_map(|f| f.completed).max().unwrap();
    // 12 MB through a 15 Mbit/s pacer: at least 6.4 s of backbone.
    assert!(tx.port.tx_bytes_total() as f64 * 8.0 <= 15e6 * last.secs_f64());
    assert!(last.secs_f64() > 6.4, "{last}");
}

/// A PEP whose node has no backpressure link cannot schedule or pace.
#[test]
fn backbone_options_need_a_backpressure_link() {
    let text = ipos("[[traffic]]\nkind = \"bulk\"", "", "1 s").replace(
        "at = \"gateway\"\nbuffer = \"1 MB\"",
        "at = \"gateway\"\nbuffer = \"1 MB\"\nscheduling = \"drr\"",
    );
    let e = Simulation::from_toml(&text)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains(
            "pep[0]: scheduling, pace_rate and framing need exactly one link with backpressure"
        ),
        "{e}"
    );
}

/// A PEP splits TCP only: an ATSP transfer crosses both PEPs' nodes end to
/// end (one flow, from its server to its client, with the satellite round
/// trip), while a TCP transfer on the same gateway becomes three
/// connections; the PI at the transmit queue marks ATSP's packets.
#[test]
fn atsp_crosses_the_gateway_end_to_end_while_tcp_is_split() {
    let traffic = "[[traffic]]\nkind = \"atsp\"\npairs = 0\natsp = { w_max = 1300 }\n\
                   [[traffic]]\nkind = \"bulk\"\npairs = 1";
    let pi = "[[aqm]]\nkind = \"pi\"\nmode = \"mark\"\nat = \"transmit\"\nq_ref = 100\n\
              sample_rate = 1666.7\nkp = 2.607e-5\nki = 2.508e-5";
    let text = ipos(traffic, pi, "30 s")
        .replace("buffer = 100000", "buffer = 200\nbackpressure = true")
        .replace("[pep.tcp]\n", "[pep.tcp]\necn = true\n");
    let sim = run(&text);
    let kinds: Vec<&str> = sim.flows.iter().map(|f| f.kind.name()).collect();
    assert_eq!(kinds, ["atsp", "bulk", "relay", "relay"]);
    let atsp = &sim.flows[0];
    assert_eq!(atsp.origin.0, 0);
    assert!(sim.flows[1..].iter().all(|f| f.origin.0 == 1));
    // The ATSP flow runs from its server to its client...
    assert!(sim.node_names[atsp.src.0 as usize].starts_with("server"));
    assert!(sim.node_names[atsp.dst.0 as usize].starts_with("client"));
    // ...its bytes reach the client without a relay...
    assert!(atsp.delivered > 10_000_000, "{}", atsp.delivered);
    assert_eq!(sim.relays.len(), 2);
    assert!(sim.relays.iter().all(|r| r.up.0 != 0 && r.down.0 != 0));
    // ...and its round trip is the whole path's (a split hop's would be
    // the servers' 40-80 ms or the clients' 4 ms).
    let fs = sim.flow_summaries();
    assert!(fs[0].rtt_min_s > 0.6, "{}", fs[0].rtt_min_s);
    // The TCP transfer's connections: server side, backbone, client side.
    assert!(fs[1].rtt_min_s < 0.09 && fs[2].rtt_min_s > 0.6 && fs[3].rtt_min_s < 0.01);
    assert!(sim.flows[1].delivered > 0);
    // The PI marks ATSP's (ECN-capable) packets at the transmit queue.
    let transmit = sim.links.iter().position(|l| l.name == "transmit").unwrap() as u32;
    let atsp_marks = (0..sim.drops.flow.len())
        .filter(|&i| sim.drops.flow[i] == 0 && sim.drops.link[i] == transmit)
        .filter(|&i| sim.drops.reason[i] == 4) // an early ECN mark
        .count();
    assert!(atsp_marks >= 10, "{atsp_marks} marks");
    assert!(summary(&sim, "marks_total") >= atsp_marks as f64);
}

/// `trace_cwnd` and `trace_seq` name the scenario's flows (in order of
/// entries, then pairs), not the PEPs' relayed connections, whose ids come
/// between them.
#[test]
fn traced_flows_are_the_named_flows_not_the_relays() {
    let traffic = "[[traffic]]\nkind = \"bulk\"\npairs = [0, 1]\n\
                   [[traffic]]\nkind = \"atsp\"\npairs = 2\natsp = { w_max = 1300 }";
    let text = ipos(traffic, "", "5 s").replace(
        "[simulation]\n",
        "[simulation]\ntrace_cwnd = [0, 1, 2]\ntrace_seq = [1]\nsample_interval = \"1 s\"\n",
    );
    let sim = run(&text);
    let kinds: Vec<&str> = sim.flows.iter().map(|f| f.kind.name()).collect();
    assert_eq!(
        kinds,
        ["bulk", "relay", "relay", "bulk", "relay", "relay", "atsp"]
    );
    let mut traced = sim.cwnd.flow.clone();
    traced.sort_unstable();
    traced.dedup();
    assert_eq!(traced, [0, 3, 6], "the two transfers and the ATSP flow");
    assert_eq!(sim.cwnd.flow.len(), 15, "three flows at 1, 2, 3, 4, 5 s");
    let seq = &sim.taps.seq.log.flow;
    assert!(seq.len() > 100, "{} sequence records", seq.len());
    assert!(seq.iter().all(|&f| f == 3), "the second transfer's records");
}
