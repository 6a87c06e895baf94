"""Mode ``clingo``: the LarsToAsp encoding solved by clingo at every time point, the ground program kept
across ticks (multi-shot: one ``step`` part grounded per tick, stream atoms and the tick's ``now(t)`` as
externals, the control renewed every few ticks so that old ticks' parts do not pile up in the solver),
or grounded from scratch every tick (``incremental=False``, the repeated one-shot solving Ticker compares
against)."""

from __future__ import annotations

from collections import Counter

import clingo

from rsp.asp.encoding import Encoding, Functions, encode
from rsp.asp.program import UNBOUNDED, AspProgram
from rsp.asp.tuples import TupleWindows
from rsp.lars.model import format_atom

RENEW_EVERY = 4
"""Ticks solved by one control before it is renewed. clingo never forgets a ground rule: the parts of
old ticks, switched off, stay in the solver as false variables and every solve pays for them (about
0.2 µs each: after 300 ticks of a window of 50, 140,000 atoms made a tick 20 times slower than at the
start). A new control with the visible stream atoms as externals bounds that; the next tick's step part
grounds the windows as before."""


def _quiet(_code, _message) -> None:
    """clingo's info messages (e.g. "no atoms over signature") are not the user's business."""


class ClingoReasoner:
    """Answer streams tick by tick with clingo; ``models`` is how many to find (0: all)."""

    def __init__(
        self,
        program: AspProgram,
        start: int,
        models: int = 1,
        incremental: bool = True,
        renew_every: int = RENEW_EVERY,
    ) -> None:
        self.program = program
        self.start = start
        self.models = models
        self.incremental = incremental
        self.renew_every = renew_every
        self.ticks = 0  # ticks solved by the current control
        self.encoding: Encoding = encode(program, start)
        self.tuples = TupleWindows(set(self.encoding.tuple_sizes), start)
        self.functions = Functions()
        self.stream: Counter = Counter()  # (atom symbol, time) -> how many elements, while visible
        self.tuple_members: dict[int, set] = {n: set() for n in self.encoding.tuple_sizes}
        self.control = self._control() if incremental else None
        self.explaining = False  # keep each model's atoms for explain() (``--explain``)
        self.last: tuple[int, list[int]] = (start, [])  # the last tick and its tuple-window starts
        self.atoms: dict[tuple[str, ...], list[clingo.Symbol]] = {}  # the last tick's models' h atoms
        self._supports: tuple[tuple | None, list[clingo.Symbol]] = (None, [])  # (tick, model), sup atoms

    def _control(self) -> clingo.Control:
        control = clingo.Control(["--project=show", "--warn=none"], logger=_quiet)
        control.configuration.solve.models = self.models  # type: ignore[union-attr]
        control.add("base", [], self.encoding.base)
        control.add("base", [], self.encoding.inputs)
        control.add("base", [], self.encoding.step)
        control.ground([("base", [])], context=self.functions)
        return control

    def _renew(self) -> None:
        """A new control holding only what the next tick can see: the stream atoms still in some window
        and the tuple windows' members as externals (true), nothing of the old ticks' parts."""
        control = self.control = self._control()
        enc = self.encoding
        members = [
            clingo.Function("tw", [clingo.Number(n), enc.atom_symbol(p, a), clingo.Number(s)])
            for n in enc.tuple_sizes
            for p, a, s in self.tuples.members[n]
        ]
        parts = [("input", [atom, clingo.Number(s)]) for atom, s in self.stream]
        parts += [("twin", list(sym.arguments)) for sym in members]
        control.ground(parts, context=self.functions)
        for sym in members:
            control.assign_external(sym, True)
        self.ticks = 0

    def step(self, t: int, batch: list[tuple[str, tuple]]) -> list[list[str]]:
        """The models at ``t`` after the stream atoms ``batch`` arrived: sorted lists of atoms."""
        enc = self.encoding
        arrived = [(enc.atom_symbol(pred, args), t) for pred, args in batch]
        changes = self.tuples.update(t, batch)
        if not self.incremental:
            return self._one_shot(t, arrived, changes)
        if self.ticks >= self.renew_every:
            self._renew()
        self.ticks += 1
        control = self.control
        assert control is not None
        parts = [("input", [a, clingo.Number(s)]) for a, s in arrived if (a, s) not in self.stream]
        entered, left = [], []

        def member(n: int, pred: str, args: tuple, s: int) -> clingo.Symbol:
            return clingo.Function("tw", [clingo.Number(n), enc.atom_symbol(pred, args), clingo.Number(s)])

        for n, (into, out, _) in changes.items():
            entered += [member(n, *element) for element in into]
            left += [member(n, *element) for element in out]
        parts += [("twin", list(sym.arguments)) for sym in entered]
        params = [clingo.Number(t), *(clingo.Number(changes[n][2]) for n in enc.tuple_sizes)]
        self.last = (t, [changes[n][2] for n in enc.tuple_sizes])
        parts.append(("step", params))
        control.ground(parts, context=self.functions)
        for atom, s in arrived:
            self.stream[(atom, s)] += 1
        for sym in entered:
            control.assign_external(sym, True)
        for sym in left:
            control.release_external(sym)
        now = clingo.Function("now", [clingo.Number(t)])
        control.assign_external(now, True)
        models = self._solve(control)
        control.release_external(now)  # the tick's rules are off for good
        if enc.history != UNBOUNDED:  # the step reads in(A, S) only for S in [t - history, t]: no release
            for key in [k for k in self.stream if k[1] < t + 1 - enc.history]:
                del self.stream[key]
        return models

    def _one_shot(self, t: int, arrived, changes) -> list[list[str]]:
        """Repeated one-shot solving: a new control with the window contents as facts, grounded anew."""
        enc = self.encoding
        for atom, s in arrived:
            self.stream[(atom, s)] += 1
        if enc.history != UNBOUNDED:
            for key in [k for k in self.stream if k[1] < t - enc.history]:
                del self.stream[key]
        control = clingo.Control(["--project=show", "--warn=none"], logger=_quiet)
        control.configuration.solve.models = self.models  # type: ignore[union-attr]
        control.add("base", [], enc.base)
        control.add("base", [], enc.step)
        facts = [f"in({atom},{s})." for atom, s in self.stream]
        for n in enc.tuple_sizes:
            facts += [f"tw({n},{enc.atom_symbol(p, a)},{s})." for p, a, s in self.tuples.members[n]]
        facts.append(f"now({t}).")
        control.add("base", [], "\n".join(facts))
        params = [clingo.Number(t), *(clingo.Number(changes[n][2]) for n in enc.tuple_sizes)]
        self.last = (t, [changes[n][2] for n in enc.tuple_sizes])
        control.ground([("base", []), ("step", params)], context=self.functions)
        return self._solve(control)

    def _solve(self, control: clingo.Control) -> list[list[str]]:
        found: set[tuple[str, ...]] = set()
        decode = self.encoding.decode
        now = clingo.Number(self.last[0])
        self.atoms = {}

        def on_model(model: clingo.Model) -> None:
            atoms = []
            for symbol in model.symbols(shown=True):
                sig, args = decode(symbol)
                atoms.append(format_atom(sig.name, args))
            shown = tuple(sorted(atoms))
            found.add(shown)
            if self.explaining and shown not in self.atoms:
                self.atoms[shown] = [
                    s for s in model.symbols(atoms=True) if s.name == "h" and s.arguments[2] == now
                ]

        control.solve(on_model=on_model)
        return sorted(list(m) for m in found)

    def explain(self, model: list[str], pred: str, args: tuple) -> dict | None:
        """Why ``pred(args)`` holds in ``model`` (one of the last tick's models; needs ``explaining``):
        the rule, its premises and its assumptions (``not x``), as mode tms's explain gives them."""
        from rsp.asp.clingo_explain import explain_atom, supports

        t, params = self.last
        key = (t, tuple(model))
        if self._supports[0] != key:
            atoms = self.atoms[tuple(model)]
            found = supports(self.encoding, self.functions, t, params, atoms, self.tuples.members)
            self._supports = (key, found)
        return explain_atom(self.encoding, self._supports[1], t, pred, args)
