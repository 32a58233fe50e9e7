"""The pattern language: rules as data, `(pattern, rewrite)` pairs grouped into a `Rules` table.

A pattern (`Pat`, usually written through its short alias `P`) describes a UOp by its op, dtype,
sources and argument, with named captures and an optional predicate:

    P.var("x", INTS) + 0          an ADD of any int UOp (captured as x) and the int constant 0
    P.var("x") * P.cvar("c")      a MUL of anything by a scalar constant (captured as c)
    P(Op.WHERE, src=(P.var("c"), P.var("a"), P.var("a")))   both branches the same UOp

A name used twice must capture the same UOp both times (UOps are hash-consed, so that means equal
expressions). Patterns on a commutative op (ADD, MUL, MAX, MIN, AND, OR, XOR, CMPEQ, CMPNE) also
match with their two sources swapped, so one rule covers `x + 0` and `0 + x`.

A rewrite is a function called with the captures as keyword arguments; it returns the replacement
UOp, or None when the rule does not apply after all (a bounds condition failed, say). A rewrite
that declares a parameter named `ctx` also receives the context the rewrite carries (see
uir.core.engine.graph_rewrite): an allocator, a table of facts, whatever the pass needs to share
between rules. A `Rules` table dispatches on the op of the UOp being rewritten, so only the rules
that can match it are tried, however long the table grows.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .dtypes import DTYPES, DType
from .ops import COMMUTATIVE, Op
from .trace import RuleInfo, Trace, rule_info
from .uop import UOp, arg_key

INTS = frozenset(d for d in DTYPES.values() if d.is_int)
FLOATS = frozenset(d for d in DTYPES.values() if d.is_float)
BOOLS = frozenset(d for d in DTYPES.values() if d.is_bool)
NUMBERS = INTS | FLOATS

Captures = dict[str, UOp]
Rewrite = Callable[..., UOp | None]

_ANY = object()  # the argument of a pattern that does not constrain the argument


class Pat:
    """A pattern over UOps; every field left out matches anything.

    op:    the op, or ops, it matches (None: any op)
    dtype: the dtype, or dtypes, it matches (None: any dtype)
    src:   patterns for the sources, in order (None: any sources); bare numbers and bools stand
           for constant patterns
    arg:   the argument, compared by value and kind as UOps compare them (0 is not 0.0 or False,
           and 0.0 is not -0.0)
    name:  a capture name; the matched UOp is passed to the rewrite under it
    where: a predicate the matched UOp must satisfy

    Patterns are built once, when a rule table is defined, and never change afterwards.
    """

    __slots__ = (
        "_arg_key",
        "arg",
        "dtypes",
        "name",
        "ops",
        "src",
        "where",
    )

    def __init__(
        self,
        op: Op | Iterable[Op] | None = None,
        dtype: DType | Iterable[DType] | None = None,
        src: Sequence[Pat | int | float | bool] | None = None,
        arg: Any = _ANY,
        name: str | None = None,
        where: Callable[[UOp], bool] | None = None,
    ) -> None:
        self.ops = frozenset([op] if isinstance(op, Op) else op) if op is not None else None
        self.dtypes = frozenset([dtype] if isinstance(dtype, DType) else dtype) if dtype else None
        self.src = None if src is None else tuple(_as_pattern(s) for s in src)
        self.arg = arg
        self.name = name
        self.where = where
        self._arg_key = None if arg is _ANY else arg_key(arg)

    def __repr__(self) -> str:
        parts = []
        if self.ops is not None:
            parts.append("|".join(sorted(op.name for op in self.ops)))
        if self.dtypes is not None:
            parts.append("|".join(sorted(d.name for d in self.dtypes)))
        if self.src is not None:
            parts.append(f"src={list(self.src)}")
        if self.arg is not _ANY:
            parts.append(f"arg={self.arg!r}")
        if self.name is not None:
            parts.append(f"name={self.name!r}")
        return f"P({', '.join(parts)})"

    # --- constructors -------------------------------------------------------------------------

    @staticmethod
    def var(name: str, dtype: DType | Iterable[DType] | None = None) -> Pat:
        """Any UOp (of the given dtypes), captured as `name`."""
        return Pat(dtype=dtype, name=name)

    @staticmethod
    def cvar(name: str, dtype: DType | Iterable[DType] | None = None) -> Pat:
        """A scalar CONST (of the given dtypes), captured as `name`."""
        return Pat(Op.CONST, dtype, name=name, where=_is_scalar)

    @staticmethod
    def const(value: int | float | bool, dtype: DType | Iterable[DType] | None = None) -> Pat:
        """The scalar CONST `value`: ints match int constants, floats float constants by bits."""
        return Pat(Op.CONST, dtype, arg=value, where=_is_scalar)

    @staticmethod
    def alu(op: Op, *src: Pat | int | float | bool) -> Pat:
        """`op` applied to these source patterns (bare numbers become constant patterns)."""
        return Pat(op, src=src)

    def named(self, name: str) -> Pat:
        """This pattern, capturing what it matches as `name`."""
        return Pat(self.ops, self.dtypes, self.src, self.arg, name, self.where)

    def such_that(self, predicate: Callable[[UOp], bool]) -> Pat:
        """This pattern, restricted to UOps that satisfy `predicate`."""
        where = self.where
        test = predicate if where is None else (lambda u: where(u) and predicate(u))
        return Pat(self.ops, self.dtypes, self.src, self.arg, self.name, test)

    # --- operators build patterns of the same name as UOps (`+` is ADD, `//` is IDIV) ----------

    def __add__(self, other: Pat | int | float) -> Pat:
        return Pat.alu(Op.ADD, self, other)

    def __radd__(self, other: Pat | int | float) -> Pat:
        return Pat.alu(Op.ADD, other, self)

    def __sub__(self, other: Pat | int | float) -> Pat:
        return Pat.alu(Op.SUB, self, other)

    def __rsub__(self, other: Pat | int | float) -> Pat:
        return Pat.alu(Op.SUB, other, self)

    def __mul__(self, other: Pat | int | float) -> Pat:
        return Pat.alu(Op.MUL, self, other)

    def __rmul__(self, other: Pat | int | float) -> Pat:
        return Pat.alu(Op.MUL, other, self)

    def __floordiv__(self, other: Pat | int) -> Pat:
        return Pat.alu(Op.IDIV, self, other)

    def __mod__(self, other: Pat | int) -> Pat:
        return Pat.alu(Op.MOD, self, other)

    def __neg__(self) -> Pat:
        return Pat.alu(Op.NEG, self)

    # --- matching -----------------------------------------------------------------------------

    def match(self, uop: UOp, captures: Captures | None = None) -> list[Captures]:
        """Every consistent set of captures under which this pattern matches `uop`.

        Several exist when a commutative op matches both ways round; the rewrite is tried on each
        in turn. The recursion follows the pattern, which is a few levels deep, never the graph.
        """
        captures = {} if captures is None else captures
        if self.ops is not None and uop.op not in self.ops:  # Op and DType hash by identity
            return []
        if self.dtypes is not None and uop.type.dtype not in self.dtypes:
            return []
        if self.arg is not _ANY and arg_key(uop.arg) != self._arg_key:
            return []
        if self.where is not None and not self.where(uop):
            return []
        if self.name is not None:
            bound = captures.get(self.name)
            if bound is not None and bound is not uop:
                return []
            captures = {**captures, self.name: uop}
        if self.src is None:
            return [captures]
        if len(self.src) != len(uop.src):
            return []
        found = _match_sources(self.src, uop.src, captures)
        if len(self.src) == 2 and uop.op in COMMUTATIVE and uop.src[0] is not uop.src[1]:
            found += _match_sources(self.src, uop.src[::-1], captures)
        return found


# The short name the rule tables use, as in `P.var("x") + 0`.
P = Pat


def _is_scalar(uop: UOp) -> bool:
    return not uop.type.shape


def _as_pattern(value: Pat | int | float | bool) -> Pat:
    return value if isinstance(value, Pat) else Pat.const(value)


def _match_sources(
    pats: tuple[Pat, ...], srcs: tuple[UOp, ...], captures: Captures
) -> list[Captures]:
    """The captures under which each pattern matches the source in its position."""
    partial = [captures]
    for pat, src in zip(pats, srcs, strict=True):
        partial = [found for c in partial for found in pat.match(src, c)]
        if not partial:
            break
    return partial


Rule = tuple[Pat, Rewrite]
# A rule as a table holds it: whether the rewrite wants the context is decided once, here; the
# last field is the rule's position in the table (what a trace names).
_Entry = tuple[Pat, Rewrite, bool, int]


class Rules:
    """An ordered table of `(pattern, rewrite)` rules, dispatched by the op of the UOp.

    `rewrite(uop, ctx)` tries, in table order, the rules whose pattern can match `uop.op`, and
    returns the first replacement a rule gives, or None when none applies. Tables combine with `+`.
    `names`, when given, names each rule (a trace shows the name; unnamed rules go by their
    rewrite function's name).
    """

    def __init__(self, rules: Iterable[Rule], names: Iterable[str | None] = ()) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        given = tuple(names)
        self.names: tuple[str | None, ...] = given + (None,) * (len(self.rules) - len(given))
        by_op: dict[Op, list[_Entry]] = {op: [] for op in Op}
        for index, (pattern, rewrite) in enumerate(self.rules):
            entry = (pattern, rewrite, _wants_ctx(pattern, rewrite), index)
            for op in pattern.ops if pattern.ops is not None else Op:
                by_op[op].append(entry)
        self._by_op_id = {id(op): entries for op, entries in by_op.items()}
        # (op, dtype) -> the rules whose pattern's own op and dtype admit them, each with the
        # name of its capture when the pattern is a bare `P.var(name)` (it matches every UOp):
        # filled as the walks meet each pair, so no rule is tried where it can never match.
        self._by_op_dtype: dict[tuple[int, DType], list[tuple[_Entry, str | None]]] = {}
        self._info: dict[int, RuleInfo] = {}

    def __add__(self, other: Rules) -> Rules:
        return Rules(self.rules + other.rules, self.names + other.names)

    def __len__(self) -> int:
        return len(self.rules)

    def rewrite(self, uop: UOp, ctx: Any = None, trace: Trace | None = None) -> UOp | None:
        """The replacement of `uop` by the first rule that applies, or None; recorded in `trace`
        when one is given (checked only once a rule fires, so an untraced walk pays nothing)."""
        key = (id(uop.op), uop.type.dtype)
        entries = self._by_op_dtype.get(key)
        if entries is None:
            entries = self._by_op_dtype[key] = [
                (entry, _bare_name(entry[0]))
                for entry in self._by_op_id[key[0]]
                if entry[0].dtypes is None or key[1] in entry[0].dtypes
            ]
        for (pattern, rewrite, wants_ctx, index), bare in entries:
            for captures in [{bare: uop}] if bare is not None else pattern.match(uop):
                result = rewrite(ctx=ctx, **captures) if wants_ctx else rewrite(**captures)
                if result is not None and result is not uop:
                    if trace is not None:
                        trace.record(self._rule_info(index), uop, result)
                    return result
        return None

    def _rule_info(self, index: int) -> RuleInfo:
        info = self._info.get(index)
        if info is None:
            pattern, rewrite = self.rules[index]
            info = self._info[index] = rule_info(self.names[index], pattern, rewrite)
        return info


def _bare_name(pattern: Pat) -> str | None:
    """The capture name of a pattern that matches every UOp (`P.var("uop")`), else None."""
    unconstrained = pattern.ops is None and pattern.dtypes is None and pattern.src is None
    if unconstrained and pattern.arg is _ANY and pattern.where is None:
        return pattern.name
    return None


def _wants_ctx(pattern: Pat, rewrite: Rewrite) -> bool:
    """Whether `rewrite` declares a `ctx` parameter; a capture may not take that name."""
    if "ctx" in _capture_names(pattern):
        raise ValueError(f"{pattern}: 'ctx' names the rewrite's context and cannot be a capture")
    try:
        return "ctx" in inspect.signature(rewrite).parameters
    except (TypeError, ValueError):  # a builtin without a signature takes no context
        return False


def _capture_names(pattern: Pat) -> Iterator[str]:
    if pattern.name is not None:
        yield pattern.name
    for s in pattern.src or ():
        yield from _capture_names(s)
