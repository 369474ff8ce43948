"""Dataclasses that read and write themselves as JSON objects: the one (de)serialiser of the report.

A ``Record`` is a dataclass whose fields are its JSON keys, in field order. What differs from
"write the value as is, read it back as is" is said once, on the field, with ``json_field``:

* ``omit``: when the key is left out: ``"none"`` (the value is None), ``"empty"`` (the value
  is falsy: None, ``{}``, ``[]``, False) or a predicate on the record;
* ``dump`` / ``load``: convert the value to / from its JSON form (nested records, rounding);
* ``missing``: the value when the key is absent, from the whole JSON object (else the
  dataclass default; a field without one is required);
* ``then``: ``(key, function of the record)``, a derived key written right after this field
  (never read back);
* ``copy``: how ``snapshot`` copies the value: ``"shallow"`` (default for dicts and lists),
  ``"deep"``, or ``"share"``.

Fields whose name starts with ``_`` are in-memory only: never written, never read. So a new
field of the report is one edit: its line in the dataclass.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable, Literal, TypeVar

R = TypeVar("R", bound="Record")
Omit = Literal["none", "empty"] | Callable[[Any], bool] | None


def json_field(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING, omit: Omit = None,
               dump: Callable[[Any], Any] | None = None, load: Callable[[Any], Any] | None = None,
               missing: Callable[[dict[str, Any]], Any] | None = None,
               then: tuple[str, Callable[[Any], Any]] | None = None,
               copy: Literal["shallow", "deep", "share"] | None = None) -> Any:
    """A dataclass field with its JSON rules (see the module docstring)."""
    meta = {"omit": omit, "dump": dump, "load": load, "missing": missing, "then": then, "copy": copy}
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata={k: v for k, v in meta.items() if v is not None})


def list_of(cls: type[R]) -> Callable[[Any], list[R]]:
    """A ``load`` for a list of records of ``cls``."""
    return lambda items: [cls.from_dict(x) for x in items]


def plain(value: Any) -> Any:
    """``value`` with every record in it written as its dict (lists and dicts walked)."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _omitted(record: Any, value: Any, omit: Omit) -> bool:
    if omit is None:
        return False
    if omit == "none":
        return value is None
    if omit == "empty":
        return not value
    assert callable(omit)
    return bool(omit(record))


def _json_fields(cls: Any) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if not f.name.startswith("_")]


class Record:
    """Base of the dataclasses written to and read from JSON objects by their fields' rules."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this record: its fields in order, by their ``json_field`` rules."""
        out: dict[str, Any] = {}
        for f in _json_fields(self):
            value = getattr(self, f.name)
            meta = f.metadata
            if not _omitted(self, value, meta.get("omit")):
                out[f.name] = meta["dump"](value) if "dump" in meta else plain(value)
            if "then" in meta:
                key, derive = meta["then"]
                out[key] = derive(self)
        return out

    @classmethod
    def from_dict(cls: type[R], d: dict[str, Any]) -> R:
        """The record written as ``d`` (``to_dict``'s inverse); raises KeyError on a missing required key."""
        kwargs: dict[str, Any] = {}
        for f in _json_fields(cls):
            if not f.init:
                continue
            meta = f.metadata
            if f.name in d:
                kwargs[f.name] = meta["load"](d[f.name]) if "load" in meta else d[f.name]
            elif "missing" in meta:
                kwargs[f.name] = meta["missing"](d)
        return cls(**kwargs)

    def snapshot(self: R) -> R:
        """A copy whose containers the caller may change: nested records snapshotted, dicts and lists copied
        (deep where the field says ``copy="deep"``, not at all where it says ``"share"``)."""
        out = copy.copy(self)
        for f in _json_fields(self):  # in-memory fields (``_name``) are shared
            how = f.metadata.get("copy", "shallow")
            value = getattr(self, f.name)
            if how == "share" or not isinstance(value, (list, dict)):
                continue
            if how == "deep":
                value = copy.deepcopy(value)
            elif isinstance(value, list):
                value = [v.snapshot() if isinstance(v, Record) else v for v in value]
            else:
                value = dict(value)
            setattr(out, f.name, value)
        return out
