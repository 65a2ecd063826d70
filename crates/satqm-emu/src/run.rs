//! The real-time run loop.
//!
//! One thread: it sleeps until the simulation's next event or the next
//! packet from a device, whichever comes first; reads every packet the
//! devices hold and hands each to the simulation at the current time;
//! advances the simulation to the wall clock; and writes every real packet
//! the simulation delivered to its host's device, recording how late the
//! write was against the delivery's simulated time.

use std::collections::HashMap;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use satqm_core::capture::headers::set_ce;
use satqm_core::error::{Error, Result};
use satqm_core::ids::{FlowId, NodeId};
use satqm_core::sim::{OutsidePacket, Simulation};
use satqm_core::time::SimTime;

use crate::parse::{parse, ConnKey, Reject};

/// Where a real host's packets come from and go to: a TUN device, or in
/// tests any datagram descriptor.
pub trait Device {
    /// Read one packet; `WouldBlock` when there is none.
    fn recv(&self, buf: &mut [u8]) -> io::Result<usize>;
    /// Write one packet.
    fn send(&self, buf: &[u8]) -> io::Result<usize>;
    /// The descriptor to wait on.
    fn fd(&self) -> BorrowedFd<'_>;
}

/// A real host: its node in the simulated network, its address and its
/// device.
pub struct RealHost {
    pub node: NodeId,
    pub addr: Ipv4Addr,
    pub dev: Box<dyn Device + Send>,
}

/// A real connection the emulator has seen: its flow and 5-tuple (the
/// end that sent the first packet first).
#[derive(Clone, Debug, PartialEq)]
pub struct Connection {
    pub flow: FlowId,
    pub proto: u8,
    pub src: (Ipv4Addr, u16),
    pub dst: (Ipv4Addr, u16),
}

/// Lateness of the writes, ns: how long after its simulated delivery time
/// each real packet reached its device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lateness {
    pub count: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl Lateness {
    fn of(mut late: Vec<u64>) -> Lateness {
        if late.is_empty() {
            return Lateness::default();
        }
        late.sort_unstable();
        let at = |q: f64| late[((late.len() - 1) as f64 * q).round() as usize];
        Lateness {
            count: late.len() as u64,
            p50_ns: at(0.5),
            p99_ns: at(0.99),
            max_ns: *late.last().unwrap_or(&0),
        }
    }
}

/// What the emulator measured, beside the simulation's own results.
#[derive(Debug, Default)]
pub struct Report {
    pub connections: Vec<Connection>,
    /// Packets read from the devices and refused, by [`Reject`] reason.
    pub rejected: Vec<(&'static str, u64)>,
    /// Packets read and handed to the simulation.
    pub injected: u64,
    /// Packets written to a device, and those whose write failed.
    pub written: u64,
    pub write_errors: u64,
    pub lateness: Lateness,
    /// Each real packet as it entered: (time ns, packet id, flow, bytes).
    pub entered: Vec<(u64, u64, u32, u32)>,
    /// Each real packet as it was written: (simulated delivery time ns,
    /// packet id, flow, lateness ns).
    pub left: Vec<(u64, u64, u32, u64)>,
    /// Wall-clock seconds the loop ran.
    pub wall_s: f64,
    /// The loop ran at a real-time priority (SCHED_FIFO), which root may
    /// set: the other work of the machine then delays it less.
    pub realtime: bool,
}

/// Packets read from one device before the loop turns to the next.
const READ_BURST: usize = 64;
/// The longest sleep, so that a stop request is seen promptly.
const MAX_SLEEP: Duration = Duration::from_millis(50);

pub struct Emulator {
    sim: Simulation,
    hosts: Vec<RealHost>,
    by_addr: HashMap<Ipv4Addr, usize>,
    by_node: HashMap<NodeId, usize>,
    conns: HashMap<ConnKey, FlowId>,
    report: Report,
    rejected: HashMap<Reject, u64>,
    late: Vec<u64>,
    /// The largest packet a host may send (its device's MTU).
    mtu: usize,
}

impl Emulator {
    /// An emulator for `sim` whose real hosts are `hosts` (each a node of
    /// the simulation with an address and a device).
    pub fn new(sim: Simulation, hosts: Vec<RealHost>, mtu: usize) -> Emulator {
        let by_addr = hosts.iter().enumerate().map(|(i, h)| (h.addr, i)).collect();
        let by_node = hosts.iter().enumerate().map(|(i, h)| (h.node, i)).collect();
        Emulator {
            sim,
            hosts,
            by_addr,
            by_node,
            conns: HashMap::new(),
            report: Report::default(),
            rejected: HashMap::new(),
            late: Vec::new(),
            mtu,
        }
    }

    /// Run in real time until the simulation's end or until `stop` is set;
    /// then give back the simulation (for its results) and the report.
    pub fn run(mut self, stop: &AtomicBool) -> Result<(Simulation, Report)> {
        lower_timer_slack();
        self.report.realtime = realtime_priority();
        let t0 = Instant::now();
        let mut buf = vec![0u8; 65_536];
        let end = self.sim.end();
        loop {
            let now = since(t0);
            if stop.load(Ordering::Relaxed) || now >= end {
                let t = now.min(end);
                self.sim.run_until(t)?;
                self.write_out(t0);
                break;
            }
            self.sim.run_until(now)?;
            self.write_out(t0);
            for h in 0..self.hosts.len() {
                self.read_from(h, &mut buf)?;
            }
            // Packets handed in at `now` may be delivered at `now` (a link
            // of no delay).
            self.sim.run_until(now)?;
            self.write_out(t0);
            self.wait(t0)?;
        }
        self.report.wall_s = t0.elapsed().as_secs_f64();
        self.report.lateness = Lateness::of(std::mem::take(&mut self.late));
        self.report.rejected = Reject::ALL
            .iter()
            .map(|r| (r.name(), self.rejected.get(r).copied().unwrap_or(0)))
            .collect();
        Ok((self.sim, self.report))
    }

    /// Read what host `h`'s device holds (at most a burst) and hand it in.
    fn read_from(&mut self, h: usize, buf: &mut [u8]) -> Result<()> {
        for _ in 0..READ_BURST {
            let n = match self.hosts[h].dev.recv(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::Simulation(format!("reading a device: {e}"))),
            };
            if let Err(r) = self.hand_in(h, &buf[..n]) {
                *self.rejected.entry(r).or_default() += 1;
            }
        }
        Ok(())
    }

    /// Hand packet `bytes` from host `h` to the simulation.
    fn hand_in(&mut self, h: usize, bytes: &[u8]) -> std::result::Result<(), Reject> {
        let p = parse(bytes, self.mtu)?;
        let from = &self.hosts[h];
        if p.src != from.addr {
            return Err(Reject::NoHost);
        }
        let &to = self.by_addr.get(&p.dst).ok_or(Reject::NoHost)?;
        let (from, to) = (from.node, self.hosts[to].node);
        let key = p.key();
        let flow = match self.conns.get(&key) {
            Some(&f) => f,
            None => {
                let f = self
                    .sim
                    .open_outside_flow(from, to)
                    .map_err(|_| Reject::NoRoute)?;
                self.conns.insert(key, f);
                self.report.connections.push(Connection {
                    flow: f,
                    proto: p.proto,
                    src: (p.src, p.sport),
                    dst: (p.dst, p.dport),
                });
                f
            }
        };
        let uid = self
            .sim
            .inject(&OutsidePacket {
                flow,
                from,
                to,
                ecn: p.ecn,
                payload: p.payload,
                seq: p.seq,
                bytes,
            })
            .map_err(|_| Reject::NoRoute)?;
        self.report.injected += 1;
        self.report
            .entered
            .push((self.sim.now().ns(), uid, flow.0, bytes.len() as u32));
        Ok(())
    }

    /// Write every real packet delivered so far to its host's device.
    fn write_out(&mut self, t0: Instant) {
        let Emulator {
            sim,
            hosts,
            by_node,
            report,
            late,
            ..
        } = self;
        sim.drain_outgoing(|o| {
            let Some(&h) = by_node.get(&o.node) else {
                return;
            };
            if o.ce {
                set_ce(o.bytes);
            }
            match hosts[h].dev.send(o.bytes) {
                Ok(_) => report.written += 1,
                Err(_) => report.write_errors += 1,
            }
            let lateness = since(t0).saturating_sub(o.at).ns();
            late.push(lateness);
            report.left.push((o.at.ns(), o.uid, o.flow.0, lateness));
        });
    }

    /// Sleep until the next event is due or a device has a packet.
    fn wait(&mut self, t0: Instant) -> Result<()> {
        let now = since(t0);
        let next = self.sim.next_event_time().unwrap_or(self.sim.end());
        let ahead = Duration::from_nanos(next.saturating_sub(now).ns()).min(MAX_SLEEP);
        if ahead.is_zero() {
            return Ok(());
        }
        let fds: Vec<BorrowedFd<'_>> = self.hosts.iter().map(|h| h.dev.fd()).collect();
        poll_readable(&fds, ahead)
            .map_err(|e| Error::Simulation(format!("waiting for the devices: {e}")))
    }
}

/// Simulated time now: the wall-clock time since `t0`.
fn since(t0: Instant) -> SimTime {
    SimTime::from_ns(t0.elapsed().as_nanos().min(u64::MAX as u128) as u64)
}

/// Wait up to `timeout` for one of `fds` to be readable.
#[cfg(target_os = "linux")]
fn poll_readable(fds: &[BorrowedFd<'_>], timeout: Duration) -> io::Result<()> {
    use nix::poll::{ppoll, PollFd, PollFlags};
    use nix::sys::time::TimeSpec;
    let mut polls: Vec<PollFd<'_>> = fds
        .iter()
        .map(|fd| PollFd::new(*fd, PollFlags::POLLIN))
        .collect();
    match ppoll(&mut polls, Some(TimeSpec::from_duration(timeout)), None) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn poll_readable(_fds: &[BorrowedFd<'_>], timeout: Duration) -> io::Result<()> {
    std::thread::sleep(timeout);
    Ok(())
}

/// Run this thread at a modest real-time priority if allowed (root);
/// whether it does.
fn realtime_priority() -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: sched_setscheduler on this thread (0) with a valid param.
    unsafe {
        let p = nix::libc::sched_param { sched_priority: 10 };
        nix::libc::sched_setscheduler(0, nix::libc::SCHED_FIFO, &p) == 0
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// Ask the kernel to wake this thread within a microsecond of its timer
/// rather than the default 50 µs.
fn lower_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only
    // this thread.
    unsafe {
        nix::libc::prctl(nix::libc::PR_SET_TIMERSLACK, 1u64);
    }
}
