"""The verifier: every rule uir.md checks on a parsed graph, one function per op family.

Failures raise VerifyError naming the line of the offending statement. Dead statements (not
reachable from the SINK) are never verified.
"""

from __future__ import annotations

from collections.abc import Callable

from .bounds import bounds
from .calls import Origins, inline_calls
from .dtypes import BOOL, I32, Type
from .errors import VerifyError
from .ops import ALU, BINARY, BITWISE, COMPARE, FLOAT_BINARY, FLOAT_UNARY, INT_BINARY, Op
from .parse import Program
from .uop import UOp

# Ops a CALL body may hold: values only, no effects, memory or loops (uir.md section 5).
BODY_OPS = ALU | {Op.CONST, Op.PARAM, Op.CALL, Op.STACK, Op.INDEX}


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
    c.require(uop, len(uop.src) == 2, "an INDEX of a value takes no gate")
    c.require(uop, len(value.type.shape) == 1, f"INDEX needs a rank-1 value, got {value.type}")
    c.require(uop, uop.type == value.type.scalar, f"INDEX of {value.type} gives {value.dtype}")
    c.require(uop, index.type == I32, f"the index must be i32, got {index.type}")


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


def _check_sink(c: _Checker, uop: UOp) -> None:
    c.no_arg(uop)
    c.require(uop, uop.dtype.is_void and not uop.type.shape, "SINK has type void")
    for s in uop.src:
        c.require(uop, not s.dtype.is_void, f"a SINK source must be a value, not {s.op}")


CHECKS: dict[Op, Callable[[_Checker, UOp], None]] = {
    Op.CONST: _check_const,
    Op.PARAM: _check_param,
    Op.CALL: _check_call,
    Op.STACK: _check_stack,
    Op.INDEX: _check_index,
    Op.SINK: _check_sink,
    **{op: _check_alu for op in ALU},
}


def _check_index_bounds(program: Program, sink: UOp) -> None:
    """Prove every INDEX in range, as if every CALL were inlined (uir.md sections 5 and 6.4)."""
    origins: Origins = {}
    flat = inline_calls(sink, origins)
    for uop in flat.toposort():
        if uop.op is not Op.INDEX:
            continue
        size = uop.src[0].type.shape[0]
        lo, hi = bounds(uop.src[1])
        if lo < 0 or hi >= size:
            line = program.line_of(origins.get(uop, uop))
            raise VerifyError(
                f"cannot prove the index in range: it lies in [{lo}, {hi}], the size is {size}",
                line,
            )


def verify(program: Program) -> None:
    """Check everything reachable from the SINK; raise VerifyError at the first violation."""
    c = _Checker(program)
    sink = program.sink
    for uop in sink.toposort():
        if uop.dtype.is_void and uop.op is not Op.SINK:
            raise c.fail(uop, f"{uop.op} cannot have type void")
        check = CHECKS.get(uop.op)
        if check is None:
            raise c.fail(uop, f"{uop.op} is not supported yet")
        check(c, uop)
    for uop in sink.toposort(bodies=False):
        if uop.op is Op.PARAM:
            raise c.fail(uop, "PARAM outside any CALL body")
    _check_index_bounds(program, sink)
