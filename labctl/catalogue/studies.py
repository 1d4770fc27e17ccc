"""The published studies labctl reproduces, cited by their publications. The table itself is
native/kernels/framework/studies.hpp (kernels cite it too), read through labctl.catalogue.native; a Study is plain data
that a run stores, so a report can cite it without the extension."""

from __future__ import annotations

from functools import cache

from labctl.vocabulary.schema import Study


@cache
def catalogue() -> dict[str, Study]:
    """The studies of the native table, by key."""
    from labctl.catalogue import native

    return {s["key"]: Study(**s) for s in native.studies()}
