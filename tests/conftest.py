"""Shared helpers for the tests: running the `labctl` command in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def run_labctl(*args: str, env: dict[str, str] | None = None, timeout: float = 300):
    """Runs `python -P -m labctl ARGS` (what the `labctl` script runs) and returns the result."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "labctl", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def labctl():
    return run_labctl
