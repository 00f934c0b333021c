//! `cargo run --release --example run -- SCENARIO [SEED]`: run a scenario from Rust, print the
//! summary JSON (for profiling the core without Python).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: run SCENARIO [SEED]");
    let text = std::fs::read_to_string(path).expect("read scenario");
    let seed = args.get(2).map(|s| s.parse().expect("seed"));
    match tcplab::run::run_text(&text, path, seed, &[]) {
        Ok(r) => println!("{}", r.summary.to_json()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    }
}
