"""Blank nodes scoped to their source (DESIGN.md §3): ``_:n`` read from two sources — two stream files,
two streams, a stream and a static graph — names two different nodes, as in an RDF merge, while within
one source it names one node in every element.

:class:`Scopes` gives each source a label prefix and relabels a blank node ``_:x`` of that source as
``_:s<hex>_x``: still an N-Triples blank node, and never the label of a node from another source (the
prefixes differ, and ``_`` ends each one: no prefix is the start of another). The prefix is derived from
the source's name, so the same source gets the same labels in every run and every process (``rsp run``,
``rsp spark``, one engine per key).

>>> scopes = Scopes()
>>> a = scopes.relabel([("_:n", "<http://ex/p>", '"1"')], "a.nt")
>>> b = scopes.relabel([("_:n", "<http://ex/q>", '"2"')], "b.nt")
>>> a[0][0] != b[0][0], a == scopes.relabel([("_:n", "<http://ex/p>", '"1"')], "a.nt")
(True, True)
>>> a[0][0]
'_:s83d26c_n'
"""

from __future__ import annotations

import hashlib
from operator import itemgetter

Triple = tuple[str, str, str]

_subject, _object = itemgetter(0), itemgetter(2)


class Scopes:
    """The label prefix of every source seen so far (a source is named by any string)."""

    def __init__(self) -> None:
        self._prefixes: dict[str, str] = {}
        self._owners: dict[str, str] = {}

    def prefix(self, source: str) -> str:
        """``_:s<hex>_``: what a blank node label of ``source`` is written after (hex from a hash of the
        name, longer in the rare case that two sources' short hashes meet)."""
        prefix = self._prefixes.get(source)
        if prefix is None:
            digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
            size = 6
            while (prefix := f"_:s{digest[:size]}_") in self._owners:
                size += 2
            self._prefixes[source] = prefix
            self._owners[prefix] = source
        return prefix

    @staticmethod
    def blank(triples: list[Triple]) -> bool:
        """Whether a subject or object of ``triples`` (valid N-Triples terms, at least one triple) is a
        blank node: for one triple two character tests, for more at C speed (``_`` sorts after ``<`` and
        ``"``, so the largest subject or object starts with ``_`` exactly when some term is a blank node).

        >>> one, two = [("<a>", "<p>", '"x"')], [("<a>", "<p>", "<b>"), ("_:y", "<p>", '"z"')]
        >>> Scopes.blank(one), Scopes.blank(two), Scopes.blank([("<a>", "<p>", "_:z")])
        (False, True, True)
        """
        if len(triples) == 1:
            s, _, o = triples[0]
            return s[0] == "_" or o[0] == "_"
        return max(map(_subject, triples))[0] == "_" or max(map(_object, triples))[0] == "_"

    def relabel(self, triples: list[Triple], source: str) -> list[Triple]:
        """``triples`` (valid N-Triples terms) with their blank nodes in the scope of ``source``; the same
        list when it has none (:meth:`blank`)."""
        if not triples or not self.blank(triples):
            return triples
        prefix = self.prefix(source)
        return [
            (prefix + s[2:] if s[0] == "_" else s, p, prefix + o[2:] if o[0] == "_" else o)
            for s, p, o in triples
        ]
