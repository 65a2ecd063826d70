//! Speed of the Misra–Gong–Towsley fluid kernel (`satqm_core::fluid`): 20
//! minutes of model time at dt = 1 ms (1.2 million steps per parameter set)
//! for each AQM closure, one parameter set and a batch of 100.
//!
//! Run: `cargo bench -p satqm-core --bench fluid` (prints Markdown tables
//! for BENCHMARKS.md). Each case is repeated and the best wall time kept.
//! One set records every 10 ms (120,001 records, as `simulate_fluid` does by
//! default); the batch records every second so its output stays small
//! (every 10 ms it would be 480 MB).

use std::time::Instant;

use satqm_core::fluid::{
    simulate, AqmLaw, AvqLaw, Interpolation, MgtParams, MgtSettings, PiGains, PiLaw, RedLaw,
};

const REPEATS: usize = 5;
const MODEL_S: f64 = 1200.0;
const DT_S: f64 = 1e-3;

/// The closures on the dumbbell of the tests: 3750 packets/s, Tp = 200 ms.
fn law(aqm: &str) -> (AqmLaw, f64) {
    match aqm {
        "red" => (
            AqmLaw::Red(RedLaw {
                min_th: 50.0,
                max_th: 550.0,
                max_p: 0.1,
                w_q: 1e-4,
                gentle: true,
                delta_s: None,
            }),
            f64::INFINITY,
        ),
        "pi" => (
            AqmLaw::Pi(PiLaw {
                q_ref: 200.0,
                gains: PiGains::Discrete {
                    a: 1.822e-5,
                    b: 1.816e-5,
                    fs: 160.0,
                },
                p0: 0.0,
            }),
            f64::INFINITY,
        ),
        "avq" => (
            AqmLaw::Avq(AvqLaw {
                gamma: 0.98,
                alpha: 0.15,
                vq_buffer: 0.0,
                vcap0: None,
            }),
            f64::INFINITY,
        ),
        "fixed" => (AqmLaw::Fixed { p: 0.01 }, f64::INFINITY),
        "droptail" => (AqmLaw::DropTail, 800.0),
        _ => unreachable!("unknown closure {aqm}"),
    }
}

/// `members` sets with N = 20, 21, …
fn sets(aqm: &str, members: usize) -> Vec<MgtParams> {
    (0..members)
        .map(|i| {
            let (law, buffer) = law(aqm);
            let mut s = MgtParams::new(20.0 + i as f64, 3750.0, 0.2, law);
            s.buffer = buffer;
            s
        })
        .collect()
}

/// CPU time of this process (user + system) in clock ticks, from
/// /proc/self/stat: on a shared machine wall time includes other people's
/// work, CPU time does not.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime and
    // stime are fields 14 and 15 of the line, 12 and 13 after ")".
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)
}

fn ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Best wall time (s) over at least `REPEATS` runs of `simulate`, and the
/// mean CPU time per run (s; runs repeated until 2 s of CPU for resolution).
fn time(settings: &MgtSettings, sets: &[MgtParams], tps: f64) -> (f64, f64) {
    let mut best = f64::INFINITY;
    let c0 = cpu_ticks();
    let mut runs = 0;
    while runs < REPEATS || ((cpu_ticks() - c0) as f64 / tps) < 2.0 {
        let t0 = Instant::now();
        let out = simulate(settings, sets).expect("valid parameters");
        best = best.min(t0.elapsed().as_secs_f64());
        assert!(out.w.iter().all(|w| w.is_finite()));
        runs += 1;
    }
    (best, (cpu_ticks() - c0) as f64 / tps / runs as f64)
}

fn main() {
    // Optional filters: closure name and/or number of sets, e.g. `-- red 100`.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let wanted = |aqm: &str, members: usize| {
        args.iter()
            .all(|a| a == aqm || a.parse::<usize>() == Ok(members))
    };
    let steps = MODEL_S / DT_S;
    let tps = ticks_per_second();
    println!("| closure | delay read | sets | records | best wall s | CPU s | steps / CPU s | ns / step |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let cases: [(&str, Interpolation, usize, u64); 12] = [
        ("red", Interpolation::Nearest, 1, 10),
        ("red", Interpolation::Linear, 1, 10),
        ("pi", Interpolation::Nearest, 1, 10),
        ("avq", Interpolation::Nearest, 1, 10),
        ("fixed", Interpolation::Nearest, 1, 10),
        ("droptail", Interpolation::Nearest, 1, 10),
        ("red", Interpolation::Nearest, 1, 1),
        ("red", Interpolation::Nearest, 100, 1000),
        ("pi", Interpolation::Nearest, 100, 1000),
        ("avq", Interpolation::Nearest, 100, 1000),
        ("fixed", Interpolation::Nearest, 100, 1000),
        ("droptail", Interpolation::Nearest, 100, 1000),
    ];
    for (aqm, interp, members, every) in cases {
        if !wanted(aqm, members) {
            continue;
        }
        let mut st = MgtSettings::new(MODEL_S, DT_S);
        st.record_every = every;
        st.interpolation = interp;
        let (wall, cpu) = time(&st, &sets(aqm, members), tps);
        let total = steps * members as f64;
        let records = match every {
            1 => "every step".to_string(),
            k => format!("every {} ms", k as f64 * DT_S * 1e3),
        };
        println!(
            "| {aqm} | {} | {members} | {records} | {wall:.3} | {cpu:.3} | {:.3e} | {:.1} |",
            interp.name(),
            total / cpu,
            cpu / total * 1e9
        );
    }
}
