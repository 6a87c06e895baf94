"""What a run of continuous queries over streams read from files or live input checks once the streams
have ended (:class:`RunChecks`), so that a run is never silently empty or silently without reasoning."""

from __future__ import annotations

from rsp.errors import StreamError
from rsp.io.ntriples import ReadCounters

_SCHEMA = ("<http://www.w3.org/2000/01/rdf-schema#", "<http://www.w3.org/2002/07/owl#")
_RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


class RunChecks:
    """What a run of queries over stream files or live input (``rsp run``) tells once its streams have
    ended, so that a run is never silently empty: a run that read no element because every line was
    rejected is an error (exit 2); a stream that gave no element is a warning; so is ``--entailment
    rdfs|owlrl`` with nothing to reason with (no ``--ontology``, no ``FROM`` graph and no schema triple,
    rdfs: or owl: terms, in the streams)."""

    def __init__(self, entailment: str, ontologies: int, handles) -> None:
        self.entailment = entailment
        static = ontologies or any(h.query.graphs or h.query.named_graphs for h in handles)
        self.need_schema = entailment != "none" and not static

    def see(self, triples) -> None:
        """Stream triples read (a schema triple among them answers the entailment check)."""
        if self.need_schema:
            for _s, p, o in triples:
                if p.startswith(_SCHEMA) or (p == _RDF_TYPE and o.startswith(_SCHEMA)):
                    self.need_schema = False
                    break

    def finish(self, streams: list[tuple[str, ReadCounters]]) -> list[str]:
        """The warnings once the streams ended (``streams``: each one's source name and counters); raises
        :class:`~rsp.errors.StreamError` when no element was read because every line was rejected."""
        if not any(counter.triples for _name, counter in streams):
            bad = [(name, counter) for name, counter in streams if counter.rejected]
            if bad:
                shown = ", ".join(f"{name} ({counter.rejected:,} line(s))" for name, counter in bad)
                raise StreamError(
                    f"no element was read: every line was rejected in {shown}; a stream file is "
                    "N-Triples whose lines end in their time in ms ('<s> <p> <o> . # 1200'); an ontology "
                    "goes to --ontology"
                )
        warnings = []
        for name, counter in streams:
            if counter.triples:
                continue
            if counter.rejected:
                reason = "every line was rejected: no element was read from it"
            else:
                reason = "the stream is empty: no element was read from it"
            warnings.append(f"{name}: warning: {reason}")
        if self.need_schema and any(counter.triples for _name, counter in streams):
            warnings.append(
                f"rsp run: warning: --entailment {self.entailment} had nothing to reason with: no "
                "--ontology, no FROM graph and no schema triple (rdfs: or owl: terms) in the streams"
            )
        return warnings
