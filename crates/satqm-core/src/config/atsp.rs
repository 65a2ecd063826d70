//! Validates the `atsp = { ... }` table of an ATSP traffic entry into an
//! [`AtspConfig`]. `w_max` has no default: it is the operator's
//! allocation, which the paper's sender knows and the simulator cannot
//! guess.

use crate::error::ConfigError;
use crate::time::SimTime;
use crate::transport::atsp::{AtspConfig, Cut};
use crate::units::{int_in, quantity_time};

use super::raw::RawAtsp;
use super::traffic::MIN_PACKET_GAP;

/// A finite `v` in `[lo, hi]` (`lo` excluded unless `lo_ok`).
fn real(v: f64, path: &str, lo: f64, lo_ok: bool, hi: f64) -> Result<f64, ConfigError> {
    let low = if lo_ok { v >= lo } else { v > lo };
    if !v.is_finite() || !low || v > hi {
        let op = if lo_ok { ">=" } else { ">" };
        return Err(ConfigError::new(
            path,
            format!("must be {op} {lo} and at most {hi}"),
        ));
    }
    Ok(v)
}

pub(super) fn atsp(raw: Option<&RawAtsp>, path: &str) -> Result<AtspConfig, ConfigError> {
    let empty = RawAtsp::default();
    let r = raw.unwrap_or(&empty);
    let p = format!("{path}.atsp");
    let d = AtspConfig::default();
    let alpha = match r.alpha {
        Some(a) => int_in(a, &format!("{p}.alpha"), 1, 1_000_000)? as u32,
        None => d.alpha,
    };
    let beta = match r.beta {
        Some(b) => real(b, &format!("{p}.beta"), 0.0, true, 1.0)?,
        None => d.beta,
    };
    let i = match r.i {
        Some(v) => real(v, &format!("{p}.i"), 0.0, false, 1e6)?,
        None => d.i,
    };
    let h = match r.h {
        Some(v) => real(v, &format!("{p}.h"), 0.0, true, 1e9)?,
        None => d.h,
    };
    let Some(w_max) = r.w_max else {
        return Err(ConfigError::new(
            format!("{p}.w_max"),
            "is required for atsp traffic (the allocated rate's bandwidth-delay product, packets)",
        ));
    };
    let w_max = real(w_max, &format!("{p}.w_max"), 0.0, false, 1e9)?;
    let w_min = match r.w_min {
        Some(v) => real(v, &format!("{p}.w_min"), 0.0, false, w_max)?,
        None => d.w_min.min(w_max),
    };
    let packet_size = match r.packet_size {
        Some(v) => int_in(v, &format!("{p}.packet_size"), 64, 65_535)? as u32,
        None => d.packet_size,
    };
    let header = match r.header {
        Some(v) => int_in(v, &format!("{p}.header"), 0, packet_size as i64 - 1)? as u32,
        None => d.header.min(packet_size - 1),
    };
    let cut = match r.cut.as_deref() {
        None => d.cut,
        Some("cycle_base") => Cut::CycleBase,
        Some("compound") => Cut::Compound,
        Some(other) => {
            return Err(ConfigError::new(
                format!("{p}.cut"),
                format!("unknown cut {other:?} (known: cycle_base, compound)"),
            ))
        }
    };
    let initial_rtt = match &r.initial_rtt {
        Some(q) => quantity_time(q, &format!("{p}.initial_rtt"), false)?,
        None => d.initial_rtt,
    };
    // The first `alpha` packets are paced over it.
    let floor = SimTime(MIN_PACKET_GAP.ns() * alpha as u64);
    if initial_rtt < floor {
        return Err(ConfigError::new(
            format!("{p}.initial_rtt"),
            format!(
                "must be at least {} ns: the first alpha = {alpha} packets are paced over it, \
                 and satqm paces a source's packets at least {} ns apart",
                floor.ns(),
                MIN_PACKET_GAP.ns()
            ),
        ));
    }
    Ok(AtspConfig {
        alpha,
        beta,
        i,
        h,
        w_max,
        w_min,
        packet_size,
        header,
        cut,
        initial_rtt,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};

    fn with(atsp: &str) -> String {
        BASE.replace("kind = \"bulk\"", &format!("kind = \"atsp\"\n{atsp}"))
    }

    #[test]
    fn a_valid_entry_passes() {
        assert_eq!(err(&with("atsp = { w_max = 500 }")), "ok");
        assert_eq!(
            err(&with(
                "atsp = { w_max = 500, alpha = 1, beta = 0, h = 0, cut = \"compound\" }"
            )),
            "ok"
        );
    }

    #[test]
    fn bad_parameters_name_their_key() {
        assert_eq!(
            err(&with("atsp = { w_max = 500, alpha = 0 }")),
            "traffic[0].atsp.alpha: must be between 1 and 1000000"
        );
        assert_eq!(
            err(&with("atsp = { w_max = 500, beta = -0.1 }")),
            "traffic[0].atsp.beta: must be >= 0 and at most 1"
        );
        assert_eq!(
            err(&with("atsp = { w_max = 500, h = -1 }")),
            "traffic[0].atsp.h: must be >= 0 and at most 1000000000"
        );
        assert_eq!(
            err(&with("atsp = { w_max = 500, i = 0 }")),
            "traffic[0].atsp.i: must be > 0 and at most 1000000"
        );
        assert_eq!(
            err(&with("atsp = { w_max = 500, cut = \"half\" }")),
            "traffic[0].atsp.cut: unknown cut \"half\" (known: cycle_base, compound)"
        );
        assert_eq!(
            err(&with("atsp = { w_max = 500, w_min = 600 }")),
            "traffic[0].atsp.w_min: must be > 0 and at most 500"
        );
        assert!(err(&with("atsp = { w_max = 500, gamma = 1 }")).contains("gamma"));
        assert_eq!(
            err(&with("atsp = { w_max = 500, initial_rtt = \"1 ns\" }")),
            "traffic[0].atsp.initial_rtt: must be at least 2000 ns: the first alpha = 20 \
             packets are paced over it, and satqm paces a source's packets at least 100 ns apart"
        );
        assert_eq!(
            err(&with("atsp = { w_max = 500, initial_rtt = \"2 us\" }")),
            "ok"
        );
    }

    #[test]
    fn w_max_is_required() {
        let e = err(&with(""));
        assert!(
            e.starts_with("traffic[0].atsp.w_max: is required for atsp traffic"),
            "{e}"
        );
        assert!(err(&with("atsp = { alpha = 20 }")).starts_with("traffic[0].atsp.w_max:"));
    }

    #[test]
    fn atsp_keys_are_refused_elsewhere_and_tcp_keys_here() {
        assert_eq!(
            err(&BASE.replace("kind = \"bulk\"", "kind = \"bulk\"\natsp = { w_max = 5 }")),
            "traffic[0].atsp: is not used by traffic of kind \"bulk\""
        );
        assert_eq!(
            err(&with("atsp = { w_max = 5 }\nsize = \"1000 B\"")),
            "traffic[0].size: is not used by traffic of kind \"atsp\""
        );
    }
}
