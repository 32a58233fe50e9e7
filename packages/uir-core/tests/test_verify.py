import pytest

from uir.core.errors import VerifyError
from uir.core.parse import parse
from uir.core.verify import verify


def check(*lines: str) -> None:
    verify(parse("\n".join(lines) + "\n", "t.uir"))


def rejection(*lines: str) -> VerifyError:
    with pytest.raises(VerifyError) as info:
        check(*lines)
    assert info.value.exit_code == 3
    return info.value


N = "%i = CONST i32 1"
X = "%f = CONST f32 1.5"
T = "%b = CONST bool true"


@pytest.mark.parametrize(
    "lines",
    [
        [N, "%n = NEG i32 %i", "%o = SINK void %n"],
        [X, "%s = SQRT f32 %f", "%o = SINK void %s"],
        [T, "%x = XOR bool %b %b", "%e = CMPEQ bool %b %b", "%o = SINK void %x %e"],
        [N, "%c = CMPLT bool %i %i", "%w = WHERE i32 %c %i %i", "%o = SINK void %w"],
        [X, "%c = CAST i32 %f", "%d = BITCAST i32 %f", "%o = SINK void %c %d"],
        [T, "%c = CAST f32 %b", "%o = SINK void %c"],
        ["%m = CONST i32 -2147483648", "%M = CONST i32 2147483647", "%o = SINK void %m %M"],
        ["%v = CONST f32[3] (1, 2.5, nan)", "%o = SINK void %v"],
        ["%o = SINK void"],
        # A dead statement is never verified.
        ["%dead = CONST i32 99999999999", N, "%o = SINK void %i"],
        # Extra arguments are allowed; a nested body's PARAM 0 belongs to the nested call.
        [
            "%p0 = PARAM i32 0", "%p1 = PARAM f32 1", "%inner = NEG i32 %p0",
            "%call_inner = CALL i32 %inner %p0", "%body = ADD i32 %call_inner %p0", N, X,
            "%c = CALL i32 %body %i %f %f", "%o = SINK void %c",
        ],
        # INDEX proven by AND with a constant, by MOD of a non-negative value, by a CAST of a bool.
        [
            "%x = CONST i32 -77", "%three = CONST i32 3", "%k = AND i32 %x %three",
            "%v = STACK i32[4] %x %x %x %x", "%e = INDEX i32 %v %k", "%o = SINK void %e",
        ],
        [
            "%p = PARAM i32 0", "%v = CONST i32[2] (5, 6)", "%e = INDEX i32 %v %p",
            "%one = CONST i32 1", "%c = CALL i32 %e %one", "%o = SINK void %c",
        ],
        [
            T, "%k = CAST i32 %b", "%v = CONST f32[2] (1, 2)", "%e = INDEX f32 %v %k",
            "%o = SINK void %e",
        ],
    ],
)  # fmt: skip
def test_well_typed_programs_are_accepted(lines):
    check(*lines)


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        ([N, "%a = ADD i32 %i", "%o = SINK void %a"], 2, "takes 2 operand"),
        ([N, "%a = ADD i32 %i %i %i", "%o = SINK void %a"], 2, "takes 2 operand"),
        ([N, X, "%a = ADD i32 %i %f", "%o = SINK void %a"], 3, "operands differ"),
        ([N, "%a = ADD f32 %i %i", "%o = SINK void %a"], 2, "must have type i32"),
        ([T, "%a = ADD bool %b %b", "%o = SINK void %a"], 2, "takes numbers"),
        ([X, "%a = AND f32 %f %f", "%o = SINK void %a"], 2, "ints or bools"),
        ([X, "%a = IDIV f32 %f %f", "%o = SINK void %a"], 2, "takes ints"),
        ([N, "%a = FDIV i32 %i %i", "%o = SINK void %a"], 2, "takes floats"),
        ([N, "%a = SQRT i32 %i", "%o = SINK void %a"], 2, "takes floats"),
        ([T, "%a = CMPLT bool %b %b", "%o = SINK void %a"], 2, "takes numbers"),
        ([N, "%a = CMPLT i32 %i %i", "%o = SINK void %a"], 2, "gives bool"),
        ([N, "%w = WHERE i32 %i %i %i", "%o = SINK void %w"], 2, "must be bool"),
        ([N, X, T, "%w = WHERE i32 %b %i %f", "%o = SINK void %w"], 4, "branches"),
        ([N, "%c = BITCAST f64 %i", "%o = SINK void %c"], 2, "one width"),
        ([T, "%c = BITCAST u8 %b", "%o = SINK void %c"], 2, "non-bool"),
        (["%a = CONST i32 2147483648", "%o = SINK void %a"], 1, "out of range"),
        (["%a = CONST i32 1.5", "%o = SINK void %a"], 1, "not a literal of type i32"),
        (["%a = CONST i32 true", "%o = SINK void %a"], 1, "not a literal of type i32"),
        (["%a = CONST f32 true", "%o = SINK void %a"], 1, "not a literal of type f32"),
        (["%a = CONST bool 1", "%o = SINK void %a"], 1, "not a literal of type bool"),
        (["%a = CONST i32", "%o = SINK void %a"], 1, "not a literal"),
        (["%a = CONST i32 (1)", "%o = SINK void %a"], 1, "one literal"),
        (["%a = CONST i32[2] (1)", "%o = SINK void %a"], 1, "2 elements"),
        ([N, "%a = NEG i32 %i 3", "%o = SINK void %a"], 2, "takes no argument"),
        (["%p = PARAM i32 0", "%o = SINK void %p"], 1, "PARAM outside"),
        (["%p = PARAM i32 -1", "%o = SINK void %p"], 1, "slot number"),
        (
            ["%p = PARAM i32 1", "%n = NEG i32 %p", N, "%c = CALL i32 %n %i", "%o = SINK void %c"],
            4,
            "no argument for PARAM slot 1",
        ),
        (
            ["%p = PARAM i32 0", X, "%c = CALL i32 %p %f", "%o = SINK void %c"],
            3,
            "argument 0 is f32",
        ),
        (["%p = PARAM i32 0", N, "%c = CALL f32 %p %i", "%o = SINK void %c"], 3, "its body is i32"),
        ([N, X, "%s = STACK i32[2] %i %f", "%o = SINK void %s"], 3, "STACK element is f32"),
        ([N, "%s = STACK i32[3] %i %i", "%o = SINK void %s"], 2, "needs 3 sources"),
        (
            [N, "%v = CONST i32[4] (1, 2, 3, 4)", "%four = CONST i32 4", "%e = INDEX i32 %v %four",
             "%o = SINK void %e"],
            4,
            "[4, 4], the size is 4",
        ),
        (
            [X, "%k = CAST i32 %f", "%v = CONST i32[2] (1, 2)", "%e = INDEX i32 %v %k",
             "%o = SINK void %e"],
            4,
            "cannot prove",
        ),
        (
            # Inside the body the index is a PARAM; at this call it is 2, out of range.
            ["%p = PARAM i32 0", "%v = CONST i32[2] (5, 6)", "%e = INDEX i32 %v %p",
             "%two = CONST i32 2", "%c = CALL i32 %e %two", "%o = SINK void %c"],
            3,
            "[2, 2]",
        ),
        ([N, "%v = CONST i32[2] (1, 2)", "%e = INDEX i32 %v %i %i", "%o = SINK void %e"], 3,
         "gate"),
        ([X, "%v = CONST i32[2] (1, 2)", "%e = INDEX i32 %v %f", "%o = SINK void %e"], 3, "i32"),
        ([N, "%e = INDEX i32 %i %i", "%o = SINK void %e"], 2, "rank-1"),
        ([N, "%o = SINK i32 %i"], 2, "SINK has type void"),
        ([N, "%a = ADD void %i %i", "%o = SINK void %a"], 2, "cannot have type void"),
    ],
)  # fmt: skip
def test_each_rule_rejects_with_the_line_of_the_statement(lines, line, words):
    error = rejection(*lines)
    assert error.line == line
    assert words in error.message
