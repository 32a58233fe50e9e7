"""UOp: the node of every UIR program, hash-consed so that equal means identical."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from . import shapes
from .dtypes import I32, VOID, DType, Type
from .elements import Elements, arg_key
from .ops import FAST, PARALLEL, Op

__all__ = ["UOp", "arg_key"]

_set = object.__setattr__  # UOp's own __setattr__ refuses every change
_CONST = Op.CONST  # a global: an Enum member's attribute lookup costs several times as much


class _Entry(weakref.ref):
    """The hash-consing table's weak reference to a UOp, which knows its key: when the UOp is
    freed, its entry leaves the table (WeakValueDictionary does the same through more Python)."""

    __slots__ = ("key",)

    def __new__(cls, node: UOp, key: tuple) -> _Entry:
        entry = super().__new__(cls, node, _forget)
        entry.key = key
        return entry

    def __init__(self, node: UOp, key: tuple) -> None:
        super().__init__(node, _forget)


_TABLE: dict[tuple, _Entry] = {}


def _forget(entry: _Entry) -> None:
    # A new UOp may already hold the key (the old one died, then an equal one was built).
    if _TABLE.get(entry.key) is entry:
        del _TABLE[entry.key]


class UOp:
    """An immutable node `(op, type, src, arg)`.

    Construction is hash-consed: building a UOp equal to a live one returns that object, so `==`
    is `is` and a graph never holds two copies of one expression. The table holds its UOps weakly,
    so a graph nobody references is freed. A shaped CONST's tuple of elements becomes `Elements`,
    its one compact form.
    """

    __slots__ = ("__weakref__", "_bounds", "arg", "op", "src", "type")

    op: Op
    type: Type
    src: tuple[UOp, ...]
    arg: Any

    def __new__(cls, op: Op, type: Type, src: tuple[UOp, ...] = (), arg: Any = None) -> UOp:
        if src.__class__ is not tuple:
            src = tuple(src)
        if op is _CONST and type.shape and isinstance(arg, tuple):
            arg = Elements(arg)
        key = (op, type, src, arg_key(arg))
        entry = _TABLE.get(key)
        if entry is not None:
            found = entry()
            if found is not None:
                return found
        node = super().__new__(cls)
        _set(node, "op", op)
        _set(node, "type", type)
        _set(node, "src", src)
        _set(node, "arg", arg)
        _set(node, "_bounds", None)
        _TABLE[key] = _Entry(node, key)
        return node

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("UOp is immutable")

    def __reduce__(self) -> tuple:
        return (UOp, (self.op, self.type, self.src, self.arg))

    def __repr__(self) -> str:
        # Never recursive: a deep graph must not blow the stack when shown.
        srcs = ", ".join(f"{s.op.name}#{id(s) & 0xFFFF:04x}" for s in self.src)
        arg = "" if self.arg is None else f", arg={self.arg!r}"
        return f"UOp({self.op.name}, {self.type}, [{srcs}]{arg})"

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    def replace(self, **fields: Any) -> UOp:
        """This UOp with some of its fields changed (a new or existing node; never a mutation)."""
        values = {"op": self.op, "type": self.type, "src": self.src, "arg": self.arg}
        values.update(fields)
        return UOp(values["op"], values["type"], values["src"], values["arg"])

    def const_like(self, value: int | float | bool) -> UOp:
        """A CONST of this UOp's type holding `value` in every element.

        Ints wrap to the dtype and bools become True/False; a float must already be a value of
        the dtype (0.0, -0.0, 1.0, ...): no rounding happens here.
        """
        dtype = self.dtype
        if dtype.is_bool:
            value = bool(value)
        elif dtype.is_int:
            value = dtype.wrap(int(value))
        else:
            value = float(value)
        arg = Elements.fill(value, self.type.size) if self.type.shape else value
        return UOp(Op.CONST, self.type, (), arg)

    # --- building: each method types its result by uir.core.shapes, the verifier's own rules,
    # and raises ShapeError (a ValueError) where the verifier would reject what it builds.

    @staticmethod
    def const(type: Type, value: Any) -> UOp:
        """A CONST of `type`: a scalar literal, copied to every element of a shaped type, or a
        flat tuple of all the elements (row-major). The value must already be one of the dtype
        (no rounding happens here)."""
        if type.shape and not isinstance(value, tuple):
            value = Elements.fill(value, type.size)
        return UOp(Op.CONST, type, (), value)

    def alu(self, op: Op, *others: UOp) -> UOp:
        """`op` applied to this UOp and `others`, typed as uir.md section 4 types it.

        Comparisons give bools of the operands' shape; WHERE (this UOp the condition) takes its
        branches' type; every other op the type of its operands. CAST and BITCAST: `cast`.
        """
        srcs = (self, *others)
        return UOp(op, shapes.alu(op, [s.type for s in srcs]), srcs)

    def cast(self, dtype: DType) -> UOp:
        return UOp(Op.CAST, shapes.cast(self.type, dtype), (self,))

    def bitcast(self, dtype: DType) -> UOp:
        return UOp(Op.BITCAST, shapes.bitcast(self.type, dtype), (self,))

    def where(self, a: UOp, b: UOp) -> UOp:
        """`self ? a : b`, this UOp the bool condition."""
        return self.alu(Op.WHERE, a, b)

    def reshape(self, shape: Sequence[int]) -> UOp:
        return UOp(Op.RESHAPE, shapes.reshape(self.type, shape), (self,))

    def expand(self, shape: Sequence[int]) -> UOp:
        return UOp(Op.EXPAND, shapes.expand(self.type, shape), (self,))

    def permute(self, order: Sequence[int]) -> UOp:
        order = tuple(order)
        return UOp(Op.PERMUTE, shapes.permute(self.type, order), (self,), order)

    def pad(self, pairs: Sequence[tuple[int, int]]) -> UOp:
        pairs = tuple(tuple(p) for p in pairs)
        return UOp(Op.PAD, shapes.pad(self.type, pairs), (self,), pairs)

    def shrink(self, pairs: Sequence[tuple[int, int]]) -> UOp:
        """The window of each axis: of a shaped value, or (one pair) of a buffer version."""
        pairs = tuple(tuple(p) for p in pairs)
        return UOp(Op.SHRINK, shapes.shrink(self.type, pairs), (self,), pairs)

    def flip(self, axes: Sequence[int]) -> UOp:
        axes = tuple(axes)
        return UOp(Op.FLIP, shapes.flip(self.type, axes), (self,), axes)

    def reduce(self, op: Op, axes: Sequence[int], fast: bool = False) -> UOp:
        """`op` folded over `axes`; `fast` lets it fold in any order (spec/uir-week8.md)."""
        arg = (op, tuple(axes), FAST) if fast else (op, tuple(axes))
        return UOp(Op.REDUCE, shapes.reduce(self.type, arg), (self,), arg)

    def stage(self) -> UOp:
        return UOp(Op.STAGE, self.type, (self,))

    @staticmethod
    def stack(*srcs: UOp) -> UOp:
        return UOp(Op.STACK, shapes.stack([s.type for s in srcs]), srcs)

    def index(self, *indices: UOp, gate: UOp | None = None) -> UOp:
        """An element: of a rank-1 value, or (with an optional gate) a place in memory."""
        src = (self, *indices) if gate is None else (self, *indices, gate)
        return UOp(Op.INDEX, self.type.scalar, src)

    def load(self) -> UOp:
        """A LOAD of this place (one element) or memory reference (the whole window)."""
        return UOp(Op.LOAD, self.type, (self,))

    def store(self, value: UOp) -> UOp:
        """A STORE of `value` to this place or memory reference."""
        return UOp(Op.STORE, VOID, (self, value))

    def after(self, *deps: UOp) -> UOp:
        """The version of this memory once `deps` (STOREs, ENDs, RANGEs) have happened."""
        return UOp(Op.AFTER, self.type, (self, *deps))

    def end(self, *ranges: UOp) -> UOp:
        """This effect run in every iteration of `ranges`, the first outermost."""
        return UOp(Op.END, VOID, (self, *ranges))

    @staticmethod
    def range(end: UOp, rid: int, parallel: bool = False, fast: bool = False) -> UOp:
        """A loop counter over 0 .. end-1; `parallel` promises independent iterations, `fast`
        marks the loop of a FAST REDUCE (spec/uir-week8.md 1.1)."""
        arg = (rid, PARALLEL) if parallel else (rid, FAST) if fast else rid
        return UOp(Op.RANGE, I32, (end,), arg)

    @staticmethod
    def sink(*srcs: UOp) -> UOp:
        return UOp(Op.SINK, VOID, srcs)

    def toposort(self, bodies: bool = True) -> list[UOp]:
        """Every UOp reachable from this one, sources before users, without recursion.

        With `bodies` false the walk does not enter CALL bodies (a CALL's src[0]).
        """
        if bodies:
            return sources_first(self, lambda node: node.src)
        return sources_first(self, lambda node: node.src[1:] if node.op is Op.CALL else node.src)


def sources_first(root: UOp, sources: Callable[[UOp], Sequence[UOp]]) -> list[UOp]:
    """Every UOp reachable from `root` through `sources`, each after its sources, without
    recursion (graphs 100,000 UOps deep work)."""
    seen: set[UOp] = set()
    order: list[UOp] = []
    stack: list[tuple[UOp, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((s, False) for s in reversed(sources(node)) if s not in seen)
    return order
