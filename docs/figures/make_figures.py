"""Draw the pictures of the docs (timelines of windows, ◇/□/@, horizons, the architecture) as SVG.

    python docs/figures/make_figures.py [--out DIR]     # default: docs/img

Every figure is computed from the same definitions the pages state (DESIGN.md §5), on the data of
``docs/examples/sensors.nt``; text stays text in the SVG (small files, searchable).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Rectangle  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STREAM = ROOT / "docs" / "examples" / "sensors.nt"
COLOURS = {"temp": "#d62728", "doorOpen": "#1f77b4", "heating": "#ff7f0e"}

plt.rcParams.update(
    {
        "svg.fonttype": "none",  # text as text: small SVGs
        "svg.hashsalt": "rsp-docs",  # stable ids: the same figure gives the same file
        "font.size": 9,
        "font.family": "DejaVu Sans",
    }
)


def read_stream(path: Path = STREAM) -> list[tuple[int, str, str, str]]:
    """(time, subject, predicate, object) of each element of an rsp N-Triples stream, local names only."""
    elements = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"<[^>]*/(\w+)> <[^>]*/(\w+)> (\S+) \. # (\d+)$", line)
        if m:
            obj = m[3]
            obj = obj.split('"')[1] if obj.startswith('"') else obj.rsplit("/", 1)[1].rstrip(">")
            elements.append((int(m[4]), m[1], m[2], obj))
    return elements


def _save(fig, out: Path, name: str) -> Path:
    path = out / name
    fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return path


def _stream_axis(ax, elements, end: int) -> None:
    """The stream as labelled dots on a time axis in ms."""
    for time, subject, pred, obj in elements:
        ax.plot(time, 0, "o", color=COLOURS.get(pred, "grey"), ms=6, zorder=3)
        ax.annotate(
            f"{subject} {pred} {obj}",
            (time, 0),
            xytext=(0, 7),
            textcoords="offset points",
            rotation=55,
            fontsize=7,
            ha="left",
            va="bottom",
        )
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlim(-200, end + 200)
    ax.set_xticks(range(0, end + 1, 1000))
    ax.set_xlabel("time (ms)")


def window_instants(out: Path) -> Path:
    """[RANGE 2s STEP 1s] over sensors.nt: which elements each window holds (t-ω ≤ τ < t)."""
    elements = read_stream()
    omega, beta, end = 2000, 1000, 6000
    instants = range(1000, end + 1, beta)
    fig, ax = plt.subplots(figsize=(9, 4.2))
    _stream_axis(ax, elements, end)
    for row, t in enumerate(instants, start=1):
        y = -row * 0.5
        ax.add_patch(Rectangle((t - omega, y - 0.15), omega, 0.3, color="#9ecae1", alpha=0.6))
        ax.plot([t - omega], [y], marker="|", color="black", ms=10)
        ax.plot([t], [y], marker="o", mfc="white", color="black", ms=5)  # open end: τ < t
        inside = sum(1 for time, *_ in elements if t - omega <= time < t)
        ax.text(end + 300, y, f"t = {t}: {inside} elements", va="center", fontsize=8)
        for time, _s, pred, _o in elements:
            if t - omega <= time < t:
                ax.plot(time, y, ".", color=COLOURS.get(pred, "grey"), ms=5)
    ax.set_ylim(-len(instants) * 0.5 - 0.4, 1.6)
    ax.set_yticks([])
    ax.set_title("[RANGE 2s STEP 1s]: the window closing at t holds the elements with t − 2000 ≤ τ < t")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    return _save(fig, out, "window-instants.svg")


def window_kinds(out: Path) -> Path:
    """Sliding, tumbling and count windows over the same stream, at the same instants."""
    elements = read_stream()
    end = 6000
    kinds = [
        (
            "[RANGE 2s STEP 1s]",
            lambda t: [e for e in elements if t - 2000 <= e[0] < t],
            range(1000, end + 1, 1000),
        ),
        (
            "[RANGE 2s TUMBLING]",
            lambda t: [e for e in elements if t - 2000 <= e[0] < t],
            range(2000, end + 1, 2000),
        ),
        ("[TRIPLES 2]", lambda t: [e for e in elements if e[0] < t][-2:], range(1000, end + 1, 1000)),
    ]
    fig, axes = plt.subplots(len(kinds), 1, figsize=(8, 5.4), sharex=True)
    for ax, (title, content, instants) in zip(axes, kinds, strict=True):
        for time, _s, pred, _o in elements:
            ax.plot(time, 0, "o", color=COLOURS.get(pred, "grey"), ms=5, zorder=3)
        ax.axhline(0, color="black", lw=0.8)
        for row, t in enumerate(instants, start=1):
            held = content(t)
            y = -row * 0.4
            if held:
                lo = min(e[0] for e in held)
                ax.add_patch(Rectangle((lo, y - 0.12), t - lo, 0.24, color="#9ecae1", alpha=0.6))
                for time, _s, pred, _o in held:
                    ax.plot(time, y, ".", color=COLOURS.get(pred, "grey"), ms=5)
            ax.plot([t], [y], marker="o", mfc="white", color="black", ms=4)
            ax.text(end + 250, y, f"t={t}: {len(held)}", va="center", fontsize=7)
        ax.set_title(title, loc="left", fontsize=9)
        ax.set_yticks([])
        ax.set_ylim(-len(instants) * 0.4 - 0.3, 0.3)
        for side in ("left", "right", "top"):
            ax.spines[side].set_visible(False)
    axes[-1].set_xticks(range(0, end + 1, 1000))
    axes[-1].set_xlabel("time (ms); bars: the elements each window holds at its instant t (open circle)")
    fig.tight_layout()
    return _save(fig, out, "window-kinds.svg")


def slots_box_at(out: Path) -> Path:
    """BOX and AT over the 1 s slots of [RANGE 2s STEP 1s]: ex:heating "on" per room and slot."""
    heating = [(time, s) for time, s, p, _o in read_stream() if p == "heating"]
    rooms = ["r1", "r2"]
    fig, ax = plt.subplots(figsize=(8, 3.4))
    for y, room in enumerate(rooms):
        for slot in range(6):
            held = any(s == room and slot * 1000 <= time < (slot + 1) * 1000 for time, s in heating)
            ax.add_patch(
                Rectangle(
                    (slot * 1000, y - 0.3),
                    1000,
                    0.6,
                    fill=held,
                    color="#fdae6b" if held else None,
                    ec="grey",
                    lw=0.6,
                )
            )
        for time, s in heating:
            if s == room:
                ax.plot(time, y, "o", color=COLOURS["heating"], ms=5)
    for row, t in enumerate(range(2000, 6001, 1000)):
        y = len(rooms) + row * 0.45
        ax.add_patch(Rectangle((t - 2000, y - 0.12), 2000, 0.24, color="#9ecae1", alpha=0.6))
        box = [
            r
            for r in rooms
            if all(
                any(s == r and k * 1000 <= time < (k + 1) * 1000 for time, s in heating)
                for k in range(t // 1000 - 2, t // 1000)
            )
        ]
        at = [
            (r, k * 1000)
            for r in rooms
            for k in range(t // 1000 - 2, t // 1000)
            if any(s == r and k * 1000 <= time < (k + 1) * 1000 for time, s in heating)
        ]
        label = f"t={t}  BOX: {', '.join(box) or '—'}   AT: " + ", ".join(f"{r}@{k}" for r, k in at)
        ax.text(6200, y, label, va="center", fontsize=7)
    ax.set_yticks(range(len(rooms)), [f"{r} heating" for r in rooms])
    ax.set_xticks(range(0, 6001, 1000))
    ax.set_xlim(-100, 6100)
    ax.set_ylim(-0.6, len(rooms) + 5 * 0.45)
    ax.set_xlabel('time (ms); a filled slot holds ex:heating "on" for the room; bars: windows of 2 slots')
    ax.set_title('WINDOW w BOX { ?room ex:heating "on" } and WINDOW w AT ?t { … }, 1 s slots', fontsize=9)
    for side in ("right", "top"):
        ax.spines[side].set_visible(False)
    return _save(fig, out, "slots-box-at.svg")


def lars_operators(out: Path) -> Path:
    """LARS at time point t = 7 with window ⊞3 = [4, 7]: ◇, □ and @ over the points where p holds."""
    points = [1, 2, 4, 5, 7]  # p(a) holds here
    q_points = [4, 5, 6, 7]  # q(a) holds here
    t, n = 7, 3
    fig, ax = plt.subplots(figsize=(7, 2.6))
    for y, (name, held) in enumerate([("p(a)", points), ("q(a)", q_points)]):
        for k in range(0, 10):
            ax.plot(k, y, "o", color="black" if k in held else "white", mec="black", ms=7)
        ax.text(-0.7, y, name, ha="right", va="center")
    ax.add_patch(Rectangle((t - n - 0.3, -0.4), n + 0.6, 1.8, color="#9ecae1", alpha=0.4))
    ax.axvline(t, color="#d62728", lw=1)
    ax.text(t, 1.55, "t = 7", color="#d62728", ha="center")
    ax.text(t - n / 2, -0.75, "[3] covers [t−3, t] = [4, 7]", ha="center", fontsize=8)
    notes = [
        "[3] <> p(a): true (p(a) at 4, 5, 7)",
        "[3] [] p(a): false (not at 6)",
        "[3] [] q(a): true (at 4, 5, 6, 7)",
        "[3] @T p(a): T ∈ {4, 5, 7}",
    ]
    for i, note in enumerate(notes):
        ax.text(10.2, 1.3 - i * 0.45, note, fontsize=8, va="center")
    ax.set_xlim(-1.5, 10)
    ax.set_ylim(-1, 1.8)
    ax.set_xticks(range(10))
    ax.set_yticks([])
    ax.set_xlabel("time points (filled: the atom holds)")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    return _save(fig, out, "lars-operators.svg")


def horizons(out: Path) -> Path:
    """Annotations under a window of 10: premises hold on [τ, τ+10], a join on the intersection."""
    rows = [
        ("isIn(a, b) at τ = 2", 2, 12),
        ("isIn(b, c) at τ = 5", 5, 15),
        ("isIn(a, c) derived (prp-trp)", 5, 12),
    ]
    fig, ax = plt.subplots(figsize=(7, 2.4))
    for y, (name, start, horizon) in enumerate(reversed(rows)):
        colour = "#2ca02c" if "derived" in name else "#1f77b4"
        ax.add_patch(Rectangle((start, y - 0.2), horizon - start, 0.4, color=colour, alpha=0.7))
        ax.text(-0.5, y, name, ha="right", va="center")
        ax.text(horizon + 0.2, y, f"horizon {horizon}", va="center", fontsize=8)
    ax.axvline(12, color="grey", ls="--", lw=0.8)
    ax.text(12.1, 2.45, "at 13 isIn(a, c) expires with its earliest premise: no re-derivation", fontsize=8)
    ax.set_xlim(0, 19)
    ax.set_ylim(-0.5, 2.8)
    ax.set_yticks([])
    ax.set_xticks(range(0, 19, 2))
    ax.set_xlabel("time points; ⊞10◇ isIn: a stream atom at τ holds until τ + 10")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    return _save(fig, out, "horizons.svg")


def architecture(out: Path) -> Path:
    """The three representations and the packages that own them."""
    w, h = 1.9, 0.9
    boxes = {
        "text": (0.0, 2.0, "query text (.rq)", "rsp/cli/, rsp/runtime/"),
        "ast": (2.7, 2.0, "query AST\nfrozen dataclasses", "rsp/query"),
        "lars": (5.4, 2.0, "LARS program\nrules + origins", "rsp/lars"),
        "plans": (8.1, 2.0, "compiled plans\nper stratum", "rsp/engine"),
        "dotlars": (2.7, 3.6, ".lars text", "rsp/lars (parser)"),
        "background": (5.4, 3.6, "background rules\nRDFS / OWL 2 RL", "rsp/background"),
        "sources": (5.4, 0.2, "stream sources\nfiles, Spark", "rsp/io, rsp/spark"),
        "results": (8.1, 0.2, "results per instant\nwriters, sinks", "rsp/io/results.py"),
    }
    fig, ax = plt.subplots(figsize=(9.5, 4.2))
    for x, y, label, owner in boxes.values():
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.05", fc="#eef3fb", ec="#4a6fa5"))
        ax.text(x + w / 2, y + 0.56, label, ha="center", va="center", fontsize=8)
        ax.text(
            x + w / 2, y + 0.13, owner, ha="center", va="center", fontsize=7, color="#4a6fa5", style="italic"
        )

    def right(key):
        x, y, *_ = boxes[key]
        return (x + w + 0.05, y + h / 2)

    def left(key):
        x, y, *_ = boxes[key]
        return (x - 0.05, y + h / 2)

    def top(key):
        x, y, *_ = boxes[key]
        return (x + w / 2, y + h + 0.05)

    def bottom(key):
        x, y, *_ = boxes[key]
        return (x + w / 2, y - 0.05)

    arrows = [
        (right("text"), left("ast"), "parse", (0, 0.12)),
        (right("ast"), left("lars"), "translate", (0, 0.12)),
        (right("lars"), left("plans"), "check, plan", (0, 0.12)),
        (bottom("background"), top("lars"), "specialised to the ontology", (0.05, 0)),
        (right("dotlars"), (5.4 - 0.05, 2.0 + h - 0.1), "parse", (0, 0.15)),
        (right("sources"), (8.1 + 0.3, 2.0 - 0.05), "(s, p, o, t) batches", (-0.25, 0.1)),
        (bottom("plans"), top("results"), "per instant", (0.05, 0)),
    ]
    for start, end, label, (dx, dy) in arrows:
        ax.annotate("", end, start, arrowprops={"arrowstyle": "->", "color": "#333333"})
        ha = "left" if dx > 0 else ("right" if dx < 0 else "center")
        ax.text((start[0] + end[0]) / 2 + dx, (start[1] + end[1]) / 2 + dy, label, ha=ha, fontsize=7)
    ax.set_xlim(-0.2, 10.2)
    ax.set_ylim(0, 4.7)
    ax.axis("off")
    return _save(fig, out, "architecture.svg")


def packages(out: Path) -> Path:
    """The packages in their layers (docs/figures/packages.py: the data of docs/architecture.md's table)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("packages", Path(__file__).with_name("packages.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    path = out / "packages.svg"
    path.write_text(module.svg(), encoding="utf-8")
    return path


FIGURES = (window_instants, window_kinds, slots_box_at, lars_operators, horizons, architecture, packages)


def make_all(out: Path) -> list[Path]:
    """Draw every figure into ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    return [figure(out) for figure in FIGURES]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="output directory")
    args = parser.parse_args(argv)
    for path in make_all(args.out):
        print(path)


if __name__ == "__main__":
    main()
