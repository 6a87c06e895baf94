"""Intervals over the rational timeline and the interval arithmetic of DatalogMTL's operators.

One interval type for the whole package: a tuple ``(lo, hi, lc, hc)`` of its ends and whether each
end is closed. Ends are exact: ``int`` when integral, :class:`fractions.Fraction` otherwise, and
``math.inf`` / ``-math.inf`` for unbounded ends (always open). Plain tuples keep the engine's inner
loops cheap; every function here takes and returns them.

>>> coalesce([(0, 1, True, False), (1, 2, True, True), (3, 4, False, True)])
[(0, 2, True, True), (3, 4, False, True)]
>>> shift((0, 0, True, True), (2, 3, True, False))
(2, 3, True, False)
>>> box((0, 0, True, True), (0, 2, True, True)) is None
True
"""

from __future__ import annotations

import math
from fractions import Fraction

Time = int | Fraction | float
Interval = tuple  # (lo, hi, lc, hc)

INF = math.inf


def number(text: str) -> Time:
    """A time or bound from its text: ``3``, ``0.25``, ``1/3``, ``inf``, ``+inf``, ``-inf``."""
    text = text.strip()
    if text in ("inf", "+inf"):
        return INF
    if text == "-inf":
        return -INF
    value = Fraction(text)
    return value.numerator if value.denominator == 1 else value


def make(lo: Time, hi: Time, lc: bool = True, hc: bool = True) -> Interval | None:
    """The interval ``lo..hi`` (infinite ends made open), or ``None`` when it is empty."""
    if lo == -INF:
        lc = False
    if hi == INF:
        hc = False
    if lo < hi or (lo == hi and lc and hc):
        return (lo, hi, lc, hc)
    return None


def fmt_time(t: Time) -> str:
    """A time as written in MeTeoR's syntax: ``3``, ``0.25``, ``1/3``, ``inf``."""
    if t == INF:
        return "inf"
    if t == -INF:
        return "-inf"
    if isinstance(t, Fraction):
        if t.denominator == 1:
            return str(t.numerator)
        d = t.denominator
        while d % 2 == 0:
            d //= 2
        while d % 5 == 0:
            d //= 5
        if d == 1:  # a terminating decimal
            digits = 0
            scaled = t
            while scaled.denominator != 1:
                scaled *= 10
                digits += 1
            sign = "-" if scaled < 0 else ""
            n = abs(scaled.numerator)
            whole, frac = divmod(n, 10**digits)
            return f"{sign}{whole}.{frac:0{digits}d}"
        return f"{t.numerator}/{t.denominator}"
    return str(t)


def fmt(iv: Interval) -> str:
    """``[1,3)``, ``(0.5,inf)``; a punctual interval as ``[2,2]``."""
    lo, hi, lc, hc = iv
    return f"{'[' if lc else '('}{fmt_time(lo)},{fmt_time(hi)}{']' if hc else ')'}"


def contains(iv: Interval, t: Time) -> bool:
    lo, hi, lc, hc = iv
    return (lo < t or (lc and lo == t)) and (t < hi or (hc and t == hi))


def intersect(a: Interval, b: Interval) -> Interval | None:
    """``a ∩ b`` or ``None``."""
    alo, ahi, alc, ahc = a
    blo, bhi, blc, bhc = b
    if alo > blo:
        lo, lc = alo, alc
    elif blo > alo:
        lo, lc = blo, blc
    else:
        lo, lc = alo, alc and blc
    if ahi < bhi:
        hi, hc = ahi, ahc
    elif bhi < ahi:
        hi, hc = bhi, bhc
    else:
        hi, hc = ahi, ahc and bhc
    if lo < hi or (lo == hi and lc and hc):
        return (lo, hi, lc, hc)
    return None


def shift(iv: Interval, rho: Interval) -> Interval:
    """The Minkowski sum ``iv ⊕ ρ``: where ``◇⁻ρ`` holds given ``iv``, and where ``⊞ρ`` puts a head."""
    lo, hi, lc, hc = iv
    a, b, ac, bc = rho
    hi2 = hi + b
    return (lo + a, hi2, lc and ac, hc and bc and hi2 != INF)


def box(iv: Interval, rho: Interval) -> Interval | None:
    """``{t : t − ρ ⊆ iv}``: where ``⊟ρ`` holds given a maximal interval ``iv`` (``None`` if nowhere)."""
    lo, hi, lc, hc = iv
    a, b, ac, bc = rho
    if b == INF:
        if lo != -INF:
            return None
        nlo, nlc = -INF, False
    else:
        nlo, nlc = lo + b, lc or not bc
    nhi = hi + a
    return make(nlo, nhi, nlc, hc or not ac)


def since(j: Interval, k: Interval, rho: Interval) -> Interval | None:
    """Where ``A S_ρ B`` holds thanks to a maximal interval ``j`` of B and a maximal interval ``k`` of A
    with the witness t' in ``j ∩ [k.lo, k.hi)``: ``((j ∩ [k.lo, k.hi)) ⊕ ρ) ∩ (−∞, k.hi]``. (The case
    t = t' when ``0 ∈ ρ`` is ``j`` itself, added by the caller.)"""
    klo, khi = k[0], k[1]
    part = intersect(j, (klo, khi, klo != -INF, False))
    if part is None:
        return None
    out = shift(part, rho)
    if khi == INF:
        return out
    return intersect(out, (-INF, khi, False, True))


def covers_zero(rho: Interval) -> bool:
    return rho[0] == 0 and rho[2]


def precedes_or_touches(a: Interval, b: Interval) -> bool:
    """Whether ``a`` ends before ``b`` starts with no rational between them (so they coalesce)."""
    return a[1] > b[0] or (a[1] == b[0] and (a[3] or b[2]))


def coalesce(intervals: list[Interval]) -> list[Interval]:
    """Maximal intervals of a union: sorted, disjoint, never touching."""
    if not intervals:
        return []
    items = sorted(intervals, key=lambda iv: (iv[0], not iv[2]))
    out = [items[0]]
    for iv in items[1:]:
        lo, hi, lc, hc = out[-1]
        if hi > iv[0] or (hi == iv[0] and (hc or iv[2])):
            if iv[1] > hi:
                out[-1] = (lo, iv[1], lc, iv[3])
            elif iv[1] == hi and iv[3] and not hc:
                out[-1] = (lo, hi, lc, True)
        else:
            out.append(iv)
    return out


def add(intervals: list[Interval], iv: Interval) -> tuple[list[Interval], list[Interval]]:
    """Add ``iv`` to a coalesced list; returns (the new coalesced list, the parts of ``iv`` that are new)."""
    new = [iv]
    for old in intervals:
        if old[1] < iv[0] or old[0] > iv[1]:
            continue
        rest = []
        for piece in new:
            rest.extend(subtract(piece, old))
        new = rest
        if not new:
            return intervals, []
    return coalesce([*intervals, iv]), new


def subtract(a: Interval, b: Interval) -> list[Interval]:
    """``a − b`` as at most two intervals."""
    out = []
    left = make(a[0], b[0], a[2], not b[2])
    if left is not None:
        left = intersect(left, a)
        if left is not None:
            out.append(left)
    right = make(b[1], a[1], not b[3], a[3])
    if right is not None:
        right = intersect(right, a)
        if right is not None:
            out.append(right)
    return out


def denominator(t: Time) -> int:
    """The least ``d`` with ``t·d`` an integer (1 for ``inf``)."""
    kind = type(t)
    if kind is int:
        return 1
    if kind is Fraction:
        return t.denominator
    return 1 if t in (INF, -INF) else Fraction(t).denominator


def to_unit(t: Time, scale: int) -> Time:
    """``t`` in the time unit ``1/scale`` (an ``int`` when ``scale`` is a multiple of its denominator)."""
    kind = type(t)
    if kind is int:
        return t * scale
    if kind is not Fraction:
        if t in (INF, -INF):
            return t
        t = Fraction(t)
    times, rest = divmod(scale, t.denominator)
    return t.numerator * times if rest == 0 else t * scale


def from_unit(t: Time, scale: int) -> Time:
    """A time in the unit ``1/scale`` back in plain units (``int`` when integral, else ``Fraction``)."""
    if scale == 1 or type(t) is float:
        return t
    whole, rest = divmod(t, scale)
    return whole if rest == 0 else Fraction(t, scale)
