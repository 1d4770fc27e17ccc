"""The runtime's C++ tests (native/tests), built with CMake and run from here, so the README's
single test command covers them. With --sanitizers (CI does it) they are also built and run under
ThreadSanitizer, and under AddressSanitizer + UndefinedBehaviorSanitizer; any report fails."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# halt_on_error: the first report ends the run with a non-zero status, whatever the test says.
SANITIZER_OPTIONS = {
    "TSAN_OPTIONS": "halt_on_error=1 second_deadlock_stack=1",
    "ASAN_OPTIONS": "halt_on_error=1 detect_leaks=1 detect_stack_use_after_return=1",
    "UBSAN_OPTIONS": "halt_on_error=1 print_stacktrace=1",
}

# The plain build is the extension's build type: with a compiler cache (CI's), the runtime's files
# come from the extension's build and only the tests compile. The sanitizers' keep debug lines.
BUILDS = [
    pytest.param("native-tests", "", id="plain"),
    pytest.param("native-tests-thread", "thread", id="thread", marks=pytest.mark.sanitizer),
    pytest.param("native-tests-address", "address,undefined", id="address+undefined",
                 marks=pytest.mark.sanitizer),
]


def build(name: str, sanitize: str) -> Path:
    if shutil.which("cmake") is None:
        pytest.fail("cmake is needed to build the runtime's C++ tests (pip install '.[test]')")
    build_dir = ROOT / "build" / name
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    for command in (
        ["cmake", "-S", str(ROOT), "-B", str(build_dir), *generator, "-DLABCTL_BUILD_TESTS=ON",
         f"-DCMAKE_BUILD_TYPE={'RelWithDebInfo' if sanitize else 'Release'}", f"-DLABCTL_SANITIZE={sanitize}"],
        ["cmake", "--build", str(build_dir), "--target", "runtime_tests",
         "--parallel", str(os.cpu_count() or 2)],
    ):
        result = subprocess.run(command, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return build_dir / "runtime_tests"


@pytest.mark.parametrize("name, sanitize", BUILDS)
def test_runtime_passes_its_cpp_tests(name, sanitize):
    runtime_tests = build(name, sanitize)
    result = subprocess.run([str(runtime_tests)], capture_output=True, text=True, timeout=1800,
                            env={**os.environ, **SANITIZER_OPTIONS})
    print(result.stdout)
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-8000:]
    assert result.stdout.strip().splitlines()[-1].endswith(" passed, 0 failed")
    assert "WARNING: ThreadSanitizer" not in result.stderr and "runtime error:" not in result.stderr
