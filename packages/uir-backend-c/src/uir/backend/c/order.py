"""The order statements run in: sources first, and loads of a version before the store replacing it.

A topological order of the graph is not enough for memory (uir.md 6.3): a LOAD of version v and the
STORE that writes v (making v+1) share no edge, yet the load must come first. This adds that edge
and orders the rest by first appearance in the graph's own toposort, so output is deterministic.
TODO(week2): use uir.core.schedule once it lands on main, and drop this module.
"""

from __future__ import annotations

import heapq

from uir.core.errors import BackendError
from uir.core.ops import Op
from uir.core.uop import UOp


def _version(ref: UOp) -> UOp:
    """The buffer version an INDEX of memory names, seen through its windows."""
    mem = ref.src[0]
    while mem.op is Op.SHRINK:
        mem = mem.src[0]
    return mem


def execution_order(sink: UOp) -> list[UOp]:
    """Every UOp under `sink` (CALLs already inlined), in an order that runs it correctly."""
    nodes = sink.toposort()
    rank = {u: i for i, u in enumerate(nodes)}
    users: dict[UOp, list[UOp]] = {u: [] for u in nodes}
    waiting = {u: len(set(u.src)) for u in nodes}
    for u in nodes:
        for s in set(u.src):
            users[s].append(u)
    loads: dict[UOp, list[UOp]] = {}
    for u in nodes:
        if u.op is Op.LOAD and u.src[0].op is Op.INDEX:
            loads.setdefault(_version(u.src[0]), []).append(u)
    for u in nodes:
        if u.op is Op.STORE and u.src[0].op is Op.INDEX:
            for load in loads.get(_version(u.src[0]), []):
                users[load].append(u)
                waiting[u] += 1
    ready = [(rank[u], u) for u in nodes if waiting[u] == 0]
    heapq.heapify(ready)
    order: list[UOp] = []
    while ready:
        _, u = heapq.heappop(ready)
        order.append(u)
        for user in users[u]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (rank[user], user))
    if len(order) != len(nodes):
        raise BackendError("the program's memory order has a cycle")
    return order
