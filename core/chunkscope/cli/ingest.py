"""``chunkscope ingest``: load a document and show what was found."""

from __future__ import annotations

import argparse

from chunkscope.cli.common import add_input_arguments, check_json_target, check_language, read_input, write_json


def add_ingest(sub) -> None:
    """Declare ``chunkscope ingest``."""
    p = sub.add_parser(
        "ingest",
        help="load a document and show what was found",
        description="Load a document and print its name, format, language, characters, o200k tokens, "
        "pages, blocks by kind and headings.",
    )
    add_input_arguments(p)
    p.add_argument("--json", metavar="OUT", help="also write the Document as JSON to OUT ('-' = stdout only); "
                   "a PDF's extraction health is under the top-level key \"health\"")
    p.add_argument("--strip-running", action="store_true",
                   help="PDF: remove running page headers/footers (default: keep them as layout comments); "
                   "gives another text, hence another document")
    p.set_defaults(func=cmd_ingest)


def cmd_ingest(args: argparse.Namespace) -> int:
    """Read one document and print (or write) what was extracted."""
    from chunkscope.ingest.health import format_health
    from chunkscope.ingest.summary import format_summary

    check_language(args.language)
    check_json_target(args.json)
    doc = read_input(args, running="strip" if args.strip_running else "mark")
    out = doc.to_dict()
    if "health" in doc.meta:
        out["health"] = doc.meta["health"]
    if args.json == "-":
        write_json(out, "-")
        return 0
    print(format_summary(doc))
    if "health" in doc.meta:
        print(format_health(doc.meta["health"]))
    if "parse_seconds" in doc.meta:
        print(f"parsed in   {doc.meta['parse_seconds']:.2f} s")
    if args.json:
        write_json(out, args.json)
        print(f"wrote       {args.json}")
    return 0


