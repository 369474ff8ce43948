"""Fail when the engine has an import cycle or an upward import, counting imports inside functions too.

usage: python tools/import_cycles.py FOLDER PACKAGE   (e.g. ``core/chunkscope chunkscope``)

Three rules:
* no cycle between modules;
* no cycle between the package's parts (its sub-packages and top-level modules: ``text``, ``ingest``,
  ``analysis``...): a part that imports another part which imports it back is an upward import, whichever
  module of each does it (``text.blocks`` importing ``ingest.markup`` while ``ingest`` imports ``text``);
* the edge parts (``EDGES``: deployment policy, the command line, presentation, integrations) are imported
  by no part below them, so the engine never reads the server's policy or draws a figure.

Every ``import X`` / ``from X import Y`` anywhere in a module (top level, functions, TYPE_CHECKING
blocks excepted) is an edge; ``from pkg import name`` points at ``pkg.name`` when that is a module,
else at ``pkg`` (a package ``__init__``). Prints each cycle found and exits 1, or "no import cycles".
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def modules(folder: Path, package: str) -> dict[str, Path]:
    out = {}
    for p in folder.rglob("*.py"):
        rel = p.relative_to(folder).with_suffix("")
        parts = [package, *rel.parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                skip.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return skip


def edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(tree):
            if getattr(node, "lineno", 0) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".") if is_pkg else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for a in node.names:
                    full = f"{base}.{a.name}"
                    targets.append(full if full in mods else base)
            for t in targets:
                while t and t not in mods and "." in t:  # import a.b.c -> nearest known module
                    t = t.rsplit(".", 1)[0]
                if t in mods and t != name:
                    graph[name].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# part -> the parts allowed to import it (everything else is the engine, below the edges)
EDGES = {
    "sharing": {"cli"},  # the shared server's policy: applied at the edges, passed into the engine as values
    "cli": set(),
    "present": {"cli"},  # plotly figures and HTML: the app (ui/, pages/) and the CLI's --html
    "integrations": set(),
}


def part_of(module: str) -> str:
    """The part a module belongs to: the first name below the package (``chunkscope.ingest.pdf`` -> ``ingest``)."""
    names = module.split(".")
    return names[1] if len(names) > 1 else ""


def part_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """(part, imported part) -> the module imports behind that arrow."""
    out: dict[tuple[str, str], list[str]] = {}
    for src, targets in graph.items():
        for dst in sorted(targets):
            a, b = part_of(src), part_of(dst)
            if a and b and a != b:
                out.setdefault((a, b), []).append(f"{src} -> {dst}")
    return out


def problems(graph: dict[str, set[str]]) -> list[str]:
    """Every broken rule, one line each (with the imports behind it)."""
    out = []
    for comp in cycles(graph):
        out.append("import cycle: " + " <-> ".join(comp))
        out += [f"  {m} -> {', '.join(sorted(graph[m] & set(comp)))}" for m in comp]
    arrows = part_edges(graph)
    parts = {p for pair in arrows for p in pair}
    part_graph: dict[str, set[str]] = {p: set() for p in parts}
    for a, b in arrows:
        part_graph[a].add(b)
    for comp in cycles(part_graph):
        out.append("upward import between parts: " + " <-> ".join(comp))
        out += [f"  {line}" for (a, b), lines in sorted(arrows.items()) if a in comp and b in comp for line in lines]
    for (a, b), lines in sorted(arrows.items()):
        if b in EDGES and a not in EDGES[b]:
            out.append(f"{a} imports the edge part {b} (allowed only from {sorted(EDGES[b]) or 'outside the engine'}):")
            out += [f"  {line}" for line in lines]
    return out


def main(argv: list[str]) -> int:
    """Print the broken rules and return 1, or say there are none and return 0."""
    folder, package = Path(argv[0]), argv[1]
    graph = edges(modules(folder, package))
    found = problems(graph)
    for line in found:
        print(line)
    if not found:
        print(f"no import cycles and no upward imports in {len(graph)} modules of {package}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["core/chunkscope", "chunkscope"]))
