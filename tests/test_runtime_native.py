"""The runtime's C++ tests (native/tests), built with CMake and run from here, so the README's
single test command covers them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def build(name: str, *cmake_args: str) -> Path:
    build_dir = ROOT / "build" / name
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
                    "-DLABCTL_BUILD_TESTS=ON", "-DCMAKE_BUILD_TYPE=RelWithDebInfo", *cmake_args],
                   check=True, capture_output=True, text=True)
    subprocess.run(["cmake", "--build", str(build_dir), "--target", "runtime_tests",
                    "--parallel", str(os.cpu_count() or 2)], check=True, capture_output=True, text=True)
    return build_dir / "runtime_tests"


@pytest.fixture(scope="module")
def runtime_tests() -> Path:
    if shutil.which("cmake") is None:
        pytest.fail("cmake is needed to build the runtime's C++ tests (pip install '.[test]')")
    return build("native-tests")


def test_runtime_passes_its_cpp_tests(runtime_tests):
    result = subprocess.run([str(runtime_tests)], capture_output=True, text=True, timeout=600)
    print(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1].endswith(" passed, 0 failed")
