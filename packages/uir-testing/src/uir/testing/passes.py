"""Checking a pass's result in differential tests, while the passes are not yet safe on loops.

Today a value rewrite can drop a store's dependence on a counter (`i*5` with `i` in [0, 0] folds
to 0) and so take the store out of a loop its END lists: the result no longer verifies (issue 9
item 5, branch looprewrite). Until that lands, a differential test leaves such a program out of
its pass comparison and says why; every program the passes keep valid is still compared bit for
bit, and a pass that breaks a loop-free program fails at once.
"""

from __future__ import annotations

from uir.core.errors import VerifyError
from uir.core.ops import Op
from uir.core.parse import Program
from uir.core.uop import UOp
from uir.core.verify import verify

# Flip to True once the passes keep loop programs valid (issue 9 item 5): from then on a pass
# that breaks a loop program fails every differential test that runs the passes.
PASSES_KEEP_LOOPS_VALID = True


def broken_loops(before: UOp, after: UOp) -> str | None:
    """None when `after`, a pass's result for `before`, verifies. Where it does not and
    `before` has loops, the reason to leave it out while PASSES_KEEP_LOOPS_VALID is False;
    otherwise the VerifyError is raised."""
    try:
        verify(Program(after, {}))
    except VerifyError as error:
        if PASSES_KEEP_LOOPS_VALID or not any(u.op is Op.RANGE for u in before.toposort()):
            raise
        return f"the passes broke a loop program (issue 9 item 5, looprewrite): {error}"
    return None
