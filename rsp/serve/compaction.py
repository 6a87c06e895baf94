"""Compaction of ``rsp serve --data``'s log: the records that a restart still needs, so that the log on
disk is bounded by the windows and the retention (``--retain``), not by the stream's length.

A restart replays the log. An element is still needed while some window of a query reading its stream
can hold it at an instant the service may still have to give: the instants retained for resuming
subscribers (the oldest result kept) and every later one. For a query evaluated every ``step`` ms over
windows of at most ``range`` ms, that is every element from ``oldest − range − step`` on (one step
more than the window: ISTREAM and DSTREAM compare an instant with the one before). An element older
than that is dropped from the log, and so is an advance to a time older than it.

Replaying the shorter log gives the same state: the kept elements are in the same order, and each
query's clock (its newest element, its advances) reaches every time from the horizon on exactly as
before, because what was dropped is older than the horizon — so the same elements are late, and the
same instants close with the same windows. The instants before a query's oldest retained one are
computed again from partial windows on replay: a ``retain`` record says from which instant the results
count again. Count windows (``[TRIPLES n]``) hold elements whatever their age: their streams keep every
element.
"""

from __future__ import annotations

from collections.abc import Iterable


def horizons(
    queries: Iterable[tuple[str, object, int | None]],
) -> tuple[dict[str, int | None], dict[str, int]]:
    """Per stream IRI (without brackets), the oldest element time still needed (None: every element),
    and per query the oldest instant whose result counts after a replay.

    ``queries``: (name, parsed query, oldest instant to give: the oldest result retained, or the next
    instant when none is, or None before the first instant)."""
    needed: dict[str, int | None] = {}
    retained: dict[str, int] = {}
    for name, query, oldest in queries:
        windows = query.windows
        counted = any(window.triples is not None or window.range is None for window in windows)
        horizon = None
        if oldest is not None and not counted:
            reach = max(window.range for window in windows) + max(window.step or 0 for window in windows)
            horizon = oldest - reach
            retained[name] = oldest
        for window in windows:
            stream = window.stream[1:-1]
            if stream in needed and needed[stream] is None:
                continue
            if horizon is None:
                needed[stream] = None
            else:
                needed[stream] = min(needed.get(stream, horizon), horizon)
    return needed, retained


def compact(
    records: Iterable[dict],
    needed: dict[str, int | None],
    retained: dict[str, int],
    answered: dict[str, dict],
) -> list[dict]:
    """The records a restart needs, in their order: the first (``start``) one, the request keys
    answered, each query's oldest retained instant, then the log without the elements no window needs
    and the advances older than every horizon. A stream no query reads keeps nothing."""
    floors = [h for h in needed.values() if h is not None]
    oldest_needed = min(floors) if floors and len(floors) == len(needed) else None
    out: list[dict] = []
    for index, record in enumerate(records):
        op = record.get("op")
        if index == 0:
            out.append(record)
            out.append({"op": "keys", "answered": answered})
            out.extend(
                {"op": "retain", "name": name, "from": instant} for name, instant in sorted(retained.items())
            )
            continue
        if op in ("keys", "retain"):
            continue  # the newest ones were written above
        if op == "push":
            stream = record["stream"]
            if stream not in needed:
                continue
            horizon = needed[stream]
            batches = (
                record["batches"] if horizon is None else [b for b in record["batches"] if b[0] >= horizon]
            )
            if batches:
                out.append({**record, "batches": batches, "key": None})
            continue
        if op == "advance" and record.get("time") is not None and oldest_needed is not None:
            if record["time"] < oldest_needed:
                continue
        out.append(record)
    return out
