"""The least a CPython program can do for window-◇: ``q(A,B) :- [n] <> p(A,B)`` over a stream file.

    python benchmarks/minimal.py STREAM --window N [--plain]

Prints ``{"time": t, "count": c}`` for every time point of the timeline, like
``rsp lars PROGRAM --stream STREAM --format count``: ``c`` is the number of distinct atoms of the
stream whose time lies in ``[max(t1, t-n), t]``. This is the baseline the engine is measured against,
so it does only what the answer needs and leaves every loop it can to C:

* the file is read line by line (in binary: no decoding), each line split by ``bytes.split`` into its
  time and atom text, and the lines of one time point grouped by ``itertools.groupby`` on the time;
* ``buckets``: horizon (the last time point at which an atom is still in the window) -> the set of
  atoms whose latest horizon it is, a bucket queue for expiry; ``live``: the atoms in the window;
* a time point's atoms become one bucket (``set(...)``); an atom seen again while live is moved out of
  its older bucket (one C-level set difference per bucket, only when there are such atoms); expiry
  removes a whole bucket from ``live`` (``live -= bucket``); the count is ``len(live)``.

No Python bytecode runs per line in the common case (new atoms), only per time point. ``--plain`` runs
the straightforward loop instead (one iteration per line; a dict atom -> horizon and list buckets), a
second reference point.

Assumptions (true of the generated window-◇ streams): lines are ``<time> <atom>`` or a bare ``<time>``,
times never decrease, every atom is a ``p(x,y)`` atom and is written without spaces, as rsp prints it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from itertools import groupby
from operator import itemgetter

_time_of = itemgetter(0)
_last = itemgetter(-1)


def diamond_counts(lines: Iterable[bytes], n: int) -> Iterator[tuple[int, int]]:
    """Yield (t, number of atoms in the window [t-n, t]) for every time point of the timeline."""
    live: set[bytes] = set()
    buckets: dict[int, set[bytes]] = {}
    prev: int | None = None
    for token, group in groupby(map(bytes.split, lines), _time_of):
        t = int(token)
        if prev is None:
            prev = t - 1
        elif t <= prev:
            raise SystemExit(f"minimal.py: time {t} after {prev}: times must increase")
        for u in range(prev + 1, t + 1):  # the empty time points in between, then t
            expired = buckets.pop(u - 1, None)
            if expired:
                live -= expired
            if u < t:
                yield u, len(live)
        prev = t
        batch = set(map(_last, group))
        batch.discard(token)  # a bare time line yields its time as its last field
        again = batch.intersection(live)
        if again:  # atoms still in the window: their latest horizon is now t + n
            for bucket in buckets.values():
                bucket -= again
        live |= batch
        buckets[t + n] = batch
        yield t, len(live)


def diamond_counts_plain(lines: Iterable[str], n: int) -> Iterator[tuple[int, int]]:
    """The same answer with one Python loop iteration per line (dict of horizons, list buckets)."""
    horizon_of: dict[str, int] = {}
    buckets: dict[int, list[str]] = {}
    token = ""
    t = 0
    started = False
    for line in lines:
        head, _, atom = line.partition(" ")
        if head != token:
            new = int(head)
            if started and new == t:  # the same time written differently (a bare time line ends in \n)
                token = head
            elif started:
                if new <= t:
                    raise SystemExit(f"minimal.py: time {new} after {t}: times must increase")
                yield t, len(horizon_of)
                for u in range(t + 1, new + 1):
                    for old in buckets.pop(u - 1, ()):
                        if horizon_of.get(old) == u - 1:
                            del horizon_of[old]
                    if u < new:
                        yield u, len(horizon_of)
                token, t = head, new
            else:
                token, t, started = head, new, True
        atom = atom.rstrip()
        if atom:
            h = t + n
            if horizon_of.get(atom) != h:
                horizon_of[atom] = h
                bucket = buckets.get(h)
                if bucket is None:
                    buckets[h] = bucket = []
                bucket.append(atom)
    if started:
        yield t, len(horizon_of)


def main(argv: list[str] | None = None) -> int:
    """Command line: print one JSON count line per time point."""
    parser = argparse.ArgumentParser(description="window-◇ counts, the least a CPython program can do")
    parser.add_argument("stream", help="stream file: '<time> <atom>' lines")
    parser.add_argument("--window", "-n", type=int, required=True, help="window size n of [n] <>")
    parser.add_argument("--plain", action="store_true", help="the straightforward per-line loop")
    args = parser.parse_args(argv)
    if args.plain:
        with open(args.stream, encoding="utf-8") as text:
            out = [f'{{"time": {t}, "count": {c}}}\n' for t, c in diamond_counts_plain(text, args.window)]
    else:
        with open(args.stream, "rb") as handle:
            out = [f'{{"time": {t}, "count": {c}}}\n' for t, c in diamond_counts(handle, args.window)]
    sys.stdout.write("".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
