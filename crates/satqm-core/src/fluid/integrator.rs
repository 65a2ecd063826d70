//! Fixed-step driver for delay-differential systems.
//!
//! A system advances itself by one step of a fixed `dt` (it owns its state
//! and its [`DelayHistory`](super::DelayHistory) buffers, and folds `dt` into
//! its constants when it is built); the driver counts steps, records every
//! `record_every`-th state, and can stop after a budget of steps and resume
//! (so a caller can check for interrupts between slices of a long run).
//!
//! Records are numbered `0..n_records()`: record 0 is the initial state,
//! record `k` the state after `k * record_every` steps.

use crate::error::ConfigError;

/// A system of delay-differential equations stepped with a fixed step.
pub trait FixedStepSystem {
    /// Advance the state by one step.
    fn step(&mut self);
}

/// How long to integrate and how often to record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepPlan {
    /// Steps to take.
    pub n_steps: u64,
    /// Record every this many steps (>= 1).
    pub record_every: u64,
}

impl StepPlan {
    /// The plan for `duration_s` of model time at step `dt_s`:
    /// `n_steps = round(duration / dt)` with ties to even (as Python's
    /// `round`), at least one step.
    pub fn from_duration(
        duration_s: f64,
        dt_s: f64,
        record_every: u64,
    ) -> Result<StepPlan, ConfigError> {
        if !(dt_s > 0.0 && dt_s.is_finite()) {
            return Err(ConfigError::new("dt", format!("must be > 0, got {dt_s}")));
        }
        if !(duration_s > 0.0 && duration_s.is_finite()) {
            return Err(ConfigError::new(
                "duration",
                format!("must be > 0, got {duration_s}"),
            ));
        }
        let steps = round_ties_even(duration_s / dt_s);
        if steps < 1.0 {
            return Err(ConfigError::new("duration", "must be at least one step dt"));
        }
        // 2^53: every step count below is exact in f64 and fits u64.
        if steps > 9_007_199_254_740_992.0 {
            return Err(ConfigError::new(
                "duration",
                format!("{duration_s} s is too many steps of dt = {dt_s} s"),
            ));
        }
        if record_every < 1 {
            return Err(ConfigError::new("record_every", "must be >= 1"));
        }
        Ok(StepPlan {
            n_steps: steps as u64,
            record_every,
        })
    }

    /// Number of records: the initial state and one per `record_every` steps.
    pub fn n_records(&self) -> u64 {
        self.n_steps / self.record_every + 1
    }
}

/// Where a run of a [`StepPlan`] has got to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCursor {
    /// Steps taken so far.
    pub steps_done: u64,
}

impl StepCursor {
    /// Whether every step of `plan` has been taken.
    pub fn finished(&self, plan: &StepPlan) -> bool {
        self.steps_done >= plan.n_steps
    }

    /// Take at most `budget` further steps of `plan`, calling
    /// `record(k, system)` after each step that completes record `k`.
    /// Record 0 (the initial state) is the caller's to take. Returns the
    /// number of steps taken.
    pub fn advance<S: FixedStepSystem>(
        &mut self,
        plan: &StepPlan,
        system: &mut S,
        budget: u64,
        mut record: impl FnMut(u64, &S),
    ) -> u64 {
        let todo = (plan.n_steps - self.steps_done.min(plan.n_steps)).min(budget);
        let rec = plan.record_every;
        let mut done = self.steps_done;
        let mut until_record = rec - done % rec;
        for _ in 0..todo {
            system.step();
            done += 1;
            until_record -= 1;
            if until_record == 0 {
                until_record = rec;
                record(done / rec, system);
            }
        }
        self.steps_done = done;
        todo
    }
}

/// Python's `round`: to the nearest integer, ties to even.
pub(crate) fn round_ties_even(x: f64) -> f64 {
    let r = x.round(); // ties away from zero
    if (r - x).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// x' = 1 in steps of 1: the state counts steps.
    struct Counter(u64);
    impl FixedStepSystem for Counter {
        fn step(&mut self) {
            self.0 += 1;
        }
    }

    #[test]
    fn records_every_k_steps_and_resumes_across_budgets() {
        let plan = StepPlan {
            n_steps: 23,
            record_every: 5,
        };
        assert_eq!(plan.n_records(), 5);
        for budget in [1, 2, 3, 4, 5, 7, 100] {
            let mut sys = Counter(0);
            let mut cur = StepCursor::default();
            let mut seen = vec![(0, 0)];
            while !cur.finished(&plan) {
                let took = cur.advance(&plan, &mut sys, budget, |k, s| seen.push((k, s.0)));
                assert!(took >= 1 && took <= budget);
            }
            assert_eq!(sys.0, 23, "budget {budget}");
            assert_eq!(cur.steps_done, 23, "budget {budget}");
            assert_eq!(
                seen,
                vec![(0, 0), (1, 5), (2, 10), (3, 15), (4, 20)],
                "budget {budget}"
            );
            assert_eq!(cur.advance(&plan, &mut sys, budget, |_, _| ()), 0);
        }
    }

    #[test]
    fn plan_from_duration_rounds_like_python() {
        let p = StepPlan::from_duration(1200.0, 1e-3, 10).unwrap();
        assert_eq!(p.n_steps, 1_200_000);
        assert_eq!(p.n_records(), 120_001);
        assert_eq!(round_ties_even(2.5), 2.0);
        assert_eq!(round_ties_even(3.5), 4.0);
        assert_eq!(round_ties_even(2.4999), 2.0);
        assert_eq!(StepPlan::from_duration(2.5e-3, 1e-3, 1).unwrap().n_steps, 2);
    }

    #[test]
    fn bad_plans_name_the_parameter() {
        let e = |d: f64, dt: f64, r: u64| StepPlan::from_duration(d, dt, r).unwrap_err().path;
        assert_eq!(e(1.0, 0.0, 1), "dt");
        assert_eq!(e(1.0, f64::NAN, 1), "dt");
        assert_eq!(e(-1.0, 1e-3, 1), "duration");
        assert_eq!(e(1e-4, 1e-3, 1), "duration");
        assert_eq!(e(f64::INFINITY, 1e-3, 1), "duration");
        assert_eq!(e(1e300, 1e-300, 1), "duration");
        assert_eq!(e(1.0, 1e-3, 0), "record_every");
    }
}
