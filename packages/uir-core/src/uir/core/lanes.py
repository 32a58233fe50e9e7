"""Loops whose iterations the interpreter may run as numpy lanes: a block of them at once.

A loop of the schedule runs in lanes when running every statement of its body for a block of
iterations before the next statement gives what running the iterations one after another gives.
That holds when no iteration reads what another writes, apart from two cases that the lanes
handle themselves:

- a LOCAL that is each iteration's own scratch (*private*): every lane gets its own copy. In a
  PARALLEL loop, a LOCAL carried across the range is one by the program's promise
  (spec/uir-week7.md rule 3). In a plain loop it is one when the body writes the whole LOCAL
  before anything reads it: one ungated store to a LOCAL of one element, or an inner loop over
  its every element storing `L[j]` and touching `L` no other way.
- a LOCAL that a plain loop folds into (*fold*): the body loads an element, combines it with a
  term by one binary op, stores it back to the same element and touches that LOCAL no other way,
  directly or in inner loops. The terms are computed in lanes, kept, and folded into each element
  in iteration order when the block of lanes ends (a lane's terms before the next lane's).

Every other buffer a plain loop stores to makes it run one iteration at a time, as does a
shaped value or a whole-buffer access in the body, or an inner loop whose trip count differs
from lane to lane. The analysis only reads the program: uir.core.interpret runs the plan, and
its tests run every suite program both ways and compare the bits.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .loops import carried_across, is_parallel
from .memory import VERSIONS, Kind, buffer_of, kind
from .ops import ALU, Op
from .schedule import Block, flatten
from .uop import UOp

# Statements a lane runs besides ALU ops on scalars: places, accesses of one element, and the
# silent ones (buffer versions, windows, loop ends and inner loops' ranges).
_LANE_OPS = frozenset({Op.CONST, Op.INDEX, Op.LOAD, Op.STORE, Op.RANGE})
_SILENT = frozenset({Op.BUFFER, Op.LOCAL, Op.AFTER, Op.SHRINK, Op.END})
# Statements that compute without touching memory: a loop whose body is these and one inner
# loop may run as one loop with it (`lane_plan`).
_COMPUTE = ALU | {Op.CONST, Op.INDEX}


@dataclass(frozen=True)
class Fold:
    """`STORE place (update)` where `update` is `op(LOAD place, term)` or `op(term, LOAD
    place)`: an element of a LOCAL folding one term each time the STORE runs. The STORE may lie
    in inner loops of the loop in lanes (`ends`: their trip counts, known as the loop starts);
    every lane runs it as often, and the place may move with the inner loops' counters."""

    store: UOp
    load: UOp
    update: UOp
    term: UOp
    ends: tuple[UOp, ...]

    @property
    def in_any_order(self) -> bool:
        """Whether the terms give the same bits folded in any order (MAX and MIN; wrapping
        ADD and MUL): then each STORE's terms fold in at once, and none are kept."""
        op = self.update.op
        return op in (Op.MAX, Op.MIN) or (op in (Op.ADD, Op.MUL) and self.update.dtype.is_int)


@dataclass(frozen=True)
class LanePlan:
    """How a loop runs in lanes: over the counters `ranges` (outermost first; one lane per
    combination), running `body`. `lane` holds the body's statements whose values differ from
    lane to lane; `private` the LOCALs each lane holds a copy of; `folds` the folds by STORE;
    `skipped` the loads and updates of folds, which the fold's STORE computes."""

    ranges: tuple[UOp, ...]
    body: list[UOp | Block]
    lane: frozenset[UOp]
    private: frozenset[UOp]
    folds: dict[UOp, Fold]
    skipped: frozenset[UOp]


def _in_lanes(uop: UOp) -> bool:
    """Whether a lane can run `uop`: scalars only, and memory one element at a time."""
    if uop.op in _SILENT:
        return True
    if uop.op in ALU:
        return not uop.type.shape
    if uop.op not in _LANE_OPS or (uop.op is Op.CONST and uop.type.shape):
        return False
    if uop.op is Op.INDEX:
        return kind(uop) is Kind.PLACE
    if uop.op in (Op.LOAD, Op.STORE):
        return kind(uop.src[0]) is Kind.PLACE
    return True


def _accesses(statements: list[UOp], local: UOp) -> list[UOp]:
    return [u for u in statements if u.op in (Op.LOAD, Op.STORE) and buffer_of(u.src[0]) is local]


def _holding(block: Block, uop: UOp) -> tuple[Block, list[UOp]] | None:
    """The loop of `block` (itself or one inside it) whose body holds `uop`, and the ranges
    of the loops from below `block` down to it."""
    todo: list[tuple[Block, list[UOp]]] = [(block, [])]
    while todo:
        loop, ranges = todo.pop()
        if uop in loop.body:
            return loop, ranges
        todo.extend((i, [*ranges, i.range]) for i in loop.body if isinstance(i, Block))
    return None


def _fold(block: Block, local: UOp, users: dict[UOp, list[UOp]]) -> Fold | None:
    """`local`'s fold in `block`, when the body touches it as a fold only."""
    statements = flatten(Block(None, block.body))
    found = _accesses(statements, local)
    if len(found) != 2:
        return None
    load, store = found
    place = load.src[0]
    if load.op is not Op.LOAD or store.op is not Op.STORE or store.src[0] is not place:
        return None
    update = store.src[1]
    if len(place.src) != 2 or update.op not in ALU or len(update.src) != 2:
        return None
    if update.src.count(load) != 1 or users[load] != [update] or users[update] != [store]:
        return None
    holder = _holding(block, store)
    if holder is None or load not in holder[0].body:
        return None
    inside = set(statements)
    ends = tuple(r.src[0] for r in holder[1])  # type: ignore[union-attr]
    if any(e in inside and e.op is not Op.CONST for e in ends):
        return None  # the terms a block collects must be counted before it starts
    term = update.src[1] if update.src[0] is load else update.src[0]
    return Fold(store, load, update, term, ends)


def _covers(loop: Block, local: UOp) -> bool:
    """Whether one run of the inner loop `loop` stores every element of `local` and touches it
    no other way: `STORE L[j]`, j the loop's counter, over the LOCAL's whole length."""
    end = loop.range.src[0]  # type: ignore[union-attr]
    if end.op is not Op.CONST or end.arg != local.type.size:
        return False
    found = _accesses(flatten(Block(None, loop.body)), local)
    if len(found) != 1 or found[0].op is not Op.STORE or found[0] not in loop.body:
        return False
    place = found[0].src[0]
    return len(place.src) == 2 and place.src[0].op in VERSIONS and place.src[1] is loop.range


def _written_first(block: Block, local: UOp) -> bool:
    """Whether every iteration of `block` writes all of `local` before anything reads it:
    directly, by an inner loop covering it, or inside one inner loop alone each of whose
    iterations does."""
    for n, item in enumerate(block.body):
        if isinstance(item, Block):
            if _accesses(flatten(item), local):
                if _covers(item, local):
                    return True
                later = flatten(Block(None, block.body[n + 1 :]))
                return _written_first(item, local) and not _accesses(later, local)
        elif item.op in (Op.LOAD, Op.STORE) and buffer_of(item.src[0]) is local:
            place = item.src[0]
            return (
                item.op is Op.STORE
                and local.type.size == 1
                and len(place.src) == 2
                and place.src[0].op in VERSIONS
            )
    return False


def lane_plan(block: Block) -> LanePlan | None:
    """How `block`'s loop runs in lanes, or None when it must run one iteration at a time.
    Where its body is one inner loop of the same kind (PARALLEL or plain) after statements that
    only compute (no access of memory), the two run as one loop over both counters, and so on
    inward: a softmax over the last axis of a rank-3 value gets lanes of both row counters."""
    chain, outer = [block], {block.range}
    # an inner end computed from an outer counter (a triangular nest) differs between lanes
    while (inner := _perfectly_inside(chain[-1])) is not None and inner.range.src[0] not in outer:
        outer |= {*chain[-1].body[:-1], inner.range}  # type: ignore[misc]
        chain.append(inner)
    for depth in range(len(chain), 0, -1):
        plan = _plan(chain[:depth])
        if plan is not None:
            return plan
    return None


def _perfectly_inside(block: Block) -> Block | None:
    """The inner loop that `block`'s body ends with when all it runs before it only computes
    and the inner loop's trip count is the same in every iteration of `block`."""
    if not block.body or not isinstance(inner := block.body[-1], Block):
        return None
    before = block.body[:-1]
    if not all(isinstance(u, UOp) and (u.op in _COMPUTE or u.op in _SILENT) for u in before):
        return None
    if is_parallel(inner.range) != is_parallel(block.range):  # type: ignore[arg-type]
        return None
    return None if inner.range.src[0] in before else inner  # type: ignore[union-attr]


def _plan(chain: list[Block]) -> LanePlan | None:
    """The plan for running the loops of `chain` (each the last item of the one before) as one
    loop over all their counters, outermost first."""
    ranges = tuple(b.range for b in chain)
    body = [item for b in chain[:-1] for item in b.body[:-1]] + chain[-1].body
    block = Block(ranges[-1], body)
    statements = flatten(Block(None, body))
    if not all(_in_lanes(u) for u in statements):
        return None
    users: dict[UOp, list[UOp]] = defaultdict(list)
    for u in statements:
        for s in dict.fromkeys(u.src):
            users[s].append(u)
    stored = dict.fromkeys(buffer_of(u.src[0]) for u in statements if u.op is Op.STORE)
    carried = {
        buffer_of(u.src[0])
        for u in statements
        if u.op in (Op.LOAD, Op.STORE) and not carried_across(u.src[0]).isdisjoint(ranges)
    }
    parallel = is_parallel(ranges[0])  # type: ignore[arg-type]
    private: set[UOp] = set()
    folds: dict[UOp, Fold] = {}
    for b in stored:
        if parallel and b not in carried:
            continue  # memory the iterations share: each writes its own elements (rule 1)
        if b.op is not Op.LOCAL or b not in carried:
            return None
        fold = None if parallel else _fold(block, b, users)
        if fold is not None:
            folds[fold.store] = fold
        elif parallel or _written_first(block, b):
            private.add(b)
        else:
            return None
    lane = _lane_values(ranges, statements, private)
    for u in statements:
        if u.op is Op.RANGE and u.src[0] in lane:
            return None  # an inner loop whose trip count differs from lane to lane
        if u.op is Op.STORE and u not in folds and u.src[0] not in lane:
            return None  # every lane would write the same element
    if any(f.store.src[0] in lane for f in folds.values()):
        return None  # each lane folds into an element of its own: not a fold over iterations
    skipped = frozenset(u for f in folds.values() for u in (f.load, f.update))
    return LanePlan(ranges, body, frozenset(lane), frozenset(private), folds, skipped)  # type: ignore[arg-type]


def _lane_values(counters: tuple[UOp, ...], statements: list[UOp], private: set[UOp]) -> set[UOp]:
    """The statements whose values differ from lane to lane: those reaching a counter, and
    places in (and loads from) private LOCALs."""
    lane = set(counters)
    for u in statements:
        if u.op is Op.INDEX:
            if buffer_of(u) in private or any(s in lane for s in u.src[1:]):
                lane.add(u)
        elif (u.op in ALU or u.op is Op.LOAD) and any(s in lane for s in u.src):
            lane.add(u)
    return lane
