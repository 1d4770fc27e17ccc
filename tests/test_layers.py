"""The layers of labctl (docs/layout.md): every module of the package belongs to one layer, and
imports only from its own layer and the layers it stands on. Every import counts: at the top of
a module or inside a function, `import labctl.x`, `from labctl import x`, `from labctl.x import
y`, relative ones, and importlib.import_module of a literal (or literal-prefixed) name. Only the
catalogue's native.py opens the extension, labctl._native. There is no list of exceptions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "labctl"

# The layers, lowest first. Data flows down this list and back up only through the store: the
# run side and the read side both stand on the store, and neither imports the other; the read
# side needs neither the catalogue (the extension) nor the plan, since a run stores what it used.
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
# Each top-level module or package of labctl by layer ("" is labctl itself: __version__).
MEMBERS = {
    "vocabulary": ["", "vocabulary"],
    "catalogue": ["catalogue"],
    "plan": ["plan"],
    "store": ["store"],
    "run": ["run"],
    "read": ["read", "results"],
    "history": ["history"],
    "cli": ["cli", "__main__"],
}
LAYER_OF = {member: layer for layer, members in MEMBERS.items() for member in members}
EXTENSION = "labctl._native"
DOOR = "labctl.catalogue.native"  # the only module that imports the extension


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


def layer(name: str) -> str:
    """The layer of a labctl module, by its top-level module or package under labctl/."""
    parts = name.split(".")
    top = parts[1] if len(parts) > 1 else ""
    assert top in LAYER_OF, f"{name}: in no layer (add it to MEMBERS, and to docs/layout.md)"
    return LAYER_OF[top]


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_the_layers_name_every_module_once():
    members = [m for ms in MEMBERS.values() for m in ms]
    assert len(members) == len(set(members))
    assert list(MEMBERS) == LAYERS == list(STANDS_ON)
    for below in STANDS_ON.values():
        assert below <= set(LAYERS)
    for path in SOURCES:
        layer(module_name(path))
    tops = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    tops |= {p.name for p in PACKAGE.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert tops == set(LAYER_OF) - {""}, tops ^ (set(LAYER_OF) - {""})


def layering_errors(paths) -> list[str]:
    errors = []
    for path in paths:
        here = module_name(path)
        mine = layer(here)
        for line, name in imported(path):
            where = f"{path.relative_to(PACKAGE.parent)}:{line}"
            if name == EXTENSION or name.startswith(EXTENSION + "."):
                if here != DOOR:
                    errors.append(f"{where}: {here} imports the extension; only {DOOR} does")
                continue
            theirs = layer(name)
            if theirs != mine and theirs not in STANDS_ON[mine]:
                errors.append(f"{where}: {here} ({mine}) imports {name} ({theirs})")
    return errors


def test_each_module_imports_only_its_layer_and_the_layers_below():
    assert SOURCES
    errors = layering_errors(SOURCES)
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("source, expected", [
    ("from labctl.run import runner\n", "imports labctl.run.runner (run)"),
    ("def f():\n    from labctl.history import series\n", "imports labctl.history (history)"),
    ("import importlib\nimportlib.import_module('labctl.catalogue.measures')\n", "imports labctl.catalogue.measures (catalogue)"),
    ("from labctl import _native\n", "imports the extension"),
    ("from ..cli import console\n", "imports labctl.cli.console (cli)"),
])
def test_an_import_against_the_layers_is_found(tmp_path, monkeypatch, source, expected):
    # A read-side module (labctl/read/gate.py's place) importing upward or sideways is named with its line.
    fake = PACKAGE / "read" / "gate.py"
    read = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: source if self == fake else read(self, *a, **k))
    errors = layering_errors([fake])
    assert errors and all(e.startswith("labctl/read/gate.py:") for e in errors), errors
    assert any(expected in e for e in errors), errors
