"""The semantics table on cases worked out by hand from uir.md section 4."""

import numpy as np

from uir.core.dtypes import f32, i32
from uir.core.ops import Op
from uir.core.semantics import apply


def test_bitcast_of_a_scalar_is_a_scalar():
    # 1.0f is 0x3F800000; a scalar stays a scalar (a 1-element vector broke INDEX and STACK).
    result = apply(Op.BITCAST, i32, [np.array(1.0, dtype=np.float32)], [f32])
    assert result.shape == ()
    assert int(result) == 0x3F800000


def test_bitcast_keeps_a_vector_shape():
    result = apply(Op.BITCAST, f32, [np.array([0x3F800000, 0], dtype=np.int32)], [i32])
    assert result.shape == (2,)
    assert result.tolist() == [1.0, 0.0]
