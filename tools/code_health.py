"""The code-health numbers of issue 38, measured the same way every time, and a check for ``make lint``.

usage: python tools/code_health.py [--check] [PATH ...]   (default: core ui pages app.py)

Prints, for the Python files under PATH:
* functions graded E or F by radon's cyclomatic complexity (more than 30 paths);
* functions longer than 60 lines (decorators and docstring included);
* broad ``except Exception`` / ``except BaseException`` / bare ``except`` clauses, and how many of them carry
  a comment saying why they must catch everything;
* the share of the engine's public functions, methods and classes (``core/``, names without a leading
  underscore) that have a docstring.

With ``--check`` it exits 1 when a function is graded E or F, when a function over 60 lines does not say
why in its docstring (a line starting "Long because"), or when a broad clause has no comment on its line.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

from radon.complexity import cc_rank, cc_visit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ("core", "ui", "pages", "app.py")
MAX_LINES = 60
LONG_REASON = "Long because"
BROAD = {"Exception", "BaseException"}


@dataclass
class Health:
    """What :func:`measure` found."""

    graded_ef: list[str] = field(default_factory=list)
    long: list[tuple[int, str, bool]] = field(default_factory=list)  # (lines, where, says why)
    broad: list[tuple[str, bool]] = field(default_factory=list)  # (where, commented)
    public: int = 0
    documented: int = 0


def python_files(paths: list[str]) -> list[Path]:
    """The ``.py`` files under ``paths`` (files or folders, relative to the repository root)."""
    out: list[Path] = []
    for p in paths:
        path = ROOT / p
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _is_broad(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(ast.unparse(k) in BROAD for k in kinds)


def _visit(path: Path, health: Health) -> None:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    rel = path.relative_to(ROOT)
    engine = rel.parts[0] == "core"
    for block in cc_visit(source):
        if cc_rank(block.complexity) in "EF":
            health.graded_ef.append(f"{rel}:{block.lineno} {block.name} ({cc_rank(block.complexity)} {block.complexity})")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            size = (node.end_lineno or node.lineno) - first + 1
            if size > MAX_LINES:
                says_why = LONG_REASON in (ast.get_docstring(node) or "")
                health.long.append((size, f"{rel}:{node.lineno} {node.name}", says_why))
        if isinstance(node, ast.ExceptHandler) and _is_broad(node):
            health.broad.append((f"{rel}:{node.lineno}", "#" in lines[node.lineno - 1]))
        if engine and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not node.name.startswith("_"):
                health.public += 1
                health.documented += ast.get_docstring(node) is not None


def measure(paths: list[str]) -> Health:
    """Measure every file under ``paths``."""
    health = Health()
    for path in python_files(paths):
        _visit(path, health)
    return health


def report(health: Health) -> list[str]:
    """The numbers, one per line, with the places behind them."""
    out = [f"functions graded E or F: {len(health.graded_ef)}", *(f"  {x}" for x in health.graded_ef)]
    out.append(f"functions over {MAX_LINES} lines: {len(health.long)}")
    out += [f"  {n} {where}" + ("" if why else "  (no reason in its docstring)")
            for n, where, why in sorted(health.long, reverse=True)]
    commented = sum(1 for _, c in health.broad if c)
    out.append(f"broad except clauses: {len(health.broad)} ({commented} with a comment saying why)")
    out += [f"  {where} (no comment)" for where, c in health.broad if not c]
    share = health.documented / health.public if health.public else 1.0
    out.append(f"engine public definitions with a docstring: {health.documented}/{health.public} = {share:.0%}")
    return out


def main(argv: list[str]) -> int:
    """Print the numbers; with ``--check``, return 1 when a rule of the module docstring is broken."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    ap.add_argument("--check", action="store_true", help="exit 1 on an E/F function, an unexplained long one, "
                                                          "or an uncommented broad except")
    args = ap.parse_args(argv)
    health = measure(args.paths)
    print("\n".join(report(health)))
    if not args.check:
        return 0
    broken = (health.graded_ef or any(not why for _, _, why in health.long)
              or any(not c for _, c in health.broad))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
