"""The package's import structure: no new import cycles.

Every import counts, including the ones inside functions (a lazy import
still ties two modules together). The cycles that exist today are listed in
KNOWN_CYCLES; the test fails when a new one appears or a known one grows, and
tells you to shrink the list when one disappears, so the list only gets
shorter.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "bias_suite"

# strongly connected components of the import graph, as sets of module names
KNOWN_CYCLES: list[set[str]] = []


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """module -> modules of the package it imports (names relative to the package)."""
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        here = mod.split(".") if mod else []
        base = here if is_pkg else here[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    stem = anchor + (node.module.split(".") if node.module else [])
                elif node.module and node.module.split(".")[0] == "bias_suite":
                    stem = node.module.split(".")[1:]
                else:
                    continue
                targets.append(".".join(stem))
                targets += [".".join(stem + [a.name]) for a in node.names]
            elif isinstance(node, ast.Import):
                targets += [".".join(a.name.split(".")[1:]) for a in node.names if a.name.split(".")[0] == "bias_suite"]
            for t in targets:
                if t in modules and t != mod:
                    graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_cycle_finder_finds_a_planted_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(g) == [{"a", "b", "c"}]


def test_no_new_import_cycles():
    found = cycles(import_graph())
    new = [c for c in found if not any(c <= k for k in KNOWN_CYCLES)]
    assert not new, ("new import cycles in bias_suite (a lower layer must not import a higher one): "
                     + "; ".join(" <-> ".join(sorted(c)) for c in new))
    gone = [k for k in KNOWN_CYCLES if not any(c & k for c in found)]
    assert not gone, ("these import cycles are gone: remove them from KNOWN_CYCLES so they cannot come back: "
                      + "; ".join(" <-> ".join(sorted(k)) for k in gone))


# the layers, bottom-up (a module may import its own layer and the ones below)
LAYERS = {"": 0, "exceptions": 0, "paths": 0, "io": 0, "suites": 1, "models": 2, "predict": 3, "families": 4,
          "metrics": 5, "stats": 6, "evaluation": 7, "options": 7, "pipeline": 7, "comparison": 7, "gating": 7, "interop": 7,
          "report": 8, "testing": 9, "api": 9, "cli": 10}

# imports that still go up a layer: the list may only get shorter
KNOWN_UPWARD: set = set()


def upward_imports(graph) -> set:
    out = set()
    for mod, targets in graph.items():
        for t in targets:
            a, b = LAYERS.get(mod.split(".")[0]), LAYERS.get(t.split(".")[0])
            assert a is not None and b is not None, f"{mod} or {t}: give its top-level name a layer in LAYERS"
            if b > a:
                out.add((mod, t))
    return out


def test_no_new_upward_imports():
    found = upward_imports(import_graph())
    new = sorted(found - KNOWN_UPWARD)
    assert not new, "imports that go up a layer: " + "; ".join(f"{a} -> {b}" for a, b in new)
    gone = sorted(KNOWN_UPWARD - found)
    assert not gone, "these upward imports are gone: remove them from KNOWN_UPWARD: " + "; ".join(f"{a} -> {b}" for a, b in gone)


def test_the_package_root_imports_no_module():
    """``bias_suite/__init__.py`` names the public API as strings and imports
    each name's module when first used (PEP 562): it ties no layer to
    another, and importing the package loads nothing else."""
    assert import_graph()[""] == set()


@pytest.mark.slow  # imports every module of the face
def test_the_public_face_points_at_modules_that_exist():
    import importlib.util

    import bias_suite

    for name, target in bias_suite._FACE.items():
        module = target.partition(":")[0]
        if name == "compare" and importlib.util.find_spec(module) is None:
            continue  # the comparison module is optional until it lands
        rel = module.split(".", 1)[1] if "." in module else ""
        assert rel in import_graph(), f"bs.{name} points at {module}, which is no module of the package"


def test_upward_finder_sees_a_planted_one():
    assert upward_imports({"suites.loader": {"report.files"}, "report.files": {"suites.loader"}}) == {
        ("suites.loader", "report.files")}


# modules outside bias_suite/families that still compare something with a task
# family's name (CheckList interop: its INV tests differ for taggers; the
# predict layer's output kinds); the list may only get shorter
KNOWN_TASK_BRANCHES = {"interop.bias_tests", "interop.exchange", "interop.invariance", "interop.results", "predict.outputs",
                       "predict.ray_engine"}
TASK_NAMES = {"classification", "sequence_labelling"}


def task_branches() -> set:
    """Modules outside the families with a comparison (==, !=, in) against a
    task family's name."""
    out = set()
    for path in PKG.rglob("*.py"):
        mod = _module_name(path)
        if mod.split(".")[0] == "families":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                parts = [node.left, *node.comparators]
                if any(isinstance(p, ast.Constant) and p.value in TASK_NAMES for p in parts):
                    out.add(mod)
    return out


def test_task_branches_stay_in_the_families():
    found = task_branches()
    new = sorted(found - KNOWN_TASK_BRANCHES)
    assert not new, ("these modules branch on a task name; ask the task family instead "
                     "(bias_suite.families, docs/architecture.md): " + ", ".join(new))
    gone = sorted(KNOWN_TASK_BRANCHES - found)
    assert not gone, "no task branch left in these: remove them from KNOWN_TASK_BRANCHES: " + ", ".join(gone)


def test_task_branch_finder_sees_one(tmp_path, monkeypatch):
    pkg = tmp_path / "bias_suite"
    (pkg / "report").mkdir(parents=True)
    (pkg / "report" / "x.py").write_text("def f(d):\n    return d.task == 'sequence_labelling'\n")
    (pkg / "families").mkdir()
    (pkg / "families" / "y.py").write_text("def g(d):\n    return d.task != 'classification'\n")
    monkeypatch.setattr(__import__(__name__), "PKG", pkg)
    assert task_branches() == {"report.x"}


def private_imports(files) -> list:
    """``(file, line, module, name)`` for every import of another module's
    private name (one leading underscore, not a dunder) inside the package:
    ``from bias_suite.x import _y`` and the relative forms."""
    out = []
    for path in files:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
        parts = Path(path).resolve().relative_to(PKG.parent).with_suffix("").parts
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("bias_suite"):
                continue
            for alias in node.names:
                n = alias.name
                if n.startswith("_") and not n.startswith("__"):
                    out.append((str(path), node.lineno, module, n))
    return out


def test_no_module_imports_another_modules_private_names():
    found = private_imports(sorted(PKG.rglob("*.py")))
    assert not found, "\n".join(f"{f}:{line}: from {m} import {n}" for f, line, m, n in found)


def test_private_import_finder_sees_a_planted_one(tmp_path, monkeypatch):
    pkg = tmp_path / "bias_suite" / "stats"
    pkg.mkdir(parents=True)
    (pkg / "a.py").write_text("from ._b import _hidden, visible\nfrom ..metrics.x import __all__\n")
    monkeypatch.setattr(__import__(__name__), "PKG", tmp_path / "bias_suite")
    got = private_imports([pkg / "a.py"])
    assert [(m, n) for _, _, m, n in got] == [("bias_suite.stats._b", "_hidden")]
