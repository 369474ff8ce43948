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


def _requirement_name(req: str) -> str:
    import re

    return re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].lower()


def test_the_extras_table_and_pyproject_agree():
    """chunkscope.extras names, for each optional import, the extra and distribution pyproject.toml declares."""
    import tomllib

    from chunkscope.extras import EXTRAS

    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    declared = {(extra, _requirement_name(r)) for extra, reqs in optional.items() if extra not in ("all", "test")
                for r in reqs}
    assert set(EXTRAS.values()) == declared
    assert set(optional["all"][0].split("[")[1].rstrip("]").split(",")) == set(optional) - {"all", "test", "maverick"}


def test_a_missing_extra_is_one_line_naming_it(monkeypatch):
    """Without mammoth (the office extra) a Word file is refused with the pip command, not a traceback."""
    from docx_factory import make_docx

    from chunkscope.ingest import IngestError, load_bytes

    monkeypatch.setitem(sys.modules, "mammoth", None)  # import mammoth -> ModuleNotFoundError, as when missing
    with pytest.raises(IngestError, match=r"needs mammoth: pip install 'chunkscope\[office\]'"):
        load_bytes(make_docx([("Normal", "A paragraph.")]), "letter.docx")


def test_every_required_dependency_is_used():
    """A mandatory dependency is imported by the engine or the app, or loaded by its name (a model package)."""
    import importlib.metadata as md
    import tomllib

    by_dist: dict[str, set[str]] = {}
    for module, dists in md.packages_distributions().items():
        for d in dists:
            by_dist.setdefault(d.lower().replace("_", "-"), set()).add(module)
    sources = [*CORE.rglob("*.py"), *(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"]
    imported = {m.split(".")[0] for p in sources for m in _imports(p)}
    engine_text = "\n".join(p.read_text(encoding="utf-8") for p in CORE.rglob("*.py"))
    for req in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        name = _requirement_name(req)
        modules = by_dist.get(name) or {name.replace("-", "_")}
        assert modules & imported or any(f'"{m}"' in engine_text for m in modules), f"{name} is declared, not used"


def test_the_architecture_map_names_every_module():
    """docs/ARCHITECTURE.md §2 describes exactly the code: every module of the package is named there (by its
    path below core/chunkscope/, a package by its folder), and every .py path it names exists."""
    import re

    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text[text.index("## 2. Layout"):text.index("## 3.")]
    named = {n.removeprefix("core/chunkscope/") for n in re.findall(r"`([\w/]+\.py)`", section)
             if not n.startswith(("tests/", "tools/", "bench/"))}
    folders = set(re.findall(r"`([\w/]+/)`", section))
    for path in CORE.rglob("*.py"):
        rel = path.relative_to(CORE)
        if rel.name == "__init__.py" and rel.parent != Path("."):
            assert f"{rel.parent.as_posix()}/" in folders or rel.parent.name + "/" in folders, rel
        else:
            assert rel.as_posix() in named or rel.name in named, f"{rel} is missing from docs/ARCHITECTURE.md §2"
    known = {p.name for p in CORE.rglob("*.py")} | {p.relative_to(CORE).as_posix() for p in CORE.rglob("*.py")}
    assert named <= known, f"named but not in the code: {sorted(named - known)}"
