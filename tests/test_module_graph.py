"""Module-dependency check of the Rust crates (issue 23): no import cycle, no oversized file.

Graph nodes are file-level modules: `foo.rs` and `foo/mod.rs` are module `foo`, `bar/baz.rs` is
`bar::baz`, `lib.rs` is the crate root `crate`. There is an edge M → N for every `crate::…`,
`super::…` or `self::…` path in M's source (in `use` items and in expressions) that names N or an
item inside N, resolved to the longest existing module prefix; a `use` path whose first segment is
one of M's own child modules counts as `self::…`. Not edges: a bare `mod x;` declaration, a
`pub use` re-export in a mod.rs (or lib.rs) of its own children, and code under `#[cfg(test)]`
or in `tests` modules. A strongly connected component of more than one module is a cycle.

The same file asserts that no .rs or .py source outside test directories exceeds 800 lines.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CRATES = {
    "tcplab-tcp": ROOT / "crates" / "tcplab-tcp" / "src",
    "tcplab": ROOT / "crates" / "tcplab" / "src",
}
MAX_LINES = 800

PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")
USE_RE = re.compile(r"\b(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]+);", re.S)
CHILD_MOD_RE = re.compile(r"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", re.M)


def module_of(src: Path, f: Path) -> tuple[str, ...]:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def is_test_module(m: tuple[str, ...]) -> bool:
    return any(p == "tests" or p.startswith("tests_") for p in m)


def strip_comments_and_strings(text: str) -> str:
    """Blank out comments, string and char literals (keeping newlines and braces' positions)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or (c == "'" and text.startswith("'\\", i)):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_test_code(text: str) -> str:
    """Remove items under `#[cfg(test)]` and `mod tests { … }` blocks (text already comment-free)."""
    pat = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]|\bmod\s+tests\w*\s*\{")
    while True:
        m = pat.search(text)
        if not m:
            return text
        start = m.start()
        j = m.end() if m.group(0).startswith("mod") else m.end()
        if m.group(0).startswith("mod"):
            depth, k = 1, j
        else:
            # The attribute covers the next item: up to its `;` or its balanced `{ … }`.
            k = j
            while k < len(text) and text[k] not in "{;":
                k += 1
            if k < len(text) and text[k] == ";":
                text = text[:start] + re.sub(r"[^\n]", " ", text[start:k + 1]) + text[k + 1:]
                continue
            depth, k = 1, k + 1
        while k < len(text) and depth:
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
            k += 1
        text = text[:start] + re.sub(r"[^\n]", " ", text[start:k]) + text[k:]


def expand_use_tree(tree: str) -> list[list[str]]:
    """`a::{b, c::{d, e}}` → [[a, b], [a, c, d], [a, c, e]] (segments only; `as` renames dropped)."""
    tree = re.sub(r"\s+as\s+[A-Za-z_][A-Za-z0-9_]*", "", tree)
    tree = re.sub(r"\s+", "", tree)

    def split_top(s: str) -> list[str]:
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "{"
            depth -= ch == "}"
            cur += ch
        if cur:
            parts.append(cur)
        return parts

    def walk(s: str) -> list[list[str]]:
        s = s.lstrip(":")
        if s.startswith("{") and s.endswith("}"):
            return [p for part in split_top(s[1:-1]) for p in walk(part)]
        i = s.find("::{")
        if i >= 0:
            head = [seg for seg in s[:i].split("::") if seg]
            return [head + rest for rest in walk(s[i + 2:])]
        return [[seg for seg in s.split("::") if seg]]

    return walk(tree)


def resolve(cur: tuple[str, ...], segs: list[str], modules: set[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The longest existing module named by a `crate::`/`self::`/`super::` path, else None."""
    if segs[0] == "crate":
        base, i = (), 1
    elif segs[0] == "self":
        base, i = cur, 1
    elif segs[0] == "super":
        base, i = cur, 0
        while i < len(segs) and segs[i] == "super":
            base, i = base[:-1], i + 1
    else:
        return None
    best = base if base in modules else None
    path = base
    for s in segs[i:]:
        path = path + (s,)
        if path not in modules:
            break
        best = path
    return best


def module_graph(src: Path) -> tuple[dict[tuple[str, ...], set[tuple[str, ...]]], dict[tuple[str, ...], Path]]:
    files = {module_of(src, f): f for f in sorted(src.rglob("*.rs"))}
    files = {m: f for m, f in files.items() if not is_test_module(m)}
    modules = set(files)
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in modules}
    for m, f in files.items():
        text = strip_test_code(strip_comments_and_strings(f.read_text()))
        is_mod_file = f.name in ("mod.rs", "lib.rs", "main.rs")
        children = set(CHILD_MOD_RE.findall(text))
        used = []  # spans of `use` items, handled separately
        for u in USE_RE.finditer(text):
            used.append(u.span())
            public = u.group(1) is not None
            for segs in expand_use_tree(u.group(2)):
                if not segs:
                    continue
                if segs[0] in children:
                    if public and is_mod_file:
                        continue  # a mod.rs re-exporting its own child
                    segs = ["self"] + segs
                target = resolve(m, segs, modules)
                if target is not None and target != m:
                    graph[m].add(target)
        rest = list(text)
        for a, b in used:
            rest[a:b] = " " * (b - a)
        for p in PATH_RE.finditer("".join(rest)):
            segs = [p.group(1)] + [s.strip() for s in p.group(2).split("::") if s.strip()]
            target = resolve(m, segs, modules)
            if target is not None and target != m:
                graph[m].add(target)
    return graph, files


def strongly_connected(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out: list = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def name(m: tuple[str, ...]) -> str:
    return "::".join(("crate",) + m)


def cycles_of(crate: str) -> list[str]:
    graph, _ = module_graph(CRATES[crate])
    return [" <-> ".join(name(m) for m in comp) for comp in strongly_connected(graph) if len(comp) > 1]


def test_tcplab_tcp_has_no_module_cycle():
    cycles = cycles_of("tcplab-tcp")
    assert not cycles, "module cycles in tcplab-tcp:\n  " + "\n  ".join(cycles)


def test_tcplab_has_no_module_cycle():
    cycles = cycles_of("tcplab")
    assert not cycles, "module cycles in tcplab:\n  " + "\n  ".join(cycles)


def test_the_checker_sees_a_cycle_and_ignores_re_exports_and_tests(tmp_path):
    src = tmp_path / "src"
    (src / "cc").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod cc;\npub mod config;\npub use cc::Cc;\npub type Nanos = u64;\n")
    (src / "cc" / "mod.rs").write_text(
        "mod vegas;\npub use vegas::Vegas;\nuse crate::Nanos;\npub trait Cc {}\n"
        "#[cfg(test)]\nmod tests { use crate::config::X; }\n")
    (src / "cc" / "vegas.rs").write_text("use super::Cc;\n// crate::config::Y in a comment\npub struct Vegas;\n")
    (src / "config.rs").write_text("pub struct X { k: crate::cc::vegas::Vegas }\n")
    graph, _ = module_graph(src)
    assert graph[("cc",)] == {()}, graph  # crate::Nanos; the re-export and the test module are no edges
    assert graph[("cc", "vegas")] == {("cc",)}
    assert graph[("config",)] == {("cc", "vegas")}
    assert not [c for c in strongly_connected(graph) if len(c) > 1]
    # config ↔ cc::vegas through an expression path closes a loop.
    (src / "cc" / "vegas.rs").write_text("use super::Cc;\npub fn f() { let _ = crate::config::X::default; }\n")
    graph, _ = module_graph(src)
    comps = [c for c in strongly_connected(graph) if len(c) > 1]
    assert comps == [[("cc", "vegas"), ("config",)]], comps


def oversized_files(under: Path) -> list[str]:
    def in_test_dir(p: Path) -> bool:
        rel = p.relative_to(ROOT).parts
        return any(part in ("tests", "benches", "fuzz") for part in rel[:-1]) or p.stem == "tests" or p.stem.startswith("tests_")

    skip = {"target", ".venv", ".git", "runs", "node_modules"}
    offenders = []
    for p in sorted(under.rglob("*")):
        if p.suffix not in (".rs", ".py") or not p.is_file():
            continue
        if any(part in skip for part in p.relative_to(ROOT).parts) or in_test_dir(p):
            continue
        n = sum(1 for _ in p.open(errors="replace"))
        if n > MAX_LINES:
            offenders.append(f"{p.relative_to(ROOT)}: {n} lines")
    return offenders


def test_no_tcplab_tcp_source_file_over_800_lines():
    offenders = oversized_files(CRATES["tcplab-tcp"].parent)
    assert not offenders, f"source files over {MAX_LINES} lines:\n  " + "\n  ".join(offenders)


def test_no_source_file_over_800_lines():
    offenders = oversized_files(ROOT)
    assert not offenders, f"source files over {MAX_LINES} lines:\n  " + "\n  ".join(offenders)
