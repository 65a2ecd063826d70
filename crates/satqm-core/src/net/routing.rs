use std::collections::VecDeque;

use crate::ids::{LinkId, NodeId};

/// Static shortest-path (fewest hops) routes: the first link from each node
/// towards each destination.
///
/// A node with a single outgoing link (a host) forwards everything on it
/// and needs no table; only nodes with several links (routers) keep a row
/// of `n_nodes` entries, found by one breadth-first search from the node.
/// Memory is `routers x nodes`, not `nodes^2`: a dumbbell of 100,000 pairs
/// needs two rows.
#[derive(Debug, Clone)]
pub struct Routes {
    /// Per node: its only link, or `MULTI` (see `rows`), or `NONE`.
    single: Vec<u32>,
    /// Per node with several links: offset of its row in `table`.
    row: Vec<u32>,
    table: Vec<u32>,
}

const NONE: u32 = u32::MAX;
const MULTI: u32 = u32::MAX - 1;

impl Routes {
    /// Build from the links' endpoints. Ties between equal-length paths go
    /// to the link created first.
    pub fn build(n_nodes: usize, links: &[(NodeId, NodeId)]) -> Routes {
        let mut out: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n_nodes];
        for (i, (from, to)) in links.iter().enumerate() {
            out[from.idx()].push((to.idx(), i as u32));
        }
        let mut single = vec![NONE; n_nodes];
        let mut row = vec![NONE; n_nodes];
        let mut table = Vec::new();
        let mut first = vec![NONE; n_nodes];
        let mut frontier = VecDeque::new();
        for src in 0..n_nodes {
            match out[src].len() {
                0 => continue,
                1 => {
                    single[src] = out[src][0].1;
                    continue;
                }
                _ => single[src] = MULTI,
            }
            // BFS from src; each node inherits the first hop of its parent.
            first.iter_mut().for_each(|f| *f = NONE);
            frontier.clear();
            for &(to, link) in &out[src] {
                if to != src && first[to] == NONE {
                    first[to] = link;
                    frontier.push_back(to);
                }
            }
            while let Some(v) = frontier.pop_front() {
                for &(to, _) in &out[v] {
                    if to != src && first[to] == NONE {
                        first[to] = first[v];
                        frontier.push_back(to);
                    }
                }
            }
            row[src] = table.len() as u32;
            table.extend_from_slice(&first);
        }
        Routes { single, row, table }
    }

    /// Where [`next_hop`](Self::next_hop) from a router (a node with more
    /// than one link out) looks `dst` up, to prefetch it; `None` elsewhere.
    #[inline]
    pub fn entry(&self, at: NodeId, dst: NodeId) -> Option<&u32> {
        match self.single.get(at.idx()) {
            Some(&MULTI) => self.table.get(self.cell(at, dst)),
            _ => None,
        }
    }

    /// The link `at` forwards packets for `dst` on, if `dst` is reachable.
    #[inline]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        if at == dst {
            return None;
        }
        let l = match self.single[at.idx()] {
            MULTI => self.table[self.cell(at, dst)],
            s => s,
        };
        (l != NONE).then_some(LinkId(l))
    }

    /// From now on, router `at` forwards on `via` whatever it forwarded on
    /// any of `paths` (parallel links to one neighbour): a route change.
    pub fn reroute(&mut self, at: NodeId, paths: &[LinkId], via: LinkId) {
        let moves = |l: &mut u32| {
            if paths.iter().any(|p| p.0 == *l) {
                *l = via.0;
            }
        };
        match self.single[at.idx()] {
            MULTI => {
                let start = self.row[at.idx()] as usize;
                let n = self.single.len();
                self.table[start..start + n].iter_mut().for_each(moves);
            }
            NONE => {}
            _ => moves(&mut self.single[at.idx()]),
        }
    }

    /// Router `at`'s entry for `dst` in `table`.
    #[inline]
    fn cell(&self, at: NodeId, dst: NodeId) -> usize {
        self.row[at.idx()] as usize + dst.idx()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_three() {
        // 0 <-> 1 <-> 2
        let links = [
            (NodeId(0), NodeId(1)),
            (NodeId(1), NodeId(0)),
            (NodeId(1), NodeId(2)),
            (NodeId(2), NodeId(1)),
        ];
        let r = Routes::build(3, &links);
        assert_eq!(r.next_hop(NodeId(0), NodeId(2)), Some(LinkId(0)));
        assert_eq!(r.next_hop(NodeId(1), NodeId(2)), Some(LinkId(2)));
        assert_eq!(r.next_hop(NodeId(2), NodeId(0)), Some(LinkId(3)));
        assert_eq!(r.next_hop(NodeId(1), NodeId(0)), Some(LinkId(1)));
        assert_eq!(r.next_hop(NodeId(0), NodeId(0)), None);
    }

    /// Two parallel links between two routers: the first created carries
    /// the traffic until a reroute moves it to the other.
    #[test]
    fn a_reroute_moves_traffic_to_a_parallel_link() {
        // 0 <-> 1 twice (links 0/1 and 2/3), 1 <-> 2 (4/5)
        let links = [
            (NodeId(0), NodeId(1)),
            (NodeId(1), NodeId(0)),
            (NodeId(0), NodeId(1)),
            (NodeId(1), NodeId(0)),
            (NodeId(1), NodeId(2)),
            (NodeId(2), NodeId(1)),
        ];
        let mut r = Routes::build(3, &links);
        assert_eq!(r.next_hop(NodeId(0), NodeId(2)), Some(LinkId(0)));
        r.reroute(NodeId(0), &[LinkId(0), LinkId(2)], LinkId(2));
        assert_eq!(r.next_hop(NodeId(0), NodeId(2)), Some(LinkId(2)));
        assert_eq!(r.next_hop(NodeId(0), NodeId(1)), Some(LinkId(2)));
        r.reroute(NodeId(1), &[LinkId(1), LinkId(3)], LinkId(3));
        assert_eq!(r.next_hop(NodeId(1), NodeId(0)), Some(LinkId(3)));
        assert_eq!(r.next_hop(NodeId(1), NodeId(2)), Some(LinkId(4)));
    }
}
