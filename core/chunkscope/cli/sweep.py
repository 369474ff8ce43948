"""``chunkscope sweep``: one chunker, one parameter over a range, one row of metrics per value."""

from __future__ import annotations

import argparse
import sys
import time

from chunkscope.report import METRICS


def add_sweep(sub) -> None:
    """Declare ``chunkscope sweep``."""
    from chunkscope.cli.common import add_input_arguments
    from chunkscope.cli.settings import add_analysis_options

    p = sub.add_parser(
        "sweep",
        help="sweep one chunker parameter over a range: chunks, total tokens, five metrics, score per value",
        description="Run one chunker with one parameter swept over a range (the other parameters from "
        "--set, then --config, then the defaults) and print, per value, the chunks, the total tokens "
        "embedded (index cost), RC, ICC, DCC, BI, SC and the score. Metric settings as for analyze. "
        "Ctrl-C stops after the current value and keeps the rows so far.",
        conflict_handler="resolve",
    )
    add_input_arguments(p)
    add_analysis_options(p)
    p.add_argument("--chunker", required=True, metavar="ID", help="chunker id, e.g. recursive-1100 or recursive-1100+pp")
    # replaces analyze's --param ID.NAME=VALUE: here --param is the swept parameter
    p.add_argument("--param", required=True, metavar="NAME=START:STOP:STEP",
                   help="parameter and values, e.g. chunk_size=200:1500:100 (or NAME=a,b,c)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="fix another parameter of the chunker for every point (repeatable)")
    p.add_argument("--json", metavar="OUT", help='write {"chunker", "param", "rows": [...]} to OUT (- = stdout)')
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=cmd_sweep)


def _fmt(v, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def row_line(param: str, row: dict) -> str:
    """One sweep row as a table line (or the reason the value is invalid)."""
    w = max(10, len(param))
    if row.get("error"):
        return f"{str(row['value']):>{w}}  invalid: {row['error']}"
    m = row["metrics"]
    return (f"{str(row['value']):>{w}} {row['chunks']:>7} {row['tokens']:>9} "
            + " ".join(f"{_fmt(m.get(k)):>6}" for k in METRICS) + f" {_fmt(row['score']):>6}")


def header(param: str) -> str:
    """The sweep table's header line."""
    return f"{param:>10} {'chunks':>7} {'tokens':>9} " + " ".join(f"{k:>6}" for k in METRICS) + f" {'score':>6}"


def swept_values(args: argparse.Namespace) -> tuple[str, list]:
    """(parameter, values) of ``--param NAME=START:STOP:STEP`` (or ``NAME=a,b,c``), checked against the chunker."""
    from chunkscope import tune
    from chunkscope.chunkers import registry
    from chunkscope.cli.common import CLIError

    if "=" not in args.param:
        raise CLIError(f"--param: expected NAME=START:STOP:STEP, got {args.param!r}")
    name, rng = (x.strip() for x in args.param.split("=", 1))
    values = tune.parse_range(rng)
    spec = registry.get(args.chunker)
    if name not in {p.name for p in spec.params}:
        raise CLIError(f"--param: {args.chunker} has no parameter {name!r} "
                       f"(parameters: {', '.join(p.name for p in spec.params) or 'none'})")
    pspec = next(p for p in spec.params if p.name == name)
    odd = [v for v in values if pspec.type is int and not float(v).is_integer()]
    if odd:  # never rounded behind the user's back (50.5 would run as 50)
        raise CLIError(f"--param: {name} takes whole numbers; {odd[0]} is not (check START and STEP)")
    return name, values


def fixed_values(args: argparse.Namespace, swept: str) -> dict[str, str]:
    """The other parameters, fixed by ``--set NAME=VALUE`` (never the swept one)."""
    from chunkscope.cli.common import CLIError

    fixed = {}
    for item in args.set:
        if "=" not in item:
            raise CLIError(f"--set: expected NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        if k.strip() == swept:
            raise CLIError(f"--set {k.strip()}: that is the parameter swept by --param; set it in one place")
        fixed[k.strip()] = v.strip()
    return fixed


def _run_rows(args: argparse.Namespace, doc, name: str, values: list, settings, base: dict, out) -> tuple[list, bool]:
    """Each value's row, printed as it comes; (rows, cancelled): Ctrl-C keeps the rows so far."""
    from chunkscope import tune
    from chunkscope.analysis import Resources

    resources = Resources(settings.embedder, settings.embedding_mode, backend=settings.embedding_backend)
    quiet = args.quiet or args.json == "-"
    rows: list[dict] = []
    t0 = time.perf_counter()
    try:
        for i, (row, _) in enumerate(tune.iter_sweep(doc, args.chunker, name, values, settings, resources, base)):
            rows.append(row)
            print(row_line(name, row), file=out, flush=True)
            if not quiet:
                print(f"[{time.perf_counter() - t0:6.1f}s] sweep {i + 1}/{len(values)} {name}={row['value']}",
                      file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print(f"interrupted: {len(rows)} of {len(values)} values done", file=sys.stderr)
        return rows, True
    return rows, False


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run the sweep: a row per value on stdout (or stderr with ``--json -``), the conclusion, the JSON."""
    from chunkscope import tune
    from chunkscope.cli.common import CLIError, check_json_target, check_language, read_input, write_json
    from chunkscope.cli.settings import settings_from_args

    check_json_target(args.json)
    check_language(args.language)  # cheap: before settings_from_args loads an embedding model asked for
    name, values = swept_values(args)
    fixed = fixed_values(args, name)
    settings = settings_from_args(args)  # the analysis options' --param (ID.NAME=VALUE) is this command's own
    base = {**settings.params.get(args.chunker, {}), **fixed}
    bad = [tune.problems(args.chunker, {**base, name: v}) for v in values]
    if all(bad):  # some invalid points are fine (rows with the reason); all invalid is a usage error
        raise CLIError(f"{args.chunker}: {name}={values[0]}: " + "; ".join(bad[0]))

    doc = read_input(args)
    out = sys.stdout if args.json != "-" else sys.stderr
    print(f"{doc.name}: sweep of {args.chunker} {name} over {len(values)} values "
          f"({values[0]} .. {values[-1]})", file=out)
    print(header(name), file=out)
    rows, cancelled = _run_rows(args, doc, name, values, settings, base, out)
    summary = tune.sweep_summary(rows, name, complete=not cancelled)
    if summary:
        print(summary, file=out)
    if args.json:
        data = {"chunker": args.chunker, "param": name, "rows": rows}
        if cancelled:
            data["cancelled"] = True
        write_json(data, args.json)
        if args.json != "-":
            print(f"wrote {args.json}", file=out)
    return 130 if cancelled else 0
