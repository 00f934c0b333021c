//! The queue-discipline registry (issue 23): one table, [`DISCIPLINES`], of named disciplines,
//! as the TCP variant registry (`tcplab-tcp` `config::variants`) is for senders. Each row comes
//! from its discipline's own file: the name a scenario gives (`queue = { kind = ... }`), a one-line
//! description for `tcplab variants`, the parameter names it accepts, and the builder that checks
//! them and makes the queue. The scenario layer (`build::queues`) hands every parameter the
//! scenario set to the row; one that the row does not list is refused at its own field.
//!
//! Adding a discipline: its file in `net/` with a `pub const ENTRY: Discipline`, one line in
//! [`DISCIPLINES`]; if it needs a parameter name no discipline has yet, one field in the scenario's
//! `QueueCfg` and one line in `build::queues::set_params`.

pub use super::discipline::{Discipline, ParamError, ParamValue, Params, QueueSetup};
use super::queue::QueueDisc;

/// The registry, in the order `tcplab variants` and the scenario schema list it.
pub const DISCIPLINES: &[Discipline] = &[
    super::droptail::ENTRY,
    super::red::ENTRY_RED,
    super::red::ENTRY_ARED,
    super::vq::ENTRY,
    super::codel::ENTRY,
    super::fq_codel::ENTRY,
    super::step::ENTRY,
    super::pie::ENTRY,
    super::dualpi2::ENTRY,
];

const N: usize = DISCIPLINES.len();
const NAMES: [&str; N] = {
    let mut names = [""; N];
    let mut i = 0;
    while i < N {
        names[i] = DISCIPLINES[i].name;
        i += 1;
    }
    names
};
/// The names `queue.kind` accepts.
pub const KNOWN_DISCIPLINES: &[&str] = &NAMES;

impl Discipline {
    pub fn lookup(name: &str) -> Result<&'static Discipline, String> {
        DISCIPLINES
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| format!("unknown queue discipline {name:?}; known: {}", KNOWN_DISCIPLINES.join(", ")))
    }

    /// Check that every set parameter is one of this row's, then build.
    pub fn make(&self, setup: QueueSetup, params: &Params) -> Result<Box<dyn QueueDisc>, ParamError> {
        if let Some((k, _)) = params.set.iter().find(|(k, _)| !self.params.contains(k)) {
            let owners: Vec<&Discipline> = DISCIPLINES.iter().filter(|d| d.params.contains(k)).collect();
            let takes = if self.params.is_empty() { "only limit".to_string() } else { format!("limit, {}", self.params.join(", ")) };
            let msg = match owners.first() {
                Some(o) => {
                    let kinds: Vec<String> = owners.iter().map(|d| format!("{:?}", d.name)).collect();
                    format!("{k} is a {} parameter (kind = {}); {} takes {takes}", o.family, kinds.join(" or "), self.name)
                }
                None => format!("{k} is not a parameter of {}; it takes {takes}", self.name),
            };
            return Err((k, msg));
        }
        (self.build)(setup, params)
    }
}

/// One line per discipline: name, description, parameters (what `tcplab variants` prints).
pub fn describe() -> Vec<[String; 3]> {
    DISCIPLINES.iter().map(|d| [d.name.to_string(), d.description.to_string(), d.params.join(", ")]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;
    use crate::net::queue::QueueLimit;

    fn setup() -> QueueSetup {
        QueueSetup { limit: QueueLimit::Packets(10), link_rate_bps: 1_000_000, rng: RngStreams::new(1).stream("t", 0) }
    }

    #[test]
    fn names_are_unique_and_rows_build_with_defaults() {
        for (i, d) in DISCIPLINES.iter().enumerate() {
            assert!(DISCIPLINES[..i].iter().all(|e| e.name != d.name), "{} twice", d.name);
            let q = d.make(setup(), &Params { set: &[] }).unwrap_or_else(|e| panic!("{}: {e:?}", d.name));
            assert_eq!(q.name(), d.name);
        }
        assert!(Discipline::lookup("nope").unwrap_err().contains("droptail"));
    }

    #[test]
    fn a_foreign_parameter_is_refused_by_name() {
        let d = Discipline::lookup("vq").unwrap();
        let e = d.make(setup(), &Params { set: &[("min_th", ParamValue::Num(5.0))] }).err().unwrap();
        assert_eq!(e.0, "min_th");
        assert!(e.1.contains("RED parameter") && e.1.contains("vq takes limit, theta"), "{}", e.1);
    }
}
