"""The structure says what the product is (docs/architecture.md): no module reaches into another
package's private names, neither by importing them nor through an object's attributes; the library
never imports the command line; only rsp/spark/ imports PySpark.

A *package* here is a folder of rsp/ (``rsp/query``, ``rsp/runtime`` …) or a module at rsp/'s top
(``rsp/live.py``). A private name is one that starts with a single underscore."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from paths import ROOT

RSP = ROOT / "rsp"


def _package(path: Path) -> str:
    parts = path.relative_to(RSP).parts
    return parts[0] if len(parts) > 1 else path.stem


def _modules() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(RSP.rglob("*.py"))}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined(tree: ast.Module) -> set[str]:
    """The private names a module defines: functions, classes, module and class attributes, and the
    attributes its methods set on ``self``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _private(node.name):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name) and _private(sub.id):
                        names.add(sub.id)
                    elif isinstance(sub, ast.Attribute) and _private(sub.attr):
                        names.add(sub.attr)
    return names


def test_no_module_imports_another_packages_private_name() -> None:
    found = []
    for path, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rsp."):
                other = node.module.split(".")[1]
                if other != _package(path):
                    found += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}.{a.name}"
                              for a in node.names if _private(a.name)]  # fmt: skip
    assert found == [], "\n".join(found)


def test_no_module_reaches_into_another_packages_private_attributes() -> None:
    """``obj._name`` (``obj`` not ``self`` or ``cls``) where only another package defines ``_name``."""
    modules = _modules()
    by_package: dict[str, set[str]] = defaultdict(set)
    for path, tree in modules.items():
        by_package[_package(path)] |= _defined(tree)
    found = []
    for path, tree in modules.items():
        own = by_package[_package(path)]
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)) or node.attr in own:
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            owners = sorted(p for p, names in by_package.items() if node.attr in names)
            if owners:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr} (of {', '.join(owners)})")
    assert found == [], "\n".join(found)


def test_the_library_never_imports_the_command_line() -> None:
    found = []
    for path, tree in _modules().items():
        if _package(path) in ("cli", "__main__"):
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno}: {n}"
                for n in names
                if n == "rsp.cli" or n.startswith("rsp.cli.")
            ]
    assert found == [], "\n".join(found)


def test_only_rsp_spark_imports_pyspark() -> None:
    found = []
    for path, tree in _modules().items():
        if _package(path) == "spark":
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno}: {n}"
                for n in names
                if n.split(".")[0] in ("pyspark", "py4j")
            ]
    assert found == [], "\n".join(found)


# -- the packages and their layers (docs/architecture.md) ---------------------------------------------


def _packages_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("packages", ROOT / "docs" / "figures" / "packages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _layer_package(path: Path) -> str:
    """A file's package as docs/architecture.md names it (rsp/query's parts by representation)."""
    parts = path.relative_to(RSP).parts
    if parts[0] == "query":
        return "query." + (
            parts[1] if len(parts) > 2 else "compile" if path.stem == "__init__" else path.stem
        )
    if len(parts) == 1 and path.stem in ("__init__", "__main__"):
        return "rsp" if path.stem == "__init__" else "cli"
    return parts[0] if len(parts) > 1 else path.stem


def _module_package(module: str, names: list[str]) -> list[str]:
    parts = module.split(".")[1:]
    if not parts:
        return ["rsp"]
    if parts[0] == "query":
        return ["query." + p for p in (parts[1:2] or names)]
    return [parts[0]]


def _imports() -> dict[str, set[str]]:
    """package -> the rsp packages its modules import (anywhere in a module, functions included)."""
    found: dict[str, set[str]] = defaultdict(set)
    for path, tree in _modules().items():
        me = _layer_package(path)
        found.setdefault(me, set())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "rsp":
                others = _module_package(node.module, [a.name for a in node.names])
            elif isinstance(node, ast.Import):
                others = [p for a in node.names if a.name.split(".")[0] == "rsp"
                          for p in _module_package(a.name, [])]  # fmt: skip
            else:
                continue
            found[me].update(o for o in others if o != me)
    return found


def test_the_packages_table_is_the_codes() -> None:
    """Every package of the code is in docs/architecture.md's table, imports only what the table lets
    it, and only packages of the layers below it; the page shows the table as the data makes it."""
    packages = _packages_module()
    allowed = {name: set(may) for name, _owns, may in packages.PACKAGES}
    imports = _imports()
    assert set(imports) == set(allowed), "packages of the code and of the table differ"
    layer = {name: i for i, row in enumerate(packages.LAYERS) for name, _owns, _may in row}
    for name, may in allowed.items():
        if may == {"*"}:
            continue
        assert imports[name] <= may, f"rsp/{name} imports {sorted(imports[name] - may)}, not in its row"
        assert all(layer[m] > layer[name] for m in may), (
            f"rsp/{name} may import a package of its own layer or above"
        )
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert packages.table() in page, (
        "docs/architecture.md's table is not the one docs/figures/packages.py makes"
    )
    assert (ROOT / "docs" / "img" / "packages.svg").read_text(encoding="utf-8") == packages.svg()


def test_no_import_circle() -> None:
    """No circle of imports between rsp's modules (an import inside a function counts; one for type
    checking only does not)."""
    modules = _modules()
    name_of = {}
    for path in modules:
        rel = path.relative_to(ROOT).with_suffix("")
        name_of[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = path
    graph: dict[Path, set[Path]] = defaultdict(set)
    for path, tree in modules.items():
        checking = set()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.If)
                and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
            ):
                checking.update(id(sub) for sub in ast.walk(node))
        for node in ast.walk(tree):
            if id(node) in checking:
                continue
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "rsp":
                targets = [f"{node.module}.{a.name}" for a in node.names] + [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "rsp"]
            for target in targets:
                if target in name_of and name_of[target] != path:
                    graph[path].add(name_of[target])
                    break
    circles = []
    state: dict[Path, int] = {}
    stack: list[Path] = []

    def visit(node: Path) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(
                    " -> ".join(str(p.relative_to(ROOT)) for p in stack[stack.index(nxt) :] + [nxt])
                )
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(modules):
        if node not in state:
            visit(node)
    assert circles == [], "\n".join(circles)
