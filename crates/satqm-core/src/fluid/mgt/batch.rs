//! Integrating a batch of parameter sets into one columnar output: the
//! sets go four at a time, stepped in lockstep on one thread, resumable in
//! slices of steps so a caller can check for interrupts between slices.

use super::law::MgtModel;
use super::params::{MgtParams, MgtSettings};
use crate::error::ConfigError;
use crate::fluid::integrator::{FixedStepSystem, StepCursor, StepPlan};

/// Largest output kept, in f64 values over all series (8 GiB).
pub const MAX_OUTPUT_VALUES: u64 = 1 << 30;

/// Trajectories of a batch: each series is row-major `(n_records, members)`.
#[derive(Clone, Debug, PartialEq)]
pub struct MgtOutput {
    pub members: usize,
    pub n_records: usize,
    /// Record times (s): `k * record_every * dt`.
    pub t: Vec<f64>,
    pub w: Vec<f64>,
    pub q: Vec<f64>,
    pub p: Vec<f64>,
    pub p_eff: Vec<f64>,
    pub aux: Vec<f64>,
}

impl MgtOutput {
    /// Index of record `k` of member `i` in each series.
    pub fn index(&self, k: usize, i: usize) -> usize {
        k * self.members + i
    }

    /// The trajectory of one series for one member.
    pub fn member(&self, series: &[f64], i: usize) -> Vec<f64> {
        series
            .iter()
            .skip(i)
            .step_by(self.members)
            .copied()
            .collect()
    }
}

fn zeros(len: usize) -> Result<Vec<f64>, ConfigError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        ConfigError::new(
            "duration",
            format!("the output ({len} values per series) does not fit in memory"),
        )
    })?;
    v.resize(len, 0.0);
    Ok(v)
}

/// A batch of parameter sets, integrated in groups of four stepped in
/// lockstep (one thread; each set's trajectory is the same as alone),
/// resumable in slices of steps (see [`MgtBatch::advance`]).
#[derive(Debug)]
pub struct MgtBatch {
    settings: MgtSettings,
    plan: StepPlan,
    sets: Vec<MgtParams>,
    out: MgtOutput,
    /// First member not yet finished, the group being integrated and how
    /// far it has got.
    member: usize,
    group: Option<Lockstep>,
    cursor: StepCursor,
}

/// Parameter sets integrated together, one step of each in turn. Each
/// set's arithmetic is unchanged (its trajectory is the same bits as
/// alone), but the sets' dependency chains are independent, so the
/// processor overlaps them: one step of one set is a chain of dependent
/// divisions and multiplications that leaves most of the core idle.
#[derive(Debug)]
struct Lockstep {
    first: usize,
    models: Vec<MgtModel>,
}

/// Sets per [`Lockstep`] group.
const LANES: usize = 4;

impl FixedStepSystem for Lockstep {
    #[inline]
    fn step(&mut self) {
        for m in &mut self.models {
            m.step();
        }
    }
}

impl MgtBatch {
    /// Validate every set (errors name `key[i]` in a batch of more than one)
    /// and allocate the output.
    pub fn new(settings: MgtSettings, sets: Vec<MgtParams>) -> Result<MgtBatch, ConfigError> {
        let plan = settings.plan()?;
        if sets.is_empty() {
            return Err(ConfigError::new(
                "params",
                "needs at least one parameter set",
            ));
        }
        let m = sets.len();
        for (i, s) in sets.iter().enumerate() {
            s.validate(&settings).map_err(|e| index_error(e, i, m))?;
        }
        let n_records = plan.n_records();
        let total = n_records.saturating_mul(m as u64).saturating_mul(5);
        if total > MAX_OUTPUT_VALUES {
            return Err(ConfigError::new(
                "duration",
                format!(
                    "{n_records} records of {m} parameter sets is more output than {MAX_OUTPUT_VALUES} values; record less often"
                ),
            ));
        }
        let n_records = n_records as usize;
        let len = n_records * m;
        let rec_dt = plan.record_every as f64 * settings.dt_s;
        let out = MgtOutput {
            members: m,
            n_records,
            t: (0..n_records).map(|k| k as f64 * rec_dt).collect(),
            w: zeros(len)?,
            q: zeros(len)?,
            p: zeros(len)?,
            p_eff: zeros(len)?,
            aux: zeros(len)?,
        };
        Ok(MgtBatch {
            settings,
            plan,
            sets,
            out,
            member: 0,
            group: None,
            cursor: StepCursor::default(),
        })
    }

    /// Steps of model time in the whole batch (`n_steps × members`).
    pub fn total_steps(&self) -> u64 {
        self.plan.n_steps * self.sets.len() as u64
    }

    /// Whether every member has been integrated.
    pub fn finished(&self) -> bool {
        self.member >= self.sets.len()
    }

    /// Integrate about `budget` steps (summed over members, which are
    /// integrated a few at a time in order); returns whether the batch is
    /// finished.
    pub fn advance(&mut self, mut budget: u64) -> bool {
        while budget > 0 && !self.finished() {
            let out = &mut self.out;
            let group = match &mut self.group {
                Some(group) => group,
                None => {
                    let first = self.member;
                    let end = (first + LANES).min(self.sets.len());
                    // Validated in `MgtBatch::new`.
                    let models: Vec<MgtModel> = self.sets[first..end]
                        .iter()
                        .map(|set| MgtModel::new_validated(set, &self.settings))
                        .collect();
                    let group = Lockstep { first, models };
                    write_group(out, 0, &group);
                    self.cursor = StepCursor::default();
                    self.group.insert(group)
                }
            };
            let lanes = group.models.len() as u64;
            let took = self
                .cursor
                .advance(&self.plan, group, (budget / lanes).max(1), |k, g| {
                    write_group(out, k as usize, g)
                });
            budget = budget.saturating_sub(took * lanes);
            if self.cursor.finished(&self.plan) {
                self.member += group.models.len();
                self.group = None;
            }
        }
        self.finished()
    }

    /// The trajectories (complete once [`finished`](Self::finished)).
    pub fn into_output(self) -> MgtOutput {
        self.out
    }
}

fn write_group(out: &mut MgtOutput, k: usize, g: &Lockstep) {
    let row = k * out.members + g.first;
    for (j, s) in (row..).zip(&g.models) {
        out.w[j] = s.w();
        out.q[j] = s.q();
        out.p[j] = s.p();
        out.p_eff[j] = s.p_eff();
        out.aux[j] = s.aux();
    }
}

fn index_error(e: ConfigError, i: usize, members: usize) -> ConfigError {
    if members > 1 {
        ConfigError::new(format!("{}[{i}]", e.path), e.message)
    } else {
        e
    }
}

/// Integrate every parameter set for `settings.duration_s`.
pub fn simulate(settings: &MgtSettings, sets: &[MgtParams]) -> Result<MgtOutput, ConfigError> {
    let mut batch = MgtBatch::new(settings.clone(), sets.to_vec())?;
    batch.advance(u64::MAX);
    Ok(batch.into_output())
}
