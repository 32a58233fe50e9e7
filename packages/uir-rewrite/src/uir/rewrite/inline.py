"""CALL inlining (uir.md section 5): each CALL becomes its body with the arguments substituted.

The substitution is uir.core.calls.substitute, the one the verifier and interpreter use; here it
is a single rule run by the rewrite engine. The engine rewrites bottom-up, so by the time a CALL
is inlined its body has no CALL left: inner calls were inlined first, their own PARAMs replaced by
the expressions they were called with. `substitute` never enters a nested body, so a PARAM is only
ever replaced by the call that owns it, even where an inner body reuses the slot numbers (and so
the very PARAM UOps) of an outer one.
"""

from __future__ import annotations

from uir.core.calls import substitute
from uir.core.ops import Op
from uir.core.pattern import P, Rules
from uir.core.uop import UOp


def inline_call(call: UOp) -> UOp:
    body, *args = call.src
    return substitute(body, args)


inline_rules = Rules([(P(Op.CALL, name="call"), inline_call)])
