"""The exit codes of labctl's commands, and of the sweeps a history starts in other processes."""

EXIT_FAILED = 1  # a kernel failed (wrong answer, crash, timeout), or a store or an output could not be written
EXIT_USAGE = 2  # bad input: unknown kernel or parameter, a bad value, a file that is not a store
EXIT_INTERRUPTED = 130  # Ctrl-C, or SIGTERM, during any command
