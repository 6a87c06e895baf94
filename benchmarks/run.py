"""Laser's micro-benchmarks for the LARS engine, one command (see ``benchmarks/README.md``).

    python benchmarks/run.py [--quick] [--scenario NAME ...] [--compare] [--target-only] [--data DIR]

1. The scenario table: for every scenario, atoms per time point and window size, one subprocess reads
   the generated stream and runs the engine through the Python API (``Engine(...).run`` and
   ``count()`` at every time point); it reports the evaluation time per stream atom, the throughput and
   its peak RSS. Counts of ``diamond`` and ``rules`` are checked against ``benchmarks/minimal.py``.
2. ``--compare``: the naive reference evaluator against the engine on a small case of each scenario,
   in one process: the ratio of their µs per atom, and whether their answers agree.
3. The target check: ``rsp lars PROGRAM --stream FILE --format count`` against
   ``python benchmarks/minimal.py`` on window-◇ at 800 atoms per time point, window 80, 300 time
   points (wall time of the whole command, best of ``--repeat``; target ratio ≤ 3), with equal counts.
4. The memory check: peak RSS of ``rsp lars --format count`` over 300 and 1500 time points at the same
   rate (target: about flat).

Results are printed as tables and written as JSON to ``benchmarks/results/``. Timings are reported,
never asserted: the exit status is 1 only when a run fails or two programs disagree on an answer.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (a sibling script, importable once HERE is on sys.path)
import minimal  # noqa: E402

FULL = {"rates": (200, 400, 800), "windows": (1, 10, 40, 80), "time_points": 300}
QUICK = {"rates": (200, 800), "windows": (1, 40), "time_points": 50}
TARGET = {"rate": 800, "window": 80, "time_points": 300, "long_time_points": 1500}
QUICK_TARGET = {"rate": 800, "window": 80, "time_points": 100, "long_time_points": 500}
COMPARE = {"rate": 10, "window": 4, "time_points": 20}
TARGET_RATIO = 3.0
CHECKED = {"diamond", "rules"}  # scenarios whose answer counts minimal.py computes too


# --- running subprocesses ---------------------------------------------------------------------------


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for subprocesses: the repository on PYTHONPATH so ``rsp`` imports, and bytecode
    caching on as in any installation (some sandboxes set PYTHONDONTWRITEBYTECODE, which makes every
    run recompile rsp's modules; the first of the repeated runs writes the caches); then ``extra``."""
    env = dict(os.environ)
    env.update(extra or {})
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


@dataclass
class Measured:
    """A finished subprocess: wall time, its own peak RSS and its output."""

    wall: float
    maxrss_kb: int
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def failure(self) -> str:
        if self.timed_out:
            return "timed out"
        tail = self.stderr.strip().splitlines()[-3:]
        return f"exit {self.returncode}: " + " | ".join(tail)


def run_measured(cmd: Sequence[str], timeout: float, env: dict[str, str] | None = None) -> Measured:
    """Run ``cmd`` (``env``: extra environment variables); wall time from start to exit, peak RSS of that
    child alone (``os.wait4``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), stdout=out, stderr=err, env=child_env(env))
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Measured(
            wall,
            usage.ru_maxrss,
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            expired.is_set(),
        )


def worker_command(mode: str, payload: dict[str, Any]) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--worker", mode, json.dumps(payload)]


def last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON result line")


def read_counts(text: str) -> list[tuple[int, int]]:
    """(time, count) pairs of ``--format count`` output (JSON lines)."""
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            record = json.loads(line)
            pairs.append((int(record["time"]), int(record["count"])))
    return pairs


def minimal_counts(stream: Path, window: int) -> list[tuple[int, int]]:
    with stream.open("rb") as handle:
        return list(minimal.diamond_counts(handle, window))


def first_difference(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> str:
    """``"ok"`` or where two count sequences first differ."""
    for x, y in zip(a, b, strict=False):
        if x != y:
            return f"DIFF t={x[0]}: {x[1]} vs {y[1]}" if x[0] == y[0] else f"DIFF times {x[0]} vs {y[0]}"
    if len(a) != len(b):
        return f"DIFF {len(a)} vs {len(b)} time points"
    return "ok"


# --- workers (run in a fresh subprocess) ------------------------------------------------------------


def rss_now_kb() -> int | None:
    """Current resident set size (Linux ``/proc``), or None."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return None


def worker_case(payload: dict[str, Any]) -> dict[str, Any]:
    """One scenario case: read the stream, run the engine through the Python API, count at each point."""
    from rsp.engine import Engine
    from rsp.io.atoms import read_atom_stream
    from rsp.lars import parse

    start = time.perf_counter()
    program = parse(Path(payload["program"]).read_text(encoding="utf-8"), payload["program"])
    stream = read_atom_stream(payload["stream"])
    read_s = time.perf_counter() - start
    rss_loaded = rss_now_kb()
    engine = Engine(program, impossible=payload["impossible"])
    counts = []
    start = time.perf_counter()
    for t in engine.run(stream):
        counts.append((t, engine.count()))
    eval_s = time.perf_counter() - start
    return {
        "atoms": len(stream.elements),
        "read_s": read_s,
        "eval_s": eval_s,
        "counts": counts,
        "rss_loaded_kb": rss_loaded,
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def worker_compare(payload: dict[str, Any]) -> dict[str, Any]:
    """The naive evaluator and the engine on the same small case, in this one process."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracles"))  # the references
    from lars_naive import evaluate

    from rsp.engine import Engine, run
    from rsp.io.atoms import read_atom_stream
    from rsp.lars import parse

    program = parse(Path(payload["program"]).read_text(encoding="utf-8"), payload["program"])
    stream = read_atom_stream(payload["stream"])
    start = time.perf_counter()
    engine = Engine(program, impossible=payload["impossible"])
    engine_counts = [(t, engine.count()) for t in engine.run(stream)]
    engine_s = time.perf_counter() - start
    start = time.perf_counter()
    naive = evaluate(program, stream)
    naive_s = time.perf_counter() - start
    engine_answers = [(t, list(atoms)) for t, atoms in run(program, stream, impossible=payload["impossible"])]
    naive_answers = [(t, list(atoms)) for t, atoms in naive]
    agree = engine_answers == naive_answers
    detail = "ok"
    if not agree:
        detail = "DIFF"
        for (t1, a1), (t2, a2) in zip(engine_answers, naive_answers, strict=False):
            if (t1, a1) != (t2, a2):
                extra = sorted(set(a1) - set(a2))[:3]
                missing = sorted(set(a2) - set(a1))[:3]
                detail = f"DIFF t={t1}: engine extra {extra}, missing {missing}"
                break
        else:
            detail = f"DIFF {len(engine_answers)} vs {len(naive_answers)} time points"
    counts_agree = engine_counts == [(t, len(a)) for t, a in naive_answers]
    return {
        "atoms": len(stream.elements),
        "engine_s": engine_s,
        "naive_s": naive_s,
        "agree": agree and counts_agree,
        "detail": detail if counts_agree else detail + " (count() differs from output())",
    }


WORKERS = {"case": worker_case, "compare": worker_compare}


# --- the benchmark parts ----------------------------------------------------------------------------


def per_atom_us(seconds: float | None, atoms: int) -> float | None:
    return None if seconds is None or not atoms else seconds / atoms * 1e6


def run_cases(args: argparse.Namespace, data: Path, scenarios: list[str]) -> list[dict[str, Any]]:
    sizes = QUICK if args.quick else FULL
    results = []
    for name in scenarios:
        for rate in sizes["rates"]:
            for window in sizes["windows"]:
                case = generate.generate(name, rate, sizes["time_points"], window, data, args.seed)
                payload = {"program": str(case.program), "stream": str(case.stream),
                           "impossible": not args.no_impossible}
                measured = run_measured(worker_command("case", payload), args.timeout)
                row: dict[str, Any] = {"scenario": name, "rate": rate, "window": window,
                                       "time_points": case.time_points, "atoms": case.atoms}
                if not measured.ok:
                    row["error"] = measured.failure()
                else:
                    result = last_json(measured.stdout)
                    counts = [tuple(c) for c in result.pop("counts")]
                    row.update(result)
                    row["out_avg"] = sum(c for _, c in counts) / len(counts) if counts else 0.0
                    row["us_per_atom"] = per_atom_us(result["eval_s"], result["atoms"])
                    row["read_us_per_atom"] = per_atom_us(result["read_s"], result["atoms"])
                    row["atoms_per_s"] = result["atoms"] / result["eval_s"] if result["eval_s"] else None
                    row["check"] = (first_difference(counts, minimal_counts(case.stream, window))
                                    if name in CHECKED else "-")
                results.append(row)
                print_progress(row)
    return results


def print_progress(row: dict[str, Any]) -> None:
    what = f"  {row['scenario']:<8} R={row['rate']:<4} n={row['window']:<3}"
    if "error" in row:
        print(f"{what} FAILED {row['error']}", file=sys.stderr, flush=True)
    else:
        print(f"{what} {row['eval_s']:.2f} s  {row['us_per_atom']:.2f} µs/atom  {row['check']}",
              file=sys.stderr, flush=True)


def run_compare(args: argparse.Namespace, data: Path, scenarios: list[str]) -> list[dict[str, Any]]:
    results = []
    for name in scenarios:
        case = generate.generate(name, args.compare_rate, args.compare_time_points, args.compare_window,
                                 data / "compare", args.seed)
        payload = {"program": str(case.program), "stream": str(case.stream),
                   "impossible": not args.no_impossible}
        measured = run_measured(worker_command("compare", payload), args.timeout)
        row: dict[str, Any] = {"scenario": name, "rate": case.rate, "window": case.window,
                               "time_points": case.time_points, "atoms": case.atoms}
        if not measured.ok:
            row["error"] = measured.failure()
        else:
            result = last_json(measured.stdout)
            row.update(result)
            row["naive_us_per_atom"] = per_atom_us(result["naive_s"], result["atoms"])
            row["engine_us_per_atom"] = per_atom_us(result["engine_s"], result["atoms"])
            row["ratio"] = result["naive_s"] / result["engine_s"] if result["engine_s"] else None
        results.append(row)
        state = row.get("error") or f"ratio {row['ratio']:.1f}x, {row['detail']}"
        print(f"  compare {name:<8} {state}", file=sys.stderr, flush=True)
    return results


def rsp_command(program: Path, stream: Path) -> list[str]:
    return [sys.executable, "-m", "rsp", "lars", str(program), "--stream", str(stream), "--format", "count"]


def minimal_command(stream: Path, window: int, plain: bool = False) -> list[str]:
    cmd = [sys.executable, str(HERE / "minimal.py"), str(stream), "--window", str(window)]
    return [*cmd, "--plain"] if plain else cmd


def run_target(args: argparse.Namespace, data: Path) -> dict[str, Any]:
    sizes = QUICK_TARGET if args.quick else TARGET
    case = generate.generate("diamond", sizes["rate"], sizes["time_points"], sizes["window"], data, args.seed)
    print(f"  target: rsp lars vs minimal.py on {case.atoms} atoms ...", file=sys.stderr, flush=True)
    result: dict[str, Any] = {"rate": case.rate, "window": case.window, "time_points": case.time_points,
                              "atoms": case.atoms, "repeat": args.repeat, "target_ratio": TARGET_RATIO}
    # rsp keeps checked programs in its program cache (rsp.lars.cache), as a user's repeated runs do; here
    # in a directory of this run (the first of the repeated runs fills it). "rsp_uncached" turns the
    # cache off: every run imports lark and parses the program.
    cache = data / "program-cache"
    commands = {
        "rsp": (rsp_command(case.program, case.stream), {"RSP_CACHE_DIR": str(cache)}),
        "rsp_uncached": (rsp_command(case.program, case.stream), {"RSP_CACHE_DIR": ""}),
        "minimal": (minimal_command(case.stream, case.window), None),
        "minimal_plain": (minimal_command(case.stream, case.window, plain=True), None),
    }
    outputs = {}
    # round robin (each command once per round): a noisy stretch of the machine hits every command alike
    runs: dict[str, list[Measured]] = {label: [] for label in commands}
    for _round in range(max(1, args.repeat)):
        for label, (cmd, env) in commands.items():
            runs[label].append(run_measured(cmd, args.timeout, env))
    for label, (cmd, _env) in commands.items():
        failed = [m for m in runs[label] if not m.ok]
        measured = failed[0] if failed else min(runs[label], key=lambda m: m.wall)
        walls = [m.wall for m in runs[label]]
        entry: dict[str, Any] = {"command": " ".join(cmd), "walls": walls}
        if measured.ok:
            entry.update(wall=measured.wall, maxrss_kb=measured.maxrss_kb,
                         us_per_atom=per_atom_us(measured.wall, case.atoms))
            outputs[label] = read_counts(measured.stdout)
        else:
            entry["error"] = measured.failure()
        result[label] = entry
    # The reference is "a dict of horizons plus a bucket queue": minimal.py --plain.
    # minimal.py (set-based, no bytecode per line) is a stricter second reference, reported beside it.
    if "wall" in result["rsp"] and "wall" in result["minimal_plain"]:
        result["ratio"] = result["rsp"]["wall"] / result["minimal_plain"]["wall"]
        result["meets_target"] = result["ratio"] <= TARGET_RATIO
    if "wall" in result["rsp"] and "wall" in result["minimal"]:
        result["ratio_sets"] = result["rsp"]["wall"] / result["minimal"]["wall"]
    if "wall" in result["rsp_uncached"] and "wall" in result["minimal_plain"]:
        result["ratio_uncached"] = result["rsp_uncached"]["wall"] / result["minimal_plain"]["wall"]
    if "rsp" in outputs and "minimal" in outputs:
        result["counts"] = first_difference(outputs["rsp"], outputs["minimal"])
    if "rsp_uncached" in outputs and "minimal" in outputs:
        result["counts_uncached"] = first_difference(outputs["rsp_uncached"], outputs["minimal"])
    if "minimal" in outputs:
        reference = minimal_counts(case.stream, case.window)
        if "minimal_plain" in outputs:
            result["minimal_self_check"] = first_difference(outputs["minimal_plain"], reference)
    return result


def run_memory(args: argparse.Namespace, data: Path) -> dict[str, Any]:
    sizes = QUICK_TARGET if args.quick else TARGET
    result: dict[str, Any] = {"rate": sizes["rate"], "window": sizes["window"]}
    for key in ("time_points", "long_time_points"):
        points = sizes[key]
        case = generate.generate("diamond", sizes["rate"], points, sizes["window"], data, args.seed)
        print(f"  memory: rsp lars over {points} time points ...", file=sys.stderr, flush=True)
        measured = run_measured(rsp_command(case.program, case.stream), args.timeout,
                                {"RSP_CACHE_DIR": str(data / "program-cache")})
        entry: dict[str, Any] = {"time_points": points, "atoms": case.atoms}
        if measured.ok:
            entry.update(maxrss_kb=measured.maxrss_kb, wall=measured.wall)
            entry["counts"] = first_difference(read_counts(measured.stdout), minimal_counts(case.stream,
                                                                                             case.window))
        else:
            entry["error"] = measured.failure()
        result["short" if key == "time_points" else "long"] = entry
    short, long = result["short"], result["long"]
    if "maxrss_kb" in short and "maxrss_kb" in long:
        result["ratio"] = long["maxrss_kb"] / short["maxrss_kb"]
    return result


# --- printing ---------------------------------------------------------------------------------------


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain-text table: text columns left-aligned, numeric ones right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def numeric(i: int) -> bool:
        cells = [r[i] for r in rows]
        return any(c[:1].isdigit() for c in cells) and all(c[:1].isdigit() or c == "-" for c in cells)

    align = [numeric(i) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        cols = zip(cells, widths, align, strict=True)
        return "  ".join(c.rjust(w) if a else c.ljust(w) for c, w, a in cols).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def mb(kb: int | None) -> float | None:
    return None if kb is None else kb / 1024


def print_cases(results: list[dict[str, Any]]) -> None:
    headers = ["scenario", "R", "n", "T", "atoms", "out/tp", "read s", "eval s", "µs/atom", "atoms/s",
               "peak MB", "+engine MB", "check"]
    rows = []
    for r in results:
        head = [r["scenario"], fmt(r["rate"]), fmt(r["window"]), fmt(r["time_points"]), fmt(r["atoms"])]
        if "error" in r:
            rows.append([*head, *["-"] * 7, "FAILED: " + r["error"][:60]])
            continue
        extra = None
        if r.get("rss_loaded_kb") is not None:
            extra = mb(max(0, r["maxrss_kb"] - r["rss_loaded_kb"]))
        rate = round(r["atoms_per_s"]) if r["atoms_per_s"] else None
        rows.append([*head, fmt(r["out_avg"], 0), fmt(r["read_s"]), fmt(r["eval_s"]), fmt(r["us_per_atom"]),
                     fmt(rate), fmt(mb(r["maxrss_kb"]), 1), fmt(extra, 1), r["check"]])
    print(table(headers, rows))


def print_compare(results: list[dict[str, Any]]) -> None:
    headers = ["scenario", "R", "n", "T", "atoms", "naive µs/atom", "engine µs/atom", "naive/engine", "agree"]
    rows = []
    for r in results:
        head = [r["scenario"], fmt(r["rate"]), fmt(r["window"]), fmt(r["time_points"]), fmt(r["atoms"])]
        if "error" in r:
            rows.append([*head, "-", "-", "-", "FAILED: " + r["error"][:60]])
        else:
            rows.append([*head, fmt(r["naive_us_per_atom"]), fmt(r["engine_us_per_atom"]),
                         fmt(r["ratio"], 1) + "x", "yes" if r["agree"] else r["detail"]])
    print(table(headers, rows))


def print_target(result: dict[str, Any]) -> None:
    print(f"window-◇, R={result['rate']}, n={result['window']}, T={result['time_points']} "
          f"({result['atoms']:,} atoms), wall time of the whole command, best of {result['repeat']}:")
    headers = ["command", "wall s", "µs/atom", "peak MB", "runs (s)"]
    rows = []
    for label, name in (("rsp", "rsp lars --format count"),
                        ("rsp_uncached", "rsp lars, program cache off"),
                        ("minimal", "python benchmarks/minimal.py"),
                        ("minimal_plain", "python benchmarks/minimal.py --plain")):
        e = result[label]
        if "error" in e:
            rows.append([name, "-", "-", "-", "FAILED: " + e["error"][:70]])
        else:
            rows.append([name, fmt(e["wall"], 3), fmt(e["us_per_atom"]), fmt(mb(e["maxrss_kb"]), 1),
                         " ".join(f"{w:.3f}" for w in e["walls"])])
    print(table(headers, rows))
    if "ratio" in result:
        verdict = "meets" if result["meets_target"] else "MISSES"
        print(f"ratio rsp / minimal --plain (dict of horizons + bucket queue): {result['ratio']:.2f}x "
              f"(target <= {TARGET_RATIO:g}x: {verdict})")
    if "ratio_uncached" in result:
        print(f"ratio rsp with the program cache off / minimal --plain: {result['ratio_uncached']:.2f}x")
    if "ratio_sets" in result:
        print(f"ratio rsp / minimal (set-based, no bytecode per line): {result['ratio_sets']:.2f}x")
    if "counts" in result:
        print(f"counts rsp vs minimal: {result['counts']}")
    if "counts_uncached" in result:
        print(f"counts rsp (program cache off) vs minimal: {result['counts_uncached']}")
    if "minimal_self_check" in result:
        print(f"counts minimal --plain vs minimal: {result['minimal_self_check']}")


def print_memory(result: dict[str, Any]) -> None:
    print(f"peak RSS of rsp lars --format count, window-◇ R={result['rate']}, n={result['window']}:")
    headers = ["time points", "atoms", "wall s", "peak MB", "counts"]
    rows = []
    for key in ("short", "long"):
        e = result[key]
        if "error" in e:
            rows.append([fmt(e["time_points"]), fmt(e["atoms"]), "-", "-", "FAILED: " + e["error"][:70]])
        else:
            rows.append([fmt(e["time_points"]), fmt(e["atoms"]), fmt(e["wall"], 3),
                         fmt(mb(e["maxrss_kb"]), 1), e["counts"]])
    print(table(headers, rows))
    if "ratio" in result:
        print(f"ratio peak RSS long / short: {result['ratio']:.2f} (target: about 1, flat)")


def failures(report: dict[str, Any]) -> list[str]:
    """Runs that failed or answers that disagree (timings never count)."""
    bad = []
    for r in report.get("cases", []):
        if "error" in r or r.get("check", "-") not in ("ok", "-"):
            bad.append(f"{r['scenario']} R={r['rate']} n={r['window']}: {r.get('error') or r['check']}")
    for r in report.get("compare", []):
        if "error" in r or not r.get("agree"):
            bad.append(f"compare {r['scenario']}: {r.get('error') or r['detail']}")
    target = report.get("target")
    if target:
        for label in ("rsp", "rsp_uncached", "minimal", "minimal_plain"):
            if "error" in target[label]:
                bad.append(f"target {label}: {target[label]['error']}")
        for key in ("counts", "counts_uncached", "minimal_self_check"):
            if target.get(key, "ok") != "ok":
                bad.append(f"target {key}: {target[key]}")
    memory = report.get("memory")
    if memory:
        for key in ("short", "long"):
            e = memory[key]
            if "error" in e or e.get("counts", "ok") != "ok":
                bad.append(f"memory {e['time_points']} time points: {e.get('error') or e['counts']}")
    return bad


# --- command line -----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Laser's micro-benchmarks for the LARS engine.")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: R in {200, 800}, n in {1, 40}, 50 time points; smaller checks")
    parser.add_argument("--scenario", action="append", choices=sorted(generate.SCENARIOS),
                        help="run only this scenario (repeatable; default: all)")
    parser.add_argument("--compare", action="store_true",
                        help="also run the naive evaluator against the engine on a small case per scenario")
    parser.add_argument("--target-only", action="store_true",
                        help="only the target check (rsp lars vs minimal.py) and the memory check")
    parser.add_argument("--no-target", action="store_true", help="skip the target and memory checks")
    parser.add_argument("--no-impossible", action="store_true",
                        help="run the engine with impossible=False (Laser2's technique off)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per command in the target check (best)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per subprocess (default 1800)")
    parser.add_argument("--seed", type=int, default=1, help="stream generator seed")
    parser.add_argument("--compare-rate", type=int, default=COMPARE["rate"])
    parser.add_argument("--compare-window", type=int, default=COMPARE["window"])
    parser.add_argument("--compare-time-points", type=int, default=COMPARE["time_points"])
    parser.add_argument("--data", help="directory for generated data, kept (default: a temporary one)")
    parser.add_argument("--results", default=str(HERE / "results"), help="directory for the JSON results")
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "JSON"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; print tables; write JSON; exit 1 if a run failed or answers disagree."""
    args = parse_args(argv)
    if args.worker:
        mode, payload = args.worker
        print(json.dumps(WORKERS[mode](json.loads(payload))))
        return 0
    scenarios = args.scenario or list(generate.SCENARIOS)
    data = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="rsp-bench-"))
    started = _dt.datetime.now()
    report: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "started": started.isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "impossible": not args.no_impossible,
        "scenarios": {name: generate.SCENARIOS[name].description for name in scenarios},
    }
    try:
        if not args.target_only:
            report["cases"] = run_cases(args, data, scenarios)
            print("\n== scenarios: engine through the Python API (one subprocess per case) ==")
            print_cases(report["cases"])
            if args.compare:
                report["compare"] = run_compare(args, data, scenarios)
                print("\n== naive evaluator vs engine (small cases, same process) ==")
                print_compare(report["compare"])
        if not args.no_target:
            report["target"] = run_target(args, data)
            print("\n== target check: rsp lars vs the least a CPython program can do ==")
            print_target(report["target"])
            report["memory"] = run_memory(args, data)
            print("\n== memory check ==")
            print_memory(report["memory"])
    finally:
        if not args.data:
            shutil.rmtree(data, ignore_errors=True)
    report["seconds"] = round((_dt.datetime.now() - started).total_seconds(), 1)
    bad = failures(report)
    report["failures"] = bad
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{started:%Y%m%d-%H%M%S}-{report['mode']}.json"
    path.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"\nresults written to {path}")
    if bad:
        print("\nFAILURES (runs that failed or answers that disagree):")
        for line in bad:
            print(f"  {line}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
