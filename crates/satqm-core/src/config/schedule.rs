//! Validates a link's `schedule`: its changes (or the rows of its trace
//! file) into the pieces a link plays (`net/schedule.rs`).
//!
//! ```toml
//! [topology.bottleneck.schedule]
//! changes = [
//!   { at = "10 s", rate = "5 Mbps" },                  # a step
//!   { at = "20 s", delay = "40 ms", ramp = "5 s" },    # a ramp to 40 ms by 25 s
//!   { at = "30 s", up = false },                       # an outage...
//!   { at = "32 s", up = true },                        # ...of 2 s
//! ]
//! order = "in_order"                                   # or "reorder"
//! outage = { queued = "keep", in_flight = "drop" }
//! ```
//!
//! or `trace = "file.csv"` with `interpolate = "step"` or `"linear"`: a
//! header naming the columns (`time` first, then any of `rate`, `delay`,
//! `loss`, `reverse_loss`, `up`), then one row per change, in seconds,
//! bit/s, seconds, probabilities and 1/0; an empty cell leaves the value
//! as it was; two rows with the same time make a jump; `#` starts a
//! comment line.

use std::collections::BTreeMap;

use crate::error::ConfigError;
use crate::net::schedule::{InFlight, Opportunities, Order, Outage, Piece, Queued, ScheduleSpec};
use crate::time::{Rate, SimTime};
use crate::units::{probability, quantity_rate, quantity_time, MAX_RATE, MAX_SECONDS};

use super::raw::{RawChange, RawSchedule};

/// The values a schedule starts from: the link's own.
#[derive(Clone, Copy, Debug)]
pub(super) struct Start {
    pub rate: Rate,
    pub delay: SimTime,
    pub loss: f64,
    pub reverse_loss: f64,
}

/// The schedule at `path` of a link that starts with `start`.
pub(super) fn schedule(
    s: &RawSchedule,
    path: &str,
    start: Start,
    files: &BTreeMap<String, String>,
) -> Result<ScheduleSpec, ConfigError> {
    let first = Piece {
        start: SimTime::ZERO,
        rate: (start.rate, start.rate),
        delay: (start.delay, start.delay),
        loss: (start.loss, start.reverse_loss),
        up: true,
    };
    let pieces = match (&s.changes, &s.trace) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                format!("{path}.trace"),
                "give either changes or a trace, not both",
            ))
        }
        (None, None) if s.mahimahi.is_some() => vec![first],
        (None, None) => {
            return Err(ConfigError::new(
                path,
                "needs changes (a list of { at = ..., ... }), a trace file or a mahimahi trace",
            ))
        }
        (Some(changes), None) => {
            if s.interpolate.is_some() {
                return Err(ConfigError::new(
                    format!("{path}.interpolate"),
                    "applies to a trace only (changes ramp with their own `ramp`)",
                ));
            }
            from_changes(changes, &format!("{path}.changes"), first)?
        }
        (None, Some(name)) => {
            let tpath = format!("{path}.trace");
            let linear = match s.interpolate.as_deref() {
                None | Some("step") => false,
                Some("linear") => true,
                Some(other) => {
                    return Err(ConfigError::new(
                        format!("{path}.interpolate"),
                        format!("unknown interpolation {other:?} (known: \"step\", \"linear\")"),
                    ))
                }
            };
            let text = file_text(files, name, &tpath)?;
            from_trace(text, &tpath, name, first, linear)?
        }
    };
    let order = match s.order.as_deref() {
        None | Some("in_order") => Order::InOrder,
        Some("reorder") => Order::Reorder,
        Some(other) => {
            return Err(ConfigError::new(
                format!("{path}.order"),
                format!("unknown order {other:?} (known: \"in_order\", \"reorder\")"),
            ))
        }
    };
    let mut outage = Outage::default();
    if let Some(o) = &s.outage {
        if let Some(q) = o.queued.as_deref() {
            outage.queued = match q {
                "keep" => Queued::Keep,
                "drop" => Queued::Drop,
                other => {
                    return Err(ConfigError::new(
                        format!("{path}.outage.queued"),
                        format!("unknown policy {other:?} (known: \"keep\", \"drop\")"),
                    ))
                }
            };
        }
        if let Some(q) = o.in_flight.as_deref() {
            outage.in_flight = match q {
                "drop" => InFlight::Drop,
                "deliver" => InFlight::Deliver,
                "delay" => InFlight::Delay,
                other => {
                    return Err(ConfigError::new(
                        format!("{path}.outage.in_flight"),
                        format!(
                            "unknown policy {other:?} (known: \"drop\", \"deliver\", \"delay\")"
                        ),
                    ))
                }
            };
        }
    }
    let opportunities = match &s.mahimahi {
        None => None,
        Some(name) => {
            let mpath = format!("{path}.mahimahi");
            if pieces.iter().any(|p| p.rate != first.rate) {
                return Err(ConfigError::new(
                    mpath,
                    "sets the link's service: the changes or the trace may not change the rate too",
                ));
            }
            Some(mahimahi(file_text(files, name, &mpath)?, &mpath, name)?)
        }
    };
    Ok(ScheduleSpec {
        pieces,
        order,
        outage,
        opportunities,
    })
}

/// The text of the file `name` that the key at `path` names.
fn file_text<'a>(
    files: &'a BTreeMap<String, String>,
    name: &str,
    path: &str,
) -> Result<&'a str, ConfigError> {
    files.get(name).map(String::as_str).ok_or_else(|| {
        ConfigError::new(
            path,
            format!(
                "file {name:?} was not read: load the scenario from its file \
                 (satqm.load), which reads the files it names, or give its \
                 text in the scenario's [files] table"
            ),
        )
    })
}

/// Bytes a mahimahi delivery opportunity carries (its largest TUN packet).
const MAHIMAHI_BYTES: u32 = 1504;

/// A mahimahi packet-delivery trace: one delivery opportunity per line,
/// at that many milliseconds, non-decreasing; the trace repeats after its
/// last time, which must be above 0.
fn mahimahi(text: &str, path: &str, name: &str) -> Result<Opportunities, ConfigError> {
    let bad =
        |line: usize, msg: String| ConfigError::new(path, format!("{name} line {line}: {msg}"));
    let mut times: Vec<SimTime> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let ms: u64 = line
            .parse()
            .ok()
            .filter(|&ms: &u64| ms <= 1_000_000_000)
            .ok_or_else(|| {
                bad(
                    n + 1,
                    format!("{line:?} is not a whole number of milliseconds"),
                )
            })?;
        let t = SimTime::from_ms(ms);
        if times.last().is_some_and(|&last| t < last) {
            return Err(bad(
                n + 1,
                format!(
                    "{ms} ms goes back (the line before is at {} ms)",
                    times[times.len() - 1].ns() / 1_000_000
                ),
            ));
        }
        times.push(t);
    }
    let Some(&period) = times.last() else {
        return Err(ConfigError::new(
            path,
            format!("{name}: has no opportunities"),
        ));
    };
    if period == SimTime::ZERO {
        return Err(ConfigError::new(
            path,
            format!("{name}: must last longer than 0 ms (its last time is where it repeats)"),
        ));
    }
    Ok(Opportunities {
        times,
        period,
        bytes: MAHIMAHI_BYTES,
    })
}

/// Open a piece at `at` holding the last piece's end values (or, at the
/// last piece's own start, change that one).
fn open_at(pieces: &mut Vec<Piece>, at: SimTime) -> &mut Piece {
    let last = *pieces.last().expect("a schedule has its first piece");
    if at > last.start {
        pieces.push(Piece {
            start: at,
            rate: (last.rate.1, last.rate.1),
            delay: (last.delay.1, last.delay.1),
            loss: last.loss,
            up: last.up,
        });
    }
    pieces.last_mut().expect("just pushed")
}

fn from_changes(
    changes: &[RawChange],
    path: &str,
    first: Piece,
) -> Result<Vec<Piece>, ConfigError> {
    if changes.is_empty() {
        return Err(ConfigError::new(path, "is empty"));
    }
    let mut pieces = vec![first];
    // Changes may not start before this (the previous one, or its ramp's end).
    let mut free_from: Option<(SimTime, String)> = None;
    for (i, c) in changes.iter().enumerate() {
        let cpath = format!("{path}[{i}]");
        let at = quantity_time(&c.at, &format!("{cpath}.at"), true)?;
        if let Some((t, what)) = &free_from {
            if at < *t || (at == *t && what.ends_with(".at")) {
                return Err(ConfigError::new(
                    format!("{cpath}.at"),
                    format!("must be later than {what} ({} s)", t.secs_f64()),
                ));
            }
        }
        let rate = c
            .rate
            .as_ref()
            .map(|q| quantity_rate(q, &format!("{cpath}.rate")))
            .transpose()?;
        let delay = c
            .delay
            .as_ref()
            .map(|q| quantity_time(q, &format!("{cpath}.delay"), true))
            .transpose()?;
        let loss = c
            .loss
            .map(|p| erasure(p, &format!("{cpath}.loss")))
            .transpose()?;
        let reverse_loss = c
            .reverse_loss
            .map(|p| erasure(p, &format!("{cpath}.reverse_loss")))
            .transpose()?;
        if rate.is_none()
            && delay.is_none()
            && loss.is_none()
            && reverse_loss.is_none()
            && c.up.is_none()
        {
            return Err(ConfigError::new(
                &cpath,
                "changes nothing: give rate, delay, loss, reverse_loss or up",
            ));
        }
        let ramp = c
            .ramp
            .as_ref()
            .map(|q| quantity_time(q, &format!("{cpath}.ramp"), false))
            .transpose()?;
        let p = open_at(&mut pieces, at);
        if let Some(l) = loss {
            p.loss.0 = l;
        }
        if let Some(l) = reverse_loss {
            p.loss.1 = l;
        }
        if let Some(up) = c.up {
            p.up = up;
        }
        match ramp {
            None => {
                if let Some(r) = rate {
                    p.rate = (r, r);
                }
                if let Some(d) = delay {
                    p.delay = (d, d);
                }
                free_from = Some((at, format!("{cpath}.at")));
            }
            Some(len) => {
                if rate.is_none() && delay.is_none() {
                    return Err(ConfigError::new(
                        format!("{cpath}.ramp"),
                        "ramps the rate or the delay: give one of them",
                    ));
                }
                if loss.is_some() || reverse_loss.is_some() || c.up.is_some() {
                    return Err(ConfigError::new(
                        format!("{cpath}.ramp"),
                        "ramps the rate and the delay only: change loss and up \
                         in a change of their own",
                    ));
                }
                if let Some(r) = rate {
                    p.rate.1 = r;
                }
                if let Some(d) = delay {
                    p.delay.1 = d;
                }
                let end = at + len;
                open_at(&mut pieces, end);
                free_from = Some((end, format!("the end of {cpath}.ramp")));
            }
        }
    }
    Ok(pieces)
}

/// An erasure probability below 1.
fn erasure(p: f64, path: &str) -> Result<f64, ConfigError> {
    let p = probability(p, path)?;
    if p >= 1.0 {
        return Err(ConfigError::new(
            path,
            "must be < 1 (every packet would be lost)",
        ));
    }
    Ok(p)
}

/// A trace's columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Col {
    Time,
    Rate,
    Delay,
    Loss,
    ReverseLoss,
    Up,
}

/// One row of a trace: its time and the values it sets.
#[derive(Clone, Copy, Debug)]
struct Row {
    at: SimTime,
    rate: Rate,
    delay: SimTime,
    loss: (f64, f64),
    up: bool,
}

fn from_trace(
    text: &str,
    path: &str,
    name: &str,
    first: Piece,
    linear: bool,
) -> Result<Vec<Piece>, ConfigError> {
    let bad =
        |line: usize, msg: String| ConfigError::new(path, format!("{name} line {line}: {msg}"));
    let mut cols: Option<Vec<Col>> = None;
    let mut rows: Vec<Row> = Vec::new();
    let mut cur = Row {
        at: SimTime::ZERO,
        rate: first.rate.0,
        delay: first.delay.0,
        loss: first.loss,
        up: true,
    };
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let Some(cols) = &cols else {
            let mut found = Vec::new();
            for c in &cells {
                let col = match *c {
                    "time" => Col::Time,
                    "rate" => Col::Rate,
                    "delay" => Col::Delay,
                    "loss" => Col::Loss,
                    "reverse_loss" => Col::ReverseLoss,
                    "up" => Col::Up,
                    other => {
                        return Err(bad(
                            n,
                            format!(
                                "unknown column {other:?} (known: time, rate, delay, loss, \
                                 reverse_loss, up)"
                            ),
                        ))
                    }
                };
                if found.contains(&col) {
                    return Err(bad(n, format!("column {c:?} is named twice")));
                }
                found.push(col);
            }
            if found.first() != Some(&Col::Time) {
                return Err(bad(n, "the first column must be `time`".into()));
            }
            if found.len() < 2 {
                return Err(bad(n, "names no value to change besides `time`".into()));
            }
            cols = Some(found);
            continue;
        };
        if cells.len() != cols.len() {
            return Err(bad(
                n,
                format!("has {} cells, the header names {}", cells.len(), cols.len()),
            ));
        }
        for (col, cell) in cols.iter().zip(&cells) {
            if cell.is_empty() {
                if *col == Col::Time {
                    return Err(bad(n, "the time is empty".into()));
                }
                continue;
            }
            let v: f64 = cell
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| bad(n, format!("{cell:?} is not a number")))?;
            let col_name = match col {
                Col::Time => "time",
                Col::Rate => "rate",
                Col::Delay => "delay",
                Col::Loss => "loss",
                Col::ReverseLoss => "reverse_loss",
                Col::Up => "up",
            };
            let range = |lo: f64, hi: f64, unit: &str| {
                if v < lo || v > hi {
                    Err(bad(
                        n,
                        format!("{col_name} {v} is out of range ({lo} to {hi} {unit})"),
                    ))
                } else {
                    Ok(v)
                }
            };
            match col {
                Col::Time => {
                    let t = SimTime::from_secs_f64(range(0.0, MAX_SECONDS, "s")?);
                    if let Some(prev) = rows.last() {
                        if t < prev.at {
                            return Err(bad(
                                n,
                                format!(
                                    "time {v} s goes back (the row before is at {} s)",
                                    prev.at.secs_f64()
                                ),
                            ));
                        }
                        let same = rows.iter().rev().take_while(|r| r.at == t).count();
                        if same >= 2 {
                            return Err(bad(
                                n,
                                format!(
                                    "a third row at {v} s (two make a jump; more mean nothing)"
                                ),
                            ));
                        }
                    }
                    cur.at = t;
                }
                Col::Rate => cur.rate = Rate(range(1.0, MAX_RATE, "bit/s")?.round() as u64),
                Col::Delay => cur.delay = SimTime::from_secs_f64(range(0.0, MAX_SECONDS, "s")?),
                Col::Loss => {
                    cur.loss.0 = erasure_cell(v).map_err(|m| bad(n, format!("loss {m}")))?
                }
                Col::ReverseLoss => {
                    cur.loss.1 = erasure_cell(v).map_err(|m| bad(n, format!("reverse_loss {m}")))?
                }
                Col::Up => {
                    cur.up = if v == 1.0 {
                        true
                    } else if v == 0.0 {
                        false
                    } else {
                        return Err(bad(n, format!("up must be 1 or 0, got {cell}")));
                    }
                }
            }
        }
        rows.push(cur);
    }
    if cols.is_none() {
        return Err(ConfigError::new(
            path,
            format!("{name}: has no header line"),
        ));
    }
    if rows.is_empty() {
        return Err(ConfigError::new(
            path,
            format!("{name}: has a header and no rows"),
        ));
    }
    let mut pieces = vec![first];
    for (i, r) in rows.iter().enumerate() {
        // Of rows that share a time, the last starts the piece; the one
        // before it ends the previous piece (a jump).
        if rows.get(i + 1).is_some_and(|next| next.at == r.at) {
            continue;
        }
        let end = if linear {
            rows[i + 1..].first().copied().unwrap_or(*r)
        } else {
            *r
        };
        let p = open_at(&mut pieces, r.at);
        *p = Piece {
            start: r.at,
            rate: (r.rate, end.rate),
            delay: (r.delay, end.delay),
            loss: r.loss,
            up: r.up,
        };
    }
    // A ramp ends at the next piece's start values: with linear
    // interpolation, a piece followed by a jump ends at the first row of
    // the jump, which `end` above took.
    Ok(pieces)
}

/// A trace's erasure cell: a probability below 1.
fn erasure_cell(v: f64) -> Result<f64, String> {
    if !(0.0..1.0).contains(&v) {
        return Err(format!("{v} is not a probability below 1"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use crate::config::testing::{err, BASE};
    use crate::config::{Overrides, Scenario};
    use crate::error::Error;
    use crate::net::schedule::{InFlight, Order, Queued, ScheduleSpec};
    use crate::time::{Rate, SimTime};
    use crate::topology::Topology;

    fn with_schedule(table: &str) -> String {
        BASE.replace(
            "buffer = 800\n",
            &format!("buffer = 800\n[topology.bottleneck.schedule]\n{table}\n"),
        )
    }

    fn spec_of(text: &str, files: &[(&str, &str)]) -> Result<ScheduleSpec, String> {
        let o = Overrides {
            files: files
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Overrides::default()
        };
        match Scenario::from_toml_overrides(text, &o) {
            Ok(s) => match s.topology {
                Topology::Dumbbell(d) => Ok(*d.bottleneck.schedule.expect("a schedule")),
                _ => unreachable!(),
            },
            Err(Error::Config(e)) => Err(e.to_string()),
            Err(e) => Err(format!("other: {e}")),
        }
    }

    #[test]
    fn changes_make_steps_and_ramps() {
        let s = spec_of(
            &with_schedule(
                r#"changes = [
  { at = "10 s", rate = "5 Mbps" },
  { at = "20 s", delay = "300 ms", ramp = "5 s" },
  { at = "30 s", up = false },
  { at = "32 s", up = true, loss = 0.01 },
]
order = "reorder"
outage = { queued = "drop", in_flight = "delay" }"#,
            ),
            &[],
        )
        .unwrap();
        let starts: Vec<u64> = s
            .pieces
            .iter()
            .map(|p| p.start.ns() / 1_000_000_000)
            .collect();
        assert_eq!(starts, vec![0, 10, 20, 25, 30, 32]);
        assert_eq!(s.pieces[0].rate, (Rate(10_000_000), Rate(10_000_000)));
        assert_eq!(s.pieces[1].rate, (Rate(5_000_000), Rate(5_000_000)));
        assert_eq!(
            s.pieces[2].delay,
            (SimTime::from_ms(290), SimTime::from_ms(300))
        );
        assert_eq!(s.pieces[3].delay.0, SimTime::from_ms(300));
        assert!(!s.pieces[4].up && s.pieces[5].up);
        assert_eq!(s.pieces[5].loss, (0.01, 0.0));
        assert_eq!(s.order, Order::Reorder);
        assert_eq!(s.outage.queued, Queued::Drop);
        assert_eq!(s.outage.in_flight, InFlight::Delay);
    }

    #[test]
    fn bad_changes_are_refused_by_key() {
        let cases = [
            (
                r#"changes = [{ at = "10 s", rate = "5 Mbps" }, { at = "5 s", rate = "1 Mbps" }]"#,
                "topology.bottleneck.schedule.changes[1].at: must be later than topology.bottleneck.schedule.changes[0].at (10 s)",
            ),
            (
                r#"changes = [{ at = "10 s", rate = "5 Mbps", ramp = "5 s" }, { at = "12 s", up = false }]"#,
                "topology.bottleneck.schedule.changes[1].at: must be later than the end of topology.bottleneck.schedule.changes[0].ramp (15 s)",
            ),
            (
                r#"changes = [{ at = "10 s", rate = "-5 Mbps" }]"#,
                "topology.bottleneck.schedule.changes[0].rate: must be > 0",
            ),
            (
                r#"changes = [{ at = "10 s" }]"#,
                "topology.bottleneck.schedule.changes[0]: changes nothing: give rate, delay, loss, reverse_loss or up",
            ),
            (
                r#"changes = [{ at = "1 s", up = false }]
outage = { queued = "lose" }"#,
                r#"topology.bottleneck.schedule.outage.queued: unknown policy "lose" (known: "keep", "drop")"#,
            ),
            (
                r#"changes = [{ at = "1 s", up = false, ramp = "1 s" }]"#,
                "topology.bottleneck.schedule.changes[0].ramp: ramps the rate or the delay: give one of them",
            ),
            (
                r#"changes = []"#,
                "topology.bottleneck.schedule.changes: is empty",
            ),
        ];
        for (table, want) in cases {
            let got = err(&with_schedule(table));
            assert!(got.starts_with(want), "{table}\n got: {got}\nwant: {want}");
        }
    }

    const TRACE: &str =
        "# a comment\ntime,rate,delay,up\n0,10e6,0.02,1\n1.5,,0.03,\n2,5e6,,0\n2,5e6,0.05,1\n";

    #[test]
    fn a_trace_file_gives_steps_or_ramps() {
        let text = with_schedule("trace = \"sat.csv\"");
        let s = spec_of(&text, &[("sat.csv", TRACE)]).unwrap();
        let starts: Vec<u64> = s.pieces.iter().map(|p| p.start.ns() / 1_000_000).collect();
        assert_eq!(starts, vec![0, 1500, 2000]);
        assert_eq!(
            s.pieces[1].delay,
            (SimTime::from_ms(30), SimTime::from_ms(30))
        );
        assert_eq!(s.pieces[2].rate.0, Rate(5_000_000));
        assert_eq!(s.pieces[2].delay.0, SimTime::from_ms(50));
        assert!(s.pieces[2].up);

        let linear = with_schedule("trace = \"sat.csv\"\ninterpolate = \"linear\"");
        let s = spec_of(&linear, &[("sat.csv", TRACE)]).unwrap();
        // 0 to 1.5 s: 20 ms to 30 ms; 1.5 to 2 s: to the jump's first row.
        assert_eq!(
            s.pieces[0].delay,
            (SimTime::from_ms(20), SimTime::from_ms(30))
        );
        assert_eq!(s.pieces[1].rate, (Rate(10_000_000), Rate(5_000_000)));
        assert_eq!(
            s.pieces[2].delay,
            (SimTime::from_ms(50), SimTime::from_ms(50))
        );
    }

    /// A scenario may carry a trace in its `[files]` table; a file the
    /// caller read takes precedence.
    #[test]
    fn a_trace_can_travel_in_the_scenario() {
        let text = with_schedule("trace = \"sat.csv\"")
            + "[files]\n\"sat.csv\" = \"time,rate\\n0,1e6\\n\"\n";
        assert_eq!(Scenario::files_named(&text).unwrap(), Vec::<String>::new());
        let s = spec_of(&text, &[]).unwrap();
        assert_eq!(s.pieces[0].rate.0, Rate(1_000_000));
        let s = spec_of(&text, &[("sat.csv", "time,rate\n0,2e6\n")]).unwrap();
        assert_eq!(s.pieces[0].rate.0, Rate(2_000_000));
    }

    #[test]
    fn bad_traces_are_refused_with_the_line() {
        let text = with_schedule("trace = \"sat.csv\"");
        let key = "topology.bottleneck.schedule.trace";
        let cases = [
            (
                "time,rate\n0,1e6\n2,1e6\n1,1e6\n",
                "sat.csv line 4: time 1 s goes back",
            ),
            (
                "time,rate\n0,-1e6\n",
                "sat.csv line 2: rate -1000000 is out of range",
            ),
            (
                "time,speed\n0,1\n",
                "sat.csv line 1: unknown column \"speed\"",
            ),
            (
                "rate,time\n1e6,0\n",
                "sat.csv line 1: the first column must be `time`",
            ),
            (
                "time,rate\n0,abc\n",
                "sat.csv line 2: \"abc\" is not a number",
            ),
            ("time,up\n0,2\n", "sat.csv line 2: up must be 1 or 0"),
            (
                "time,rate\n0,1e6,3\n",
                "sat.csv line 2: has 3 cells, the header names 2",
            ),
            ("time,rate\n", "sat.csv: has a header and no rows"),
            ("", "sat.csv: has no header line"),
            (
                "time,loss\n0,1\n",
                "sat.csv line 2: loss 1 is not a probability below 1",
            ),
        ];
        for (csv, want) in cases {
            let got = spec_of(&text, &[("sat.csv", csv)]).unwrap_err();
            assert!(
                got.starts_with(&format!("{key}: {want}")),
                "{csv:?}\n got: {got}"
            );
        }
        let got = spec_of(&text, &[]).unwrap_err();
        assert!(
            got.starts_with(&format!("{key}: file \"sat.csv\" was not read")),
            "{got}"
        );
    }

    /// Other paths between the routers, and route changes between them.
    #[test]
    fn alternates_and_route_changes() {
        let text = BASE.replace(
            "[[traffic]]",
            r#"[[topology.alternates]]
rate = "20 Mbps"
delay = "30 ms"
[topology.alternates.schedule]
changes = [{ at = "2 s", delay = "35 ms" }]
[[topology.route_changes]]
at = "5 s"
via = "alternate[0]"
[[topology.route_changes]]
at = "8 s"
via = "bottleneck"
[[traffic]]"#,
        );
        let s = Scenario::from_toml(&text)
            .map_err(|e| e.to_string())
            .unwrap();
        let Topology::Dumbbell(d) = s.topology else {
            unreachable!()
        };
        assert_eq!(d.alternates.len(), 1);
        assert!(d.alternates[0].schedule.is_some());
        assert_eq!(
            d.route_changes,
            vec![(SimTime::from_secs(5), 1), (SimTime::from_secs(8), 0)]
        );
        let bad = text.replace("via = \"alternate[0]\"", "via = \"alternate[1]\"");
        assert_eq!(
            err(&bad),
            r#"topology.route_changes[0].via: unknown path "alternate[1]" (known: "bottleneck", "alternate[0]")"#
        );
        let back = text.replace("at = \"8 s\"", "at = \"4 s\"");
        assert!(err(&back).starts_with("topology.route_changes[1].at: must be later than"));
    }

    #[test]
    fn a_mahimahi_trace_gives_opportunities() {
        let text = with_schedule("mahimahi = \"up.trace\"");
        let s = spec_of(&text, &[("up.trace", "1\n1\n3\n\n4\n")]).unwrap();
        let o = s.opportunities.unwrap();
        assert_eq!(o.period, SimTime::from_ms(4));
        assert_eq!(o.times.len(), 4);
        assert_eq!(o.bytes, 1504);
        let key = "topology.bottleneck.schedule.mahimahi";
        for (trace, want) in [
            (
                "3\n2\n",
                "up.trace line 2: 2 ms goes back (the line before is at 3 ms)",
            ),
            (
                "1\nx\n",
                "up.trace line 2: \"x\" is not a whole number of milliseconds",
            ),
            ("0\n0\n", "up.trace: must last longer than 0 ms"),
            ("", "up.trace: has no opportunities"),
        ] {
            let got = spec_of(&text, &[("up.trace", trace)]).unwrap_err();
            assert!(
                got.starts_with(&format!("{key}: {want}")),
                "{trace:?}: {got}"
            );
        }
        let both = with_schedule(
            "mahimahi = \"up.trace\"\nchanges = [{ at = \"1 s\", rate = \"1 Mbps\" }]",
        );
        let got = spec_of(&both, &[("up.trace", "1\n")]).unwrap_err();
        assert!(
            got.starts_with(&format!("{key}: sets the link's service")),
            "{got}"
        );
        let delays = with_schedule(
            "mahimahi = \"up.trace\"\nchanges = [{ at = \"1 s\", delay = \"10 ms\" }]",
        );
        assert!(spec_of(&delays, &[("up.trace", "1\n")]).is_ok());
    }

    #[test]
    fn schedules_are_refused_where_they_do_not_apply() {
        let text = BASE.replace(
            "delay = \"5 ms\"\n",
            "delay = \"5 ms\"\nschedule = { changes = [{ at = \"1 s\", up = false }] }\n",
        );
        assert!(
            err(&text).starts_with("topology.access.schedule: a schedule is allowed on"),
            "{}",
            err(&text)
        );
    }
}
