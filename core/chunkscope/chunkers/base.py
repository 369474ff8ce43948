"""What every chunker is: a named span producer with declared parameters.

A chunker never rewrites text. It returns ordered spans into ``Document.text``
(possibly overlapping) that together cover every non-whitespace character.
Parameters are declared once (``ParamSpec``); the CLI ``--param``, config files
and the app's widgets are all generated from these declarations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from chunkscope.document import Document, Span


class ParamError(ValueError):
    """A parameter value (or combination) is invalid; the message is user-facing."""


def _bound(x: float) -> str:
    """A range bound as people write it: 1,000,000 (not 1e+06), 0.5."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


@dataclass(frozen=True)
class ParamSpec:
    """One declared chunker parameter: name, type, default, range or choices, help."""

    name: str
    type: type  # int | float | str | bool | list
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] | None = None
    unset: str = ""  # what the default stands for when it means "not set" (0, empty): shown with it

    def coerce(self, value: Any) -> Any:
        """Convert a CLI/config/widget value to this parameter's type and check its range."""
        try:
            if self.type is bool:
                if isinstance(value, str):
                    low = value.strip().lower()
                    if low not in {"true", "false", "1", "0", "yes", "no"}:
                        raise ValueError(value)
                    v: Any = low in {"true", "1", "yes"}
                else:
                    v = bool(value)
            elif self.type is list:
                if isinstance(value, str) and value.lstrip().startswith("["):
                    import json  # a JSON list, for items that contain '|' (e.g. regex alternation)

                    v = json.loads(value)
                    if not isinstance(v, list):
                        raise ValueError(value)
                else:
                    v = [s for s in value.split("|")] if isinstance(value, str) else list(value)
            else:
                v = self.type(value)
        except (TypeError, ValueError):
            raise ParamError(f"{self.name}: expected {self.type.__name__}, got {value!r}") from None
        if self.min is not None and v < self.min:
            raise ParamError(f"{self.name} must be >= {_bound(self.min)} (got {v})")
        if self.max is not None and v > self.max:
            raise ParamError(f"{self.name} must be <= {_bound(self.max)} (got {v})")
        if self.choices is not None and v not in self.choices:
            raise ParamError(f"{self.name} must be one of {', '.join(map(str, self.choices))} (got {v!r})")
        return v

    def range_text(self) -> str:
        """The declared range as people read it ("1–1,000,000", "0–", ""), for help texts."""
        if self.min is None and self.max is None:
            return ""
        return f"{'' if self.min is None else _bound(self.min)}–{'' if self.max is None else _bound(self.max)}"

    def to_dict(self) -> dict[str, Any]:
        """The declaration as JSON (``chunkscope chunkers --json``)."""
        return {
            "name": self.name,
            "type": self.type.__name__,
            "default": self.default,
            "help": self.help,
            "min": self.min,
            "max": self.max,
            "choices": list(self.choices) if self.choices else None,
            "unset": self.unset or None,
        }


@dataclass
class ChunkResult:
    """Outcome of one chunker on one document.

    status: "ok" (spans valid), "skipped" (does not apply, e.g. no pages), or
    "failed" (it should apply but could not, e.g. LLM endpoint down). ``reason``
    is a one-line user-facing explanation for skipped/failed. ``info`` carries
    chunker-specific diagnostics (the LLM's regex, semantic distances, ...).
    """

    spans: list[Span] = field(default_factory=list)
    status: str = "ok"
    reason: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def skipped(cls, reason: str, **info: Any) -> "ChunkResult":
        """A result for a chunker that does not apply to this document."""
        return cls(status="skipped", reason=reason, info=dict(info))

    @classmethod
    def failed(cls, reason: str, **info: Any) -> "ChunkResult":
        """A result for a chunker that should apply but could not run."""
        return cls(status="failed", reason=reason, info=dict(info))


class RunContext(Protocol):
    """Shared resources a chunker may use (all optional). See chunkscope.analysis.Resources."""

    def embedder(self) -> Any:
        """The run's chunkscope.embeddings.embedder.Embedder (semantic chunker)."""

    def llm(self) -> Any:
        """The run's chunkscope.llm.LLMClient, or None (llm-regex chunker)."""


ChunkFn = Callable[[Document, dict[str, Any], "RunContext | None"], ChunkResult]
# Cross-parameter checks: resolved params -> user-facing problems ([] when the combination is fine).
ValidateFn = Callable[[dict[str, Any]], list[str]]


# The index cost of overlap: consecutive chunks advance by about size - overlap, so the text is
# embedded about size / (size - overlap) times (tokens embedded over the document's tokens).
# Beyond MAX_REPEAT a configuration is refused before anything is computed: overlap up to 3/4 of
# the size is allowed (the usual 10-50% costs 1.1-2x); size 2000 with overlap 1999 would embed a
# 30k-token document 2000 times (57 M tokens, minutes of work for one widget change).
MAX_REPEAT = 4


def overlap_below(size: str = "chunk_size", overlap: str = "chunk_overlap", unit: str = "tokens") -> ValidateFn:
    """A validator: ``params[overlap]`` must be smaller than ``params[size]`` and repeat the
    text at most ``MAX_REPEAT`` times (overlap <= size - size / MAX_REPEAT)."""

    def check(params: dict[str, Any]) -> list[str]:
        s, o = params.get(size), params.get(overlap)
        if s is None or o is None:
            return []
        if o >= s:
            return [f"{overlap} ({o} {unit}) must be smaller than {size} ({s} {unit})"]
        if MAX_REPEAT * (s - o) < s:
            most = s - -(-s // MAX_REPEAT)  # the largest overlap with s / (s - o) <= MAX_REPEAT
            r = s / (s - o)
            return [f"{overlap} ({o} {unit}) would embed the text about {f'{r:,.0f}' if r >= 100 else f'{r:.3g}'} "
                    f"times ({size} / ({size} - {overlap})), at most {MAX_REPEAT}: keep {overlap} <= {most:,} "
                    f"{unit} at {size} {s:,}"]
        return []

    return check


def all_of(*checks: "ValidateFn | None") -> ValidateFn:
    """Several validators as one (None entries are skipped)."""

    def check(params: dict[str, Any]) -> list[str]:
        return [msg for c in checks if c is not None for msg in c(params)]

    return check


@dataclass(frozen=True)
class ChunkerSpec:
    """A registered chunker id: label, one-line description, declared params, function."""

    id: str
    label: str
    description: str
    params: tuple[ParamSpec, ...]
    fn: ChunkFn
    family: str = ""
    validate: ValidateFn | None = None  # combinations (overlap >= size, min > max, ...), next to the params
    needs: str = ""  # "" (text and structure only), "embedder" or "llm": the analysis stage that runs it
    # uses the sentence segmenter (a spaCy model): the structure stage runs it after a first
    # snapshot of the chunkings that need nothing but the text, so the first answer waits for no model
    uses_sentences: bool = False

    def problems(self, params: dict[str, Any]) -> list[str]:
        """User-facing problems with a combination of (resolved) values; [] when it is valid.

        The CLI, config files and the app's widgets all call this, so they reject the same
        combinations with the same words.
        """
        return list(self.validate(params)) if self.validate is not None else []

    def check(self, overrides: Mapping[str, Any] | None = None) -> "Checked":
        """The defaults updated with the coerced overrides, and every problem with them.

        Unknown names and values that do not coerce are the problems when there are any (the
        combination of values is not meaningful then); otherwise the cross-parameter ``problems``.
        """
        by_name = {p.name: p for p in self.params}
        values = {p.name: p.default for p in self.params}
        bad: list[str] = []
        for k, v in (overrides or {}).items():
            if k not in by_name:
                bad.append(f"unknown parameter '{k}' (known: {', '.join(by_name) or 'none'})")
                continue
            try:
                values[k] = by_name[k].coerce(v)
            except ParamError as exc:
                bad.append(str(exc))
        return Checked(values, bad or self.problems(values))

    def resolve_params(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Defaults updated with coerced overrides; ParamError naming every problem when they are invalid."""
        checked = self.check(overrides)
        if checked.problems:
            raise ParamError(f"{self.id}: " + "; ".join(checked.problems))
        return checked.values


@dataclass(frozen=True)
class Checked:
    """A chunker's parameter values (defaults with the overrides that coerced) and their problems ([]: valid)."""

    values: dict[str, Any]
    problems: list[str]
