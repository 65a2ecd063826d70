//! A link that changes over time: its rate, propagation delay, erasure
//! probability and whether it is up, as a list of pieces (see
//! [`Schedule`]).
//!
//! Each piece starts at a time and holds until the next one starts. Within
//! a piece the rate and the delay either hold (a step) or move linearly to
//! the next piece's start values (a ramp); the erasure probability and the
//! up/down state hold. A scenario gives the pieces as a list of changes or
//! as a trace file (`config/schedule.rs`); the link plays them
//! (`net/link.rs`), and the simulation applies each piece at its start
//! (`Event::LinkChange`).
//!
//! What applies to which packet:
//!
//! - **Rate.** A packet's serialization runs at the rate of each instant it
//!   spans: a packet that starts before a step and ends after it sends its
//!   first bits at the old rate and the rest at the new one. Within one
//!   step it takes exactly what a fixed link of that rate gives it
//!   ([`Rate::tx_time`]).
//! - **Delay.** A packet takes the propagation delay of the instant its
//!   serialization ends, and keeps it: a later change does not move a
//!   packet already in flight. When the delay falls, a packet sent after
//!   the fall could reach the far end before one sent earlier; [`Order`]
//!   says whether it waits for it (in order, as on a bent pipe whose
//!   signal follows one path) or overtakes it.
//! - **Erasure** applies to the packets whose serialization ends in the
//!   piece.
//! - **Down.** The transmitter sends nothing; [`Outage`] says what happens
//!   to the packets waiting in the buffer and to those on the link.
//!
//! A link may instead take its service from a trace of delivery
//! opportunities ([`Opportunities`], mahimahi's packet-delivery format):
//! packets then leave at the opportunities' times, each opportunity
//! carrying up to its bytes, as mahimahi's link queue serves them.

use crate::time::{Rate, SimTime};

/// One stretch of a schedule, from `start` until the next piece starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    pub start: SimTime,
    /// The rate at `start`, and at the next piece's start (equal for a
    /// step; a ramp moves linearly between them).
    pub rate: (Rate, Rate),
    /// The propagation delay at `start`, and at the next piece's start.
    pub delay: (SimTime, SimTime),
    /// Erasure probability, forward and reverse direction.
    pub loss: (f64, f64),
    pub up: bool,
}

/// Whether a packet may overtake one sent before it when the delay falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// A packet never reaches the far end before the one sent before it.
    InOrder,
    /// Each packet arrives at its own time.
    Reorder,
}

/// What happens to the packets waiting in the link's buffer while it is
/// down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// They wait (and arrivals join them, up to the buffer's limit) until
    /// the link is up again.
    Keep,
    /// They are dropped when the link goes down, and so is every packet
    /// that arrives while it is down.
    Drop,
}

/// What happens to the packets on the link (being serialized or
/// propagating) when it goes down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InFlight {
    /// They are lost.
    Drop,
    /// They reach the far end as if nothing happened.
    Deliver,
    /// They reach the far end later by the length of the outage.
    Delay,
}

/// What an outage does to a link's packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    pub queued: Queued,
    pub in_flight: InFlight,
}

impl Default for Outage {
    fn default() -> Self {
        Outage {
            queued: Queued::Keep,
            in_flight: InFlight::Drop,
        }
    }
}

/// A link's schedule as a scenario gives it: the pieces (the first starts
/// at 0 with the link's own values) and the policies.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleSpec {
    pub pieces: Vec<Piece>,
    pub order: Order,
    pub outage: Outage,
    /// Service by delivery opportunities instead of the pieces' rates.
    pub opportunities: Option<Opportunities>,
}

/// A trace of delivery opportunities, as mahimahi's `mm-link` plays one
/// (`src/frontend/link_queue.cc` of mahimahi): at each time the link may
/// deliver `bytes` (1,504, mahimahi's largest TUN packet); a packet waiting
/// then takes what it still needs of them, and what it leaves goes to the
/// packets waiting behind it; an opportunity that finds nothing waiting is
/// lost. A packet leaves at the opportunity that completes it. The trace
/// repeats with a period of its last time.
#[derive(Clone, Debug, PartialEq)]
pub struct Opportunities {
    /// Times within the period, non-decreasing (several at one time are
    /// several opportunities).
    pub times: Vec<SimTime>,
    /// The trace's last time: where it starts again.
    pub period: SimTime,
    pub bytes: u32,
}

impl Opportunities {
    /// The time of opportunity `k` (counting from the run's start).
    fn time_of(&self, k: u64) -> SimTime {
        let n = self.times.len() as u64;
        self.times[(k % n) as usize] + SimTime(self.period.ns() * (k / n))
    }

    /// The first opportunity after `t` (strictly: one at `t` itself went
    /// before anything that arrives at `t`, as in mahimahi).
    fn first_after(&self, t: SimTime) -> u64 {
        let n = self.times.len() as u64;
        let cycle = t.ns() / self.period.ns();
        let base = SimTime(cycle * self.period.ns());
        let i = self.times.partition_point(|&x| base + x <= t) as u64;
        cycle * n + i
    }

    /// The bit rate the opportunities in `(from, to]` offer.
    pub fn offered_bps(&self, from: SimTime, to: SimTime) -> f64 {
        if to <= from {
            return 0.0;
        }
        let k = self.first_after(to) - self.first_after(from);
        k as f64 * self.bytes as f64 * 8.0 / (to - from).secs_f64()
    }
}

/// Where service by opportunities stands: the opportunity that completed
/// the last packet, and what that packet left of it.
#[derive(Clone, Copy, Debug)]
struct Leftover {
    k: u64,
    at: SimTime,
    bytes: u32,
}

impl ScheduleSpec {
    /// Whether any piece ramps the rate or the delay.
    fn ramps(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| p.rate.0 != p.rate.1 || p.delay.0 != p.delay.1)
    }

    /// The longest delay any piece gives.
    pub fn max_delay(&self) -> SimTime {
        self.pieces
            .iter()
            .map(|p| p.delay.0.max(p.delay.1))
            .max()
            .unwrap_or(SimTime::ZERO)
    }

    /// The largest rate any piece gives.
    pub fn max_rate(&self) -> Rate {
        self.pieces
            .iter()
            .map(|p| p.rate.0.max(p.rate.1))
            .max()
            .unwrap_or(Rate(1))
    }
}

/// One direction of a link playing a [`ScheduleSpec`].
///
/// `now` only moves forward: the simulation calls [`advance`](Self::advance)
/// at each piece's start, and every question is about the current time or
/// later.
#[derive(Clone, Debug)]
pub struct Schedule {
    pieces: Vec<Piece>,
    /// This direction's erasure: the pieces' forward or reverse one.
    reverse: bool,
    /// The piece in force.
    at: usize,
    pub order: Order,
    pub outage: Outage,
    /// Whether any piece ramps (else every value is the current piece's).
    ramps: bool,
    /// Service by delivery opportunities, and what the last one left.
    opportunities: Option<(Opportunities, Option<Leftover>)>,
}

impl Schedule {
    /// Direction `reverse` of a link playing `spec`.
    pub fn new(spec: &ScheduleSpec, reverse: bool) -> Schedule {
        assert!(
            spec.pieces
                .first()
                .is_some_and(|p| p.start == SimTime::ZERO),
            "a schedule starts at 0"
        );
        Schedule {
            pieces: spec.pieces.clone(),
            reverse,
            at: 0,
            order: spec.order,
            outage: spec.outage,
            ramps: spec.ramps(),
            opportunities: spec.opportunities.clone().map(|o| (o, None)),
        }
    }

    /// If the piece in force at `now` is a step served at its rate (no
    /// ramp, no opportunities), when it ends (`SimTime::MAX`: never): a
    /// serialization that ends by then takes what a fixed link of that
    /// rate gives it.
    #[inline]
    pub fn step_until(&self, now: SimTime) -> Option<SimTime> {
        let p = &self.pieces[self.at];
        if p.rate.0 != p.rate.1 || self.opportunities.is_some() || now < p.start {
            return None;
        }
        Some(
            self.pieces
                .get(self.at + 1)
                .map_or(SimTime::MAX, |n| n.start),
        )
    }

    /// The delivery opportunities the link is served by, if it is.
    pub fn opportunities(&self) -> Option<&Opportunities> {
        self.opportunities.as_ref().map(|o| &o.0)
    }

    /// When a packet of `bytes` whose turn comes at `start` leaves: at the
    /// rate of each instant ([`tx_end`](Self::tx_end)), or at the
    /// delivery opportunity that completes it.
    pub fn serve(&mut self, start: SimTime, bytes: u32) -> SimTime {
        let Some((opp, left)) = &mut self.opportunities else {
            return self.tx_end(start, bytes);
        };
        let mut need = bytes;
        let mut k = match left {
            // Right behind a packet that left at this opportunity: what it
            // left, then the opportunities after it (more may come at the
            // same time).
            Some(l) if l.at == start => {
                if l.bytes >= need {
                    l.bytes -= need;
                    return start;
                }
                need -= l.bytes;
                l.k + 1
            }
            _ => opp.first_after(start),
        };
        loop {
            let t = opp.time_of(k);
            if opp.bytes >= need {
                *left = Some(Leftover {
                    k,
                    at: t,
                    bytes: opp.bytes - need,
                });
                return t;
            }
            need -= opp.bytes;
            k += 1;
        }
    }

    /// The longest delay any piece gives.
    pub fn max_delay(&self) -> SimTime {
        self.pieces
            .iter()
            .map(|p| p.delay.0.max(p.delay.1))
            .max()
            .unwrap_or(SimTime::ZERO)
    }

    /// The piece in force.
    pub fn current(&self) -> &Piece {
        &self.pieces[self.at]
    }

    /// The start of the piece after the current one.
    pub fn next_start(&self) -> Option<SimTime> {
        self.pieces.get(self.at + 1).map(|p| p.start)
    }

    /// Move to the piece that starts at `now` (at a piece's start, or
    /// later). Returns the piece now in force.
    pub fn advance(&mut self, now: SimTime) -> &Piece {
        self.at = self.index_at(now);
        &self.pieces[self.at]
    }

    /// The piece in force at `t` (not before the current one's start).
    fn index_at(&self, t: SimTime) -> usize {
        let mut i = self.at;
        while self.pieces.get(i + 1).is_some_and(|p| p.start <= t) {
            i += 1;
        }
        i
    }

    /// Where piece `i` ends (`None`: it is the last, and holds for ever).
    fn end_of(&self, i: usize) -> Option<SimTime> {
        self.pieces.get(i + 1).map(|p| p.start)
    }

    /// The rate at `t`, bit/s (a ramp's is rounded to the nearest bit/s).
    pub fn rate_at(&self, t: SimTime) -> Rate {
        let i = if self.ramps {
            self.index_at(t)
        } else {
            self.at
        };
        let p = &self.pieces[i];
        if p.rate.0 == p.rate.1 {
            return p.rate.0;
        }
        let end = self.end_of(i).expect("the last piece holds its values");
        let f = (t - p.start).ns() as f64 / (end - p.start).ns() as f64;
        let r = p.rate.0 .0 as f64 + f * (p.rate.1 .0 as f64 - p.rate.0 .0 as f64);
        Rate(r.round().max(1.0) as u64)
    }

    /// The propagation delay a packet whose serialization ends at `t` gets:
    /// on a ramp, interpolated to the nanosecond (rounded to the nearest).
    pub fn delay_at(&self, t: SimTime) -> SimTime {
        // Most packets: within the current step.
        let p = &self.pieces[self.at];
        if p.delay.0 == p.delay.1 && self.pieces.get(self.at + 1).is_none_or(|n| t < n.start) {
            return p.delay.0;
        }
        let i = self.index_at(t);
        let p = &self.pieces[i];
        let (d0, d1) = (p.delay.0.ns() as i128, p.delay.1.ns() as i128);
        if d0 == d1 {
            return p.delay.0;
        }
        let end = self.end_of(i).expect("the last piece holds its values");
        let (x, span) = ((t - p.start).ns() as i128, (end - p.start).ns() as i128);
        // d0 + (d1 - d0) x / span, rounded half away from zero.
        let num = (d1 - d0) * x;
        let q = (2 * num + num.signum() * span) / (2 * span);
        SimTime((d0 + q) as u64)
    }

    /// This direction's erasure probability at `t`.
    pub fn loss_at(&self, t: SimTime) -> f64 {
        let p = &self.pieces[if self.pieces.get(self.at + 1).is_none_or(|n| t < n.start) {
            self.at
        } else {
            self.index_at(t)
        }];
        if self.reverse {
            p.loss.1
        } else {
            p.loss.0
        }
    }

    /// Whether this direction may lose packets at all.
    pub fn lossy(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| if self.reverse { p.loss.1 } else { p.loss.0 } > 0.0)
    }

    /// When the link is next up at or after `t` (`None`: never again).
    pub fn up_from(&self, t: SimTime) -> Option<SimTime> {
        let i = self.index_at(t);
        if self.pieces[i].up {
            return Some(t);
        }
        self.pieces[i + 1..].iter().find(|p| p.up).map(|p| p.start)
    }

    /// When a serialization of `bytes` starting at `start` ends, at the
    /// rate of each instant it spans (pieces that are down count at their
    /// rate too: the transmitter is stopped by the link, not here).
    ///
    /// Within one step it is exactly [`Rate::tx_time`]; across pieces and
    /// on ramps the bits sent in each stretch are counted in `f64` and the
    /// end rounded up to the nanosecond.
    pub fn tx_end(&self, start: SimTime, bytes: u32) -> SimTime {
        // Most packets: within the current step.
        let p = &self.pieces[self.at];
        if p.rate.0 == p.rate.1 && start >= p.start {
            let end = start + p.rate.0.tx_time(bytes);
            if self.pieces.get(self.at + 1).is_none_or(|n| end <= n.start) {
                return end;
            }
        }
        let mut i = self.index_at(start);
        let mut t = start;
        let mut bits = bytes as f64 * 8.0;
        let mut whole = true;
        loop {
            let p = &self.pieces[i];
            let end = self.end_of(i);
            if p.rate.0 == p.rate.1 {
                let r = p.rate.0;
                let took = if whole {
                    r.tx_time(bytes)
                } else {
                    SimTime((bits * 1e9 / r.0 as f64).ceil() as u64)
                };
                match end {
                    Some(e) if t + took > e => {
                        bits -= r.0 as f64 * (e - t).ns() as f64 / 1e9;
                        whole = false;
                    }
                    _ => return t + took,
                }
            } else {
                // r(x) = a + k x over x seconds from t; the bits sent by
                // x are a x + k x^2 / 2.
                let e = end.expect("the last piece holds its values");
                let span = (e - p.start).ns() as f64 / 1e9;
                let k = (p.rate.1 .0 as f64 - p.rate.0 .0 as f64) / span;
                let a = p.rate.0 .0 as f64 + k * (t - p.start).ns() as f64 / 1e9;
                let room = (e - t).ns() as f64 / 1e9;
                let can = a * room + 0.5 * k * room * room;
                if can >= bits {
                    let x = 2.0 * bits / (a + (a * a + 2.0 * k * bits).max(0.0).sqrt());
                    return t + SimTime((x * 1e9).ceil() as u64).min(e - t);
                }
                bits -= can;
                whole = false;
            }
            t = end.expect("only the last piece holds for ever");
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(start_ms: u64, rate: u64, delay_ms: u64, up: bool) -> Piece {
        Piece {
            start: SimTime::from_ms(start_ms),
            rate: (Rate(rate), Rate(rate)),
            delay: (SimTime::from_ms(delay_ms), SimTime::from_ms(delay_ms)),
            loss: (0.0, 0.0),
            up,
        }
    }

    fn schedule(pieces: Vec<Piece>) -> Schedule {
        Schedule::new(
            &ScheduleSpec {
                pieces,
                order: Order::InOrder,
                outage: Outage::default(),
                opportunities: None,
            },
            false,
        )
    }

    /// Opportunities at 1, 1, 3 ms in a 4 ms period (then 5, 5, 7, 8, ...):
    /// a packet takes the first opportunity after its turn; what it leaves
    /// of one goes to the next packet if that one's turn is the same
    /// instant; one too big for what is left takes the next one too.
    #[test]
    fn opportunities_serve_as_mahimahi_does() {
        let ms = SimTime::from_ms;
        let mut s = schedule(vec![step(0, 1_000_000, 0, true)]);
        s.opportunities = Some((
            Opportunities {
                times: vec![ms(1), ms(1), ms(3), ms(4)],
                period: ms(4),
                bytes: 1504,
            },
            None,
        ));
        assert_eq!(s.serve(SimTime::ZERO, 1000), ms(1));
        // 504 bytes left at 1 ms: a 500-byte packet leaves at once...
        assert_eq!(s.serve(ms(1), 500), ms(1));
        // ...and a 1,500-byte one takes the 4 left, then 1,496 of the
        // second opportunity at 1 ms.
        assert_eq!(s.serve(ms(1), 1500), ms(1));
        // The next takes the 8 left and 3 ms's; then 4 ms, then 5 ms
        // (1 + 4: the trace repeats).
        assert_eq!(s.serve(ms(1), 1500), ms(3));
        assert_eq!(s.serve(ms(3), 1500), ms(4));
        assert_eq!(s.serve(ms(4), 1500), ms(5));
        // A packet that comes at 6 ms, the link idle: the second
        // opportunity at 5 ms was lost; it takes 7 ms.
        assert_eq!(s.serve(ms(6), 100), ms(7));
        let opp = s.opportunities().unwrap();
        // 4 opportunities per 4 ms of 1,504 bytes: 12.032 Mbit/s.
        assert!((opp.offered_bps(SimTime::ZERO, ms(400)) - 12.032e6).abs() < 1.0);
    }

    /// Within a step a packet takes what a fixed link gives it; across a
    /// step its bits before it go at the old rate and the rest at the new.
    #[test]
    fn serialization_follows_the_rate_of_each_instant() {
        let s = schedule(vec![
            step(0, 10_000_000, 10, true),
            step(10, 5_000_000, 10, true),
        ]);
        // 1,500 bytes at 10 Mbit/s: 1.2 ms.
        assert_eq!(s.tx_end(SimTime::ZERO, 1500), SimTime::from_us(1200));
        assert_eq!(
            s.tx_end(SimTime::from_ms(20), 1500),
            SimTime::from_ms(20) + Rate(5_000_000).tx_time(1500)
        );
        // From 9.4 ms: 0.6 ms at 10 Mbit/s (6,000 bits), then the other
        // 6,000 bits at 5 Mbit/s (1.2 ms): it ends at 11.2 ms.
        assert_eq!(
            s.tx_end(SimTime::from_us(9_400), 1500),
            SimTime::from_us(11_200)
        );
    }

    /// A ramp from 10 to 20 Mbit/s over 1 s sends, from its start, the
    /// integral of the rate: 12,000 bits take x with 1e7 x + 5e6 x^2 =
    /// 12,000.
    #[test]
    fn a_rate_ramp_integrates() {
        let mut p = step(0, 10_000_000, 0, true);
        p.rate.1 = Rate(20_000_000);
        let s = schedule(vec![p, step(1000, 20_000_000, 0, true)]);
        let x: f64 = (-1e7 + (1e14f64 + 4.0 * 5e6 * 12_000.0).sqrt()) / (2.0 * 5e6);
        let got = s.tx_end(SimTime::ZERO, 1500).ns() as f64;
        assert!((got - x * 1e9).abs() <= 1.0, "{got} vs {}", x * 1e9);
        assert_eq!(s.rate_at(SimTime::from_ms(500)), Rate(15_000_000));
    }

    /// A delay ramp interpolates to the nanosecond; a step holds.
    #[test]
    fn delays_interpolate_on_ramps() {
        let mut p = step(0, 1_000_000, 20, true);
        p.delay.1 = SimTime::from_ms(30);
        let s = schedule(vec![p, step(1000, 1_000_000, 30, true)]);
        assert_eq!(s.delay_at(SimTime::ZERO), SimTime::from_ms(20));
        assert_eq!(s.delay_at(SimTime::from_ms(250)), SimTime::from_us(22_500));
        assert_eq!(s.delay_at(SimTime(333)), SimTime(20_000_000 + 3)); // 3.33 ns
        assert_eq!(s.delay_at(SimTime::from_ms(5000)), SimTime::from_ms(30));
    }

    #[test]
    fn the_link_is_next_up_after_its_outage() {
        let s = schedule(vec![
            step(0, 1_000_000, 20, true),
            step(100, 1_000_000, 20, false),
            step(300, 1_000_000, 20, true),
        ]);
        assert_eq!(s.up_from(SimTime::from_ms(50)), Some(SimTime::from_ms(50)));
        assert_eq!(
            s.up_from(SimTime::from_ms(150)),
            Some(SimTime::from_ms(300))
        );
        let never = schedule(vec![
            step(0, 1_000_000, 20, true),
            step(100, 1_000_000, 20, false),
        ]);
        assert_eq!(never.up_from(SimTime::from_ms(150)), None);
    }
}
