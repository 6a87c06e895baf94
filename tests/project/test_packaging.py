"""The distribution installs as itself and says what it needs: its name on PyPI (``rsp`` there is another
project) in pyproject.toml and in every install command the docs and the error messages give, each
extra they name declared; the core dependencies are the ones the library imports (not the tests'
owlrl); the wheel carries the licence, ``py.typed`` and every data file; the Python versions declared
agree with each other and with what the Makefile tests; ``make demo`` installs the core only."""

from __future__ import annotations

import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from paths import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli
    import tomli as tomllib

from rsp.extras import DISTRIBUTION, MissingExtraError, install_hint

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
EXTRAS = set(PROJECT["optional-dependencies"])
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()  # it names the patterns it looks for
SCANNED = ("rsp", "docs", "examples", "benchmarks", "queries", "tests", ".ci", "README.md", "Makefile",
           "pyproject.toml")  # fmt: skip

# an install command or an extras spec that names the project "rsp" (pip install rsp, 'rsp[serve]')
WRONG_NAME = re.compile(r"pip install\s+(?:-\S+\s+)*['\"]?rsp(?![\w.-])|(?<![\w.-])rsp\[[a-z][\w,\s-]*\]")
# an extras spec of the distribution: rsp-reasoner[serve], rsp-reasoner[test,serve]
NAMED_EXTRAS = re.compile(re.escape(DISTRIBUTION) + r"\[([\w,\s-]+)\]")


def _requirement_name(spec: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", spec, maxsplit=1)[0].lower().replace("_", "-")


def _tracked() -> list[Path]:
    done = subprocess.run(["git", "ls-files", "-z", "--", *SCANNED], cwd=ROOT, capture_output=True)
    names = [name for name in done.stdout.decode().split("\0") if name] if done.returncode == 0 else []
    if not names:  # not a git clone: every file under the scanned paths
        found = [p for s in SCANNED for p in ([ROOT / s] if (ROOT / s).is_file() else (ROOT / s).rglob("*"))]
        names = [
            p.relative_to(ROOT).as_posix() for p in found if p.is_file() and "__pycache__" not in p.parts
        ]
    return [ROOT / name for name in names if name != THIS and (ROOT / name).is_file()]


def _texts() -> list[tuple[str, str]]:
    out = []
    for path in _tracked():
        try:
            out.append((path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue  # pictures and other binary files
    return out


def test_the_distribution_has_a_name_of_its_own() -> None:
    assert PROJECT["name"] == DISTRIBUTION
    assert DISTRIBUTION != "rsp", "rsp on PyPI is Rapid SSH Proxy"
    assert PROJECT["scripts"] == {"rsp": "rsp.cli:main"}, "the command stays rsp"


def test_no_install_command_names_another_project() -> None:
    found = [
        f"{path}:{number}: {line.strip()}"
        for path, text in _texts()
        for number, line in enumerate(text.splitlines(), 1)
        if WRONG_NAME.search(line)
    ]
    assert not found, f"install commands naming 'rsp', not {DISTRIBUTION!r}:\n" + "\n".join(found)


def test_every_extra_the_docs_name_is_declared() -> None:
    named = {
        (path, extra.strip())
        for path, text in _texts()
        for match in NAMED_EXTRAS.finditer(text)
        for extra in match[1].split(",")
    }
    assert {extra for _, extra in named} >= {"serve", "spark", "pandas"}, "README shows the extras"
    undeclared = sorted(f"{path}: [{extra}]" for path, extra in named if extra not in EXTRAS)
    assert not undeclared, f"extras not in pyproject.toml: {undeclared}"


def _extras_in_code() -> set[tuple[str, str]]:
    """(module, extra) for every extra the library's code names in an install hint: ``install_hint(E)``,
    ``require(M, E, …)``, ``missing(err, E, …)`` and ``lazy_exports(…, extra=E)``."""
    position = {"install_hint": 0, "require": 1, "missing": 1}
    found = set()
    for path in sorted((ROOT / "rsp").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            args = [a for a in node.args]
            if name in position and len(args) > position[name]:
                arg = args[position[name]]
            elif name == "lazy_exports":
                arg = next((k.value for k in node.keywords if k.arg == "extra"), None)
            else:
                continue
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add((path.relative_to(ROOT).as_posix(), arg.value))
    return found


def test_every_extra_an_error_message_names_is_declared() -> None:
    named = _extras_in_code()
    assert {e for _, e in named} >= {"serve", "spark", "pandas"}, named
    assert not [(m, e) for m, e in named if e not in EXTRAS]


def _distributions_of(requirements: list[str]) -> set[str]:
    return {_requirement_name(r) for r in requirements}


def _imported(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


IMPORT_NAMES = {"py4j": "pyspark"}
"""The distribution of an import name that differs from it (the rest are their own distribution)."""
PACKAGE_EXTRAS = {"rsp/spark": "spark", "rsp/serve": "serve", "rsp/cli/serve.py": "serve"}
"""The extra whose packages the modules under a path may import (beside the core)."""


def test_the_library_imports_only_the_core_and_its_packages_extra() -> None:
    """Every module of rsp/ imports the standard library, rsp, a core dependency or (under rsp/spark,
    rsp/serve) its extra's packages; an optional package elsewhere goes through rsp.extras.require, which
    names the extra. So owlrl, which only the tests use, is no dependency of rsp."""
    core = _distributions_of(PROJECT["dependencies"])
    wrong = []
    for path in sorted((ROOT / "rsp").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        extra = next((e for p, e in PACKAGE_EXTRAS.items() if relative.startswith(p)), None)
        allowed = core | (_distributions_of(PROJECT["optional-dependencies"][extra]) if extra else set())
        for name in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            if name in sys.stdlib_module_names or name in ("rsp", "__future__"):
                continue
            if IMPORT_NAMES.get(name, name).replace("_", "-") not in allowed:
                wrong.append(f"{relative} imports {name}")
    assert not wrong, wrong
    assert "owlrl" not in core
    assert "owlrl" in _distributions_of(PROJECT["optional-dependencies"]["test"])


def test_the_licence_file_is_the_apache_license() -> None:
    assert PROJECT["license"] == "Apache-2.0"
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_bytes()
    # the text of https://www.apache.org/licenses/LICENSE-2.0.txt, byte for byte
    assert (
        hashlib.sha256(text).hexdigest() == "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
    )


def test_the_versions_declared_agree() -> None:
    """requires-python's lower bound is the oldest classifier's version, the README says the range the
    classifiers give, and CI runs make test-versions (oldest and newest classifier, from the Makefile)."""
    declared = sorted(
        tuple(map(int, c.rsplit(" ", 1)[1].split(".")))
        for c in PROJECT["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    )
    assert len(declared) >= 2, PROJECT["classifiers"]
    oldest, newest = (".".join(map(str, v)) for v in (declared[0], declared[-1]))
    assert PROJECT["requires-python"] == f">={oldest}"
    assert declared == [(3, m) for m in range(declared[0][1], declared[-1][1] + 1)], "no version skipped"
    assert f"Python {oldest} to {newest}" in (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").split()
    assert ci.index("test-versions") > ci.index("test"), "make test-versions runs after make test"


def _make(*args: str) -> subprocess.CompletedProcess:
    if shutil.which("make") is None:
        pytest.fail("make is not installed (the project's entry points are make targets)")
    # a make of its own: not the variables of a make that runs this suite (make test-versions PYTHONS=…
    # passes its command line on in MAKEFLAGS, and the inner make would run the suite again)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PYTHONS")}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env=env)  # fmt: skip


def test_make_test_versions_says_which_python_is_missing() -> None:
    done = _make("test-versions", "TEST_VERSIONS=3.99", "PYENV_ROOT=/nonexistent")
    assert done.returncode != 0
    assert "no Python 3.99" in done.stderr and "PYTHONS=/path/to/python3.99" in done.stderr, done.stderr
    done = _make("test-versions", "PYTHONS=/nonexistent/python")
    assert done.returncode != 0
    assert "/nonexistent/python is not a Python interpreter" in done.stderr, done.stderr


def test_make_demo_installs_the_core_only(tmp_path: Path) -> None:
    """In a fresh venv, make demo installs rsp without extras (about 50 MB, not PySpark's 1 GB); make
    test-fast and make test each install theirs. Read from make's dry run (nothing is installed)."""

    def installs(target: str) -> list[str]:
        done = _make("-n", target, f"VENV={tmp_path / 'venv'}")
        assert done.returncode == 0, done.stderr
        return [line for line in done.stdout.splitlines() if "pip install" in line and " -e " in line]

    assert [re.search(r"-e '(\S*)'", line)[1] for line in installs("demo")] == ["."]
    fast = re.search(r"-e '\.\[([\w,]+)\]'", installs("test-fast")[0])[1].split(",")
    assert set(fast) == EXTRAS - {"spark"}, "the fast suite: every test but the Spark ones"
    everything = re.search(r"-e '\.\[([\w,]+)\]'", installs("test")[0])[1].split(",")
    assert set(everything) == EXTRAS


def test_the_wheel_carries_the_licence_the_types_and_the_data(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "rsp", source / "rsp", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    assert wheel.name.startswith("rsp_reasoner-")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = {
        p.relative_to(ROOT).as_posix() for p in (ROOT / "rsp").rglob("*") if p.suffix in (".lark", ".html")
    }
    assert "rsp/py.typed" in names
    assert data and data <= names, data - names
    info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert "Name: rsp-reasoner" in metadata and "License-Expression: Apache-2.0" in metadata
    assert "Classifier: Typing :: Typed" in metadata and "Project-URL: Source" in metadata
    unconditional = [
        line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and ";" not in line
    ]
    assert sorted(_requirement_name(line.split(":", 1)[1].strip()) for line in unconditional) == sorted(
        _distributions_of(PROJECT["dependencies"])
    )


@pytest.mark.parametrize(
    ("module", "method"), [("pandas", "to_pandas"), ("pyarrow", "to_arrow")]
)  # fmt: skip
def test_to_pandas_without_pandas_names_the_extra(monkeypatch, module: str, method: str) -> None:
    import rsp

    engine = rsp.Engine()
    query = engine.register(
        "REGISTER QUERY Q AS SELECT ?s FROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }"
    )
    engine.push([("<http://ex.org/a>", "<http://ex.org/p>", "<http://ex.org/b>")], 0)
    engine.close()
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    with pytest.raises(MissingExtraError) as raised:
        getattr(query, method)()
    assert (
        str(raised.value)
        == f"{method}() needs {module}, which is not installed: pip install 'rsp-reasoner[pandas]'"
    )
    assert isinstance(raised.value, ImportError)


@pytest.mark.parametrize(
    ("command", "module", "extra"),
    [(["serve", "--port", "0"], "uvicorn", "serve"), (["serve"], "starlette", "serve"),
     (["spark", "q.rq", "--stream", "s.nt"], "pyspark", "spark")],
)  # fmt: skip
def test_a_command_without_its_extra_names_it(command: list[str], module: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{module!r}] = None; from rsp.cli import main; sys.exit(main({command!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert f"needs {module}, which is not installed: pip install 'rsp-reasoner[{extra}]'" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_rsp_spark_without_pyspark_names_the_extra(monkeypatch) -> None:
    import rsp.spark

    for module in [m for m in sys.modules if m.startswith("pyspark.")]:  # imported by an earlier test
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.delitem(rsp.spark.__dict__, "reason", raising=False)
    for module in [m for m in sys.modules if m.startswith("rsp.spark.") and m != "rsp.spark.session"]:
        monkeypatch.delitem(sys.modules, module)
    with pytest.raises(MissingExtraError, match=re.escape("rsp.spark.reason needs pyspark")):
        rsp.spark.reason  # noqa: B018
    with pytest.raises(MissingExtraError, match=re.escape(install_hint("spark"))):
        rsp.spark.session()


def test_the_doctests_are_collected_without_pyspark() -> None:
    """make test-fast installs every extra but spark: collecting rsp/'s doctests (pyproject's addopts)
    imports no module that needs PySpark."""
    code = (
        "import sys; sys.modules['pyspark'] = None; import pytest; "
        "sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', '-p', 'no:xdist', 'rsp']))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
