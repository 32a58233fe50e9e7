"""The multiply-adds a FAST fold may contract into one rounding (spec/uir-week8.md sections 1, 1.2).

A MUL whose only user is a FAST REDUCE may be fused with the REDUCE's adds. After rangeify the
REDUCE is an accumulator carried across loops marked FAST, and each of its adds is a statement
`STORE acc[i] (ADD (LOAD acc[i]) (MUL a b))` somewhere inside them: `multiply_adds` finds those
statements, so that a backend renders each as one fused multiply-add (C's and CUDA's `fmaf`),
which rounds once where the MUL and the ADD round twice. Elementwise ops keep their roundings: an
update whose element moves with the loop's counter is no fold, and a MUL read by anything else
keeps its own rounding for that reader.
"""

from __future__ import annotations

from .dtypes import f32, f64
from .loops import is_fast
from .memory import window
from .ops import Op
from .schedule import Block, flatten
from .uop import UOp

FUSIBLE = (f32, f64)
"""The dtypes with a fused multiply-add of their own (`fmaf`, `fma`)."""


def _same_element(read: UOp, written: UOp) -> bool:
    """Whether two INDEX places name one element: the same window of one buffer (whatever the
    version), the same index UOp and the same gate."""
    a, b = window(read.src[0]), window(written.src[0])
    return (a.buffer, a.begin) == (b.buffer, b.begin) and read.src[1:] == written.src[1:]


def multiply_adds(loop: Block) -> dict[UOp, UOp]:
    """The accumulating ADDs under the FAST loop `loop`, each -> the MUL it may absorb.

    An ADD qualifies when a STORE inside the loop writes it to the very element its other
    operand LOADs, that element's index does not depend on the loop's counter (so the loop folds
    into it), and the MUL is computed inside the loop for that ADD alone. Values computed in a
    loop's body are not visible after it, so counting readers inside the loop counts them all.
    """
    rng = loop.range
    assert rng is not None and is_fast(rng), "multiply_adds takes a loop marked FAST"
    statements = flatten(loop)
    inside = set(statements)
    readers: dict[UOp, int] = {}
    for uop in statements:
        for s in uop.src:
            readers[s] = readers.get(s, 0) + 1
    found: dict[UOp, UOp] = {}
    for store in statements:
        if store.op is not Op.STORE or store.src[0].op is not Op.INDEX:
            continue
        place, add = store.src
        if add.op is not Op.ADD or add.type.shape or add.dtype not in FUSIBLE:
            continue
        for acc, mul in (add.src, add.src[::-1]):
            if (
                acc.op is Op.LOAD
                and acc.src[0].op is Op.INDEX
                and mul.op is Op.MUL
                and mul in inside
                and readers.get(mul) == 1
                and _same_element(acc.src[0], place)
                and rng not in place.src[1].toposort()
            ):
                found[add] = mul
                break
    return found
