//! tcplib's empirical distributions (Danzig & Jamin, *tcplib: a library of TCP internetwork
//! traffic characteristics*, USC CS-SYS-91-495, 1991), the source of x-Sim's TRAFFIC protocol
//! (seed 000 §2.2.3) and of Ahn et al.'s background senders (seed 002 §5).
//!
//! The tables are the plain-data extraction in `data/tcplib/` (its README.txt names the source
//! and the cross-check). Sampling follows tcplib.c exactly: `p = U{0..999}/1000`; if
//! `p < cdf[0]` return `value[0]`, else find `i` with `cdf[i-1] < p <= cdf[i]` and return a
//! uniform draw between `value[i-1]` and `value[i]`. The distribution this produces is therefore
//! a mixture of 1000 equally likely bins — `cdf_exact` and `mean` below describe *that*
//! distribution, not the continuous interpolation, so calibration and tests agree with what the
//! sampler really does.
//!
//! The application mix (`app_breakdown.txt`) is not a CDF: tcplib's brkdn_dist.c draws one gamma
//! variate per application from its (mean, variance) and normalises them once; `AppMix::draw`
//! does the same from the traffic stream, so the mix varies from seed to seed as tcplib's did.
//! The "phone" application is not a TCP conversation and is left out (its weight is ~1e-40).

use std::sync::OnceLock;

use rand::Rng;
use rand_distr::{Distribution, Gamma};

/// One tcplib table: nondecreasing `(value, cumulative probability)` rows.
#[derive(Clone, Debug)]
pub struct EmpiricalCdf {
    pub name: &'static str,
    pub values: Vec<f64>,
    pub cdf: Vec<f64>,
    /// Cumulative count (of the 1000 equally likely draws of `p`) of the atom at `values[0]` and
    /// of bins 1..=i: `below[i]` draws land at or below `values[i]`.
    below: Vec<u32>,
}

impl EmpiricalCdf {
    /// Parse the `data/tcplib/*.cdf` format: `#` comments, then `value cumulative_probability`.
    pub fn parse(name: &'static str, text: &str) -> Result<EmpiricalCdf, String> {
        let (mut values, mut cdf) = (Vec::new(), Vec::new());
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut it = line.split_whitespace();
            let (Some(v), Some(p), None) = (it.next(), it.next(), it.next()) else {
                return Err(format!("{name}:{}: expected `value cumulative_probability`", n + 1));
            };
            let v: f64 = v.parse().map_err(|_| format!("{name}:{}: bad value {v:?}", n + 1))?;
            let p: f64 = p.parse().map_err(|_| format!("{name}:{}: bad probability {p:?}", n + 1))?;
            if values.last().is_some_and(|&l: &f64| v < l) || cdf.last().is_some_and(|&l: &f64| p < l) || !(0.0..=1.0).contains(&p) {
                return Err(format!("{name}:{}: rows must be nondecreasing with probabilities in [0, 1]", n + 1));
            }
            values.push(v);
            cdf.push(p);
        }
        if values.is_empty() || (cdf[cdf.len() - 1] - 1.0).abs() > 1e-9 {
            return Err(format!("{name}: the table must end at cumulative probability 1"));
        }
        let mut t = EmpiricalCdf { name, values, cdf, below: Vec::new() };
        let mut counts = vec![0u32; t.values.len()];
        for k in 0..1000u32 {
            counts[t.bin(k as f64 / 1000.0).unwrap_or(0)] += 1;
        }
        t.below = counts
            .iter()
            .scan(0u32, |acc, &c| {
                *acc += c;
                Some(*acc)
            })
            .collect();
        Ok(t)
    }

    /// The bin a tcplib draw `p` (in 0..1000) falls into: `None` for the atom at `value[0]`.
    fn bin(&self, p: f64) -> Option<usize> {
        if p < self.cdf[0] {
            return None;
        }
        // First i with cdf[i] >= p; then cdf[i-1] < p <= cdf[i].
        let i = self.cdf.partition_point(|&c| c < p);
        Some(i.clamp(1, self.cdf.len() - 1))
    }

    /// One draw, as tcplib.c.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let p = rng.gen_range(0..1000u32) as f64 / 1000.0;
        match self.bin(p) {
            None => self.values[0],
            Some(i) => {
                let (lo, hi) = (self.values[i - 1], self.values[i]);
                if hi > lo {
                    rng.gen_range(lo..hi)
                } else {
                    lo
                }
            }
        }
    }

    /// Mean of the distribution the sampler produces (exact: 1000 equally likely bins).
    pub fn mean(&self) -> f64 {
        let mut s = 0.0;
        for k in 0..1000u32 {
            s += match self.bin(k as f64 / 1000.0) {
                None => self.values[0],
                Some(i) => 0.5 * (self.values[i - 1] + self.values[i]),
            };
        }
        s / 1000.0
    }

    /// P(X <= x) for the distribution the sampler produces: bins are adjacent and ordered, so
    /// every bin wholly at or below x counts fully and the one straddling x in proportion.
    pub fn cdf_exact(&self, x: f64) -> f64 {
        let v = &self.values;
        if x < v[0] {
            return 0.0;
        }
        // First index whose value exceeds x: bins 1..i-1 end at or below x.
        let i = v.partition_point(|&y| y <= x);
        if i >= v.len() {
            return 1.0;
        }
        let full = self.below[i - 1] as f64;
        let (lo, hi) = (v[i - 1], v[i]);
        let partial = (self.below[i] - self.below[i - 1]) as f64 * ((x - lo) / (hi - lo));
        (full + partial) / 1000.0
    }
}

/// The tcplib tables tcplab uses (units as in the files: ms for times, bytes for sizes).
#[derive(Debug)]
pub struct Tcplib {
    pub telnet_duration_ms: EmpiricalCdf,
    pub telnet_interarrival_ms: EmpiricalCdf,
    pub telnet_pktsize: EmpiricalCdf,
    pub ftp_nitems: EmpiricalCdf,
    pub ftp_itemsize: EmpiricalCdf,
    pub ftp_ctlsize: EmpiricalCdf,
    pub smtp_itemsize: EmpiricalCdf,
    pub nntp_nitems: EmpiricalCdf,
    pub nntp_itemsize: EmpiricalCdf,
    /// (mean, variance) of each application's share: ftp, telnet, nntp, smtp.
    pub breakdown: [(f64, f64); 4],
}

macro_rules! table {
    ($file:literal) => {
        EmpiricalCdf::parse($file, include_str!(concat!("../../data/tcplib/", $file))).expect("bundled tcplib table parses")
    };
}

fn parse_breakdown(text: &str) -> [(f64, f64); 4] {
    let mut out = [(0.0, 0.0); 4];
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let slot = match f[0] {
            "ftp" => 0,
            "telnet" => 1,
            "nntp" => 2,
            "smtp" => 3,
            _ => continue,
        };
        out[slot] = (f[1].parse().expect("bundled breakdown"), f[3].parse().expect("bundled breakdown"));
    }
    out
}

impl Tcplib {
    /// The bundled tables (parsed once per process).
    pub fn get() -> &'static Tcplib {
        static T: OnceLock<Tcplib> = OnceLock::new();
        T.get_or_init(|| Tcplib {
            telnet_duration_ms: table!("telnet_duration.cdf"),
            telnet_interarrival_ms: table!("telnet_interarrival.cdf"),
            telnet_pktsize: table!("telnet_pktsize.cdf"),
            ftp_nitems: table!("ftp_nitems.cdf"),
            ftp_itemsize: table!("ftp_itemsize.cdf"),
            ftp_ctlsize: table!("ftp_ctlsize.cdf"),
            smtp_itemsize: table!("smtp_itemsize.cdf"),
            nntp_nitems: table!("nntp_nitems.cdf"),
            nntp_itemsize: table!("nntp_itemsize.cdf"),
            breakdown: parse_breakdown(include_str!("../../data/tcplib/app_breakdown.txt")),
        })
    }

    pub fn tables(&self) -> [&EmpiricalCdf; 9] {
        [
            &self.telnet_duration_ms,
            &self.telnet_interarrival_ms,
            &self.telnet_pktsize,
            &self.ftp_nitems,
            &self.ftp_itemsize,
            &self.ftp_ctlsize,
            &self.smtp_itemsize,
            &self.nntp_nitems,
            &self.nntp_itemsize,
        ]
    }
}

/// Conversation types of tcplib (and the order of [`Tcplib::breakdown`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvKind {
    Ftp,
    Telnet,
    Nntp,
    Smtp,
}

impl ConvKind {
    pub const ALL: [ConvKind; 4] = [ConvKind::Ftp, ConvKind::Telnet, ConvKind::Nntp, ConvKind::Smtp];
    pub fn name(self) -> &'static str {
        match self {
            ConvKind::Ftp => "ftp",
            ConvKind::Telnet => "telnet",
            ConvKind::Nntp => "nntp",
            ConvKind::Smtp => "smtp",
        }
    }
    pub fn parse(s: &str) -> Option<ConvKind> {
        ConvKind::ALL.into_iter().find(|k| k.name() == s)
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Probabilities of each conversation type, in [`ConvKind::ALL`] order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppMix(pub [f64; 4]);

impl AppMix {
    /// tcplib's brkdn_dist: one gamma variate per application (shape mean²/var, scale var/mean),
    /// normalised.
    pub fn draw<R: Rng + ?Sized>(rng: &mut R) -> AppMix {
        let t = Tcplib::get();
        let mut w = [0.0; 4];
        for (slot, &(mean, var)) in t.breakdown.iter().enumerate() {
            w[slot] = match Gamma::new(mean * mean / var, var / mean) {
                Ok(g) => g.sample(rng),
                Err(_) => mean,
            };
        }
        AppMix::normalised(w)
    }

    /// The mix of the breakdown's means (what `draw` gives on average, before normalising).
    pub fn means() -> AppMix {
        let t = Tcplib::get();
        AppMix::normalised(t.breakdown.map(|(m, _)| m))
    }

    pub fn normalised(w: [f64; 4]) -> AppMix {
        let s: f64 = w.iter().sum();
        AppMix(w.map(|x| x / s))
    }

    pub fn pick<R: Rng + ?Sized>(&self, rng: &mut R) -> ConvKind {
        let u: f64 = rng.gen();
        let mut acc = 0.0;
        for k in ConvKind::ALL {
            acc += self.0[k.index()];
            if u < acc {
                return k;
            }
        }
        ConvKind::Smtp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    /// Kolmogorov–Smirnov: 10⁵ draws of every table against the distribution the tcplib rule
    /// defines. The 1 % critical value of the one-sample KS statistic is 1.628/√n = 0.00515;
    /// tables with atoms (integer counts, the p < cdf[0] atom) make the statistic conservative.
    #[test]
    fn samplers_reproduce_every_table_ks() {
        let n = 100_000usize;
        let crit = 1.628 / (n as f64).sqrt();
        for (ti, table) in Tcplib::get().tables().into_iter().enumerate() {
            let mut rng = RngStreams::new(42).stream("ks", ti as u64);
            let mut xs: Vec<f64> = (0..n).map(|_| table.sample(&mut rng)).collect();
            xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
            // Evaluate the reference CDF at distinct sample points (cached: cdf_exact is O(1000)).
            let mut d: f64 = 0.0;
            let mut i = 0;
            while i < n {
                let x = xs[i];
                let mut j = i;
                while j < n && xs[j] == x {
                    j += 1;
                }
                let f = table.cdf_exact(x);
                // Empirical CDF just below x is i/n, at x is j/n.
                // The reference just below x (atoms matter).
                let f_below = table.cdf_exact(x - x.abs().max(1.0) * 1e-12);
                d = d.max((j as f64 / n as f64 - f).abs()).max((i as f64 / n as f64 - f_below).abs());
                i = j;
            }
            assert!(d < crit, "{}: KS statistic {d:.5} exceeds the 1% critical value {crit:.5}", table.name);
            // The sample mean agrees with the exact mean of the sampling rule (loose: heavy tails).
            let m = xs.iter().sum::<f64>() / n as f64;
            let exact = table.mean();
            assert!((m - exact).abs() / exact < 0.1, "{}: sample mean {m} vs exact {exact}", table.name);
        }
    }

    #[test]
    fn sampling_rule_edges() {
        // p < cdf[0] returns value[0]; a bin returns a value inside it.
        let t = EmpiricalCdf::parse("t", "# c\n1 0.5\n3 1\n").unwrap();
        let mut rng = RngStreams::new(1).stream("x", 0);
        let mut at_one = 0;
        for _ in 0..10_000 {
            let x = t.sample(&mut rng);
            assert!((1.0..3.0).contains(&x));
            at_one += (x == 1.0) as u32;
        }
        // p in {0.000..0.499} → atom: 500 of 1000 draws values.
        assert!((4700..5300).contains(&at_one), "{at_one}");
        assert!((t.mean() - 1.5).abs() < 1e-12);
        assert!((t.cdf_exact(2.0) - 0.75).abs() < 1e-12);
        assert!(EmpiricalCdf::parse("bad", "2 0.5\n1 1\n").is_err());
        assert!(EmpiricalCdf::parse("short", "1 0.5\n").is_err());
    }

    #[test]
    fn app_mix_is_the_gamma_breakdown() {
        let m = AppMix::means();
        // smtp 0.3798 / (0.0216 + 0.0612 + 0.0056 + 0.3798)
        assert!((m.0[ConvKind::Smtp.index()] - 0.3798 / 0.4682).abs() < 1e-9);
        let mut rng = RngStreams::new(3).stream("mix", 0);
        let mut avg = [0.0; 4];
        for _ in 0..2000 {
            let d = AppMix::draw(&mut rng);
            assert!((d.0.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            for k in 0..4 {
                avg[k] += d.0[k] / 2000.0;
            }
        }
        // SMTP dominates every draw on average, as the breakdown's means say.
        assert!(avg[ConvKind::Smtp.index()] > 0.6, "{avg:?}");
    }
}
