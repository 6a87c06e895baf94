"""A justification-based truth maintenance network (Doyle's JTMS, as Ticker uses it): nodes labelled in or
out, justifications (ground rules ``head :- pos, not neg``) added and removed, and a relabelling that
touches only the nodes whose support a change reaches, keeping every other label (and, where the old
labels still form an answer, those too: inertia).

Labels always form a stable model of the current justifications, and every in-node keeps a *founding*
justification (valid, its positive body founded before it: the supports form no cycle). After changes,
the *seeds* are the nodes whose label may no longer be right (a new node, an in-node that lost its
founding justification); a justification added while its head is out makes the head a seed unless its
body fails. The *affected* nodes are the seeds and, transitively, every in-node whose founding
justification reads an affected node and every out-node with a justification that fails only on affected
nodes. The others keep their labels: an in-node's founding chain and a failing body node of each of an
out-node's justifications are untouched, so together with any stable labelling of the affected nodes
they form a stable model. The affected nodes are labelled by a search with propagation (a justification
whose body holds makes its head in; a node whose justifications all fail is out) that tries each node's
previous label first and checks the result for foundedness (the least model of the reduct), so an old
answer that still is one comes back unchanged. Justifications are numbered: the indexes hold numbers,
never the (possibly long) ground rules themselves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator

Node = Hashable
Key = tuple  # (head, pos, neg): a justification


class NoModel(Exception):
    """The justifications have no stable model; ``cycle`` is an odd cycle through them."""

    def __init__(self, cycle: list[Key]) -> None:
        super().__init__("no stable model")
        self.cycle = cycle


class Network:
    """Justifications, the nodes they mention, the current labels and each in-node's support."""

    def __init__(self) -> None:
        self.tags: dict[Key, Counter] = {}  # justification -> who added it (and how often)
        self.ids: dict[Key, int] = {}  # justification -> its number (sets below hold numbers: cheap hashes)
        self.keys: dict[int, Key] = {}
        self._next = 0
        self.by_head: dict[Node, set[int]] = {}
        self.by_body: dict[Node, set[int]] = {}
        self.by_positive: dict[Node, set[int]] = {}
        self.label: dict[Node, bool] = {}
        self.supp: dict[Node, int] = {}  # in-node -> a valid justification founding it (acyclic)
        self.order: dict[Node, int] = {}  # creation order: choices are tried in it
        self._count = 0
        self.seeds: set[Node] = set()  # nodes whose label must be determined again
        self.added: list[int] = []  # justifications added while their head was out
        self.loose: set[Node] = set()  # nodes a removal touched: dropped at update if nothing mentions them
        self.changed: list[Node] = []  # nodes whose label changed (or that went) since last asked
        self.born: list[Node] = []  # nodes that got their first justification since last asked
        self.died: list[Node] = []  # nodes that lost their last justification

    def _node(self, node: Node) -> None:
        if node not in self.order:
            self.order[node] = self._count
            self._count += 1
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
        jid = self._next
        self._next += 1
        self.ids[key] = jid
        self.keys[jid] = key
        head, pos, neg = key
        self._node(head)
        for node in pos:
            self._node(node)
            self.by_body.setdefault(node, set()).add(jid)
            self.by_positive.setdefault(node, set()).add(jid)
        for node in neg:
            self._node(node)
            self.by_body.setdefault(node, set()).add(jid)
        heads = self.by_head.setdefault(head, set())
        if not heads:
            self.born.append(head)
        heads.add(jid)
        if not self.label.get(head, False):
            self.added.append(jid)
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
        jid = self.ids.pop(key)
        del self.keys[jid]
        head, pos, neg = key
        heads = self.by_head[head]
        heads.discard(jid)
        if not heads:
            self.died.append(head)
        for node in pos:
            self.by_body[node].discard(jid)
            self.by_positive[node].discard(jid)
        for node in neg:
            self.by_body[node].discard(jid)
        self.loose.add(head)
        self.loose.update(pos)
        self.loose.update(neg)
        if self.supp.get(head) == jid:  # the head lost its founding justification
            self.seeds.add(head)

    # -- labelling --------------------------------------------------------------------------------------

    def _fails(self, jid: int, region: set[Node]) -> bool:
        """Whether justification ``jid``'s body fails on a node outside ``region`` (whose label stays)."""
        label = self.label
        _, pos, neg = self.keys[jid]
        for node in pos:
            if node not in region and not label.get(node, False):
                return True
        for node in neg:
            if node not in region and label.get(node, False):
                return True
        return False

    def _affected(self) -> set[Node]:
        """The nodes whose label may change: the seeds, and every node whose label rests on one of them
        (an in-node whose founding justification reads it, an out-node with a justification that fails
        only on affected nodes). The others keep their labels: their supports (and, for out-nodes, a
        failing body node of each justification) are untouched."""
        label, supp, keys, by_body = self.label, self.supp, self.keys, self.by_body
        region: set[Node] = set()
        todo = list(self.seeds)

        def close() -> None:
            while todo:
                node = todo.pop()
                if node in region:
                    continue
                region.add(node)
                for jid in by_body.get(node, ()):
                    head = keys[jid][0]
                    if head in region:
                        continue
                    if label.get(head, False):
                        if supp.get(head) == jid:
                            todo.append(head)
                    elif not self._fails(jid, region):
                        todo.append(head)

        close()
        for jid in self.added:
            key = keys.get(jid)
            if key is None or key[0] in region or label.get(key[0], False):
                continue
            if not self._fails(jid, region):
                todo.append(key[0])
                close()
        return region

    def update(self, rank: Callable[[Node], int] | None = None) -> None:
        """Relabel the nodes the changes since the last update affect, keeping previous labels by inertia.

        The search tries every node's previous label first (out for a new node) and chooses nodes by
        ``rank`` (lowest first; None: all alike), then by creation order, so the labelling found is the
        first in that order. Hence, for every rank r: if some stable labelling keeps every label of the
        nodes of rank ≤ r that some labelling keeps, the one found does (at the first node where it
        differed from such a keeper, it would hold the previous label, which therefore some labelling
        keeps, and the keeper would not). Nodes whose labels follow from the ranked ones (window nodes
        over atoms, say) rank last: a stale previous label of theirs must not decide a choice.

        Without odd loops the affected nodes always have labels that complete the others. An odd loop (a
        constraint, ``a :- not a``) may need other labels elsewhere: then every node is relabelled
        (in the same order); :class:`NoModel` if the network has no stable model.
        """
        order = self.order
        key = order.__getitem__ if rank is None else (lambda node: (rank(node), order[node]))
        region_set = self._affected()
        self.seeds = set()
        self.added = []
        if region_set:
            region = sorted(region_set, key=key)
            found = next(self._search(region, self.label), None)
            if found is None:
                region = sorted(order, key=key)
                found = next(self._search(region, self.label), None)
                if found is None:
                    raise NoModel(self.odd_cycle())
            label = self.label
            for node in region:
                if label.get(node) != found[node]:
                    label[node] = found[node]
                    self.changed.append(node)
            self._found(region)
        loose, self.loose = self.loose, set()
        for node in loose:
            if node in self.order and not self.by_head.get(node) and not self.by_body.get(node):
                del self.order[node]
                if self.label.pop(node, False):
                    self.changed.append(node)
                self.supp.pop(node, None)

    def _found(self, region: list[Node]) -> None:
        """Record a founding justification of each in-node of the region (labels already set)."""
        supp = self.supp
        derived = self._least(region, set(region), self.label)
        for node in region:
            if node in derived:
                supp[node] = derived[node]
            else:
                supp.pop(node, None)

    def _least(self, region: list[Node], inside: set[Node], val: dict) -> dict[Node, int]:
        """The least model of the region's reduct (outside labels fixed): each derived node with the
        justification that derived it first (their positive bodies are derived earlier or outside)."""
        label, keys = self.label, self.keys
        derived: dict[Node, int] = {}
        waiting: dict[int, int] = {}
        queue: list[tuple[Node, int]] = []
        for head in region:
            for jid in self.by_head.get(head, ()):
                _, pos, neg = keys[jid]
                if any((val[n] if n in inside else label.get(n, False)) for n in neg):
                    continue
                missing = 0
                for n in pos:
                    if n in inside:
                        missing += 1
                    elif not label.get(n, False):
                        missing = -1
                        break
                if missing == 0:
                    queue.append((head, jid))
                elif missing > 0:
                    waiting[jid] = missing
        while queue:
            node, jid = queue.pop()
            if node in derived:
                continue
            derived[node] = jid
            for other in self.by_positive.get(node, ()):
                if other in waiting:
                    waiting[other] -= 1
                    if waiting[other] == 0:
                        queue.append((keys[other][0], other))
        return derived

    def odd_cycle(self) -> list[Key]:
        """The justifications of a cycle through an odd number of negations (empty if there is none).

        A network without one (call-consistent) has a stable model, so a network without a model has one.
        Per strongly connected component of the dependency graph (head -> body node), nodes get a parity
        (negations on a path from the component's root); an edge that contradicts the parities closes an
        odd cycle, found again by a search over (node, parity) states.
        """
        from rsp.lars.stratify import components

        edges: dict[Node, list[tuple[Node, bool, Key]]] = {}
        for key in self.tags:
            head, pos, neg = key
            out = edges.setdefault(head, [])
            out += [(n, False, key) for n in pos]
            out += [(n, True, key) for n in neg]
        nodes = sorted(edges, key=self.order.__getitem__)
        succ = {h: [b for b, _, _ in out if b in edges] for h, out in edges.items()}
        for comp in components(nodes, succ):
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
        yield from self._search(nodes, self.label)

    def _search(self, region: list[Node], prefer: dict[Node, bool]) -> Iterator[dict[Node, bool]]:
        """The stable models of the network that keep the labels outside ``region``: a search with
        propagation (a justification whose body holds makes its head in; a node whose justifications all
        fail is out) that chooses the region's first undecided node, tries ``prefer``'s label first (depth
        first: the first labelling found is the first in the region's order), and checks each result for
        foundedness."""
        inside = set(region)
        label, keys, by_head, by_body = self.label, self.keys, self.by_head, self.by_body

        def status(jid: int, val: dict) -> bool | None:
            """True: the body holds; False: it fails; None: not known yet."""
            _, pos, neg = keys[jid]
            known = True
            for node in pos:
                v = val[node] if node in inside else label.get(node, False)
                if v is False:
                    return False
                if v is None:
                    known = False
            for node in neg:
                v = val[node] if node in inside else label.get(node, False)
                if v is True:
                    return False
                if v is None:
                    known = False
            return True if known else None

        def settle(head: Node, val: dict, queue: list) -> bool:
            undecided = False
            for jid in by_head.get(head, ()):
                state = status(jid, val)
                if state is True:
                    want = True
                    break
                if state is None:
                    undecided = True
            else:
                if undecided:
                    return True
                want = False
            if val[head] is None:
                val[head] = want
                queue.append(head)
                return True
            return val[head] == want

        def propagate(val: dict, queue: list) -> bool:
            while queue:
                node = queue.pop()
                if not settle(node, val, queue):
                    return False
                for jid in by_body.get(node, ()):
                    head = keys[jid][0]
                    if head in inside and not settle(head, val, queue):
                        return False
            return True

        start: dict[Node, bool | None] = dict.fromkeys(region)
        if not propagate(start, list(region)):
            return
        stack = [start]
        while stack:
            val = stack.pop()
            choice = next((n for n in region if val[n] is None), None)
            if choice is None:
                derived = self._least(region, inside, val)
                if all(val[n] == (n in derived) for n in region):
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
