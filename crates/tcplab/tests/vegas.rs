//! Whole-simulator Vegas checks (issue 4).

mod common;

use tcplab::run::run_text;

fn brakmo_text() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/brakmo/single-transfer/scenario.toml")).unwrap()
}

#[test]
#[ignore]
fn debug_dump() {
    let path = std::env::var("VEGAS_DEBUG").unwrap_or_default();
    let text = if path.is_empty() { brakmo_text() } else { std::fs::read_to_string(&path).unwrap() };
    let r = run_text(&text, "x.toml", Some(1), &["tcp[0].variant=\"vegas\"".to_string()]).unwrap();
    let mut ep = r.sim.tcp.into_iter().next().unwrap().ep;
    let tr = ep[0].take_trace();
    let c = &tr.cam;
    for i in 0..c.len() {
        println!("CAM t={:.4} exp={:.0} act={:.0} diff={:.2} dec={}", c.t[i] as f64 / 1e9, c.expected_bps[i], c.actual_bps[i], c.diff_buffers[i], c.decision[i]);
    }
    for i in 0..tr.len() {
        let k = tr.kind_at(i);
        if matches!(k, tcplab_tcp::TraceKind::Ack | tcplab_tcp::TraceKind::Send) && i % 10 != 0 && !(tr.t[i] > 1_520_000_000 && tr.t[i] < 1_900_000_000) {
            continue;
        }
        println!("{:.4} {:?} una={} nxt={} cwnd={} ssth={} seq={}", tr.t[i] as f64 / 1e9, k, tr.snd_una[i], tr.snd_nxt[i], tr.cwnd[i], tr.ssthresh[i], tr.seq[i]);
    }
}
