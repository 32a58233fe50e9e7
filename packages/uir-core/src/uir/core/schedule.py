"""The full order of a program's memory effects (uir.md section 6.3) and an execution order for it.

Every buffer version has a *state*: the last STORE that has happened to the buffer when the version
is current, or the BUFFER or LOCAL itself while nothing has. A STORE replaces the state of the
version it writes; an AFTER's state is the latest of its deps' and of its `mem`'s. A program is
fully ordered when no state is replaced by two stores (so each buffer's stores form one chain) and
every LOAD can run before the store that replaces the state it reads.

`loop_schedule` is the API the interpreter and the backends share: the statements as a loop nest
(`Block`), each in the loop of the deepest range it is inside, in an order that runs each one after
its sources and each LOAD before the STORE replacing what it reads. Placement is two analyses:
`ranges_inside` (uir.core.loops) finds the ranges of every UOp, `_place` (here) puts every
statement in its block. `schedule` flattens the nest.

Every walk is iterative (50,000-statement programs are ordinary).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from .errors import VerifyError
from .loops import LoopNest, Ranges, end_stores, loop_nest, naming, ranges_inside
from .memory import BUFFERS, buffer_of, version_of
from .ops import Op
from .uop import UOp

LineOf = Callable[[UOp], "int | None"]
T = TypeVar("T")


def no_line(_: UOp) -> int | None:
    return None


@dataclass
class MemoryOrder:
    """The version structure of a program, per buffer (BUFFER or LOCAL)."""

    # Each version (BUFFER, LOCAL, AFTER) -> its state: the BUFFER/LOCAL itself or a STORE.
    state: dict[UOp, UOp] = field(default_factory=dict)
    # Each state -> the one STORE that replaces it; a state missing here is its buffer's last.
    replaced_by: dict[UOp, UOp] = field(default_factory=dict)
    # Each state -> how many stores precede it (0 for the BUFFER/LOCAL): its place in the chain.
    position: dict[UOp, int] = field(default_factory=dict)
    # Each STORE -> the LOADs that read the state it replaces, so must run before it.
    loads_before: dict[UOp, list[UOp]] = field(default_factory=dict)

    def state_of(self, ref: UOp) -> UOp:
        """The state a memory reference, place or LOAD's place reads."""
        return self.state[version_of(ref)]

    def is_last(self, ref: UOp) -> bool:
        """Whether no STORE replaces the state `ref` names: its buffer's final contents."""
        return self.state_of(ref) not in self.replaced_by


def memory_order(
    sink: UOp,
    line_of: LineOf = no_line,
    statements: list[UOp] | None = None,
    inside: dict[UOp, Ranges] | None = None,
) -> MemoryOrder:
    """The states, chains and load constraints of the program under `sink`.

    `statements` is `sink.toposort(bodies=False)` (or any order of those UOps with sources first)
    and `inside` is `ranges_inside(sink)`, where the caller has them already. Raises VerifyError
    when two stores replace one state (not fully ordered). Expects the per-op checks to have
    passed (every AFTER dep is a STORE to the AFTER's buffer).
    """
    if statements is None:
        statements = sink.toposort(bodies=False)
    order = MemoryOrder()
    # Sources come first, so a STORE's state and an AFTER's deps are known when it is reached.
    for uop in statements:
        if uop.op in BUFFERS:
            order.state[uop] = uop
            order.position[uop] = 0
        elif uop.op is Op.AFTER:
            candidates = [order.state[version_of(uop.src[0])]]
            for dep in uop.src[1:]:
                candidates.extend(_dep_states(dep, buffer_of(uop), order, inside))
            order.state[uop] = max(candidates, key=order.position.__getitem__)
        elif uop.op is Op.STORE:
            replaced = order.state_of(uop.src[0])
            other = order.replaced_by.get(replaced)
            if other is not None:
                where = line_of(other)
                first = f"the STORE on line {where}" if where is not None else "another STORE"
                raise VerifyError(
                    f"this STORE writes the same version of the buffer as {first}: each version "
                    "is written by at most one effect (chain the stores through AFTER)",
                    line_of(uop),
                )
            order.replaced_by[replaced] = uop
            # Stores are reached after the state they replace, so every chain is one path.
            order.position[uop] = order.position[replaced] + 1
    for uop in statements:
        if uop.op is Op.LOAD:
            replacer = order.replaced_by.get(order.state_of(uop.src[0]))
            if replacer is not None:
                order.loads_before.setdefault(replacer, []).append(uop)
    return order


def _dep_states(
    dep: UOp, buffer: UOp, order: MemoryOrder, inside: dict[UOp, Ranges] | None
) -> list[UOp]:
    """The states an AFTER dep can leave `buffer` in: a STORE itself, the stores to `buffer`
    that an END waits for (the AFTER picks the latest), none for a RANGE (it carries the version
    across iterations, uir.md section 7, but writes nothing)."""
    if dep.op is Op.STORE:
        return [dep]
    if dep.op is Op.END:
        stores = end_stores(dep, ranges_inside(dep) if inside is None else inside)
        return [s for s in stores if buffer_of(s) is buffer]
    return []


def _inputs(uop: UOp, order: MemoryOrder) -> list[UOp]:
    """What must run before `uop`: its sources (a CALL's body is not a statement of the caller)
    and, for a STORE, the loads of the state it replaces."""
    src = list(uop.src[1:] if uop.op is Op.CALL else uop.src)
    return src + order.loads_before.get(uop, [])


def _cycle_error(path: list[UOp], order: MemoryOrder, line_of: LineOf) -> VerifyError:
    """Blame the LOAD on the cycle `path` (each node waits for the next; the last for the first)
    that must run before a STORE it also depends on."""
    for i, node in enumerate(path):
        waited = path[(i + 1) % len(path)]
        if node.op is Op.STORE and waited in order.loads_before.get(node, []):
            where = line_of(node)
            store = f"the STORE on line {where}" if where is not None else "a STORE"
            return VerifyError(
                f"this LOAD reads a version that {store} replaces, but it can only run after "
                "that store: the memory order has a cycle",
                line_of(waited),
            )
    # Not reached: sources alone form a DAG, so every cycle passes through a load-before-store wait.
    return VerifyError("the memory order has a cycle", line_of(path[0]))


def execution_order(sink: UOp, order: MemoryOrder, line_of: LineOf = no_line) -> list[UOp]:
    """Every UOp under `sink` (CALL bodies not entered), each after what it waits for, the SINK
    last; raises VerifyError when the waits form a cycle."""
    return _postorder(
        [sink], lambda u: _inputs(u, order), lambda cycle: _cycle_error(cycle, order, line_of)
    )


def _postorder(
    starts: list[T],
    inputs: Callable[[T], Iterable[T]],
    on_cycle: Callable[[list[T]], VerifyError],
) -> list[T]:
    """Every node reachable from `starts` through `inputs`, each after its inputs, found in
    the order given; raises `on_cycle(path)` (each node on the path waits for the next, the last
    for the first) when the inputs form a cycle. Iterative: chains are arbitrarily long."""
    DONE, ACTIVE = 2, 1
    mark: dict[T, int] = {}
    result: list[T] = []
    for start in starts:
        if start in mark:
            continue
        mark[start] = ACTIVE
        stack: list[tuple[T, Iterator[T]]] = [(start, iter(inputs(start)))]
        while stack:
            node, pending = stack[-1]
            for nxt in pending:
                seen = mark.get(nxt)
                if seen == DONE:
                    continue
                if seen == ACTIVE:
                    path = [n for n, _ in stack]
                    raise on_cycle(path[path.index(nxt) :])
                mark[nxt] = ACTIVE
                stack.append((nxt, iter(inputs(nxt))))
                break
            else:
                stack.pop()
                mark[node] = DONE
                result.append(node)
    return result


@dataclass
class Block:
    """One loop of the schedule, or the whole program (`range` None): its statements and inner
    loops in execution order. A loop runs its body once per value of `range`; the RANGE itself
    is not in the body (the loop sets it), and its `end` runs before the loop, in an outer block.
    """

    range: UOp | None
    body: list[UOp | Block] = field(default_factory=list)


def loop_memory(nest: LoopNest, order: MemoryOrder, line_of: LineOf = no_line) -> None:
    """The memory rules of loops (uir.md section 7): a loop reads what it writes only through a
    loop-carried AFTER, and such an AFTER lists every loop a store to it runs in."""
    at = naming(line_of)
    for uop in nest.inside:
        if uop.op is Op.LOAD:
            version = version_of(uop.src[0])
            replacer = order.replaced_by.get(order.state_of(uop.src[0]))
            if replacer is None:
                continue
            crossed = set(nest.path(uop)) & nest.inside[replacer] - nest.inside[version]
            if crossed:
                loop = nest.outermost(crossed)
                raise VerifyError(
                    f"this LOAD runs in the loop of {at(loop)} and reads a version that "
                    f"{at(replacer)} writes in that loop: inside a loop, read through a "
                    "loop-carried AFTER that lists the RANGE",
                    line_of(uop),
                )
        elif uop.op is Op.STORE and version_of(uop.src[0]).op is Op.AFTER:
            version = version_of(uop.src[0])
            carried = [d for d in version.src[1:] if d.op is Op.RANGE]
            if not carried:
                continue
            others = [version.src[0], *(d for d in version.src[1:] if d.op is not Op.RANGE)]
            outside = frozenset().union(*(nest.inside[d] for d in others))
            missing = nest.inside[uop] - outside - set(carried)
            if missing:
                loop = nest.outermost(missing)
                raise VerifyError(
                    f"this STORE writes a loop-carried version inside the loop of {at(loop)}, "
                    f"which {at(version)} does not list: add the RANGE to its deps",
                    line_of(uop),
                )


def loop_schedule(sink: UOp, line_of: LineOf = no_line) -> Block:
    """The program under `sink` as a loop nest: the schedule the interpreter and backends share.

    Each statement sits in the loop of the deepest range it is inside (so loop-invariant values
    run outside the loops they do not need), after what it waits for: its sources and, for a
    STORE, the loads of the version it replaces; a loop waits for what any statement in it waits
    for from outside. The SINK comes last. Raises VerifyError when the program breaks a memory or
    loop rule. Inline CALLs first to schedule their bodies.
    """
    return planned(sink, line_of)[0]


def planned(
    sink: UOp,
    line_of: LineOf = no_line,
    statements: list[UOp] | None = None,
    inside: dict[UOp, Ranges] | None = None,
) -> tuple[Block, MemoryOrder]:
    """`loop_schedule(sink)` and the memory order it was built from (the verifier checks the
    outputs against the order). `statements` and `inside` are as for `memory_order`."""
    nest = loop_nest(sink, line_of, inside)
    if statements is None:
        # The UOps `ranges_inside` met, sources first: CALL bodies' too, but those hold no
        # memory op, the only ones `memory_order` looks at (this saves a walk of the graph).
        statements = list(nest.inside)
    order = memory_order(sink, line_of, statements, nest.inside)
    flat = execution_order(sink, order, line_of)
    loop_memory(nest, order, line_of)
    return _nest_blocks(flat, order, nest, line_of), order


Path = tuple[UOp, ...]  # a block: the ranges of its loops, outermost first (() the program)
Item = UOp | Path  # an item of a block: a statement, or the loop at the end of a path


@dataclass
class _Placement:
    """The context the placement rules fill in: the items of each block and their waits."""

    nest: LoopNest
    order: MemoryOrder
    rank: dict[UOp, int]  # each statement -> its place in a valid flat order (the tie-break)
    items: dict[Path, dict[Item, int]] = field(default_factory=lambda: {(): {}})  # -> first rank
    waits: dict[Item, set[Item]] = field(default_factory=dict)  # each item -> items before it


def _place(ctx: _Placement, uop: UOp) -> None:
    """Place a statement in the loop of the deepest range it is inside (`LoopNest.path`): the
    shallowest depth its ranges allow. Each loop around it becomes an item of the block around
    that loop, and what the statement waits for becomes a wait between the items of the block
    both sit in. Statements may be placed in any order: `rank` and the waits order each
    block."""
    if uop not in ctx.rank:
        return  # a UOp of a CALL body only: the CALL runs it
    path = ctx.nest.path(uop)
    for depth in range(len(path) + 1):
        item: Item = uop if depth == len(path) else path[: depth + 1]
        if uop.op is Op.RANGE and depth == len(path):
            continue  # the loop sets its counter
        ctx.items.setdefault(path[:depth], {}).setdefault(item, ctx.rank[uop])
    for x in _inputs(uop, ctx.order):
        other = ctx.nest.path(x)
        common = 0
        while common < min(len(path), len(other)) and path[common] is other[common]:
            common += 1
        if x.op is Op.RANGE and common == len(other):
            continue  # a loop's counter is set before its body runs
        mine = uop if common == len(path) else path[: common + 1]
        theirs = x if common == len(other) else other[: common + 1]
        if mine != theirs:
            ctx.waits.setdefault(mine, set()).add(theirs)


def _nest_blocks(flat: list[UOp], order: MemoryOrder, nest: LoopNest, line_of: LineOf) -> Block:
    """Every statement placed in its block (`_place`), each block's items in an order that
    respects the waits. `flat` is a valid order of every statement."""
    if not any(nest.inside.values()):
        return Block(None, list(flat))  # loop-free: one block, in the order `flat` already has
    placement = _Placement(nest, order, {u: i for i, u in enumerate(flat)})
    for uop in flat:
        _place(placement, uop)
    blocks = {path: Block(path[-1] if path else None) for path in placement.items}
    for path, members in placement.items.items():
        ordered = _order_items(members, placement.waits, line_of)
        blocks[path].body = [blocks[i] if isinstance(i, tuple) else i for i in ordered]
    return blocks[()]


def _order_items(
    members: dict[Item, int], waits: dict[Item, set[Item]], line_of: LineOf
) -> list[Item]:
    """The items of one block, each after the items it waits for, otherwise in rank order."""
    rank = members.__getitem__
    return _postorder(
        sorted(members, key=rank),
        lambda item: sorted(waits.get(item, ()), key=rank),
        lambda cycle: _loop_cycle_error(cycle, line_of),
    )


def _loop_cycle_error(path: list[Item], line_of: LineOf) -> VerifyError:
    """A cycle among the items of one block goes through a loop: a statement outside it must
    run both before the loop (a LOAD of what the loop replaces) and after it."""
    at = naming(line_of)
    loops = [i for i in path if isinstance(i, tuple)]
    stmts = [i for i in path if not isinstance(i, tuple)]
    blamed = next((s for s in stmts if s.op is Op.LOAD), stmts[0] if stmts else None)
    loop = at(loops[0][-1]) if loops else "a loop"
    what = "this LOAD" if blamed is not None and blamed.op is Op.LOAD else "this statement"
    return VerifyError(
        f"{what} must run both before the loop of {loop} (a store in it replaces what it "
        "reads) and after it (it needs the loop's result): the memory order has a cycle",
        line_of(blamed) if blamed is not None else None,
    )


def flatten(block: Block) -> list[UOp]:
    """The statements of a schedule in order, each loop as its RANGE followed by its body."""
    out: list[UOp] = []
    stack: list[Iterator[UOp | Block]] = [iter(block.body)]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
        elif isinstance(item, Block):
            out.append(item.range)  # type: ignore[arg-type]
            stack.append(iter(item.body))
        else:
            out.append(item)
    return out


def schedule(sink: UOp, line_of: LineOf = no_line) -> list[UOp]:
    """The statements under `sink` in a valid execution order, loops flattened (see `flatten`).

    For a loop-free program this is every UOp reachable from `sink` without entering CALL
    bodies, once, after its sources; each LOAD before the STORE that replaces the version it
    reads; the SINK last. Raises VerifyError if the program breaks a memory or loop rule.
    """
    return flatten(loop_schedule(sink, line_of))


def buffers(sink: UOp) -> list[UOp]:
    """The global BUFFERs under `sink`, in slot order (the order the C ABI passes them)."""
    found = [u for u in sink.toposort(bodies=False) if u.op is Op.BUFFER]
    return sorted(found, key=lambda u: u.arg)
