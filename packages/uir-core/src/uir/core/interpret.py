"""The reference interpreter: the meaning of a verified program, registered as backend `interp`.

`evaluate` runs any verified program; the backend `interp` runs the schedule of kernels the
compiling backends run (spec/uir-week6.md 2.5), so that it needs the fused program's memory.
The program's loop nest (`schedule.loop_schedule`) is compiled once into Python closures, one per
statement, and each loop runs its body's closures once per iteration: no per-iteration dispatch
on ops. A loop that uir.core.lanes finds may run in lanes runs a block of its iterations per
closure call instead, each statement on an array of the block's values.

Scalars are plain Python numbers (ints, floats holding values of their dtype, bools) and
each buffer is a Python list, so a scalar op costs a function call. The ops `scalar.py` covers
run there; every other op, and every shaped value (week 4), goes through `semantics` on whole
numpy arrays. A buffer that a whole-buffer LOAD or STORE touches is held as a numpy array instead
of a list, so that those accesses copy memory rather than convert millions of Python numbers.
Memory references are resolved while compiling: an INDEX knows its buffer's contents and its
window's begin, so at run time it only adds the index.

The interpreter runs at most an iteration budget of loop iterations (each iteration of each loop
counts one, inner loops' included; `iteration_budget`, `uir run --max-iterations`), so that a
mistaken loop of 2^62 iterations ends with a message rather than hanging. A nest whose loop ends
are all constants is counted before it runs, so it is refused at once and costs nothing while it
runs; any other loop pays its trip count into the budget each time it starts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from .arrays import buffer_contents, const_array
from .calls import inline_calls
from .errors import BackendError
from .kernels import Schedule, require_schedule
from .lanes import Fold, LanePlan, lane_plan
from .memory import Kind, buffer_of, kind, window_begin
from .ops import ALU, Op
from .plugins import Backend, hookimpl
from .runtime import HostMemory, global_buffers, require_open
from .runtime import Memory as RuntimeMemory
from .scalar import scalar_op
from .schedule import Block, flatten, loop_schedule
from .semantics import apply, reduce
from .shapes import reduce_arg
from .uop import UOp

Memory = dict[UOp, np.ndarray]  # each BUFFER and LOCAL -> its starting contents
Step = Callable[[], None]
Env = dict[UOp, object]  # each statement -> its current value (scalars as Python numbers)
# Each BUFFER and LOCAL -> its contents while the program runs: a list, or an array where the
# program accesses the buffer whole.
Lists = dict[UOp, list | np.ndarray]


# The loop iterations one run may take unless told otherwise (`iteration_budget`): at the
# interpreter's speed, minutes of work; nothing a test or an example needs comes near it.
DEFAULT_ITERATIONS = 10**9
_budget: ContextVar[int] = ContextVar("iteration_budget", default=DEFAULT_ITERATIONS)


@contextmanager
def iteration_budget(limit: int) -> Iterator[None]:
    """Within the block, an interpreter run may take `limit` loop iterations (0: no limit)."""
    token = _budget.set(limit)
    try:
        yield
    finally:
        _budget.reset(token)


_RAISE = "a loop end by mistake? `uir run --max-iterations N` raises the budget, 0 for none"


class _Budget:
    """The iterations left to a run whose loop ends are not all constants."""

    def __init__(self, limit: float) -> None:
        self.limit = limit  # math.inf: no limit
        self.spent = 0

    def spend(self, trips: int, starts: int = 1) -> None:
        """Pay for `starts` starts of a loop of `trips` iterations, one after another (a loop
        in lanes starts an inner loop once for all its lanes)."""
        if trips > 0 and starts > 0:
            if self.spent + trips * starts > self.limit:
                paid = self.spent + trips * int((self.limit - self.spent) // trips)
                raise BackendError(
                    f"the interpreter's budget of {self.limit} loop iterations ran out: a loop of "
                    f"{trips} iterations started after {paid} ({_RAISE})"
                )
            self.spent += trips * starts


def iterations(block: Block) -> int | None:
    """The loop iterations one run of `block` takes, inner loops' included, when every loop end
    in it is a constant; None when one is not (it is known only while the program runs)."""
    total = 0
    for item in block.body:
        if isinstance(item, Block):
            assert item.range is not None
            end, inner = item.range.src[0], iterations(item)
            if end.op is not Op.CONST or inner is None:
                return None
            total += max(end.arg, 0) * (1 + inner)
    return total


def initial_memory(sink: UOp, inputs: Mapping[int, np.ndarray] | None = None) -> Memory:
    """Every buffer's starting contents: `inputs[slot]`, else its CONST, else zeros (LOCALs)."""
    inputs = inputs or {}
    memory: Memory = {}
    for uop in sink.toposort(bodies=False):
        if uop.op is Op.BUFFER:
            memory[uop] = buffer_contents(uop, inputs.get(uop.arg))
        elif uop.op is Op.LOCAL:
            memory[uop] = buffer_contents(uop)
    return memory


def _zero(uop: UOp) -> object:
    """What a gated-off LOAD yields: zero of the dtype (+0.0 for floats)."""
    return np.zeros((), dtype=uop.dtype.storage).item()


def _fallback(uop: UOp) -> Callable[..., object]:
    """`uop`'s op through the semantics table, on numpy arrays, giving back Python scalars."""
    dtypes = [s.dtype for s in uop.src]
    storages = [d.storage for d in dtypes]
    scalar = not uop.type.shape

    def run(*srcs: object) -> object:
        arrays = [np.asarray(x, dtype=t) for x, t in zip(srcs, storages, strict=True)]
        result = apply(uop.op, uop.dtype, arrays, dtypes)
        return result.item() if scalar else result

    return run


# Iterations a loop run in lanes (uir.core.lanes) runs at once: enough that numpy's cost per
# statement is spread thin, few enough that a lane's scratch row of a few thousand elements
# times this stays tens of MiB.
LANES = 4096
# The fewest iterations a loop runs in lanes: below this, numpy's cost per statement outweighs
# what it saves, and a small loop runs its arithmetic on Python numbers (scalar.py).
LANES_FROM = 64
# Terms a block of lanes keeps for one fold before folding them in (uir.core.lanes): 8 MiB of f32.
FOLD_TERMS = 2**21


class _Lanes:
    """The block of iterations a loop in lanes is running: how many, and each private LOCAL's
    copies (one after another, `size` elements each) with each lane's offset into them."""

    def __init__(self, plan: LanePlan) -> None:
        self.plan = plan
        self.count = 0
        self.terms: dict[Fold, list[tuple[int, np.ndarray]]] = {f: [] for f in plan.folds.values()}
        self.copies: dict[UOp, np.ndarray] = {}
        self.offsets: dict[UOp, np.ndarray] = {}


class _Compiler:
    """Turns the statements of a schedule into closures over `env` and the buffers' lists.

    A loop with a lane plan (`plans`) runs a block of iterations at once: its counter is an
    array of them, and so is every statement in the plan's `lane`, computed by `semantics` on
    arrays; the rest of its body stays scalar."""

    def __init__(
        self,
        lists: Lists,
        budget: _Budget | None = None,
        plans: Mapping[int, LanePlan] | None = None,
        lanes_from: int = 1,
    ) -> None:
        self.env: Env = {}
        self.lists = lists
        self.budget = budget  # None: the nest was counted before the run, or has no limit
        self.plans = plans or {}  # id of a Block -> how it runs in lanes
        self.lanes_from = lanes_from  # the fewest iterations a start runs in lanes
        self.lanes: _Lanes | None = None  # set while compiling a body that runs in lanes

    def block(self, block: Block) -> Step:
        steps = [self.loop(i) if isinstance(i, Block) else self.statement(i) for i in block.body]
        steps = [s for s in steps if s is not None]

        def run() -> None:
            for step in steps:
                step()

        return run

    def loop(self, block: Block, lanes: bool = True) -> Step:
        """A loop in lanes where its plan allows (and `lanes`), else one iteration at a time.
        One Python frame per level of the nest: a nest of hundreds of loops compiles."""
        plan = self.plans.get(id(block)) if self.lanes is None and lanes else None
        if plan is not None:
            return self.lane_loop(block, plan)
        counter = block.range
        assert counter is not None
        body, env, end, lanes = self.block(block), self.env, counter.src[0], self.lanes
        spend = self.budget.spend if self.budget is not None else None

        def run() -> None:
            if spend is not None:
                # Inside lanes, one start of this loop stands for one per lane.
                spend(env[end], lanes.count if lanes is not None else 1)
            for i in range(env[end]):  # evaluated once per start; no iterations when end <= 0
                env[counter] = i
                body()

        return run

    def lane_loop(self, block: Block, plan: LanePlan) -> Step:
        """A loop (or a nest of them, `plan.ranges`) run up to LANES iterations at a time
        (uir.core.lanes): lane k of the nest's iterations in row-major order has each counter's
        digit of k. Each private LOCAL is copied once per lane as a block starts; after the
        loop it holds the last iteration's contents, as it would one iteration at a time. A
        start of fewer than `lanes_from` iterations runs them one at a time instead."""
        one_by_one = self.loop(block, lanes=False) if self.lanes_from > 1 else None
        env, ends = self.env, [r.src[0] for r in plan.ranges]
        lanes = self.lanes = _Lanes(plan)
        try:
            body = self.block(Block(None, plan.body))
        finally:
            self.lanes = None
        counters = [(r, r.dtype.storage) for r in reversed(plan.ranges)]
        private = [(b, self.lists[b], b.type.size) for b in plan.private]
        kept = [(f, self.fold_terms(f)) for f in plan.folds.values() if not f.in_any_order]
        spend = self.budget.spend if self.budget is not None else None

        def run() -> None:
            counts = [max(env[e], 0) for e in ends]
            trips = math.prod(counts)
            if one_by_one is not None and trips < self.lanes_from:
                one_by_one()
                return
            if spend is not None:  # what the nest's loops spend run one iteration at a time
                for depth, n in enumerate(counts):
                    spend(n, math.prod(counts[:depth]))
            per_block = LANES
            for f, _ in kept:  # a block keeps at most FOLD_TERMS terms of each fold
                runs = math.prod(env[e] for e in f.ends)
                per_block = min(per_block, max(1, FOLD_TERMS // max(runs, 1)))
            for start in range(0, trips, per_block):
                lanes.count = count = min(per_block, trips - start)
                k = np.arange(start, start + count, dtype=np.int64)
                for (r, storage), n in zip(counters, reversed(counts), strict=True):
                    env[r] = (k % n).astype(storage)
                    k = k // n
                for b, shared, size in private:
                    lanes.copies[b] = np.tile(shared, count)
                    lanes.offsets[b] = np.arange(0, count * size, size, dtype=np.int64)
                body()
                for f, finish in kept:
                    finish(lanes.terms[f])
                    lanes.terms[f] = []
            if trips > 0:
                for b, shared, size in private:
                    shared[:] = lanes.copies[b][-size:]

        return run

    def statement(self, uop: UOp) -> Step | None:
        """The closure that computes `uop`, or None when it has nothing to do at run time."""
        env, op = self.env, uop.op
        if self.lanes is not None:
            plan = self.lanes.plan
            if uop in plan.skipped:
                return None  # computed by its fold's STORE
            if uop in plan.folds:
                return self.fold(plan.folds[uop])
            if uop in plan.lane or (op is Op.STORE and uop.src[0] in plan.lane):
                return self.in_lanes(uop)
        if op is Op.CONST:
            env[uop] = const_array(uop)
            if not uop.type.shape:
                env[uop] = env[uop].item()  # type: ignore[union-attr]
            return None
        if op in ALU:
            return self.alu(uop)
        if op is Op.STACK:
            return self.stack(uop)
        if op is Op.INDEX:
            return self.index(uop) if kind(uop) is Kind.PLACE else self.element(uop)
        if op is Op.LOAD:
            return self.load_all(uop) if kind(uop.src[0]) is Kind.MEMORY else self.load(uop)
        if op is Op.STORE:
            return self.store_all(uop) if kind(uop.src[0]) is Kind.MEMORY else self.store(uop)
        if op is Op.REDUCE:
            return self.reduce(uop)
        if op is Op.EXPAND:
            return self.expand(uop)
        if op is Op.STAGE:
            return self.stage(uop)
        if op in MOVES and kind(uop) is Kind.VALUE:
            return self.move(uop)
        if op in (Op.BUFFER, Op.LOCAL, Op.AFTER, Op.SHRINK, Op.END, Op.SINK):
            return None  # memory references are resolved while compiling; END marks a loop's end
        raise BackendError(f"the interpreter cannot run {op}")

    def in_lanes(self, uop: UOp) -> Step:
        """A statement of a loop in lanes whose value is one per lane: an array of them."""
        env, lanes = self.env, self.lanes
        assert lanes is not None
        if uop.op in ALU:
            srcs, dtypes = uop.src, [s.dtype for s in uop.src]
            storages = [d.storage for d in dtypes]

            def alu() -> None:
                xs = [np.asarray(env[s], dtype=t) for s, t in zip(srcs, storages, strict=True)]
                env[uop] = apply(uop.op, uop.dtype, xs, dtypes)

            return alu
        if uop.op is Op.INDEX:
            return self.lane_place(uop, lanes)
        memory = self.lane_memory(buffer_of(uop.src[0]), lanes)
        place = uop.src[0]
        storage, gated = place.dtype.storage, len(place.src) == 3
        if uop.op is Op.LOAD:
            zero = np.zeros((), dtype=storage)

            def load() -> None:
                at, data = env[place], memory()
                if gated:  # a gated-off place is -1 (lane_place): it reads zero
                    on = at >= 0
                    env[uop] = np.where(on, data[np.where(on, at, 0)], zero)
                else:
                    env[uop] = data[at]

            return load
        value = uop.src[1]

        def store() -> None:
            at, data = env[place], memory()
            values = np.broadcast_to(np.asarray(env[value], dtype=storage), at.shape)
            if gated:
                on = at >= 0
                data[at[on]] = values[on]
            else:
                data[at] = values

        return store

    def lane_memory(self, b: UOp, lanes: _Lanes) -> Callable[[], np.ndarray]:
        """What a lane access of `b` reads and writes: every lane's copy of a private LOCAL
        (new for each block of lanes), else the buffer's one array."""
        if b in lanes.plan.private:
            return lambda: lanes.copies[b]
        shared = self.lists[b]
        assert isinstance(shared, np.ndarray), "a buffer accessed in lanes is held as an array"
        return lambda: shared

    def lane_place(self, uop: UOp, lanes: _Lanes) -> Step:
        """Each lane's position in the array `lane_memory` gives, -1 where the gate is false."""
        env, b, begin, i = self.env, buffer_of(uop.src[0]), window_begin(uop.src[0]), uop.src[1]
        private = b in lanes.plan.private
        gate = uop.src[2] if len(uop.src) == 3 else None

        def run() -> None:
            at = np.asarray(env[i], dtype=np.int64) + begin
            if private:
                at = at + lanes.offsets[b]
            if gate is not None:
                at = np.where(env[gate], at, -1)
            env[uop] = np.broadcast_to(at, (lanes.count,))

        return run

    def fold(self, fold: Fold) -> Step:
        """A fold's STORE in lanes: it keeps the block's terms and where they go, which
        `fold_terms` folds in when the block ends, or folds them in at once where the order
        does not matter."""
        env, lanes, place, term = self.env, self.lanes, fold.store.src[0], fold.term
        assert lanes is not None
        storage = fold.update.dtype.storage
        now = self.fold_terms(fold) if fold.in_any_order else None

        def run() -> None:
            terms = np.broadcast_to(np.asarray(env[term], dtype=storage), (lanes.count,))
            if now is not None:
                now([(env[place], terms)])
            else:
                lanes.terms[fold].append((env[place], terms))

        return run

    def fold_terms(self, fold: Fold) -> Callable[[list[tuple[int, np.ndarray]]], None]:
        """What ends a block of lanes for `fold`: each element it kept terms for takes them in
        iteration order, one lane's after another's, as one iteration at a time would."""
        update, op, dtype = fold.update, fold.update.op, fold.update.dtype
        data = self.lists[buffer_of(fold.store.src[0])]
        assert isinstance(data, np.ndarray), "a buffer accessed in lanes is held as an array"
        first = update.src[0] is fold.load  # acc = op(acc, term), else op(term, acc)
        # These fold in semantics.reduce's order, acc = op(acc, term), and commute (NaN's
        # sign and payload aside, which uir.md section 3 leaves open); bool folds step by step.
        by_reduce = op in (Op.MAX, Op.MIN) or (op in (Op.ADD, Op.MUL) and dtype.is_number)
        step = scalar_op(op, update.src[-1].dtype) or _fallback(update)

        def finish(kept: list[tuple[int, np.ndarray]]) -> None:
            if not kept:
                return
            places = np.array([at for at, _ in kept])
            terms = np.stack([t for _, t in kept])  # one row per run of the STORE
            for at in dict.fromkeys(places.tolist()):
                rows = terms if len(kept) == 1 or (places == at).all() else terms[places == at]
                steps = rows.T.reshape(-1)  # lane by lane, each lane's runs in order
                if by_reduce:
                    data[at] = reduce(op, dtype, np.concatenate([data[at : at + 1], steps]), (0,))
                    continue
                acc = data.item(at)
                for begin in range(0, len(steps), LANES):  # as Python numbers, a few at a time
                    for t in steps[begin : begin + LANES].tolist():
                        acc = step(acc, t) if first else step(t, acc)
                data[at] = acc

        return finish

    def alu(self, uop: UOp) -> Step:
        env, srcs = self.env, uop.src
        fn = None
        if not any(s.type.shape for s in (uop, *srcs)) and uop.op not in (Op.CAST, Op.BITCAST):
            fn = scalar_op(uop.op, srcs[-1].dtype)
        if fn is None:
            fn = _fallback(uop)
        if len(srcs) == 1:
            (a,) = srcs

            def unary() -> None:
                env[uop] = fn(env[a])

            return unary
        if len(srcs) == 2:
            a, b = srcs

            def binary() -> None:
                env[uop] = fn(env[a], env[b])

            return binary

        def any_arity() -> None:
            env[uop] = fn(*[env[s] for s in srcs])

        return any_arity

    def stack(self, uop: UOp) -> Step:
        env, storage = self.env, uop.dtype.storage

        def run() -> None:
            env[uop] = np.array([env[s] for s in uop.src], dtype=storage)

        return run

    def element(self, uop: UOp) -> Step:
        """An INDEX of a small vector value: its element, as a Python scalar."""
        env, (vector, i) = self.env, uop.src

        def run() -> None:
            env[uop] = env[vector][env[i]].item()  # type: ignore[index]

        return run

    def index(self, uop: UOp) -> Step:
        """An INDEX of memory: its place, the position in the buffer's list, or None where the
        gate is false (the place is never touched)."""
        env, begin, i = self.env, window_begin(uop.src[0]), uop.src[1]
        if len(uop.src) == 3:
            gate = uop.src[2]

            def gated() -> None:
                env[uop] = begin + env[i] if env[gate] else None

            return gated

        def place() -> None:
            env[uop] = begin + env[i]

        return place

    def load(self, uop: UOp) -> Step:
        env, place = self.env, uop.src[0]
        data, zero = self.lists[buffer_of(place)], _zero(uop)
        # An array's item() is a Python number, as every scalar in `env` is.
        read = data.item if isinstance(data, np.ndarray) else data.__getitem__

        def run() -> None:
            at = env[place]
            env[uop] = zero if at is None else read(at)  # a gated-off load yields zero

        return run

    def store(self, uop: UOp) -> Step:
        env, (place, value) = self.env, uop.src
        data = self.lists[buffer_of(place)]

        def run() -> None:
            at = env[place]
            if at is not None:
                data[at] = env[value]

        return run

    def load_all(self, uop: UOp) -> Step:
        """A whole-buffer LOAD: a copy of the elements of the version or window it names."""
        env = self.env
        data, begin = self.lists[buffer_of(uop.src[0])], window_begin(uop.src[0])
        end = begin + uop.type.size

        def run() -> None:
            env[uop] = data[begin:end].copy()

        return run

    def store_all(self, uop: UOp) -> Step:
        """A whole-buffer STORE: every element of the version or window it names."""
        env, (mem, value) = self.env, uop.src
        data, begin = self.lists[buffer_of(mem)], window_begin(mem)
        end = begin + mem.type.size

        def run() -> None:
            data[begin:end] = env[value]

        return run

    def reduce(self, uop: UOp) -> Step:
        env, x = self.env, uop.src[0]
        fold, axes, _ = reduce_arg(uop.arg)  # a FAST one folds in the week-4 order too
        scalar = not uop.type.shape

        def run() -> None:
            result = reduce(fold, uop.dtype, np.asarray(env[x], dtype=x.dtype.storage), axes)
            env[uop] = result.item() if scalar else result

        return run

    def expand(self, uop: UOp) -> Step:
        env, x, storage, shape = self.env, uop.src[0], uop.dtype.storage, uop.type.shape

        def run() -> None:
            # A read-only view: values are never written in place.
            env[uop] = np.broadcast_to(np.asarray(env[x], dtype=storage), shape)

        return run

    def move(self, uop: UOp) -> Step:
        """A movement op (uir.md section 9) as the numpy operation that means the same."""
        env, srcs, move = self.env, uop.src, MOVES[uop.op]
        storage = uop.dtype.storage

        def run() -> None:
            env[uop] = move(uop, [np.asarray(env[s], dtype=storage) for s in srcs])

        return run

    def stage(self, uop: UOp) -> Step:
        """STAGE asks a compiler to materialize its value; to the interpreter it is the value."""
        env, x = self.env, uop.src[0]

        def run() -> None:
            env[uop] = env[x]

        return run


def _pad(uop: UOp, xs: list[np.ndarray]) -> np.ndarray:
    # Zero bits are the dtype's zero in every storage: false, 0 and +0.0 (never -0.0).
    return np.pad(xs[0], uop.arg, constant_values=0)


def _shrink(uop: UOp, xs: list[np.ndarray]) -> np.ndarray:
    return xs[0][tuple(slice(begin, end) for begin, end in uop.arg)]


# Each movement op of values -> its numpy meaning, given the UOp and its sources' arrays. Results
# may be views: values are never written in place (a whole-buffer STORE copies).
MOVES: dict[Op, Callable[[UOp, list[np.ndarray]], np.ndarray]] = {
    Op.RESHAPE: lambda uop, xs: xs[0].reshape(uop.type.shape),
    Op.PERMUTE: lambda uop, xs: xs[0].transpose(uop.arg),
    Op.PAD: _pad,
    Op.SHRINK: _shrink,
    Op.FLIP: lambda uop, xs: np.flip(xs[0], uop.arg),
}


def _output(uop: UOp, env: Env, lists: Lists) -> np.ndarray:
    if kind(uop) is Kind.MEMORY:
        begin = window_begin(uop)
        contents = lists[buffer_of(uop)][begin : begin + uop.type.shape[0]]
        return np.array(contents, dtype=uop.dtype.storage)
    return np.asarray(env[uop], dtype=uop.dtype.storage)


def _accessed_whole(sink: UOp) -> set[UOp]:
    """The buffers that a whole-buffer LOAD or STORE under `sink` reads or writes."""
    return {
        buffer_of(uop.src[0])
        for uop in sink.toposort(bodies=False)
        if uop.op in (Op.LOAD, Op.STORE) and kind(uop.src[0]) is Kind.MEMORY
    }


def evaluate(
    sink: UOp, inputs: Mapping[int, np.ndarray] | None = None, lanes: bool | None = None
) -> list[np.ndarray]:
    """The value of each SINK source of a verified program, in order; a memory reference gives
    its contents when the program ends. `inputs` replaces global buffers' contents by slot;
    `lanes` is `load`'s."""
    return execute(sink, inputs, lanes)[0]


def execute(
    sink: UOp, inputs: Mapping[int, np.ndarray] | None = None, lanes: bool | None = None
) -> tuple[list[np.ndarray], dict[int, list | np.ndarray]]:
    """`evaluate`'s outputs, and each global buffer's contents when the program ends, by slot
    (a list, or an array where the program accesses the buffer whole or in lanes)."""
    return load(sink, inputs, lanes).run()


class Loaded:
    """A program compiled once into closures over its buffers' contents (`lists`), which stay
    the same lists and arrays: `refill` gives them a new run's starting contents in place, so
    that a session runs the closures again without compiling anything."""

    def __init__(
        self, flat: UOp, lists: Lists, total: int | None, budget: _Budget | None, env: Env
    ) -> None:
        self.flat = flat
        self.lists = lists
        self.total = total  # the loop iterations of a run, when every loop end is a constant
        self.budget = budget  # counts iterations while it runs otherwise
        self.env = env
        self.step: Step = lambda: None
        self.in_lanes = 0  # the loops (or nests) that may run in lanes (uir.core.lanes)

    def refill(self, inputs: Mapping[int, np.ndarray]) -> None:
        """Every buffer's and LOCAL's contents as a run starts: `inputs[slot]` for a global
        buffer, else its CONST, else zeros (`initial_memory`)."""
        for b, contents in self.lists.items():
            start = buffer_contents(b, inputs.get(b.arg) if b.op is Op.BUFFER else None)
            contents[:] = start if isinstance(contents, np.ndarray) else start.tolist()

    def run(self) -> tuple[list[np.ndarray], dict[int, list | np.ndarray]]:
        """One run from the current contents: `execute`'s result."""
        limit = _budget.get()
        if limit and self.total is not None and self.total > limit:
            raise BackendError(
                f"this program runs {self.total} loop iterations, over the interpreter's budget "
                f"of {limit} ({_RAISE})"
            )
        if self.budget is not None:
            self.budget.limit, self.budget.spent = limit or math.inf, 0
        self.step()
        outputs = [_output(s, self.env, self.lists) for s in self.flat.src]
        final = {b.arg: contents for b, contents in self.lists.items() if b.op is Op.BUFFER}
        return outputs, final


def lane_plans(nest: Block) -> dict[int, LanePlan]:
    """The loops of `nest` that run in lanes (uir.core.lanes), by id of their Block: each
    outermost loop that can; the loops inside one run as its lanes' inner loops."""
    plans: dict[int, LanePlan] = {}
    todo = [nest]
    while todo:
        for item in todo.pop().body:
            if isinstance(item, Block):
                plan = lane_plan(item)
                if plan is None:
                    todo.append(item)
                else:
                    plans[id(item)] = plan
    return plans


def load(
    sink: UOp, inputs: Mapping[int, np.ndarray] | None = None, lanes: bool | None = None
) -> Loaded:
    """The program under `sink` compiled, its buffers holding their starting contents. Loops
    that can run in lanes do when they start LANES_FROM iterations or more; `lanes` true runs
    them in lanes always, false never (the tests compare the two)."""
    flat = inline_calls(sink)
    nest = loop_schedule(flat)
    plans = lane_plans(nest) if lanes is not False else {}
    # Buffers accessed whole or in lanes are arrays; the rest lists, which scalar code reads
    # and writes fastest.
    arrays = _accessed_whole(flat) | {
        buffer_of(u.src[0])
        for plan in plans.values()
        for u in flatten(Block(None, plan.body))
        if u.op in (Op.LOAD, Op.STORE)
    }
    lists: Lists = {
        b: contents if b in arrays else contents.tolist()
        for b, contents in initial_memory(flat, inputs).items()
    }
    total = iterations(nest)
    # A nest counted now costs nothing while it runs; any other pays each loop's trip count.
    budget = _Budget(0) if total is None else None
    compiler = _Compiler(lists, budget, plans, 1 if lanes else LANES_FROM)
    loaded = Loaded(flat, lists, total, budget, compiler.env)
    loaded.step = compiler.block(nest)
    loaded.in_lanes = len(plans)
    return loaded


class _Interpreted:
    def __init__(self, program: Schedule | UOp) -> None:
        self.program = program

    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        if isinstance(self.program, UOp):  # as written: no lanes either, as weeks 1-5 run it
            return evaluate(self.program, inputs, lanes=False)
        return _as_written(self.program, evaluate(self.program.sink, inputs))


def _as_written(schedule: Schedule, outputs: list[np.ndarray]) -> list[np.ndarray]:
    """The lowered program's outputs in the shapes of the program as written."""
    return [
        np.asarray(out).reshape(s.type.shape)
        for out, s in zip(outputs, schedule.source.src, strict=True)
    ]


class Interpreter:
    """The reference semantics: the schedule's loop nest compiled to Python closures, loops in
    numpy lanes where they can (uir.core.lanes); always available."""

    name = "interp"
    description = "reference interpreter (Python closures over the kernels' loops, bit-exact)"
    # The interpreter runs the schedule the compiling backends run, so that it needs only
    # the memory of the fused program (spec/uir-week6.md 2.5); `evaluate` runs any program.
    form = "kernels"
    # `uir run --as-written` gives it the program as written instead (form "program"), shaped
    # values whole and every loop one iteration at a time: the interpreter of weeks 1-5, in
    # which those suites' planted interpreter bugs are planted.
    runs_as_written = True

    def available(self) -> tuple[bool, str]:
        return True, ""

    def render(self, program: object) -> str:
        raise BackendError("the interpreter renders no source code")

    def compile(self, program: object) -> _Interpreted:
        if isinstance(program, UOp):
            return _Interpreted(program)
        return _Interpreted(require_schedule(program, self.name))

    def session(
        self, program: object, source: UOp, memory: Mapping[int, RuntimeMemory]
    ) -> InterpretedSession:
        return InterpretedSession(require_schedule(program, self.name), source, memory)


class InterpretedSession:
    """A program run by the interpreter again and again on host arrays (uir.core.runtime): it is
    compiled once (`Loaded`), and each run starts from the buffers' current contents and writes
    back what it stored."""

    def __init__(
        self, schedule: Schedule, source: UOp, shared: Mapping[int, RuntimeMemory]
    ) -> None:
        self.closed = False
        self.memory: dict[int, HostMemory] = {}
        for slot, buffer in global_buffers(source).items():
            given = shared.get(slot)
            if given is None:
                own = HostMemory(Interpreter.name, slot, buffer.type, buffer_contents(buffer))
                own.owner = self
                given = own
            assert isinstance(given, HostMemory)  # open_session checked its backend
            self.memory[slot] = given
        self.schedule = schedule
        self._loaded = load(schedule.sink)

    def run(self) -> list[np.ndarray]:
        require_open(self.memory, self.closed)
        # The closures' own lists take the contents: a run that fails half way (the iteration
        # budget) changes no buffer, and the next run starts again from them.
        self._loaded.refill({slot: m.contents() for slot, m in self.memory.items()})
        outputs, final = self._loaded.run()
        for slot, memory in self.memory.items():  # the lowering's own buffers stay its own
            memory.contents()[...] = final[slot]
        # A value output may be an array the closures hold (a CONST's): the caller gets a copy.
        return [np.array(out) for out in _as_written(self.schedule, outputs)]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for m in self.memory.values():
                if m.owner is self:
                    m.free()

    def __enter__(self) -> InterpretedSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@hookimpl
def uir_backends() -> Iterable[Backend]:
    return [Interpreter()]
