//! Explicit routes beside shortest-path routing (issue 14), their validation, and the error when
//! the only path runs through a host.

use tcplab::run::{prepare, run_text};

/// h1 - r1 - r2 - h2 with a detour r1 - r3 - r2; a UDP flow h1 -> h2; `extra` is appended.
fn diamond(extra: &str) -> String {
    format!(
        r#"[run]
duration = "2s"

[[nodes]]
name = "h1"
kind = "host"
[[nodes]]
name = "r1"
kind = "router"
[[nodes]]
name = "r2"
kind = "router"
[[nodes]]
name = "r3"
kind = "router"
[[nodes]]
name = "h2"
kind = "host"

[[links]]
a = "h1"
b = "r1"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r1"
b = "r2"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r1"
b = "r3"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r3"
b = "r2"
rate = "10Mbps"
delay = "1ms"
[[links]]
a = "r2"
b = "h2"
rate = "10Mbps"
delay = "1ms"

[[udp]]
name = "u"
from = "h1"
to = "h2"
pattern = "cbr"
rate = "1Mbps"
packet_size = "1000B"
{extra}"#
    )
}

fn forwarded(r: &tcplab::run::RunResult, name: &str) -> u64 {
    let l = r.sim.link_id(name).unwrap_or_else(|| panic!("no link {name}"));
    r.sim.links[l as usize].monitor.forwarded_pkts
}

fn error(text: &str) -> tcplab::scenario::ScenarioError {
    match prepare(text, "routes.toml", None, &[]) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn shortest_path_by_default_and_the_explicit_route_when_given() {
    let r = run_text(&diamond(""), "routes.toml", Some(1), &[]).unwrap();
    assert!(forwarded(&r, "r1->r2") > 200, "shortest path r1 -> r2 carries the flow");
    assert_eq!(forwarded(&r, "r1->r3"), 0);

    let text = diamond("\n[[routes]]\nat = \"r1\"\nto = \"h2\"\nvia = \"r3\"\n");
    let r = run_text(&text, "routes.toml", Some(1), &[]).unwrap();
    let sent = r.sim.udp[0].sent_pkts;
    assert!(sent > 200);
    assert_eq!(forwarded(&r, "r1->r2"), 0, "the explicit route replaces the shortest path");
    assert_eq!(forwarded(&r, "r1->r3"), sent);
    assert_eq!(forwarded(&r, "r3->r2"), sent, "r3 forwards by its own shortest path");
    assert_eq!(forwarded(&r, "r2->h2"), sent);
}

#[test]
fn inline_routes_array_is_accepted() {
    let text = diamond("").replacen("[run]", "routes = [{ at = \"r1\", to = \"h2\", via = \"r3\" }]\n\n[run]", 1);
    let r = run_text(&text, "routes.toml", Some(1), &[]).unwrap();
    assert_eq!(forwarded(&r, "r1->r2"), 0);
    assert!(forwarded(&r, "r1->r3") > 200);
}

#[test]
fn bad_routes_name_file_line_and_field() {
    let cases = [
        ("at = \"r9\"\nto = \"h2\"\nvia = \"r3\"", "routes[0].at", "r9"),
        ("at = \"r1\"\nto = \"h2\"\nvia = \"h2\"", "routes[0].via", "no link from \"r1\" to \"h2\""),
        ("at = \"r1\"\nto = \"r1\"\nvia = \"r3\"", "routes[0].to", "another destination"),
        ("at = \"r2\"\nto = \"r3\"\nvia = \"h2\"", "routes[0].via", "hosts do not forward"),
    ];
    for (body, field, needle) in cases {
        let text = diamond(&format!("\n[[routes]]\n{body}\n"));
        let e = error(&text);
        assert_eq!(e.field, field, "{e}");
        assert_eq!(e.file, "routes.toml");
        let key = field.rsplit('.').next().unwrap();
        let want = text.lines().enumerate().skip(line_of(&text, "[[routes]]")).find(|(_, l)| l.starts_with(key)).unwrap().0 + 1;
        assert_eq!(e.line, Some(want), "{e}");
        assert!(e.message.contains(needle), "{e}");
    }
    // An unknown key in a route is refused by the parser.
    let e = error(&diamond("\n[[routes]]\nat = \"r1\"\nto = \"h2\"\nvia = \"r3\"\nmetric = 3\n"));
    assert!(e.to_string().contains("metric"), "{e}");
}

#[test]
fn a_loop_of_explicit_routes_is_refused() {
    let text = diamond("\n[[routes]]\nat = \"r1\"\nto = \"h2\"\nvia = \"r3\"\n[[routes]]\nat = \"r3\"\nto = \"h2\"\nvia = \"r1\"\n");
    let e = error(&text);
    assert_eq!(e.field, "udp[0].to", "{e}");
    assert!(e.message.contains("loop") && e.message.contains("r1 -> r3 -> r1"), "{e}");
}

#[test]
fn the_only_path_through_a_host_is_explained() {
    // r3 made a host: with the direct r1 - r2 link gone, the only path runs through it.
    let text = diamond("")
        .replace("name = \"r3\"\nkind = \"router\"", "name = \"r3\"\nkind = \"host\"")
        .replace("a = \"r1\"\nb = \"r2\"", "a = \"r1\"\nb = \"h1\"");
    let text = text.replacen("a = \"r1\"\nb = \"h1\"", "a = \"h1\"\nb = \"r3\"", 1);
    let e = error(&text);
    assert_eq!(e.field, "udp[0].to", "{e}");
    assert!(e.message.contains("the only path runs through host \"r3\""), "{e}");
    assert!(e.message.contains("hosts do not forward; make \"r3\" a router"), "{e}");
    assert_eq!(e.line, Some(line_of(&text, "to = \"h2\"")));

    // Not connected at all: the old message.
    let text = diamond("").replace("a = \"r2\"\nb = \"h2\"", "a = \"h1\"\nb = \"r2\"");
    let e = error(&text);
    assert!(e.message.contains("the destination is not connected"), "{e}");
}
