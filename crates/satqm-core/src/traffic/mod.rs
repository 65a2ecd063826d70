//! Applications that drive transports: bulk (FTP) transfers, CBR, short
//! flows, web sessions and web mice (`mice.rs`).
//!
//! Apps react to their timers ([`AppTimer`](crate::engine::AppTimer)) and
//! use the socket-like interface of the transports; they never see packets.

use crate::ids::FlowId;
use crate::rng::Rng;
use crate::time::SimTime;
use crate::transport::tcp::TcpConfig;
use crate::transport::udp::CbrSource;

pub mod mice;
pub use mice::WebMouse;

#[derive(Debug, Clone)]
pub enum App {
    /// Writes `size` bytes (or without end) on its TCP flow, then closes.
    Bulk {
        flow: FlowId,
        size: Option<u64>,
        stop: Option<SimTime>,
    },
    /// Opens a new short TCP transfer at each event of a Poisson process,
    /// on a pair drawn uniformly from `pairs`, until `stop`.
    Arrivals {
        pairs: Vec<u32>,
        size: u64,
        /// Mean time between arrivals, seconds.
        mean_gap: f64,
        tcp: TcpConfig,
        stop: Option<SimTime>,
        rng: Rng,
    },
    /// One connection slot of web traffic: fetch a page, think, repeat.
    WebSlot {
        page_min: u64,
        page_max: u64,
        think: SimTime,
        tcp: TcpConfig,
        rng: Rng,
    },
    /// One web-mouse user: fetch a Pareto-sized file, think, repeat.
    WebMouse(Box<WebMouse>),
    /// Sends UDP datagrams at a constant rate until `stop`.
    Cbr {
        source: CbrSource,
        stop: Option<SimTime>,
        active: bool,
    },
}
