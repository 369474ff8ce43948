"""Settings: everything that changes a report, and the one reader/writer of settings files.

A settings file is TOML (``tomllib`` to read, ``tomli-w`` to write) or JSON:
``{"schema": "chunkscope.config/1", "settings": {...}, "tune": {...}}``, or a plain table of
settings written by hand. ``chunkscope analyze --config``, the Tune page's save/load and
``Settings.from_file`` / ``Settings.to_file`` all go through this module.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from chunkscope.coref import BACKENDS as COREF_BACKENDS
from chunkscope.embeddings.embedder import BACKENDS as EMBEDDING_BACKENDS
from chunkscope.embeddings.embedder import MODES as EMBEDDING_MODES
from chunkscope.report import METRICS

DEFAULT_CANDIDATES = ("page+pp", "recursive-1100+pp", "recursive-600+pp", "llm-regex+pp")
CONFIG_SCHEMA = "chunkscope.config/1"
# what a hand-written file must give each setting (a string "big" for max_tokens failed later as
# "'<' not supported between instances of 'str' and 'int'"; true was taken for 1)
_WHOLE = ("min_tokens", "max_tokens", "bi_tolerance", "window_tokens", "window_step")
_TEXT = ("coref", "embedding_mode", "embedding_backend", "tie_break")
_TEXT_OR_NONE = ("mentions", "embedder")


@dataclass
class Settings:
    """Everything that changes a report. Stored in the report; a settings file is its TOML/JSON."""

    chunkers: tuple[str, ...] | None = None  # None: every default chunker
    candidates: tuple[str, ...] = DEFAULT_CANDIDATES
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # chunker id -> overrides
    min_tokens: int = 100
    max_tokens: int = 1100
    bi_tolerance: int = 5
    window_tokens: int = 3000
    window_step: int = 1
    weights: dict[str, float] = field(default_factory=lambda: {m: 1.0 for m in METRICS})
    coref: str = "heuristic"  # one of COREF_BACKENDS
    mentions: str | None = None  # path to precomputed mentions (parquet/JSON)
    embedder: str | None = None  # model name or path; None = bundled all-MiniLM-L6-v2
    embedding_mode: str = "composed"  # one of EMBEDDING_MODES
    # how the model runs (EMBEDDING_BACKENDS): "auto" = ONNX Runtime int8 for the bundled model,
    # "reference" = sentence-transformers fp32 (docs/performance.md)
    embedding_backend: str = "auto"
    # named candidates ("promoted" configurations): name -> {"chunker": base id, "params": {...}};
    # analyze() runs each like any other chunking under its name (which may be a candidate)
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    # what decides between candidates the bootstrap cannot separate (chunkscope.analysis.uncertainty):
    # auto = budgeted retrieval recall when the report has a retrieval check, else fewer chunks;
    # chunks; retrieval; score = the highest point score (the paper's policy; the verdict is still reported)
    tie_break: str = "auto"
    # weight of the retrieval check's budgeted recall in the adaptive score (0: off; only when the
    # report has a retrieval block, i.e. questions were given; DESIGN section 11)
    retrieval_weight: float = 0.0

    def validate(self) -> None:
        from chunkscope.chunkers.registry import is_registered

        if self.min_tokens < 0 or self.max_tokens < self.min_tokens:
            raise ValueError(f"size bounds: need 0 <= min ({self.min_tokens}) <= max ({self.max_tokens})")
        if self.bi_tolerance < 0:
            raise ValueError("BI tolerance must be >= 0")
        if self.window_tokens < 1 or self.window_step < 1:
            raise ValueError("DCC window tokens and window step must be >= 1")
        if self.embedding_mode not in EMBEDDING_MODES:
            raise ValueError(f"embedding mode must be {' or '.join(map(repr, EMBEDDING_MODES))} "
                             f"(got {self.embedding_mode!r})")
        if self.embedding_backend not in EMBEDDING_BACKENDS:
            raise ValueError(f"embedding backend must be one of {', '.join(EMBEDDING_BACKENDS)} "
                             f"(got {self.embedding_backend!r})")
        if self.coref not in COREF_BACKENDS:
            raise ValueError(f"coref backend must be {', '.join(COREF_BACKENDS)} (got {self.coref!r})")
        from chunkscope.analysis.uncertainty import TIE_BREAKS

        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie-break must be one of {', '.join(TIE_BREAKS)} (got {self.tie_break!r})")
        bad = [k for k in self.weights if k not in METRICS]
        if bad:
            raise ValueError(f"unknown metric weight(s): {', '.join(bad)} (metrics: {', '.join(METRICS)})")
        if any(isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0
               for w in self.weights.values()):
            raise ValueError("metric weights must be finite numbers >= 0")
        if not any(self.weights.get(m, 0) > 0 for m in METRICS):
            raise ValueError("at least one metric weight must be > 0")
        if (isinstance(self.retrieval_weight, bool) or not isinstance(self.retrieval_weight, (int, float))
                or not math.isfinite(self.retrieval_weight) or self.retrieval_weight < 0):
            raise ValueError(f"retrieval weight must be a finite number >= 0 (got {self.retrieval_weight!r})")
        for name, v in self.variants.items():
            if not isinstance(name, str) or not name.strip():
                raise ValueError("a variant needs a non-empty name")
            if not isinstance(v, dict) or not isinstance(v.get("chunker"), str):
                raise ValueError(f"variant {name!r}: expected {{\"chunker\": ID, \"params\": {{...}}}}")
            extra = sorted(set(v) - {"chunker", "params"})
            if extra:
                raise ValueError(f"variant {name!r}: unknown key(s) {', '.join(extra)} (keys: chunker, params)")
            if not isinstance(v.get("params", {}), dict):
                raise ValueError(f"variant {name!r}: params must be a table of NAME = VALUE")
            if is_registered(name):
                raise ValueError(f"variant {name!r}: the name is a built-in chunker id; choose another name")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["chunkers"] = list(self.chunkers) if self.chunkers is not None else None
        d["candidates"] = list(self.candidates)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Settings":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
        d = dict(d)
        for k in _WHOLE:
            v = d.get(k)
            if isinstance(v, float) and v.is_integer():
                d[k] = v = int(v)
            if k in d and (isinstance(v, bool) or not isinstance(v, int)):
                raise ValueError(f"{k} must be a whole number (got {v!r})")
        for k in (*_TEXT, *_TEXT_OR_NONE):
            if k in d and not isinstance(d[k], str) and not (k in _TEXT_OR_NONE and d[k] is None):
                raise ValueError(f"{k} must be a string (got {d[k]!r})")
        for k in ("chunkers", "candidates"):  # a config written by hand: "a, b" for ["a", "b"]
            if isinstance(d.get(k), str):
                d[k] = [x.strip() for x in d[k].split(",") if x.strip()]
            if d.get(k) is not None and (not isinstance(d[k], (list, tuple))
                                         or not all(isinstance(x, str) for x in d[k])):
                raise ValueError(f"{k} must be a list of chunking ids (got {d[k]!r})")
        if not isinstance(d.get("params", {}), dict) or not all(
                isinstance(v, dict) for v in d.get("params", {}).values()):
            raise ValueError("params must be a table of CHUNKER = {NAME = VALUE, ...}")
        if d.get("chunkers") is not None:
            d["chunkers"] = tuple(d["chunkers"])
        if "candidates" in d:
            d["candidates"] = tuple(d["candidates"])
        if "weights" in d:
            if not isinstance(d["weights"], dict):
                raise ValueError("weights must be a table of METRIC = number")
            weights = {m: 1.0 for m in METRICS}
            for k, v in d["weights"].items():
                try:
                    if isinstance(v, bool):  # true is not a weight of 1
                        raise TypeError
                    weights[k] = float(v)
                except (TypeError, ValueError):
                    raise ValueError(f"weight {k} must be a number (got {v!r})") from None
            d["weights"] = weights
        if "retrieval_weight" in d:
            try:
                if isinstance(d["retrieval_weight"], bool):
                    raise TypeError
                d["retrieval_weight"] = float(d["retrieval_weight"])
            except (TypeError, ValueError):
                raise ValueError(f"retrieval_weight must be a number (got {d['retrieval_weight']!r})") from None
        if d.get("variants") is not None:
            d["variants"] = {str(k): dict(v) if isinstance(v, dict) else v for k, v in d["variants"].items()}
        else:
            d.pop("variants", None)
        s = cls(**d)
        s.validate()
        return s

    def with_(self, **changes: Any) -> "Settings":
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


# ------------------------------------------------------------------ settings files

def config_format(path: str | Path) -> str:
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
    except Exception as exc:  # TOMLDecodeError / JSONDecodeError
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
