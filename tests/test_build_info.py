"""Text passed from CMake to C++ (the extension's build facts, CAF's reason for being left out)
goes through a generated header, escaped by cmake/c_string.cmake: no character can break the
build. A `;` in CAF's reason once split a `-D` definition and the shell died on its `(`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from labctl import _native

ROOT = Path(__file__).resolve().parent.parent

NASTY = 'CAF not found (caf/all.hpp: X-NOTFOUND); apt-get "install" libcaf-dev\\n $(rm -rf /) `x` \\ ; # é'


def test_any_text_survives_cmake_into_a_cpp_string_literal(tmp_path):
    if shutil.which("cmake") is None or shutil.which("g++") is None:
        pytest.fail("cmake and g++ are needed (pip install '.[test]')")
    (tmp_path / "value.txt").write_text(NASTY + "\nsecond line", encoding="utf-8")
    (tmp_path / "out.hpp.in").write_text("inline constexpr const char value[] = @QUOTED@;\n")
    (tmp_path / "make.cmake").write_text(
        f'include("{ROOT / "cmake" / "c_string.cmake"}")\n'
        'file(READ "${CMAKE_CURRENT_LIST_DIR}/value.txt" text)\n'
        'labctl_c_string(QUOTED "${text}")\n'
        'configure_file("${CMAKE_CURRENT_LIST_DIR}/out.hpp.in" "${CMAKE_CURRENT_LIST_DIR}/out.hpp" @ONLY)\n')
    subprocess.run(["cmake", "-P", str(tmp_path / "make.cmake")], check=True, capture_output=True)
    (tmp_path / "print.cpp").write_text('#include <cstdio>\n#include "out.hpp"\n'
                                        'int main() { std::fputs(value, stdout); }\n')
    subprocess.run(["g++", "-std=c++20", "-o", str(tmp_path / "print"), str(tmp_path / "print.cpp")],
                   check=True, capture_output=True, cwd=tmp_path)
    printed = subprocess.run([str(tmp_path / "print")], capture_output=True, check=True).stdout
    assert printed.decode("utf-8") == NASTY + "\nsecond line"


def test_build_info_says_why_caf_is_missing_in_one_piece():
    info = _native.build_info()
    assert set(info) >= {"compiler", "flags", "build_type", "caf_missing", "caf_kernels"}
    assert "caf_skynet" in info["caf_kernels"].split()
    if info["caf_missing"]:  # the whole reason, `;` and all, not a piece of it
        assert "apt-get install libcaf-dev" in info["caf_missing"] or "LABCTL_WITH_CAF" in info["caf_missing"]
