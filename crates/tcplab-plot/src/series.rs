//! The data behind the graphs, as python/tcplab/plots/series.py computes it: time windows, the
//! step window (the value in force at the window's start kept), decimation to screen columns
//! above 12,800 points, interval bandwidth and throughput, queue statistics per interval.

pub const DECIMATE_COLUMNS: usize = 640;
pub const DECIMATE_MIN_POINTS: usize = 12_800;
pub const DECIMATE_ROWS: usize = 600;
pub const MARK_COLUMNS: usize = 480;

/// `_marks`' decimation: above [`DECIMATE_MIN_POINTS`] marks, the first (in order) of each of
/// [`MARK_COLUMNS`] columns over the finite marks' range (closer marks coincide when drawn).
/// Returns the marks and whether it decimated.
pub fn decimate_marks(xs: &[f64]) -> (Vec<f64>, bool) {
    if xs.len() <= DECIMATE_MIN_POINTS {
        return (xs.to_vec(), false);
    }
    let fin: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let (lo, hi) = fin.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    let mut seen = std::collections::HashSet::new();
    (fin.into_iter().filter(|&x| seen.insert(column(x, lo, hi, MARK_COLUMNS))).collect(), true)
}

/// `_window`: the time range drawn.
pub fn window(t_from: Option<f64>, t_to: Option<f64>, t_min: f64, t_max: f64) -> (f64, f64) {
    let t0 = t_from.unwrap_or(t_min.min(0.0));
    let mut t1 = t_to.unwrap_or(t_max);
    if !(t1 > t0) {
        t1 = t0 + 1.0;
    }
    (t0, t1)
}

pub fn inside(t: f64, t0: f64, t1: f64) -> bool {
    t >= t0 && t <= t1
}

/// `_step_window`: rows in [t0, t1] and the last row before t0.
pub fn step_window(t: &[f64], t0: f64, t1: f64) -> Vec<bool> {
    let mut m: Vec<bool> = t.iter().map(|&x| inside(x, t0, t1)).collect();
    if let Some(i) = t.iter().rposition(|&x| x < t0) {
        m[i] = true;
    }
    m
}

fn column(t: f64, t0: f64, t1: f64, columns: usize) -> i64 {
    let span = if (t1 - t0).is_finite() && t1 > t0 { t1 - t0 } else { 1.0 };
    (((t - t0) / span * columns as f64) as i64).clamp(-1, columns as i64)
}

/// `decimate_step`: above [`DECIMATE_MIN_POINTS`], per screen column the lowest and highest
/// point (in time order) and the very first and last points; drawn point to point then.
/// Returns the points and whether it decimated.
pub fn decimate_step(pts: &[(f64, f64)], t0: f64, t1: f64) -> (Vec<(f64, f64)>, bool) {
    let n = pts.len();
    if n <= DECIMATE_MIN_POINTS {
        return (pts.to_vec(), false);
    }
    let mut keep = vec![false; n];
    keep[0] = true;
    keep[n - 1] = true;
    let mut s = 0;
    while s < n {
        let c = column(pts[s].0, t0, t1, DECIMATE_COLUMNS);
        let mut e = s;
        while e + 1 < n && column(pts[e + 1].0, t0, t1, DECIMATE_COLUMNS) == c {
            e += 1;
        }
        let key = |i: usize| if pts[i].1.is_nan() { f64::NEG_INFINITY } else { pts[i].1 };
        let (mut lo, mut hi) = (s, s);
        for i in s..=e {
            if key(i) < key(lo) {
                lo = i;
            }
            if key(i) >= key(hi) {
                hi = i;
            }
        }
        keep[lo] = true;
        keep[hi] = true;
        s = e + 1;
    }
    (pts.iter().zip(&keep).filter(|(_, k)| **k).map(|(p, _)| *p).collect(), true)
}

/// `decimate_points`: markers reduced to one per (column, row) cell above [`DECIMATE_MIN_POINTS`].
pub fn decimate_points(pts: &[(f64, f64)], t0: f64, t1: f64) -> Vec<(f64, f64)> {
    if pts.len() <= DECIMATE_MIN_POINTS {
        return pts.to_vec();
    }
    let fin: Vec<f64> = pts.iter().map(|p| p.1).filter(|v| v.is_finite()).collect();
    let (lo, hi) = if fin.is_empty() { (0.0, 1.0) } else { (fin.iter().cloned().fold(f64::INFINITY, f64::min), fin.iter().cloned().fold(f64::NEG_INFINITY, f64::max)) };
    let span = if hi - lo != 0.0 { hi - lo } else { 1.0 };
    let mut seen = std::collections::HashSet::new();
    pts.iter()
        .filter(|p| {
            let c = column(p.0, t0, t1, DECIMATE_COLUMNS);
            let y = if p.1.is_nan() { lo } else { p.1 };
            let r = (((y - lo) / span * DECIMATE_ROWS as f64) as i64).clamp(0, DECIMATE_ROWS as i64);
            seen.insert((c, r))
        })
        .copied()
        .collect()
}

/// Number of intervals of `interval` covering [0, end).
pub fn bins(end: f64, interval: f64) -> usize {
    ((end / interval - 1e-9).ceil() as i64).max(1) as usize
}

/// Bin index of t among edges k*interval (searchsorted right - 1, clipped).
fn bin_of(t: f64, interval: f64, nb: usize) -> usize {
    let k = (t / interval).floor();
    // edges are k*interval exactly as numpy computes arange(nb+1)*interval
    let mut k = k.max(0.0) as usize;
    while k + 1 <= nb && (k + 1) as f64 * interval <= t {
        k += 1;
    }
    while k > 0 && k as f64 * interval > t {
        k -= 1;
    }
    k.min(nb - 1)
}

/// Sum of `v` per interval (np.add.at over the clipped bins), divided by `interval` and KB.
pub fn per_interval_rate(t: &[f64], v: &[f64], interval: f64, nb: usize) -> Vec<f64> {
    let mut out = vec![0.0; nb];
    for (x, b) in t.iter().zip(v) {
        out[bin_of(*x, interval, nb)] += b;
    }
    out.iter().map(|s| s / interval / crate::run::KB).collect()
}

/// Interval starts, then the series with its last value repeated one interval on (as the graphs
/// draw interval series with steps-post).
pub fn interval_steps(starts: &[f64], v: &[f64], interval: f64) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = starts.iter().copied().zip(v.iter().copied()).collect();
    if let (Some(t), Some(x)) = (starts.last(), v.last()) {
        pts.push((t + interval, *x));
    }
    pts
}

/// `_queue_interval_arrays`: min, max and time-weighted average of a step function (q[i] from
/// t[i] on, 0 before t[0]) over [k*interval, (k+1)*interval) for k < bins(end).
pub fn queue_intervals(t: &[f64], q: &[f64], interval: f64, end: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let nb = bins(end, interval);
    let edges: Vec<f64> = (0..=nb).map(|k| k as f64 * interval).collect();
    let value_at = |x: f64| -> f64 {
        // value in force at x: the last row with t <= x
        let i = t.partition_point(|&a| a <= x);
        if i == 0 { 0.0 } else { q[i - 1] }
    };
    let mut mn: Vec<f64> = edges[..nb].iter().map(|&e| value_at(e)).collect();
    let mut mx = mn.clone();
    let mut area = vec![0.0; nb];
    for (i, &x) in t.iter().enumerate() {
        if x < edges[nb] {
            let b = bin_of(x, interval, nb);
            mn[b] = mn[b].min(q[i]);
            mx[b] = mx[b].max(q[i]);
        }
    }
    // integrate: breakpoints are the rows' times and the edges, in order
    let mut bt: Vec<f64> = t.iter().copied().chain(edges.iter().copied()).collect();
    bt.sort_by(|a, b| a.total_cmp(b));
    for w in bt.windows(2) {
        if w[0] < edges[nb] {
            let b = bin_of(w[0], interval, nb);
            area[b] += value_at(w[0]) * (w[1] - w[0]);
        }
    }
    let avg = area.iter().map(|a| a / interval).collect();
    (edges[..nb].to_vec(), mn, mx, avg)
}
