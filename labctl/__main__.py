"""`python -m labctl` and the `labctl` command: the CLI, and Ctrl-C while it is still starting
(importing the extension, pandas, matplotlib) ending it as any interruption does: 130, one line.
SIGTERM (a `kill`, a batch system's time limit) is taken as Ctrl-C by every command, so that
what a command cleans up on an interruption (a report's staging folder, a sweep's run marked
interrupted, a build's compilers) is cleaned up then too."""

import atexit
import os
import signal
import sys

from labctl.vocabulary.exits import EXIT_INTERRUPTED  # a plain module: imports nothing


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _end_interrupted() -> None:
    """Exit 130 now, after the interpreter's exit handlers. Not `sys.exit`: CPython marks a
    KeyboardInterrupt that passes through `exec()` of a string (scipy's array-API layer imports
    numpy so, and a report or a sweep imports it lazily) as unhandled for good, and at exit
    turns any exit code into death by SIGINT (-2, no line said), even when labctl caught it.
    One run in four of a report interrupted in its first second ended so."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    atexit._run_exitfuncs()  # what a normal exit would run: multiprocessing's children, logging
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def run() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        from labctl.cli import main

        main()
    except KeyboardInterrupt:
        print("labctl: interrupted", file=sys.stderr)
        _end_interrupted()
    except SystemExit as end:
        if end.code == EXIT_INTERRUPTED:  # the CLI said "interrupted" and ends so
            _end_interrupted()
        raise
    finally:
        # The command has ended and its exit code is set: a Ctrl-C while the interpreter shuts
        # down must not turn that exit into death by SIGINT (exit -2, no line said), which a report
        # finished just before the signal met in CI.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    run()
