"""UOp: the node of every UIR program, hash-consed so that equal means identical."""

from __future__ import annotations

import weakref
from typing import Any, ClassVar

from .dtypes import DType, Type, bool_
from .elements import Elements, arg_key
from .ops import COMPARE, Op

__all__ = ["UOp", "arg_key"]


class UOp:
    """An immutable node `(op, type, src, arg)`.

    Construction is hash-consed: building a UOp equal to a live one returns that object, so `==`
    is `is` and a graph never holds two copies of one expression. The table holds its UOps weakly,
    so a graph nobody references is freed. A shaped CONST's tuple of elements becomes `Elements`,
    its one compact form.
    """

    __slots__ = ("__weakref__", "_bounds", "arg", "op", "src", "type")
    _table: ClassVar[weakref.WeakValueDictionary[tuple, UOp]] = weakref.WeakValueDictionary()

    op: Op
    type: Type
    src: tuple[UOp, ...]
    arg: Any

    def __new__(cls, op: Op, type: Type, src: tuple[UOp, ...] = (), arg: Any = None) -> UOp:
        src = tuple(src)
        if op is Op.CONST and type.shape and isinstance(arg, tuple):
            arg = Elements(arg)
        key = (op, type, src, arg_key(arg))
        found = cls._table.get(key)
        if found is not None:
            return found
        node = super().__new__(cls)
        for name, value in (("op", op), ("type", type), ("src", src), ("arg", arg)):
            object.__setattr__(node, name, value)
        object.__setattr__(node, "_bounds", None)
        cls._table[key] = node
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

    def alu(self, op: Op, *others: UOp) -> UOp:
        """`op` applied to this UOp and `others`, typed as uir.md section 4 types it.

        Comparisons give bools of the operands' shape; WHERE (this UOp the condition) takes its
        branches' type; every other op the type of its first operand.
        """
        if op in COMPARE:
            out = self.type.with_dtype(bool_)
        elif op is Op.WHERE:
            out = others[0].type
        else:
            out = self.type
        return UOp(op, out, (self, *others))

    def toposort(self, bodies: bool = True) -> list[UOp]:
        """Every UOp reachable from this one, sources before users, without recursion.

        With `bodies` false the walk does not enter CALL bodies (a CALL's src[0]).
        """
        seen: set[UOp] = set()
        order: list[UOp] = []
        stack: list[tuple[UOp, bool]] = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            src = node.src[1:] if node.op is Op.CALL and not bodies else node.src
            stack.extend((s, False) for s in reversed(src) if s not in seen)
        return order
