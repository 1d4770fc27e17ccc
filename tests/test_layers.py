"""The layers of labctl (docs/layout.md): a layer is a folder, labctl/<layer>/, and a module's
layer is the folder it is in; it imports only from its own layer and the layers it stands on.
Every import counts: at the top of a module or inside a function, `import labctl.x`, `from labctl
import x`, `from labctl.x import y`, relative ones, and importlib.import_module (or __import__) of
a literal or literal-prefixed name. Only the catalogue's native.py opens the extension,
labctl._native. There is no list of exceptions, and no list of modules: a module directly under
labctl/ other than __init__.py, __main__.py and results.py (the notebooks' public face) is in no
layer, and fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "labctl"

# The layers, lowest first, each a folder of labctl. Data flows down this list and back up only
# through the store: the run side and the read side both stand on the store, and neither imports
# the other; the read side needs neither the catalogue (the extension) nor the plan, since a run
# stores what it used.
LAYERS = ["vocabulary", "catalogue", "plan", "store", "run", "read", "history", "cli"]
STANDS_ON = {
    "vocabulary": set(),
    "catalogue": {"vocabulary"},
    "plan": {"vocabulary", "catalogue"},
    "store": {"vocabulary"},
    "run": {"vocabulary", "catalogue", "plan", "store"},
    "read": {"vocabulary", "store"},
    "history": {"vocabulary", "catalogue", "plan", "store", "run", "read"},
    "cli": {"vocabulary", "catalogue", "plan", "store", "run", "read", "history"},
}
# The only modules outside the layers' folders, and the layer each speaks for: labctl itself
# (__version__, which every layer may read), `python -m labctl` (the CLI's), and labctl.results,
# the read side's results named where notebooks import them.
TOP = {"__init__": "vocabulary", "__main__": "cli", "results": "read"}
EXTENSION = "labctl._native"
DOOR = "labctl.catalogue.native"  # the only module that imports the extension
FACE = "labctl.results"  # the notebooks' name for labctl.read.results: nothing of labctl imports it


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    """Whether labctl.x.y names a module or package of the source tree (or the extension)."""
    if name == EXTENSION:
        return True
    relative = Path(*name.split("."))
    return (PACKAGE.parent / relative).with_suffix(".py").is_file() or (PACKAGE.parent / relative).is_dir()


def imported(path: Path) -> list[tuple[int, str]]:
    """Every labctl module the file imports, with its line."""
    tree = ast.parse(path.read_text(), str(path))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # `from labctl import x`: x is the module labctl.x where there is one, else a name of labctl.
            for alias in node.names:
                sub = f"{origin}.{alias.name}"
                found.append((node.lineno, sub if is_module(sub) else origin))
        elif isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((node.lineno, first.value))
            elif isinstance(first, ast.JoinedStr) and first.values and isinstance(first.values[0], ast.Constant):
                found.append((node.lineno, str(first.values[0].value).rstrip(".")))
    return [(line, name) for line, name in found if name == "labctl" or name.startswith("labctl.")]


def layer(name: str) -> str | None:
    """The layer of a labctl module: the folder under labctl/ it is in (labctl.<layer>.x), or
    TOP's for the few modules directly under labctl/; None for a module in no layer."""
    parts = name.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    if len(parts) > 2 or top in LAYERS:
        return top if top in LAYERS else None
    return TOP.get(top)


def place(path: Path) -> str | None:
    """The layer of a source file of labctl: the folder under labctl/ it is in, or TOP's for a
    file directly under labctl/; None for a file in no layer."""
    parts = path.relative_to(PACKAGE).parts
    if len(parts) == 1:
        return TOP.get(path.stem)
    return parts[0] if parts[0] in LAYERS else None


def placement_errors(paths) -> list[str]:
    """Each source that is in no layer: a module directly under labctl/ that TOP does not name,
    or one in a folder that is no layer."""
    errors = []
    for path in paths:
        if place(path) is None:
            where = path.relative_to(PACKAGE.parent)
            errors.append(f"{where}: in no layer: a module belongs in its layer's folder, labctl/<layer>/ "
                          f"({', '.join(LAYERS)}); see docs/layout.md")
    return errors


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_the_layers_are_the_folders_of_the_package():
    assert list(STANDS_ON) == LAYERS
    for below in STANDS_ON.values():
        assert below <= set(LAYERS)
    assert set(TOP.values()) <= set(LAYERS)
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and any(p.rglob("*.py"))}
    assert folders == set(LAYERS), folders ^ set(LAYERS)
    for name in LAYERS:
        assert (PACKAGE / name / "__init__.py").is_file(), f"labctl/{name}/ is no package"
    assert {p.stem for p in PACKAGE.glob("*.py")} == set(TOP)


def test_every_module_is_in_a_layer():
    assert SOURCES
    errors = placement_errors(SOURCES)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("relative", ["helpers.py", "store.py", "tools/helpers.py", "native.py"])
def test_a_module_outside_the_layers_folders_is_found(relative):
    # A module dropped directly under labctl/ (or where a layer's module used to be), or in a
    # folder that is no layer, belongs to none.
    errors = placement_errors([PACKAGE / relative])
    assert errors == [f"labctl/{relative}: in no layer: a module belongs in its layer's folder, labctl/<layer>/ "
                      f"({', '.join(LAYERS)}); see docs/layout.md"]


def layering_errors(paths) -> list[str]:
    errors = []
    for path in paths:
        here = module_name(path)
        mine = place(path)
        if mine is None:
            errors += placement_errors([path])
            continue
        for line, name in imported(path):
            where = f"{path.relative_to(PACKAGE.parent)}:{line}"
            if name == EXTENSION or name.startswith(EXTENSION + "."):
                if here != DOOR:
                    errors.append(f"{where}: {here} imports the extension; only {DOOR} does")
                continue
            if name == FACE:
                errors.append(f"{where}: {here} imports {FACE}, the notebooks' name; import labctl.read.results")
                continue
            theirs = layer(name)
            if theirs is None:
                errors.append(f"{where}: {here} imports {name}, which is in no layer")
            elif theirs != mine and theirs not in STANDS_ON[mine]:
                errors.append(f"{where}: {here} ({mine}) imports {name} ({theirs})")
    return errors


def test_each_module_imports_only_its_layer_and_the_layers_below():
    errors = layering_errors(SOURCES)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("source, expected", [
    ("from labctl.run import runner\n", "imports labctl.run.runner (run)"),
    ("import labctl.run.worker\n", "imports labctl.run.worker (run)"),
    ("from labctl import history\n", "imports labctl.history (history)"),
    ("def f():\n    from labctl.history import series\n", "imports labctl.history (history)"),
    ("from labctl.plan.experiment import Plan\n", "imports labctl.plan.experiment (plan)"),
    ("import importlib\nimportlib.import_module('labctl.catalogue.measures')\n",
     "imports labctl.catalogue.measures (catalogue)"),
    ("import importlib\nimportlib.import_module(f'labctl.cli.commands.{name}')\n", "imports labctl.cli.commands (cli)"),
    ("__import__('labctl.run')\n", "imports labctl.run (run)"),
    ("from labctl import _native\n", "imports the extension; only labctl.catalogue.native does"),
    ("from ..cli import console\n", "imports labctl.cli.console (cli)"),
    ("from .. import history\n", "imports labctl.history (history)"),
    ("from labctl import results\n", "imports labctl.results, the notebooks' name"),
    ("import labctl.helpers\n", "imports labctl.helpers, which is in no layer"),
])
def test_an_import_against_the_layers_is_found(monkeypatch, source, expected):
    # A read-side module (labctl/read/gate.py's place) importing upward or sideways is named with its line.
    fake = PACKAGE / "read" / "gate.py"
    read = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source if self == fake else read(self, *a, **k))
    errors = layering_errors([fake])
    assert errors and all(e.startswith("labctl/read/gate.py:") for e in errors), errors
    assert any(expected in e for e in errors), errors


@pytest.mark.parametrize("source", [
    "from labctl import __version__\n",
    "from labctl.read import results\n",
    "from . import series\nfrom .sections import data\n",
    "from labctl.store import Store\nfrom labctl.vocabulary.metrics import lookup\n",
])
def test_an_import_within_the_layers_is_allowed(monkeypatch, source):
    fake = PACKAGE / "read" / "gate.py"
    read = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source if self == fake else read(self, *a, **k))
    assert layering_errors([fake]) == []
