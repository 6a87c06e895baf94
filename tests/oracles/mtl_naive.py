"""A naive DatalogMTL evaluator written from the definitions, sharing no code with rsp.mtl's engine.

Semantics (continuous, over ℚ; Wałęga et al., Table 1): ``◇⁻ρ φ`` holds at t iff φ holds at some t'
with t − t' ∈ ρ; ``⊟ρ φ`` iff φ holds at every such t'; ``φ S_ρ ψ`` iff ψ holds at some t' with
t − t' ∈ ρ and φ at every point of the open interval (t', t); a head ``⊞ρ A`` makes A hold at every t''
with t'' − t ∈ ρ. The least model is the fixpoint of T_Π from the data.

The (Π, D)-ruler used here: when every number of the program, the data and the horizon is a multiple
of δ, the least model is constant on each point kδ and on each open cell (kδ, (k+1)δ) (every operator
maps such unions of granules to such unions). So a ground atom's extension is a set of granules;
a formula is evaluated at a granule's representative (kδ, or the cell's midpoint), and the quantifiers
range over sample points on the grid δ/8, which meet every granule an interval with half-grid ends
meets. It is slow (every binding, every granule, every round) and meant for small cases.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from rsp.mtl.model import Atom, Binary, Formula, Program, Unary, Var

INF = math.inf


def _denominators(program: Program, facts, horizon) -> int:
    numbers = [Fraction(horizon)]
    for _, _, (lo, hi, _, _) in facts:
        numbers += [Fraction(x) for x in (lo, hi) if x not in (INF, -INF)]

    def walk(f: Formula) -> None:
        if isinstance(f, Unary):
            numbers.extend(Fraction(x) for x in f.rho[:2] if x != INF)
            walk(f.sub)
        elif isinstance(f, Binary):
            numbers.extend(Fraction(x) for x in f.rho[:2] if x != INF)
            walk(f.left)
            walk(f.right)

    for rule in program.rules:
        for f in (rule.head, *rule.body):
            walk(f)
    return math.lcm(*(n.denominator for n in numbers))


def _inside(x, lo, hi, lc, hc) -> bool:
    return (lo < x or (lc and lo == x)) and (x < hi or (hc and x == hi))


class _Model:
    def __init__(self, program: Program, facts, horizon) -> None:
        self.program = program
        self.scale = 8 * _denominators(program, facts, horizon)  # units per time unit: u = δ/8
        starts = [Fraction(f[2][0]) for f in facts]
        self.qmin = int(min(starts) * self.scale) if starts else 0
        self.qmax = int(Fraction(horizon) * self.scale)
        self.truth: dict[tuple, set[int]] = {}
        for pred, args, (lo, hi, lc, hc) in facts:
            grans = self.truth.setdefault((pred, tuple(args)), set())
            for q in range(self.qmin, self.qmax + 1):
                if _inside(Fraction(q, self.scale), lo, hi, lc, hc):
                    grans.add(self.granule(q))
        constants = {a for _, args, _ in facts for a in args}
        for rule in program.rules:
            for f in (rule.head, *rule.body):
                constants.update(a for a in _atom_args(f) if not isinstance(a, Var))
        self.constants = sorted(constants)

    @staticmethod
    def granule(q: int) -> int:
        return (q // 8) * 2 + (0 if q % 8 == 0 else 1)

    @staticmethod
    def representative(g: int) -> int:
        return (g // 2) * 8 + (0 if g % 2 == 0 else 4)

    def units(self, x) -> Fraction:
        return Fraction(x) * self.scale if x not in (INF, -INF) else x

    def holds(self, f: Formula, b: dict, q: int, memo: dict) -> bool:
        """Whether ``f`` under ``b`` holds at the sample point q (in units)."""
        if q < self.qmin or q > self.qmax:
            return False
        g = self.granule(q)
        key = (f, tuple(sorted(b.items(), key=lambda kv: kv[0].name)), g)
        if key in memo:
            return memo[key]
        t = self.representative(g)
        if isinstance(f, Atom):
            value = g in self.truth.get((f.pred, tuple(b.get(a, a) for a in f.args)), ())
        elif isinstance(f, Unary):
            lo, hi, lc, hc = f.rho
            candidates = [
                s
                for s in range(max(self.qmin - 2, t - int(min(self.units(hi), 10**9))) & ~1, t + 1, 2)
                if _inside(Fraction(t - s), self.units(lo), self.units(hi), lc, hc)
            ]
            if f.op == "Diamondminus":
                value = any(self.holds(f.sub, b, s, memo) for s in candidates)
            elif f.op == "Boxminus":
                value = bool(candidates) and all(self.holds(f.sub, b, s, memo) for s in candidates)
            else:
                raise ValueError(f"{f.op} in a body is not forward-propagating")
        else:
            if f.op != "Since":
                raise ValueError(f"{f.op} in a body is not forward-propagating")
            lo, hi, lc, hc = f.rho
            value = False
            for s in range(max(self.qmin - 2, t - int(min(self.units(hi), 10**9))) & ~1, t + 1, 2):
                if not _inside(Fraction(t - s), self.units(lo), self.units(hi), lc, hc):
                    continue
                if self.holds(f.right, b, s, memo) and all(
                    self.holds(f.left, b, r, memo) for r in range(s + 1, t)
                ):
                    value = True
                    break
        memo[key] = value
        return value

    def step(self) -> bool:
        changed = False
        memo: dict = {}
        for rule in self.program.rules:
            variables = sorted({v for f in rule.body for v in _vars(f)}, key=lambda v: v.name)
            head, rho = rule.head, None
            while isinstance(head, Unary):  # Boxplus ρ1 Boxplus ρ2 A
                r = head.rho
                rho = r if rho is None else (rho[0] + r[0], rho[1] + r[1], rho[2] and r[2], rho[3] and r[3])
                head = head.sub
            for values in itertools.product(self.constants, repeat=len(variables)):
                b = dict(zip(variables, values, strict=True))
                ground = (head.pred, tuple(b.get(a, a) for a in head.args))
                grans = self.truth.setdefault(ground, set())
                for g in range(self.granule(self.qmin), self.granule(self.qmax) + 1):
                    q = self.representative(g)
                    if not all(self.holds(f, b, q, memo) for f in rule.body):
                        continue
                    if rho is None:
                        targets = [g]
                    else:
                        targets = [
                            self.granule(s)
                            for s in range(q, self.qmax + 1, 2)
                            if _inside(
                                Fraction(s - q), self.units(rho[0]), self.units(rho[1]), rho[2], rho[3]
                            )
                        ]
                    for target in targets:
                        if target not in grans:
                            grans.add(target)
                            changed = True
        return changed

    def intervals(self, grans: set[int]) -> list[tuple]:
        out = []
        for _, run in itertools.groupby(enumerate(sorted(grans)), key=lambda ig: ig[1] - ig[0]):
            run = [g for _, g in run]
            first, last = run[0], run[-1]
            lo = Fraction(first // 2) * 8 / self.scale
            hi = Fraction(last // 2 + (last % 2)) * 8 / self.scale
            out.append((_plain(lo), _plain(hi), first % 2 == 0, last % 2 == 0))
        return out


def _plain(x: Fraction):
    return x.numerator if x.denominator == 1 else x


def _atom_args(f: Formula):
    if isinstance(f, Atom):
        return f.args
    if isinstance(f, Unary):
        return _atom_args(f.sub)
    return (*_atom_args(f.left), *_atom_args(f.right))


def _vars(f: Formula):
    return [a for a in _atom_args(f) if isinstance(a, Var)]


def least_model(program: Program, facts, horizon, outputs=None) -> set[tuple]:
    """The least model on [first fact, horizon], as (pred, args, interval) of maximal intervals."""
    model = _Model(program, facts, horizon)
    while model.step():
        pass
    heads = set(outputs) if outputs is not None else program.head_predicates()
    return {
        (pred, args, iv)
        for (pred, args), grans in model.truth.items()
        if pred in heads
        for iv in model.intervals(grans)
    }
