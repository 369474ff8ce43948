"""Settings: everything that changes a report, and the one reader/writer of settings files.

A settings file is TOML (``tomllib`` to read, ``tomli-w`` to write) or JSON:
``{"schema": "chunkscope.config/1", "settings": {...}, "tune": {...}}``, or a plain table of
settings written by hand. ``chunkscope analyze --config``, the Tune page's save/load and
``Settings.from_file`` / ``Settings.to_file`` all go through this module.
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Mapping

from chunkscope.analysis.uncertainty import TIE_BREAKS
from chunkscope.coref import BACKENDS as COREF_BACKENDS
from chunkscope.embeddings.embedder import BACKENDS as EMBEDDING_BACKENDS
from chunkscope.embeddings.embedder import MODES as EMBEDDING_MODES
from chunkscope.report import METRICS

DEFAULT_CANDIDATES = ("page+pp", "recursive-1100+pp", "recursive-600+pp", "llm-regex+pp")
CONFIG_SCHEMA = "chunkscope.config/1"

# What a change of a setting invalidates (``SettingSpec.affects``):
CHUNKINGS = "chunkings"  # which chunkings run and how they chunk
SCORES = "metrics"  # a chunking's metric values (the Tune cache's key: tune.metric_key)
RANKING = "ranking"  # only the ranking: the app re-ranks a report in place (rescore), nothing is recomputed
SELECTION = "selection"  # the run's selection stage (the verdict), from unchanged metrics


@dataclass(frozen=True)
class SettingSpec:
    """One analysis setting, declared once next to its ``Settings`` field.

    The CLI flags (``chunkscope.cli.settings``), the settings-file coercion (``Settings.from_dict``), the
    checks (``Settings.validate``), the app's sidebar widgets (``ui.analysis``) and the cache keys
    (``affects``) are all generated from these declarations. ``name`` and ``default`` come from the field.
    """

    kind: str  # whole | number | text | ids | params | weights | variants: the value's shape (from_dict's coercion)
    help: str  # one line, without the default (CLI help and widget tooltip add it)
    affects: str  # CHUNKINGS, SCORES, RANKING or SELECTION
    label: str = ""  # the widget's label
    optional: bool = False  # None is a value (it stands for ``unset``)
    unset: str = ""  # what None (or the default) stands for, in help texts
    min: float | None = None  # checked by validate (and the widget's lower end)
    choices: tuple[str, ...] | None = None  # checked by validate (and the widget's options)
    cli: str | None = None  # the flag; None: settings files and the app only
    metavar: str | None = None
    cli_group: str = ""  # "": add_analysis_options; "retrieval": the retrieval check's options (analyze only)
    per_document: bool = False  # one document's file: corpus mode takes it from beside each document instead
    widget: str = ""  # number | radio | select | text | pick (multiselect) | sliders | file | "" (none)
    key: str = ""  # the widget's session-state key (for sliders: the prefix of one key per metric)
    step: float | None = None  # the widget's step
    ui_max: float | None = None  # the widget's upper end (not a limit of the setting)
    query: str = ""  # the page address's parameter that seeds the widget ("" = none)
    name: str = ""
    default: Any = None

    def default_text(self) -> str:
        """The default as a help text shows it ("1100", "page+pp,recursive-1100+pp", "RC=1,ICC=1,...")."""
        d = self.default
        if d is None or d == {} or d == "":
            return self.unset
        if isinstance(d, (tuple, list)):
            return ",".join(map(str, d))
        if isinstance(d, dict):
            return ",".join(f"{k}={v:g}" for k, v in d.items())
        return f"{d:g}" if isinstance(d, float) else str(d)

    def described(self) -> str:
        """The help text with the declared default: "SC lower bound (default: 100)"."""
        default = self.default_text()
        return f"{self.help} (default: {default})" if default else self.help


def _setting(default: Any = None, *, factory: Callable[[], Any] | None = None, **spec: Any) -> Any:
    """A ``Settings`` field declared with its ``SettingSpec``."""
    meta = {"setting": SettingSpec(**spec)}
    return field(default_factory=factory, metadata=meta) if factory else field(default=default, metadata=meta)


def _default_weights() -> dict[str, float]:
    return {m: 1.0 for m in METRICS}


@dataclass
class Settings:
    """Everything that changes a report. Stored in the report; a settings file is its TOML/JSON."""

    chunkers: tuple[str, ...] | None = _setting(
        None, kind="ids", optional=True, affects=CHUNKINGS, help="chunkings to run", unset="all default chunkers",
        label="Chunkings to run", cli="--chunkers", metavar="ID,...", widget="pick", key="cs_chunkers",
        query="chunkers")
    candidates: tuple[str, ...] = _setting(
        DEFAULT_CANDIDATES, kind="ids", affects=RANKING, help="chunkings allowed to win", label="Candidates (may win)",
        cli="--candidates", metavar="ID,...", widget="pick", key="cs_candidates", query="candidates")
    # chunker id -> {parameter name: value}
    params: dict[str, dict[str, Any]] = _setting(
        kind="params", factory=dict, affects=CHUNKINGS, cli="--param", metavar="ID.NAME=VALUE",
        help="override a chunker parameter, e.g. recursive-600.chunk_size=800 (repeatable)")
    min_tokens: int = _setting(
        100, kind="whole", affects=SCORES, help="SC lower bound", label="SC min tokens", min=0, cli="--min-tokens",
        widget="number", key="cs_min_tokens", step=10, ui_max=100_000, query="min_tokens")
    max_tokens: int = _setting(
        1100, kind="whole", affects=SCORES, help="SC upper bound", label="SC max tokens", min=0, cli="--max-tokens",
        widget="number", key="cs_max_tokens", step=50, ui_max=100_000, query="max_tokens")
    bi_tolerance: int = _setting(
        5, kind="whole", affects=SCORES, help="BI tolerance in characters", label="BI tolerance (characters)", min=0,
        cli="--bi-tolerance", widget="number", key="cs_bi_tol", step=1, ui_max=1000)
    window_tokens: int = _setting(
        3000, kind="whole", affects=SCORES, help="DCC window budget", label="DCC window (tokens)", min=1,
        cli="--window-tokens", widget="number", key="cs_win_tokens", step=250, ui_max=100_000)
    window_step: int = _setting(
        1, kind="whole", affects=SCORES, help="DCC window stride in chunks", label="DCC window step (chunks)", min=1,
        cli="--window-step", widget="number", key="cs_win_step", step=1, ui_max=100)
    weights: dict[str, float] = _setting(
        kind="weights", factory=_default_weights, affects=RANKING, help="metric weights for the score",
        label="Metric weights", cli="--weights", metavar="RC=1,ICC=1,...", widget="sliders", key="cs_w_", step=0.25,
        ui_max=3.0)
    coref: str = _setting(
        "heuristic", kind="text", affects=SCORES, choices=COREF_BACKENDS, label="Coreference backend (RC)",
        help="coreference backend for RC: heuristic (spaCy rules), learned (a pair scorer distilled from Maverick's "
             "pairs), maverick, precomputed (a mentions file's pairs; chosen when one is given), none",
        cli="--coref", widget="select", key="cs_coref", query="coref")
    # path to precomputed mentions (parquet/JSON)
    mentions: str | None = _setting(
        None, kind="text", optional=True, affects=SCORES, help="precomputed coreference mentions (parquet or JSON "
        "of pairs)", unset="none", label="Mentions file", cli="--mentions", metavar="FILE", per_document=True,
        widget="file")
    # model name or path; None = the bundled model
    embedder: str | None = _setting(
        None, kind="text", optional=True, affects=SCORES, help="sentence-transformers model (name or path)",
        unset="bundled all-MiniLM-L6-v2", label="Embedding model", cli="--embedder", metavar="NAME_OR_PATH",
        widget="text", key="cs_embedder")
    embedding_mode: str = _setting(
        "composed", kind="text", affects=SCORES, choices=EMBEDDING_MODES, label="Embedding mode",
        help="composed: embed the document's sentences once and compose every span (fast); exact: embed every "
             "chunk, piece and window text (the paper's way, slow)",
        cli="--embedding-mode", widget="radio", key="cs_mode", query="mode")
    # docs/performance.md
    embedding_backend: str = _setting(
        "auto", kind="text", affects=SCORES, choices=EMBEDDING_BACKENDS, label="Embedding backend",
        help="how the embedding model runs: auto (ONNX Runtime int8 for the bundled model, sentence-transformers "
             "otherwise), reference (sentence-transformers fp32, any model), onnx, onnx-int8; see docs/performance.md",
        cli="--embedding-backend", widget="select", key="cs_backend")
    # named candidates ("promoted" configurations): name -> {"chunker": base id, "params": {...}};
    # analyze() runs each like any other chunking under its name (which may be a candidate)
    variants: dict[str, dict[str, Any]] = _setting(
        kind="variants", factory=dict, affects=CHUNKINGS, label="Variants",
        help="named chunker configurations: NAME = {chunker = ID, params = {...}} (the Tune page promotes them)")
    # what decides between candidates the bootstrap cannot separate (chunkscope.analysis.uncertainty)
    tie_break: str = _setting(
        "auto", kind="text", affects=SELECTION, choices=TIE_BREAKS, label="Tie-break", cli="--tie-break",
        help="what picks among candidates the bootstrap cannot separate (auto: budgeted retrieval recall when "
             "there are questions, else fewer chunks; chunks; retrieval; score = the paper's highest score)")
    # only when the report has a retrieval block, i.e. questions were given (DESIGN section 11)
    retrieval_weight: float = _setting(
        0.0, kind="number", affects=SELECTION, min=0, label="Retrieval weight", cli="--retrieval-weight",
        metavar="W", cli_group="retrieval", help="weight of budgeted retrieval recall in the adaptive score (0: off)")

    def problems(self, registry: Any = None) -> list[tuple[str, str]]:
        """Every (setting, problem) of these values; [] when valid.

        With the chunker ``registry`` (``chunkscope.chunkers.registry``), chunking ids, chunker parameters and
        variants are checked too: the CLI refuses them before any work, where an analysis would report a
        failed row.
        """
        out = [(s.name, msg) for s in SETTING_SPECS for msg in _CHECKS[s.kind](s, getattr(self, s.name))]
        if self.max_tokens < self.min_tokens:
            out.append(("max_tokens", f"size bounds: need 0 <= min ({self.min_tokens}) <= max ({self.max_tokens})"))
        if registry is not None and not out:
            out += _chunking_problems(self, registry)
        return out

    def validate(self, registry: Any = None) -> None:
        """Raise SettingError for the first problem (see ``problems``)."""
        found = self.problems(registry)
        if found:
            raise SettingError(*found[0])

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain table (lists for ids), as reports and settings files hold them."""
        d = asdict(self)
        d["chunkers"] = list(self.chunkers) if self.chunkers is not None else None
        d["candidates"] = list(self.candidates)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Settings":
        """Checked settings from a table (a settings file, a report); ValueError naming the setting."""
        unknown = sorted(set(d) - set(SPECS))
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
        s = cls(**{k: _COERCE[SPECS[k].kind](SPECS[k], v) for k, v in d.items()})
        s.validate()
        return s

    @classmethod
    def of_report(cls, settings: Mapping[str, Any]) -> "Settings":
        """The settings a report was computed with (keys this version does not know are left out)."""
        return cls.from_dict({k: v for k, v in settings.items() if k in SPECS})

    def with_(self, **changes: Any) -> "Settings":
        """A copy with ``changes``."""
        return replace(self, **changes)

    @classmethod
    def from_file(cls, path: str | Path) -> "Settings":
        """Settings from a TOML (``.toml``) or JSON file, as written by ``to_file`` or by hand."""
        return cls.from_dict(read_config(path)[0])

    def to_file(self, path: str | Path, tune: Mapping[str, Any] | None = None) -> Path:
        """Write TOML when the path ends in ``.toml``, else JSON."""
        p = Path(path)
        p.write_text(config_text(self, config_format(p), tune), encoding="utf-8")
        return p


class SettingError(ValueError):
    """A setting's value is invalid; ``setting`` names it (the CLI names its flag)."""

    def __init__(self, setting: str, message: str):
        super().__init__(message)
        self.setting = setting


def _declared(f: Any) -> SettingSpec:
    default = f.default_factory() if f.default is MISSING else f.default
    return replace(f.metadata["setting"], name=f.name, default=default)


SETTING_SPECS: tuple[SettingSpec, ...] = tuple(_declared(f) for f in fields(Settings))
SPECS: dict[str, SettingSpec] = {s.name: s for s in SETTING_SPECS}


def size_bounds(table: Mapping[str, Any] | None) -> tuple[int, int]:
    """(min_tokens, max_tokens) of a report's settings table, the declared defaults where it has none."""
    t = table or {}
    return t.get("min_tokens", SPECS["min_tokens"].default), t.get("max_tokens", SPECS["max_tokens"].default)


def settings_affecting(effect: str) -> tuple[str, ...]:
    """The settings whose change invalidates ``effect`` (CHUNKINGS, SCORES, RANKING, SELECTION), in field order."""
    return tuple(s.name for s in SETTING_SPECS if s.affects == effect)


# ------------------------------------------------------------------ from_dict: a table's values, coerced

def _whole(s: SettingSpec, v: Any) -> Any:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):  # true is not 1
        raise ValueError(f"{s.name} must be a whole number (got {v!r})")
    return v


def _number(s: SettingSpec, v: Any) -> float:
    try:
        if isinstance(v, bool):  # true is not a weight of 1
            raise TypeError
        return float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{s.name} must be a number (got {v!r})") from None


def _text(s: SettingSpec, v: Any) -> Any:
    if not isinstance(v, str) and not (s.optional and v is None):
        raise ValueError(f"{s.name} must be a string (got {v!r})")
    return v


def _ids(s: SettingSpec, v: Any) -> Any:
    if isinstance(v, str):  # a config written by hand: "a, b" for ["a", "b"]
        v = [x.strip() for x in v.split(",") if x.strip()]
    if v is None and s.optional:
        return None
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{s.name} must be a list of chunking ids (got {v!r})")
    return tuple(v)


def _params(s: SettingSpec, v: Any) -> Any:
    if not isinstance(v, dict) or not all(isinstance(x, dict) for x in v.values()):
        raise ValueError("params must be a table of CHUNKER = {NAME = VALUE, ...}")
    return v


def _weights(s: SettingSpec, v: Any) -> dict[str, float]:
    if not isinstance(v, dict):
        raise ValueError("weights must be a table of METRIC = number")
    weights = _default_weights()
    for k, w in v.items():
        weights[k] = _number(replace(s, name=f"weight {k}"), w)
    return weights


def _variants(s: SettingSpec, v: Any) -> Any:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ValueError("variants must be a table of NAME = {chunker = ID, params = {...}}")
    return {str(k): dict(x) if isinstance(x, dict) else x for k, x in v.items()}


_COERCE: dict[str, Callable[[SettingSpec, Any], Any]] = {
    "whole": _whole, "number": _number, "text": _text, "ids": _ids, "params": _params, "weights": _weights,
    "variants": _variants,
}


# ------------------------------------------------------------------ validate: each setting's problems

def _finite_at_least(v: Any, low: float) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and v >= low


def _value_problems(s: SettingSpec, v: Any) -> list[str]:
    what = s.name.replace("_", " ")
    if s.min is not None and s.kind == "number" and not _finite_at_least(v, s.min):
        return [f"{what} must be a finite number >= {s.min:g} (got {v!r})"]
    if s.min is not None and s.kind == "whole" and v < s.min:
        return [f"{what} must be >= {s.min:g} (got {v})"]
    if s.choices is not None and v not in s.choices:
        return [f"{what} must be one of {', '.join(s.choices)} (got {v!r})"]
    return []


def _weight_problems(s: SettingSpec, weights: dict[str, Any]) -> list[str]:
    bad = [k for k in weights if k not in METRICS]
    if bad:
        return [f"unknown metric weight(s): {', '.join(bad)} (metrics: {', '.join(METRICS)})"]
    if not all(_finite_at_least(w, 0) for w in weights.values()):
        return ["metric weights must be finite numbers >= 0"]
    if not any(weights.get(m, 0) > 0 for m in METRICS):
        return ["at least one metric weight must be > 0"]
    return []


def _variant_problems(s: SettingSpec, variants: dict[str, Any]) -> list[str]:
    from chunkscope.chunkers.registry import is_registered

    for name, v in variants.items():
        if not isinstance(name, str) or not name.strip():
            return ["a variant needs a non-empty name"]
        if not isinstance(v, dict) or not isinstance(v.get("chunker"), str):
            return [f"variant {name!r}: expected {{\"chunker\": ID, \"params\": {{...}}}}"]
        extra = sorted(set(v) - {"chunker", "params"})
        if extra:
            return [f"variant {name!r}: unknown key(s) {', '.join(extra)} (keys: chunker, params)"]
        if not isinstance(v.get("params", {}), dict):
            return [f"variant {name!r}: params must be a table of NAME = VALUE"]
        if is_registered(name):
            return [f"variant {name!r}: the name is a built-in chunker id; choose another name"]
    return []


def _no_problems(s: SettingSpec, v: Any) -> list[str]:
    return []


_CHECKS: dict[str, Callable[[SettingSpec, Any], list[str]]] = {
    "whole": _value_problems, "number": _value_problems, "text": _value_problems, "ids": _no_problems,
    "params": _no_problems, "weights": _weight_problems, "variants": _variant_problems,
}


def _chunking_problems(s: Settings, registry: Any) -> list[tuple[str, str]]:
    """Chunking ids that name no chunker or variant, chunker parameters and variants that a chunker rejects."""
    hint = f"known: {', '.join(registry.ids(include_pp=False))}; add '+pp' for post-processing"
    return _unknown_ids(s, registry, hint) + _param_problems(s, registry, hint) + _variant_chunker_problems(
        s, registry, hint)


def _unknown_ids(s: Settings, registry: Any, hint: str) -> list[tuple[str, str]]:
    out = []
    for name, ids in (("chunkers", s.chunkers or ()), ("candidates", s.candidates)):
        bad = [c for c in ids if c not in s.variants and not registry.is_registered(c)
               and not (name == "candidates" and c in DEFAULT_CANDIDATES)]
        if bad:
            out.append((name, f"unknown chunker {', '.join(repr(b) for b in bad)} ({hint})"))
    return out


def _param_problems(s: Settings, registry: Any, hint: str) -> list[tuple[str, str]]:
    out = []
    for cid, overrides in s.params.items():
        if cid in s.variants or not registry.is_registered(cid):
            out.append(("params", f"unknown chunker {cid!r} ({hint})"))
        else:
            out += [("params", f"{cid}: {p}") for p in registry.get(cid).check(overrides).problems]
    return out


def _variant_chunker_problems(s: Settings, registry: Any, hint: str) -> list[tuple[str, str]]:
    out = []
    for name, v in s.variants.items():
        if not registry.is_registered(v["chunker"]):
            out.append(("variants", f"variant {name!r}: unknown chunker {v['chunker']!r} ({hint})"))
        else:
            spec = registry.get(v["chunker"])
            out += [("variants", f"variant {name!r}: {spec.id}: {p}")
                    for p in spec.check(dict(v.get("params") or {})).problems]
    return out


# ------------------------------------------------------------------ settings files

def config_format(path: str | Path) -> str:
    """Which format a settings file's name asks for: toml for ``.toml``, else json."""
    return "toml" if Path(path).suffix.lower() == ".toml" else "json"


def config_dict(settings: Settings, tune: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{"schema", "settings": {...}, "tune": {...}}`` (None values dropped: TOML has no null).

    ``chunkscope analyze --config`` reads the ``settings`` table; ``tune`` (the chunker shown on
    the Tune page, its baseline) is for the app.
    """
    out: dict[str, Any] = {"schema": CONFIG_SCHEMA, "settings": _drop_none(settings.to_dict())}
    if tune:
        out["tune"] = _drop_none(dict(tune))
    return out


def _drop_none(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _drop_none(x) for k, x in v.items() if x is not None}
    if isinstance(v, (list, tuple)):
        return [_drop_none(x) for x in v if x is not None]
    return v


def config_text(settings: Settings, fmt: str = "toml", tune: Mapping[str, Any] | None = None) -> str:
    """A settings file's text (TOML or JSON) of ``settings`` and the Tune page's ``tune`` table."""
    d = config_dict(settings, tune)
    if fmt == "toml":
        import tomli_w

        return tomli_w.dumps(d)
    if fmt == "json":
        return json.dumps(d, ensure_ascii=False, indent=1) + "\n"
    raise ValueError(f"config format must be toml or json (got {fmt!r})")


def parse_config_data(text: str, fmt: str = "toml") -> tuple[dict[str, Any], dict[str, Any]]:
    """(settings table, tune table) from a settings file's text; ValueError with the reason."""
    try:
        if fmt == "toml":
            import tomllib

            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError / JSONDecodeError are ValueErrors; deep nesting
        raise ValueError(f"not valid {fmt.upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("expected a table/object of settings")
    if "schema" in data and data["schema"] != CONFIG_SCHEMA:
        raise ValueError(f"schema {data['schema']!r}: this version of ChunkScope reads {CONFIG_SCHEMA!r} "
                         "(a file from another version?)")
    body = data["settings"] if isinstance(data.get("settings"), dict) else {
        k: v for k, v in data.items() if k not in ("schema", "tune")}
    tune = data["tune"] if isinstance(data.get("tune"), dict) else {}
    return dict(body), dict(tune)


def parse_config(text: str, fmt: str = "toml") -> tuple[Settings, dict[str, Any]]:
    """(Settings, tune table) from a saved settings file's text."""
    body, tune = parse_config_data(text, fmt)
    return Settings.from_dict(body), tune


def read_config(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(settings table, tune table) read from a file; OSError/ValueError name the file."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    try:
        return parse_config_data(text, config_format(p))
    except ValueError as exc:
        raise ValueError(f"{p.name}: {exc}") from None
