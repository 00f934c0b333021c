//! Static shortest-path routing: breadth-first search by hop count from every node, ties broken
//! by the lower link index so routes are deterministic.

use std::collections::VecDeque;

use super::node::NO_ROUTE;

/// `links[i] = (from, to)` for each directed link. Returns `next[src][dst]` = first link index
/// on a shortest path from `src` to `dst`, or `NO_ROUTE`.
pub fn next_hops(n_nodes: usize, links: &[(u32, u32)], forwards: &[bool]) -> Vec<Vec<u32>> {
    let mut out_links: Vec<Vec<u32>> = vec![Vec::new(); n_nodes];
    for (i, &(from, _)) in links.iter().enumerate() {
        out_links[from as usize].push(i as u32);
    }
    let mut table = vec![vec![NO_ROUTE; n_nodes]; n_nodes];
    let mut queue = VecDeque::new();
    for src in 0..n_nodes {
        let mut first = vec![NO_ROUTE; n_nodes];
        let mut seen = vec![false; n_nodes];
        seen[src] = true;
        queue.clear();
        queue.push_back(src);
        while let Some(u) = queue.pop_front() {
            // Hosts do not forward transit traffic; only the source host itself may send.
            if u != src && !forwards[u] {
                continue;
            }
            for &l in &out_links[u] {
                let v = links[l as usize].1 as usize;
                if !seen[v] {
                    seen[v] = true;
                    first[v] = if u == src { l } else { first[u] };
                    queue.push_back(v);
                }
            }
        }
        table[src] = first;
    }
    table
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
}
