//! Issue 15 (findings 1, 3, 5, 9): every input the engine or endpoint cannot take is caught in validation with a named
//! field and line, before the run; each test reproduces one finding of the fuzzing campaign.

use tcplab::run::{prepare, run_text};
use tcplab::scenario::ScenarioError;

/// Two hosts over one router; `link` is spliced into the first link, `flows` appended.
fn scenario(run_extra: &str, node_b: &str, link: &str, flows: &str) -> String {
    format!(
        r#"name = "rel"
[run]
duration = "2s"
{run_extra}

[[nodes]]
name = "a"
kind = "host"

[[nodes]]
name = "{node_b}"
kind = "host"

[[links]]
a = "a"
b = "{node_b}"
rate = "10Mbps"
delay = "5ms"
{link}

{flows}
"#
    )
}

const TCP: &str = "[[tcp]]\nname = \"t\"\nfrom = \"a\"\nto = \"b\"\nvariant = \"newreno\"\nbytes = \"100KB\"\n";

fn check_err(text: &str) -> ScenarioError {
    match prepare(text, "rel.toml", None, &[]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn assert_located(e: &ScenarioError, field: &str, needle: &str) {
    assert_eq!(e.field, field, "{e}");
    assert!(e.line.is_some(), "no line: {e}");
    assert!(e.message.contains(needle), "message lacks {needle:?}: {e}");
}

/// Finding 1: `min_rto = "61s"` on newreno passed validation, then FineRto's clamp panicked
/// (min > max). Every limit the endpoint asserts is checked with a named field.
#[test]
fn fine_timer_limits_are_validated_not_asserted() {
    let t = format!("{TCP}min_rto = \"61s\"\n");
    let e = check_err(&scenario("", "b", "", &t));
    assert_located(&e, "tcp[0].min_rto", "60");
    let t = format!("{TCP}timer_granularity = \"61s\"\n");
    let e = check_err(&scenario("", "b", "", &t));
    assert_located(&e, "tcp[0].timer_granularity", "60");
    // The largest allowed value runs to completion.
    let t = format!("{TCP}min_rto = \"60s\"\n");
    run_text(&scenario("", "b", "", &t), "rel.toml", None, &[]).unwrap();
}

/// Finding 3: `monitor_interval = "1ns"` validated and then aborted on a 800 MB allocation;
/// `burst_interval = "1ns"` crawled at 3 % of real time.
#[test]
fn costs_that_explode_are_bounded_in_validation() {
    let e = check_err(&scenario("monitor_interval = \"1ns\"", "b", "", TCP));
    assert_located(&e, "run.monitor_interval", "intervals");
    let udp = "[[udp]]\nname = \"u\"\nfrom = \"a\"\nto = \"b\"\npattern = \"bursts\"\npacket_size = \"1KB\"\nburst_size = \"8KB\"\nburst_interval = \"1ns\"\n";
    let e = check_err(&scenario("", "b", "", udp));
    assert_located(&e, "udp[0].burst_interval", "1000");
    let udp = "[[udp]]\nname = \"u\"\nfrom = \"a\"\nto = \"b\"\npattern = \"poisson\"\npacket_size = \"1KB\"\ninterval = \"1ns\"\n";
    let e = check_err(&scenario("", "b", "", udp));
    assert_located(&e, "udp[0].interval", "1000");
    // Overload within reason (10x the link) is an experiment, not an error.
    let udp = "[[udp]]\nname = \"u\"\nfrom = \"a\"\nto = \"b\"\npattern = \"cbr\"\npacket_size = \"1KB\"\nrate = \"100Mbps\"\n";
    prepare(&scenario("", "b", "", udp), "rel.toml", None, &[]).unwrap();
}

/// Finding 5: messages without a line.
#[test]
fn every_syntax_error_names_a_line() {
    // One control byte on line 3.
    let text = "name = \"x\"\n[run]\nduration = \"1s\u{1}\"\n";
    let e = check_err(text);
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.message.contains("not a TOML text file") && e.message.contains("U+0001"), "{e}");
    // A syntax error keeps its line when --set is given.
    let text = scenario("", "b", "", TCP).replace("delay = \"5ms\"", "delay = \"5ms");
    let line = text.lines().position(|l| l.starts_with("delay = \"5ms")).unwrap() + 1;
    let Err(e) = prepare(&text, "rel.toml", None, &["run.seed=3".into()]) else { panic!("accepted") };
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.starts_with("invalid TOML"), "{e}");
    // CR-only line endings: a message with something after the colon.
    let text = scenario("", "b", "", TCP).replace('\n', "\r");
    let e = check_err(&text);
    assert!(e.line.is_some(), "{e}");
    let after = e.message.trim_start_matches("invalid TOML:").trim();
    assert!(after.len() > 10, "empty message: {e}");
    assert!(e.message.contains("carriage return"), "{e}");
}

/// Finding 9: values that were accepted silently.
#[test]
fn out_of_range_values_are_named_errors() {
    let e = check_err(&scenario("", "b", "overhead = \"5GB\"", TCP));
    assert_located(&e, "links[0].overhead", "at most");
    let e = check_err(&scenario("", "b", "mtu = \"5GB\"", TCP));
    assert_located(&e, "links[0].mtu", "at most");
    let big = "1".repeat(40);
    let e = check_err(&scenario("", "b", "", TCP).replace("rate = \"10Mbps\"", &format!("rate = \"{big}bps\"")));
    assert_located(&e, "links[0].rate", "at most");
    // MSS + headers above the path MTU: the flow could never deliver.
    let e = check_err(&scenario("", "b", "mtu = \"1000B\"", &format!("{TCP}mss = \"1460B\"\n")));
    assert_eq!(e.field, "tcp[0].mss", "{e}");
    assert!(e.message.contains("1460") && e.message.contains("1000") && e.message.contains("a->b"), "{e}");
    // Empty flow names and node names with the link-naming arrow.
    let e = check_err(&scenario("", "b", "", &TCP.replace("name = \"t\"", "name = \"\"")));
    assert_located(&e, "tcp[0].name", "empty");
    let udp = "[[udp]]\nname = \"\"\nfrom = \"a\"\nto = \"b\"\npattern = \"cbr\"\npacket_size = \"1KB\"\nrate = \"1Mbps\"\n";
    let e = check_err(&scenario("", "b", "", udp));
    assert_located(&e, "udp[0].name", "empty");
    let e = check_err(&scenario("", "b->c", "", &TCP.replace("to = \"b\"", "to = \"b->c\"")));
    assert_located(&e, "nodes[1].name", "->");
    // Huge sizes no longer saturate to u64::MAX.
    let e = check_err(&scenario("", "b", "", &TCP.replace("bytes = \"100KB\"", &format!("bytes = \"{big}GB\""))));
    assert_eq!(e.field, "tcp[0].bytes", "{e}");
}
