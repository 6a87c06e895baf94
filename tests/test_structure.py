"""The structure says what the product is (docs/architecture.md): no module reaches into another
package's private names, neither by importing them nor through an object's attributes; the library
never imports the command line; only rsp/spark/ imports PySpark.

A *package* here is a folder of rsp/ (``rsp/query``, ``rsp/runtime`` …) or a module at rsp/'s top
(``rsp/live.py``). A private name is one that starts with a single underscore."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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
