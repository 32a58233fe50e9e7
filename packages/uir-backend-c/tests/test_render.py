"""The C backend on programs whose answers were worked out by hand (the comments show how), for
the dtypes and corners the week-1 suite does not reach, and the rendered text's contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from uir.backend.c import toolchain
from uir.backend.c.plugin import CBackend, compile_many, load_source
from uir.backend.c.render import render_c
from uir.core import BackendError, parse, verify
from uir.core.output import format_value
from uir.testing.backends import scheduled

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")


def program(body: str):
    p = parse(body, "t.uir")
    verify(p)
    return p.sink


# (program text, printed lines)
CASES = [
    # i8 wraps: 127 + 1 = -128
    ("%a = CONST i8 127\n%b = CONST i8 1\n%c = ADD i8 %a %b\n%o = SINK void %c\n", ["-128"]),
    # u16 65535 * 65535 = 0xFFFE0001; low 16 bits are 1 (in int this would overflow: UB)
    ("%a = CONST u16 65535\n%c = MUL u16 %a %a\n%o = SINK void %c\n", ["1"]),
    # i16 -32768 * -1 = 32768 wraps to -32768
    (
        "%a = CONST i16 -32768\n%b = CONST i16 -1\n%c = MUL i16 %a %b\n%o = SINK void %c\n",
        ["-32768"],
    ),
    # i8 SHR: the count 9 & 7 = 1; -128 >> 1 = -64 (arithmetic)
    ("%a = CONST i8 -128\n%b = CONST i8 9\n%c = SHR i8 %a %b\n%o = SINK void %c\n", ["-64"]),
    # u8 SHR is logical: 200 >> 3 = 25
    ("%a = CONST u8 200\n%b = CONST u8 3\n%c = SHR u8 %a %b\n%o = SINK void %c\n", ["25"]),
    # i64 MIN / -1 = MIN, MIN % -1 = 0
    (
        "%a = CONST i64 -9223372036854775808\n%b = CONST i64 -1\n%c = IDIV i64 %a %b\n"
        "%d = MOD i64 %a %b\n%o = SINK void %c %d\n",
        ["-9223372036854775808", "0"],
    ),
    # u32 5 / 0 = all ones; u8 7 % 0 = 7
    (
        "%a = CONST u32 5\n%z = CONST u32 0\n%c = IDIV u32 %a %z\n%x = CONST u8 7\n"
        "%y = CONST u8 0\n%d = MOD u8 %x %y\n%o = SINK void %c %d\n",
        ["4294967295", "7"],
    ),
    # f32 -> u8 saturates: 300.5 -> 255, -3.7 -> 0, NaN -> 0
    (
        "%a = CONST f32 300.5\n%b = CONST f32 -3.7\n%n = CONST f32 nan\n%c = CAST u8 %a\n"
        "%d = CAST u8 %b\n%e = CAST u8 %n\n%o = SINK void %c %d %e\n",
        ["255", "0", "0"],
    ),
    # f64 1e19 -> i64 saturates high; f32 -1e30 -> i64 saturates low
    (
        "%a = CONST f64 1e19\n%b = CONST f32 -1e30\n%c = CAST i64 %a\n%d = CAST i64 %b\n"
        "%o = SINK void %c %d\n",
        ["9223372036854775807", "-9223372036854775808"],
    ),
    # i64 2^62 + 2^54 + 1 -> bf16 (8 bits): just above the halfway point 2^62 + 2^54, so it
    # rounds up to 2^62 + 2^55 = 4.6477e18. Through double first, the +1 is lost, the tie goes
    # to even, and the answer would be 2^62 = 4.612e18.
    (
        "%a = CONST i64 4629700416936869889\n%c = CAST bf16 %a\n%o = SINK void %c\n",
        ["4.648e+18"],
    ),
    # u64 max -> f32 rounds to 2^64
    (
        "%a = CONST u64 18446744073709551615\n%c = CAST f32 %a\n%o = SINK void %c\n",
        ["1.84467441e+19"],
    ),
    # f16: 2048 + 3 = 2051 lies halfway between 2050 and 2052 (the ulp is 2): even is 2052
    ("%a = CONST f16 2048\n%b = CONST f16 3\n%c = ADD f16 %a %b\n%o = SINK void %c\n", ["2052"]),
    # f16: 65504 + 16 = 65520 is halfway to 65536, which is past the largest f16: inf
    ("%a = CONST f16 65504\n%b = CONST f16 16\n%c = ADD f16 %a %b\n%o = SINK void %c\n", ["inf"]),
    # bf16: (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14; with 8 bits that is 1 + 2^-6 = 1.015625
    ("%a = CONST bf16 1.0078125\n%c = MUL bf16 %a %a\n%o = SINK void %c\n", ["1.016"]),
    # i16 0x3c00 = 15360 is the f16 bit pattern of 1.0, and back
    (
        "%a = CONST i16 15360\n%c = BITCAST f16 %a\n%d = BITCAST i16 %c\n%o = SINK void %c %d\n",
        ["1", "15360"],
    ),
    # IEEE maximum/minimum: max(-0, +0) = +0, min(-0, +0) = -0, max(NaN, 1) = NaN
    (
        "%m = CONST f32 -0.0\n%p = CONST f32 0.0\n%n = CONST f32 nan\n%one = CONST f32 1\n"
        "%a = MAX f32 %m %p\n%b = MIN f32 %p %m\n%c = MAX f32 %n %one\n%o = SINK void %a %b %c\n",
        ["0", "-0", "nan"],
    ),
    # f64 keeps 17 digits: 0.1 + 0.2 = 0.30000000000000004
    (
        "%a = CONST f64 0.1\n%b = CONST f64 0.2\n%c = ADD f64 %a %b\n%o = SINK void %c\n",
        ["0.30000000000000004"],
    ),
    # shaped values compute elementwise: wrap, total division, IEEE max, NaN compares, casts
    (
        "%a = CONST i32[3] (2147483647, -5, 7)\n%b = CONST i32[3] (1, 2, 0)\n"
        "%c = ADD i32[3] %a %b\n%d = IDIV i32[3] %a %b\n%f = CONST f32[3] (1.5, nan, -0.0)\n"
        "%g = CONST f32[3] (2.5, 1, 0.0)\n%m = MAX f32[3] %f %g\n%lt = CMPLT bool[3] %f %g\n"
        "%w = WHERE f32[3] %lt %f %g\n%k = CAST i32[3] %f\n"
        "%out = SINK void %c %d %m %lt %w %k\n",
        [
            "-2147483648 -3 7",
            "2147483647 -2 -1",
            "2.5 nan 0",
            "true false false",
            "1.5 1 0",
            "1 0 0",
        ],
    ),
    # a gated load whose gate is false reads nothing and gives +0.0, even with index 100
    (
        "%d = CONST f32[2] (5, 6)\n%b = BUFFER f32[2] %d 0\n%i = CONST i32 100\n"
        "%t = CONST i32 2\n%g = CMPLT bool %i %t\n%p = INDEX f32 %b %i %g\n%v = LOAD f32 %p\n"
        "%o = SINK void %v\n",
        ["0"],
    ),
    # a store through a window [1, 3) at window index 1 writes buffer element 2
    (
        "%b = BUFFER i32[3] 4\n%w = SHRINK i32[2] %b ((1, 3))\n%one = CONST i32 1\n"
        "%p = INDEX i32 %w %one\n%s = STORE void %p %one\n%b1 = AFTER i32[3] %b %s\n"
        "%o = SINK void %b1\n",
        ["0 0 1"],
    ),
    # a load of version 0 runs before the store that makes version 1, whatever the SINK order
    (
        "%d = CONST i32[1] (7)\n%b = BUFFER i32[1] %d 0\n%z = CONST i32 0\n"
        "%p = INDEX i32 %b %z\n%v = LOAD i32 %p\n%n = CONST i32 9\n%s = STORE void %p %n\n"
        "%b1 = AFTER i32[1] %b %s\n%o = SINK void %b1 %v\n",
        ["9", "7"],
    ),
    # a LOCAL starts zeroed; bools in memory
    (
        "%l = LOCAL bool[2] 0\n%one = CONST i32 1\n%z = CONST i32 0\n%p = INDEX bool %l %one\n"
        "%t = CONST bool true\n%s = STORE void %p %t\n%l1 = AFTER bool[2] %l %s\n"
        "%q = INDEX bool %l1 %z\n%r = INDEX bool %l1 %one\n%a = LOAD bool %q\n%b = LOAD bool %r\n"
        "%o = SINK void %a %b\n",
        ["false", "true"],
    ),
]


@pytest.fixture(scope="module")
def compiled():
    return compile_many([scheduled(s) for s in [program(text) for text, _ in CASES]])


@pytest.mark.parametrize("case", range(len(CASES)))
def test_c_backend_prints_the_hand_worked_result(compiled, case):
    sink = program(CASES[case][0])
    values = compiled[case].run()
    assert [format_value(v, s.dtype) for v, s in zip(values, sink.src, strict=True)] == CASES[case][
        1
    ]


def test_inputs_replace_a_buffers_initial_contents():
    sink = program(
        "%b = BUFFER i32[2] 3\n%z = CONST i32 0\n%p = INDEX i32 %b %z\n%v = LOAD i32 %p\n"
        "%w = ADD i32 %v %v\n%s = STORE void %p %w\n%b1 = AFTER i32[2] %b %s\n%o = SINK void %b1\n"
    )
    (out,) = CBackend().compile(scheduled(sink)).run({3: [21, 5]})
    assert out.tolist() == [42, 5]


ABI_PROGRAM = (
    "%d = CONST f16[2] (1, 2)\n%b = BUFFER f16[2] %d 5\n%c = BUFFER bool[1] 1\n"
    "%z = CONST i32 0\n%p = INDEX f16 %b %z\n%v = LOAD f16 %p\n%k = CONST i32 7\n"
    "%o = SINK void %c %k %v %b\n"
)


def test_the_entry_point_takes_buffers_by_slot_then_value_outputs():
    text = CBackend().render(scheduled(program(ABI_PROGRAM)))
    assert (
        "void uir_program(uint8_t *restrict buf1, uint16_t *restrict buf5, "
        "int32_t *restrict out0, uint16_t *restrict out1) {" in text
    )


def test_division_guards_go_only_where_bounds_do_not_prove_them():
    by_const = "%a = CONST i32 7\n%b = CONST i32 3\n%c = IDIV i32 %a %b\n%o = SINK void %c\n"
    text = CBackend().render(scheduled(program(by_const)))
    assert "(int32_t)(v0 / v1)" in text and "uir_idiv_i32" not in text
    loaded = (
        "%b = BUFFER i32[2] 0\n%z = CONST i32 0\n%p = INDEX i32 %b %z\n%v = LOAD i32 %p\n"
        "%c = IDIV i32 %v %v\n%o = SINK void %c\n"
    )
    assert "uir_idiv_i32(" in CBackend().render(scheduled(program(loaded)))


def test_float_constants_are_exact_hex_literals():
    # 0.1 in f32 is 0x3dcccccd = 0x1.99999ap-4
    text = CBackend().render(scheduled(program("%a = CONST f32 0.1\n%o = SINK void %a\n")))
    assert "0x1.99999a0000000p-4f" in text


def test_compiler_flags_forbid_contraction_and_fast_math():
    assert "-ffp-contract=off" in toolchain.FLAGS
    assert not any("fast-math" in f and "no" not in f for f in toolchain.FLAGS)


def test_unavailable_without_a_compiler(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    ok, reason = CBackend().available()
    assert not ok and "compiler" in reason


def test_the_cache_returns_the_library_without_compiling_again(monkeypatch, tmp_path):
    monkeypatch.setenv("UIR_CACHE_DIR", str(tmp_path))
    source = "int uir_cache_probe(void) { return 42; }\n"
    first = toolchain.compile_shared([source])

    def no_compiler(argv):
        raise AssertionError("compiled again")

    monkeypatch.setattr(toolchain, "run_compiler", no_compiler)
    assert toolchain.compile_shared([source]) == first
    assert first.parent == tmp_path


def test_the_render_grader_runs_hand_written_c_under_the_programs_abi():
    # A student's rendering of 6.3's example: buffer 0 starts (10, 20, 30); element 1 doubles.
    sink = program(
        "%d = CONST i32[3] (10, 20, 30)\n%b = BUFFER i32[3] %d 0\n%i1 = CONST i32 1\n"
        "%p = INDEX i32 %b %i1\n%v = LOAD i32 %p\n%w = ADD i32 %v %v\n%s = STORE void %p %w\n"
        "%b1 = AFTER i32[3] %b %s\n%n = CONST i32 5\n%out = SINK void %b1 %n\n"
    )
    student = (
        "#include <stdint.h>\n"
        "void uir_program(int32_t *buf0, int32_t *out0) {\n"
        "    buf0[1] = (int32_t)((uint32_t)buf0[1] * 2u);\n"
        "    out0[0] = 5;\n"
        "}\n"
    )
    values = load_source(student, sink).run()
    assert [format_value(v, s.dtype) for v, s in zip(values, sink.src, strict=True)] == [
        "10 40 30",
        "5",
    ]


def test_an_unwritable_cache_is_a_backend_error(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("UIR_CACHE_DIR", str(blocker / "cache"))  # under a file: mkdir fails
    with pytest.raises(BackendError, match="compile cache"):
        toolchain.compile_shared(["int uir_unwritable_probe(void) { return 1; }\n"])


def test_the_header_names_each_outputs_sink_source_and_unused_buffers_are_voided():
    # SINK void %c %k %v %b: source 0 is slot 1 (read back, never touched in the body), sources 1
    # and 2 are values (out0, out1), source 3 is slot 5 (loaded from).
    text = CBackend().render(scheduled(program(ABI_PROGRAM)))
    assert " *   out0: SINK source 1, int32_t[1] (i32)" in text
    assert " *   out1: SINK source 2, uint16_t[1] (f16)" in text
    assert "(void)buf1;" in text and "(void)buf5;" not in text


def test_the_backend_takes_a_schedule_not_a_program():
    # the pipeline lowers and schedules (uir.core.plugins.prepare); a backend never does it again
    sink = program((ROOT / "suites" / "week1" / "call_spec_example.uir").read_text())
    for use in (CBackend().render, CBackend().compile):
        with pytest.raises(BackendError, match="takes a schedule of kernels"):
            use(sink)
    assert "CALL" not in render_c(scheduled(sink))  # scheduled: CALLs inlined by the pipeline
