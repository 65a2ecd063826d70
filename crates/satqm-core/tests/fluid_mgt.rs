//! The Misra–Gong–Towsley fluid model against its closed-form equilibria
//! (the values `satqm.models.fluid`'s `*_equilibrium` functions compute),
//! batching, drop-tail bounds and resumable integration.

use satqm_core::fluid::{
    simulate, AqmLaw, AvqLaw, Interpolation, MgtBatch, MgtOutput, MgtParams, MgtSettings, PiGains,
    PiLaw, RedLaw,
};

/// Mean of a series of member `i` over the records with `t >= t_from`.
fn mean_after(out: &MgtOutput, series: &[f64], i: usize, t_from: f64) -> f64 {
    let vals: Vec<f64> = (0..out.n_records)
        .filter(|&k| out.t[k] >= t_from)
        .map(|k| series[out.index(k, i)])
        .collect();
    vals.iter().sum::<f64>() / vals.len() as f64
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// Records every 10 ms, as `simulate_fluid` does by default.
fn settings(duration_s: f64) -> MgtSettings {
    let mut s = MgtSettings::new(duration_s, 1e-3);
    s.record_every = 10;
    s
}

fn red_gentle() -> AqmLaw {
    AqmLaw::Red(RedLaw {
        min_th: 50.0,
        max_th: 550.0,
        max_p: 0.1,
        w_q: 1e-4,
        gentle: true,
        delta_s: None,
    })
}

/// RED equilibrium: solve `W*^2 p_RED(q*) = 2` with `W* = (q*/C + Tp) C/N`
/// by bisection on `[min_th, max_th]` (linear part of the profile).
fn red_equilibrium(n: f64, c: f64, tp: f64, lo: f64, hi: f64, mp: f64) -> (f64, f64, f64) {
    let f = |q: f64| {
        let w = (q / c + tp) * c / n;
        w * w * mp * (q - lo) / (hi - lo) - 2.0
    };
    let (mut a, mut b) = (lo, hi);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if f(m) < 0.0 {
            a = m;
        } else {
            b = m;
        }
    }
    let q = 0.5 * (a + b);
    let w = (q / c + tp) * c / n;
    (q, w, mp * (q - lo) / (hi - lo))
}

#[test]
fn fixed_p_reaches_w_equal_sqrt_2_over_p() {
    // W* = sqrt(2/p), q* = max(0, N W* - C Tp), one member per (N, p).
    let cases = [(20.0, 0.02), (60.0, 0.01), (120.0, 0.005)];
    let sets: Vec<MgtParams> = cases
        .iter()
        .map(|&(n, p)| MgtParams::new(n, 3750.0, 0.2, AqmLaw::Fixed { p }))
        .collect();
    let out = simulate(&settings(120.0), &sets).unwrap();
    assert_eq!(out.members, 3);
    for (i, &(n, p)) in cases.iter().enumerate() {
        let w_star = (2.0 / p).sqrt();
        let q_star = (n * w_star - 3750.0 * 0.2).max(0.0);
        assert!(
            rel(mean_after(&out, &out.w, i, 100.0), w_star) < 1e-4,
            "member {i}"
        );
        let q = mean_after(&out, &out.q, i, 100.0);
        assert!(
            (q - q_star).abs() < 1e-3 * q_star.max(1.0),
            "member {i}: q {q} vs {q_star}"
        );
    }
    // 60 flows: W* = 14.142, q* = 98.528 (the Python test's values)
    assert!((mean_after(&out, &out.q, 1, 100.0) - 98.528).abs() < 0.1);
}

#[test]
fn red_settles_at_its_equilibrium() {
    let set = MgtParams::new(60.0, 3750.0, 0.2, red_gentle());
    let out = simulate(&settings(300.0), &[set]).unwrap();
    let (q, w, p) = red_equilibrium(60.0, 3750.0, 0.2, 50.0, 550.0, 0.1);
    assert!((q - 99.845).abs() < 1e-3, "closed form q* = {q}");
    assert!(rel(mean_after(&out, &out.q, 0, 280.0), q) < 1e-3);
    assert!(rel(mean_after(&out, &out.w, 0, 280.0), w) < 1e-3);
    assert!(rel(mean_after(&out, &out.p, 0, 280.0), p) < 1e-3);
    assert!(
        rel(mean_after(&out, &out.aux, 0, 280.0), q) < 1e-3,
        "average queue"
    );
}

#[test]
fn pi_settles_at_q_ref_with_either_gain_form() {
    // q* = q_ref, W* = (q_ref/C + Tp) C/N = 15.833, p* = 2/W*^2 = 0.007978.
    let w_star: f64 = (200.0 / 3750.0 + 0.2) * 3750.0 / 60.0;
    let p_star = 2.0 / (w_star * w_star);
    for gains in [
        // Hollot et al.'s design for C = 3750, N = 60, R = 0.246 s
        PiGains::Continuous {
            kp: 1.818945675918972e-05,
            ki: 9.618326001290089e-06,
        },
        // the same controller as ns-2 coefficients at 160 Hz
        PiGains::Discrete {
            a: 1.822e-5,
            b: 1.816e-5,
            fs: 160.0,
        },
    ] {
        let law = AqmLaw::Pi(PiLaw {
            q_ref: 200.0,
            gains: gains.clone(),
            p0: 0.0,
        });
        let out = simulate(&settings(200.0), &[MgtParams::new(60.0, 3750.0, 0.2, law)]).unwrap();
        assert!(
            rel(mean_after(&out, &out.q, 0, 180.0), 200.0) < 1e-4,
            "{gains:?}"
        );
        assert!(
            rel(mean_after(&out, &out.w, 0, 180.0), w_star) < 1e-3,
            "{gains:?}"
        );
        assert!(
            rel(mean_after(&out, &out.p, 0, 180.0), p_star) < 1e-3,
            "{gains:?}"
        );
    }
}

#[test]
fn avq_settles_at_gamma_c_with_an_empty_queue() {
    // W* = γ C Tp/N = 2.5, p* = 2/W*^2 = 0.32, C~* = γC(1 - p*) = 833,
    // λ* = γC = 1225 packets/s.
    let law = AqmLaw::Avq(AvqLaw {
        gamma: 0.98,
        alpha: 0.15,
        vq_buffer: 0.0,
        vcap0: None,
    });
    let out = simulate(&settings(300.0), &[MgtParams::new(49.0, 1250.0, 0.1, law)]).unwrap();
    assert!(rel(mean_after(&out, &out.w, 0, 280.0), 2.5) < 1e-4);
    assert!(rel(mean_after(&out, &out.p, 0, 280.0), 0.32) < 1e-4);
    assert!(rel(mean_after(&out, &out.aux, 0, 280.0), 833.0) < 1e-4);
    let last = out.n_records - 1;
    assert_eq!(out.q[out.index(last, 0)], 0.0);
    let rate = 49.0 * out.w[out.index(last, 0)] / 0.1;
    assert!(rel(rate, 1225.0) < 1e-4);
}

#[test]
fn droptail_stays_within_its_buffer_and_feeds_back_overflow() {
    let mut set = MgtParams::new(30.0, 3750.0, 0.2, AqmLaw::DropTail);
    set.buffer = 100.0;
    let out = simulate(&MgtSettings::new(60.0, 1e-3), &[set]).unwrap();
    let q_max = out.q.iter().cloned().fold(0.0, f64::max);
    assert_eq!(q_max, 100.0);
    assert!(out.p.iter().all(|&p| p == 0.0));
    assert!(out.p_eff.iter().any(|&p| p > 0.0));
    assert!(out.w.iter().all(|&w| w >= 1.0 && w.is_finite()));
}

#[test]
fn batch_members_do_not_depend_on_their_companions() {
    // Sets are integrated a few at a time, interleaved step by step; each
    // one's trajectory is still the same bits as alone.
    let mut small = MgtParams::new(30.0, 3750.0, 0.2, red_gentle());
    small.buffer = 300.0;
    let big = MgtParams::new(90.0, 1000.0, 0.5, red_gentle());
    let st = settings(20.0);
    let alone = simulate(&st, &[small.clone()]).unwrap();
    let mut sets = vec![big; 7];
    sets[1] = small.clone();
    sets[5] = small;
    let batch = simulate(&st, &sets).unwrap();
    for i in [1, 5] {
        for (a, b) in [
            (&alone.w, &batch.w),
            (&alone.q, &batch.q),
            (&alone.p, &batch.p),
            (&alone.p_eff, &batch.p_eff),
            (&alone.aux, &batch.aux),
        ] {
            assert_eq!(*a, batch.member(b, i), "member {i}");
        }
    }
}

#[test]
fn advancing_in_slices_gives_the_same_trajectories() {
    let sets = vec![
        MgtParams::new(60.0, 3750.0, 0.2, red_gentle()),
        MgtParams::new(60.0, 3750.0, 0.2, AqmLaw::Fixed { p: 0.01 }),
    ];
    let st = settings(5.0);
    let whole = simulate(&st, &sets).unwrap();
    let mut batch = MgtBatch::new(st, sets).unwrap();
    assert_eq!(batch.total_steps(), 10_000);
    let mut slices = 0;
    while !batch.advance(777) {
        slices += 1;
    }
    assert!(slices >= 10, "{slices} slices");
    assert_eq!(batch.into_output(), whole);
}

#[test]
fn linear_interpolation_reaches_the_same_equilibrium() {
    let mut st = settings(300.0);
    st.interpolation = Interpolation::Linear;
    let out = simulate(&st, &[MgtParams::new(60.0, 3750.0, 0.2, red_gentle())]).unwrap();
    let (q, w, _) = red_equilibrium(60.0, 3750.0, 0.2, 50.0, 550.0, 0.1);
    assert!(rel(mean_after(&out, &out.q, 0, 280.0), q) < 1e-3);
    assert!(rel(mean_after(&out, &out.w, 0, 280.0), w) < 1e-3);
    // the transient differs from the nearest-step rule, but only a little
    st.interpolation = Interpolation::Nearest;
    let near = simulate(&st, &[MgtParams::new(60.0, 3750.0, 0.2, red_gentle())]).unwrap();
    assert_ne!(near.w, out.w);
    let k = near.index(1000, 0); // t = 10 s
    assert!(rel(near.w[k], out.w[k]) < 0.05);
}

#[test]
fn twenty_minutes_of_model_time() {
    // Speed is measured by benches/fluid.rs; here only that it runs through.
    let law = AqmLaw::Pi(PiLaw {
        q_ref: 200.0,
        gains: PiGains::Discrete {
            a: 1.822e-5,
            b: 1.816e-5,
            fs: 160.0,
        },
        p0: 0.0,
    });
    let out = simulate(&settings(1200.0), &[MgtParams::new(60.0, 3750.0, 0.2, law)]).unwrap();
    assert_eq!(out.n_records, 120_001);
    assert!((out.t[out.n_records - 1] - 1200.0).abs() < 1e-9);
    assert!((out.q[out.n_records - 1] - 200.0).abs() < 1.0);
}
