"""Fail when the engine has an import cycle, counting imports inside functions too.

usage: python tools/import_cycles.py FOLDER PACKAGE   (e.g. ``core/chunkscope chunkscope``)

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


def main(argv: list[str]) -> int:
    folder, package = Path(argv[0]), argv[1]
    graph = edges(modules(folder, package))
    found = cycles(graph)
    for comp in found:
        print("import cycle: " + " <-> ".join(comp))
        for m in comp:
            print(f"  {m} -> {', '.join(sorted(graph[m] & set(comp)))}")
    if not found:
        print(f"no import cycles in {len(graph)} modules of {package}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["core/chunkscope", "chunkscope"]))
