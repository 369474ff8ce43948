"""``chunkscope chunkers`` and ``chunkscope chunk`` (registered in chunkscope.cli.SUBCOMMANDS)."""

from __future__ import annotations

import argparse
import json
from typing import Any


def parse_kv(items: list[str] | None) -> dict[str, str]:
    """``["k=v", ...]`` -> dict; values stay strings (the ParamSpec coerces them)."""
    from chunkscope.cli.common import CLIError

    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CLIError(f"--param: expected NAME=VALUE, got {item!r}")
        out[key.strip()] = value
    return out


def _param_line(p) -> str:
    default = p.default
    if p.type is list:
        default = f"[{len(default)} items]" if isinstance(default, list) and len(default) > 3 else "|".join(map(str, default))
    return f"{p.name}={default}" + (f" ({p.unset})" if p.unset else "")


def add_chunkers(sub) -> None:
    """Declare ``chunkscope chunkers``."""
    p = sub.add_parser("chunkers", help="list every chunker id with its parameters",
                       description="List every registered chunker id (each also exists as ID+pp, post-processed) "
                       "with its label, parameters and defaults, and a one-line description.")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.add_argument("--pp", action="store_true", help="also list the +pp variants")
    p.set_defaults(func=cmd_chunkers)


def cmd_chunkers(args: argparse.Namespace) -> int:
    """List the registered chunkers and their parameters (text or JSON)."""
    from chunkscope.chunkers import registry

    specs = [registry.get(i) for i in registry.ids(include_pp=args.pp)]
    if args.json:
        print(json.dumps([{"id": s.id, "label": s.label, "description": s.description, "family": s.family,
                           "default": s.id in registry.DEFAULT_IDS,
                           "params": [p.to_dict() for p in s.params]} for s in specs],
                         ensure_ascii=False, indent=1))
        return 0
    width = max(len(s.id) for s in specs)
    for s in specs:
        mark = "*" if s.id in registry.DEFAULT_IDS else " "
        print(f"{mark} {s.id:<{width}}  {s.label} - {s.description}")
        if s.params:
            print(f"  {'':<{width}}  params: " + ", ".join(_param_line(p) for p in s.params))
    print("\n* = run by default. Any ID+pp is ID followed by the paper's post-processing "
          "(params pp_max_tokens=1100, pp_min_tokens=100, pp_merge_max=1150).\n"
          "Override a parameter with: chunkscope chunk FILE --chunker ID --param NAME=VALUE")
    return 0


def add_chunk(sub) -> None:
    """Declare ``chunkscope chunk``."""
    from chunkscope.cli.common import add_embed_text_argument, add_input_arguments

    p = sub.add_parser("chunk", help="chunk a document with one chunker and show the chunks",
                       description="Chunk FILE with one chunker: prints the chunk number (from 1), start, end, tokens and the first "
                       "words of every chunk, then the coverage audit.")
    add_input_arguments(p)
    p.add_argument("--chunker", "-c", required=True, metavar="ID", help="chunker id (see `chunkscope chunkers`)")
    p.add_argument("--param", "-p", action="append", metavar="NAME=VALUE",
                   help="override a parameter, e.g. chunk_size=800 (repeatable; lists use '|')")
    p.add_argument("--ceiling", type=int, default=None, metavar="N",
                   help="audit: also flag chunks above N tokens")
    p.add_argument("--json", metavar="OUT", help="write document, chunker, params, chunks (span, text, text_clean, "
                   "text_context, embed_text) and audit as JSON to OUT ('-' = stdout only)")
    add_embed_text_argument(p)
    p.set_defaults(func=cmd_chunk)


def chunk_payload(doc, chunker_id: str, params: dict[str, Any], spans, tokens, audit_obj,
                  embed_text: str = "raw") -> dict[str, Any]:
    """The JSON of one chunking of ``doc``: document, chunker, params, chunks (span, tokens, the texts to embed
    and which one ``embed_text`` chose; boxes for PDFs), audit."""
    from chunkscope.text.markup import clean_text, contextualize

    def one(s, n: int) -> dict[str, Any]:
        body = doc.text[s.start:s.end]
        path = [h.title for h in doc.chunk_heading_path(s.start, s.end)]
        return {"start": s.start, "end": s.end, "tokens": n, "text": body, "text_clean": clean_text(body),
                "text_context": contextualize(body, path), "embed_text": embed_text,
                **({"boxes": doc.boxes(s.start, s.end)} if doc.geometry is not None else {})}

    return {
        "document": doc.to_dict(),
        "chunker": chunker_id,
        "params": params,
        "chunks": [one(s, n) for s, n in zip(spans, tokens)],
        "audit": audit_obj.to_dict(),
    }


def cmd_chunk(args: argparse.Namespace) -> int:
    """Chunk one document with one chunker and print or write its chunks."""
    from chunkscope.chunkers import registry
    from chunkscope.chunkers.audit import audit
    from chunkscope.cli.common import CLIError, check_json_target, read_input, write_json
    from chunkscope.text.tokens import count_many

    spec = registry.get(args.chunker)  # UnknownChunker is a ValueError: one-line error
    overrides = parse_kv(args.param)
    params = spec.resolve_params(overrides)
    check_json_target(args.json)
    doc = read_input(args)
    res = registry.run_chunker(doc, args.chunker, overrides)
    if res.status != "ok":
        raise CLIError(f"{args.chunker} {res.status}: {res.reason}")
    spans = res.spans
    tokens = count_many([doc.text[s.start:s.end] for s in spans])
    a = audit(doc, spans, ceiling=args.ceiling, tokens=tokens)
    payload = chunk_payload(doc, args.chunker, params, spans, tokens, a, args.embed_text or "raw")
    if args.json == "-":
        write_json(payload, "-")
        return 0
    print(f"{doc.name}: {args.chunker} -> {len(spans)} chunks")
    w = len(str(len(doc.text)))
    print(f"{'#':>4}  {'start':>{w}}  {'end':>{w}}  {'tokens':>6}  first words")
    for i, (s, n) in enumerate(zip(spans, tokens)):
        words = " ".join(doc.text[s.start:min(s.end, s.start + 300)].split()[:10])
        if len(words) > 70:
            words = words[:69] + "…"
        print(f"{i + 1:>4}  {s.start:>{w}}  {s.end:>{w}}  {n:>6}  {words}")
    print(f"audit: {a.summary}")
    if args.json:
        write_json(payload, args.json)
        print(f"wrote {args.json}")
    return 0
