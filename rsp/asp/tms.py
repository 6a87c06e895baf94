"""Mode ``tms``: Ticker's incremental mode. The ground rules of the program live in a truth maintenance
network (:mod:`rsp.asp.network`) over time-independent nodes, as in Ticker: ``("N", p, args)`` (p holds
now), ``("A", p, args, s)`` (p holds at time point s) and window nodes (``("D", n, p, args)`` for
``[n] <> p``, ``("B", …)`` box, ``("W", n, p, args, s)`` ``[n] @s``, ``("TD"|"TB"|"TV"|"TP", n, …)`` the
tuple-window forms). A rule instance over these nodes keeps its meaning from tick to tick, so it is
grounded once; what changes with time are the rules that define window and "now" nodes from time
points (``D :- A@s`` while s is in the window, ``N :- A@t`` for the current t), stream facts, and
tuple-window facts: each tick adds the new ones and removes the expired ones, and the network relabels
only what those changes reach.

A box ``[n] [] p`` holds when p holds at each of the n + 1 time points of its window. Its justification
of the tick does not list those points: it reads O(log n) *segment* nodes ``("L", k, p, args, s)``, k a
power of two, "p holds at every point of [s - k + 1, s]", defined once each by doubling (``L(1, s) :-
A@s``, ``L(2k, s) :- L(k, s), L(k, s - k)``) and removed when their first point leaves every window: the
window's points split greedily from t into the fewest such segments. A tick then costs O(log n) per box
atom, not O(n) nodes in a rule body (what made large windows slow).
"""

from __future__ import annotations

from collections import defaultdict

from rsp.asp.network import Network, NoModel
from rsp.asp.program import UNBOUNDED, AspProgram
from rsp.asp.tuples import TupleNodes, TupleWindows
from rsp.asp.values import apply_comparisons, time_point
from rsp.errors import ProgramError
from rsp.lars.model import CONSTRAINT_PRED, ExtAtom, Op, Rule, Var, format_atom

LINK, WINDOW, FACT, TUPLE = "link", "window", "fact", "tuple"  # tags of the network's non-program rules


def _template(lit: ExtAtom) -> tuple:
    """The node pattern of an extended atom: (kind, window size or None, pred, args, time term)."""
    window, op, atom = lit.window, lit.op, lit.atom
    if window is None:
        return (
            ("N", None, atom.pred, atom.args, None)
            if op is Op.PLAIN
            else ("A", None, atom.pred, atom.args, lit.time)
        )
    n = window.size
    if window.tuple_based:
        kind = {Op.PLAIN: "TP", Op.DIAMOND: "TD", Op.BOX: "TB", Op.AT: "TV"}[op]
    else:
        kind = {Op.PLAIN: "N", Op.DIAMOND: "D", Op.BOX: "B", Op.AT: "W"}[op]
    if kind == "N":
        n = None
    return (kind, n, atom.pred, atom.args, lit.time if op is Op.AT else None)


def _node(kind: str, n: int | None, pred: str, args: tuple, time: int | None = None) -> tuple:
    if kind == "N":
        return ("N", pred, args)
    if kind == "A":
        return ("A", pred, args, time)
    if time is not None or kind in ("W", "TV"):
        return (kind, n, pred, args, time)
    return (kind, n, pred, args)


def _index(node: tuple) -> tuple:
    """The index key of a node: its kind, window size, predicate name and arity."""
    if node[0] == "N":
        return ("N", None, node[1], len(node[2]))
    if node[0] == "A":
        return ("A", None, node[1], len(node[2]))
    return (node[0], node[1], node[2], len(node[3]))


def _parts(node: tuple) -> tuple[tuple, int | None]:
    """(args, time) of a node."""
    if node[0] == "N":
        return node[2], None
    if node[0] == "A":
        return node[2], node[3]
    return node[3], (node[4] if len(node) > 4 else None)


def _unify(terms: tuple, values: tuple, binding: dict) -> dict | None:
    out = dict(binding)
    for term, value in zip(terms, values, strict=True):
        if isinstance(term, Var):
            if term.name in out:
                if out[term.name] != value:
                    return None
            else:
                out[term.name] = value
        elif term != value:
            return None
    return out


def _unify_time(term, s: int | None, binding: dict) -> dict | None:
    if term is None:
        return binding
    if isinstance(term, Var):
        if term.name in binding:
            return binding if time_point(binding[term.name]) == s else None
        return {**binding, term.name: s}
    return binding if time_point(term) == s else None


class TmsReasoner:
    """Answer streams tick by tick with a truth maintenance network; ``models``: how many (0: all)."""

    def __init__(self, program: AspProgram, start: int, models: int = 1) -> None:
        self.program = program
        self.start = start
        self.models = models
        self.t = start - 1
        self.net = Network()
        self.rules = [r for r in program.rules]
        self.templates = [[_template(lit) for lit in rule.positive_atoms()] for rule in self.rules]
        self.by_index: dict[tuple, list[tuple[int, int]]] = defaultdict(list)  # index -> (rule, position)
        for r, templates in enumerate(self.templates):
            for i, tpl in enumerate(templates):
                self.by_index[(tpl[0], tpl[1], tpl[2], len(tpl[3]))].append((r, i))
        # index -> nodes with a justification; (index, position, value) -> those nodes, for joins. Dicts
        # as ordered sets: nodes are met in the order they came, so the network's node order (the search
        # order) follows the input, never the hash of a string
        self.potential: dict[tuple, dict[tuple, None]] = defaultdict(dict)
        self.by_arg: dict[tuple, dict[tuple, None]] = {}
        # the time-window forms over each predicate, in the program's text order (a dict as ordered set)
        windows: dict[tuple, dict[tuple, None]] = defaultdict(dict)
        tuple_sizes: set[int] = set()
        self.timed: set[tuple[str, int]] = set()  # predicates read at time points (need A nodes)
        for rule in self.rules:
            for lit in rule.body:
                if not isinstance(lit, ExtAtom):
                    continue
                sig = (lit.atom.pred, len(lit.atom.args))
                if lit.window is not None and lit.window.tuple_based:
                    tuple_sizes.add(lit.window.size)
                    continue
                kind = _template(lit)[0]
                if kind != "N":
                    self.timed.add(sig)
                if kind in ("D", "B", "W"):
                    windows[sig][(kind, lit.window.size)] = None  # type: ignore[union-attr]
        self.windows = windows
        self.box_sizes = {  # the largest box window over each predicate: how far its segments reach
            sig: max(n for kind, n in forms if kind == "B")
            for sig, forms in windows.items()
            if any(kind == "B" for kind, _n in forms)
        }
        self.tuple_forms = {
            (lit.window.size, _template(lit)[0], lit.atom.pred, len(lit.atom.args))
            for rule in self.rules
            for lit in rule.body
            if isinstance(lit, ExtAtom) and lit.window is not None and lit.window.tuple_based
        }
        self.tuple_nodes = TupleNodes(
            self.tuple_forms, TupleWindows(tuple_sizes, start), program.program.facts
        )
        self.tuple_facts: set[tuple] = set()  # the tuple-window nodes that hold now (tag TUPLE)
        self.facts = [r for r in program.program.facts]
        self.expiry: dict[int, list[tuple]] = defaultdict(list)  # tick -> (key, tag) to remove then
        self.tick_rules: list[tuple] = []  # (key, tag) valid for the current tick only
        self.pending: dict[int, dict[tuple, None]] = defaultdict(dict)  # head time -> (key, rule) waiting
        self.intensional = {(s.name, s.arity) for s in program.intensional}
        self.shown: dict[tuple, str] = {}  # the N nodes of the output that are in, as atoms
        self.horizons: dict[tuple, int] = {}
        # inertia (docs/answer-streams.md): the search chooses the atoms now first, then the atoms at past
        # time points, with their previous labels first (rsp.asp.network.Network.update)
        self.inertia = self._rank

    def _rank(self, node: tuple) -> int:
        """The search order of inertia: atoms now (the output), then at past time points (the rest of
        the answer), then the nodes that follow from those (windows, segments, the atoms at t)."""
        if node[0] == "N":
            return 0
        return 1 if node[0] == "A" and node[3] < self.t else 2

    # -- network changes ---------------------------------------------------------------------------------

    def _add(self, key: tuple, tag, until: int | None = None) -> None:
        """Add a justification; ``until``: the tick at which it is removed (None: kept)."""
        if self.net.add(key, tag):
            if until is not None:
                if until == self.t + 1:
                    self.tick_rules.append((key, tag))
                else:
                    self.expiry[until].append((key, tag))

    def _settle(self) -> None:
        """React to nodes that got their first justification (ground from them, window rules) or lost
        their last one (drop the rules that need them)."""
        net = self.net
        while net.born or net.died:
            while net.died:
                node = net.died.pop()
                if net.supported(node):
                    continue
                self._leave(node)
                for jid in list(net.by_positive.get(node, ())):
                    net.remove(net.keys[jid], every=True)
            if net.born:
                node = net.born.pop()
                if not net.supported(node) or node in self.potential[_index(node)]:
                    continue
                self._enter(node)
                self._born(node)

    def _enter(self, node: tuple) -> None:
        index = _index(node)
        self.potential[index][node] = None
        for k, value in enumerate(_parts(node)[0]):
            self.by_arg.setdefault((index, k, value), {})[node] = None

    def _leave(self, node: tuple) -> None:
        index = _index(node)
        if node not in self.potential[index]:
            return
        del self.potential[index][node]
        for k, value in enumerate(_parts(node)[0]):
            nodes = self.by_arg[(index, k, value)]
            del nodes[node]
            if not nodes:
                del self.by_arg[(index, k, value)]

    def _candidates(self, index: tuple, terms: tuple, binding: dict) -> dict[tuple, None]:
        """The potential nodes of ``index`` that may match ``terms`` under ``binding``: the fewest found
        through one bound argument position."""
        best = self.potential[index]
        for k, term in enumerate(terms):
            if isinstance(term, Var):
                if term.name not in binding:
                    continue
                value = binding[term.name]
            else:
                value = term
            nodes = self.by_arg.get((index, k, value))
            if nodes is None:
                return {}
            if len(nodes) < len(best):
                best = nodes
        return best

    def _born(self, node: tuple) -> None:
        t = self.t
        kind = node[0]
        if kind == "A":
            _, pred, args, s = node
            sig = (pred, len(args))
            if s == t:
                self._add((("N", pred, args), (node,), ()), LINK, t + 1)
            if sig in self.box_sizes:
                self._segment(("L", 1, pred, args, s), (node,))
            for form, n in self.windows.get(sig, ()):
                if s < max(self.start, t - n):
                    continue
                if form == "D":
                    self._add((("D", n, pred, args), (node,), ()), WINDOW, s + n + 1)
                elif form == "W":
                    self._add((("W", n, pred, args, s), (node,), ()), WINDOW, s + n + 1)
        elif kind == "L":
            self._grow(node)
        elif kind == "N" and (node[1], len(node[2])) in self.timed:
            self._add((("A", node[1], node[2], t), (node,), ()), LINK, t + 1)
        for r, i in self.by_index.get(_index(node), ()):
            self._ground(r, i, node)

    def _segment(self, node: tuple, body: tuple) -> None:
        """Justify the segment node ``("L", k, p, args, s)`` by ``body`` until its first point
        s - k + 1 has left every box window over p."""
        _, k, pred, args, s = node
        until = s - k + 1 + self.box_sizes[(pred, len(args))] + 1
        if until > self.t:
            self._add((node, body, ()), WINDOW, until)

    def _grow(self, node: tuple) -> None:
        """A segment node got its first justification: the doubled segments it completes, and the box
        windows over its predicate that it may complete now."""
        _, k, pred, args, s = node
        sig = (pred, len(args))
        index = ("L", k, pred, len(args))
        if 2 * k <= self.box_sizes[sig] + 1:
            before = ("L", k, pred, args, s - k)
            if before in self.potential[index]:
                self._segment(("L", 2 * k, pred, args, s), (node, before))
            after = ("L", k, pred, args, s + k)
            if after in self.potential[index]:
                self._segment(("L", 2 * k, pred, args, s + k), (after, node))
        for form, n in self.windows[sig]:
            if form == "B" and s >= max(self.start, self.t - n):
                self._box(n, pred, args)

    def _box(self, n: int, pred: str, args: tuple) -> None:
        """The box ``[n] [] p(args)`` now, if every segment of its window has a justification: the
        points from max(start, t - n) to t, split greedily from t into segments of powers of two."""
        t, potential = self.t, self.potential
        first, end, body = max(self.start, t - n), t, []
        while end >= first:
            k = 1 << ((end - first + 1).bit_length() - 1)  # the largest power of two that fits
            segment = ("L", k, pred, args, end)
            if segment not in potential[("L", k, pred, len(args))]:
                return
            body.append(segment)
            end -= k
        self._add((("B", n, pred, args), tuple(body), ()), WINDOW, t + 1)

    def _ground(self, r: int, i: int, seed: tuple | None) -> None:
        """Every instance of rule r whose i-th positive atom is ``seed``, over the potential nodes."""
        rule: Rule = self.rules[r]
        templates = self.templates[r]
        if seed is None:  # a rule without positive atoms: grounded once
            partial: list[tuple[dict, dict]] = [({}, {})]
        else:
            _kind, _n, _pred, terms, time = templates[i]
            args, s = _parts(seed)
            binding = _unify(terms, args, {})
            if binding is not None:
                binding = _unify_time(time, s, binding)
            if binding is None:
                return
            partial = [(binding, {i: seed})]
        for j, tpl in enumerate(templates):
            if j == i:
                continue
            grown = []
            for binding, nodes in partial:
                for node in self._candidates((tpl[0], tpl[1], tpl[2], len(tpl[3])), tpl[3], binding):
                    args, s = _parts(node)
                    new = _unify(tpl[3], args, binding)
                    if new is not None:
                        new = _unify_time(tpl[4], s, new)
                    if new is not None:
                        grown.append((new, {**nodes, j: node}))
            partial = grown
        for binding, nodes in partial:
            done = apply_comparisons(rule.comparisons(), binding)
            if done is None:
                continue
            negative = []
            for lit in rule.negative_atoms():
                kind, n, pred, terms, time = _template(lit)
                args = tuple(done[a.name] if isinstance(a, Var) else a for a in terms)
                if kind == "A" or time is not None:
                    s = time_point(done[time.name] if isinstance(time, Var) else time)
                    if s is None:
                        continue  # @s with s not a time point: the atom never holds, `not` holds
                    negative.append(_node(kind, n, pred, args, s))
                else:
                    negative.append(_node(kind, n, pred, args))
            head = rule.head
            hargs = tuple(done[a.name] if isinstance(a, Var) else a for a in head.atom.args)
            positive = tuple(dict.fromkeys(nodes[j] for j in range(len(templates))))  # each node once
            negative = list(dict.fromkeys(negative))
            if head.time is None:
                self._add((("N", head.atom.pred, hargs), positive, tuple(negative)), r)
                continue
            at = time_point(done[head.time.name] if isinstance(head.time, Var) else head.time)
            if at is None or at < self.start:
                continue
            key = (("A", head.atom.pred, hargs, at), positive, tuple(negative))
            if at > self.t:
                self.pending[at][(key, r)] = None
            else:
                self._add(key, r)

    # -- ticks ------------------------------------------------------------------------------------------

    def step(self, t: int, batch: list[tuple[str, tuple]]) -> list[list[str]]:
        """The models at ``t`` after the stream atoms ``batch`` arrived: sorted lists of atoms."""
        self.t = t
        net = self.net
        for key, tag in self.tick_rules:
            net.remove(key, tag)
        self.tick_rules = []
        for key, tag in self.expiry.pop(t, ()):
            net.remove(key, tag)
        self._settle()  # nodes that lost their support at t drop the instances that need them
        if t == self.start:
            for r, templates in enumerate(self.templates):
                if not templates:
                    self._ground(r, -1, None)
            for rule in self.facts:
                atom = rule.head.atom
                if rule.head.time is None:
                    self._add((("N", atom.pred, atom.args), (), ()), FACT)
        for rule in self.facts:  # background facts at time point t, for the windows
            atom = rule.head.atom
            sig = (atom.pred, len(atom.args))
            at = time_point(rule.head.time) if rule.head.time is not None else t
            if at == t and sig in self.timed:
                self._add((("A", atom.pred, atom.args, t), (), ()), FACT, self._expires(sig, t))
            elif at == t and rule.head.time is not None:  # "@t p." read only now: p holds at this tick
                self._add((("N", atom.pred, atom.args), (), ()), FACT, t + 1)
        for pred, args in batch:
            sig = (pred, len(args))
            self._add((("A", pred, args, t), (), ()), FACT, self._expires(sig, t))
        # nodes born now link and window themselves (_born); an N node read at time points links to t
        for index, nodes in list(self.potential.items()):
            if index[0] == "N" and (index[2], index[3]) in self.timed:
                for node in list(nodes):
                    self._add((("A", node[1], node[2], t), (node,), ()), LINK, t + 1)
        for key, r in self.pending.pop(t, ()):
            if all(node in self.potential[_index(node)] for node in key[1]):
                self._add(key, r)
        self._settle()
        self._tuples(t, batch)
        self._settle()
        try:
            net.update(self.inertia)
        except NoModel as none:
            raise self._refusal(t, none.cycle) from None
        return self._models()

    def _refusal(self, t: int, cycle: list[tuple]) -> ProgramError:
        """No answer stream at t: the ground rules close an odd loop; name a program rule on it."""
        rules = [self.rules[tag] for key in cycle for tag in self.net.tags[key] if isinstance(tag, int)]
        rule = next((r for r in rules if r.is_constraint), None) or next(
            (r for r in rules if r.negative_atoms()), rules[0] if rules else None
        )
        what = (
            "a constraint"
            if rule is not None and rule.is_constraint
            else "a cycle through an odd number of negations"
        )
        shown = f": '{rule}'" if rule is not None else ""
        return ProgramError(
            f"mode tms cannot handle odd loops: no answer stream at time point {t}, where the ground rules "
            f"close {what}{shown}; mode tms keeps a model from tick to tick and needs one; use --mode clingo",
            rule.origin.position if rule is not None else None,
        )

    def _expires(self, sig: tuple, t: int) -> int | None:
        horizon = self.horizons.get(sig)
        if horizon is None:
            horizon = self.horizons[sig] = self.program.horizon(_sig(sig))
        return None if horizon == UNBOUNDED else t + horizon + 1

    def _tuples(self, t: int, batch: list[tuple[str, tuple]]) -> None:
        if not self.tuple_forms:
            return
        add, drop = self.tuple_nodes.update(t, batch, self.tuple_facts)
        for node in drop:  # lists in a fixed order: the network's node order follows them
            self.net.remove((node, (), ()), TUPLE)
        self._settle()
        for node in add:
            self.net.add((node, (), ()), TUPLE)
        self.tuple_facts = (self.tuple_facts - set(drop)) | set(add)

    def _models(self) -> list[list[str]]:
        def output(label: dict) -> tuple[str, ...]:
            return tuple(
                sorted(
                    format_atom(node[1], node[2])
                    for node, value in label.items()
                    if value
                    and node[0] == "N"
                    and (node[1], len(node[2])) in self.intensional
                    and node[1] != CONSTRAINT_PRED
                )
            )

        label, shown = self.net.label, self.shown
        for node in self.net.changed:  # the output follows the labels that changed
            if node[0] != "N" or (node[1], len(node[2])) not in self.intensional:
                continue
            if label.get(node, False):
                shown[node] = format_atom(node[1], node[2])
            else:
                shown.pop(node, None)
        self.net.changed = []
        if self.models == 1:
            return [sorted(shown.values())]
        found: list[tuple[str, ...]] = []
        for model in self.net.models():
            got = output({**self.net.label, **model})
            if got not in found:
                found.append(got)
                if len(found) == self.models:
                    break
        return sorted(list(m) for m in found)


def _sig(sig: tuple):
    from rsp.lars.model import Sig

    return Sig(*sig)


def _show(node: tuple) -> str:
    """A node as the extended atom it stands for (``[3] <> p(a)``, ``@5 p(a)``, ``p(a)``)."""
    kind = node[0]
    if kind == "N":
        return format_atom(node[1], node[2])
    if kind == "A":
        return f"@{node[3]} {format_atom(node[1], node[2])}"
    n, atom = node[1], format_atom(node[2], node[3])
    window = f"[#{n}]" if kind.startswith("T") else f"[{n}]"
    if kind in ("D", "TD"):
        return f"{window} <> {atom}"
    if kind in ("B", "TB"):
        return f"{window} [] {atom}"
    if kind == "TP":
        return f"{window} {atom}"
    return f"{window} @{node[4]} {atom}"


def explain(reasoner: TmsReasoner, pred: str, args: tuple) -> dict | None:
    """Why ``pred(args)`` holds now in the reasoner's model: the rule (and its origin) of a valid
    justification, the premises that hold and the assumptions (``not x``) it makes; None if it is out."""
    net = reasoner.net
    node = ("N", pred, args)
    if not net.label.get(node, False):
        return None
    # follow links (N <- A@t) to the program rule that put the atom there
    todo, seen = [node], set()
    while todo:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        for key in sorted((net.keys[jid] for jid in net.by_head.get(current, ())), key=str):
            _, pos, neg = key
            if not all(net.label.get(p, False) for p in pos) or any(net.label.get(n, False) for n in neg):
                continue
            rules = [tag for tag in net.tags[key] if isinstance(tag, int)]
            if rules:
                rule = reasoner.rules[rules[0]]
                return {
                    "atom": format_atom(pred, args),
                    "rule": str(rule),
                    "origin": str(rule.origin),
                    "premises": [_show(p) for p in pos],
                    "assumptions": [f"not {_show(n)}" for n in neg],
                }
            if not pos:
                return {
                    "atom": format_atom(pred, args),
                    "rule": "[stream or background fact]",
                    "origin": "",
                    "premises": [],
                    "assumptions": [],
                }
            todo.extend(pos)
    return None
