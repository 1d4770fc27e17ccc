"""`python -m labctl`: the same as the `labctl` command."""

from labctl.cli import main

main()
