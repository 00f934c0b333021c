//! Queueing against theory: a Poisson source with exponentially distributed packet sizes into one
//! link with a DropTail buffer of K packets (the packet in service counted) is an M/M/1/K queue.
//! Over >= 10^6 packets the measured loss probability and mean number in system must match the
//! closed form within 3%.

mod common;

fn mm1k(rho: f64, k: u32) -> (f64, f64) {
    // p_n = (1 - rho) rho^n / (1 - rho^(K+1)); loss = p_K; L = sum n p_n.
    let norm: f64 = (0..=k).map(|n| rho.powi(n as i32)).sum();
    let p = |n: u32| rho.powi(n as i32) / norm;
    let loss = p(k);
    let l: f64 = (0..=k).map(|n| n as f64 * p(n)).sum();
    (loss, l)
}

fn check(rho: f64, k: u32, packets: f64, seed: u64) {
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
    let loss = link.drops as f64 / arrived;
    let l = link.system_avg_pkts;
    let (loss_th, l_th) = mm1k(rho, k);
    let rel = |a: f64, b: f64| (a - b).abs() / b;
    eprintln!("rho={rho} K={k}: loss {loss:.5} (theory {loss_th:.5}), L {l:.4} (theory {l_th:.4})");
    assert!(rel(loss, loss_th) < 0.03, "rho={rho}: loss {loss} vs theory {loss_th}");
    assert!(rel(l, l_th) < 0.03, "rho={rho}: mean number in system {l} vs theory {l_th}");
}

#[test]
fn mm1k_rho_0_5() {
    check(0.5, 10, 1.2e6, 11);
}

#[test]
fn mm1k_rho_0_9() {
    check(0.9, 10, 1.2e6, 12);
}

#[test]
fn mm1k_rho_1_2() {
    check(1.2, 10, 1.2e6, 13);
}
