"""The documentation stays true: example outputs, CLI options, API doctests, figures and links."""

from __future__ import annotations

import doctest
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


render_examples = _module(DOCS / "render_examples.py")
EXAMPLES = [
    (page, command, body)
    for page in render_examples.pages()
    for command, body in render_examples.examples(page.read_text(encoding="utf-8"))
]


def test_reference_has_examples_for_every_query_file():
    reference = (DOCS / "reference.md").read_text(encoding="utf-8")
    used = {Path(word).name for command, _ in render_examples.examples(reference) for word in command.split()}
    queries = {p.name for p in (DOCS / "examples").glob("*.rq")}
    assert len(render_examples.examples(reference)) >= 20
    assert queries <= used, f"example queries not shown in reference.md: {sorted(queries - used)}"


@pytest.mark.parametrize(
    ("page", "command", "body"), EXAMPLES, ids=[f"{p.name}:{c.split()[2]}" for p, c, _ in EXAMPLES]
)
def test_example_output_is_what_rsp_prints_now(page, command, body):
    assert body == render_examples.render(command), (
        f"{page.name}: the example `{command}` is stale; run `python docs/render_examples.py`"
    )


def test_file_copies_are_current():
    for page in render_examples.pages():
        for m in render_examples.FILE.finditer(page.read_text(encoding="utf-8")):
            assert m["body"] == render_examples.render_file(m["path"]), (
                f"{page.name}: copy of {m['path']} is stale"
            )


def _help(*command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "rsp", *command, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={"COLUMNS": "200", "PATH": ""},
    )
    return done.stdout


def _options(help_text: str) -> set[str]:
    options_part = help_text.split("options:", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", options_part))


def _subcommands() -> list[str]:
    top = _help()
    return re.findall(r"^    (\w+)\s", top.split("positional arguments:", 1)[1], re.M)


def test_every_cli_option_is_documented():
    cli = (DOCS / "cli.md").read_text(encoding="utf-8")
    commands = _subcommands()
    assert set(commands) >= {"run", "lars", "explain", "spark"}
    missing = []
    for option in _options(_help()):
        if f"`{option}" not in cli and f" {option}" not in cli:
            missing.append(f"rsp {option}")
    for command in commands:
        assert f"## rsp {command}" in cli, f"docs/cli.md has no section for rsp {command}"
        section = cli.split(f"## rsp {command}", 1)[1].split("\n## ", 1)[0]
        options = _options(_help(command))
        assert "--help" in options
        missing += [
            f"rsp {command} {o}" for o in sorted(options) if f"`{o}" not in section and f"{o} " not in section
        ]
    assert not missing, f"options missing from docs/cli.md: {missing}"


def test_api_examples_run():
    result = doctest.testfile(str(DOCS / "api.md"), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 20
    assert result.failed == 0


def _image_links(text: str) -> set[str]:
    return set(re.findall(r"!\[[^\]]*\]\((img/[^)\s]+)\)", text))


def test_figure_script_writes_every_referenced_figure(tmp_path):
    figures = _module(DOCS / "figures" / "make_figures.py")
    written = {p.name for p in figures.make_all(tmp_path)}
    referenced = {
        Path(link).name for page in DOCS.glob("*.md") for link in _image_links(page.read_text("utf-8"))
    }
    bench = {name for name in referenced if name.startswith("bench-")}
    assert referenced - bench <= written, f"figures no script draws: {sorted(referenced - bench - written)}"
    for name in written:
        svg = (tmp_path / name).read_text(encoding="utf-8")
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        assert (DOCS / "img" / name).exists(), f"docs/img/{name} is not committed (run make docs)"
    assert bench, "docs/results.md shows no benchmark plots"


def test_benchmark_plot_script_draws_the_results_plots(tmp_path):
    plot = _module(ROOT / "benchmarks" / "plot.py")
    lars = [
        {"scenario": s, "rate": r, "window": w, "us_per_atom": 1.0 + w / 100}
        for s in ("diamond", "join")
        for r in (200, 800)
        for w in (1, 80)
    ]
    rsp = {"triples": 160, "us_per_triple": 10.0, "maint_median_s": 0.001, "instant_median_s": 0.002}
    queries = [
        {
            "scenario": "isin",
            "entailment": "owlrl",
            "seconds": 16,
            "size": 100,
            "rsp": rsp,
            "owlrl": {"median_s": 0.5},
            "reasonable": {"median_s": 0.05},
        }
    ]
    instants = [
        {"size": size, "policy": policy, "tree": tree, "instant_ms": size / 100}
        for size in (2000, 20000)
        for policy in ("RSTREAM", "ISTREAM")
        for tree in ("before", "after", "baseline")
    ]
    written = {
        plot.plot_window(lars, tmp_path).name,
        plot.plot_rate(lars, tmp_path).name,
        plot.plot_queries(queries, tmp_path).name,
        plot.plot_instants(instants, tmp_path).name,
    }
    referenced = {Path(link).name for link in _image_links((DOCS / "results.md").read_text("utf-8"))}
    assert referenced == written
    for name in written:
        assert (DOCS / "img" / name).exists()
    table = plot.tables(lars, queries)
    assert "| diamond | 200 | 1.01 | 1.80 |" in table and "| isin (owlrl) | 100 |" in table


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_point_to_existing_files(page):
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # links inside code blocks are not links
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    broken = []
    for link in links:
        if re.match(r"[a-z]+:", link) or link.startswith("#"):
            continue
        target = (page.parent / link.split("#", 1)[0]).resolve()
        if not target.exists():
            broken.append(link)
    if page.name in ("README.md", "reference.md", "semantics.md", "architecture.md", "results.md"):
        assert links, f"{page.name} links nowhere"
    assert not broken, f"{page.name}: broken links {broken}"
