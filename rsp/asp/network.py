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
        """Relabel the region of the changes since the last update (previous labels first)."""
        region = self._region()
        self.seeds = set()
        if region:
            found = next(self._search(region, dict(self.label)), None)
            assert found is not None, "a program without odd loops has an answer"
            for node in region:
                self.label[node] = found[node]
        for node in [n for n in self.label if n not in self.by_head and not self.by_body.get(n)]:
            del self.label[node]
            del self.order[node]

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
