"""Explanations of query answers: for an answer at an evaluation instant, the solutions of the query's
patterns that produce it and, for each, its derivation — the LARS rules with their origins (the query's
line, or the W3C rule id of a background rule) down to the stream triples (stream IRI and timestamp in
ms) and static triples it rests on.

Nothing is recorded while the query runs: the solutions are recomputed with their provenance, and the
engine's tables are searched (:meth:`rsp.engine.Engine.explain`) only when an explanation is asked for.
Exact element timestamps need ``Engine(explain=True)``; without it a stream triple is placed in its
time slot (``within`` gives the slot length).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from weakref import WeakKeyDictionary

from rsp.engine.explain import Derivation
from rsp.errors import Position
from rsp.lars.model import Comparison, Guard, Rule, Var
from rsp.query.answers.algebra import ExpressionCache, Instant, Solution, integer_literal
from rsp.query.syntax import ast
from rsp.query.translation.translate import PatternTable

Triple = tuple[str, str, str]
Answer = dict[str, str] | str | Triple | bool

_HIDDEN = "\x00"
"""Solution keys that start with this character carry provenance (the pattern table and its row)."""


class Kind(enum.Enum):
    """What a node of an explanation stands for."""

    SOLUTION = "solution"
    """a solution of the WHERE clause, or of one pattern (with the rule that computes it)"""
    DERIVED = "derived"
    """a triple derived by a rule: the window rule (stream → graph) or a background rule"""
    STREAM = "stream"
    """a stream triple, with its stream and timestamps"""
    STATIC = "static"
    """a triple of the static graphs and ontologies (closed under the entailment regime once); one
    the closure derived has the background rule (W3C id) and its static premises"""
    CONDITION = "condition"
    """a FILTER or comparison that held, with the values it read"""


@dataclass
class Step:
    """One node of an explanation tree; ``children`` are the premises it rests on."""

    kind: Kind
    triple: Triple | None = None
    rule: Rule | None = None
    bindings: dict[str, str] = field(default_factory=dict)
    text: str = ""
    stream: str | None = None
    times: list[int] = field(default_factory=list)
    """ms: a stream triple's timestamps; a derived fact's time slot when it is not the instant's own"""
    within: int | None = None
    """when set, each time is the start of a time slot of this many ms (element times were not kept)"""
    children: list[Step] = field(default_factory=list)

    def walk(self) -> Iterator[Step]:
        """This step and every step below it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()

    def to_json(self) -> dict:
        """The step as JSON: ``kind`` and what that kind has (terms in N-Triples syntax)."""
        out: dict[str, object] = {"kind": self.kind.value}
        if self.triple is not None:
            out["triple"] = " ".join(self.triple) + " ."
        if self.bindings:
            out["bindings"] = dict(self.bindings)
        if self.text:
            out["text"] = self.text
        if self.rule is not None:
            out["rule"] = str(self.rule)
            out["origin"] = str(self.rule.origin)
        if self.stream is not None:
            out["stream"] = self.stream
        if self.times:
            out["times"] = list(self.times)
        if self.within is not None:
            out["within"] = self.within
        if self.children:
            out["premises"] = [c.to_json() for c in self.children]
        return out

    def lines(self, term: Callable[[str], str] = str, indent: int = 0) -> Iterator[str]:
        """The step as indented text lines; ``term`` renders a term (e.g. as a prefixed name)."""
        pad = "  " * indent
        children = self.children
        if self.kind is Kind.SOLUTION:
            values = " ".join(f"?{k}={term(v)}" for k, v in self.bindings.items())
            if self.rule is None:
                yield f"{pad}solution {values}"
            else:
                yield f"{pad}{_origin_label(self.rule)}: {values}"
        elif self.kind is Kind.CONDITION:
            values = ", ".join(f"?{k} = {term(v)}" for k, v in self.bindings.items())
            yield f"{pad}{self.text}" + (f"  [{values}]" if values else "")
        elif self.kind is Kind.DERIVED:
            only = children[0] if len(children) == 1 else None
            if only is not None and only.kind is Kind.STREAM and only.triple == self.triple:
                # the window rule: a stream triple seen in the graph; one line says both
                where = f"{only._where(term)}, {_origin_label(self.rule)}"
                yield f"{pad}{_triple_text(self.triple, term)}  [{where}]"
                return
            when = f" in slot {self._when()}" if self.times else ""
            yield f"{pad}{_triple_text(self.triple, term)}{when}  [by {_origin_label(self.rule)}]"
        elif self.kind is Kind.STATIC:
            by = f", by {_origin_label(self.rule)}" if self.rule is not None else ""
            yield f"{pad}{_triple_text(self.triple, term)}  [static graph{by}]"
        else:
            yield f"{pad}{_triple_text(self.triple, term)}  [{self._where(term)}]"
        for child in children:
            yield from child.lines(term, indent + 1)

    def _when(self) -> str:
        if self.within is None:
            return ", ".join(f"{t} ms" for t in self.times)
        return ", ".join(f"[{t}, {t + self.within}) ms" for t in self.times)

    def _where(self, term: Callable[[str], str]) -> str:
        return f"stream {term(self.stream or '')} @ {self._when()}"


def _triple_text(triple: Triple | None, term: Callable[[str], str]) -> str:
    return " ".join(term(t) for t in triple or ())


def _origin_label(rule: Rule | None) -> str:
    """``pattern q.rq:9:3``, ``window q.rq:7:1`` for query rules (the file's base name: the JSON form
    keeps the full origin); the W3C id (``cax-sco``) otherwise."""
    if rule is None:
        return ""
    origin = rule.origin
    position = origin.position
    if position is not None and origin.source:
        where = Position(PurePath(position.file).name, position.line, position.column)
        return f"{origin.source} {where}"
    return str(origin)


@dataclass
class Explanation:
    """Why ``answer`` is an answer of query ``query`` at ``time`` (ms): ``steps`` holds one
    :attr:`Kind.SOLUTION` step per WHERE solution that produces it (``omitted`` more were left out)."""

    query: str
    time: int
    answer: dict[str, str] | str | bool
    steps: list[Step] = field(default_factory=list)
    omitted: int = 0

    def walk(self) -> Iterator[Step]:
        """Every step of every tree, depth first."""
        for step in self.steps:
            yield from step.walk()

    def rules(self) -> list[Rule]:
        """The rules of the query's program the explanation uses, each once, in the order they first
        appear (the rules that closed the static data are :meth:`static_rules`)."""
        seen: dict[int, Rule] = {}
        for step in self.walk():
            if step.rule is not None and step.kind is not Kind.STATIC:
                seen.setdefault(id(step.rule), step.rule)
        return list(seen.values())

    def static_rules(self) -> list[Rule]:
        """The background rules that derived its static triples when the static data was closed."""
        seen: dict[int, Rule] = {}
        for step in self.walk():
            if step.rule is not None and step.kind is Kind.STATIC:
                seen.setdefault(id(step.rule), step.rule)
        return list(seen.values())

    def stream_triples(self) -> list[tuple[str, Triple, int]]:
        """The stream triples ``(stream IRI, triple, time in ms)`` it rests on, sorted, each once."""
        found = {
            (step.stream or "", step.triple, time)
            for step in self.walk()
            if step.kind is Kind.STREAM and step.triple is not None
            for time in step.times
        }
        return sorted(found, key=lambda item: (item[2], item[0], item[1]))

    def static_triples(self) -> list[Triple]:
        """The static (ontology or static graph) triples it rests on, sorted, each once."""
        return sorted({s.triple for s in self.walk() if s.kind is Kind.STATIC and s.triple is not None})

    def to_json(self) -> dict:
        """``answer``, the flat ``rules`` (rule and origin), ``triples`` (stream, triple, time) and
        ``static`` lists, and the derivation trees as ``solutions``."""
        answer = self.answer if not isinstance(self.answer, tuple) else " ".join(self.answer) + " ."
        out: dict[str, object] = {
            "answer": answer,
            "rules": [{"rule": str(r), "origin": str(r.origin)} for r in self.rules()],
            "triples": [
                {"stream": stream, "triple": " ".join(triple) + " .", "time": time}
                for stream, triple, time in self.stream_triples()
            ],
            "static": [" ".join(t) + " ." for t in self.static_triples()],
            "static_rules": [{"rule": str(r), "origin": str(r.origin)} for r in self.static_rules()],
            "solutions": [s.to_json() for s in self.steps],
        }
        if self.omitted:
            out["more_solutions"] = self.omitted
        return out

    def lines(self, term: Callable[[str], str] = str) -> list[str]:
        """Text lines: ``why <answer>:`` and the derivation trees, indented."""
        if isinstance(self.answer, dict):
            what = " ".join(f"?{k}={term(v)}" for k, v in self.answer.items()) or "{}"
        elif isinstance(self.answer, bool):
            what = "true" if self.answer else "false"
        else:
            what = " ".join(term(t) for t in _split_triple(self.answer))
        lines = [f"why {what}:"]
        for step in self.steps:
            # a WHERE solution that is one pattern's solution: show the pattern's step only
            shown = step.children[0] if len(step.children) == 1 and step.rule is None else step
            lines.extend(shown.lines(term, 1))
        if self.omitted:
            lines.append(f"  … and {self.omitted} more solution(s)")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())


# -- solutions with their provenance ------------------------------------------------------------------


class _TracingInstant(Instant):
    """The query algebra at an instant where every solution remembers the pattern rows it came from
    (under keys starting with :data:`_HIDDEN`, which expressions never see)."""

    def table(self, table: PatternTable) -> list[Solution]:
        out = []
        slot = self.translation.slot
        names = table.variables
        key = _HIDDEN + table.pred
        for row in self.rows(table.pred):
            if table.time_var is None:
                solution = dict(zip(names, row, strict=True))
            else:
                solution = dict(zip(names, row[:-1], strict=True))
                solution[table.time_var] = integer_literal(row[-1] * slot)
            solution[key] = row
            out.append(solution)
        return out

    def test(self, expr, solution: Solution) -> bool:
        return super().test(expr, _visible(solution))

    def value(self, expr, solution: Solution) -> str | None:
        return super().value(expr, _visible(solution))


def _visible(solution: Solution) -> Solution:
    return {k: v for k, v in solution.items() if k[:1] != _HIDDEN}


def _term(value: object) -> str:
    from rsp.io.terms import as_term

    return as_term(value)


def _normal_solution(answer: dict) -> dict[str, str]:
    return {k.lstrip("?"): _term(v) for k, v in answer.items() if v is not None}


def _split_triple(answer: str | Triple) -> Triple:
    if isinstance(answer, tuple):
        return answer
    from rsp.io.ntriples import parse_line

    parsed = parse_line(answer if answer.rstrip().endswith(".") else answer + " .")
    if parsed is None:
        raise ValueError(f"not an N-Triples statement: {answer!r}")
    return parsed[0]


def _agrees(solution: Solution, wanted: dict[str, str]) -> bool:
    for name, value in solution.items():
        if name[:1] == _HIDDEN or value is None:
            continue
        other = wanted.get(name)
        if other is not None and other != _term(value):
            return False
    return True


def _instantiates(template: Sequence[ast.TriplePattern], solution: Solution, triple: Triple) -> bool:
    for pattern in template:
        for term, value in zip((pattern.subject, pattern.predicate, pattern.object), triple, strict=True):
            if isinstance(term, ast.Var):
                bound = solution.get(term.name)
                if bound is None:
                    if not (term.name.startswith("_") and value.startswith("_:")):
                        break
                elif _term(bound) != value:
                    break
            elif term != value:
                break
        else:
            return True
    return False


# -- derivations as steps --------------------------------------------------------------------------------


class _Converter:
    """Turns the engine's derivations of pattern rows into steps over triples, streams and ms."""

    def __init__(self, handle) -> None:
        tr = handle.translation
        self.streams = {pred: iri for iri, pred in tr.streams.items()}
        self.counts = dict(tr.counts)  # count-window predicate -> (stream IRI, n)
        self.graphs = set(tr.graphs.values()) | set(tr.slot_graphs.values())
        self.slot = tr.slot
        self.point = handle.lars.t
        self.times = handle.element_times
        self.handle = handle

    def derivation(self, d: Derivation) -> Step:
        if d.rule is None:
            if d.source == "background fact":
                return self.static(d.args)
            return self.stream(d.pred, d.args, [d.time])
        if d.pred in self.graphs:
            step = Step(Kind.DERIVED, triple=d.args, rule=d.rule)
        else:
            step = Step(Kind.SOLUTION, rule=d.rule, bindings=_head_bindings(d.rule, d.args))
        if d.time != self.point:
            step.times, step.within = [d.time * self.slot], self.slot
        for premise in d.premises:
            if premise.atom is None:
                step.children.append(_condition(premise.literal, premise.text, premise.values))
            elif premise.derivations:
                step.children.extend(self.derivation(sub) for sub in premise.derivations)
            elif premise.atom[0] in self.streams or premise.atom[0] in self.counts:
                step.children.append(self.stream(*premise.atom, premise.times))
            else:
                step.children.append(Step(Kind.CONDITION, text=premise.text))
        return step

    def static(self, triple: tuple) -> Step:
        """A static triple; one the entailment regime derived comes with its derivation in the closure."""
        closure = _closure_engine(self.handle)
        if closure is None:
            return Step(Kind.STATIC, triple=triple)
        found = closure.explain("g", triple)
        return Step(Kind.STATIC, triple=triple) if found is None else _static_step(found)

    def stream(self, pred: str, args: tuple, points: Iterable[int]) -> Step:
        if pred in self.counts:  # a count window ([TRIPLES n]): the elements it holds at the instant
            iri, _n = self.counts[pred]
            times = sorted(set(self.handle.count_times(pred, args)))
            return Step(Kind.STREAM, triple=args, stream=iri, times=times)
        step = Step(Kind.STREAM, triple=args, stream=self.streams.get(pred, pred))
        slot, points = self.slot, set(points)
        known = self.times.get((pred, args)) if self.times is not None else None
        if known is not None:
            step.times = sorted({time for time in known if time // slot in points})
        if not step.times:
            step.times, step.within = sorted(p * slot for p in points), slot
        return step


_CLOSURES: WeakKeyDictionary = WeakKeyDictionary()
"""query handle -> the engine that closed its static data (built on first use)"""


def _closure_engine(handle):
    """The engine that closed the query's static data (built on first use, kept while the handle
    lives), or None when there is no entailment or no static data."""
    from rsp.background import Regime

    regime = Regime(handle.entailment)
    static = handle.static
    if regime is Regime.NONE or not static:
        return None
    engine = _CLOSURES.get(handle)
    if engine is None:
        from rsp.background.specialise import closure_program
        from rsp.engine import Engine
        from rsp.lars import check
        from rsp.lars.model import Program

        rules = closure_program(regime, set(map(tuple, static)))
        engine = Engine(check(Program(tuple(rules), source="<static closure>")))
        engine.step(0)
        _CLOSURES[handle] = engine
    return engine


def _static_step(d: Derivation) -> Step:
    """A derivation of the static closure as a static step: the rule and the static premises."""
    step = Step(Kind.STATIC, triple=d.args, rule=d.rule)
    for premise in d.premises:
        if premise.derivations:
            step.children.extend(_static_step(sub) for sub in premise.derivations)
        elif premise.atom is not None and premise.atom[0] == "g":
            step.children.append(Step(Kind.STATIC, triple=premise.atom[1]))
        elif premise.atom is None:
            step.children.append(_condition(premise.literal, premise.text, premise.values))
    return step


def _variable(name: str) -> str:
    return name[2:] if name.startswith("V_") else name


def _head_bindings(rule: Rule, args: tuple) -> dict[str, str]:
    out = {}
    for term, value in zip(rule.head.atom.args, args, strict=False):
        if isinstance(term, Var) and not term.name.startswith("V__"):
            out[_variable(term.name)] = _term(value)
    return out


def _condition(literal, text: str, values: dict | None) -> Step:
    shown = {_variable(k): _term(v) for k, v in (values or {}).items() if v is not None}
    if isinstance(literal, Guard):
        return Step(Kind.CONDITION, text=f"FILTER({literal.text})", bindings=shown)
    if isinstance(literal, Comparison):
        return Step(Kind.CONDITION, text=str(literal), bindings=shown)
    return Step(Kind.CONDITION, text=text)


# -- the entry point -----------------------------------------------------------------------------------------


def explain_answers(
    handle, answers: Sequence[Answer], *, limit: int | None = 10, verify: bool = True
) -> list[Explanation | None]:
    """Explanations of ``answers`` of the registered query ``handle`` at its current instant (the last
    one closed), in order: a SELECT solution as a dict, a CONSTRUCT triple (an N-Triples line or a
    tuple), or ``True`` for ASK. None for an answer that is not one now (with ``verify``; without it the
    caller vouches that each answer is one). At most ``limit`` supporting WHERE solutions are
    explained per answer (None: all); the others are counted in :attr:`Explanation.omitted`."""
    form = handle.query.form
    compiled = handle.compilers
    tracing = _TracingInstant(handle.translation, handle.rows, compiled, ExpressionCache())
    solutions = tracing.group(form.where)
    current: list | None = None
    if verify and isinstance(form, ast.Select):
        plain = Instant(handle.translation, handle.rows, compiled, ExpressionCache())
        current = [_normal_solution(s) for s in plain.select(form)]
    converter = _Converter(handle)
    out: list[Explanation | None] = []
    for answer in answers:
        if isinstance(form, ast.Select):
            if not isinstance(answer, dict):
                raise TypeError("a SELECT answer is a dict from variable to term")
            wanted = _normal_solution(answer)
            if current is not None and wanted not in current:
                out.append(None)
                continue
            supporting = [s for s in solutions if _agrees(s, wanted)]
            shown: dict[str, str] | str | bool = wanted
        elif isinstance(form, ast.Construct):
            triple = _split_triple(answer)  # type: ignore[arg-type]
            supporting = [s for s in solutions if _instantiates(form.template, s, triple)]
            shown = " ".join(triple) + " ."
        else:
            supporting = solutions if answer is True else []
            shown = True
        if verify and not supporting and not isinstance(form, ast.Select):
            out.append(None)
            continue
        kept = supporting if limit is None else supporting[:limit]
        omitted = len(supporting) - len(kept)
        explanation = Explanation(handle.name, handle.closed_until or 0, shown, omitted=omitted)
        for solution in kept:
            visible = {k: _term(v) for k, v in _visible(solution).items() if not k.startswith("_")}
            step = Step(Kind.SOLUTION, bindings=visible)
            for key, row in solution.items():
                if key[:1] != _HIDDEN:
                    continue
                derivation = handle.lars.explain(key[1:], row)
                if derivation is not None:
                    step.children.append(converter.derivation(derivation))
            explanation.steps.append(step)
        out.append(explanation)
    return out
