"""A justification-based truth maintenance network (Doyle's JTMS, as Ticker uses it): nodes labelled in or
out, justifications (ground rules ``head :- pos, not neg``) added and removed, and a relabelling that
touches only the nodes a change can reach, keeping every other label (and, where the old labels still
form an answer, those too: inertia).

Labels always form a stable model of the current justifications. After changes, the *seeds* are the
nodes whose label may no longer be right (a new node, the head of a justification that became valid
while the head was out, the head of a removed justification while the head was in); the *region* is
every node that depends on a seed. Outside the region labels stay (the rest is a splitting set of the
program whose rules did not change, so its labels are still a stable model of it). Inside, a search
with propagation (a justification whose body holds makes its head in; a node whose justifications all
fail is out) tries each node's previous label first and checks the result for well-founded support
(the least model of the reduct), so an old answer that still is one comes back unchanged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterator

Node = Hashable
Key = tuple  # (head, pos, neg): a justification


class NoModel(Exception):
    """The justifications have no stable model; ``cycle`` is an odd cycle through them."""

    def __init__(self, cycle: list[Key]) -> None:
        super().__init__("no stable model")
        self.cycle = cycle


class Network:
    """Justifications, the nodes they mention and the current labels."""

    def __init__(self) -> None:
        self.tags: dict[Key, Counter] = {}  # justification -> who added it (and how often)
        self.by_head: dict[Node, set[Key]] = {}
        self.by_body: dict[Node, set[Key]] = {}
        self.by_positive: dict[Node, set[Key]] = {}
        self.label: dict[Node, bool] = {}
        self.order: dict[Node, int] = {}  # creation order: choices are tried in it
        self.seeds: set[Node] = set()
        self.born: list[Node] = []  # nodes that got their first justification since last asked
        self.died: list[Node] = []  # nodes that lost their last justification

    def _node(self, node: Node) -> None:
        if node not in self.order:
            self.order[node] = len(self.order)
            self.seeds.add(node)

    def has(self, key: Key, tag: Hashable) -> bool:
        return key in self.tags and tag in self.tags[key]

    def supported(self, node: Node) -> bool:
        """Whether ``node`` has a justification (could be in)."""
        return bool(self.by_head.get(node))

    def add(self, key: Key, tag: Hashable = None) -> bool:
        """Add the justification ``key`` (for ``tag``); False if that tag already added it."""
        tags = self.tags.get(key)
        if tags is not None:
            if tag in tags:
                return False
            tags[tag] += 1
            return True
        self.tags[key] = Counter({tag: 1})
        head, pos, neg = key
        for node in (head, *pos, *neg):
            self._node(node)
        heads = self.by_head.setdefault(head, set())
        if not heads:
            self.born.append(head)
        heads.add(key)
        for node in pos:
            self.by_body.setdefault(node, set()).add(key)
            self.by_positive.setdefault(node, set()).add(key)
        for node in neg:
            self.by_body.setdefault(node, set()).add(key)
        if not self.label.get(head, False):
            self.seeds.add(head)
        return True

    def remove(self, key: Key, tag: Hashable = None, every: bool = False) -> None:
        """Withdraw ``tag``'s justification ``key`` (every tag with ``every``)."""
        tags = self.tags.get(key)
        if tags is None or (not every and tag not in tags):
            return
        if not every:
            tags[tag] -= 1
            if tags[tag] > 0:
                return
            del tags[tag]
            if tags:
                return
        del self.tags[key]
        head, pos, neg = key
        heads = self.by_head[head]
        heads.discard(key)
        if not heads:
            self.died.append(head)
        for node in pos:
            self.by_body[node].discard(key)
            self.by_positive[node].discard(key)
        for node in neg:
            self.by_body[node].discard(key)
        if self.label.get(head, False):
            self.seeds.add(head)

    # -- labelling --------------------------------------------------------------------------------------

    def _region(self) -> list[Node]:
        region = set(self.seeds)
        todo = list(self.seeds)
        while todo:
            node = todo.pop()
            for key in self.by_body.get(node, ()):
                head = key[0]
                if head not in region:
                    region.add(head)
                    todo.append(head)
        return sorted(region, key=self.order.__getitem__)

    def update(self) -> None:
        """Relabel the region of the changes since the last update (previous labels first).

        Without odd loops the region always has labels that complete the old ones outside it. An odd loop
        (a constraint, ``a :- not a``) may need other labels outside the region: then every node is
        relabelled (previous labels still first); :class:`NoModel` if the network has no stable model.
        """
        region = self._region()
        self.seeds = set()
        if region:
            found = next(self._search(region, dict(self.label)), None)
            if found is None:
                region = sorted(self.order, key=self.order.__getitem__)
                found = next(self._search(region, dict(self.label)), None)
                if found is None:
                    raise NoModel(self.odd_cycle())
            for node in region:
                self.label[node] = found[node]
        for node in [n for n in self.label if n not in self.by_head and not self.by_body.get(n)]:
            del self.label[node]
            del self.order[node]

    def odd_cycle(self) -> list[Key]:
        """The justifications of a cycle through an odd number of negations (empty if there is none).

        A network without one (call-consistent) has a stable model, so a network without a model has one.
        Per strongly connected component of the dependency graph (head -> body node), nodes get a parity
        (negations on a path from the component's root); an edge that contradicts the parities closes an
        odd cycle, found again by a search over (node, parity) states.
        """
        from rsp.lars.stratify import _components

        edges: dict[Node, list[tuple[Node, bool, Key]]] = {}
        for key in self.tags:
            head, pos, neg = key
            out = edges.setdefault(head, [])
            out += [(n, False, key) for n in pos]
            out += [(n, True, key) for n in neg]
        nodes = sorted(edges, key=self.order.__getitem__)
        succ = {h: [b for b, _, _ in out if b in edges] for h, out in edges.items()}
        for comp in _components(nodes, succ):
            members = set(comp)
            root = comp[0]
            via: dict[tuple[Node, bool], tuple[tuple[Node, bool], Key] | None] = {(root, False): None}
            todo = [(root, False)]
            while todo:  # every (node, parity) reachable from (root, even) inside the component
                state = todo.pop()
                for body, negated, key in edges.get(state[0], ()):
                    nxt = (body, state[1] ^ negated)
                    if body in members and nxt not in via:
                        via[nxt] = (state, key)
                        todo.append(nxt)
            if (root, True) not in via:
                continue  # every cycle of this component is even
            cycle: list[Key] = []
            state: tuple[Node, bool] | None = (root, True)
            while state is not None and via[state] is not None:
                previous, key = via[state]  # type: ignore[misc]
                cycle.append(key)
                state = previous
            return list(reversed(cycle))
        return []

    def models(self) -> Iterator[dict[Node, bool]]:
        """Every stable model of the network, the current labels' first."""
        nodes = sorted(self.order, key=self.order.__getitem__)
        yield from self._search(nodes, dict(self.label))

    def _search(self, region: list[Node], prefer: dict[Node, bool]) -> Iterator[dict[Node, bool]]:
        inside = set(region)
        label = self.label

        def value(node: Node, val: dict) -> bool | None:
            return val[node] if node in inside else label.get(node, False)

        def status(key: Key, val: dict) -> bool | None:
            """True: the body holds; False: it fails; None: not known yet."""
            _, pos, neg = key
            known = True
            for node in pos:
                v = value(node, val)
                if v is False:
                    return False
                known = known and v is not None
            for node in neg:
                v = value(node, val)
                if v is True:
                    return False
                known = known and v is not None
            return True if known else None

        def propagate(val: dict, queue: list) -> bool:
            while queue:
                node = queue.pop()
                heads = {node} | {key[0] for key in self.by_body.get(node, ())}
                for head in heads:
                    if head not in inside:
                        continue
                    states = [status(key, val) for key in self.by_head.get(head, ())]
                    if True in states:
                        want = True
                    elif all(s is False for s in states):
                        want = False
                    else:
                        continue
                    if val[head] is None:
                        val[head] = want
                        queue.append(head)
                    elif val[head] != want:
                        return False
            return True

        def founded(val: dict) -> bool:
            """The labels in the region are the least model of the reduct (given the outside)."""
            derived: set[Node] = set()
            waiting: dict[Key, int] = {}
            queue = []
            for head in region:
                for key in self.by_head.get(head, ()):
                    _, pos, neg = key
                    if any(value(n, val) for n in neg):
                        continue
                    missing = 0
                    for n in pos:
                        if n in inside:
                            missing += 1
                        elif not label.get(n, False):
                            missing = -1
                            break
                    if missing == 0:
                        queue.append(head)
                    elif missing > 0:
                        waiting[key] = missing
            while queue:
                node = queue.pop()
                if node in derived:
                    continue
                derived.add(node)
                for key in self.by_positive.get(node, ()):
                    if key in waiting:
                        waiting[key] -= 1
                        if waiting[key] == 0:
                            queue.append(key[0])
            return all(val[n] == (n in derived) for n in region)

        start = dict.fromkeys(region)
        if not propagate(start, list(region)):
            return
        stack = [start]
        while stack:
            val = stack.pop()
            choice = next((n for n in region if val[n] is None), None)
            if choice is None:
                if founded(val):
                    yield val
                continue
            first = prefer.get(choice, False)
            branches = []
            for guess in (first, not first):
                branch = dict(val)
                branch[choice] = guess
                if propagate(branch, [choice]):
                    branches.append(branch)
            stack.extend(reversed(branches))  # the preferred guess is explored first
