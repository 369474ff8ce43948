"""The layout: the source root core/ holds the package chunkscope (core/chunkscope/), nothing named core/ui lands in
site-packages, the engine never imports Streamlit (nor plotly outside chunkscope.present), no
import cycles."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core" / "chunkscope"  # the source root is core/; a module's path is its import name


def _module_names() -> dict[str, Path]:
    out = {}
    for path in CORE.rglob("*.py"):
        parts = ["chunkscope", *path.relative_to(CORE).with_suffix("").parts]
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def test_a_modules_path_is_its_import_name():
    """Every file under core/chunkscope/ is the module its path names (no mapping to remember), and
    every folder holding modules is a package, so setuptools' find picks it up."""
    import importlib.util

    for name, path in _module_names().items():
        spec = importlib.util.find_spec(name)
        assert spec is not None and Path(spec.origin).resolve() == path.resolve(), (name, spec and spec.origin)
    for folder in {p.parent for p in CORE.rglob("*.py")}:
        assert (folder / "__init__.py").exists(), f"{folder} holds modules but is no package"


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def test_engine_never_imports_streamlit_and_plotly_only_in_present():
    for path in CORE.rglob("*.py"):
        mods = _imports(path)
        assert not any(m.split(".")[0] == "streamlit" for m in mods), path
        assert not any(m.split(".")[0] in ("core", "ui") for m in mods), f"{path} imports core/ui, not chunkscope"
        if "present" not in path.relative_to(CORE).parts:
            assert not any(m.split(".")[0] == "plotly" for m in mods), f"{path} imports plotly outside present/"


def test_no_import_cycles_in_the_engine():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "import_cycles.py"), str(CORE), "chunkscope"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_wheel_installs_chunkscope_and_nothing_named_core_or_ui(tmp_path):
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"cannot build a wheel here: {out.stderr.strip()[-300:]}")
    wheel = next(tmp_path.glob("chunkscope-*.whl"))
    tops = {n.split("/")[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert "chunkscope" in tops
    assert not tops & {"core", "ui", "pages", "tests", "bench"}, tops
    names = zipfile.ZipFile(wheel).namelist()
    assert "chunkscope/prompts/llm_regex_v1.txt" in names
    assert {"chunkscope/analysis/run.py", "chunkscope/present/figures.py", "chunkscope/cli/__main__.py"} <= set(names)
