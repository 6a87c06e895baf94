"""Lexical forms of the query syntax: durations (``10s``, ``1.5m``, ISO 8601 ``PT10S``) as integer
milliseconds, and string literals (escapes decoded, written back in N-Triples form)."""

from __future__ import annotations

import re
from fractions import Fraction

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_SIMPLE_DURATION = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)")
_ISO_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_ISO_DURATION = re.compile(
    rf"P(?:{_ISO_NUMBER}W)?(?:{_ISO_NUMBER}D)?(?:T(?:{_ISO_NUMBER}H)?(?:{_ISO_NUMBER}M)?(?:{_ISO_NUMBER}S)?)?",
    re.IGNORECASE,
)
_ISO_FACTORS = (7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000)
_DURATION_HINT = "write e.g. 10s, 500ms, 1m, 1h, 1d or ISO 8601 PT10S"


def parse_duration(text: str) -> int:
    """A duration in milliseconds; ``ValueError`` with a message for anything else.

    >>> parse_duration("10s"), parse_duration("500ms"), parse_duration("PT1M30S"), parse_duration("PT0.5S")
    (10000, 500, 90000, 500)
    """
    text = re.sub(r"\s+", "", text)  # Jasper writes "5 s"
    if text[:1] in "Pp":
        match = _ISO_DURATION.fullmatch(text)
        if match is None or not any(match.groups()) or text.upper().endswith("T"):
            if re.fullmatch(r"P[0-9.]+[YM].*", text, re.IGNORECASE):
                raise ValueError(f"ISO 8601 duration '{text}' uses years or months (no fixed length)")
            raise ValueError(f"malformed ISO 8601 duration '{text}' ({_DURATION_HINT})")
        total = sum(
            Fraction(n) * f for n, f in zip(match.groups(), _ISO_FACTORS, strict=True) if n is not None
        )
    else:
        match = _SIMPLE_DURATION.fullmatch(text)
        if match is None:
            raise ValueError(f"malformed duration '{text}' ({_DURATION_HINT})")
        sign, number, unit = match.groups()
        if not unit:
            raise ValueError(f"duration '{text}' needs a unit ({_DURATION_HINT})")
        if unit.lower() not in _UNITS:
            raise ValueError(f"unknown duration unit '{unit}' in '{text}' ({_DURATION_HINT})")
        total = Fraction(number) * _UNITS[unit.lower()] * (-1 if sign == "-" else 1)
    if total <= 0:
        raise ValueError(f"duration '{text}' must be positive")
    if total.denominator != 1:
        raise ValueError(f"duration '{text}' is not a whole number of milliseconds")
    return int(total)


_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)
_LOCAL_ESCAPE = re.compile(r"\\(.)")


def _unescape(body: str) -> str:
    def replace(m: re.Match[str]) -> str:
        if m.group(1) or m.group(2):
            return chr(int(m.group(1) or m.group(2), 16))
        if m.group(3) in _ECHAR:
            return _ECHAR[m.group(3)]
        raise ValueError(f"unknown escape sequence '\\{m.group(3)}' in a string")

    return _ESCAPE.sub(replace, body)


def _nt_string(value: str) -> str:
    """``value`` as an N-Triples string (canonical escapes), quotes included."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + re.sub(r"[\x00-\x08\x0b\x0e-\x1f\x7f]", lambda m: f"\\u{ord(m.group()):04X}", escaped) + '"'
