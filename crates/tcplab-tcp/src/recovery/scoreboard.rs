//! The SACK sender's scoreboard (Fall & Floyd 1996 §3 "scoreboard"; ns-2 `tcp/scoreboard.cc`;
//! RFC 6675 §3 "scoreboard"): which bytes above snd_una the receiver holds (SACKed), and which
//! holes this recovery episode has already retransmitted.
//!
//! Ranges are 64-bit offsets of the sender's sequence space, half-open `[a, b)`, kept sorted and
//! disjoint. Everything below snd_una is forgotten as the cumulative ACK advances.

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed ranges above snd_una.
    sacked: Vec<(u64, u64)>,
    /// Ranges retransmitted during the current recovery (ns-2 `MarkRetran`).
    retx: Vec<(u64, u64)>,
}

fn insert(v: &mut Vec<(u64, u64)>, a: u64, b: u64) -> bool {
    if b <= a {
        return false;
    }
    let i = v.partition_point(|r| r.1 < a);
    let mut j = i;
    let (mut na, mut nb) = (a, b);
    let mut grew = true;
    if let Some(&(x, y)) = v.get(i) {
        if x <= a && y >= b {
            grew = false;
        }
    }
    while j < v.len() && v[j].0 <= nb {
        na = na.min(v[j].0);
        nb = nb.max(v[j].1);
        j += 1;
    }
    v.splice(i..j, std::iter::once((na, nb)));
    grew
}

fn trim_below(v: &mut Vec<(u64, u64)>, una: u64) {
    v.retain(|r| r.1 > una);
    if let Some(f) = v.first_mut() {
        f.0 = f.0.max(una);
    }
}

fn covers(v: &[(u64, u64)], s: u64) -> Option<(u64, u64)> {
    let i = v.partition_point(|r| r.1 <= s);
    v.get(i).filter(|r| r.0 <= s).copied()
}

impl Scoreboard {
    /// Take an ACK's SACK blocks (already unwrapped) with the cumulative ACK `una`. Returns
    /// true if the blocks reported data not SACKed before (ns-2 `CheckUpdate`).
    pub fn update(&mut self, una: u64, blocks: &[(u64, u64)]) -> bool {
        trim_below(&mut self.sacked, una);
        trim_below(&mut self.retx, una);
        let mut new = false;
        for &(a, b) in blocks {
            let a = a.max(una);
            if b > a {
                new |= insert(&mut self.sacked, a, b);
            }
        }
        new
    }

    pub fn clear(&mut self) {
        self.sacked.clear();
        self.retx.clear();
    }

    /// Forget the retransmission marks (a new recovery episode).
    pub fn clear_retransmitted(&mut self) {
        self.retx.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }

    pub fn is_sacked(&self, s: u64) -> bool {
        covers(&self.sacked, s).is_some()
    }

    pub fn is_retransmitted(&self, s: u64) -> bool {
        covers(&self.retx, s).is_some()
    }

    pub fn mark_retransmitted(&mut self, a: u64, b: u64) {
        insert(&mut self.retx, a, b);
    }

    /// One past the highest SACKed byte (0 if none).
    pub fn high_sacked(&self) -> u64 {
        self.sacked.last().map_or(0, |r| r.1)
    }

    /// SACKed bytes above `s`.
    pub fn sacked_above(&self, s: u64) -> u64 {
        self.sacked.iter().map(|&(a, b)| if b <= s { 0 } else { b - a.max(s) }).sum()
    }

    /// Discontiguous SACKed ranges entirely above `s`.
    pub fn blocks_above(&self, s: u64) -> usize {
        self.sacked.iter().filter(|r| r.0 > s).count()
    }

    /// Holes (un-SACKed ranges) in `[from, high_sacked)`, in order.
    pub fn holes(&self, from: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let mut prev = from;
        self.sacked.iter().filter_map(move |&(a, b)| {
            let h = if a > prev { Some((prev, a)) } else { None };
            prev = prev.max(b);
            h
        })
    }

    /// ns-2 `GetNextRetran`: the first byte at or above `from`, below the highest SACKed byte,
    /// neither SACKed nor retransmitted in this episode; with the end of that gap.
    pub fn next_unretransmitted_hole(&self, from: u64) -> Option<(u64, u64)> {
        for (a, b) in self.holes(from) {
            let mut s = a;
            while s < b {
                match covers(&self.retx, s) {
                    Some((_, re)) => s = re,
                    None => {
                        // Up to the next retransmitted range or the hole's end.
                        let i = self.retx.partition_point(|r| r.1 <= s);
                        let end = self.retx.get(i).map_or(b, |r| r.0.min(b));
                        return Some((s, end));
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_trims_and_finds_holes() {
        let mut sb = Scoreboard::default();
        assert!(sb.update(1, &[(3001, 4001)]));
        assert!(!sb.update(1, &[(3001, 4001)]), "nothing new");
        assert!(sb.update(1, &[(5001, 6001), (3001, 4001)]));
        assert!(sb.update(1, &[(4001, 5001)]));
        assert_eq!(sb.sacked, vec![(3001, 6001)]);
        assert!(sb.update(1, &[(7001, 8001)]));
        let holes: Vec<_> = sb.holes(1).collect();
        assert_eq!(holes, vec![(1, 3001), (6001, 7001)]);
        assert_eq!(sb.sacked_above(1), 4000);
        assert_eq!(sb.high_sacked(), 8001);
        sb.mark_retransmitted(1, 1001);
        assert_eq!(sb.next_unretransmitted_hole(1), Some((1001, 3001)));
        sb.mark_retransmitted(1001, 3001);
        assert_eq!(sb.next_unretransmitted_hole(1), Some((6001, 7001)));
        sb.update(6001, &[]);
        assert_eq!(sb.sacked, vec![(7001, 8001)]);
        assert!(sb.retx.is_empty());
    }
}
