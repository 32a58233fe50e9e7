"""The verifier: every rule uir.md checks on a parsed graph, one function per op family.

Per-op checks run first, on every statement; then the whole-program rules: distinct buffer slots,
the full memory order and the SINK's outputs (uir.md 6.3), and bounds proofs for every INDEX on
the inlined graph (6.4). Failures raise VerifyError naming the line of the offending statement.
Dead statements (not reachable from the SINK) are never verified.
"""

from __future__ import annotations

from collections.abc import Callable

from .bounds import bounds, gated_bounds
from .calls import Origins, inline_calls
from .dtypes import BOOL, I32, VOID, Type
from .errors import VerifyError
from .loops import end_stores
from .memory import VERSIONS, Kind, buffer_of, kind
from .ops import ALU, BINARY, BITWISE, COMPARE, FLOAT_BINARY, FLOAT_UNARY, INT_BINARY, Op
from .parse import Program
from .schedule import planned
from .uop import UOp

# Ops a CALL body may hold: values only, no effects, memory or loops (uir.md section 5).
BODY_OPS = ALU | {Op.CONST, Op.PARAM, Op.CALL, Op.STACK, Op.INDEX}
# Ops whose checks accept memory references, places or effects among their sources; every other
# op takes values only (uir.md section 6).
MEMORY_AWARE = frozenset({Op.SHRINK, Op.INDEX, Op.LOAD, Op.STORE, Op.AFTER, Op.END, Op.SINK})


class _Checker:
    def __init__(self, program: Program) -> None:
        self.program = program

    def fail(self, uop: UOp, message: str) -> VerifyError:
        return VerifyError(message, self.program.line_of(uop))

    def require(self, uop: UOp, ok: bool, message: str) -> None:
        if not ok:
            raise self.fail(uop, message)

    def arity(self, uop: UOp, count: int) -> None:
        got = len(uop.src)
        self.require(uop, got == count, f"{uop.op} takes {count} operand(s), got {got}")

    def no_arg(self, uop: UOp) -> None:
        self.require(uop, uop.arg is None, f"{uop.op} takes no argument")

    def slot(self, uop: UOp, what: str) -> None:
        ok = isinstance(uop.arg, int) and not isinstance(uop.arg, bool) and uop.arg >= 0
        self.require(uop, ok, f"{uop.op} takes {what} (an int >= 0)")

    def line_note(self, uop: UOp) -> str:
        line = self.program.line_of(uop)
        return f" on line {line}" if line is not None else ""

    def same_types(self, uop: UOp, srcs: tuple[UOp, ...]) -> Type:
        first = srcs[0].type
        for s in srcs[1:]:
            self.require(uop, s.type == first, f"{uop.op} operands differ: {first} and {s.type}")
        return first


def _check_const(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 0)
    dtype = uop.dtype
    values = uop.arg
    if uop.type.shape:
        ok = isinstance(values, tuple) and len(values) == uop.type.size
        c.require(uop, ok, f"CONST {uop.type} needs a flat tuple of {uop.type.size} elements")
    else:
        c.require(
            uop, not isinstance(values, tuple), "a scalar CONST takes one literal, not a tuple"
        )
        values = (values,)
    for v in values:
        if dtype.is_bool:
            ok = isinstance(v, bool)
        elif dtype.is_int:
            ok = isinstance(v, int) and not isinstance(v, bool)
            if ok:
                c.require(uop, dtype.min <= v <= dtype.max, f"{v} is out of range for {dtype}")
        else:
            ok = isinstance(v, float)  # the parser has rounded every number literal to the type
        c.require(uop, ok, f"'{v}' is not a literal of type {dtype}")


def _check_param(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 0)
    slot = uop.arg
    ok = isinstance(slot, int) and not isinstance(slot, bool) and slot >= 0
    c.require(uop, ok, "PARAM takes a slot number >= 0")


def _check_call(c: _Checker, uop: UOp) -> None:
    c.require(uop, len(uop.src) >= 1, "CALL needs a body")
    c.no_arg(uop)
    body = uop.src[0]
    c.require(uop, body.type == uop.type, f"CALL has type {uop.type} but its body is {body.type}")
    for inner in body.toposort(bodies=False):
        if inner.op not in BODY_OPS:
            raise c.fail(inner, f"a CALL body may not contain {inner.op}")
        if inner.op is Op.PARAM:
            slot = inner.arg
            if slot >= len(uop.src) - 1:
                raise c.fail(uop, f"CALL has no argument for PARAM slot {slot}")
            arg = uop.src[1 + slot]
            if arg.type != inner.type:
                raise c.fail(uop, f"argument {slot} is {arg.type} but its PARAM is {inner.type}")


def _check_stack(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    count = len(uop.src)
    c.require(uop, len(uop.type.shape) == 1, "STACK of scalars has a rank-1 type")
    c.require(uop, count == uop.type.shape[0], f"{uop.type} needs {uop.type.shape[0]} sources")
    for s in uop.src:
        c.require(
            uop, s.type == uop.type.scalar, f"STACK element is {s.type}, not {uop.type.scalar}"
        )


def _check_index(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    c.require(uop, len(uop.src) in (2, 3), "INDEX takes a source, an index and an optional gate")
    value, index = uop.src[0], uop.src[1]
    c.require(uop, kind(index) is Kind.VALUE, f"the index must be a value, not {index.op}")
    c.require(uop, index.type == I32, f"the index must be i32, got {index.type}")
    if kind(value) is Kind.MEMORY:
        _check_memory_index(c, uop)
        return
    c.require(uop, kind(value) is Kind.VALUE, f"INDEX of {kind(value).value} ({value.op})")
    c.require(uop, len(uop.src) == 2, "an INDEX of a value takes no gate")
    c.require(uop, len(value.type.shape) == 1, f"INDEX needs a rank-1 value, got {value.type}")
    c.require(uop, uop.type == value.type.scalar, f"INDEX of {value.type} gives {value.dtype}")


def _check_memory_index(c: _Checker, uop: UOp) -> None:
    mem = uop.src[0]
    c.require(
        uop,
        uop.type == mem.type.scalar,
        f"INDEX of {mem.type} names an element of type {mem.dtype}, not {uop.type}",
    )
    if len(uop.src) == 3:
        gate = uop.src[2]
        c.require(uop, kind(gate) is Kind.VALUE, f"the gate must be a value, not {gate.op}")
        c.require(uop, gate.type == BOOL, f"the gate must be bool, got {gate.type}")


def _check_buffer(c: _Checker, uop: UOp) -> None:
    c.slot(uop, "a slot number")
    c.require(
        uop,
        len(uop.type.shape) == 1,
        f"BUFFER needs a flat type T[n] (buffers are rank 1), got {uop.type}",
    )
    c.require(uop, len(uop.src) <= 1, "BUFFER takes at most one operand, its initial contents")
    if uop.src:
        init = uop.src[0]
        ok = init.op is Op.CONST and init.type == uop.type
        c.require(
            uop,
            ok,
            f"BUFFER's initial contents must be a CONST {uop.type}, got {init.op} {init.type}",
        )


def _check_local(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 0)
    c.slot(uop, "an id")
    c.require(
        uop,
        len(uop.type.shape) == 1,
        f"LOCAL needs a flat type T[n] (buffers are rank 1), got {uop.type}",
    )


def _window(arg: object) -> tuple[int, int] | None:
    """`((begin, end))` as (begin, end), or None when the argument has another form."""
    if not (isinstance(arg, tuple) and len(arg) == 1 and isinstance(arg[0], tuple)):
        return None
    pair = arg[0]
    if len(pair) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair):
        return None
    return pair[0], pair[1]


def _check_shrink(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 1)
    mem = uop.src[0]
    c.require(uop, kind(mem) is Kind.MEMORY, "SHRINK of a value arrives in week 5; SHRINK a buffer")
    window = _window(uop.arg)
    c.require(uop, window is not None, "SHRINK takes one window ((begin, end)) of ints")
    begin, end = window  # type: ignore[misc]
    size = mem.type.shape[0]
    ok = 0 <= begin < end <= size
    c.require(uop, ok, f"the window [{begin}, {end}) does not lie inside {mem.type}")
    want = mem.type.dtype, (end - begin,)
    c.require(
        uop,
        (uop.dtype, uop.type.shape) == want,
        f"SHRINK of {mem.type} to [{begin}, {end}) has type {Type(*want)}, not {uop.type}",
    )


def _what(uop: UOp) -> str:
    """`uop` named for a message: its op and, where the op alone is ambiguous, its kind."""
    return f"{uop.op} ({kind(uop).value})" if uop.op in (Op.INDEX, Op.SHRINK) else str(uop.op)


def _check_load(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    c.arity(uop, 1)
    place = uop.src[0]
    if kind(place) is Kind.MEMORY:
        raise c.fail(uop, "whole-buffer LOAD arrives in week 4; LOAD an INDEX of the buffer")
    c.require(uop, kind(place) is Kind.PLACE, f"LOAD needs an INDEX of memory, not {_what(place)}")
    c.require(
        uop,
        uop.type == place.type,
        f"LOAD of an element of type {place.type} has that type, not {uop.type}",
    )


def _check_store(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    c.arity(uop, 2)
    c.require(uop, uop.type == VOID, f"STORE has type void, not {uop.type}")
    place, value = uop.src
    if kind(place) is Kind.MEMORY:
        raise c.fail(uop, "whole-buffer STORE arrives in week 4; STORE to an INDEX of the buffer")
    c.require(uop, kind(place) is Kind.PLACE, f"STORE needs an INDEX of memory, not {_what(place)}")
    c.require(uop, kind(value) is Kind.VALUE, f"STORE writes a value, and {value.op} is not one")
    c.require(
        uop, value.type == place.type, f"STORE of {value.type} to an element of type {place.type}"
    )


def _check_after(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    c.require(uop, len(uop.src) >= 2, "AFTER takes a buffer version and at least one effect")
    mem, deps = uop.src[0], uop.src[1:]
    if mem.op is Op.SHRINK:
        raise c.fail(uop, "AFTER takes the buffer version, not a SHRINK window of it")
    c.require(uop, mem.op in VERSIONS, f"AFTER takes a BUFFER, LOCAL or AFTER, not {mem.op}")
    c.require(
        uop,
        uop.type == mem.type,
        f"AFTER of a version of type {mem.type} has that type, not {uop.type}",
    )
    buffer = buffer_of(mem)
    for dep in deps:
        ok = dep.op in (Op.STORE, Op.END, Op.RANGE)
        c.require(uop, ok, f"AFTER waits for STOREs, ENDs or RANGEs, not {dep.op}")
        if dep.op is Op.STORE:
            ok = buffer_of(dep) is buffer
            c.require(
                uop, ok, f"the STORE{c.line_note(dep)} writes another buffer than this AFTER's"
            )
        elif dep.op is Op.END:
            ok = any(buffer_of(s) is buffer for s in end_stores(dep))
            c.require(
                uop, ok, f"the END{c.line_note(dep)} writes no element of this AFTER's buffer"
            )


def _check_alu(c: _Checker, uop: UOp) -> None:
    op, dtype = uop.op, uop.dtype
    c.no_arg(uop)
    for s in uop.src:
        c.require(uop, not s.dtype.is_void, f"{op} takes values, and {s.op} is not one")
    if op is Op.WHERE:
        c.arity(uop, 3)
        cond, a, b = uop.src
        c.require(uop, cond.dtype.is_bool, f"WHERE's condition must be bool, got {cond.type}")
        c.require(uop, cond.type.shape == uop.type.shape, "WHERE's condition has another shape")
        c.require(uop, a.type == b.type == uop.type, f"WHERE branches must be {uop.type}")
        return
    if op in (Op.CAST, Op.BITCAST):
        c.arity(uop, 1)
        src = uop.src[0]
        c.require(uop, src.type.shape == uop.type.shape, f"{op} keeps the shape of {src.type}")
        if op is Op.BITCAST:
            ok = not (src.dtype.is_bool or dtype.is_bool) and src.dtype.bits == dtype.bits
            c.require(
                uop, ok, f"BITCAST needs two non-bool dtypes of one width: {src.dtype}, {dtype}"
            )
        return
    if op in COMPARE:
        c.arity(uop, 2)
        operand = c.same_types(uop, uop.src)
        equality = op in (Op.CMPEQ, Op.CMPNE)
        ok = operand.dtype.is_number or (equality and operand.dtype.is_bool)
        kinds = "numbers or bools" if equality else "numbers"
        c.require(uop, ok, f"{op} takes {kinds}, got {operand}")
        ok = dtype.is_bool and uop.type.shape == operand.shape
        c.require(uop, ok, f"{op} of {operand} gives {operand.with_dtype(BOOL.dtype)}")
        return
    c.arity(uop, 2 if op in BINARY else 1)
    operand = c.same_types(uop, uop.src)
    c.require(
        uop, operand == uop.type, f"{op} of {operand} must have type {operand}, not {uop.type}"
    )
    if op in FLOAT_UNARY or op in FLOAT_BINARY:
        c.require(uop, dtype.is_float, f"{op} takes floats, got {dtype}")
    elif op in INT_BINARY:
        c.require(uop, dtype.is_int, f"{op} takes ints, got {dtype}")
    elif op in BITWISE:
        c.require(uop, dtype.is_int or dtype.is_bool, f"{op} takes ints or bools, got {dtype}")
    else:
        c.require(uop, dtype.is_number, f"{op} takes numbers, got {dtype}")


def _check_range(c: _Checker, uop: UOp) -> None:
    c.arity(uop, 1)
    c.slot(uop, "an id")
    c.require(uop, uop.type == I32, f"RANGE counts in i32, not {uop.type}")
    end = uop.src[0]
    c.require(uop, end.type == I32, f"a RANGE's end must be an i32 value, not {end.type}")


def _check_end(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    c.require(uop, uop.type == VOID, f"END has type void, not {uop.type}")
    c.require(uop, len(uop.src) >= 2, "END takes an effect and at least one RANGE to close")
    effect = uop.src[0]
    ok = effect.op in (Op.STORE, Op.END)
    c.require(uop, ok, f"END closes loops around an effect (a STORE or END), not {effect.op}")
    listed: set[UOp] = set()
    for rng in uop.src[1:]:
        c.require(uop, rng.op is Op.RANGE, f"END lists the RANGEs it closes, not {rng.op}")
        c.require(uop, rng not in listed, f"this END lists the RANGE{c.line_note(rng)} twice")
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
    c.require(uop, uop.dtype.is_void and not uop.type.shape, "SINK has type void")
    for s in uop.src:
        c.require(uop, kind(s) not in _NOT_OUTPUT, _NOT_OUTPUT.get(kind(s), "").format(op=_a(s.op)))
        if kind(s) is Kind.MEMORY:
            c.require(uop, buffer_of(s).op is Op.BUFFER, "a LOCAL is scratch, never an output")
        else:
            c.require(uop, not s.dtype.is_void, f"a SINK source must be a value, not {s.op}")


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
    **{op: _check_alu for op in ALU},
}


def _check_slots(c: _Checker, sink: UOp) -> None:
    """Distinct global buffers have distinct slots (uir.md section 6.1)."""
    owner: dict[int, UOp] = {}
    for uop in sink.toposort(bodies=False):
        if uop.op is Op.BUFFER:
            first = owner.setdefault(uop.arg, uop)
            c.require(
                uop, first is uop, f"slot {uop.arg} is already the BUFFER{c.line_note(first)}"
            )


def _check_memory_order(c: _Checker, sink: UOp) -> None:
    """The program is fully ordered, and the SINK prints one final version per buffer (6.3)."""
    _, order = planned(sink, c.program.line_of)
    printed: dict[UOp, UOp] = {}  # buffer -> the state the SINK prints
    for s in sink.src:
        if kind(s) is not Kind.MEMORY:
            continue
        buffer, state = buffer_of(s), order.state_of(s)
        slot = buffer.arg
        first = printed.setdefault(buffer, state)
        c.require(sink, first is state, f"the SINK names two versions of buffer {slot}")
        replacer = order.replaced_by.get(state)
        if replacer is not None:
            raise c.fail(
                sink,
                f"the SINK names a version of buffer {slot} that the STORE"
                f"{c.line_note(replacer)} replaces: it must name the last version",
            )


def _check_index_bounds(program: Program, sink: UOp) -> None:
    """Prove every INDEX in range, as if every CALL were inlined (uir.md sections 5 and 6.4).

    A gated INDEX only needs to be in range where its gate holds.
    """
    origins: Origins = {}
    flat = inline_calls(sink, origins)
    for uop in flat.toposort():
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
            line = program.line_of(origins.get(uop, uop))
            raise VerifyError(
                f"cannot prove the index in range{where}: it lies in [{lo}, {hi}], "
                f"the size is {size}",
                line,
            )


def verify(program: Program) -> None:
    """Check everything reachable from the SINK; raise VerifyError at the first violation."""
    c = _Checker(program)
    sink = program.sink
    for uop in sink.toposort():
        if uop.dtype.is_void and uop.op not in (Op.SINK, Op.STORE, Op.END):
            raise c.fail(uop, f"{uop.op} cannot have type void")
        check = CHECKS.get(uop.op)
        if check is None:
            raise c.fail(uop, f"{uop.op} is not supported yet")
        if uop.op not in MEMORY_AWARE:
            for s in uop.src:
                what = kind(s)
                c.require(
                    uop, what is Kind.VALUE, f"{uop.op} takes values, and {s.op} is {what.value}"
                )
        check(c, uop)
    for uop in sink.toposort(bodies=False):
        if uop.op is Op.PARAM:
            raise c.fail(uop, "PARAM outside any CALL body")
    _check_slots(c, sink)
    _check_memory_order(c, sink)
    _check_index_bounds(program, sink)
