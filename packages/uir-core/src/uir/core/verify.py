"""The verifier: every rule uir.md checks on a parsed graph, one function per op family.

Per-op checks run first, on every statement; then the whole-program rules, on the inlined graph
(a program means its inlined program: spec/uir-week1.md section 8.3): distinct buffer slots, the
full memory order and the SINK's outputs (uir.md 6.3), no shaped value inside a loop (7, 8) and
bounds proofs for every INDEX (6.4). Failures raise VerifyError naming the line of the offending
statement. Dead statements (not reachable from the SINK) are never verified.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

from . import shapes
from .arguments import format_arg
from .bounds import bounds, gated_bounds
from .calls import Origins, inline_calls
from .dtypes import BOOL, I32, VOID, Type
from .elements import Elements
from .errors import VerifyError
from .gradients import grad_order, on_path
from .loops import (
    Ranges,
    carried_across,
    end_stores,
    is_parallel,
    naming,
    range_arg,
    ranges_inside,
)
from .memory import VERSIONS, Kind, buffer_of, kind
from .ops import (
    ALU,
    BINARY,
    COMPARE,
    MOVEMENT,
    Op,
)
from .parse import LongInt, Program
from .schedule import planned
from .shapes import ShapeError
from .uop import UOp

# Ops a CALL body may hold: values only, no effects, memory or loops (uir.md sections 5, 8, 9).
BODY_OPS = (
    ALU
    | MOVEMENT
    | {
        Op.CONST,
        Op.PARAM,
        Op.CALL,
        Op.STACK,
        Op.INDEX,
        Op.REDUCE,
        Op.STAGE,
        Op.GRAD,
    }
)
# The shaped values that may run inside a loop: week 1's small vectors (uir.md section 7). After
# inlining, a CALL returning one is one of these too.
SMALL_VECTORS = frozenset({Op.STACK, Op.CONST})
# Ops whose checks accept memory references, places or effects among their sources; every other
# op takes values only (uir.md section 6).
MEMORY_AWARE = frozenset(
    {Op.SHRINK, Op.INDEX, Op.LOAD, Op.STORE, Op.AFTER, Op.END, Op.SINK, Op.GRAD}
)


class _Checker:
    """The program under check and what the checks share. A check tests its condition first and
    builds its message only when the condition fails: most programs pass every check, and
    formatting every message up front cost a sixth of the verifier's time."""

    def __init__(self, program: Program) -> None:
        self.program = program
        # Each UOp the inliner built -> the UOp written in the program: the whole-program rules
        # judge the inlined graph, and their errors name the line the user wrote.
        self.origins: Origins = {}
        # Each CALL body checked so far -> its PARAMs: a body called n times is walked once.
        self.body_params: dict[UOp, list[UOp]] = {}

    @cached_property
    def inside(self) -> dict[UOp, Ranges]:
        """The ranges each UOp is inside, computed once for the AFTER checks and the schedule."""
        return ranges_inside(self.program.sink)

    def line_of(self, uop: UOp) -> int | None:
        return self.program.line_of(self.origins.get(uop, uop))

    def fail(self, uop: UOp, message: str) -> VerifyError:
        return VerifyError(message, self.line_of(uop))

    def arity(self, uop: UOp, count: int) -> None:
        got = len(uop.src)
        if got != count:
            raise self.fail(uop, f"{uop.op} takes {count} operand(s), got {got}")

    def no_arg(self, uop: UOp) -> None:
        if uop.arg is not None:
            raise self.fail(uop, f"{uop.op} takes no argument")

    def slot(self, uop: UOp, what: str) -> None:
        ok = isinstance(uop.arg, int) and not isinstance(uop.arg, bool) and uop.arg >= 0
        if not ok:
            raise self.fail(uop, f"{uop.op} takes {what} (an int >= 0)")

    def line_note(self, uop: UOp) -> str:
        line = self.line_of(uop)
        return f" on line {line}" if line is not None else ""

    def typed(self, uop: UOp, rule: Callable[..., Type], *args: object) -> Type:
        """The type `rule` (uir.core.shapes) gives `args`, its ShapeError reported at `uop`."""
        try:
            return rule(*args)
        except ShapeError as exc:
            raise self.fail(uop, str(exc)) from None

    def same_types(self, uop: UOp, srcs: tuple[UOp, ...]) -> Type:
        first = srcs[0].type
        for s in srcs[1:]:
            if s.type != first:
                raise self.fail(uop, f"{uop.op} operands differ: {first} and {s.type}")
        return first


def _check_const(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 0)
    dtype = uop.dtype
    values = uop.arg
    if uop.type.shape:
        ok = isinstance(values, Elements) and len(values) == uop.type.size
        if not ok:
            raise c.fail(uop, f"CONST {uop.type} needs a flat tuple of {uop.type.size} elements")
        values = _distinct_kinds(values)
    else:
        if isinstance(values, tuple):
            raise c.fail(uop, "a scalar CONST takes one literal, not a tuple")
        values = (values,)
    for v in values:
        if dtype.is_bool:
            ok = isinstance(v, bool)
        elif dtype.is_int:
            if isinstance(v, LongInt):
                raise c.fail(
                    uop, f"a literal of {len(v.digits)} digits is out of range for {dtype}"
                )
            ok = isinstance(v, int) and not isinstance(v, bool)
            if ok and not dtype.min <= v <= dtype.max:
                raise c.fail(uop, f"{v} is out of range for {dtype}")
        else:
            ok = isinstance(v, float)  # the parser has rounded every number literal to the type
        if not ok:
            raise c.fail(uop, f"'{v}' is not a literal of type {dtype}")


def _distinct_kinds(elements: Elements) -> tuple | Elements:
    """Elements standing for all of `elements` in every check of `_check_const`: a packed array
    holds one kind of number, so its extremes stand for it."""
    if elements.is_fill:
        return (elements[0],)
    packed = elements.packed
    if packed is not None:
        return (min(packed), max(packed)) if packed.typecode in "qQ" else (elements[0],)
    return elements


def _check_param(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 0)
    slot = uop.arg
    ok = isinstance(slot, int) and not isinstance(slot, bool) and slot >= 0
    if not ok:
        raise c.fail(uop, "PARAM takes a slot number >= 0")


def _check_call(c: _Checker, uop: UOp) -> None:
    if len(uop.src) < 1:
        raise c.fail(uop, "CALL needs a body")
    c.no_arg(uop)
    body = uop.src[0]
    if body.type != uop.type:
        raise c.fail(uop, f"CALL has type {uop.type} but its body is {body.type}")
    for param in _body_params(c, body):
        slot = param.arg
        if slot >= len(uop.src) - 1:
            raise c.fail(uop, f"CALL has no argument for PARAM slot {slot}")
        arg = uop.src[1 + slot]
        if arg.type != param.type:
            raise c.fail(uop, f"argument {slot} is {arg.type} but its PARAM is {param.type}")


def _body_params(c: _Checker, body: UOp) -> list[UOp]:
    """The PARAMs of a CALL body (nested bodies not entered), after checking that it holds values
    only."""
    params = c.body_params.get(body)
    if params is None:
        params = []
        for inner in body.toposort(bodies=False):
            if inner.op not in BODY_OPS:
                raise c.fail(inner, f"a CALL body may not contain {inner.op}")
            if inner.op is Op.PARAM:
                params.append(inner)
        c.body_params[body] = params
    return params


def _check_stack(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    if uop.src and uop.src[0].type.shape:
        _check_stack_of_values(c, uop)
        return
    count = len(uop.src)
    if len(uop.type.shape) != 1:
        raise c.fail(uop, "STACK of scalars has a rank-1 type")
    if count != uop.type.shape[0]:
        raise c.fail(uop, f"{uop.type} needs {uop.type.shape[0]} sources")
    for s in uop.src:
        if s.type != uop.type.scalar:
            raise c.fail(uop, f"STACK element is {s.type}, not {uop.type.scalar}")


def _check_index(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    if len(uop.src) not in (2, 3):
        raise c.fail(uop, "INDEX takes a source, an index and an optional gate")
    value, index = uop.src[0], uop.src[1]
    if kind(index) is not Kind.VALUE:
        raise c.fail(uop, f"the index must be a value, not {index.op}")
    if index.type != I32:
        raise c.fail(uop, f"the index must be i32, got {index.type}")
    if kind(value) is Kind.MEMORY:
        _check_memory_index(c, uop)
        return
    if kind(value) is not Kind.VALUE:
        raise c.fail(uop, f"INDEX of {kind(value).value} ({value.op})")
    if len(uop.src) != 2:
        raise c.fail(uop, "an INDEX of a value takes no gate")
    if len(value.type.shape) != 1:
        raise c.fail(uop, f"INDEX needs a rank-1 value, got {value.type}")
    if uop.type != value.type.scalar:
        raise c.fail(uop, f"INDEX of {value.type} gives {value.dtype}")


def _check_memory_index(c: _Checker, uop: UOp) -> None:
    mem = uop.src[0]
    if uop.type != mem.type.scalar:
        raise c.fail(
            uop, f"INDEX of {mem.type} names an element of type {mem.dtype}, not {uop.type}"
        )
    if len(uop.src) == 3:
        gate = uop.src[2]
        if kind(gate) is not Kind.VALUE:
            raise c.fail(uop, f"the gate must be a value, not {gate.op}")
        if gate.type != BOOL:
            raise c.fail(uop, f"the gate must be bool, got {gate.type}")


def _check_buffer(c: _Checker, uop: UOp) -> None:
    c.slot(uop, "a slot number")
    if len(uop.type.shape) != 1:
        raise c.fail(uop, f"BUFFER needs a flat type T[n] (buffers are rank 1), got {uop.type}")
    if len(uop.src) > 1:
        raise c.fail(uop, "BUFFER takes at most one operand, its initial contents")
    if uop.src:
        init = uop.src[0]
        ok = init.op is Op.CONST and init.type == uop.type
        if not ok:
            raise c.fail(
                uop,
                f"BUFFER's initial contents must be a CONST {uop.type}, got {init.op} {init.type}",
            )


def _check_local(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 0)
    c.slot(uop, "an id")
    if len(uop.type.shape) != 1:
        raise c.fail(uop, f"LOCAL needs a flat type T[n] (buffers are rank 1), got {uop.type}")


def _window(arg: object) -> tuple[int, int] | None:
    """`((begin, end))` as (begin, end), or None when the argument has another form."""
    if not (isinstance(arg, tuple) and len(arg) == 1 and isinstance(arg[0], tuple)):
        return None
    pair = arg[0]
    if len(pair) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair):
        return None
    return pair[0], pair[1]


def _check_shrink(c: _Checker, uop: UOp) -> None:
    """A SHRINK of memory is a window of a buffer (uir.md 6.1); of a value, a movement op (9)."""
    c.arity(uop, 1)
    if kind(uop) is Kind.MEMORY:
        _check_window(c, uop)
    else:
        _check_shrink_value(c, uop)


def _check_window(c: _Checker, uop: UOp) -> None:
    """`SHRINK T[m] mem ((begin, end))`: elements begin to end-1 of a buffer version."""
    mem = uop.src[0]
    window = _window(uop.arg)
    if window is None:
        raise c.fail(uop, "SHRINK takes one window ((begin, end)) of ints")
    begin, end = window  # type: ignore[misc]
    size = mem.type.shape[0]
    ok = 0 <= begin < end <= size
    if not ok:
        raise c.fail(uop, f"the window [{begin}, {end}) does not lie inside {mem.type}")
    want = mem.type.dtype, (end - begin,)
    if (uop.dtype, uop.type.shape) != want:
        raise c.fail(
            uop, f"SHRINK of {mem.type} to [{begin}, {end}) has type {Type(*want)}, not {uop.type}"
        )


def _what(uop: UOp) -> str:
    """`uop` named for a message: its op and, where the op alone is ambiguous, its kind."""
    return f"{uop.op} ({kind(uop).value})" if uop.op in (Op.INDEX, Op.SHRINK) else str(uop.op)


def _check_load(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    c.arity(uop, 1)
    place = uop.src[0]
    if kind(place) is Kind.MEMORY:
        _check_whole_load(c, uop)
        return
    if kind(place) is not Kind.PLACE:
        raise c.fail(uop, f"LOAD needs an INDEX of memory, not {_what(place)}")
    if uop.type != place.type:
        raise c.fail(uop, f"LOAD of an element of type {place.type} has that type, not {uop.type}")


def _check_store(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    c.arity(uop, 2)
    if uop.type != VOID:
        raise c.fail(uop, f"STORE has type void, not {uop.type}")
    place, value = uop.src
    if kind(place) not in (Kind.PLACE, Kind.MEMORY):
        raise c.fail(uop, f"STORE needs an INDEX of memory or a buffer, not {_what(place)}")
    if kind(value) is not Kind.VALUE:
        raise c.fail(uop, f"STORE writes a value, and {value.op} is not one")
    if kind(place) is Kind.MEMORY:
        _check_whole_store(c, uop)
    elif value.type != place.type:
        raise c.fail(uop, f"STORE of {value.type} to an element of type {place.type}")


def _check_whole_load(c: _Checker, uop: UOp) -> None:
    """`LOAD T[n] mem` reads all of a buffer version or window as one value (uir.md 6.2, 8)."""
    mem = uop.src[0]
    if uop.type != mem.type:
        raise c.fail(
            uop,
            f"a whole-buffer LOAD of {_what(mem)} {mem.type} has type {mem.type}, not {uop.type}",
        )


def _check_whole_store(c: _Checker, uop: UOp) -> None:
    """`STORE void mem value` writes all of a buffer version or window (uir.md 6.2, 8)."""
    mem, value = uop.src
    if value.type != mem.type:
        raise c.fail(
            uop,
            f"a whole-buffer STORE to {_what(mem)} {mem.type} writes a value of type "
            f"{mem.type}, not {value.type}",
        )


def _check_after(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    if len(uop.src) < 2:
        raise c.fail(uop, "AFTER takes a buffer version and at least one effect")
    mem, deps = uop.src[0], uop.src[1:]
    if mem.op is Op.SHRINK:
        raise c.fail(uop, "AFTER takes the buffer version, not a SHRINK window of it")
    if mem.op not in VERSIONS:
        raise c.fail(uop, f"AFTER takes a BUFFER, LOCAL or AFTER, not {mem.op}")
    if uop.type != mem.type:
        raise c.fail(uop, f"AFTER of a version of type {mem.type} has that type, not {uop.type}")
    buffer = buffer_of(mem)
    for dep in deps:
        if dep.op not in (Op.STORE, Op.END, Op.RANGE):
            raise c.fail(uop, f"AFTER waits for STOREs, ENDs or RANGEs, not {dep.op}")
        if dep.op is Op.STORE and buffer_of(dep) is not buffer:
            raise c.fail(
                uop, f"the STORE{c.line_note(dep)} writes another buffer than this AFTER's"
            )
        if dep.op is Op.END and not any(buffer_of(s) is buffer for s in end_stores(dep, c.inside)):
            raise c.fail(uop, f"the END{c.line_note(dep)} writes no element of this AFTER's buffer")
        _check_parallel_dep(c, uop, buffer, dep)


def _check_alu(c: _Checker, uop: UOp) -> None:
    op = uop.op
    c.no_arg(uop)
    for s in uop.src:
        if s.dtype.is_void:
            raise c.fail(uop, f"{op} takes values, and {s.op} is not one")
    types = [s.type for s in uop.src]
    if op is Op.WHERE:
        c.arity(uop, 3)
        want = c.typed(uop, shapes.where, *types)
        if want != uop.type:
            raise c.fail(uop, f"WHERE branches must be {uop.type}")
        return
    if op in (Op.CAST, Op.BITCAST):
        c.arity(uop, 1)
        src = uop.src[0]
        if src.type.shape != uop.type.shape:
            raise c.fail(uop, f"{op} keeps the shape of {src.type}")
        rule = shapes.cast if op is Op.CAST else shapes.bitcast
        c.typed(uop, rule, src.type, uop.dtype)
        return
    c.arity(uop, 2 if op in BINARY or op in COMPARE else 1)
    if op in COMPARE:
        want = c.typed(uop, shapes.compare, op, *types)
        if want != uop.type:
            raise c.fail(uop, f"{op} of {types[0]} gives {want}")
        return
    # The declared type is checked before the kinds an op takes: `ADD f32 %i %i` is reported
    # as a wrong result type, the likelier mistake.
    operand = c.same_types(uop, uop.src)
    if operand != uop.type:
        raise c.fail(uop, f"{op} of {operand} must have type {operand}, not {uop.type}")
    c.typed(uop, shapes.arithmetic, op, types)


def _check_reduce(c: _Checker, uop: UOp) -> None:
    """`REDUCE T x (OP, (axes...))` folds the listed axes of x away (uir.md section 8); with
    `FAST` last in the argument it may fold them in any order (spec/uir-week8.md)."""
    c.arity(uop, 1)
    x = uop.src[0]
    want = c.typed(uop, shapes.reduce, x.type, uop.arg)
    if uop.type != want:
        axes = format_arg(uop.arg[1])
        raise c.fail(uop, f"REDUCE of {x.type} over axes {axes} has type {want}, not {uop.type}")


def _check_expand(c: _Checker, uop: UOp) -> None:
    """`EXPAND T[shape] x` broadcasts x with numpy's rule (uir.md section 8)."""
    c.arity(uop, 1)
    c.no_arg(uop)
    x = uop.src[0]
    if x.dtype is not uop.dtype:
        raise c.fail(uop, f"EXPAND keeps the dtype: {x.type} cannot become {uop.type}")
    c.typed(uop, shapes.expand, x.type, uop.type.shape)


def _check_stage(c: _Checker, uop: UOp) -> None:
    """`STAGE T x` is x, materialized once (uir.md section 8)."""
    c.arity(uop, 1)
    c.no_arg(uop)
    x = uop.src[0]
    if uop.type != x.type:
        raise c.fail(uop, f"STAGE of {x.type} has that type, not {uop.type}")


def _check_parallel_dep(c: _Checker, after: UOp, buffer: UOp, dep: UOp) -> None:
    """What an AFTER may not say of a PARALLEL range (spec/uir-week7.md): that an iteration reads
    a global buffer written by an earlier one, or that a LOCAL carried across the loop, each
    iteration's own scratch, is read after it."""
    if dep.op is Op.RANGE and is_parallel(dep) and buffer.op is Op.BUFFER:
        raise c.fail(
            after,
            f"this AFTER carries a global buffer across the PARALLEL RANGE{c.line_note(dep)}: "
            "its iterations would not be independent; drop PARALLEL from that RANGE",
        )
    if dep.op is Op.END and buffer.op is Op.LOCAL:
        parallel = {r for r in dep.src[1:] if is_parallel(r)}
        for store in end_stores(dep, c.inside) if parallel else ():
            carried = carried_across(store) & parallel if buffer_of(store) is buffer else None
            if carried:
                raise c.fail(
                    after,
                    "this AFTER reads a LOCAL after the loop of the PARALLEL RANGE"
                    f"{c.line_note(next(iter(carried)))}, across which it is carried: there it "
                    "is each iteration's own scratch, so no value survives the loop",
                )


def _check_grad(c: _Checker, uop: UOp) -> None:
    """`GRAD T loss x`: the gradient of the rank-0 float `loss` with respect to the float value
    `x`, of x's type (uir.md section 10.4). The rules on paths are `_check_gradients`'."""
    c.no_arg(uop)
    c.arity(uop, 2)
    loss, x = uop.src
    for role, s in (("loss", loss), ("variable", x)):
        if kind(s) is not Kind.VALUE:
            hint = (
                ": LOAD it, and take the gradient with respect to the LOAD"
                if kind(s) is Kind.MEMORY
                else ""
            )
            raise c.fail(
                uop, f"GRAD's {role} must be a value, and {_what(s)} is {kind(s).value}{hint}"
            )
    if not loss.dtype.is_float or loss.type.shape:
        hint = ": REDUCE it to a scalar first" if loss.dtype.is_float else ""
        raise c.fail(uop, f"GRAD's loss must be a rank-0 float value, not {loss.type}{hint}")
    if not x.dtype.is_float:
        raise c.fail(
            uop,
            f"GRAD is taken with respect to a float value, not {x.type}: "
            "nothing flows through ints or bools",
        )
    if uop.type != x.type:
        raise c.fail(
            uop, f"GRAD with respect to a value of type {x.type} has that type, not {uop.type}"
        )


def _is_reduce_mul(uop: UOp) -> bool:
    return uop.op is Op.REDUCE and uop.arg[0] is Op.MUL


def _check_gradients(c: _Checker, flat: UOp, statements: list[UOp]) -> None:
    """No GRAD inside a loop, and no path from a GRAD's x to its loss through a REDUCE MUL
    (uir.md 10.4). Judged on the inlined graph `flat`, whose UOps are `statements`, since a
    gradient goes through CALLs as if they were inlined."""
    grads = [uop for uop in statements if uop.op is Op.GRAD]
    if grads and any(uop.op is Op.RANGE for uop in statements):
        inside = c.inside if flat is c.program.sink else ranges_inside(flat)
        at = naming(c.line_of)
        for grad in grads:
            if inside[grad]:
                loop = at(min(inside[grad], key=lambda r: len(inside[r])))
                raise c.fail(
                    grad,
                    f"GRAD is inside the loop of {loop}: gradients are taken of values outside "
                    "every loop (a loss computed by a loop reaches GRAD through memory, which no "
                    "gradient flows through)",
                )
    orders: dict[UOp, list[UOp]] = {}
    for grad in grads:
        loss, x = grad.src
        order = orders.get(loss)
        if order is None:
            order = orders[loss] = grad_order(loss)
        if not any(map(_is_reduce_mul, order)):
            continue
        for uop in on_path(loss, x, order):
            if uop is not x and _is_reduce_mul(uop):
                raise c.fail(
                    grad,
                    f"the loss depends on the variable through the REDUCE MUL"
                    f"{c.line_note(uop)}, which GRAD does not differentiate (a product's "
                    "gradient divides by its factors): write the product otherwise, as "
                    "MULs, or EXP2 of a sum of LOG2s for positive factors",
                )


# ---- movement ops (uir.md section 9) ----------------------------------------------------------
# Each takes one shaped value and gives a shaped value of the same dtype (rank 1 to 8), never
# memory (the common checks reject it before these run) and never a scalar. The rules are
# uir.core.shapes'; these checks compare the declared type with what they give.


def _moved(c: _Checker, uop: UOp) -> Type:
    """The source type of a movement op, after the rules every movement op shares."""
    c.arity(uop, 1)
    x = uop.src[0]
    c.typed(uop, shapes.movable, uop.op, x.type)
    if not uop.type.shape:
        raise c.fail(uop, f"{uop.op} gives a shaped value, not the scalar {uop.type}")
    if x.dtype is not uop.dtype:
        raise c.fail(uop, f"{uop.op} keeps the dtype: {x.type} cannot become {uop.type}")
    return x.type


def _result_type(c: _Checker, uop: UOp, x: Type, want: Type) -> None:
    if uop.type != want:
        by = "" if uop.arg is None else f" by {format_arg(uop.arg)}"
        raise c.fail(uop, f"{uop.op} of {x}{by} has type {want}, not {uop.type}")


def _check_reshape(c: _Checker, uop: UOp) -> None:
    """`RESHAPE T[shape] x`: x's elements in row-major order, in another shape."""
    x = _moved(c, uop)
    c.no_arg(uop)
    c.typed(uop, shapes.reshape, x, uop.type.shape)


def _movement_check(rule: Callable[[Type, object], Type]) -> Callable[[_Checker, UOp], None]:
    """The check of a movement op whose argument determines its result type (PERMUTE, PAD,
    FLIP): the declared type must be what the rule gives."""

    def check(c: _Checker, uop: UOp) -> None:
        x = _moved(c, uop)
        _result_type(c, uop, x, c.typed(uop, rule, x, uop.arg))

    return check


def _check_flip(c: _Checker, uop: UOp) -> None:
    """`FLIP T[shape] x (axes)`: x with the listed axes reversed."""
    x = _moved(c, uop)
    if c.typed(uop, shapes.flip, x, uop.arg) != uop.type:
        raise c.fail(uop, f"FLIP of {x} has that type, not {uop.type}")


def _check_shrink_value(c: _Checker, uop: UOp) -> None:
    """`SHRINK T[shape] x ((begin, end), ...)`: the window of x, per axis."""
    src = uop.src[0]
    if kind(src) is not Kind.VALUE:
        raise c.fail(uop, f"SHRINK takes a value or memory, and {src.op} is {kind(src).value}")
    x = _moved(c, uop)
    _result_type(c, uop, x, c.typed(uop, shapes.shrink, x, uop.arg))


def _check_stack_of_values(c: _Checker, uop: UOp) -> None:
    """`STACK T[k,s...]` of k values of type T[s...]: a new leading axis."""
    want = c.typed(uop, shapes.stack, [s.type for s in uop.src])
    if uop.type != want:
        first = uop.src[0].type
        raise c.fail(
            uop, f"STACK of {len(uop.src)} values of {first} has type {want}, not {uop.type}"
        )


def _check_range(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 1)
    if range_arg(uop.arg) is None:
        raise c.fail(uop, "RANGE takes an id (an int >= 0) or (id, PARALLEL), or (id, FAST)")
    if uop.type != I32:
        raise c.fail(uop, f"RANGE counts in i32, not {uop.type}")
    end = uop.src[0]
    if end.type != I32:
        raise c.fail(uop, f"a RANGE's end must be an i32 value, not {end.type}")


def _check_end(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    if uop.type != VOID:
        raise c.fail(uop, f"END has type void, not {uop.type}")
    if len(uop.src) < 2:
        raise c.fail(uop, "END takes an effect and at least one RANGE to close")
    effect = uop.src[0]
    if effect.op not in (Op.STORE, Op.END):
        raise c.fail(uop, f"END closes loops around an effect (a STORE or END), not {effect.op}")
    listed: set[UOp] = set()
    for rng in uop.src[1:]:
        if rng.op is not Op.RANGE:
            raise c.fail(uop, f"END lists the RANGEs it closes, not {rng.op}")
        if rng in listed:
            raise c.fail(uop, f"this END lists the RANGE{c.line_note(rng)} twice")
        listed.add(rng)


# Why each kind of source other than a value or a global buffer cannot be printed.
_NOT_OUTPUT = {
    Kind.PLACE: "an INDEX of memory is a place, not a value: LOAD it to print the element",
    Kind.EFFECT: "{op} is an effect, not an output: SINK the AFTER that follows it",
}


def _a(op: Op) -> str:
    return f"an {op}" if op is Op.END else f"a {op}"


def _check_sink(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    if not (uop.dtype.is_void and not uop.type.shape):
        raise c.fail(uop, "SINK has type void")
    for s in uop.src:
        if kind(s) in _NOT_OUTPUT:
            raise c.fail(uop, _NOT_OUTPUT[kind(s)].format(op=_a(s.op)))
        if kind(s) is Kind.MEMORY:
            if buffer_of(s).op is not Op.BUFFER:
                raise c.fail(uop, "a LOCAL is scratch, never an output")
        elif s.dtype.is_void:
            raise c.fail(uop, f"a SINK source must be a value, not {s.op}")


CHECKS: dict[Op, Callable[[_Checker, UOp], None]] = {
    Op.CONST: _check_const,
    Op.PARAM: _check_param,
    Op.CALL: _check_call,
    Op.STACK: _check_stack,
    Op.INDEX: _check_index,
    Op.SINK: _check_sink,
    Op.BUFFER: _check_buffer,
    Op.LOCAL: _check_local,
    Op.SHRINK: _check_shrink,
    Op.LOAD: _check_load,
    Op.STORE: _check_store,
    Op.AFTER: _check_after,
    Op.RANGE: _check_range,
    Op.END: _check_end,
    Op.REDUCE: _check_reduce,
    Op.EXPAND: _check_expand,
    Op.STAGE: _check_stage,
    Op.RESHAPE: _check_reshape,
    Op.PERMUTE: _movement_check(shapes.permute),
    Op.PAD: _movement_check(shapes.pad),
    Op.FLIP: _check_flip,
    Op.GRAD: _check_grad,
    **{op: _check_alu for op in ALU},
}


def _check_slots(c: _Checker, statements: list[UOp]) -> None:
    """Distinct global buffers have distinct slots (uir.md section 6.1)."""
    owner: dict[int, UOp] = {}
    for uop in statements:
        if uop.op is Op.BUFFER:
            first = owner.setdefault(uop.arg, uop)
            if first is not uop:
                raise c.fail(uop, f"slot {uop.arg} is already the BUFFER{c.line_note(first)}")


def _check_memory_order(c: _Checker, sink: UOp, statements: list[UOp]) -> None:
    """The program is fully ordered, and the SINK prints one final version per buffer (6.3).

    `sink` is the inlined program and `statements` its UOps, sources first."""
    inside = c.inside if sink is c.program.sink else None
    _, order = planned(sink, c.line_of, statements, inside)
    printed: dict[UOp, UOp] = {}  # buffer -> the state the SINK prints
    for s in sink.src:
        if kind(s) is not Kind.MEMORY:
            continue
        buffer, state = buffer_of(s), order.state_of(s)
        slot = buffer.arg
        first = printed.setdefault(buffer, state)
        if first is not state:
            raise c.fail(sink, f"the SINK names two versions of buffer {slot}")
        replacer = order.replaced_by.get(state)
        if replacer is not None:
            raise c.fail(
                sink,
                f"the SINK names a version of buffer {slot} that the STORE"
                f"{c.line_note(replacer)} replaces: it must name the last version",
            )


def _check_shapes_outside_loops(c: _Checker, flat: UOp) -> None:
    """Inside a loop, values are scalars or week 1's small vectors (uir.md sections 7 and 8).

    Checked on the inlined graph `flat`, so that a CALL whose body does shaped arithmetic counts
    as that arithmetic. A whole-buffer STORE is never inside a range either: a loop writes one
    element at a time.
    """
    at = naming(c.line_of)
    inside = c.inside if flat is c.program.sink else ranges_inside(flat)
    for uop, ranges in inside.items():
        if not ranges or kind(uop) not in (Kind.VALUE, Kind.EFFECT):
            continue
        shaped = uop.type.shape and uop.op not in SMALL_VECTORS
        whole_store = uop.op is Op.STORE and kind(uop.src[0]) is Kind.MEMORY
        if shaped or whole_store:
            loop = at(min(ranges, key=lambda r: len(inside[r])))
            what = "a whole-buffer STORE" if whole_store else f"{uop.op} {uop.type}"
            raise VerifyError(
                f"{what} is inside the loop of {loop}: inside a loop, values are scalars "
                "(or small vectors: STACK, shaped CONST), read and written one element at a "
                "time through INDEX",
                c.line_of(uop),
            )


def _check_index_bounds(c: _Checker, order: list[UOp]) -> None:
    """Prove every INDEX in range, as if every CALL were inlined (uir.md sections 5 and 6.4).

    A gated INDEX only needs to be in range where its gate holds. `order` is the inlined graph's
    UOps, sources first.
    """
    for uop in order:
        if uop.op is not Op.INDEX:
            continue
        size = uop.src[0].type.shape[0]
        if len(uop.src) == 3:
            found = gated_bounds(uop.src[1], uop.src[2])
            if found is None:
                continue  # the gate never holds: the access never happens
            where = " where its gate holds"
        else:
            found, where = bounds(uop.src[1]), ""
        lo, hi = found
        if lo < 0 or hi >= size:
            raise c.fail(
                uop,
                f"cannot prove the index in range{where}: it lies in [{lo}, {hi}], "
                f"the size is {size}",
            )


def _statements(sink: UOp, everything: list[UOp]) -> list[UOp]:
    """The UOps of `everything` (`sink.toposort()`) reachable from `sink` without entering a CALL
    body, in the same order: `sink.toposort(bodies=False)` without a second walk of the graph."""
    reached = {sink}
    for uop in reversed(everything):  # every user comes before its sources
        if uop in reached:
            reached.update(uop.src[1:] if uop.op is Op.CALL else uop.src)
    return [uop for uop in everything if uop in reached]


def verify(program: Program) -> None:
    """Check everything reachable from the SINK; raise VerifyError at the first violation.

    The graph is sorted once (and once more inlined, where it has CALLs): every whole-program
    rule walks that one order.
    """
    c = _Checker(program)
    sink = program.sink
    everything = sink.toposort()
    types_ok: set[Type] = set()  # a program writes few distinct types: each is checked once
    for uop in everything:
        if uop.dtype.is_void and uop.op not in (Op.SINK, Op.STORE, Op.END):
            raise c.fail(uop, f"{uop.op} cannot have type void")
        if uop.type not in types_ok:
            c.typed(uop, shapes.shaped, uop.dtype, uop.type.shape)
            types_ok.add(uop.type)
        check = CHECKS.get(uop.op)
        if check is None:
            raise c.fail(uop, f"{uop.op} is not supported yet")
        if uop.op not in MEMORY_AWARE:
            for s in uop.src:
                what = kind(s)
                if what is not Kind.VALUE:
                    raise c.fail(uop, f"{uop.op} takes values, and {s.op} is {what.value}")
        check(c, uop)
    has_calls = any(uop.op is Op.CALL for uop in everything)
    # Without a CALL, every UOp is a statement and the inlined graph is the graph itself.
    statements = _statements(sink, everything) if has_calls else everything
    for uop in statements:
        if uop.op is Op.PARAM:
            raise c.fail(uop, "PARAM outside any CALL body")
    # The program means its inlined program (uir-week1.md section 8.3): what only a CALL argument
    # that no body uses reaches (an effect, a buffer, an INDEX) is dead there, so the
    # whole-program rules judge the inlined graph, which has no CALL and so no body to skip.
    flat = inline_calls(sink, c.origins) if has_calls else sink
    if flat is not sink:
        statements = flat.toposort()
    _check_slots(c, statements)
    _check_memory_order(c, flat, statements)
    if any(uop.op is Op.RANGE for uop in statements):
        _check_shapes_outside_loops(c, flat)
    _check_gradients(c, flat, statements)
    _check_index_bounds(c, statements)
