"""The published studies labctl reproduces, cited by their publications. The table itself is
native/kernels/studies.hpp (kernels cite it too), read through labctl.native; a Study is plain data
that a run stores, so a report can cite it without the extension."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cache


@dataclass(frozen=True)
class Study:
    key: str  # how kernels and experiment files name it; empty for one an experiment describes
    title: str
    author: str  # a person, or the site that published it
    published: str  # where: a blog, a site, a library's documentation
    year: int
    url: str

    @property
    def citation(self) -> str:
        """"Title", Author, where, year. URL"""
        where = f", {self.published}" if self.published else ""
        return f'"{self.title}", {self.author}{where}, {self.year}. {self.url}'

    def to_dict(self) -> dict:
        return asdict(self)


@cache
def catalogue() -> dict[str, Study]:
    """The studies of the native table, by key."""
    from labctl import native

    return {s["key"]: Study(**s) for s in native.studies()}
