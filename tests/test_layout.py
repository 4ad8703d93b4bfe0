"""The package map in CONTRIBUTING ("Where things go") held against the code.

The imports of every module of ``lecturelib`` are read from its source (``ast``, nothing is
imported), lazy imports inside functions included.  They must form no circle, and each
must be allowed by the row of the map that holds the importing module: its own folder, or
a package in the row's "may import" column.  Each subpackage's ``__init__`` docstring
states the same list; ``pyproject.toml`` lists every package, so an installed (not
editable) copy has them all.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lecturelib"
MAX_MODULES = 10  # in a folder under grading/ or book/, __init__ not counted


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known) -> set[str]:
    """The modules of ``known`` that the source of module ``name`` imports, anywhere in it."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found |= {c for c in candidates if c in known}
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the modules it imports, leaving out a package's own parents and children
    (importing ``a.b.c`` initialises ``a`` and ``a.b`` first: that is no dependency)."""
    known = modules()
    graph = {}
    for name, path in known.items():
        graph[name] = {t for t in imported(name, path, known) if t != name
                       and not t.startswith(name + ".") and not name.startswith(t + ".")}
    return graph


def package_map() -> dict[str, set[str]]:
    """folder (as a dotted package) -> what its modules may import, from CONTRIBUTING."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## Where things go", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`lecturelib"):
            continue
        folder = cells[0].strip("`").rstrip("/").replace("/", ".")
        rows[folder] = set(re.findall(r"`([a-z_.]+)`", cells[2]))
    return rows


def folder_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def allowed(target: str, own_folder: str, rules: set[str]) -> bool:
    target_folder = target.rsplit(".", 1)[0] if target not in package_folders() else target
    if target_folder == own_folder:
        return True
    return any(target == r or target.startswith(r + ".") for r in rules)


def package_folders() -> set[str]:
    return {module_name(p) for p in PACKAGE.rglob("__init__.py")}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_no_import_circle_anywhere_in_lecturelib():
    assert find_cycle(import_graph()) is None, " -> ".join(find_cycle(import_graph()))


def test_the_cycle_finder_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_every_folder_of_lecturelib_has_a_row_of_the_map():
    assert set(package_map()) == package_folders()


def test_every_import_runs_the_way_the_map_says():
    rules, known = package_map(), modules()
    wrong = []
    for name, targets in import_graph().items():
        own = folder_of(name, known[name])
        wrong += [f"{name} imports {t}" for t in sorted(targets) if not allowed(t, own, rules[own])]
    assert not wrong, wrong


def test_an_import_against_the_map_is_caught():
    """The check itself: core importing the gradebook, or the library importing grading."""
    rules = package_map()
    own = "lecturelib.grading.core"
    assert not allowed("lecturelib.grading.gradebook.store", own, rules[own])
    assert not allowed("lecturelib.grading.cli.commands", "lecturelib", rules["lecturelib"])
    assert allowed("lecturelib.grading.core.notebook", "lecturelib.grading.course",
                   rules["lecturelib.grading.course"])


@pytest.mark.parametrize("folder", sorted(package_map().keys() - {"lecturelib", "lecturelib.grading"}))
def test_each_subpackage_docstring_states_its_row(folder):
    init = ROOT / Path(*folder.split(".")) / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    assert "May import:" in doc, f"{init} says nothing of what it may import"
    stated = doc.split("May import:", 1)[1].split("\n\n", 1)[0]
    names = set() if stated.strip().startswith("nothing") else set(re.findall(r"``([a-z_.]+)``", stated))
    assert names == package_map()[folder]


@pytest.mark.parametrize("folder", sorted(f for f in package_folders()
                                          if f.startswith(("lecturelib.grading", "lecturelib.book"))))
def test_no_folder_of_grading_or_the_book_holds_more_than_ten_modules(folder):
    files = [p for p in (ROOT / Path(*folder.split("."))).glob("*.py") if p.name != "__init__.py"]
    assert len(files) <= MAX_MODULES, sorted(p.name for p in files)


def test_the_sandbox_driver_imports_nothing_of_lecturelib():
    path = PACKAGE / "grading" / "autograde" / "inside.py"
    assert not imported("lecturelib.grading.autograde.inside", path, modules())
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [n for n in names if n.startswith("lecturelib") or n.startswith(".")]


def test_pyproject_lists_every_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert set(config["tool"]["setuptools"]["packages"]) == package_folders()
