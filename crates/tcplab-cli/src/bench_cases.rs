//! The benchmark cases of `tcplab bench`: defined once, in the core (`tcplab::bench_cases`,
//! which Python's `tcplab.bench` also reads through `tcplab._core`); here only a case's text is
//! found, a bundled scenario file read from the package's `scenarios` folder.

pub use tcplab::bench_cases::{is_case, DEFAULT_CASES};
use tcplab::bench_cases::Case;

/// Case `name`'s scenario: (its TOML text, the file name errors name); None for an unknown case.
pub fn case(name: &str) -> Option<Result<(String, String), String>> {
    Some(match tcplab::bench_cases::case(name)? {
        Case::Text(text) => Ok((text, format!("<bench {name}>"))),
        Case::Bundled(rel) => match crate::launch::package_dir() {
            None => Err("cannot find the installed tcplab package (its bundled scenarios folder)".into()),
            Some(pkg) => {
                let path = pkg.join("scenarios").join(rel);
                std::fs::read_to_string(&path).map(|t| (t, path.display().to_string())).map_err(|e| format!("{}: {e}", path.display()))
            }
        },
    })
}
