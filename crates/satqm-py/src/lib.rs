//! Python bindings for satqm-core: convert, call, map errors. Nothing else.
//!
//! Results cross the boundary as dicts of numpy arrays (one per column), so
//! the Python side builds DataFrames without copying row by row.

use numpy::{IntoPyArray, PyArrayMethods, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use satqm_core::aqm::replay::{
    qdisc_replay as core_qdisc_replay, replay, verdict_name, QdiscOp, TraceEvent, TraceKind,
};
use satqm_core::aqm::QueueView;
use satqm_core::config::Overrides;
use satqm_core::error::{ConfigError as CoreConfigError, Error};
use satqm_core::fluid::{params_from_columns, Interpolation, MgtBatch, MgtSettings};
use satqm_core::net::DropReason;
use satqm_core::packet::flags;
use satqm_core::probe::{Column, NamedColumns, SeqEvent};
use satqm_core::sim::{FlowSummary, Host};
use satqm_core::units::Quantity;
use satqm_core::{Scenario, SimTime};
use std::collections::BTreeMap;

mod emulation;

/// Rust's allocations in this module: large blocks on huge pages, which
/// spares the page-table walks of large runs (see `satqm_core::alloc`).
#[global_allocator]
static ALLOC: satqm_core::alloc::HugePages = satqm_core::alloc::HugePages;

create_exception!(
    _core,
    ConfigError,
    PyValueError,
    "A scenario that cannot be run as written; `path` names the key, `rule` the rule broken."
);
create_exception!(
    _core,
    SimulationError,
    PyRuntimeError,
    "A run that failed after it started."
);

/// Map every core error to its Python exception (exhaustive: a new variant
/// will not compile until it is mapped).
fn to_py(py: Python<'_>, e: Error) -> PyErr {
    match e {
        Error::Config(c) => {
            let err = ConfigError::new_err(c.to_string());
            let v = err.value(py);
            let _ = v.setattr("path", c.path.as_str());
            let _ = v.setattr("rule", c.message.as_str());
            err
        }
        Error::Parse(msg) => {
            let err = ConfigError::new_err(format!("invalid TOML: {msg}"));
            let v = err.value(py);
            let _ = v.setattr("path", "");
            let _ = v.setattr("rule", msg.as_str());
            err
        }
        Error::Simulation(msg) => SimulationError::new_err(msg),
    }
}

fn check_seconds(v: f64, what: &str) -> PyResult<SimTime> {
    if !v.is_finite() || !(0.0..=1e9).contains(&v) {
        return Err(PyValueError::new_err(format!(
            "{what}: must be a finite time in seconds >= 0"
        )));
    }
    Ok(SimTime::from_secs_f64(v))
}

#[allow(clippy::too_many_arguments)] // one argument per keyword of the Python signature
fn scenario(
    py: Python<'_>,
    text: &str,
    seed: Option<u64>,
    duration: Option<f64>,
    max_memory: Option<&Bound<'_, PyAny>>,
    capture: Option<Vec<String>>,
    warmup: Option<f64>,
    capture_side: Option<String>,
    files: Option<BTreeMap<String, String>>,
) -> PyResult<Scenario> {
    let o = Overrides {
        capture,
        capture_side,
        files: files.unwrap_or_default(),
        seed,
        duration_s: duration,
        warmup_s: warmup,
        max_memory: max_memory
            .map(|v| quantity(py, v, "simulation.max_memory"))
            .transpose()?,
    };
    Scenario::from_toml_overrides(text, &o).map_err(|e| to_py(py, e))
}

/// A quantity as Python gives it: a string with a unit, or a number (which
/// the core reads as a file's: refused unless it is 0).
fn quantity(py: Python<'_>, value: &Bound<'_, PyAny>, path: &str) -> PyResult<Quantity> {
    if let Ok(s) = value.extract::<String>() {
        return Ok(Quantity::Text(s));
    }
    if !value.is_instance_of::<pyo3::types::PyBool>() {
        if let Ok(v) = value.extract::<f64>() {
            return Ok(Quantity::Num(v));
        }
    }
    Err(to_py(
        py,
        CoreConfigError::new(path, "must be a string with a unit").into(),
    ))
}

/// Validate a scenario; returns a few facts about it.
#[pyfunction]
#[pyo3(signature = (text, seed=None, duration=None, max_memory=None, capture=None, warmup=None, capture_side=None, files=None))]
#[allow(clippy::too_many_arguments)] // one argument per keyword of the Python signature
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    seed: Option<u64>,
    duration: Option<f64>,
    max_memory: Option<&Bound<'py, PyAny>>,
    capture: Option<Vec<String>>,
    warmup: Option<f64>,
    capture_side: Option<String>,
    files: Option<BTreeMap<String, String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let s = scenario(
        py,
        text,
        seed,
        duration,
        max_memory,
        capture,
        warmup,
        capture_side,
        files,
    )?;
    // Building checks what needs the topology (link names of AQMs).
    satqm_core::Simulation::new_in(&s, Host::Python).map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    d.set_item("name", s.name.as_str())?;
    d.set_item("seed", s.seed)?;
    d.set_item("duration", s.duration.secs_f64())?;
    d.set_item("warmup", s.warmup.secs_f64())?;
    d.set_item("sample_interval", s.sample_interval.secs_f64())?;
    d.set_item(
        "flows",
        s.traffic.iter().map(|t| t.pairs.len()).sum::<usize>(),
    )?;
    Ok(d)
}

/// The files a scenario text names (its link schedules' traces), as it
/// names them: the caller reads them and passes their text as `files`.
#[pyfunction]
fn scenario_files(py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
    Scenario::files_named(text).map_err(|e| to_py(py, e))
}

/// The up-front memory estimate of a scenario, whatever its limit, run
/// from Python (`host="python"`) or from a Rust program (`"rust"`):
/// `total` (bytes), what the process holds before the run (`base`), and
/// each part as `(name, bytes, count, what, each)`.
#[pyfunction]
#[pyo3(signature = (text, seed=None, duration=None, capture=None, warmup=None, capture_side=None, host="python", files=None))]
#[allow(clippy::too_many_arguments)] // one argument per keyword of the Python signature
fn estimate_memory<'py>(
    py: Python<'py>,
    text: &str,
    seed: Option<u64>,
    duration: Option<f64>,
    capture: Option<Vec<String>>,
    warmup: Option<f64>,
    capture_side: Option<String>,
    host: &str,
    files: Option<BTreeMap<String, String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let host = match host {
        "python" => Host::Python,
        "rust" => Host::Rust,
        other => {
            return Err(PyValueError::new_err(format!(
                "host: must be \"python\" or \"rust\", got {other:?}"
            )))
        }
    };
    let s = scenario(
        py,
        text,
        seed,
        duration,
        None,
        capture,
        warmup,
        capture_side,
        files,
    )?;
    let est = satqm_core::Simulation::estimate_memory(&s, host);
    let d = PyDict::new(py);
    d.set_item("total", est.total())?;
    d.set_item("base", est.base)?;
    let parts = PyList::empty(py);
    for p in &est.parts {
        parts.append((p.name, p.bytes, p.how.count, p.how.what, p.how.each))?;
    }
    d.set_item("parts", parts)?;
    Ok(d)
}

/// A scenario quantity (a string with a unit such as "290 ms", "10 Mbps",
/// "64 KiB"; a number only if it is 0) in base units: seconds, bit/s or bytes.
#[pyfunction]
#[pyo3(signature = (value, dim, path="value"))]
fn parse_quantity(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    dim: &str,
    path: &str,
) -> PyResult<f64> {
    use satqm_core::units::{quantity_value, Dim};
    let dim = Dim::from_name(dim).ok_or_else(|| {
        PyValueError::new_err(format!(
            "dim: must be \"time\", \"rate\" or \"bytes\", got {dim:?}"
        ))
    })?;
    let q = quantity(py, value, path)?;
    quantity_value(&q, dim, path).map_err(|e| to_py(py, e.into()))
}

/// A result table as a dict of numpy arrays (text columns as lists), in the
/// core's column order.
fn table<'py>(
    py: Python<'py>,
    columns: Vec<(&'static str, Column)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in columns {
        match col {
            Column::U8(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::U32(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::U64(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::F64(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::Bool(v) => d.set_item(name, v.into_pyarray(py))?,
            Column::Text(v) => d.set_item(name, PyList::new(py, v)?)?,
        }
    }
    Ok(d)
}

/// One run of a scenario, advanced step by step or to the end.
#[pyclass(module = "satqm._core")]
struct Simulation {
    sim: satqm_core::Simulation,
}

/// Events processed between checks for Ctrl-C.
const EVENT_CHUNK: u64 = 2_000_000;

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, seed=None, duration=None, max_memory=None, capture=None, warmup=None, capture_side=None, files=None))]
    #[allow(clippy::too_many_arguments)] // one argument per keyword of the Python signature
    fn new(
        py: Python<'_>,
        text: &str,
        seed: Option<u64>,
        duration: Option<f64>,
        max_memory: Option<&Bound<'_, PyAny>>,
        capture: Option<Vec<String>>,
        warmup: Option<f64>,
        capture_side: Option<String>,
        files: Option<BTreeMap<String, String>>,
    ) -> PyResult<Self> {
        let s = scenario(
            py,
            text,
            seed,
            duration,
            max_memory,
            capture,
            warmup,
            capture_side,
            files,
        )?;
        let sim = satqm_core::Simulation::new_in(&s, Host::Python).map_err(|e| to_py(py, e))?;
        Ok(Simulation { sim })
    }

    /// Current simulated time in seconds.
    #[getter]
    fn now(&self) -> f64 {
        self.sim.now().secs_f64()
    }

    /// End of the run in seconds.
    #[getter]
    fn end(&self) -> f64 {
        self.sim.end().secs_f64()
    }

    #[getter]
    fn finished(&self) -> bool {
        self.sim.finished()
    }

    #[getter]
    fn events(&self) -> u64 {
        self.sim.events_processed()
    }

    /// Advance to simulated time `t` seconds (at most the end). Releases
    /// the GIL while simulating and raises KeyboardInterrupt on Ctrl-C.
    fn run_until(&mut self, py: Python<'_>, t: f64) -> PyResult<f64> {
        let t = check_seconds(t, "t")?;
        loop {
            let sim = &mut self.sim;
            let done = py.allow_threads(|| sim.run_until_budget(t, EVENT_CHUNK));
            let done = done.map_err(|e| to_py(py, e))?;
            py.check_signals()?;
            if done {
                return Ok(self.sim.now().secs_f64());
            }
        }
    }

    /// Run to the end.
    fn run(&mut self, py: Python<'_>) -> PyResult<f64> {
        let end = self.sim.end().secs_f64();
        self.run_until(py, end)
    }

    /// All recorded data as dicts of numpy arrays, plus the summary.
    /// (Mutable: reading the captures writes the last arrival, judged by
    /// now.)
    fn results<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = &mut self.sim;
        let out = PyDict::new(py);

        let links = PyList::new(py, sim.links.iter().map(|l| l.name.as_str()))?;
        out.set_item("links", links)?;
        out.set_item("bottleneck", sim.links[sim.bottleneck.idx()].name.as_str())?;
        out.set_item(
            "drop_reasons",
            PyList::new(py, DropReason::ALL.iter().map(|r| r.name()))?,
        )?;

        out.set_item("timeseries", table(py, sim.timeseries.columns())?)?;
        out.set_item("delay_hist", table(py, sim.delay_hist().columns())?)?;
        out.set_item("drops", table(py, sim.drops.columns())?)?;
        out.set_item("cwnd", table(py, sim.cwnd.columns())?)?;
        out.set_item("congestion", table(py, sim.congestion.columns())?)?;
        out.set_item("traffic", table(py, sim.traffic.columns())?)?;
        out.set_item("seq", table(py, sim.taps.seq.log.columns())?)?;
        out.set_item("seq_events", PyList::new(py, SeqEvent::NAMES)?)?;
        out.set_item("link_state", table(py, sim.link_state.columns())?)?;
        let fs = sim.flow_summaries();
        out.set_item("flows", table(py, FlowSummary::columns(&fs))?)?;

        let s = PyDict::new(py);
        for (k, v) in sim.summary().entries() {
            s.set_item(k, v.as_f64())?;
        }
        out.set_item("summary", s)?;

        let c = sim.packet_counts();
        let d = PyDict::new(py);
        d.set_item("created", c.created)?;
        d.set_item("delivered", c.delivered)?;
        d.set_item("dropped", c.dropped)?;
        d.set_item("in_flight", c.in_flight)?;
        out.set_item("packets", d)?;

        let caps = PyList::empty(py);
        for (name, packets, bytes) in sim.taps.captures.files() {
            caps.append((name, packets, PyBytes::new(py, bytes)))?;
        }
        out.set_item("captures", caps)?;
        Ok(out)
    }
}

fn trace_event(ev: &Bound<'_, PyDict>, i: usize) -> PyResult<TraceEvent> {
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        ev.get_item(k)?
            .ok_or_else(|| PyValueError::new_err(format!("trace[{i}]: missing key {k:?}")))
    };
    let kind = match get("ev")?.extract::<String>()?.as_str() {
        "arrival" => TraceKind::Arrival,
        "departure" => TraceKind::Departure,
        "timer" => TraceKind::Timer,
        other => {
            return Err(PyValueError::new_err(format!(
                "trace[{i}].ev: unknown event {other:?}"
            )))
        }
    };
    let idle: Option<u64> = get("idle_since")?.extract()?;
    let view = QueueView {
        q_packets: get("q_packets")?.extract()?,
        q_bytes: get("q_bytes")?.extract()?,
        idle_since: idle.map(SimTime),
        departed_bytes: get("departed_bytes")?.extract()?,
        rate_bps: 0,
    };
    let opt = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> { ev.get_item(k) };
    Ok(TraceEvent {
        kind,
        t: SimTime(get("t")?.extract()?),
        size: match kind {
            TraceKind::Timer => 0,
            _ => get("size")?.extract()?,
        },
        ecn_capable: opt("ecn")?
            .map(|v| v.extract())
            .transpose()?
            .unwrap_or(false),
        ect1: opt("ect1")?
            .map(|v| v.extract())
            .transpose()?
            .unwrap_or(false),
        u: match kind {
            TraceKind::Arrival => get("u")?.extract()?,
            _ => 0.0,
        },
        sojourn: match kind {
            TraceKind::Departure => SimTime(get("sojourn")?.extract()?),
            _ => SimTime::ZERO,
        },
        view,
    })
}

/// Replay a trace through one AQM (see docs/aqm.md and tests/oracles/).
#[pyfunction]
fn aqm_replay<'py>(
    py: Python<'py>,
    spec: &str,
    trace: Vec<Bound<'py, PyDict>>,
    rate_bps: u64,
    limit_bytes: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let mut events = Vec::with_capacity(trace.len());
    for (i, ev) in trace.iter().enumerate() {
        let mut e = trace_event(ev, i)?;
        e.view.rate_bps = rate_bps;
        events.push(e);
    }
    let res = replay(spec, rate_bps, limit_bytes, &events).map_err(|e| to_py(py, e))?;
    let d = PyDict::new(py);
    let verdicts: Vec<&str> = res
        .iter()
        .map(|(v, _)| v.map(verdict_name).unwrap_or("timer"))
        .collect();
    d.set_item("verdict", verdicts)?;
    let mut probes = NamedColumns::default();
    for (_, row) in &res {
        probes.push_row(|put| {
            for &(name, x) in row {
                put(name, x);
            }
        });
    }
    // Each internal under its name without the time series' prefix.
    for name in probes.names() {
        let key = name.strip_prefix("aqm_").unwrap_or(name);
        d.set_item(key, probes.get(name).expect("a named column"))?;
    }
    Ok(d)
}

/// Replay enqueue, dequeue and update operations through a queue
/// discipline (FQ-CoDel, DualPI2; see tests/oracles/).
#[pyfunction]
fn qdisc_replay<'py>(
    py: Python<'py>,
    spec: &str,
    limit_packets: u32,
    ops: Vec<Bound<'py, PyDict>>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut parsed = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
            op.get_item(k)?
                .ok_or_else(|| PyValueError::new_err(format!("ops[{i}]: missing key {k:?}")))
        };
        let t = SimTime(get("t")?.extract()?);
        parsed.push(match get("op")?.extract::<String>()?.as_str() {
            "enqueue" => QdiscOp::Enqueue {
                t,
                bucket: get("bucket")?.extract()?,
                size: get("size")?.extract()?,
                ecn: match get("ecn")?.extract::<String>()?.as_str() {
                    "not-ect" => 0,
                    "ect0" => flags::ECT,
                    "ect1" => flags::ECT1,
                    "ce" => flags::ECT | flags::CE,
                    other => {
                        return Err(PyValueError::new_err(format!(
                            "ops[{i}].ecn: {other:?} is not one of not-ect, ect0, ect1, ce"
                        )))
                    }
                },
            },
            "dequeue" => QdiscOp::Dequeue { t },
            "update" => QdiscOp::Update { t },
            other => {
                return Err(PyValueError::new_err(format!(
                    "ops[{i}].op: {other:?} is not enqueue, dequeue or update"
                )))
            }
        });
    }
    let steps = core_qdisc_replay(spec, limit_packets, &parsed).map_err(|e| to_py(py, e))?;
    steps
        .into_iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("dropped", s.dropped)?;
            d.set_item("sent", s.sent)?;
            d.set_item("mark", s.mark)?;
            if let Some(p) = s.p {
                d.set_item("p", p)?;
            }
            Ok(d)
        })
        .collect()
}

/// Fluid-model steps integrated between checks for Ctrl-C.
const FLUID_STEP_CHUNK: u64 = 4_000_000;

/// One parameter column: a number or a one-dimensional array of numbers.
fn fluid_column(key: &str, value: &Bound<'_, PyAny>) -> Result<Vec<f64>, CoreConfigError> {
    if let Ok(v) = value.extract::<f64>() {
        return Ok(vec![v]);
    }
    if let Ok(a) = value.extract::<PyReadonlyArray1<'_, f64>>() {
        if let Ok(s) = a.as_slice() {
            return Ok(s.to_vec());
        }
        return Ok(a.as_array().to_vec());
    }
    if let Ok(a) = value.extract::<Vec<f64>>() {
        return Ok(a);
    }
    Err(CoreConfigError::new(
        key,
        "must be a number or a one-dimensional array of numbers",
    ))
}

/// Integrate the Misra-Gong-Towsley fluid model for a batch of parameter
/// sets (see `satqm.models.fluid.simulate_fluid`, which wraps this).
/// Releases the GIL while integrating and raises KeyboardInterrupt on Ctrl-C.
#[pyfunction]
#[pyo3(signature = (aqm, params, duration, dt=1e-3, record_every=1, max_queue_delay=10.0, gentle=false, delay_interp="nearest"))]
#[allow(clippy::too_many_arguments)]
fn fluid_simulate<'py>(
    py: Python<'py>,
    aqm: &str,
    params: &Bound<'py, PyDict>,
    duration: f64,
    dt: f64,
    record_every: i64,
    max_queue_delay: f64,
    gentle: bool,
    delay_interp: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let config = |e: CoreConfigError| to_py(py, Error::Config(e));
    let mut columns = Vec::with_capacity(params.len());
    for (k, v) in params.iter() {
        let key: String = k.extract().map_err(|_| {
            config(CoreConfigError::new(
                "params",
                format!("keys must be strings, got {k}"),
            ))
        })?;
        let col = fluid_column(&key, &v).map_err(config)?;
        columns.push((key, col));
    }
    let interpolation = Interpolation::from_name(delay_interp).ok_or_else(|| {
        config(CoreConfigError::new(
            "delay_interp",
            format!("must be 'nearest' or 'linear', got {delay_interp:?}"),
        ))
    })?;
    let sets = params_from_columns(aqm, gentle, &columns).map_err(config)?;
    let settings = MgtSettings {
        duration_s: duration,
        dt_s: dt,
        // 0 (rejected by the core) for negative values
        record_every: u64::try_from(record_every).unwrap_or(0),
        max_queue_delay_s: max_queue_delay,
        interpolation,
    };
    let mut batch = MgtBatch::new(settings, sets).map_err(config)?;
    loop {
        let b = &mut batch;
        let done = py.allow_threads(|| b.advance(FLUID_STEP_CHUNK));
        py.check_signals()?;
        if done {
            break;
        }
    }
    let out = batch.into_output();
    let shape = [out.n_records, out.members];
    let d = PyDict::new(py);
    d.set_item("t", out.t.into_pyarray(py))?;
    d.set_item("W", out.w.into_pyarray(py).reshape(shape)?)?;
    d.set_item("q", out.q.into_pyarray(py).reshape(shape)?)?;
    d.set_item("p", out.p.into_pyarray(py).reshape(shape)?)?;
    d.set_item("p_eff", out.p_eff.into_pyarray(py).reshape(shape)?)?;
    d.set_item("aux", out.aux.into_pyarray(py).reshape(shape)?)?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_files, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(aqm_replay, m)?)?;
    m.add_function(wrap_pyfunction!(qdisc_replay, m)?)?;
    m.add_function(wrap_pyfunction!(fluid_simulate, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<emulation::Emulation>()?;
    Ok(())
}
