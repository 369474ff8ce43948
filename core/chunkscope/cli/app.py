"""``chunkscope app``: start the Streamlit app; ``--share`` turns on shared mode (chunkscope.sharing).

Local (default): listens on 127.0.0.1 only. ``--share``: listens on the policy's address (0.0.0.0
unless ``CHUNKSCOPE_BIND`` or ``bind`` in the config file says otherwise) with the shared-mode
policy on. One upload limit: Streamlit's ``server.maxUploadSize`` and ingest's
``CHUNKSCOPE_MAX_BYTES`` are set from the same number.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path


def add_app(sub) -> None:
    """Declare ``chunkscope app``."""
    p = sub.add_parser(
        "app",
        help="start the web app (127.0.0.1; --share: shared mode for a team, see docs/sharing.md)",
        description="Start the ChunkScope web app. Without --share it listens on 127.0.0.1 only. --share turns "
        "on shared mode: uploads only (or folders under the configured root), per-session workspaces deleted "
        "when the session ends, the server's LLM key only for operator endpoints, operator-listed embedding "
        "models, limits on upload size, pages, tokens and concurrent analyses. Settings: environment variables "
        "CHUNKSCOPE_* or a TOML file (--config, $CHUNKSCOPE_SHARE_CONFIG). Put it behind a reverse proxy with "
        "authentication: Streamlit has no login.",
    )
    p.add_argument("--share", action="store_true", help="shared mode (also: CHUNKSCOPE_SHARED=1)")
    p.add_argument("--config", metavar="TOML", help="operator settings file, which must exist (default: "
                   "$CHUNKSCOPE_SHARE_CONFIG, which must exist too, else <user config dir>/chunkscope/share.toml if present)")
    p.add_argument("--bind", metavar="ADDRESS", help="address to listen on (default 127.0.0.1; with --share 0.0.0.0)")
    p.add_argument("--port", type=int, metavar="N", help="port (default 8501)")
    p.add_argument("--reload", action="store_true",
                   help="developers: rerun the app when its source files change (Streamlit's file watcher; off by "
                        "default: it watches the whole folder, .venv included, and floods the terminal)")
    p.add_argument("--print-command", action="store_true", help="print the streamlit command and settings, do not start")
    p.set_defaults(func=cmd_app)


def app_script() -> Path:
    """The Streamlit script (app.py) of a source checkout; CLIError when there is none."""
    import chunkscope
    from chunkscope.cli.common import CLIError

    here = Path(chunkscope.__file__).resolve().parents[2] / "app.py"  # core/chunkscope/__init__.py
    if not here.is_file():
        raise CLIError("app.py not found next to the chunkscope sources: run from a source checkout (make run)")
    return here


def launch_plan(args: argparse.Namespace, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """(command, environment) that start the app as asked; ShareError (a ValueError) when the
    operator settings are invalid."""
    from chunkscope.caching import CACHE_DIR_ENV
    from chunkscope.sharing import CONFIG_ENV, SHARED_ENV, load_policy, settings_file

    env = dict(env)
    if args.share:
        env[SHARED_ENV] = "1"
    if args.config:  # a file named on purpose must be there: a typo must not fall back to the defaults
        env[CONFIG_ENV] = str(settings_file(args.config, f"--config: {args.config}"))
    if args.bind:
        env["CHUNKSCOPE_BIND"] = args.bind
    if args.port:
        env["CHUNKSCOPE_PORT"] = str(args.port)
    if not env.get("CHUNKSCOPE_MAX_UPLOAD_MB", "").strip() and env.get("CHUNKSCOPE_MAX_BYTES", "").strip():
        try:  # an existing ingest limit becomes the one limit (in whole MB, rounded up)
            env["CHUNKSCOPE_MAX_UPLOAD_MB"] = str(max(1, -(-int(float(env["CHUNKSCOPE_MAX_BYTES"])) // (1024 * 1024))))
        except ValueError:
            pass
    pol = load_policy(env)  # before any temp root: a workspace_root in the TOML file counts too
    if pol.shared and "workspace_root" not in pol.given:
        import tempfile

        # none configured: a fresh private root per server run (0700), deleted with everything in it when
        # the app stops
        pol = replace(pol, workspace_root=Path(tempfile.mkdtemp(prefix="chunkscope-share-")))
        env["_CHUNKSCOPE_OWN_WORKSPACE_ROOT"] = "1"
    env["CHUNKSCOPE_MAX_BYTES"] = str(pol.max_upload_bytes)  # the one upload limit, ingest side
    if pol.shared:
        env["CHUNKSCOPE_MAX_PAGES"] = str(pol.max_pages)  # ingest refuses longer PDFs before parsing them
    if pol.shared:
        env[SHARED_ENV] = "1"
        root = pol.workspace_root.absolute()
        env["CHUNKSCOPE_WORKSPACE_ROOT"] = str(root)  # the server uses the root chosen here (and shown)
        # disk caches of this server run live in its workspace root, not the user's cache
        env.setdefault(CACHE_DIR_ENV, str(root / "cache"))
    cmd = [sys.executable, "-m", "streamlit", "run", str(app_script()),
           "--server.headless", "true",
           "--server.address", pol.bind,
           "--server.port", str(pol.port),
           "--server.maxUploadSize", str(pol.max_upload_mb),  # the one upload limit, Streamlit side
           "--browser.gatherUsageStats", "false"]
    if pol.shared or not args.reload:  # no file watcher, no developer menu ("Deploy") for users
        cmd += ["--server.fileWatcherType", "none", "--client.toolbarMode", "viewer"]
    if pol.shared:
        cmd += ["--server.enableXsrfProtection", "true"]
    return cmd, env


def cmd_app(args: argparse.Namespace) -> int:
    """Launch the app (or print the command and environment with ``--print-command``)."""
    from chunkscope.caching import CACHE_DIR_ENV
    from chunkscope.cli.common import CLIError
    from chunkscope.extras import require
    from chunkscope.sharing import load_policy

    require("streamlit", "chunkscope app", CLIError)  # one line naming the extra, before anything starts
    cmd, env = launch_plan(args, dict(os.environ))
    pol = load_policy(env)
    if args.print_command:
        import json

        if env.get("_CHUNKSCOPE_OWN_WORKSPACE_ROOT"):
            shutil.rmtree(pol.workspace_root, ignore_errors=True)
        shown = pol.public_dict()
        if pol.shared:  # where uploads, results and disk caches go (the operator's view, not the users')
            shown["workspace_root"] = ("a fresh private temp dir per run, deleted when the app stops"
                                       if env.get("_CHUNKSCOPE_OWN_WORKSPACE_ROOT") else str(pol.workspace_root))
            shown["cache_dir"] = env.get(CACHE_DIR_ENV)
        print(" ".join(cmd))
        print(json.dumps(shown, indent=1))
        return 0
    where = f"http://{pol.bind}:{pol.port}"
    print(f"chunkscope app: {'shared mode' if pol.shared else 'local'} on {where}", file=sys.stderr)
    if pol.bind in ("0.0.0.0", "::", ""):  # every interface: a proxy in front is bypassed by anyone on the network
        print("chunkscope app: warning: listening on every network interface, and the app has no login: anyone "
              "who can reach this port gets it; behind an authenticating reverse proxy use --bind 127.0.0.1 "
              "(docs/sharing.md)", file=sys.stderr)
    proc = subprocess.Popen(cmd, env=env)
    # a service manager or `kill` stops this process: the server must go with it (it kept the port before)
    forwarded = [sig for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if sig]
    previous = {sig: signal.signal(sig, lambda signum, _frame: proc.send_signal(signum)) for sig in forwarded}
    try:
        rc = proc.wait()
        return 128 - rc if rc < 0 else rc  # killed by a signal: the shell's convention (143 for SIGTERM)
    except KeyboardInterrupt:  # Ctrl-C reached the server too (same process group): let it close
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if pol.shared and env.get("_CHUNKSCOPE_OWN_WORKSPACE_ROOT"):  # this run's workspaces and caches go with it
            shutil.rmtree(pol.workspace_root, ignore_errors=True)
