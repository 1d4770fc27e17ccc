"""The files labctl ships beside its code: the experiment files (experiments/) and the external
runtimes' folders (peers/). An installed package holds them inside it (CMake installs them into
the wheel); a checkout (an editable install, the tests) has them at the top of the repository."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # labctl/, above this layer's folder


def folder(name: str) -> Path | None:
    """The shipped folder `name` ("experiments", "peers"), or None if this install has none."""
    inside = PACKAGE / name
    if inside.is_dir():
        return inside
    # A checkout: the folder beside the package, in the repository that holds the build files
    # (so that an unrelated "experiments" folder beside site-packages is never taken).
    checkout = PACKAGE.parent
    if (checkout / "CMakeLists.txt").is_file() and (checkout / name).is_dir():
        return checkout / name
    return None
