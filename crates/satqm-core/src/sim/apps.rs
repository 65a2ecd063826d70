//! What each application does when one of its timers fires. Applications
//! use the transports' socket-like calls (write, close, open a transfer);
//! they never see packets.

use super::{Endpoints, Simulation};
use crate::engine::{AppTimer, Event};
use crate::error::Result;
use crate::ids::{AppId, FlowId, FlowKind};
use crate::time::SimTime;
use crate::traffic::App;

impl Simulation {
    pub(super) fn app_event(&mut self, a: AppId, timer: AppTimer) -> Result<()> {
        let flow = match &self.apps[a.idx()] {
            App::Bulk { .. } => self.bulk(a, timer),
            App::Cbr { .. } => self.cbr(a, timer),
            App::WebSlot { .. } => {
                // Start (the ramp) and Tick (think time over): a new page.
                self.web_page(a);
                return Ok(());
            }
            App::WebMouse(_) => {
                // Start (the session begins) and Tick (think time over): a
                // new file.
                self.web_mouse_file(a);
                return Ok(());
            }
            App::Arrivals { .. } => {
                // Start begins the process; each Tick is an arrival.
                self.arrival(a, timer);
                return Ok(());
            }
        };
        if timer == AppTimer::Stop {
            // The end of the flow's measurement window (docs/engine.md).
            let f = &mut self.flows[flow.idx()];
            f.delivered_at_stop.get_or_insert(f.delivered);
        }
        self.after_endpoint(flow)
    }

    /// A bulk transfer (TCP or ATSP) starts (writes its bytes and opens)
    /// or stops.
    fn bulk(&mut self, a: AppId, timer: AppTimer) -> FlowId {
        let App::Bulk { flow, size, .. } = self.apps[a.idx()] else {
            unreachable!("bulk timer for another app")
        };
        if let Endpoints::Atsp { sender, .. } = &mut self.flows[flow.idx()].ends {
            match timer {
                AppTimer::Start => sender.start(self.now),
                AppTimer::Stop => sender.stop(),
                AppTimer::Tick => {}
            }
        }
        if let Endpoints::Tcp { sender, .. } = &mut self.flows[flow.idx()].ends {
            let mut em = super::transport::emit(self.now, &mut self.out, &mut self.next_uid);
            match timer {
                AppTimer::Start => {
                    sender.write(size.unwrap_or(u64::MAX), &mut em);
                    if size.is_some() {
                        sender.close();
                    }
                    sender.open(&mut em);
                }
                AppTimer::Stop => sender.stop(),
                AppTimer::Tick => {}
            }
        }
        flow
    }

    /// A CBR source starts, sends its next datagram, or stops.
    fn cbr(&mut self, a: AppId, timer: AppTimer) -> FlowId {
        let now = self.now;
        let App::Cbr {
            source,
            stop,
            active,
        } = &mut self.apps[a.idx()]
        else {
            unreachable!("CBR timer for another app")
        };
        match timer {
            AppTimer::Start | AppTimer::Tick => {
                if timer == AppTimer::Start {
                    *active = true;
                }
                if *active {
                    let next = source.tick(&mut super::transport::emit(
                        now,
                        &mut self.out,
                        &mut self.next_uid,
                    ));
                    if stop.is_none_or(|s| next < s) && next <= self.end {
                        self.queue.schedule(next, Event::App(a, AppTimer::Tick));
                    }
                }
            }
            AppTimer::Stop => *active = false,
        }
        source.flow
    }

    /// A web connection slot fetches a page of a uniform size from a random
    /// server to a random client.
    fn web_page(&mut self, a: AppId) {
        let App::WebSlot {
            page_min,
            page_max,
            tcp,
            rng,
            ..
        } = &mut self.apps[a.idx()]
        else {
            unreachable!("web timer for another app")
        };
        let size = rng.uniform_u64(*page_min, *page_max);
        let s = rng.uniform_u64(0, self.servers.len() as u64 - 1) as usize;
        let c = rng.uniform_u64(0, self.clients.len() as u64 - 1) as usize;
        let tcp = tcp.clone();
        let ends = (self.servers[s], self.clients[c]);
        let f = self.add_tcp_flow(
            (FlowKind::Web, self.app_entry[a.idx()]),
            c as u32,
            ends,
            &tcp,
            Some(size),
            self.now,
            None,
        );
        self.flows[f.idx()].owner = Some(a);
    }

    /// A web mouse fetches its next Pareto-sized file, unless its entry has
    /// stopped.
    fn web_mouse_file(&mut self, a: AppId) {
        let now = self.now;
        let App::WebMouse(m) = &mut self.apps[a.idx()] else {
            unreachable!("web-mouse timer for another app")
        };
        if m.stop.is_some_and(|s| now >= s) {
            return;
        }
        let size = m.file_size();
        let (pair, tcp) = (m.pair, m.tcp.clone());
        let ends = self.pairs[pair as usize];
        let kind = (FlowKind::WebMice, self.app_entry[a.idx()]);
        let f = self.add_tcp_flow(kind, pair, ends, &tcp, Some(size), now, None);
        self.flows[f.idx()].owner = Some(a);
    }

    /// The Poisson process of short transfers: schedule the next arrival
    /// and, on a Tick, open a transfer on a random pair.
    fn arrival(&mut self, a: AppId, timer: AppTimer) {
        let now = self.now;
        let App::Arrivals {
            pairs,
            size,
            mean_gap,
            tcp,
            stop,
            rng,
        } = &mut self.apps[a.idx()]
        else {
            unreachable!("arrival timer for another app")
        };
        let gap = SimTime::from_secs_f64(rng.exponential(*mean_gap));
        let next = now + gap;
        if stop.is_none_or(|s| next < s) && next <= self.end {
            self.queue.schedule(next, Event::App(a, AppTimer::Tick));
        }
        if timer != AppTimer::Tick {
            return;
        }
        let pair = pairs[rng.uniform_u64(0, pairs.len() as u64 - 1) as usize];
        let (size, tcp) = (*size, tcp.clone());
        let ends = self.pairs[pair as usize];
        let kind = (FlowKind::Short, self.app_entry[a.idx()]);
        self.add_tcp_flow(kind, pair, ends, &tcp, Some(size), now, None);
    }

    /// The transfer an application opened has arrived: a web slot or a web
    /// mouse thinks, then fetches again.
    pub(super) fn transfer_done(&mut self, owner: AppId) {
        let now = self.now;
        match &mut self.apps[owner.idx()] {
            App::WebSlot { think, .. } => {
                self.queue
                    .schedule(now + *think, Event::App(owner, AppTimer::Tick));
            }
            App::WebMouse(m) => {
                let t = now + m.think();
                self.queue.schedule(t, Event::App(owner, AppTimer::Tick));
            }
            _ => {}
        }
    }
}
