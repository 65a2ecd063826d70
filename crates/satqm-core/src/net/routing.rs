use std::collections::VecDeque;

use crate::ids::{LinkId, NodeId};

/// Static shortest-path (fewest hops) routes: the first link from each node
/// towards each destination.
#[derive(Debug, Clone)]
pub struct Routes {
    n: usize,
    next: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Routes {
    /// Build from the links' endpoints. Ties between equal-length paths go
    /// to the link created first.
    pub fn build(n_nodes: usize, links: &[(NodeId, NodeId)]) -> Routes {
        let mut incoming: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n_nodes];
        for (i, (from, to)) in links.iter().enumerate() {
            incoming[to.idx()].push((from.idx(), i as u32));
        }
        let mut next = vec![NONE; n_nodes * n_nodes];
        let mut dist = vec![u32::MAX; n_nodes];
        let mut frontier = VecDeque::new();
        for dst in 0..n_nodes {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            frontier.clear();
            frontier.push_back(dst);
            while let Some(v) = frontier.pop_front() {
                for &(u, link) in &incoming[v] {
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        next[u * n_nodes + dst] = link;
                        frontier.push_back(u);
                    }
                }
            }
        }
        Routes { n: n_nodes, next }
    }

    /// The link `at` forwards packets for `dst` on, if `dst` is reachable.
    #[inline]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let l = self.next[at.idx() * self.n + dst.idx()];
        (l != NONE).then_some(LinkId(l))
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
}
