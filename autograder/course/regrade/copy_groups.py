"""Groups of submissions that share their code: the near-duplicate pairs and identical groups, joined.

A class full of copies gives pairs by the tens of thousands (1000
submissions of ten sources: about 50,000), each listed from both sides;
what a person decides on is the group. Two submissions are in one group
when a chain of near-duplicate pairs or identical files joins them
(connected components, by union-find). Groups are ranked: the largest
first, then the most similar, then in the layout's order; each is listed
once, with its members in the layout's order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .insights import IdenticalGroup
from .near_duplicates import NearDuplicate


@dataclass(frozen=True)
class CopyGroup:
    submissions: tuple[str, ...]  # its members' keys, in the layout's order
    identical: tuple[tuple[str, ...], ...]  # the members whose graded files are byte for byte the same
    pairs: int  # near-duplicate pairs among its members (identical ones aside)
    highest: float  # the highest and lowest similarity of those pairs (1.0 where there are none: identical files)
    lowest: float

    @property
    def size(self) -> int:
        return len(self.submissions)


class _Components:
    """Union-find over keys: which group each key is in."""

    def __init__(self, keys: Iterable[str]):
        self.parent = {key: key for key in keys}

    def find(self, key: str) -> str:
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:  # halve the next search
            self.parent[key], key = root, self.parent[key]
        return root

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def copy_groups(keys: list[str], identical: list[IdenticalGroup], near: list[NearDuplicate]) -> list[CopyGroup]:
    """The groups that `identical` and `near` make of the submissions `keys` (the layout's order), ranked."""
    order = {key: i for i, key in enumerate(keys)}
    components = _Components(keys)
    for group in identical:
        for other in group.submissions[1:]:
            components.join(group.submissions[0], other)
    for pair in near:
        components.join(pair.first, pair.second)
    members: dict[str, list[str]] = {}
    for key in keys:
        members.setdefault(components.find(key), []).append(key)
    similarities: dict[str, list[float]] = {}
    for pair in near:
        similarities.setdefault(components.find(pair.first), []).append(pair.similarity)
    same: dict[str, list[tuple[str, ...]]] = {}
    for group in identical:
        same.setdefault(components.find(group.submissions[0]), []).append(
            tuple(sorted(group.submissions, key=order.__getitem__))
        )
    groups = []
    for root, keys_in in members.items():
        if len(keys_in) < 2:
            continue
        found = similarities.get(root, [])
        groups.append(
            CopyGroup(
                tuple(keys_in),
                tuple(sorted(same.get(root, []), key=lambda g: order[g[0]])),
                len(found),
                max(found, default=1.0),
                min(found, default=1.0),
            )
        )
    return sorted(groups, key=lambda g: (-g.size, -g.highest, -g.lowest, order[g.submissions[0]]))
