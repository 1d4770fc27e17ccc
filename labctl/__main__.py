"""`python -m labctl` and the `labctl` command: the CLI, and Ctrl-C while it is still starting
(importing the extension, pandas, matplotlib) ending it as any interruption does: 130, one line.
SIGTERM (a `kill`, a batch system's time limit) is taken as Ctrl-C by every command, so that
what a command cleans up on an interruption (a report's staging folder, a sweep's run marked
interrupted, a build's compilers) is cleaned up then too."""

import signal
import sys


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run() -> None:
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        from labctl.cli import main

        main()
    except KeyboardInterrupt:
        print("labctl: interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        # The command has ended and its exit code is set: a Ctrl-C while the interpreter shuts
        # down must not turn that exit into death by SIGINT (exit -2, no line said), which a report
        # finished just before the signal met in CI.
        signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    run()
