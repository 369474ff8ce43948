"""Ctrl-C as an interrupt, never a document's failure (the ``chunkscope`` command installs it).

``catch_interrupts`` remembers SIGINT in ``INTERRUPTED`` before raising, so work running in threads can see
it and stop; ``sigint_held`` holds Ctrl-C back while a process pool starts its workers.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Iterator

INTERRUPTED = threading.Event()  # set by catch_interrupts' handlers, while they are installed


def _on_sigint(signum: int, frame: Any) -> None:
    INTERRUPTED.set()
    raise KeyboardInterrupt


def catch_interrupts() -> Callable[[], None]:
    """Make Ctrl-C an interrupt, never a document's failure; return what restores the previous handlers.

    The ``chunkscope`` command calls it; the restore also clears ``INTERRUPTED``.

    The analysis runs model calls in threads while its own thread helps them, and a KeyboardInterrupt raised
    in the middle of such a call can be caught there and resurface in another thread as some other error
    (``KeyError: 'result'``) or not at all. So SIGINT is remembered in ``INTERRUPTED`` before it is raised (only
    where Python's default handler is installed: an ignored SIGINT stays ignored), a thread that dies of the
    interrupt sets it too and prints no traceback, and once it is set :func:`analyze_file` stops the
    analysis and raises KeyboardInterrupt whatever the outcome: the document is neither written nor recorded
    as failed, and a resume analyzes it again."""
    INTERRUPTED.clear()
    prev_hook = threading.excepthook

    def hook(a: threading.ExceptHookArgs) -> None:
        """A thread that died of the interrupt sets it, with no traceback."""
        if a.exc_type is not None and issubclass(a.exc_type, KeyboardInterrupt):
            INTERRUPTED.set()
            return
        prev_hook(a)

    threading.excepthook = hook
    installed = (threading.current_thread() is threading.main_thread()
                 and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if installed:
        signal.signal(signal.SIGINT, _on_sigint)

    def restore() -> None:
        """Put the previous handlers back and clear ``INTERRUPTED``."""
        INTERRUPTED.clear()
        threading.excepthook = prev_hook
        if installed and signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)

    return restore



@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """Hold Ctrl-C back while process pool workers start.

    They start with SIGINT blocked (inherited from this
    thread; ``_init_pool_worker`` then ignores it), so none prints a traceback from its start-up, and here it
    raises KeyboardInterrupt only once the block is over, never halfway through starting a worker (one the
    pool does not know yet would be left running). multiprocessing's resource tracker starts the same way."""
    held: list[int] = []
    swap = threading.current_thread() is threading.main_thread() and callable(signal.getsignal(signal.SIGINT))
    prev = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum)) if swap else None
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") else None
    try:
        yield
    finally:
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # one pending now comes in, to the held list
        if swap:
            signal.signal(signal.SIGINT, prev)
            if held and callable(prev):
                prev(signal.SIGINT, None)  # raises KeyboardInterrupt, as it would have

