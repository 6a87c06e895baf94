"""Plot benchmark results like the figures of the Laser and Ticker papers: µs per input atom or triple
against window size and against stream rate (see ``docs/results.md``).

    python benchmarks/plot.py                         # newest results in benchmarks/results -> docs/img
    python benchmarks/plot.py --lars FILE.json --queries FILE.json [--queries FILE.json] --out DIR
    python benchmarks/plot.py --instants FILE.json    # per-instant time by policy (benchmarks/instants.py)

``--lars`` is a JSON file written by ``benchmarks/run.py`` (its scenario table), ``--queries`` one or more
written by ``benchmarks/queries.py``. The figures are SVG; the numbers behind them are printed as
Markdown tables.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "rsp-bench", "font.size": 9})
MARKERS = {"diamond": "o", "box": "s", "join": "^", "rules": "D", "cooling": "v"}


def newest(results: Path, want) -> Path | None:
    """The newest JSON file in ``results`` whose content satisfies ``want``."""
    for path in sorted(results.glob("*.json"), reverse=True):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if want(data):
            return path
    return None


def lars_cases(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in data.get("cases", []) if "us_per_atom" in c]


def query_cases(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for data in files for c in data.get("cases", []) if "rsp" in c and "us_per_triple" in c["rsp"]]


def _save(fig, out: Path, name: str) -> Path:
    path = out / name
    fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return path


def plot_window(cases: list[dict[str, Any]], out: Path) -> Path:
    """µs per atom against window size, one panel per rate, one line per scenario (Laser's Fig. 3 style)."""
    rates = sorted({c["rate"] for c in cases})
    fig, axes = plt.subplots(1, len(rates), figsize=(3.2 * len(rates), 3.0), sharey=True, squeeze=False)
    for ax, rate in zip(axes[0], rates, strict=True):
        for scenario in dict.fromkeys(c["scenario"] for c in cases):
            rows = sorted(
                (c["window"], c["us_per_atom"])
                for c in cases
                if c["scenario"] == scenario and c["rate"] == rate
            )
            ax.plot(
                [w for w, _ in rows], [u for _, u in rows], marker=MARKERS.get(scenario, "o"), label=scenario
            )
        ax.set_title(f"{rate} atoms per time point")
        ax.set_xlabel("window size (time points)")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("µs per stream atom")
    axes[0][-1].legend(fontsize=7)
    return _save(fig, out, "bench-window.svg")


def plot_rate(cases: list[dict[str, Any]], out: Path) -> Path:
    """µs per atom against stream rate at the largest window, one line per scenario."""
    window = max(c["window"] for c in cases)
    fig, ax = plt.subplots(figsize=(4.2, 3.0))
    for scenario in dict.fromkeys(c["scenario"] for c in cases):
        rows = sorted(
            (c["rate"], c["us_per_atom"])
            for c in cases
            if c["scenario"] == scenario and c["window"] == window
        )
        ax.plot([r for r, _ in rows], [u for _, u in rows], marker=MARKERS.get(scenario, "o"), label=scenario)
    ax.set_title(f"window {window}")
    ax.set_xlabel("stream rate (atoms per time point)")
    ax.set_ylabel("µs per stream atom")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, out, "bench-rate.svg")


def plot_queries(cases: list[dict[str, Any]], out: Path) -> Path:
    """Continuous queries with entailment: µs per triple of an instant against window size (left), and one
    step of rsp against re-materialising the window with owlrl and reasonable (right)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.1))
    for scenario in dict.fromkeys(c["scenario"] for c in cases):
        rows = sorted(
            (c["rsp"]["triples"] / c["seconds"] * 10, c) for c in cases if c["scenario"] == scenario
        )
        windows = [w for w, _ in rows]
        label = f"{scenario} ({rows[0][1]['entailment']})"
        left.plot(windows, [c["rsp"]["us_per_triple"] for _, c in rows], marker="o", label=label)
        right.plot(
            windows,
            [c["rsp"]["maint_median_s"] * 1e3 for _, c in rows],
            marker="o",
            label=f"{scenario}: rsp step",
        )
        for name, style in (("owlrl", "--"), ("reasonable", ":")):
            points = [(w, c[name]["median_s"] * 1e3) for w, c in rows if c.get(name, {}).get("median_s")]
            if points:
                right.plot(*zip(*points, strict=True), ls=style, marker="x", label=f"{scenario}: {name}")
    left.set_xlabel("stream triples in a full window")
    left.set_ylabel("µs per stream triple (one instant)")
    left.set_xscale("log")
    left.legend(fontsize=7)
    right.set_xlabel("stream triples in a full window")
    right.set_ylabel("ms per instant / per re-materialisation")
    right.set_xscale("log")
    right.set_yscale("log")
    right.legend(fontsize=6)
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return _save(fig, out, "bench-queries.svg")


def plot_instants(rows: list[dict[str, Any]], out: Path) -> Path:
    """Per-instant time (answers and their JSON text included) against window size, per output
    policy, for this tree, the hand-written maintainer (``benchmarks/isin_baseline.py``) and, when
    measured, the older tree given with ``--before`` (``benchmarks/instants.py``)."""
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    for number, policy in enumerate(dict.fromkeys(r["policy"] for r in rows)):
        for tree, style in (("after", "-"), ("before", "--"), ("baseline", ":")):
            points = sorted(
                (r["size"], r["instant_ms"]) for r in rows if r["policy"] == policy and r["tree"] == tree
            )
            if points:
                suffix = {"before": " (--before tree)", "baseline": " (hand-written maintainer)"}
                label = f"{policy}" + suffix.get(tree, "")
                ax.plot(
                    *zip(*points, strict=True),
                    ls=style,
                    color=f"C{number}",
                    marker="o" if policy == "RSTREAM" else "s",
                    label=label,
                )
    ax.set_xlabel("stream triples in a full window (500 triples/s)")
    ax.set_ylabel("ms per instant (with its JSON text)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out, "bench-instants.svg")


def tables(lars: list[dict[str, Any]], queries: list[dict[str, Any]]) -> str:
    """The numbers behind the plots as Markdown tables."""
    lines = []
    if lars:
        windows = sorted({c["window"] for c in lars})
        lines += [
            "| scenario | atoms/time point | " + " | ".join(f"n = {w}" for w in windows) + " |",
            "|---|---:|" + "---:|" * len(windows),
        ]
        for scenario in dict.fromkeys(c["scenario"] for c in lars):
            for rate in sorted({c["rate"] for c in lars}):
                by_window = {
                    c["window"]: c["us_per_atom"]
                    for c in lars
                    if c["scenario"] == scenario and c["rate"] == rate
                }
                cells = " | ".join(f"{by_window[w]:.2f}" if w in by_window else "-" for w in windows)
                lines.append(f"| {scenario} | {rate} | {cells} |")
        lines.append("")
    if queries:
        lines += [
            "| scenario | window triples | µs/triple | step ms | instant ms | owlrl ms | reasonable ms |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for c in queries:
            rsp = c["rsp"]
            owl = c.get("owlrl", {}).get("median_s")
            rea = c.get("reasonable", {}).get("median_s")
            lines.append(
                f"| {c['scenario']} ({c['entailment']}) | {int(rsp['triples'] / c['seconds'] * 10):,} "
                f"| {rsp['us_per_triple']:.1f} | {rsp['maint_median_s'] * 1e3:.1f} "
                f"| {rsp['instant_median_s'] * 1e3:.1f} | {owl * 1e3 if owl else float('nan'):,.0f} "
                f"| {rea * 1e3 if rea else float('nan'):,.0f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lars", type=Path, help="a benchmarks/run.py JSON file (default: the newest)")
    parser.add_argument(
        "--queries",
        type=Path,
        action="append",
        help="a benchmarks/queries.py JSON file; repeatable (default: the newest per scenario)",
    )
    parser.add_argument(
        "--instants", type=Path, help="a benchmarks/instants.py JSON file (default: the newest)"
    )
    parser.add_argument("--results", type=Path, default=HERE / "results", help="where to look for the newest")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="output directory")
    args = parser.parse_args(argv)
    lars_file = args.lars or newest(args.results, lambda d: bool(lars_cases(d)))
    query_files = args.queries or [
        p
        for p in (
            newest(args.results, lambda d, s=s: any(c.get("scenario") == s for c in query_cases([d])))
            for s in ("isin", "obs")
        )
        if p is not None
    ]
    instants_file = args.instants or newest(args.results, lambda d: bool(d.get("instants")))
    if lars_file is None and not query_files and instants_file is None:
        parser.error(
            f"no benchmark results in {args.results}: run benchmarks/run.py or benchmarks/queries.py"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    lars = lars_cases(json.loads(lars_file.read_text(encoding="utf-8"))) if lars_file else []
    queries = query_cases([json.loads(p.read_text(encoding="utf-8")) for p in query_files])
    written = []
    if lars:
        written += [plot_window(lars, args.out), plot_rate(lars, args.out)]
    if queries:
        written.append(plot_queries(queries, args.out))
    if instants_file is not None:
        written.append(
            plot_instants(json.loads(instants_file.read_text(encoding="utf-8"))["instants"], args.out)
        )
    for source in [lars_file, *query_files, instants_file]:
        if source is not None:
            print(f"read {source}")
    for path in written:
        print(f"wrote {path}")
    print(tables(lars, queries))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
