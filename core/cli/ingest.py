"""``chunkscope ingest``: load a document and show what was found."""

from __future__ import annotations

import argparse

from chunkscope.cli.common import add_input_arguments, load_input, write_json


def add_ingest(sub) -> None:
    p = sub.add_parser(
        "ingest",
        help="load a document and show what was found",
        description="Load a document and print its name, format, language, characters, o200k tokens, "
        "pages, blocks by kind and headings.",
    )
    add_input_arguments(p)
    p.add_argument("--json", metavar="OUT", help="also write the Document as JSON to OUT ('-' = stdout only)")
    p.set_defaults(func=cmd_ingest)


def cmd_ingest(args: argparse.Namespace) -> int:
    from chunkscope.ingest.summary import format_summary

    doc = load_input(args.file, args.max_bytes)
    if args.json == "-":
        write_json(doc.to_dict(), "-")
        return 0
    print(format_summary(doc))
    if "parse_seconds" in doc.meta:
        print(f"parsed in   {doc.meta['parse_seconds']:.2f} s")
    if args.json:
        write_json(doc.to_dict(), args.json)
        print(f"wrote       {args.json}")
    return 0


