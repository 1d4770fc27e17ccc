"""What the savina_ kernels' test files share: the dispatchers each kernel is run on beside its
oracle, parameters resolved as a run resolves them, and the bits and FNV-1a fold their hand-worked
cases spell answers with (native/kernels/savina/random.hpp's fnv_fold)."""

from __future__ import annotations

import struct

from labctl import _native

DISPATCHERS = [{"dispatcher": "one_thread"}, {"dispatcher": "thread_pool", "threads": 2},
               {"dispatcher": "work_stealing", "threads": 2}, {"dispatcher": "active_obj"}]


def resolved(kernel: str, params: dict) -> dict:
    return _native.validate(kernel, params, scoped=False)


def bits(x: float) -> int:
    """A double's IEEE bit pattern."""
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def fnv(*words: int) -> int:
    """FNV-1a over 64-bit words, from its basis."""
    h = 0xCBF29CE484222325
    for w in words:
        h = (h ^ w) * 0x100000001B3 % 2**64
    return h
