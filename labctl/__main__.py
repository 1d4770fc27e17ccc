"""`python -m labctl` and the `labctl` command: the CLI, and Ctrl-C while it is still starting
(importing the extension, pandas, matplotlib) ending it as any interruption does: 130, one line."""

import sys


def run() -> None:
    try:
        from labctl.cli import main

        main()
    except KeyboardInterrupt:
        print("labctl: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    run()
