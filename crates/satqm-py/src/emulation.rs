//! The emulator's binding: build the simulation, open a TUN device in each
//! real host's namespace, run the real-time loop on a thread of its own,
//! and hand back the simulation and the emulator's report when stopped.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use satqm_core::error::{ConfigError as CoreConfigError, Result as CoreResult};
use satqm_core::sim::Host;
use satqm_emu::{Emulator, RealHost, Report};

use crate::{scenario, to_py, Simulation};

type Outcome = CoreResult<(satqm_core::Simulation, Report)>;

/// A scenario run in real time with real hosts.
#[pyclass(module = "satqm._core")]
pub struct Emulation {
    /// Built, not yet started.
    sim: Option<satqm_core::Simulation>,
    thread: Option<JoinHandle<Outcome>>,
    stop: Arc<AtomicBool>,
    /// (node name, address) of each real host.
    hosts: Vec<(String, String)>,
    prefix: u8,
}

#[pymethods]
impl Emulation {
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
        files: Option<std::collections::BTreeMap<String, String>>,
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
        let (hosts, prefix) = sim.real_hosts();
        if hosts.is_empty() {
            let e = CoreConfigError::new(
                "emulation",
                "the scenario has no [emulation] section naming its real hosts",
            );
            return Err(to_py(py, e.into()));
        }
        let hosts = hosts
            .iter()
            .map(|(n, a)| (sim.node_names[n.idx()].clone(), a.to_string()))
            .collect();
        Ok(Emulation {
            sim: Some(sim),
            thread: None,
            stop: Arc::new(AtomicBool::new(false)),
            hosts,
            prefix,
        })
    }

    /// (node name, IPv4 address) of each real host, in `[emulation]` order.
    #[getter]
    fn hosts(&self) -> Vec<(String, String)> {
        self.hosts.clone()
    }

    #[getter]
    fn prefix(&self) -> u8 {
        self.prefix
    }

    /// Open device `device` in each real host's namespace (`netns`: one
    /// path per host, in order) and start the run in real time.
    #[pyo3(signature = (netns, device="satqm0", mtu=1500))]
    fn start(
        &mut self,
        py: Python<'_>,
        netns: Vec<String>,
        device: &str,
        mtu: u16,
    ) -> PyResult<()> {
        let sim = self
            .sim
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the emulation was already started"))?;
        if netns.len() != self.hosts.len() {
            self.sim = Some(sim);
            return Err(PyRuntimeError::new_err(format!(
                "{} namespaces for {} real hosts",
                netns.len(),
                self.hosts.len()
            )));
        }
        let (nodes, _) = sim.real_hosts();
        let mut real = Vec::new();
        for ((&(node, addr), path), (name, _)) in nodes.iter().zip(&netns).zip(&self.hosts) {
            let dev = open(Path::new(path), device, addr, self.prefix, mtu).map_err(|e| {
                PyRuntimeError::new_err(format!("cannot open a TUN device for {name}: {e}"))
            })?;
            real.push(RealHost { node, addr, dev });
        }
        let stop = self.stop.clone();
        let emu = Emulator::new(sim, real, mtu as usize);
        let _ = py;
        self.thread = Some(std::thread::spawn(move || emu.run(&stop)));
        Ok(())
    }

    /// The run is going (started and not yet at its end).
    #[getter]
    fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Stop the run (if it has not reached its end) and return the
    /// simulation, for its results, and the emulator's report.
    fn stop<'py>(&mut self, py: Python<'py>) -> PyResult<(Simulation, Bound<'py, PyDict>)> {
        let thread = self
            .thread
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the emulation is not running"))?;
        self.stop.store(true, Ordering::Relaxed);
        let outcome = py.allow_threads(|| thread.join());
        let (sim, report) = outcome
            .map_err(|_| PyRuntimeError::new_err("the emulation's thread panicked"))?
            .map_err(|e| to_py(py, e))?;
        let d = report_dict(py, &report)?;
        Ok((Simulation { sim }, d))
    }
}

#[cfg(target_os = "linux")]
fn open(
    netns: &Path,
    device: &str,
    addr: std::net::Ipv4Addr,
    prefix: u8,
    mtu: u16,
) -> std::io::Result<Box<dyn satqm_emu::Device + Send>> {
    Ok(Box::new(satqm_emu::tun::Tun::open(
        netns, device, addr, prefix, mtu,
    )?))
}

#[cfg(not(target_os = "linux"))]
fn open(
    _: &Path,
    _: &str,
    _: std::net::Ipv4Addr,
    _: u8,
    _: u16,
) -> std::io::Result<Box<dyn satqm_emu::Device + Send>> {
    Err(std::io::Error::other("emulation needs Linux"))
}

fn report_dict<'py>(py: Python<'py>, r: &Report) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let conns = PyList::empty(py);
    for c in &r.connections {
        conns.append((
            c.flow.0,
            c.proto,
            c.src.0.to_string(),
            c.src.1,
            c.dst.0.to_string(),
            c.dst.1,
        ))?;
    }
    d.set_item("connections", conns)?;
    let rej = PyDict::new(py);
    for (name, n) in &r.rejected {
        rej.set_item(name, n)?;
    }
    d.set_item("rejected", rej)?;
    d.set_item("injected", r.injected)?;
    d.set_item("written", r.written)?;
    d.set_item("write_errors", r.write_errors)?;
    d.set_item("wall_s", r.wall_s)?;
    d.set_item("realtime", r.realtime)?;
    let l = PyDict::new(py);
    l.set_item("count", r.lateness.count)?;
    l.set_item("p50_ns", r.lateness.p50_ns)?;
    l.set_item("p99_ns", r.lateness.p99_ns)?;
    l.set_item("max_ns", r.lateness.max_ns)?;
    d.set_item("lateness", l)?;
    let cols = |n: usize| -> Vec<Vec<u64>> { vec![Vec::new(); n] };
    let mut e = cols(4);
    for &(t, u, f, b) in &r.entered {
        e[0].push(t);
        e[1].push(u);
        e[2].push(f as u64);
        e[3].push(b as u64);
    }
    d.set_item("entered", e)?;
    let mut o = cols(4);
    for &(t, u, f, late) in &r.left {
        o[0].push(t);
        o[1].push(u);
        o[2].push(f as u64);
        o[3].push(late);
    }
    d.set_item("left", o)?;
    Ok(d)
}
