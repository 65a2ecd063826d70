//! Unit tests of the MGT model: validation, the column parser, the RED
//! curve, the initial record.

use super::law::RedCurve;
use super::*;

fn cols(pairs: &[(&str, &[f64])]) -> Vec<(String, Vec<f64>)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_vec()))
        .collect()
}

fn fixed(p: f64) -> MgtParams {
    MgtParams::new(60.0, 3750.0, 0.2, AqmLaw::Fixed { p })
}

fn red() -> RedLaw {
    RedLaw {
        min_th: 50.0,
        max_th: 550.0,
        max_p: 0.1,
        w_q: 1e-4,
        gentle: true,
        delta_s: None,
    }
}

fn err_path(set: MgtParams) -> String {
    set.validate(&MgtSettings::new(1.0, 1e-3)).unwrap_err().path
}

#[test]
fn red_profile_matches_the_reference_values() {
    let x = [0.0, 49.9, 50.0, 300.0, 549.9, 550.0, 825.0, 1100.0, 2000.0];
    let plain = [0.0, 0.0, 0.0, 0.05, 0.09998, 1.0, 1.0, 1.0, 1.0];
    let gentle = [0.0, 0.0, 0.0, 0.05, 0.09998, 0.1, 0.55, 1.0, 1.0];
    // min_th 50, max_th 550, max_p 0.1.
    let curve = |gentle| RedCurve::new(&RedLaw { gentle, ..red() });
    for k in 0..x.len() {
        for (c, want) in [(curve(false), plain[k]), (curve(true), gentle[k])] {
            assert!((c.p_initial(x[k]) - want).abs() < 1e-12);
            assert!((c.p(x[k]) - want).abs() < 1e-12, "the step's ramp");
        }
    }
}

#[test]
fn bad_values_name_their_key() {
    let mut s = fixed(0.01);
    s.n = -1.0;
    assert_eq!(err_path(s), "N");
    let mut s = fixed(0.01);
    s.c = f64::NAN;
    assert_eq!(err_path(s), "C");
    let mut s = fixed(0.01);
    s.tp = 5e-4; // below dt
    assert_eq!(err_path(s), "Tp");
    let mut s = fixed(0.01);
    s.buffer = 0.0;
    assert_eq!(err_path(s), "buffer");
    let mut s = fixed(0.01);
    s.w_min = 10.0;
    s.w_max = 5.0;
    assert_eq!(err_path(s), "w_min");
    let mut s = fixed(0.01);
    s.buffer = 1e300; // delay history too long
    assert_eq!(err_path(s), "buffer");
    assert_eq!(err_path(fixed(1.5)), "p_fixed");
    let mut r = red();
    r.min_th = 600.0;
    assert_eq!(
        err_path(MgtParams::new(1.0, 1.0, 1.0, AqmLaw::Red(r))),
        "min_th"
    );
    let mut r = red();
    r.w_q = 1.0;
    assert_eq!(
        err_path(MgtParams::new(1.0, 1.0, 1.0, AqmLaw::Red(r))),
        "w_q"
    );
    let mut r = red();
    r.delta_s = Some(0.0);
    assert_eq!(
        err_path(MgtParams::new(1.0, 1.0, 1.0, AqmLaw::Red(r))),
        "red_delta"
    );
    let pi = |gains| {
        MgtParams::new(
            1.0,
            1.0,
            1.0,
            AqmLaw::Pi(PiLaw {
                q_ref: 10.0,
                gains,
                p0: 0.0,
            }),
        )
    };
    assert_eq!(
        err_path(pi(PiGains::Continuous { kp: -1.0, ki: 0.0 })),
        "kp"
    );
    assert_eq!(
        err_path(pi(PiGains::Discrete {
            a: 1e-5,
            b: 2e-5,
            fs: 160.0
        })),
        "a"
    );
    assert_eq!(
        err_path(pi(PiGains::Discrete {
            a: 2e-5,
            b: 1e-5,
            fs: 0.0
        })),
        "fs"
    );
    let avq = |gamma| {
        MgtParams::new(
            1.0,
            1.0,
            1.0,
            AqmLaw::Avq(AvqLaw {
                gamma,
                alpha: 0.1,
                vq_buffer: 0.0,
                vcap0: None,
            }),
        )
    };
    assert_eq!(err_path(avq(0.0)), "gamma");
    assert_eq!(
        err_path(MgtParams::new(1.0, 1.0, 1.0, AqmLaw::DropTail)),
        "buffer"
    );
}

#[test]
fn settings_errors_name_their_key() {
    let s = |f: fn(&mut MgtSettings)| {
        let mut st = MgtSettings::new(1.0, 1e-3);
        f(&mut st);
        simulate(&st, &[fixed(0.01)]).unwrap_err().path
    };
    assert_eq!(s(|st| st.dt_s = -1.0), "dt");
    assert_eq!(s(|st| st.duration_s = 0.0), "duration");
    assert_eq!(s(|st| st.record_every = 0), "record_every");
    assert_eq!(s(|st| st.max_queue_delay_s = f64::NAN), "max_queue_delay");
    assert_eq!(s(|st| st.duration_s = 1e12), "duration"); // output too large
    let e = simulate(&MgtSettings::new(1.0, 1e-3), &[]).unwrap_err();
    assert_eq!(e.path, "params");
}

#[test]
fn batch_errors_carry_the_member_index() {
    let e = simulate(&MgtSettings::new(1.0, 1e-3), &[fixed(0.01), fixed(2.0)]).unwrap_err();
    assert_eq!(e.path, "p_fixed[1]");
    assert_eq!(e.to_string(), "p_fixed[1]: must be in [0, 1], got 2");
}

#[test]
fn columns_broadcast_and_name_bad_keys() {
    let sets = params_from_columns(
        "red",
        true,
        &cols(&[
            ("N", &[60.0, 30.0, 90.0]),
            ("C", &[3750.0]),
            ("Tp", &[0.2]),
            ("min_th", &[50.0]),
            ("max_th", &[550.0]),
            ("max_p", &[0.05, 0.1, 0.2]),
            ("w_q", &[1e-4]),
        ]),
    )
    .unwrap();
    assert_eq!(sets.len(), 3);
    assert_eq!(sets[2].n, 90.0);
    assert_eq!(sets[1].c, 3750.0);
    assert_eq!(sets[0].w0, 1.0);
    assert!(sets[0].buffer.is_infinite());
    match &sets[2].aqm {
        AqmLaw::Red(r) => assert_eq!((r.max_p, r.gentle, r.delta_s), (0.2, true, None)),
        other => panic!("{other:?}"),
    }

    let base = [("N", &[10.0][..]), ("C", &[1000.0]), ("Tp", &[0.1])];
    let path = |aqm: &str, extra: &[(&str, &[f64])]| {
        let mut c = base.to_vec();
        c.extend_from_slice(extra);
        params_from_columns(aqm, false, &cols(&c)).unwrap_err().path
    };
    assert_eq!(path("codel", &[]), "aqm");
    assert_eq!(path("red", &[]), "min_th");
    assert_eq!(path("fixed", &[]), "p_fixed");
    assert_eq!(
        path("fixed", &[("p_fixed", &[0.1]), ("w_q", &[0.1])]),
        "w_q"
    );
    assert_eq!(path("fixed", &[("p_fixed", &[0.1]), ("N", &[1.0])]), "N");
    assert_eq!(path("fixed", &[("p_fixed", &[])]), "p_fixed");
    assert_eq!(
        path(
            "fixed",
            &[("p_fixed", &[0.1, 0.2]), ("W0", &[1.0, 2.0, 3.0])]
        ),
        "W0"
    );
    assert_eq!(path("pi", &[("q_ref", &[1.0])]), "kp");
    assert_eq!(path("pi", &[("q_ref", &[1.0]), ("kp", &[1.0])]), "ki");
    assert_eq!(
        path(
            "pi",
            &[
                ("q_ref", &[1.0]),
                ("kp", &[1.0]),
                ("ki", &[1.0]),
                ("a", &[1.0])
            ]
        ),
        "kp"
    );
    assert_eq!(
        path("pi", &[("q_ref", &[1.0]), ("a", &[1.0]), ("b", &[1.0])]),
        "fs"
    );
    assert_eq!(path("avq", &[("gamma", &[0.98])]), "alpha");
    let mut c = base.to_vec();
    c.retain(|(k, _)| *k != "Tp");
    c.push(("p_fixed", &[0.1]));
    assert_eq!(
        params_from_columns("fixed", false, &cols(&c))
            .unwrap_err()
            .path,
        "Tp"
    );
}

#[test]
fn initial_record_is_the_initial_state() {
    let mut set = MgtParams::new(
        60.0,
        3750.0,
        0.2,
        AqmLaw::Avq(AvqLaw {
            gamma: 0.5,
            alpha: 0.1,
            vq_buffer: 0.0,
            vcap0: Some(1e6),
        }),
    );
    set.w0 = 3.0;
    set.q0 = 500.0;
    set.buffer = 100.0;
    let mut st = MgtSettings::new(0.05, 1e-3);
    st.record_every = 10;
    let out = simulate(&st, &[set]).unwrap();
    assert_eq!(out.n_records, 6);
    assert_eq!(out.t, vec![0.0, 0.01, 0.02, 0.03, 0.04, 0.05]);
    assert_eq!((out.w[0], out.q[0], out.p[0]), (3.0, 100.0, 0.0));
    assert_eq!(out.aux[0], 3750.0, "vcap0 is capped at C");
}
