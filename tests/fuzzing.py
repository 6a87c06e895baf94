"""Support for generated differential tests: how many cases to draw, and the record of a disagreement.

A generated test checks each case inside :func:`saved_on_failure`. Under ``make fuzz`` (the driver
``tests/fuzz.py`` sets ``RSP_FUZZ_DIR``), a case that fails is written to a pending folder named after
the test; Hypothesis runs the shrunk (minimal) failing case last, so the folder ends up holding it. The
driver then moves it, as a ready-to-add golden case, into the golden folder the test named. Outside
``make fuzz`` nothing is written.
"""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

EXAMPLES = int(os.environ.get("RSP_EXAMPLES", "300"))
"""Generated cases per differential test (``make fuzz`` raises it)."""


def examples(default: int) -> int:
    """``default`` cases in ``make test``; scaled up with ``RSP_EXAMPLES`` (relative to 300) when fuzzing."""
    return max(1, default * EXAMPLES // 300)


def saved_cases(golden_root: Path, test: str) -> dict[str, dict[str, str]]:
    """The cases ``make fuzz`` saved from ``test`` under ``golden_root`` (``fuzz-*`` folders whose SOURCE
    names the test), for the test's replay: case name -> file name -> text (SOURCE left out)."""
    if not golden_root.is_dir():
        return {}
    found = {}
    for case in sorted(golden_root.iterdir()):
        source = case / "SOURCE"
        if source.is_file() and test in source.read_text(encoding="utf-8"):
            found[case.name] = {
                f.name: f.read_text(encoding="utf-8") for f in case.iterdir() if f.name != "SOURCE"
            }
    return found


def _pending_dir() -> Path | None:
    root = os.environ.get("RSP_FUZZ_DIR")
    if not root:
        return None
    test = os.environ.get("PYTEST_CURRENT_TEST", "unknown").rsplit(" ", 1)[0]
    return Path(root) / re.sub(r"[^A-Za-z0-9_.-]+", "_", test)


@contextmanager
def saved_on_failure(golden_root: Path, files: Callable[[], dict[str, str]]) -> Iterator[None]:
    """Run the check in the ``with`` body; under ``make fuzz``, a failure writes ``files()`` (file
    name -> text: a golden case whose expected output comes from the reference) to the pending folder,
    to become a golden case under ``golden_root``."""
    try:
        yield
    except Exception as error:
        pending = _pending_dir()
        if pending is not None:
            if pending.exists():
                for old in pending.iterdir():
                    old.unlink()
            pending.mkdir(parents=True, exist_ok=True)
            try:
                contents = files()
            except Exception as reference_error:  # the reference itself failed: keep the inputs at least
                contents = {"reference-error.txt": "".join(traceback.format_exception(reference_error))}
            for name, text in contents.items():
                (pending / name).write_text(text, encoding="utf-8")
            (pending / ".golden-root").write_text(str(golden_root), encoding="utf-8")
            summary = "".join(traceback.format_exception_only(type(error), error))
            (pending / ".error").write_text(summary, encoding="utf-8")
        raise
