//! A TUN device inside a network namespace (Linux).

use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use nix::sched::{setns, CloneFlags};
use tun_rs::{DeviceBuilder, SyncDevice};

use crate::run::Device;

/// A TUN device (layer 3, no packet information header, no offloads).
pub struct Tun(SyncDevice);

impl Tun {
    /// Create device `name` in the network namespace at `netns` (a path
    /// such as `/run/netns/NAME`), with address `addr`/`prefix` and MTU
    /// `mtu`, up and non-blocking. The namespace is entered by a thread of
    /// its own, so the caller's stays where it was.
    pub fn open(netns: &Path, name: &str, addr: Ipv4Addr, prefix: u8, mtu: u16) -> io::Result<Tun> {
        let ns = File::open(netns)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", netns.display())))?;
        let name = name.to_string();
        let dev = std::thread::scope(|s| {
            s.spawn(move || -> io::Result<SyncDevice> {
                setns(ns.as_fd(), CloneFlags::CLONE_NEWNET).map_err(io::Error::from)?;
                DeviceBuilder::new()
                    .name(name)
                    .ipv4(addr, prefix, None)
                    .mtu(mtu)
                    .tx_queue_len(1000)
                    .build_sync()
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the namespace thread panicked")))
        })?;
        dev.set_nonblocking(true)?;
        Ok(Tun(dev))
    }
}

impl Device for Tun {
    fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.recv(buf)
    }

    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.send(buf)
    }

    fn fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor is the device's and lives as long as it.
        unsafe { BorrowedFd::borrow_raw(std::os::fd::AsRawFd::as_raw_fd(&self.0)) }
    }
}
