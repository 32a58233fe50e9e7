"""The full order of a program's memory effects (uir.md section 6.3) and an execution order for it.

Every buffer version has a *state*: the last STORE that has happened to the buffer when the version
is current, or the BUFFER or LOCAL itself while nothing has. A STORE replaces the state of the
version it writes; an AFTER's state is the latest of its deps' and of its `mem`'s. A program is
fully ordered when no state is replaced by two stores (so each buffer's stores form one chain) and
every LOAD can run before the store that replaces the state it reads.

`schedule` is the API the interpreter and the backends share: the statements in an order that runs
each one after its sources and each LOAD before the STORE replacing what it reads.

Both walks are iterative (50,000-statement programs are ordinary).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .errors import VerifyError
from .memory import BUFFERS, version_of
from .ops import Op
from .uop import UOp

LineOf = Callable[[UOp], "int | None"]


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
    sink: UOp, line_of: LineOf = no_line, statements: list[UOp] | None = None
) -> MemoryOrder:
    """The states, chains and load constraints of the program under `sink`.

    `statements` is `sink.toposort(bodies=False)` (or any order of those UOps with sources first)
    where the caller has it already. Raises VerifyError when two stores replace one state (not
    fully ordered). Expects the per-op checks to have passed (every AFTER dep is a STORE to the
    AFTER's buffer).
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
            candidates = [order.state[version_of(uop.src[0])], *uop.src[1:]]
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
    DONE, ACTIVE = 2, 1
    mark: dict[UOp, int] = {sink: ACTIVE}
    result: list[UOp] = []
    stack: list[tuple[UOp, Iterator[UOp]]] = [(sink, iter(_inputs(sink, order)))]
    while stack:
        node, pending = stack[-1]
        for nxt in pending:
            seen = mark.get(nxt)
            if seen == DONE:
                continue
            if seen == ACTIVE:
                path = [n for n, _ in stack]
                raise _cycle_error(path[path.index(nxt) :], order, line_of)
            mark[nxt] = ACTIVE
            stack.append((nxt, iter(_inputs(nxt, order))))
            break
        else:
            stack.pop()
            mark[node] = DONE
            result.append(node)
    return result


def schedule(sink: UOp, line_of: LineOf = no_line) -> list[UOp]:
    """The statements under `sink` in a valid execution order (the API backends render from).

    Every UOp reachable from `sink` without entering CALL bodies appears once, after all of its
    sources; each LOAD comes before the STORE that replaces the version it reads; the SINK is
    last. Order among independent statements follows the sources' order (deterministic). Inline
    CALLs first to schedule their bodies. Raises VerifyError if the program is not fully ordered.
    """
    return execution_order(sink, memory_order(sink, line_of), line_of)


def buffers(sink: UOp) -> list[UOp]:
    """The global BUFFERs under `sink`, in slot order (the order the C ABI passes them)."""
    found = [u for u in sink.toposort(bodies=False) if u.op is Op.BUFFER]
    return sorted(found, key=lambda u: u.arg)
