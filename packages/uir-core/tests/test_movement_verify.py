"""The verifier's week-5 rules (uir.md section 9): every movement rejection, its line, its message.

The messages are the ones spec/uir-week5.md lists, so each is compared whole.
"""

from __future__ import annotations

import pytest

from uir.core import VerifyError, parse, verify
from uir.core.bounds import bounds

M23 = "%m = CONST i32[2,3] (1, 2, 3, 4, 5, 6)"
V4 = "%v = CONST f32[4] (1, 2, 3, 4)"
X = "%x = CONST f32 1"
B = "%b = BUFFER f32[4] 0"


def _sink(name: str) -> str:
    return f"%out = SINK void {name}"


# name -> (statements, the line blamed, the whole message).
CASES = {
    # Shared by every movement op: values in and out, shaped, one dtype.
    "reshape_of_memory": (
        [B, "%r = RESHAPE f32[2,2] %b", _sink("%r")],
        2,
        "RESHAPE takes values, and BUFFER is a memory reference",
    ),
    "flip_of_memory": (
        [B, "%r = FLIP f32[4] %b (0)", _sink("%r")],
        2,
        "FLIP takes values, and BUFFER is a memory reference",
    ),
    "reshape_of_scalar": (
        [X, "%r = RESHAPE f32[1] %x", _sink("%r")],
        2,
        "RESHAPE moves the elements of a shaped value, and f32 is a scalar "
        "(EXPAND makes a scalar shaped)",
    ),
    "pad_of_scalar": (
        [X, "%r = PAD f32[1] %x ((0, 0))", _sink("%r")],
        2,
        "PAD moves the elements of a shaped value, and f32 is a scalar "
        "(EXPAND makes a scalar shaped)",
    ),
    "shrink_of_scalar": (
        [X, "%r = SHRINK f32[1] %x ((0, 1))", _sink("%r")],
        2,
        "SHRINK moves the elements of a shaped value, and f32 is a scalar "
        "(EXPAND makes a scalar shaped)",
    ),
    "reshape_to_rank_0": (
        ["%one = CONST f32[1] (5)", "%r = RESHAPE f32 %one", _sink("%r")],
        2,
        "RESHAPE gives a shaped value, not the scalar f32",
    ),
    "expand_to_rank_0": (
        [X, "%r = EXPAND f32 %x", _sink("%r")],
        2,
        "EXPAND gives a shaped value, not the scalar f32",
    ),
    "permute_changes_dtype": (
        [M23, "%r = PERMUTE f32[3,2] %m (1, 0)", _sink("%r")],
        2,
        "PERMUTE keeps the dtype: i32[2,3] cannot become f32[3,2]",
    ),
    "rank_9": (
        [X, "%r = EXPAND f32[1,1,1,1,1,1,1,1,2] %x", _sink("%r")],
        2,
        "f32[1,1,1,1,1,1,1,1,2] has rank 9: shaped types have rank 1 to 8",
    ),
    "rank_9_const": (
        ["%c = CONST i32[1,1,1,1,1,1,1,1,1] (7)", _sink("%c")],
        1,
        "i32[1,1,1,1,1,1,1,1,1] has rank 9: shaped types have rank 1 to 8",
    ),
    # RESHAPE
    "reshape_changes_count": (
        [M23, "%r = RESHAPE i32[4] %m", _sink("%r")],
        2,
        "RESHAPE keeps the element count: i32[2,3] has 6 elements and i32[4] has 4",
    ),
    "reshape_takes_no_argument": (
        [M23, "%r = RESHAPE i32[3,2] %m (3, 2)", _sink("%r")],
        2,
        "RESHAPE takes no argument",
    ),
    # PERMUTE
    "permute_repeats_an_axis": (
        [M23, "%r = PERMUTE i32[2,2] %m (0, 0)", _sink("%r")],
        2,
        "PERMUTE order (0, 0) is not a permutation of the axes of i32[2,3] (0 to 1, each once)",
    ),
    "permute_too_few_axes": (
        [M23, "%r = PERMUTE i32[2,3] %m (0)", _sink("%r")],
        2,
        "PERMUTE order (0) is not a permutation of the axes of i32[2,3] (0 to 1, each once)",
    ),
    "permute_axis_out_of_range": (
        [M23, "%r = PERMUTE i32[3,2] %m (2, 0)", _sink("%r")],
        2,
        "PERMUTE order (2, 0) is not a permutation of the axes of i32[2,3] (0 to 1, each once)",
    ),
    "permute_no_order": (
        [M23, "%r = PERMUTE i32[3,2] %m", _sink("%r")],
        2,
        "PERMUTE takes an axis order such as (1, 0), got nothing",
    ),
    "permute_wrong_type": (
        [M23, "%r = PERMUTE i32[2,3] %m (1, 0)", _sink("%r")],
        2,
        "PERMUTE of i32[2,3] by (1, 0) has type i32[3,2], not i32[2,3]",
    ),
    # PAD
    "pad_one_pair_for_two_axes": (
        [M23, "%r = PAD i32[4,3] %m ((1, 1))", _sink("%r")],
        2,
        "PAD of i32[2,3] needs one pair per axis (2), got 1",
    ),
    "pad_pair_below_zero": (
        [M23, "%r = PAD i32[2,2] %m ((0, 0), (0, -1))", _sink("%r")],
        2,
        "PAD only adds elements: the pair (0, -1) of axis 1 is below 0 (SHRINK removes elements)",
    ),
    "pad_not_pairs": (
        [V4, "%r = PAD f32[6] %v (1, 1)", _sink("%r")],
        2,
        "PAD takes one pair of ints per axis, such as ((1, 1)), got (1, 1)",
    ),
    "pad_wrong_type": (
        [M23, "%r = PAD i32[3,3] %m ((1, 1), (0, 0))", _sink("%r")],
        2,
        "PAD of i32[2,3] by ((1, 1), (0, 0)) has type i32[4,3], not i32[3,3]",
    ),
    # SHRINK of a value
    "shrink_one_pair_for_two_axes": (
        [M23, "%r = SHRINK i32[1,3] %m ((0, 1))", _sink("%r")],
        2,
        "SHRINK of i32[2,3] needs one pair per axis (2), got 1",
    ),
    "shrink_past_the_end": (
        [M23, "%r = SHRINK i32[2,3] %m ((0, 2), (1, 4))", _sink("%r")],
        2,
        "SHRINK pair (1, 4) of axis 1 of i32[2,3] lies outside 0 <= begin < end <= 3",
    ),
    "shrink_empty": (
        [M23, "%r = SHRINK i32[1,3] %m ((1, 1), (0, 3))", _sink("%r")],
        2,
        "SHRINK pair (1, 1) of axis 0 of i32[2,3] lies outside 0 <= begin < end <= 2",
    ),
    "shrink_negative_begin": (
        [V4, "%r = SHRINK f32[2] %v ((-1, 1))", _sink("%r")],
        2,
        "SHRINK pair (-1, 1) of axis 0 of f32[4] lies outside 0 <= begin < end <= 4",
    ),
    "shrink_not_pairs": (
        [V4, "%r = SHRINK f32[2] %v (0, 2)", _sink("%r")],
        2,
        "SHRINK takes one pair of ints per axis, such as ((0, 2)), got (0, 2)",
    ),
    "shrink_wrong_type": (
        [M23, "%r = SHRINK i32[2,2] %m ((0, 2), (0, 3))", _sink("%r")],
        2,
        "SHRINK of i32[2,3] by ((0, 2), (0, 3)) has type i32[2,3], not i32[2,2]",
    ),
    "shrink_of_a_place": (
        [
            B,
            "%z = CONST i32 0",
            "%p = INDEX f32 %b %z",
            "%r = SHRINK f32[1] %p ((0, 1))",
            _sink("%r"),
        ],
        4,
        "SHRINK takes a value or memory, and INDEX is an INDEX of memory",
    ),
    # FLIP
    "flip_no_axes": (
        [M23, "%r = FLIP i32[2,3] %m ()", _sink("%r")],
        2,
        "FLIP needs at least one axis: () flips nothing",
    ),
    "flip_axes_decreasing": (
        [M23, "%r = FLIP i32[2,3] %m (1, 0)", _sink("%r")],
        2,
        "FLIP axes must be distinct, in increasing order and in [0, 2) (the axes of i32[2,3]), "
        "got (1, 0)",
    ),
    "flip_axis_repeated": (
        [M23, "%r = FLIP i32[2,3] %m (1, 1)", _sink("%r")],
        2,
        "FLIP axes must be distinct, in increasing order and in [0, 2) (the axes of i32[2,3]), "
        "got (1, 1)",
    ),
    "flip_axis_out_of_range": (
        [M23, "%r = FLIP i32[2,3] %m (2)", _sink("%r")],
        2,
        "FLIP axes must be distinct, in increasing order and in [0, 2) (the axes of i32[2,3]), "
        "got (2)",
    ),
    "flip_axes_not_ints": (
        [M23, "%r = FLIP i32[2,3] %m ((0, 1))", _sink("%r")],
        2,
        "FLIP takes the axes to reverse, such as (0), got ((0, 1))",
    ),
    "flip_wrong_type": (
        [M23, "%r = FLIP i32[3,2] %m (0)", _sink("%r")],
        2,
        "FLIP of i32[2,3] has that type, not i32[3,2]",
    ),
    # EXPAND (week 4's rule, at any rank)
    "expand_not_numpy_rule": (
        [M23, "%r = EXPAND i32[2,2,3] %m", "%s = EXPAND i32[4,3] %m", _sink("%s")],
        3,
        "EXPAND of i32[2,3] to i32[4,3]: dim 0 is 2, and must be 1 or 4 (shapes align on the "
        "right)",
    ),
    # STACK of shaped values
    "stack_different_shapes": (
        [V4, "%w = CONST f32[3] (1, 2, 3)", "%s = STACK f32[2,4] %v %w", _sink("%s")],
        3,
        "STACK takes values of one type, got f32[4] and f32[3]",
    ),
    "stack_different_dtypes": (
        [V4, "%w = CONST i32[4] (1, 2, 3, 4)", "%s = STACK f32[2,4] %v %w", _sink("%s")],
        3,
        "STACK takes values of one type, got f32[4] and i32[4]",
    ),
    "stack_wrong_type": (
        [V4, "%s = STACK f32[4,2] %v %v", _sink("%s")],
        2,
        "STACK of 2 values of f32[4] has type f32[2,4], not f32[4,2]",
    ),
    # REDUCE over any axes (week 4's rule at rank 3)
    "reduce_axes_of_rank_3": (
        [
            "%t = CONST i32[1,2,2] (1, 2, 3, 4)",
            "%r = REDUCE i32[2] %t (ADD, (2, 0))",
            _sink("%r"),
        ],
        2,
        "REDUCE axes must be distinct and in increasing order, got (2, 0)",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_movement_rejection_names_its_line(name: str) -> None:
    lines, line, message = CASES[name]
    with pytest.raises(VerifyError) as caught:
        verify(parse("\n".join(lines) + "\n"))
    assert (caught.value.line, caught.value.message) == (line, message)


ACCEPTED = {
    "every_op_at_rank_8": [
        "%x = CONST i32 3",
        "%e = EXPAND i32[1,2,1,2,1,2,1,2] %x",
        "%r = RESHAPE i32[2,2,2,2,1,1,1,1] %e",
        "%p = PERMUTE i32[1,1,1,1,2,2,2,2] %r (7, 6, 5, 4, 3, 2, 1, 0)",
        "%d = PAD i32[1,1,1,1,2,2,2,3] %p "
        "((0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (1, 0))",
        "%s = SHRINK i32[1,1,1,1,2,2,2,2] %d "
        "((0, 1), (0, 1), (0, 1), (0, 1), (0, 2), (0, 2), (0, 2), (1, 3))",
        "%f = FLIP i32[1,1,1,1,2,2,2,2] %s (0, 4, 7)",
        "%t = REDUCE i32[1,1,1,1,2] %f (ADD, (4, 5, 6))",
        _sink("%t"),
    ],
    "stack_of_matrices": [M23, "%s = STACK i32[2,2,3] %m %m", _sink("%s")],
    "shrink_of_a_shrink_of_a_value": [
        V4,
        "%a = SHRINK f32[3] %v ((1, 4))",
        "%b = SHRINK f32[1] %a ((2, 3))",
        _sink("%b"),
    ],
    "pad_by_nothing_is_allowed": [M23, "%r = PAD i32[2,3] %m ((0, 0), (0, 0))", _sink("%r")],
    "movement_in_a_call_body": [
        "%p = PARAM i32[2,3] 0",
        "%t = PERMUTE i32[3,2] %p (1, 0)",
        "%f = FLIP i32[3,2] %t (0)",
        M23,
        "%c = CALL i32[3,2] %f %m",
        _sink("%c"),
    ],
    "index_of_a_reshape_to_rank_1": [
        M23,
        "%r = RESHAPE i32[6] %m",
        "%i = CONST i32 5",
        "%e = INDEX i32 %r %i",
        _sink("%e"),
    ],
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_movement_program_verifies(name: str) -> None:
    verify(parse("\n".join(ACCEPTED[name]) + "\n"))


def test_a_padded_value_is_bounded_by_its_elements_and_zero() -> None:
    # The PAD's elements are 1 and 2 and the zero around them: [0, 2]; with 3 and 5, [0, 5].
    # (No REDUCE carries them further: rangeify materializes it, and a LOAD has the full range.)
    for elements, expected in (("(1, 2)", (0, 2)), ("(3, 5)", (0, 5))):
        text = f"%k = CONST i32[2] {elements}\n%p = PAD i32[4] %k ((1, 1))\n{_sink('%p')}\n"
        (pad,) = parse(text).sink.src
        assert bounds(pad) == expected
