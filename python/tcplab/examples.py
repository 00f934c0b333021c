"""`tcplab examples`: the bundled scenarios, one line each, and copies of them to edit (issue 30).

``tcplab examples`` lists the examples (``scenarios/examples/*.toml``), the seed reproductions
(every folder with a ``reproduce.toml``) and the other scenario and sweep files, each with the
first line of its own description. ``tcplab examples copy NAME [DIR]`` writes a copy into DIR
(default: the current directory) to change and run:

- an example ``NAME`` (``dumbbell-64``) becomes ``DIR/dumbbell-64.toml`` (``tcplab run`` it);
- a reproduction or scenario folder (``brakmo/single-transfer``) becomes ``DIR/single-transfer/``
  with every file of the folder; a scenario the reproduce file takes from a sibling folder
  (``scenario = "../table5.4/scenario.toml"``) is copied in beside it and the reference
  rewritten, so ``tcplab reproduce DIR/single-transfer`` runs the copy alone;
- any other bundled file (``brakmo/sensitivity/buffers.toml``) is copied as it is.

Existing files are never overwritten (``--force`` to replace them).
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

from .resources import scenarios_dir

_SKIP = {"__pycache__"}


def _first_comment(text: str) -> str:
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            s = s.lstrip("#").strip()
            s = re.sub(r"^`tcplab reproduce [^`]*`\s*[:—-]*\s*", "", s)
            if s:
                return s
        elif s:
            break
    return ""


def describe(path: Path) -> str:
    """One line: the file's `description` or `title`, else its first comment line."""
    text = path.read_text()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        doc = {}
    line = doc.get("description") or doc.get("title") or _first_comment(text)
    line = " ".join(str(line).split())
    return line if len(line) <= 110 else line[:107].rstrip() + "..."


def catalogue(root: Path | None = None) -> dict[str, list[tuple[str, Path]]]:
    """{"examples": [(name, file)], "reproductions": [(name, reproduce.toml)], "other": [(name, file)]}."""
    root = root or scenarios_dir()
    examples = [(p.stem, p) for p in sorted((root / "examples").glob("*.toml"))]
    repro = [(p.parent.relative_to(root).as_posix(), p) for p in sorted(root.rglob("reproduce.toml"))]
    in_repro = {p.parent for _, p in repro}
    other = []
    for p in sorted(root.rglob("*.toml")):
        if p.parent == root / "examples" or p.parent in in_repro or p.name == "reproduce.toml":
            continue
        rel = p.relative_to(root)
        name = rel.parent.as_posix() if p.name == "scenario.toml" else rel.with_suffix("").as_posix()
        other.append((name, p))
    return {"examples": examples, "reproductions": repro, "other": other}


def list_text(root: Path | None = None) -> str:
    cat = catalogue(root)
    width = max(len(n) for group in cat.values() for n, _ in group) + 2
    heads = {"examples": "Examples (tcplab examples copy NAME [DIR], then tcplab run NAME.toml):",
             "reproductions": "Reproductions (tcplab reproduce NAME; tcplab examples copy NAME [DIR] to edit one):",
             "other": "Other scenarios and sweep files (tcplab examples copy NAME [DIR]):"}
    out = []
    for key, head in heads.items():
        out.append(head)
        out += [f"  {n:<{width}}{describe(p)}" for n, p in cat[key]]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def reproductions_text(root: Path | None = None) -> str:
    """`tcplab reproduce --list`: one line per bundled reproduction."""
    repro = catalogue(root)["reproductions"]
    width = max(len(n) for n, _ in repro) + 2
    return "".join(f"{n:<{width}}{describe(p)}\n" for n, p in repro)


def _resolve(name: str, root: Path) -> Path:
    name = name.strip().strip("/")
    for cand in (root / "examples" / f"{name}.toml", root / "examples" / name, root / name, root / f"{name}.toml"):
        if cand.exists() and root.resolve() in cand.resolve().parents:
            return cand
    raise FileNotFoundError(f"no bundled example or reproduction named {name!r} (`tcplab examples` lists them)")


def _write_all(plan: list[tuple[Path, Path, str | None]], force: bool) -> list[Path]:
    """Write every (source, destination, text or None) — none if any destination exists (unless force)."""
    if not force:
        for _, dst, _ in plan:
            if dst.exists():
                raise FileExistsError(f"{dst} exists (use --force to replace it)")
    for src, dst, text in plan:
        dst.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            shutil.copyfile(src, dst)
        else:
            dst.write_text(text)
    return [dst for _, dst, _ in plan]


def copy(name: str, dest: str | Path = ".", force: bool = False, root: Path | None = None) -> list[Path]:
    """Copy a bundled example, reproduction or scenario into `dest`; returns the files written."""
    root = root or scenarios_dir()
    src = _resolve(name, root)
    dest = Path(dest)
    if src.is_file():
        return _write_all([(src, dest / src.name, None)], force)
    target = dest / src.name
    files = sorted(p for p in src.rglob("*") if p.is_file() and not _SKIP & set(p.relative_to(src).parts))
    outside: dict[str, Path] = {}   # reference as written in reproduce.toml -> file outside the folder
    spec = src / "reproduce.toml"
    if spec.is_file():
        doc = tomllib.loads(spec.read_text())
        refs = [doc.get("scenario")] + [v.get("scenario") for v in doc.get("variants", [])]
        for ref in filter(None, refs):
            f = (src / ref).resolve()
            if src.resolve() not in f.parents and f.is_file():
                outside[ref] = f
    plan: list[tuple[Path, Path, str | None]] = []
    for p in files:
        text = None
        if p == spec and outside:
            text = p.read_text()
            for ref, f in outside.items():
                local = f.name if not (src / f.name).exists() else f"{f.parent.name}-{f.name}"
                text = text.replace(f'"{ref}"', f'"{local}"')
                plan.append((f, target / local, None))
        plan.append((p, target / p.relative_to(src), text))
    return _write_all(plan, force)
