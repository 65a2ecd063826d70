//! Validates TCP options: the scenario's `[tcp]` table and the `tcp`
//! overrides of traffic entries and PEPs, into a [`TcpConfig`].
//!
//! Every connection's options come from [`tcp_for`]: the overrides laid
//! over `[tcp]` key by key, then checked as one table, so an error names
//! the key path of the table that holds the override (`traffic[1].tcp.mss`).

use crate::error::ConfigError;
use crate::time::SimTime;
use crate::transport::tcp::cc::{
    Bbr3Params, BbrParams, CubicParams, DctcpParams, HyStartKind, PragueParams, RenoParams,
};
use crate::transport::tcp::sndbuf::BUFFER_OVERHEAD;
use crate::transport::tcp::{
    CcKind, CcRules, EcnCodepoint, EcnFeedback, Profile, Recovery, RtoRule, TcpConfig,
};
use crate::units::Quantity;
use crate::units::{int_in, quantity_bytes, quantity_rate, quantity_time};

use super::raw::{RawCc, RawEcn, RawTcp};

/// The options of a connection: `over` (if any) laid over the scenario's
/// `[tcp]` table `base`, checked with errors under `path`.
pub(super) fn tcp_for(
    base: &RawTcp,
    over: Option<&RawTcp>,
    path: &str,
) -> Result<TcpConfig, ConfigError> {
    match over {
        Some(o) if o.profile.is_some() => {
            // The entry's profile replaces what `[tcp]` says for the keys
            // a profile sets; the entry's own keys still override it. The
            // Linux profiles name a congestion control (CUBIC); `rfc` leaves
            // `[tcp]`'s.
            let linux = matches!(o.profile.as_deref(), Some("linux" | "linux-2009"));
            let base = RawTcp {
                recovery: None,
                initial_window: None,
                delayed_ack_timeout: None,
                min_rto: None,
                max_rto: None,
                initial_rto: None,
                rto_rule: None,
                cc_rules: None,
                quickack: None,
                rack: None,
                tlp: None,
                prr: None,
                send_buffer: None,
                timestamps: None,
                ecn_fallback: None,
                receive_autotuning: None,
                dsack: None,
                tso_bursts: None,
                timer_hz: None,
                cc: unless(linux, &base.cc),
                hybla_rtt0: unless(linux, &base.hybla_rtt0),
                fixed_window: unless(linux, &base.fixed_window),
                ..base.clone()
            };
            tcp_config(&overlay(&base, o), path)
        }
        Some(o) => tcp_config(&overlay(base, o), path),
        None => tcp_config(base, path),
    }
}

/// An option that works only with another (`has`): `asked`, refused with
/// `needs (why)` under `path.key` if true without it, else the profile's
/// `current`, off without it.
fn needs(
    asked: Option<bool>,
    current: bool,
    has: bool,
    path: &str,
    key: &str,
    needs: &str,
    why: &str,
) -> Result<bool, ConfigError> {
    match asked {
        Some(true) if !has => Err(ConfigError::new(
            format!("{path}.{key}"),
            format!("{needs} ({why})"),
        )),
        Some(v) => Ok(v),
        None => Ok(current && has),
    }
}

/// `v`, or nothing if `drop`.
fn unless<T: Clone>(drop: bool, v: &Option<T>) -> Option<T> {
    if drop {
        None
    } else {
        v.clone()
    }
}

/// `base` with every key `over` sets replaced.
fn overlay(base: &RawTcp, over: &RawTcp) -> RawTcp {
    macro_rules! pick {
        ($($f:ident),*) => { RawTcp { $($f: over.$f.clone().or_else(|| base.$f.clone())),* } };
    }
    pick!(
        recovery,
        cc,
        mss,
        initial_window,
        delayed_ack,
        delayed_ack_timeout,
        window_scaling,
        receive_buffer,
        send_buffer,
        ecn,
        ecn_codepoint,
        rate_cap,
        pacing,
        min_rto,
        max_rto,
        initial_rto,
        rto_rule,
        cc_rules,
        quickack,
        adaptive_ack,
        rack,
        tlp,
        prr,
        handshake,
        dupack_threshold,
        hybla_rtt0,
        fixed_window,
        initial_ssthresh,
        timestamps,
        ecn_fallback,
        receive_autotuning,
        dsack,
        tso_bursts,
        timer_hz,
        profile
    )
}

/// Check one table's keys in a fixed order (the first broken rule is the
/// one reported) over the defaults of its `profile` ([`Profile`]).
fn tcp_config(raw: &RawTcp, path: &str) -> Result<TcpConfig, ConfigError> {
    let mut mss = TcpConfig::default().mss;
    if let Some(m) = raw.mss {
        mss = int_in(m, &format!("{path}.mss"), 64, 65_495)? as u32;
    }
    let mut c = profile(raw.profile.as_deref(), path)?.base(mss);
    if let Some(r) = &raw.recovery {
        c.recovery = recovery(r, path)?;
    }
    c.cc = congestion_control(raw, c.cc, path)?;
    if let Some(w) = raw.initial_window {
        c.initial_window = int_in(w, &format!("{path}.initial_window"), 1, 1000)? as u32;
    }
    if let Some(d) = raw.delayed_ack {
        c.delayed_ack = d;
    }
    if let Some(q) = &raw.delayed_ack_timeout {
        c.delayed_ack_timeout = quantity_time(q, &format!("{path}.delayed_ack_timeout"), false)?;
        if c.delayed_ack_timeout > SimTime::from_ms(500) {
            return Err(ConfigError::new(
                format!("{path}.delayed_ack_timeout"),
                "must be at most 500 ms (RFC 5681)",
            ));
        }
    }
    if let Some(w) = raw.window_scaling {
        c.window_scaling = w;
    }
    if let Some(b) = receive_buffer(raw, &c, path)? {
        c.receive_buffer = b;
    }
    if let Some(q) = &raw.send_buffer {
        let b = quantity_bytes(q, &format!("{path}.send_buffer"))?;
        if b < c.mss as u64 + BUFFER_OVERHEAD {
            return Err(ConfigError::new(
                format!("{path}.send_buffer"),
                format!(
                    "must hold at least one segment ({} bytes: the MSS and {BUFFER_OVERHEAD} bytes of buffer overhead)",
                    c.mss as u64 + BUFFER_OVERHEAD
                ),
            ));
        }
        c.send_buffer = Some(b);
    }
    ecn(raw, &mut c, path)?;
    if let Some(q) = &raw.rate_cap {
        c.rate_cap = Some(quantity_rate(q, &format!("{path}.rate_cap"))?);
    }
    if let Some(p) = raw.pacing {
        c.pacing = p;
    } else if matches!(c.cc, CcKind::Prague(_)) {
        // Linux's tcp_prague asks for pacing (SK_PACING_NEEDED in
        // prague_init()), as the Prague draft expects of a scalable control.
        c.pacing = true;
    }
    retransmission_timer(raw, &mut c, path)?;
    if let Some(r) = &raw.cc_rules {
        c.cc_rules = match r.as_str() {
            "rfc" => CcRules::Rfc,
            "linux" => CcRules::Linux,
            "linux-2009" => CcRules::Linux2009,
            other => {
                return Err(ConfigError::new(
                    format!("{path}.cc_rules"),
                    format!("unknown window rules {other:?} (known: rfc, linux, linux-2009)"),
                ))
            }
        };
    }
    let hystart = match &mut c.cc {
        CcKind::Cubic(p) => Some(&mut p.hystart),
        CcKind::Reno(p) => Some(&mut p.hystart),
        _ => None,
    };
    if let Some(hystart) = hystart {
        if let HyStartKind::Linux { paced } = hystart {
            // A paced sender's ACK train is not halved (hystart_update():
            // sk_pacing_status set by fq or by the sender's own pacing).
            *paced = c.pacing;
        }
        if let HyStartKind::Rfc9406 { paced } = hystart {
            // RFC 9406 section 4.3: L is unbounded for a paced sender.
            *paced = c.pacing;
            if c.cc_rules == CcRules::Linux2009 {
                return Err(ConfigError::new(
                    format!("{path}.cc.hystart"),
                    "cannot be \"rfc9406\" with cc_rules = \"linux-2009\" (HyStart++ counts the \
                     segments an ACK acknowledges; those kernels counted ACKs and had Linux's HyStart)",
                ));
            }
        }
    }
    if let Some(ts) = raw.timestamps {
        c.timestamps = ts;
        c.header = c.ack_header();
    }
    if let Some(q) = raw.quickack {
        c.quickack = int_in(q, &format!("{path}.quickack"), 0, 1000)? as u32;
    }
    if let Some(hz) = raw.timer_hz {
        if hz != 0 && !(10..=10_000).contains(&hz) {
            return Err(ConfigError::new(
                format!("{path}.timer_hz"),
                format!("must be 0 (exact timers) or a kernel tick rate from 10 to 10000 (Linux's CONFIG_HZ: 100, 250, 300 or 1000), not {hz}"),
            ));
        }
        c.timer_hz = hz as u32;
    }
    c.adaptive_ack = needs(
        raw.adaptive_ack,
        c.adaptive_ack,
        c.delayed_ack,
        path,
        "adaptive_ack",
        "needs delayed_ack = true",
        "it times the delayed ACKs",
    )?;
    if c.adaptive_ack && raw.delayed_ack_timeout.is_some() {
        if raw.adaptive_ack.is_none() {
            // A fixed timeout asked for replaces the profile's adaptive one.
            c.adaptive_ack = false;
        } else {
            return Err(ConfigError::new(
            format!("{path}.delayed_ack_timeout"),
            "cannot be set with adaptive_ack = true (the delay then follows the data's arrivals, \
             Linux's ato, at most 200 ms)",
            ));
        }
    }
    // Options that need another: asked for without it, refused by key; a
    // profile's go with what it has (RACK and PRR with its SACK recovery).
    let sack = c.recovery == Recovery::Sack;
    let sack_why = "needs recovery = \"sack\"";
    c.rack = needs(
        raw.rack,
        c.rack,
        sack,
        path,
        "rack",
        sack_why,
        "RACK reads the SACK scoreboard",
    )?;
    c.tlp = needs(
        raw.tlp,
        c.tlp,
        c.rack,
        path,
        "tlp",
        "needs rack = true",
        "RACK detects the losses a probe reveals",
    )?;
    c.dsack = needs(
        raw.dsack,
        c.dsack,
        sack,
        path,
        "dsack",
        sack_why,
        "D-SACK is a SACK block",
    )?;
    c.prr = needs(
        raw.prr,
        c.prr,
        sack,
        path,
        "prr",
        sack_why,
        "PRR counts what SACKs deliver",
    )?;
    c.ecn_fallback = needs(
        raw.ecn_fallback,
        c.ecn_fallback,
        c.ecn,
        path,
        "ecn_fallback",
        "needs ECN (ecn on, or a scalable control)",
        "without ECN there is nothing to fall back from",
    )?;
    let bbr = match c.cc {
        CcKind::Bbr(_) => Some("bbr"),
        CcKind::Bbr3(_) => Some("bbr3"),
        _ => None,
    };
    if let Some(name) = bbr {
        // Linux's BBR asks for pacing (`SK_PACING_NEEDED`) and counts
        // SACKed segments as delivered.
        if raw.pacing == Some(false) {
            return Err(ConfigError::new(
                format!("{path}.pacing"),
                format!(
                    "cannot be false with cc = \"{name}\" (BBR sets the pacing rate it sends at)"
                ),
            ));
        }
        c.pacing = true;
        if c.recovery != Recovery::Sack {
            return Err(ConfigError::new(
                format!("{path}.recovery"),
                format!("must be \"sack\" with cc = \"{name}\" (its delivery rate counts SACKed segments)"),
            ));
        }
    }
    if bbr == Some("bbr3") {
        // Google's BBRv3 heeds marks only with feedback that counts each
        // (tcp_bbr.c's bbr_can_use_ecn(): ECN negotiated on a route marked
        // as a shallow-threshold AQM's); RFC 3168's echo says only that a
        // window saw marks, and the draft specifies no response to it.
        if c.ecn && c.ecn_feedback == EcnFeedback::Classic {
            return Err(ConfigError::new(
                format!("{path}.ecn"),
                "cc = \"bbr3\" needs \"dctcp\" or \"accecn\" feedback: it measures the share of data marked, \
                 as Google's BBRv3 does (RFC 3168's echo does not count marks, and the draft specifies no response to it)",
            ));
        }
        let given = match &raw.cc {
            Some(RawCc::Table(t)) => t
                .params
                .keys()
                .find(|k| k.starts_with("ecn_") || *k == "full_ecn_cnt")
                .cloned(),
            _ => None,
        };
        if let (Some(k), false) = (given, c.ecn) {
            return Err(ConfigError::new(
                format!("{path}.cc.{k}"),
                "needs ECN on (tcp.ecn = \"dctcp\" or \"accecn\")",
            ));
        }
    }
    if let Some(h) = raw.handshake {
        c.handshake = h;
    }
    c.tso_bursts = needs(
        raw.tso_bursts,
        c.tso_bursts,
        c.pacing,
        path,
        "tso_bursts",
        "needs pacing = true (or cc = \"bbr\", \"bbr3\" or \"prague\", which pace)",
        "an unpaced sender's segments leave back to back anyway",
    )?;
    c.receive_autotuning = needs(
        raw.receive_autotuning,
        c.receive_autotuning,
        c.handshake && c.window_scaling,
        path,
        "receive_autotuning",
        "needs handshake = true and window_scaling = true",
        "the receiver sets its buffer up at the handshake, whose SYN-ACK gives its first round-trip sample, and grows a scaled window",
    )?;
    if let Some(d) = raw.dupack_threshold {
        c.dupack_threshold = int_in(d, &format!("{path}.dupack_threshold"), 1, 100)? as u32;
    }
    if let Some(q) = &raw.initial_ssthresh {
        let b = quantity_bytes(q, &format!("{path}.initial_ssthresh"))?;
        if b < 2 * c.mss as u64 {
            return Err(ConfigError::new(
                format!("{path}.initial_ssthresh"),
                "must be at least two MSS (RFC 5681)",
            ));
        }
        if matches!(c.cc, CcKind::Fixed { .. }) {
            return Err(ConfigError::new(
                format!("{path}.initial_ssthresh"),
                "is not used with cc = \"fixed\" (no slow start)",
            ));
        }
        c.initial_ssthresh = Some(b);
    }
    Ok(c)
}

fn profile(name: Option<&str>, path: &str) -> Result<Profile, ConfigError> {
    match name {
        None | Some("rfc") => Ok(Profile::Rfc),
        Some("linux") => Ok(Profile::Linux),
        Some("linux-2009") => Ok(Profile::Linux2009),
        Some(other) => Err(ConfigError::new(
            format!("{path}.profile"),
            format!("unknown TCP profile {other:?} (known: rfc, linux, linux-2009)"),
        )),
    }
}

fn recovery(name: &str, path: &str) -> Result<Recovery, ConfigError> {
    match name {
        "tahoe" => Ok(Recovery::Tahoe),
        "reno" => Ok(Recovery::Reno),
        "newreno" => Ok(Recovery::NewReno),
        "sack" => Ok(Recovery::Sack),
        other => Err(ConfigError::new(
            format!("{path}.recovery"),
            format!("unknown loss recovery {other:?} (known: tahoe, reno, newreno, sack)"),
        )),
    }
}

/// `cc` (`default` if absent): a name, or a table of a kind and its
/// parameters (`[tcp.cc]`, errors under `tcp.cc.KEY`); the flat keys only
/// one congestion control reads, `fixed_window` (required by "fixed") and
/// `hybla_rtt0` (Hybla's reference RTT, 25 ms unless given), still apply.
fn congestion_control(raw: &RawTcp, default: CcKind, path: &str) -> Result<CcKind, ConfigError> {
    let cc_path = format!("{path}.cc");
    let params = match &raw.cc {
        Some(RawCc::Table(t)) => t.params.clone(),
        _ => Default::default(),
    };
    let mut table = CcTable {
        params,
        path: &cc_path,
    };
    let mut cc = match raw.cc.as_ref().map(|c| c.kind()) {
        None => default,
        Some("reno") => CcKind::Reno(reno_params(&mut table)?),
        Some("hybla") => CcKind::Hybla {
            rtt0: match table.take("rtt0")? {
                Some(v) => quantity_time(&table.quantity(&v, "rtt0")?, &table.key("rtt0"), false)?,
                None => SimTime::from_ms(25),
            },
        },
        Some("fixed") => {
            match (table.take("window")?, &raw.fixed_window) {
                (Some(v), _) => CcKind::Fixed {
                    window: quantity_bytes(&table.quantity(&v, "window")?, &table.key("window"))?,
                },
                (None, Some(q)) => CcKind::Fixed {
                    window: quantity_bytes(q, &format!("{path}.fixed_window"))?,
                },
                (None, None) => return Err(ConfigError::new(
                    format!("{path}.fixed_window"),
                    "is required with cc = \"fixed\" (or cc = { kind = \"fixed\", window = ... })",
                )),
            }
        }
        Some("cubic") => CcKind::Cubic(cubic_params(&mut table)?),
        Some("dctcp") => CcKind::Dctcp(dctcp_params(&mut table)?),
        Some("prague") => CcKind::Prague(prague_params(&mut table)?),
        Some("bbr") => CcKind::Bbr(bbr_params(&mut table)?),
        Some("bbr3") => CcKind::Bbr3(bbr3_params(&mut table)?),
        Some(other) => {
            return Err(ConfigError::new(
                if matches!(raw.cc, Some(RawCc::Table(_))) {
                    format!("{cc_path}.kind")
                } else {
                    cc_path.clone()
                },
                format!(
                    "unknown congestion control {other:?} (known: reno, cubic, dctcp, prague, bbr, bbr3, hybla, fixed)"
                ),
            ))
        }
    };
    table.finish()?;
    if raw.fixed_window.is_some() && !matches!(cc, CcKind::Fixed { .. }) {
        return Err(ConfigError::new(
            format!("{path}.fixed_window"),
            "is used only with cc = \"fixed\"",
        ));
    }
    if let Some(q) = &raw.hybla_rtt0 {
        let r = quantity_time(q, &format!("{path}.hybla_rtt0"), false)?;
        match &mut cc {
            CcKind::Hybla { rtt0 } => *rtt0 = r,
            _ => {
                return Err(ConfigError::new(
                    format!("{path}.hybla_rtt0"),
                    "is used only with cc = \"hybla\"",
                ))
            }
        }
    }
    Ok(cc)
}

/// DCTCP's parameters from its table.
fn dctcp_params(t: &mut CcTable) -> Result<DctcpParams, ConfigError> {
    let d = DctcpParams::default();
    let (g, alpha_init) = alpha_params(t, d.g, d.alpha_init)?;
    Ok(DctcpParams { g, alpha_init })
}

/// The gain and initial value of a scalable control's α.
fn alpha_params(t: &mut CcTable, mut g: f64, mut alpha: f64) -> Result<(f64, f64), ConfigError> {
    if let Some(v) = t.take("g")? {
        g = t.real(&v, "g")?;
        if !(g > 0.0 && g <= 1.0) {
            return Err(ConfigError::new(
                t.key("g"),
                "must be in (0, 1] (RFC 8257: 1/16)",
            ));
        }
    }
    if let Some(v) = t.take("alpha_init")? {
        alpha = t.real(&v, "alpha_init")?;
        if !(0.0..=1.0).contains(&alpha) {
            return Err(ConfigError::new(
                t.key("alpha_init"),
                "must be between 0 and 1",
            ));
        }
    }
    Ok((g, alpha))
}

/// TCP Prague's parameters from its table.
fn prague_params(t: &mut CcTable) -> Result<PragueParams, ConfigError> {
    let mut p = PragueParams::default();
    (p.g, p.alpha_init) = alpha_params(t, p.g, p.alpha_init)?;
    if let Some(v) = t.take("rtt_target")? {
        p.rtt_target = quantity_time(&t.quantity(&v, "rtt_target")?, &t.key("rtt_target"), true)?;
    }
    if let Some(v) = t.take("rtt_transition")? {
        p.rtt_transition = match v.as_integer() {
            Some(n) if (0..=1_000_000).contains(&n) => n as u32,
            _ => {
                return Err(ConfigError::new(
                    t.key("rtt_transition"),
                    "must be a whole number of rounds, 0 to 1000000",
                ))
            }
        };
    }
    if let Some(v) = t.take("classic_ecn_fallback")? {
        p.classic_ecn_fallback = v.as_bool().ok_or_else(|| {
            ConfigError::new(t.key("classic_ecn_fallback"), "must be true or false")
        })?;
    }
    Ok(p)
}

/// `ecn` and `ecn_codepoint`. `ecn = true` is RFC 3168's feedback
/// (`"classic"`); a scalable control (`cc = "dctcp"`) turns ECN on with
/// DCTCP's feedback unless `ecn` names AccECN's, and refuses it off or
/// classic (its α needs every mark). ECT(0) unless `ecn_codepoint` says
/// `"ect1"`.
fn ecn(raw: &RawTcp, c: &mut TcpConfig, path: &str) -> Result<(), ConfigError> {
    let key = format!("{path}.ecn");
    let scalable = matches!(c.cc, CcKind::Dctcp(_) | CcKind::Prague(_));
    let prague = matches!(c.cc, CcKind::Prague(_));
    let given = match &raw.ecn {
        None => None,
        Some(RawEcn::On(false)) => Some(None),
        Some(RawEcn::On(true)) => Some(Some(EcnFeedback::Classic)),
        Some(RawEcn::Name(n)) => Some(match n.as_str() {
            "off" => None,
            "classic" => Some(EcnFeedback::Classic),
            "dctcp" => Some(EcnFeedback::Dctcp),
            "accecn" => Some(EcnFeedback::AccEcn),
            other => {
                return Err(ConfigError::new(
                    key,
                    format!("unknown ECN feedback {other:?} (known: off, classic, dctcp, accecn)"),
                ))
            }
        }),
    };
    let feedback = match given {
        None if prague => Some(EcnFeedback::AccEcn),
        None if scalable => Some(EcnFeedback::Dctcp),
        None => c.ecn.then_some(c.ecn_feedback),
        Some(f) => f,
    };
    if scalable && !matches!(feedback, Some(EcnFeedback::Dctcp | EcnFeedback::AccEcn)) {
        let name = if prague { "prague" } else { "dctcp" };
        return Err(ConfigError::new(
            key,
            format!(
                "cc = \"{name}\" needs \"dctcp\" or \"accecn\" feedback (its α counts every mark)"
            ),
        ));
    }
    c.ecn = feedback.is_some();
    c.ecn_feedback = feedback.unwrap_or(EcnFeedback::Classic);
    if prague {
        // The L4S identifier (RFC 9331) unless the scenario says otherwise.
        c.ecn_codepoint = EcnCodepoint::Ect1;
    }
    if let Some(cp) = &raw.ecn_codepoint {
        c.ecn_codepoint = match cp.as_str() {
            "ect0" => EcnCodepoint::Ect0,
            "ect1" => EcnCodepoint::Ect1,
            other => {
                return Err(ConfigError::new(
                    format!("{path}.ecn_codepoint"),
                    format!("unknown ECN codepoint {other:?} (known: ect0, ect1)"),
                ))
            }
        };
        if !c.ecn {
            return Err(ConfigError::new(
                format!("{path}.ecn_codepoint"),
                "needs ECN on (ecn = true, or a feedback)",
            ));
        }
    }
    Ok(())
}

/// Reno's parameters from its table: the slow-start exit.
fn reno_params(t: &mut CcTable) -> Result<RenoParams, ConfigError> {
    let mut p = RenoParams::default();
    if let Some(v) = t.take("hystart")? {
        p.hystart = match v.as_str() {
            Some("rfc9406") => HyStartKind::Rfc9406 { paced: false },
            Some("off") => HyStartKind::Off,
            _ => {
                return Err(ConfigError::new(
                    t.key("hystart"),
                    "must be \"rfc9406\" (HyStart++) or \"off\" with Reno (Linux's HyStart is \
                     part of its CUBIC, tcp_cubic.c)",
                ))
            }
        };
    }
    Ok(p)
}

/// CUBIC's parameters from its table.
fn cubic_params(t: &mut CcTable) -> Result<CubicParams, ConfigError> {
    let mut p = CubicParams::default();
    if let Some(v) = t.take("beta")? {
        p.beta = t.real(&v, "beta")?;
        if !(p.beta > 0.0 && p.beta < 1.0) {
            return Err(ConfigError::new(
                t.key("beta"),
                "must be between 0 and 1 (exclusive)",
            ));
        }
    }
    if let Some(v) = t.take("c")? {
        p.c = t.real(&v, "c")?;
        if !(p.c > 0.0 && p.c.is_finite()) {
            return Err(ConfigError::new(t.key("c"), "must be > 0"));
        }
    }
    if let Some(v) = t.take("fast_convergence")? {
        p.fast_convergence = v
            .as_bool()
            .ok_or_else(|| ConfigError::new(t.key("fast_convergence"), "must be true or false"))?;
    }
    if let Some(v) = t.take("hystart")? {
        p.hystart = match v.as_str() {
            Some("linux") => HyStartKind::Linux { paced: false },
            Some("rfc9406") => HyStartKind::Rfc9406 { paced: false },
            Some("off") => HyStartKind::Off,
            _ => {
                return Err(ConfigError::new(
                    t.key("hystart"),
                    "must be \"linux\" (Linux's HyStart), \"rfc9406\" (HyStart++) or \"off\"",
                ))
            }
        };
    }
    Ok(p)
}

/// BBR's parameters from its table.
fn bbr_params(t: &mut CcTable) -> Result<BbrParams, ConfigError> {
    let mut p = BbrParams::default();
    let gain = |t: &CcTable, k: &str, v: &toml::Value, lo: f64, hi: f64| {
        let x = t.real(v, k)?;
        if !(x > lo && x <= hi) {
            return Err(ConfigError::new(
                t.key(k),
                format!("must be above {lo} and at most {hi}"),
            ));
        }
        Ok(x)
    };
    if let Some(v) = t.take("high_gain")? {
        p.high_gain = gain(t, "high_gain", &v, 1.0, 10.0)?;
    }
    if let Some(v) = t.take("drain_gain")? {
        p.drain_gain = gain(t, "drain_gain", &v, 0.0, 1.0)?;
    }
    if let Some(v) = t.take("cwnd_gain")? {
        p.cwnd_gain = gain(t, "cwnd_gain", &v, 0.0, 10.0)?;
    }
    if let Some(v) = t.take("full_bw_threshold")? {
        p.full_bw_threshold = gain(t, "full_bw_threshold", &v, 1.0, 10.0)?;
    }
    if let Some(v) = t.take("pacing_margin")? {
        let x = t.real(&v, "pacing_margin")?;
        if !(0.0..0.5).contains(&x) {
            return Err(ConfigError::new(
                t.key("pacing_margin"),
                "must be at least 0 and below 0.5",
            ));
        }
        p.pacing_margin = x;
    }
    if let Some(v) = t.take("extra_acked_gain")? {
        let x = t.real(&v, "extra_acked_gain")?;
        if !(0.0..=10.0).contains(&x) {
            return Err(ConfigError::new(
                t.key("extra_acked_gain"),
                "must be between 0 and 10 (0: no aggregation allowance)",
            ));
        }
        p.extra_acked_gain = x;
    }
    let count = |t: &CcTable, k: &str, v: &toml::Value, lo: i64, hi: i64| match v {
        toml::Value::Integer(i) => int_in(*i, &t.key(k), lo, hi).map(|x| x as u32),
        _ => Err(ConfigError::new(t.key(k), "must be an integer")),
    };
    if let Some(v) = t.take("bw_window_rounds")? {
        p.bw_window_rounds = count(t, "bw_window_rounds", &v, 1, 1000)?;
    }
    if let Some(v) = t.take("full_bw_rounds")? {
        p.full_bw_rounds = count(t, "full_bw_rounds", &v, 1, 100)?;
    }
    if let Some(v) = t.take("min_cwnd")? {
        p.min_cwnd = count(t, "min_cwnd", &v, 1, 1000)?;
    }
    if let Some(v) = t.take("probe_rtt_interval")? {
        let q = t.quantity(&v, "probe_rtt_interval")?;
        p.probe_rtt_interval = quantity_time(&q, &t.key("probe_rtt_interval"), false)?;
    }
    if let Some(v) = t.take("probe_rtt_time")? {
        let q = t.quantity(&v, "probe_rtt_time")?;
        p.probe_rtt_time = quantity_time(&q, &t.key("probe_rtt_time"), true)?;
    }
    if let Some(v) = t.take("long_term")? {
        p.long_term = v
            .as_bool()
            .ok_or_else(|| ConfigError::new(t.key("long_term"), "must be true or false"))?;
    }
    if let Some(v) = t.take("min_rtt_on_equal")? {
        p.min_rtt_on_equal = v
            .as_bool()
            .ok_or_else(|| ConfigError::new(t.key("min_rtt_on_equal"), "must be true or false"))?;
    }
    Ok(p)
}

/// BBRv3's parameters from its table.
fn bbr3_params(t: &mut CcTable) -> Result<Bbr3Params, ConfigError> {
    let mut p = Bbr3Params::default();
    let real = |t: &CcTable, k: &str, v: &toml::Value, lo: f64, hi: f64| {
        let x = t.real(v, k)?;
        if !(x > lo && x <= hi) {
            return Err(ConfigError::new(
                t.key(k),
                format!("must be above {lo} and at most {hi}"),
            ));
        }
        Ok(x)
    };
    for (k, slot, lo, hi) in [
        ("startup_pacing_gain", &mut p.startup_pacing_gain, 1.0, 10.0),
        ("drain_pacing_gain", &mut p.drain_pacing_gain, 0.0, 1.0),
        ("cwnd_gain", &mut p.cwnd_gain, 0.0, 10.0),
        ("probe_up_cwnd_gain", &mut p.probe_up_cwnd_gain, 0.0, 10.0),
        ("loss_thresh", &mut p.loss_thresh, 0.0, 0.5),
        ("beta", &mut p.beta, 0.0, 1.0),
        ("probe_rtt_cwnd_gain", &mut p.probe_rtt_cwnd_gain, 0.0, 1.0),
    ] {
        if let Some(v) = t.take(k)? {
            *slot = real(t, k, &v, lo, hi)?;
        }
    }
    for (k, slot) in [
        ("headroom", &mut p.headroom),
        ("pacing_margin", &mut p.pacing_margin),
    ] {
        if let Some(v) = t.take(k)? {
            let x = t.real(&v, k)?;
            if !(0.0..0.5).contains(&x) {
                return Err(ConfigError::new(
                    t.key(k),
                    "must be at least 0 and below 0.5",
                ));
            }
            *slot = x;
        }
    }
    for (k, slot, zero) in [
        ("min_rtt_window", &mut p.min_rtt_window, false),
        ("probe_rtt_interval", &mut p.probe_rtt_interval, false),
        ("probe_rtt_time", &mut p.probe_rtt_time, true),
    ] {
        if let Some(v) = t.take(k)? {
            let q = t.quantity(&v, k)?;
            *slot = quantity_time(&q, &t.key(k), zero)?;
        }
    }
    if let Some(v) = t.take("min_cwnd")? {
        p.min_cwnd = match v {
            toml::Value::Integer(i) => int_in(i, &t.key("min_cwnd"), 1, 1000)? as u32,
            _ => return Err(ConfigError::new(t.key("min_cwnd"), "must be an integer")),
        };
    }
    // ECN, as Google's BBRv3 answers it (zero turns a part off, as there).
    for (k, slot, hi) in [
        ("ecn_factor", &mut p.ecn_factor, 1.0),
        ("ecn_thresh", &mut p.ecn_thresh, 1.0),
        ("ecn_alpha_gain", &mut p.ecn_alpha_gain, 1.0),
        ("ecn_alpha_init", &mut p.ecn_alpha_init, 1.0),
        ("ecn_reprobe_gain", &mut p.ecn_reprobe_gain, 2.0),
    ] {
        if let Some(v) = t.take(k)? {
            let x = t.real(&v, k)?;
            if !(0.0..=hi).contains(&x) {
                return Err(ConfigError::new(
                    t.key(k),
                    format!("must be from 0 to {hi}"),
                ));
            }
            *slot = x;
        }
    }
    if p.ecn_alpha_gain == 0.0 && p.ecn_factor > 0.0 {
        return Err(ConfigError::new(
            t.key("ecn_alpha_gain"),
            "must be above 0 while ecn_factor is (α would never move)",
        ));
    }
    if let Some(v) = t.take("ecn_max_rtt")? {
        let q = t.quantity(&v, "ecn_max_rtt")?;
        p.ecn_max_rtt = quantity_time(&q, &t.key("ecn_max_rtt"), true)?;
    }
    if let Some(v) = t.take("full_ecn_cnt")? {
        p.full_ecn_cnt = match v {
            toml::Value::Integer(i) => int_in(i, &t.key("full_ecn_cnt"), 0, 100)? as u32,
            _ => {
                return Err(ConfigError::new(
                    t.key("full_ecn_cnt"),
                    "must be an integer",
                ))
            }
        };
    }
    Ok(p)
}

/// The parameters of a `[tcp.cc]` table, taken one by one; any left over
/// is an error naming it.
struct CcTable<'a> {
    params: std::collections::BTreeMap<String, toml::Value>,
    path: &'a str,
}

impl CcTable<'_> {
    fn key(&self, k: &str) -> String {
        format!("{}.{k}", self.path)
    }

    fn take(&mut self, k: &str) -> Result<Option<toml::Value>, ConfigError> {
        Ok(self.params.remove(k))
    }

    /// A time, rate or size with its unit, as the flat keys take them.
    fn quantity(&self, v: &toml::Value, k: &str) -> Result<Quantity, ConfigError> {
        match v {
            toml::Value::String(s) => Ok(Quantity::Text(s.clone())),
            toml::Value::Integer(i) => Ok(Quantity::Num(*i as f64)),
            toml::Value::Float(f) => Ok(Quantity::Num(*f)),
            _ => Err(ConfigError::new(
                self.key(k),
                "must be a quantity with its unit",
            )),
        }
    }

    fn real(&self, v: &toml::Value, k: &str) -> Result<f64, ConfigError> {
        match v {
            toml::Value::Integer(i) => Ok(*i as f64),
            toml::Value::Float(f) => Ok(*f),
            _ => Err(ConfigError::new(self.key(k), "must be a number")),
        }
    }

    fn finish(self) -> Result<(), ConfigError> {
        match self.params.keys().next() {
            None => Ok(()),
            Some(k) => Err(ConfigError::new(
                self.key(k),
                "is not a parameter of this congestion control",
            )),
        }
    }
}

/// The receive buffer, if it differs from the default: as given (at least
/// one MSS, and at most 1 GiB with window scaling, RFC 7323's limit), or
/// 65,535 bytes without window scaling.
fn receive_buffer(raw: &RawTcp, c: &TcpConfig, path: &str) -> Result<Option<u64>, ConfigError> {
    let Some(q) = &raw.receive_buffer else {
        return Ok((!c.window_scaling).then_some(65_535));
    };
    let b = quantity_bytes(q, &format!("{path}.receive_buffer"))?;
    if b < c.mss as u64 {
        return Err(ConfigError::new(
            format!("{path}.receive_buffer"),
            "must hold at least one MSS",
        ));
    }
    // RFC 7323: the scaled window is at most 2^30 bytes.
    if c.window_scaling && b > 1 << 30 {
        return Err(ConfigError::new(
            format!("{path}.receive_buffer"),
            "must be at most 1 GiB (RFC 7323 window scale limit)",
        ));
    }
    Ok(Some(b))
}

/// The retransmission timer's bounds and first value (RFC 6298).
fn retransmission_timer(raw: &RawTcp, c: &mut TcpConfig, path: &str) -> Result<(), ConfigError> {
    if let Some(q) = &raw.min_rto {
        c.min_rto = quantity_time(q, &format!("{path}.min_rto"), false)?;
    }
    if let Some(q) = &raw.max_rto {
        c.max_rto = quantity_time(q, &format!("{path}.max_rto"), false)?;
    }
    if let Some(q) = &raw.initial_rto {
        c.initial_rto = quantity_time(q, &format!("{path}.initial_rto"), false)?;
    }
    if let Some(r) = &raw.rto_rule {
        c.rto_rule = match r.as_str() {
            "rfc6298" => RtoRule::Rfc6298,
            "linux" => RtoRule::Linux,
            "linux-2009" => RtoRule::Linux2009,
            other => {
                return Err(ConfigError::new(
                    format!("{path}.rto_rule"),
                    format!("unknown RTO rule {other:?} (known: rfc6298, linux, linux-2009)"),
                ))
            }
        };
    }
    if c.min_rto > c.max_rto {
        return Err(ConfigError::new(
            format!("{path}.min_rto"),
            "must be <= max_rto",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};
    use crate::config::{Scenario, TrafficKind};
    use crate::time::SimTime;
    use crate::transport::tcp::{CcKind, Recovery, TcpConfig};

    fn bulk_tcp(text: &str) -> TcpConfig {
        let s = Scenario::from_toml(text).unwrap();
        let TrafficKind::Bulk { tcp, .. } = &s.traffic[0].kind else {
            panic!()
        };
        tcp.clone()
    }

    #[test]
    fn linux_2009_profile_sets_what_its_docs_say() {
        let t = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nprofile = \"linux-2009\"\n"
        ));
        assert_eq!(t.recovery, Recovery::Sack);
        assert_eq!(t.min_rto, SimTime::from_ms(200));
        assert_eq!(t.initial_rto, SimTime::from_secs(3));
        assert_eq!(t.max_rto, SimTime::from_secs(120));
        assert_eq!(t.delayed_ack_timeout, SimTime::from_ms(40));
        assert_eq!(t.initial_window, 3, "RFC 3390 at an MSS of 1460");
        assert!(!t.prr, "PRR came with Linux 3.2");
        assert!(t.dsack, "D-SACK and its undo date from 2.4");
        {
            use crate::transport::tcp::{CcRules, RtoRule};
            assert_eq!(
                (t.rto_rule, t.cc_rules, t.quickack),
                (RtoRule::Linux2009, CcRules::Linux2009, 16)
            );
            assert!(matches!(t.cc, crate::transport::tcp::CcKind::Cubic(_)));
        }
        assert!(t.delayed_ack && t.window_scaling && t.initial_ssthresh.is_none());
        // An entry's profile replaces what [tcp] says for the keys it sets.
        let t = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nprofile = \"linux-2009\"\n\n[tcp]\nrecovery = \"newreno\"\ninitial_window = 2\nmss = 1400\n"
        ));
        assert_eq!(
            (t.recovery, t.initial_window, t.mss),
            (Recovery::Sack, 3, 1400)
        );
        // RFC 3390 follows the MSS; keys the scenario sets override the profile.

        let t = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nprofile = \"linux-2009\"\nmss = 1000\nmin_rto = \"1 s\"\n"
        ));
        assert_eq!((t.initial_window, t.min_rto), (4, SimTime::from_secs(1)));
        let t = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nprofile = \"linux-2009\"\nmss = 4000\n"
        ));
        assert_eq!(t.initial_window, 2);
    }

    #[test]
    fn linux_profile_sets_what_its_docs_say() {
        use crate::transport::tcp::{CcRules, RtoRule};
        let t = bulk_tcp(&format!("{BASE}\n[traffic.tcp]\nprofile = \"linux\"\n"));
        assert_eq!(t.recovery, Recovery::Sack);
        assert_eq!(
            t.cc,
            crate::transport::tcp::CcKind::Cubic(crate::transport::tcp::cc::CubicParams::default())
        );
        assert_eq!(t.initial_window, 10);
        assert_eq!(
            (t.min_rto, t.initial_rto, t.max_rto),
            (
                SimTime::from_ms(200),
                SimTime::from_secs(1),
                SimTime::from_secs(120)
            )
        );
        assert_eq!(t.delayed_ack_timeout, SimTime::from_ms(40));
        assert_eq!(
            (t.rto_rule, t.cc_rules, t.quickack),
            (RtoRule::Linux, CcRules::Linux, 16)
        );
        assert!(t.rack && t.tlp && t.prr);
        assert!(t.adaptive_ack && t.delayed_ack);
        assert_eq!(t.timer_hz, 250);
        // PRR can be turned off, and goes with a profile's SACK.
        let off = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nprofile = \"linux\"\nprr = false\n"
        ));
        assert!(!off.prr && off.rack);
        let reno = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nprofile = \"linux\"\nrecovery = \"newreno\"\n"
        ));
        assert!(!reno.prr);
        // Each rule can be chosen alone.
        let t = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nrto_rule = \"linux\"\ncc_rules = \"linux\"\nquickack = 4\n"
        ));
        assert_eq!(
            (t.rto_rule, t.cc_rules, t.quickack),
            (RtoRule::Linux, CcRules::Linux, 4)
        );
        assert_eq!(t.recovery, Recovery::NewReno);
    }

    #[test]
    fn hystart_knows_whether_the_sender_paces() {
        use crate::transport::tcp::cc::HyStartKind;
        let cubic = |extra: &str, kind: &str| {
            let t = bulk_tcp(&format!(
                "{BASE}\n[tcp]\n{extra}\n[tcp.cc]\nkind = \"cubic\"\nhystart = \"{kind}\"\n"
            ));
            let CcKind::Cubic(p) = t.cc else { panic!() };
            p.hystart
        };
        assert_eq!(cubic("", "rfc9406"), HyStartKind::Rfc9406 { paced: false });
        assert_eq!(
            cubic("pacing = true", "rfc9406"),
            HyStartKind::Rfc9406 { paced: true }
        );
        assert_eq!(cubic("", "linux"), HyStartKind::Linux { paced: false });
        assert_eq!(
            cubic("pacing = true", "linux"),
            HyStartKind::Linux { paced: true }
        );
        let e = err(&format!(
            "{BASE}\n[tcp]\nprofile = \"linux-2009\"\n[tcp.cc]\nkind = \"cubic\"\nhystart = \"rfc9406\"\n"
        ));
        assert!(
            e.contains("tcp.cc.hystart") && e.contains("linux-2009"),
            "{e}"
        );
        // Reno: HyStart++ or none.
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp]\npacing = true\n[tcp.cc]\nkind = \"reno\"\nhystart = \"rfc9406\"\n"
        ));
        let CcKind::Reno(p) = t.cc else { panic!() };
        assert_eq!(p.hystart, HyStartKind::Rfc9406 { paced: true });
        assert_eq!(
            bulk_tcp(&format!("{BASE}\n[tcp]\ncc = \"reno\"\n")).cc,
            CcKind::RENO
        );
        let e = err(&format!(
            "{BASE}\n[tcp.cc]\nkind = \"reno\"\nhystart = \"linux\"\n"
        ));
        assert!(e.starts_with("tcp.cc.hystart: must be \"rfc9406\""), "{e}");
    }

    #[test]
    fn cc_as_a_name_or_a_table() {
        use crate::transport::tcp::cc::{CubicParams, HyStartKind};
        use crate::transport::tcp::CcKind;
        let t = bulk_tcp(&format!("{BASE}\n[tcp]\ncc = \"cubic\"\n"));
        assert_eq!(t.cc, CcKind::Cubic(CubicParams::default()));
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp.cc]\nkind = \"cubic\"\nbeta = 0.8\nc = 0.5\nfast_convergence = false\nhystart = \"off\"\n"
        ));
        assert_eq!(
            t.cc,
            CcKind::Cubic(CubicParams {
                beta: 0.8,
                c: 0.5,
                fast_convergence: false,
                hystart: HyStartKind::Off
            })
        );
        // The other kinds' parameters in their tables; the flat keys still work.
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp.cc]\nkind = \"hybla\"\nrtt0 = \"50 ms\"\n"
        ));
        assert_eq!(
            t.cc,
            CcKind::Hybla {
                rtt0: SimTime::from_ms(50)
            }
        );
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp]\ncc = \"hybla\"\nhybla_rtt0 = \"50 ms\"\n"
        ));
        assert_eq!(
            t.cc,
            CcKind::Hybla {
                rtt0: SimTime::from_ms(50)
            }
        );
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp]\ncc = {{ kind = \"fixed\", window = \"64 KB\" }}\n"
        ));
        assert_eq!(t.cc, CcKind::Fixed { window: 64_000 });
    }

    #[test]
    fn cc_table_errors_name_the_key() {
        assert_eq!(
            err(&format!("{BASE}\n[tcp.cc]\nkind = \"cubic\"\nbeta = 1.5\n")),
            "tcp.cc.beta: must be between 0 and 1 (exclusive)"
        );
        assert_eq!(
            err(&format!("{BASE}\n[tcp.cc]\nkind = \"cubic\"\ngamma = 1\n")),
            "tcp.cc.gamma: is not a parameter of this congestion control"
        );
        assert_eq!(
            err(&format!("{BASE}\n[tcp.cc]\nkind = \"vegas\"\n")),
            "tcp.cc.kind: unknown congestion control \"vegas\" (known: reno, cubic, dctcp, prague, bbr, bbr3, hybla, fixed)"
        );
        assert_eq!(
            err(&format!(
                "{BASE}\n[tcp.cc]\nkind = \"cubic\"\nhystart = true\n"
            )),
            "tcp.cc.hystart: must be \"linux\" (Linux's HyStart), \"rfc9406\" (HyStart++) or \"off\""
        );
        assert!(
            err(&format!("{BASE}\n[tcp.cc]\nkind = \"reno\"\nbeta = 0.5\n"))
                .starts_with("tcp.cc.beta: is not a parameter")
        );
    }

    #[test]
    fn ecn_feedback_codepoint_and_dctcp_keys() {
        use crate::transport::tcp::cc::DctcpParams;
        use crate::transport::tcp::{CcKind, EcnCodepoint, EcnFeedback};
        // The boolean keeps its meaning.
        let t = bulk_tcp(&format!("{BASE}\n[tcp]\necn = true\n"));
        assert!(t.ecn);
        assert_eq!(
            (t.ecn_feedback, t.ecn_codepoint),
            (EcnFeedback::Classic, EcnCodepoint::Ect0)
        );
        assert_eq!(
            bulk_tcp(&format!("{BASE}\n[tcp]\necn = false\n")),
            TcpConfig::default()
        );
        assert_eq!(
            bulk_tcp(&format!("{BASE}\n[tcp]\necn = \"off\"\n")),
            TcpConfig::default()
        );
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp]\necn = \"accecn\"\necn_codepoint = \"ect1\"\n"
        ));
        assert!(t.ecn);
        assert_eq!(
            (t.ecn_feedback, t.ecn_codepoint, t.cc),
            (EcnFeedback::AccEcn, EcnCodepoint::Ect1, CcKind::RENO)
        );
        // DCTCP turns ECN on with its own feedback, or AccECN's.
        let t = bulk_tcp(&format!("{BASE}\n[tcp]\ncc = \"dctcp\"\n"));
        assert!(t.ecn);
        assert_eq!(t.ecn_feedback, EcnFeedback::Dctcp);
        assert_eq!(t.cc, CcKind::Dctcp(DctcpParams::default()));
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp]\necn = \"accecn\"\n[tcp.cc]\nkind = \"dctcp\"\ng = 0.125\nalpha_init = 0\n"
        ));
        assert_eq!(t.ecn_feedback, EcnFeedback::AccEcn);
        assert_eq!(
            t.cc,
            CcKind::Dctcp(DctcpParams {
                g: 0.125,
                alpha_init: 0.0
            })
        );
        for (text, msg) in [
            (
                "[tcp]\ncc = \"dctcp\"\necn = false\n",
                "tcp.ecn: cc = \"dctcp\" needs \"dctcp\" or \"accecn\" feedback (its α counts every mark)",
            ),
            (
                "[tcp]\ncc = \"dctcp\"\necn = true\n",
                "tcp.ecn: cc = \"dctcp\" needs \"dctcp\" or \"accecn\" feedback (its α counts every mark)",
            ),
            (
                "[tcp]\necn = \"l4s\"\n",
                "tcp.ecn: unknown ECN feedback \"l4s\" (known: off, classic, dctcp, accecn)",
            ),
            (
                "[tcp]\necn = true\necn_codepoint = \"ect2\"\n",
                "tcp.ecn_codepoint: unknown ECN codepoint \"ect2\" (known: ect0, ect1)",
            ),
            (
                "[tcp]\necn_codepoint = \"ect1\"\n",
                "tcp.ecn_codepoint: needs ECN on (ecn = true, or a feedback)",
            ),
            (
                "[tcp.cc]\nkind = \"dctcp\"\ng = 0\n",
                "tcp.cc.g: must be in (0, 1] (RFC 8257: 1/16)",
            ),
            (
                "[tcp.cc]\nkind = \"dctcp\"\nalpha_init = 1.5\n",
                "tcp.cc.alpha_init: must be between 0 and 1",
            ),
            (
                "[tcp.cc]\nkind = \"dctcp\"\nbeta = 0.5\n",
                "tcp.cc.beta: is not a parameter of this congestion control",
            ),
        ] {
            assert_eq!(err(&format!("{BASE}\n{text}")), msg, "{text}");
        }
        // Prague: AccECN and ECT(1) unless told otherwise.
        use crate::transport::tcp::cc::PragueParams;
        let t = bulk_tcp(&format!("{BASE}\n[tcp]\ncc = \"prague\"\n"));
        assert_eq!(
            (t.ecn, t.ecn_feedback, t.ecn_codepoint),
            (true, EcnFeedback::AccEcn, EcnCodepoint::Ect1)
        );
        assert_eq!(t.cc, CcKind::Prague(PragueParams::default()));
        assert!(t.pacing, "paced unless told otherwise");
        let t = bulk_tcp(&format!(
            "{BASE}
[tcp]
cc = \"prague\"\npacing = false\n"
        ));
        assert!(!t.pacing);
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp]\necn = \"dctcp\"\necn_codepoint = \"ect0\"\n[tcp.cc]\nkind = \"prague\"\nrtt_target = \"15 ms\"\nrtt_transition = 0\nclassic_ecn_fallback = true\n"
        ));
        assert_eq!(t.ecn_feedback, EcnFeedback::Dctcp);
        assert_eq!(
            t.cc,
            CcKind::Prague(PragueParams {
                rtt_target: SimTime::from_ms(15),
                rtt_transition: 0,
                classic_ecn_fallback: true,
                ..PragueParams::default()
            })
        );
        assert_eq!(
            err(&format!(
                "{BASE}\n[tcp.cc]\nkind = \"prague\"\nclassic_ecn_fallback = 1\n"
            )),
            "tcp.cc.classic_ecn_fallback: must be true or false"
        );
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\ncc = \"prague\"\necn = \"classic\"\n")),
            "tcp.ecn: cc = \"prague\" needs \"dctcp\" or \"accecn\" feedback (its α counts every mark)"
        );
        assert_eq!(
            err(&format!(
                "{BASE}\n[tcp.cc]\nkind = \"prague\"\nrtt_transition = -1\n"
            )),
            "tcp.cc.rtt_transition: must be a whole number of rounds, 0 to 1000000"
        );
        assert!(err(&format!(
            "{BASE}\n[tcp.cc]\nkind = \"prague\"\nrtt_target = 25\n"
        ))
        .starts_with("tcp.cc.rtt_target: 25 has no unit"));
        // An entry's override is checked with the merged table.
        assert_eq!(
            err(&format!(
                "{BASE}\n[traffic.tcp]\ncc = \"dctcp\"\n\n[tcp]\necn = true\n"
            )),
            "traffic[0].tcp.ecn: cc = \"dctcp\" needs \"dctcp\" or \"accecn\" feedback (its α counts every mark)"
        );
    }

    #[test]
    fn bbr_table_and_its_errors() {
        use crate::transport::tcp::cc::BbrParams;
        const SACK: &str = "[tcp]\nrecovery = \"sack\"\n";
        let t = bulk_tcp(&format!("{BASE}\n{SACK}cc = \"bbr\"\n"));
        assert_eq!(t.cc, CcKind::Bbr(BbrParams::default()));
        assert!(t.pacing, "BBR paces");
        let t = bulk_tcp(&format!(
            "{BASE}\n{SACK}\n[tcp.cc]\nkind = \"bbr\"\nhigh_gain = 2.5\ncwnd_gain = 3\nprobe_rtt_interval = \"5 s\"\nprobe_rtt_time = \"100 ms\"\nmin_cwnd = 2\nbw_window_rounds = 6\nfull_bw_rounds = 2\nfull_bw_threshold = 1.5\npacing_margin = 0\nlong_term = false\nextra_acked_gain = 0\ndrain_gain = 0.5\nmin_rtt_on_equal = true\n"
        ));
        assert_eq!(
            t.cc,
            CcKind::Bbr(BbrParams {
                high_gain: 2.5,
                drain_gain: 0.5,
                cwnd_gain: 3.0,
                bw_window_rounds: 6,
                probe_rtt_interval: SimTime::from_secs(5),
                probe_rtt_time: SimTime::from_ms(100),
                min_cwnd: 2,
                full_bw_threshold: 1.5,
                full_bw_rounds: 2,
                pacing_margin: 0.0,
                long_term: false,
                extra_acked_gain: 0.0,
                min_rtt_on_equal: true,
            })
        );
        let bbr = |kv: &str| err(&format!("{BASE}\n{SACK}\n[tcp.cc]\nkind = \"bbr\"\n{kv}\n"));
        assert_eq!(
            bbr("high_gain = 0.5"),
            "tcp.cc.high_gain: must be above 1 and at most 10"
        );
        assert_eq!(
            bbr("cwnd_gain = \"2\""),
            "tcp.cc.cwnd_gain: must be a number"
        );
        assert_eq!(
            bbr("min_cwnd = 0"),
            "tcp.cc.min_cwnd: must be between 1 and 1000"
        );
        assert_eq!(
            bbr("full_bw_rounds = 2.5"),
            "tcp.cc.full_bw_rounds: must be an integer"
        );
        assert!(bbr("probe_rtt_interval = \"0 s\"").starts_with("tcp.cc.probe_rtt_interval"));
        assert_eq!(
            bbr("pacing_margin = 0.5"),
            "tcp.cc.pacing_margin: must be at least 0 and below 0.5"
        );
        assert_eq!(
            bbr("long_term = 1"),
            "tcp.cc.long_term: must be true or false"
        );
        assert_eq!(
            bbr("min_rtt_on_equal = \"yes\""),
            "tcp.cc.min_rtt_on_equal: must be true or false"
        );
        assert_eq!(
            bbr("beta = 0.7"),
            "tcp.cc.beta: is not a parameter of this congestion control"
        );
        // BBR needs SACK and pacing.
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\ncc = \"bbr\"\n")),
            "tcp.recovery: must be \"sack\" with cc = \"bbr\" (its delivery rate counts SACKed segments)"
        );
        assert_eq!(
            err(&format!("{BASE}\n{SACK}cc = \"bbr\"\npacing = false\n")),
            "tcp.pacing: cannot be false with cc = \"bbr\" (BBR sets the pacing rate it sends at)"
        );
        // Pacing for a classic control: off by default, on when asked.
        assert!(!bulk_tcp(&format!("{BASE}\n[tcp]\ncc = \"cubic\"\n")).pacing);
        assert!(bulk_tcp(&format!("{BASE}\n[tcp]\npacing = true\n")).pacing);
        // The Linux profile with cc = "bbr" keeps its SACK.
        let t = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nprofile = \"linux\"\ncc = \"bbr\"\n"
        ));
        assert!(matches!(t.cc, CcKind::Bbr(_)) && t.recovery == Recovery::Sack);
    }

    #[test]
    fn bbr3_table_and_its_errors() {
        use crate::transport::tcp::cc::Bbr3Params;
        const SACK: &str = "[tcp]\nrecovery = \"sack\"\n";
        let t = bulk_tcp(&format!("{BASE}\n{SACK}cc = \"bbr3\"\n"));
        assert_eq!(t.cc, CcKind::Bbr3(Bbr3Params::default()));
        assert!(t.pacing);
        let t = bulk_tcp(&format!(
            "{BASE}\n{SACK}\n[tcp.cc]\nkind = \"bbr3\"\nbeta = 0.5\nloss_thresh = 0.05\nheadroom = 0.2\nprobe_rtt_interval = \"2 s\"\nmin_rtt_window = \"20 s\"\nprobe_rtt_time = \"0 s\"\nmin_cwnd = 2\nstartup_pacing_gain = 2.5\n"
        ));
        assert_eq!(
            t.cc,
            CcKind::Bbr3(Bbr3Params {
                beta: 0.5,
                loss_thresh: 0.05,
                headroom: 0.2,
                probe_rtt_interval: SimTime::from_secs(2),
                min_rtt_window: SimTime::from_secs(20),
                probe_rtt_time: SimTime::ZERO,
                min_cwnd: 2,
                startup_pacing_gain: 2.5,
                ..Bbr3Params::default()
            })
        );
        let bbr3 = |kv: &str| {
            err(&format!(
                "{BASE}\n{SACK}\n[tcp.cc]\nkind = \"bbr3\"\n{kv}\n"
            ))
        };
        assert_eq!(
            bbr3("beta = 1.5"),
            "tcp.cc.beta: must be above 0 and at most 1"
        );
        assert_eq!(
            bbr3("loss_thresh = 0"),
            "tcp.cc.loss_thresh: must be above 0 and at most 0.5"
        );
        assert_eq!(
            bbr3("headroom = 0.5"),
            "tcp.cc.headroom: must be at least 0 and below 0.5"
        );
        assert_eq!(
            bbr3("min_cwnd = \"4\""),
            "tcp.cc.min_cwnd: must be an integer"
        );
        assert!(bbr3("probe_rtt_interval = 5").starts_with("tcp.cc.probe_rtt_interval"));
        assert_eq!(
            bbr3("high_gain = 2"),
            "tcp.cc.high_gain: is not a parameter of this congestion control"
        );
        assert!(
            err(&format!("{BASE}\n{SACK}cc = \"bbr3\"\necn = true\n")).starts_with(
                "tcp.ecn: cc = \"bbr3\" needs \"dctcp\" or \"accecn\" feedback: it measures the share of data marked"
            )
        );
        // ECN as Google's BBRv3 answers it, with its parameters.
        let t = bulk_tcp(&format!(
            "{BASE}\n{SACK}ecn = \"accecn\"\n[tcp.cc]\nkind = \"bbr3\"\necn_max_rtt = \"0 s\"\necn_factor = 0.5\nfull_ecn_cnt = 0\n"
        ));
        assert!(t.ecn);
        assert_eq!(
            t.cc,
            CcKind::Bbr3(Bbr3Params {
                ecn_max_rtt: SimTime::ZERO,
                ecn_factor: 0.5,
                full_ecn_cnt: 0,
                ..Bbr3Params::default()
            })
        );
        assert_eq!(
            bbr3("ecn_thresh = 0.5"),
            "tcp.cc.ecn_thresh: needs ECN on (tcp.ecn = \"dctcp\" or \"accecn\")"
        );
        assert_eq!(
            bbr3("full_ecn_cnt = 3"),
            "tcp.cc.full_ecn_cnt: needs ECN on (tcp.ecn = \"dctcp\" or \"accecn\")"
        );
        let ecn3 = |kv: &str| {
            err(&format!(
                "{BASE}\n{SACK}ecn = \"dctcp\"\n[tcp.cc]\nkind = \"bbr3\"\n{kv}\n"
            ))
        };
        assert_eq!(
            ecn3("ecn_factor = 1.5"),
            "tcp.cc.ecn_factor: must be from 0 to 1"
        );
        assert_eq!(
            ecn3("ecn_alpha_gain = 0"),
            "tcp.cc.ecn_alpha_gain: must be above 0 while ecn_factor is (α would never move)"
        );
        assert!(ecn3("ecn_max_rtt = 5").starts_with("tcp.cc.ecn_max_rtt"));
        assert_eq!(
            ecn3("full_ecn_cnt = 1.5"),
            "tcp.cc.full_ecn_cnt: must be an integer"
        );
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\ncc = \"bbr3\"\n")),
            "tcp.recovery: must be \"sack\" with cc = \"bbr3\" (its delivery rate counts SACKed segments)"
        );
    }

    #[test]
    fn unknown_rules_name_the_key() {
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\nrto_rule = \"bsd\"\n")),
            "tcp.rto_rule: unknown RTO rule \"bsd\" (known: rfc6298, linux, linux-2009)"
        );
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\ncc_rules = \"bsd\"\n")),
            "tcp.cc_rules: unknown window rules \"bsd\" (known: rfc, linux, linux-2009)"
        );
        assert!(err(&format!("{BASE}\n[tcp]\nquickack = -1\n")).starts_with("tcp.quickack"));
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\nrack = true\n")),
            "tcp.rack: needs recovery = \"sack\" (RACK reads the SACK scoreboard)"
        );
        // The profile's RACK leaves with its SACK recovery.
        let t = bulk_tcp(&format!(
            "{BASE}\n[traffic.tcp]\nprofile = \"linux\"\nrecovery = \"newreno\"\n"
        ));
        assert!(!t.rack);
    }

    #[test]
    fn rfc_profile_is_the_default() {
        let named = bulk_tcp(&format!("{BASE}\n[traffic.tcp]\nprofile = \"rfc\"\n"));
        assert_eq!(named, TcpConfig::default());
        assert_eq!(bulk_tcp(BASE), TcpConfig::default());
        assert_eq!(
            (named.recovery, named.initial_window, named.min_rto),
            (Recovery::NewReno, 2, SimTime::from_secs(1))
        );
        assert_eq!(
            (named.initial_rto, named.max_rto, named.delayed_ack_timeout),
            (
                SimTime::from_secs(1),
                SimTime::from_secs(60),
                SimTime::from_ms(200)
            )
        );
    }

    #[test]
    fn timestamps_follow_the_profile_and_size_the_headers() {
        let size = |t: &TcpConfig| (t.timestamps, t.header, t.ack_header());
        assert_eq!(size(&bulk_tcp(BASE)), (false, 40, 40));
        for p in ["linux", "linux-2009"] {
            let t = bulk_tcp(&format!("{BASE}\n[traffic.tcp]\nprofile = \"{p}\"\n"));
            assert_eq!(size(&t), (true, 52, 52), "{p}");
            // An entry's profile sets them over what [tcp] says.
            let t = bulk_tcp(&format!(
                "{BASE}\n[tcp]\ntimestamps = false\n[traffic.tcp]\nprofile = \"{p}\"\n"
            ));
            assert_eq!(size(&t), (true, 52, 52), "{p}");
            let t = bulk_tcp(&format!(
                "{BASE}\n[traffic.tcp]\nprofile = \"{p}\"\ntimestamps = false\n"
            ));
            assert_eq!(size(&t), (false, 40, 40), "{p}");
        }
        let t = bulk_tcp(&format!("{BASE}\n[tcp]\ntimestamps = true\n"));
        assert_eq!(size(&t), (true, 52, 52));
        assert!(err(&format!("{BASE}\n[tcp]\ntimestamps = 1\n")).contains("timestamps"));
    }

    #[test]
    fn ecn_fallback_follows_the_profile_with_ecn_on() {
        let fb = |extra: &str| bulk_tcp(&format!("{BASE}\n[tcp]\n{extra}\n")).ecn_fallback;
        assert!(!fb("ecn = true"));
        assert!(fb("ecn = true\nprofile = \"linux\""));
        assert!(fb("ecn = true\nprofile = \"linux-2009\""));
        assert!(
            !fb("profile = \"linux\""),
            "no ECN, nothing to fall back from"
        );
        assert!(!fb("ecn = true\nprofile = \"linux\"\necn_fallback = false"));
        assert!(fb("ecn = true\necn_fallback = true"));
        // A scalable control turns ECN on, and under a Linux profile falls
        // back to Reno as Linux's do.
        assert!(fb("profile = \"linux\"\n[tcp.cc]\nkind = \"dctcp\""));
        assert!(fb("profile = \"linux\"\n[tcp.cc]\nkind = \"prague\""));
        assert!(!fb("[tcp.cc]\nkind = \"prague\""));
        assert!(fb("ecn_fallback = true\n[tcp.cc]\nkind = \"dctcp\""));
        let e = err(&format!("{BASE}\n[tcp]\necn_fallback = true\n"));
        assert!(
            e.contains("tcp.ecn_fallback") && e.contains("needs ECN"),
            "{e}"
        );
    }

    #[test]
    fn dsack_follows_the_linux_profile_and_needs_sack() {
        let on = |extra: &str| bulk_tcp(&format!("{BASE}\n[tcp]\n{extra}\n")).dsack;
        assert!(!on(""));
        assert!(on("profile = \"linux\""));
        assert!(!on("profile = \"linux\"\ndsack = false"));
        assert!(on("recovery = \"sack\"\ndsack = true"));
        let e = err(&format!("{BASE}\n[tcp]\ndsack = true\n"));
        assert!(e.starts_with("tcp.dsack: needs recovery = \"sack\""), "{e}");
    }

    #[test]
    fn tso_bursts_follow_the_linux_profile_and_need_pacing() {
        let tso = |extra: &str| bulk_tcp(&format!("{BASE}\n[tcp]\n{extra}\n")).tso_bursts;
        assert!(!tso(""));
        assert!(!tso("profile = \"linux\""), "unpaced: nothing to burst");
        assert!(tso("profile = \"linux\"\npacing = true"));
        assert!(tso(
            "profile = \"linux\"\nrecovery = \"sack\"\ncc = \"bbr\""
        ));
        assert!(!tso("profile = \"linux-2009\"\npacing = true"));
        assert!(tso("pacing = true\ntso_bursts = true"));
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\ntso_bursts = true\n")),
            "tcp.tso_bursts: needs pacing = true (or cc = \"bbr\", \"bbr3\" or \"prague\", which pace) \
             (an unpaced sender's segments leave back to back anyway)"
        );
    }

    #[test]
    fn timers_tick_at_250_hz_under_the_linux_profile_only() {
        let hz = |extra: &str| bulk_tcp(&format!("{BASE}\n[tcp]\n{extra}\n")).timer_hz;
        assert_eq!(hz(""), 0);
        assert_eq!(hz("profile = \"linux\""), 250);
        assert_eq!(hz("profile = \"linux-2009\""), 0);
        assert_eq!(hz("profile = \"linux\"\ntimer_hz = 1000"), 1000);
        assert_eq!(hz("profile = \"linux\"\ntimer_hz = 0"), 0);
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\ntimer_hz = 5\n")),
            "tcp.timer_hz: must be 0 (exact timers) or a kernel tick rate from 10 to 10000 \
             (Linux's CONFIG_HZ: 100, 250, 300 or 1000), not 5"
        );
    }

    #[test]
    fn receive_autotuning_follows_the_linux_profile_and_needs_the_handshake() {
        let at = |extra: &str| bulk_tcp(&format!("{BASE}\n[tcp]\n{extra}\n")).receive_autotuning;
        assert!(!at(""));
        assert!(at("profile = \"linux\""));
        assert!(!at("profile = \"linux-2009\""));
        assert!(!at("profile = \"linux\"\nreceive_autotuning = false"));
        assert!(at("receive_autotuning = true"));
        assert!(!at("profile = \"linux\"\nhandshake = false"));
        for extra in [
            "receive_autotuning = true\nhandshake = false",
            "receive_autotuning = true\nwindow_scaling = false",
        ] {
            let e = err(&format!("{BASE}\n[tcp]\n{extra}\n"));
            assert!(
                e.starts_with("tcp.receive_autotuning: needs handshake = true"),
                "{e}"
            );
        }
        assert!(
            err(&format!("{BASE}\n[tcp]\nreceive_autotuning = 1\n")).contains("receive_autotuning")
        );
    }

    #[test]
    fn adaptive_ack_is_asked_for_and_refused_by_key() {
        assert!(bulk_tcp(&format!("{BASE}\n[tcp]\nprofile = \"linux\"\n")).adaptive_ack);
        assert!(!bulk_tcp(&format!("{BASE}\n[tcp]\nprofile = \"linux-2009\"\n")).adaptive_ack);
        assert!(!bulk_tcp(&format!("{BASE}\n[tcp]\n")).adaptive_ack);
        // A fixed timeout asked for replaces the linux profile's adaptive
        // one.
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp]\nprofile = \"linux\"\ndelayed_ack_timeout = \"100 ms\"\n"
        ));
        assert!(!t.adaptive_ack);
        assert_eq!(t.delayed_ack_timeout, SimTime::from_ms(100));
        assert!(err(&format!(
            "{BASE}\n[tcp]\nprofile = \"linux\"\nadaptive_ack = true\ndelayed_ack_timeout = \"100 ms\"\n"
        ))
        .starts_with("tcp.delayed_ack_timeout: cannot be set with adaptive_ack = true"));
        let t = bulk_tcp(&format!("{BASE}\n[tcp]\nadaptive_ack = true\n"));
        assert!(t.adaptive_ack && t.delayed_ack);
        // [tcp]'s key reaches an entry with a profile.
        let t = bulk_tcp(&format!(
            "{BASE}\n[tcp]\nadaptive_ack = true\n[traffic.tcp]\nprofile = \"linux\"\n"
        ));
        assert!(t.adaptive_ack);
        assert_eq!(
            err(&format!(
                "{BASE}\n[tcp]\nadaptive_ack = true\ndelayed_ack = false\n"
            )),
            "tcp.adaptive_ack: needs delayed_ack = true (it times the delayed ACKs)"
        );
        assert!(err(&format!(
            "{BASE}\n[tcp]\nadaptive_ack = true\ndelayed_ack_timeout = \"100 ms\"\n"
        ))
        .starts_with("tcp.delayed_ack_timeout: cannot be set with adaptive_ack = true"));
        assert!(err(&format!("{BASE}\n[tcp]\nadaptive_ack = 1\n")).contains("adaptive_ack"));
    }

    #[test]
    fn initial_ssthresh_and_profile_errors() {
        let t = bulk_tcp(&format!("{BASE}\n[tcp]\ninitial_ssthresh = \"64 KB\"\n"));
        assert_eq!(t.initial_ssthresh, Some(64_000));
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\ninitial_ssthresh = \"100 B\"\n")),
            "tcp.initial_ssthresh: must be at least two MSS (RFC 5681)"
        );
        assert_eq!(
            err(&format!(
                "{BASE}\n[tcp]\ninitial_ssthresh = \"64 KB\"\ncc = \"fixed\"\nfixed_window = \"1 MB\"\n"
            )),
            "tcp.initial_ssthresh: is not used with cc = \"fixed\" (no slow start)"
        );
        assert_eq!(
            err(&format!("{BASE}\n[traffic.tcp]\nprofile = \"bsd\"\n")),
            "traffic[0].tcp.profile: unknown TCP profile \"bsd\" (known: rfc, linux, linux-2009)"
        );
    }

    #[test]
    fn tcp_overrides_merge() {
        let text = format!("{BASE}\n[traffic.tcp]\nrecovery = \"sack\"\n\n[tcp]\nmss = 1000\nwindow_scaling = false\n");
        let s = Scenario::from_toml(&text).unwrap();
        let TrafficKind::Bulk { tcp, .. } = &s.traffic[0].kind else {
            panic!()
        };
        assert_eq!(tcp.recovery, Recovery::Sack);
        assert_eq!(tcp.mss, 1000);
        assert_eq!(tcp.max_advertised_window(), 65_535);
    }

    #[test]
    fn errors_name_the_table_that_sets_the_key() {
        assert_eq!(
            err(&format!("{BASE}\n[tcp]\nmss = 10\n")),
            "tcp.mss: must be between 64 and 65495"
        );
        assert_eq!(
            err(&format!("{BASE}\n[traffic.tcp]\nmss = 10\n")),
            "traffic[0].tcp.mss: must be between 64 and 65495"
        );
        // A merged table is checked as a whole: the receive buffer of [tcp]
        // must hold the MSS an override sets.
        assert_eq!(
            err(&format!(
                "{BASE}\n[traffic.tcp]\nmss = 2000\n\n[tcp]\nreceive_buffer = \"1500 B\"\n"
            )),
            "traffic[0].tcp.receive_buffer: must hold at least one MSS"
        );
    }
}
