"""The verifier's week-4 rules (uir.md section 8): every rejection names its line and says why."""

from __future__ import annotations

import pytest

from uir.core import VerifyError, parse, verify

V4 = "%v = CONST f32[4] (1, 2, 3, 4)"
M23 = "%m = CONST i32[2,3] (1, 2, 3, 4, 5, 6)"

# name -> (statements, the line blamed, the message or a part of it).
CASES = {
    "alu_shape_mismatch": (
        [V4, "%w = CONST f32[3] (1, 2, 3)", "%s = ADD f32[4] %v %w", "%out = SINK void %s"],
        3,
        "ADD operands differ: f32[4] and f32[3]",
    ),
    "alu_no_implicit_broadcast": (
        [V4, "%one = CONST f32 1", "%s = ADD f32[4] %v %one", "%out = SINK void %s"],
        3,
        "ADD operands differ: f32[4] and f32",
    ),
    "alu_result_shape": (
        [V4, "%s = MUL f32[2] %v %v", "%out = SINK void %s"],
        2,
        "MUL of f32[4] must have type f32[4], not f32[2]",
    ),
    "where_condition_shape": (
        [V4, "%t = CONST bool true", "%s = WHERE f32[4] %t %v %v", "%out = SINK void %s"],
        3,
        "WHERE's condition has another shape",
    ),
    "compare_result_shape": (
        [V4, "%c = CMPLT bool %v %v", "%out = SINK void %c"],
        2,
        "CMPLT of f32[4] gives bool[4]",
    ),
    "cast_changes_shape": (
        [V4, "%c = CAST i32[2] %v", "%out = SINK void %c"],
        2,
        "CAST keeps the shape of f32[4]",
    ),
    "reduce_op_not_a_fold": (
        [V4, "%s = REDUCE f32 %v (SUB, (0))", "%out = SINK void %s"],
        2,
        "REDUCE folds with ADD, MUL, MAX or MIN, not SUB",
    ),
    "reduce_bools": (
        [
            "%b = CONST bool[2] (true, false)",
            "%s = REDUCE bool %b (MAX, (0))",
            "%out = SINK void %s",
        ],
        2,
        "REDUCE takes numbers, got bool[2]",
    ),
    "reduce_axis_out_of_range": (
        [V4, "%s = REDUCE f32 %v (ADD, (1))", "%out = SINK void %s"],
        2,
        "REDUCE axis 1 is not an axis of f32[4] (0 to 0)",
    ),
    "reduce_negative_axis": (
        [V4, "%s = REDUCE f32 %v (ADD, (-1))", "%out = SINK void %s"],
        2,
        "REDUCE axis -1 is not an axis of f32[4] (0 to 0)",
    ),
    "reduce_axes_decreasing": (
        [M23, "%s = REDUCE i32 %m (ADD, (1, 0))", "%out = SINK void %s"],
        2,
        "REDUCE axes must be distinct and in increasing order, got (1, 0)",
    ),
    "reduce_axes_repeated": (
        [M23, "%s = REDUCE i32[3] %m (ADD, (0, 0))", "%out = SINK void %s"],
        2,
        "REDUCE axes must be distinct and in increasing order, got (0, 0)",
    ),
    "reduce_no_axes": (
        [V4, "%s = REDUCE f32[4] %v (ADD, ())", "%out = SINK void %s"],
        2,
        "REDUCE needs at least one axis",
    ),
    "reduce_result_type": (
        [M23, "%s = REDUCE i32[2] %m (ADD, (0))", "%out = SINK void %s"],
        2,
        "REDUCE of i32[2,3] over axes (0) has type i32[3], not i32[2]",
    ),
    "reduce_result_dtype": (
        [V4, "%s = REDUCE f64 %v (ADD, (0))", "%out = SINK void %s"],
        2,
        "has type f32, not f64",
    ),
    "reduce_axes_not_a_tuple": (
        [V4, "%s = REDUCE f32 %v (ADD, 0)", "%out = SINK void %s"],
        2,
        "REDUCE takes (OP, (axes...)) such as (ADD, (0)), or (OP, (axes...), FAST), got (ADD, 0)",
    ),
    "reduce_without_argument": (
        [V4, "%s = REDUCE f32 %v", "%out = SINK void %s"],
        2,
        "REDUCE takes (OP, (axes...)) such as (ADD, (0)), or (OP, (axes...), FAST), got nothing",
    ),
    "reduce_float_axis": (
        [V4, "%s = REDUCE f32 %v (ADD, (0.0))", "%out = SINK void %s"],
        2,
        "got (ADD, (0.0))",
    ),
    "reduce_of_scalar": (
        ["%x = CONST f32 1", "%s = REDUCE f32 %x (ADD, (0))", "%out = SINK void %s"],
        2,
        "REDUCE folds axes of a shaped value, and f32 is a scalar",
    ),
    "reduce_of_buffer": (
        ["%b = BUFFER f32[4] 0", "%s = REDUCE f32 %b (ADD, (0))", "%out = SINK void %s"],
        2,
        "REDUCE takes values, and BUFFER is a memory reference",
    ),
    "expand_dim_mismatch": (
        ["%w = CONST f32[3] (1, 2, 3)", "%e = EXPAND f32[4] %w", "%out = SINK void %e"],
        2,
        "EXPAND of f32[3] to f32[4]: dim 0 is 3, and must be 1 or 4 (shapes align on the right)",
    ),
    "expand_left_aligned": (
        ["%w = CONST f32[2] (1, 2)", "%e = EXPAND f32[2,3] %w", "%out = SINK void %e"],
        2,
        "EXPAND of f32[2] to f32[2,3]: dim 0 is 2, and must be 1 or 3",
    ),
    "expand_fewer_axes": (
        [M23, "%e = EXPAND i32[6] %m", "%out = SINK void %e"],
        2,
        "EXPAND cannot remove axes: i32[2,3] has more than i32[6]",
    ),
    "expand_dtype": (
        [V4, "%e = EXPAND i32[4] %v", "%out = SINK void %e"],
        2,
        "EXPAND keeps the dtype: f32[4] cannot become i32[4]",
    ),
    "expand_to_scalar": (
        ["%x = CONST f32 1", "%e = EXPAND f32 %x", "%out = SINK void %e"],
        2,
        "EXPAND gives a shaped value, not the scalar f32",
    ),
    "stage_type": (
        [V4, "%s = STAGE f32[2] %v", "%out = SINK void %s"],
        2,
        "STAGE of f32[4] has that type, not f32[2]",
    ),
    "whole_load_size": (
        ["%b = BUFFER f32[4] 0", "%x = LOAD f32[3] %b", "%out = SINK void %x"],
        2,
        "a whole-buffer LOAD of BUFFER f32[4] has type f32[4], not f32[3]",
    ),
    "whole_load_dtype": (
        ["%b = BUFFER f32[4] 0", "%x = LOAD i32[4] %b", "%out = SINK void %x"],
        2,
        "a whole-buffer LOAD of BUFFER f32[4] has type f32[4], not i32[4]",
    ),
    "whole_load_rank": (
        ["%b = BUFFER f32[4] 0", "%x = LOAD f32[2,2] %b", "%out = SINK void %x"],
        2,
        "has type f32[4], not f32[2,2]",
    ),
    "whole_load_window_size": (
        [
            "%b = BUFFER f32[4] 0",
            "%w = SHRINK f32[2] %b ((1, 3))",
            "%x = LOAD f32[4] %w",
            "%out = SINK void %x",
        ],
        3,
        "a whole-buffer LOAD of SHRINK (a memory reference) f32[2] has type f32[2], not f32[4]",
    ),
    "whole_store_type": (
        [
            "%b = BUFFER f32[4] 0",
            "%w = CONST f32[3] (1, 2, 3)",
            "%s = STORE void %b %w",
            "%b1 = AFTER f32[4] %b %s",
            "%out = SINK void %b1",
        ],
        3,
        "a whole-buffer STORE to BUFFER f32[4] writes a value of type f32[4], not f32[3]",
    ),
    "whole_store_scalar": (
        [
            "%b = BUFFER f32[4] 0",
            "%x = CONST f32 1",
            "%s = STORE void %b %x",
            "%b1 = AFTER f32[4] %b %s",
            "%out = SINK void %b1",
        ],
        3,
        "writes a value of type f32[4], not f32",
    ),
    "two_whole_stores_one_version": (
        [
            "%b = BUFFER f32[4] 0",
            V4,
            "%w = ADD f32[4] %v %v",
            "%s1 = STORE void %b %v",
            "%s2 = STORE void %b %w",
            "%b1 = AFTER f32[4] %b %s1 %s2",
            "%out = SINK void %b1",
        ],
        5,
        "same version of the buffer as the STORE on line 4",
    ),
    "sink_version_replaced_by_whole_store": (
        [
            "%b = BUFFER f32[4] 0",
            V4,
            "%s = STORE void %b %v",
            "%b1 = AFTER f32[4] %b %s",
            "%out = SINK void %b1 %b",
        ],
        5,
        "the SINK names two versions of buffer 0",
    ),
    "shaped_value_in_loop": (
        [
            "%o = BUFFER i32[4] 0",
            "%n = CONST i32 4",
            "%k = RANGE i32 %n 0",
            "%e = EXPAND i32[4] %k",
            "%x = REDUCE i32 %e (ADD, (0))",
            "%p = INDEX i32 %o %k",
            "%s = STORE void %p %x",
            "%d = END void %s %k",
            "%o1 = AFTER i32[4] %o %d",
            "%out = SINK void %o1",
        ],
        4,
        "EXPAND i32[4] is inside the loop of the RANGE on line 3",
    ),
    "whole_store_in_loop": (
        [
            "%o = BUFFER i32[4] 0",
            "%n = CONST i32 4",
            "%v = CONST i32[4] (1, 2, 3, 4)",
            "%k = RANGE i32 %n 0",
            "%ok = AFTER i32[4] %o %k",
            "%s = STORE void %ok %v",
            "%d = END void %s %k",
            "%o1 = AFTER i32[4] %o %d",
            "%out = SINK void %o1",
        ],
        6,
        "a whole-buffer STORE is inside the loop of the RANGE on line 4",
    ),
    "shaped_call_body_in_loop": (
        [
            "%p = PARAM i32 0",
            "%e = EXPAND i32[3] %p",
            "%r = REDUCE i32 %e (MAX, (0))",
            "%o = BUFFER i32[4] 0",
            "%n = CONST i32 4",
            "%k = RANGE i32 %n 0",
            "%c = CALL i32 %r %k",
            "%q = INDEX i32 %o %k",
            "%s = STORE void %q %c",
            "%d = END void %s %k",
            "%o1 = AFTER i32[4] %o %d",
            "%out = SINK void %o1",
        ],
        2,  # the body's EXPAND, which runs in the loop once the CALL is inlined
        "EXPAND i32[3] is inside the loop of the RANGE on line 6",
    ),
    "shaped_alu_of_stacks_in_loop": (
        [
            "%o = BUFFER i32[2] 0",
            "%n = CONST i32 2",
            "%k = RANGE i32 %n 0",
            "%v = STACK i32[2] %k %k",
            "%w = ADD i32[2] %v %v",
            "%x = INDEX i32 %w %k",
            "%p = INDEX i32 %o %k",
            "%s = STORE void %p %x",
            "%d = END void %s %k",
            "%o1 = AFTER i32[2] %o %d",
            "%out = SINK void %o1",
        ],
        5,
        "ADD i32[2] is inside the loop of the RANGE on line 3",
    ),
    "index_by_a_sum_out_of_range": (
        [
            "%v = CONST i32[2] (10, 20)",
            "%ones = CONST i32[2] (1, 1)",
            "%i = REDUCE i32 %ones (ADD, (0))",  # 2: one past the end
            "%x = INDEX i32 %v %i",
            "%out = SINK void %x",
        ],
        4,
        "cannot prove the index in range",
    ),
    "index_by_a_max_unbounded": (
        [
            "%v = CONST i32[3] (10, 20, 30)",
            "%is = CONST i32[2] (0, 2)",
            "%i = REDUCE i32 %is (MAX, (0))",  # 2, but REDUCE has no bounds: rangeify loads it
            "%x = INDEX i32 %v %i",
            "%out = SINK void %x",
        ],
        4,
        "cannot prove the index in range",
    ),
    "body_param_shape": (
        [
            "%p = PARAM f32[4] 0",
            "%r = REDUCE f32 %p (ADD, (0))",
            "%w = CONST f32[3] (1, 2, 3)",
            "%c = CALL f32 %r %w",
            "%out = SINK void %c",
        ],
        4,
        "argument 0 is f32[3] but its PARAM is f32[4]",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_week4_rejection_names_its_line(name: str) -> None:
    lines, line, message = CASES[name]
    with pytest.raises(VerifyError) as caught:
        verify(parse("\n".join(lines) + "\n"))
    assert caught.value.line == line
    assert message in caught.value.message


ACCEPTED = {
    "reduce_outer_and_inner_axes": [
        "%t = CONST i32[2,3,2] (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)",
        "%r = REDUCE i32[3] %t (ADD, (0, 2))",
        "%a = REDUCE i32 %t (MIN, (0, 1, 2))",
        "%out = SINK void %r %a",
    ],
    "expand_numpy_rule": [
        "%x = CONST f32 1",
        "%one = CONST f32[1] (2)",
        "%col = CONST f32[2,1] (3, 4)",
        "%a = EXPAND f32[4] %x",
        "%b = EXPAND f32[4] %one",
        "%c = EXPAND f32[2,3] %col",
        "%d = EXPAND f32[3,2,3] %c",
        "%e = EXPAND f32[4] %a",
        "%out = SINK void %a %b %c %d %e",
    ],
    "shaped_call_body": [
        "%p = PARAM f32[3] 0",
        "%q = MUL f32[3] %p %p",
        "%r = REDUCE f32 %q (ADD, (0))",
        "%v = CONST f32[3] (1, 2, 3)",
        "%c = CALL f32 %r %v",
        "%out = SINK void %c",
    ],
    "stage_of_scalar_and_vector": [
        "%x = CONST f32 1",
        "%s = STAGE f32 %x",
        "%v = EXPAND f32[3] %s",
        "%t = STAGE f32[3] %v",
        "%out = SINK void %s %t",
    ],
    "index_bounds_through_stage": [
        "%v = CONST i32[3] (10, 20, 30)",
        "%i = CONST i32 2",
        "%s = STAGE i32 %i",
        "%a = INDEX i32 %v %s",
        "%out = SINK void %a",
    ],
    "small_vectors_stay_allowed_in_loops": [
        "%o = BUFFER i32[2] 0",
        "%n = CONST i32 2",
        "%k = RANGE i32 %n 0",
        "%v = STACK i32[2] %k %n",
        "%c = CONST i32[2] (5, 6)",
        "%x = INDEX i32 %v %k",
        "%y = INDEX i32 %c %k",
        "%z = ADD i32 %x %y",
        "%p = INDEX i32 %o %k",
        "%s = STORE void %p %z",
        "%d = END void %s %k",
        "%o1 = AFTER i32[2] %o %d",
        "%out = SINK void %o1",
    ],
    "whole_load_before_a_loop_that_overwrites": [
        "%d = CONST i32[2] (7, 8)",
        "%o = BUFFER i32[2] %d 0",
        "%all = LOAD i32[2] %o",
        "%n = CONST i32 2",
        "%k = RANGE i32 %n 0",
        "%x = INDEX i32 %all %k",
        "%p = INDEX i32 %o %k",
        "%s = STORE void %p %x",
        "%e = END void %s %k",
        "%o1 = AFTER i32[2] %o %e",
        "%out = SINK void %o1",
    ],
}


# Whole-buffer accesses of windows, and more, verify in test_shaped_interpret, which runs them.
@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_week4_program_verifies(name: str) -> None:
    verify(parse("\n".join(ACCEPTED[name]) + "\n"))
