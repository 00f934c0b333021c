//! Static shortest-path routing: breadth-first search by hop count, ties broken by the lower link
//! index so routes are deterministic. Hosts do not forward transit traffic.
//!
//! Only a node with more than one outgoing link needs a table (a host with one link sends
//! everything over it), and its table is one BFS from that node: O(nodes + links) per such node
//! instead of the N×N table of every node (issue 13). Explicit routes (`[[routes]]`, issue 14)
//! then replace single entries.

use std::collections::VecDeque;

use super::node::NO_ROUTE;

/// Outgoing link indices per node, in link order.
pub fn out_links(n_nodes: usize, links: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n_nodes];
    for (i, &(from, _)) in links.iter().enumerate() {
        out[from as usize].push(i as u32);
    }
    out
}

/// `first[dst]` = first link on a shortest path from `src` to `dst` (`NO_ROUTE` if unreachable
/// or `dst == src`). Paths run only through nodes with `forwards` set (and `src` itself).
pub fn first_hops(src: usize, links: &[(u32, u32)], out: &[Vec<u32>], forwards: &[bool]) -> Vec<u32> {
    let n_nodes = out.len();
    let mut first = vec![NO_ROUTE; n_nodes];
    let mut seen = vec![false; n_nodes];
    let mut queue = VecDeque::new();
    seen[src] = true;
    queue.push_back(src);
    while let Some(u) = queue.pop_front() {
        if u != src && !forwards[u] {
            continue;
        }
        for &l in &out[u] {
            let v = links[l as usize].1 as usize;
            if !seen[v] {
                seen[v] = true;
                first[v] = if u == src { l } else { first[u] };
                queue.push_back(v);
            }
        }
    }
    first
}

/// The nodes of a shortest path from `src` to `dst` when every node forwards (`None` if none):
/// used to explain a missing route ("the only path runs through host X").
pub fn path_if_all_forward(src: usize, dst: usize, links: &[(u32, u32)], out: &[Vec<u32>]) -> Option<Vec<usize>> {
    let mut parent = vec![usize::MAX; out.len()];
    parent[src] = src;
    let mut queue = VecDeque::from([src]);
    while let Some(u) = queue.pop_front() {
        if u == dst {
            let mut path = vec![dst];
            let mut at = dst;
            while at != src {
                at = parent[at];
                path.push(at);
            }
            path.reverse();
            return Some(path);
        }
        for &l in &out[u] {
            let v = links[l as usize].1 as usize;
            if parent[v] == usize::MAX {
                parent[v] = u;
                queue.push_back(v);
            }
        }
    }
    None
}

/// `links[i] = (from, to)` for each directed link. Returns `next[src][dst]` = first link index
/// on a shortest path from `src` to `dst`, or `NO_ROUTE` (every node's table; for tests and
/// small topologies).
pub fn next_hops(n_nodes: usize, links: &[(u32, u32)], forwards: &[bool]) -> Vec<Vec<u32>> {
    let out = out_links(n_nodes, links);
    (0..n_nodes).map(|src| first_hops(src, links, &out, forwards)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_diamond() {
        // 0 - 1 - 2 and 0 - 3 - 2 (diamond): lower link index wins ties.
        let links = [(0, 1), (1, 0), (1, 2), (2, 1), (0, 3), (3, 0), (3, 2), (2, 3)];
        let t = next_hops(4, &links, &[true; 4]);
        assert_eq!(t[0][2], 0);
        assert_eq!(t[2][0], 3);
        assert_eq!(t[0][0], NO_ROUTE);
        // If node 1 is a host it cannot carry transit traffic.
        let t = next_hops(4, &links, &[true, false, true, true]);
        assert_eq!(t[0][2], 4);
    }

    #[test]
    fn path_through_a_host_is_found_when_everything_forwards() {
        // 0 - 1 - 2 in a line; with 1 a host there is no route, but the path exists.
        let links = [(0, 1), (1, 0), (1, 2), (2, 1)];
        let t = next_hops(3, &links, &[true, false, true]);
        assert_eq!(t[0][2], NO_ROUTE);
        let out = out_links(3, &links);
        assert_eq!(path_if_all_forward(0, 2, &links, &out), Some(vec![0, 1, 2]));
        assert_eq!(path_if_all_forward(0, 2, &[(0, 1), (1, 0)], &out_links(3, &[(0, 1), (1, 0)])), None);
    }
}
