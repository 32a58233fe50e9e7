"""The passes this package adds to the pipeline, through the `uir_passes` hook."""

from __future__ import annotations

from collections.abc import Iterable

from uir.core.calls import inline_calls
from uir.core.engine import graph_rewrite
from uir.core.plugins import Pass, hookimpl
from uir.core.uop import UOp

from .fold import fold_rules
from .loops import in_loops
from .rangeify import rangeify as rangeify_graph
from .simplify import simplify_rules
from .tiling import tile_rules

# Every pass runs through in_loops: a rewrite that removes a STORE's dependence on a RANGE (a value
# it no longer needs) must not take the STORE out of the loop it ran in.


def inline(sink: UOp) -> UOp:
    """Every CALL replaced by its body, the arguments substituted for its PARAMs (core's inliner,
    the one the verifier and the backends use)."""
    return in_loops(inline_calls, sink)


def fold(sink: UOp) -> UOp:
    """Every ALU op on constants replaced by the constant it computes."""
    return in_loops(lambda root, origins: graph_rewrite(root, fold_rules, origins=origins), sink)


def simplify(sink: UOp) -> UOp:
    """Constant folding plus the algebraic and bounds rules, to a fixpoint."""
    return in_loops(
        lambda root, origins: graph_rewrite(root, simplify_rules, origins=origins), sink
    )


def lower_shapes(flat: UOp, fuse: bool = True) -> UOp:
    """Every shaped value of a program without CALLs lowered to loops over its elements
    (spec/rangeify.md; `fuse` false: without week 6's fusion), then its index arithmetic (div,
    mod, clamps and gates the movement ops leave) simplified with the bounds of the new RANGEs,
    which only exist from here on. The very same object when there is nothing to lower."""
    lowered = in_loops(lambda root, origins: rangeify_graph(root, origins, fuse=fuse), flat)
    return flat if lowered is flat else simplify(lowered)


def tile(sink: UOp) -> UOp:
    """The loop-nest rewrites of uir.rewrite.tiling: matmul-shaped folds tiled and convolutions'
    filters blocked (same bits), large FAST folds split into independent partial folds."""
    return in_loops(lambda root, origins: graph_rewrite(root, tile_rules, origins=origins), sink)


def rangeify(sink: UOp) -> UOp:
    """lower_shapes after inlining CALLs, since a body's shaped values are its caller's."""
    return lower_shapes(inline(sink))


PASSES = (
    Pass(
        "inline", "inline", "replace each CALL by its body with the arguments substituted", inline
    ),
    Pass("fold", "simplify", "fold ALU ops on constants through the semantics table", fold),
    Pass(
        "simplify",
        "simplify",
        "algebraic identities, constant reassociation, division and comparison by bounds; "
        "folds constants too (its rules build c1 + c2)",
        simplify,
    ),
    Pass(
        "tile",
        "rangeify",
        "tile matmul-shaped folds and block convolutions' filters for the caches (same bits); "
        "split large FAST folds into independent lanes and parts",
        tile,
        before="rangeify",
        backends=("interp", "c"),  # CPU caches; on a GPU a tile takes threads from the grid
    ),
    Pass(
        "rangeify",
        "rangeify",
        "lower shaped values to loops: fuse elementwise ops, materialize STAGE, REDUCE, outputs",
        rangeify,
        lowering=True,  # for the backends taking kernels, the interpreter among them
    ),
)


@hookimpl
def uir_passes() -> Iterable[Pass]:
    return PASSES
