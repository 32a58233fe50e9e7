"""uir.core.runtime: sessions on every backend installed and usable here (the interpreter, and C
and cuda-emu where their packages and compilers are), checked against numpy's arithmetic, the
interpreter's `evaluate` and each backend's own forked runner on the same contents."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from uir.core import parse, print_program
from uir.core.dtypes import DTYPES
from uir.core.errors import BackendError, VerifyError
from uir.core.interpret import evaluate, execute, iteration_budget
from uir.core.plugins import form_of, load_registry, prepare
from uir.core.runtime import open_session
from uir.core.uop import UOp
from uir.testing.compare import same_outputs
from uir.testing.programs import programs
from uir.testing.sessions import ADD_TEN, COUNTER, SGD, X, Y, numpy_sgd

REGISTRY = load_registry()


def _usable(name: str) -> tuple[bool, str]:
    if name not in REGISTRY.backends:
        return False, f"backend {name} is not installed"
    return REGISTRY.backend(name).available()


def program(text: str) -> UOp:
    return parse(text).sink


BACKENDS = [
    pytest.param(name, marks=pytest.mark.skipif(not _usable(name)[0], reason=_usable(name)[1]))
    for name in ("interp", "c", "cuda-emu")
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_counter_run_a_thousand_times_ends_at_a_thousand(backend: str) -> None:
    with open_session(program(COUNTER), backend) as session:
        for run in range(1, 1001):
            (out,) = session.run()
            if run in (1, 2, 500):  # every run sees what the run before it stored
                assert out.tolist() == [run]
        assert out.tolist() == [1000]
        assert session.memory[0].read().tolist() == [1000]


@pytest.mark.parametrize("backend", BACKENDS)
def test_sgd_buffers_after_k_runs_are_numpys_k_steps(backend: str) -> None:
    with open_session(program(SGD), backend) as session:
        for k in range(1, 41):
            loss, w, m = session.run()
            want_w, want_m, want_loss = numpy_sgd(k)
            # Elementwise float32 arithmetic rounds once per op, in numpy as in UIR: bit-equal.
            assert w.tobytes() == want_w.tobytes() and m.tobytes() == want_m.tobytes()
            assert session.memory[0].read().tobytes() == want_w.tobytes()
            assert session.memory[1].read().tobytes() == want_m.tobytes()
            # The sum's order of additions is the backend's (uir.md REDUCE): nearly numpy's.
            assert loss.dtype == np.float32 and loss == pytest.approx(want_loss, rel=1e-6)
    assert numpy_sgd(40)[2] < numpy_sgd(1)[2] / 10  # the loss fell: the steps really descend


@pytest.mark.parametrize("backend", BACKENDS)
def test_written_contents_are_what_the_next_run_starts_from(backend: str) -> None:
    with open_session(program(SGD), backend) as session:
        w = np.array([[1.5, -0.5], [2.0, 0.0]], np.float32)  # any shape of 4 elements
        session.memory[0].write(w)
        session.memory[1].write(np.zeros(4))
        assert session.memory[0].read().tolist() == w.reshape(-1).tolist()
        loss, w1, _ = session.run()
        f, flat = np.float32, w.reshape(-1)
        d = flat * np.array(X, f) - np.array(Y, f)
        assert loss == pytest.approx(float(np.sum(d * d)), rel=1e-6)
        # The momentum was zeroed: the step is the gradient's alone.
        assert w1.tobytes() == (flat - ((d * np.array(X, f)) * f(2.0)) * f(0.05)).tobytes()
        with pytest.raises(BackendError, match=r"slot 0 holds f32\[4\].*cannot write 3"):
            session.memory[0].write(np.zeros(3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_equals_the_forked_runner_and_the_interpreter_on_the_same_contents(
    backend: str,
) -> None:
    sink = program(SGD)
    chosen = REGISTRY.backend(backend)
    form = form_of(chosen)
    compiled = chosen.compile(prepare(sink, form, REGISTRY.pipeline(form=form)))
    with open_session(sink, backend) as session:
        for _ in range(7):
            session.run()
        contents = {slot: m.read() for slot, m in session.memory.items()}
        expected_compiled = compiled.run(contents)
        expected_interpreted = evaluate(sink, contents)
        got = session.run()
    for a, b, c in zip(got, expected_compiled, expected_interpreted, strict=True):
        assert a.dtype == b.dtype == c.dtype and a.shape == b.shape == c.shape
        assert a.tobytes() == b.tobytes()
        np.testing.assert_allclose(a, c, rtol=1e-6)  # the loss's additions may be reordered


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_sessions_sharing_one_memory_see_each_others_stores(backend: str) -> None:
    counting = open_session(program(COUNTER), backend)
    adding = open_session(program(ADD_TEN), backend, {0: counting.memory[0]})
    assert adding.memory[0] is counting.memory[0]
    counting.run()
    counting.run()
    assert adding.run()[0].tolist() == [12]
    assert counting.run()[0].tolist() == [13]
    adding.close()  # a session never frees the memory it was given
    assert counting.run()[0].tolist() == [14]
    other = open_session(program(ADD_TEN), backend, {0: counting.memory[0]})
    counting.close()  # ... and its owner frees it: a session still sharing it refuses to run
    with pytest.raises(BackendError, match="slot 0 was freed"):
        other.run()
    with pytest.raises(BackendError, match="slot 0 was freed"):
        open_session(program(ADD_TEN), backend, {0: counting.memory[0]})
    with pytest.raises(BackendError, match="session is closed"):
        counting.run()
    other.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shared_memory_of_another_type_is_refused_naming_the_slot_and_both_types(
    backend: str,
) -> None:
    with open_session(program(COUNTER), backend) as counting:
        floats = COUNTER.replace("i32", "f32").replace("CONST f32 0", "CONST i32 0")
        with pytest.raises(BackendError, match=r"slot 0 holds i32\[1\], but BUFFER 0 is f32\[1\]"):
            open_session(program(floats), backend, {0: counting.memory[0]})
        longer = COUNTER.replace("i32[1]", "i32[2]")
        with pytest.raises(BackendError, match=r"slot 0 holds i32\[1\], but BUFFER 0 is i32\[2\]"):
            open_session(program(longer), backend, {0: counting.memory[0]})
        with pytest.raises(BackendError, match="slot 5: the program has no BUFFER 5"):
            open_session(program(COUNTER), backend, {5: counting.memory[0]})
        # One memory for two buffers would make them overlap, which compiled code assumes never.
        two = program(
            """
            %a = BUFFER i32[1] 0
            %b = BUFFER i32[1] 1
            %out = SINK void %a %b
            """
        )
        with pytest.raises(BackendError, match="slot 1 is also given for slot 0"):
            open_session(two, backend, {0: counting.memory[0], 1: counting.memory[0]})
        with open_session(two, backend, {1: counting.memory[0]}) as elsewhere:
            counting.run()  # a memory may sit at another slot of another program
            assert [out.tolist() for out in elsewhere.run()] == [[0], [1]]


def test_a_memory_of_another_backend_is_refused() -> None:
    with open_session(program(COUNTER), "interp") as counting:
        fake = SimpleNamespace(name="other", available=lambda: (True, ""), session=None)
        fake.session = lambda *args: pytest.fail("the session must not be opened")
        with pytest.raises(BackendError, match="slot 0 belongs to backend 'interp', not 'other'"):
            open_session(program(COUNTER), fake, {0: counting.memory[0]})


def test_a_backend_without_sessions_is_named() -> None:
    plain = SimpleNamespace(name="plain", available=lambda: (True, ""))
    with pytest.raises(BackendError, match="backend 'plain' cannot keep"):
        open_session(program(COUNTER), plain)


def test_a_bad_program_is_the_verifiers_error() -> None:
    bad = COUNTER.replace("%w = ADD i32 %v %one", "%w = ADD f32 %v %one")
    with pytest.raises(VerifyError):
        open_session(program(bad), "interp")


def test_an_unknown_backend_is_a_usage_error() -> None:
    from uir.core.errors import UsageError

    with pytest.raises(UsageError, match="unknown backend 'nope'"):
        open_session(program(COUNTER), "nope", registry=REGISTRY)


# Buffers of the dtypes whose ABI form differs from numpy's (bools as bytes, f16 and bf16 as
# bits) and one of each other kind: what is written reads back, and a run sees it.
VALUES = {
    "bool": [True, False, True],
    "f16": [0.5, -2.0, 65504.0],
    "bf16": [1.0, -0.0078125, 2.0**127],
    "u8": [0, 255, 7],
    "i64": [-(2**62), 5, 2**40],
    "f64": [0.1, -1e300, 2.5],
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", VALUES)
def test_every_dtype_reads_back_what_was_written_and_a_run_sees_it(
    backend: str, dtype: str
) -> None:
    text = f"""
    %b = BUFFER {dtype}[3] 0
    %v = LOAD {dtype}[3] %b
    %out = SINK void %v
    """
    sink = program(text)
    with open_session(sink, backend) as session:
        memory = session.memory[0]
        storage = sink.src[0].dtype.storage
        values = np.array(VALUES[dtype], dtype=storage)
        memory.write(values)
        assert memory.read().dtype == storage
        assert memory.read().tobytes() == values.tobytes()
        (out,) = session.run()
        assert out.tobytes() == values.tobytes()
        assert out.tobytes() == evaluate(sink, {0: values})[0].tobytes()


# The interpreter's session compiles once and refills the closures' own lists each run: random
# programs of weeks 2-6 (LOCALs, windows, loops, shaped values) give, on their third run, what
# `execute` gives from the contents the first two left, buffers included.
@pytest.mark.parametrize("week", [2, 3, 4, 5, 6])
@settings(
    max_examples=15,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_an_interpreter_sessions_third_run_is_a_fresh_evaluation(
    week: int, data: st.DataObject
) -> None:
    dtypes = tuple(d for d in DTYPES.values() if not d.is_void)
    sink = data.draw(programs(week=week, dtypes=dtypes, approximate=False))
    with open_session(sink, "interp", optimize=False) as session:
        session.run()
        first = session.run()
        kept = [out.copy() for out in first]
        contents = {slot: m.read() for slot, m in session.memory.items()}
        got = session.run()
        outputs, final = execute(sink, contents)
        text = print_program(sink)
        assert same_outputs(got, outputs), text
        for slot, want in final.items():
            memory = session.memory[slot]
            want = np.asarray(want, dtype=memory.type.dtype.storage)
            assert same_outputs([memory.read()], [want]), text
        assert same_outputs(first, kept), text  # later runs leave what a run returned alone


LOADED_END = """
%z = CONST i32 0
%nb = BUFFER i32[1] 0
%acc = BUFFER i32[1] 1
%pn = INDEX i32 %nb %z
%n = LOAD i32 %pn
%i = RANGE i32 %n 0
%pa = INDEX i32 %acc %z
%a = LOAD i32 %pa
%a1 = ADD i32 %a %i
%s = STORE void %pa %a1
%e = END void %s %i
%acc1 = AFTER i32[1] %acc %e
%out = SINK void %acc1
"""


def test_an_interpreter_run_over_its_budget_changes_no_buffer() -> None:
    with open_session(program(LOADED_END), "interp") as session:
        session.memory[0].write([10])  # the loop's end, loaded from memory: counted as it runs
        # Each iteration stores what it started from plus the counter: the last one wins.
        assert session.run()[0].tolist() == [9]
        session.memory[0].write([1000])
        with iteration_budget(100), pytest.raises(BackendError, match="budget of 100"):
            session.run()
        assert session.memory[1].read().tolist() == [9]  # the failed run stored nothing
        session.memory[0].write([4])
        with iteration_budget(100):
            assert session.run()[0].tolist() == [9 + 3]


@pytest.mark.skipif(not _usable("c")[0], reason=_usable("c")[1])
def test_the_spec_example_runs_as_its_comments_say() -> None:
    spec = (Path(__file__).resolve().parents[3] / "spec" / "runtime.md").read_text()
    section = spec.split("## 7. Example", 1)[1]
    code = "\n".join(
        line[4:] for line in section.split("\n## ", 1)[0].splitlines() if line.startswith("    ")
    )
    namespace: dict[str, object] = {}
    exec(compile(code, "spec/runtime.md", "exec"), namespace)
    out, adding, counting = namespace["out"], namespace["adding"], namespace["counting"]
    assert out.tolist() == [1000]  # type: ignore[attr-defined]
    assert adding.closed and counting.closed  # type: ignore[attr-defined]
    assert counting.memory[0].closed  # type: ignore[attr-defined]
