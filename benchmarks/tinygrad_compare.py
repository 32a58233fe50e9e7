"""The index corpus simplified by UIR and by tinygrad: ALU ops left, per family.

    uv run --with tinygrad python benchmarks/tinygrad_compare.py

tinygrad is not a dependency of UIR; `--with` lends it to this one run. Each corpus expression is
translated node for node into a tinygrad UOp (a loop index becomes a tinygrad RANGE of the same
size), simplified with `UOp.simplify()`, and its ALU ops counted, as UIR's are. tinygrad's
FLOORDIV and FLOORMOD agree with UIR's truncating IDIV and MOD on the corpus, whose dividends are
never negative. Prints figures only.
"""

from __future__ import annotations

from rewrite_bench import alu_ops, load_corpus  # beside this script
from tinygrad.uop.ops import GroupOp
from tinygrad.uop.ops import UOp as TinyUOp

from uir.core.ops import Op
from uir.core.uop import UOp
from uir.rewrite.passes import simplify

_BINARY = {
    Op.ADD: lambda a, b: a + b,
    Op.SUB: lambda a, b: a - b,
    Op.MUL: lambda a, b: a * b,
    Op.IDIV: lambda a, b: a // b,
    Op.MOD: lambda a, b: a % b,
    Op.CMPLT: lambda a, b: a < b,
    Op.CMPLE: lambda a, b: (b < a).logical_not(),
    Op.AND: lambda a, b: a & b,
    Op.XOR: lambda a, b: a ^ b,
    Op.MAX: lambda a, b: a.maximum(b),
}


def to_tinygrad(root: UOp) -> TinyUOp:
    made: dict[UOp, TinyUOp] = {}
    for u in root.toposort():
        s = [made[x] for x in u.src]
        if u.op is Op.CONST:
            made[u] = TinyUOp.const(u.arg, made_dtype(u))
        elif u.op is Op.RANGE:
            made[u] = TinyUOp.range(u.src[0].arg, u.arg)
        elif u.op is Op.NEG:
            made[u] = -s[0]
        elif u.op is Op.WHERE:
            made[u] = s[0].where(s[1], s[2])
        else:
            made[u] = _BINARY[u.op](*s)
    return made[root]


def made_dtype(u: UOp):
    from tinygrad.dtype import dtypes

    return dtypes.bool if u.dtype.is_bool else dtypes.weakint


def tiny_ops(u: TinyUOp) -> int:
    return sum(x.op in GroupOp.ALU for x in u.toposort())


def main() -> None:
    families: dict[str, list[int]] = {}
    print(f"  {'case':<58} {'uir':>4} {'tinygrad':>8}")
    for case in load_corpus():
        ours = alu_ops(simplify(case.expr))
        theirs = tiny_ops(to_tinygrad(case.expr).simplify())
        row = families.setdefault(case.family, [0, 0, 0, 0])
        row[0] += ours
        row[1] += theirs
        row[2] += ours < theirs
        row[3] += ours > theirs
        print(f"  {case.family + ': ' + case.name:<58.58} {ours:>4} {theirs:>8}")
    print()
    print(f"  {'family':<10} {'uir':>5} {'tinygrad':>8}  {'uir fewer':>9}  {'uir more':>8}")
    for family, (ours, theirs, fewer, more) in families.items():
        print(f"  {family:<10} {ours:>5} {theirs:>8}  {fewer:>9}  {more:>8}")
    total = [sum(row[n] for row in families.values()) for n in range(4)]
    print(f"  {'total':<10} {total[0]:>5} {total[1]:>8}  {total[2]:>9}  {total[3]:>8}")


if __name__ == "__main__":
    main()
