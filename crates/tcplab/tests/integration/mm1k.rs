//! Queueing against theory: a Poisson source with exponentially distributed packet sizes into one
//! link with a DropTail buffer of K packets (the packet in service counted) is an M/M/1/K queue.
//! Over >= 10^6 packets per run and five seeds per load: the mean loss probability of the five
//! runs must match the closed form within the 99 % Student-t interval of five runs (t = 4.604
//! on 4 degrees of freedom, times the standard error from the runs' own spread), and every run's
//! loss must lie within four binomial standard errors (sqrt(p(1-p)/n) for n arrivals) times the
//! measured dispersion: drops of a finite buffer come in bursts (a full buffer drops the next
//! arrivals too), so at ρ ≥ 0.9 the runs spread up to ~2× more than a binomial count, and a band
//! of binomial errors alone would fail on honest seeds. The mean number in system within 3 %.

use crate::common;

fn mm1k(rho: f64, k: u32) -> (f64, f64) {
    // p_n = (1 - rho) rho^n / (1 - rho^(K+1)); loss = p_K; L = sum n p_n.
    let norm: f64 = (0..=k).map(|n| rho.powi(n as i32)).sum();
    let p = |n: u32| rho.powi(n as i32) / norm;
    let loss = p(k);
    let l: f64 = (0..=k).map(|n| n as f64 * p(n)).sum();
    (loss, l)
}

/// One run: (loss, binomial standard error of the loss, L, arrivals).
fn run(rho: f64, k: u32, packets: f64, seed: u64) -> (f64, f64, f64) {
    // Service: mean 1000-byte packets on an 8 Mb/s link -> mean service time 1 ms (mu = 1000/s).
    let lambda = rho * 1000.0;
    let duration = packets / lambda;
    let interval_us = 1e6 / lambda;
    let text = common::two_hosts(
        "8Mbps",
        "1ms",
        &format!("{{ limit = \"{k}pkts\", count_in_service = true }}"),
        "",
        &format!(
            r#"[[udp]]
name = "poisson"
from = "a"
to = "b"
pattern = "poisson"
packet_size = "1000B"
size_dist = "exponential"
interval = "{interval_us}us"
"#
        ),
        &format!("{duration}s"),
    );
    let r = common::run(&text, seed);
    let link = &r.summary.links.iter().find(|l| l.name == "a->b").unwrap();
    let arrived = link.packets_arrived as f64;
    assert!(arrived >= 0.99 * packets, "too few packets: {arrived}");
    (link.drops as f64 / arrived, arrived, link.system_avg_pkts)
}

fn check(rho: f64, k: u32, packets: f64, seeds: std::ops::Range<u64>) {
    let (loss_th, l_th) = mm1k(rho, k);
    let mut runs = Vec::new();
    for seed in seeds.clone() {
        let (loss, n, l) = run(rho, k, packets, seed);
        // The binomial standard error of a loss fraction over n arrivals.
        let se = (loss_th * (1.0 - loss_th) / n).sqrt();
        eprintln!("rho={rho} K={k} seed {seed}: loss {loss:.5} (theory {loss_th:.5}, {:+.2} binomial SE), L {l:.4} (theory {l_th:.4})", (loss - loss_th) / se);
        assert!((l - l_th).abs() / l_th < 0.03, "rho={rho} seed {seed}: mean number in system {l} vs theory {l_th}");
        runs.push((loss, se));
    }
    let m = runs.len() as f64;
    let mean = runs.iter().map(|x| x.0).sum::<f64>() / m;
    let sd = (runs.iter().map(|x| (x.0 - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
    let se_bin = runs.iter().map(|x| x.1).sum::<f64>() / m;
    // Dispersion: the runs' spread over the binomial error, at least 1.
    let dispersion = (sd / se_bin).max(1.0);
    const T_4_99: f64 = 4.604;
    let half = T_4_99 * sd / m.sqrt();
    eprintln!("rho={rho}: mean loss {mean:.5} ± {half:.5} (99 %), theory {loss_th:.5}; spread {:.2}× binomial", sd / se_bin);
    assert!((mean - loss_th).abs() <= half.max(4.0 * se_bin / m.sqrt()), "rho={rho}: mean loss {mean} vs theory {loss_th} (99 % half-width {half})");
    for (i, (loss, se)) in runs.iter().enumerate() {
        let z = (loss - loss_th) / (se * dispersion);
        assert!(z.abs() < 4.0, "rho={rho} run {i}: loss {loss} vs theory {loss_th}: {z:.2} dispersed standard errors");
    }
}

#[test]
fn mm1k_rho_0_5() {
    check(0.5, 10, 1.2e6, 1..6);
}

#[test]
fn mm1k_rho_0_9() {
    check(0.9, 10, 1.2e6, 11..16);
}

#[test]
fn mm1k_rho_1_2() {
    check(1.2, 10, 1.2e6, 21..26);
}
