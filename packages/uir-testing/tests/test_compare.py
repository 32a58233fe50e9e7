"""compare.py: bit-for-bit and ulp comparisons of outputs, on values worked out by hand."""

from __future__ import annotations

import numpy as np

from uir.core.ops import Op
from uir.core.parse import parse
from uir.testing.compare import ulp_distance, within_ulps
from uir.testing.programs import through_approximate_ops


def test_ulp_distance_counts_representable_values_across_zero():
    a = np.array([1.0, -0.0, -1e-45, 2.0], np.float32)
    b = np.array([np.nextafter(np.float32(1), np.float32(2)), 0.0, 1e-45, 1.9999999], np.float32)
    # next float up; -0 and +0; the two least subnormals straddle zero; 2 - 2^-23 (1.99999988)
    assert ulp_distance(a, b).tolist() == [1, 0, 2, 1]
    assert ulp_distance(np.array([1.0]), np.array([np.nextafter(1.0, 0.0)])).tolist() == [1]


def test_within_ulps_matches_nan_and_infinities_exactly():
    one = np.float32([1.0])
    assert within_ulps(one, np.float32([1.0000002]), 2)  # 2^-23 up: 2 ulp
    assert not within_ulps(one, np.float32([1.0000004]), 2)  # 3 ulp
    assert within_ulps(np.float32([np.nan]), np.float32([np.nan]), 0)
    assert not within_ulps(np.float32([np.nan]), one, 2)
    big = np.float32([3.4028235e38])  # FLT_MAX is 1 place from inf on the line, yet not inf
    assert not within_ulps(big, np.float32([np.inf]), 2)
    assert within_ulps(np.int32([7]), np.int32([7]), 2) and not within_ulps(
        np.int32([7]), np.int32([8]), 2
    )


def test_through_approximate_ops_wraps_each_scalar_float_output_in_turn():
    sink = parse(
        "%a = CONST f32 1.5\n%b = CONST i32 3\n%c = CONST f32 2\n%d = CONST f32 4\n"
        "%out = SINK void %a %b %c %d\n"
    ).sink
    wrapped = through_approximate_ops(sink)
    assert [s.op for s in wrapped.src] == [Op.EXP2, Op.CONST, Op.LOG2, Op.SIN]
    assert [s.src[0] for s in wrapped.src if s.op is not Op.CONST] == [
        sink.src[0],
        sink.src[2],
        sink.src[3],
    ]
