"""`python -m labctl` and the `labctl` command: the CLI, and Ctrl-C while it is still starting
(importing the extension, pandas, matplotlib) ending it as any interruption does: 130, one line."""

import signal
import sys


def run() -> None:
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
