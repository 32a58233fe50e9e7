"""The plugin registry: pass order across plugins, owners, placement, and checked passes."""

import itertools
import textwrap

import pytest

from uir.core.dtypes import F32, I32, VOID
from uir.core.errors import BackendError, UsageError
from uir.core.ops import Op
from uir.core.plugins import Pass, load_registry, prepare, run_passes
from uir.core.uop import UOp

_fresh = itertools.count()


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Write a plugin module into the current directory and return its (unique) name."""
    monkeypatch.chdir(tmp_path)

    def write(body: str) -> str:
        name = f"uir_test_plugin_{next(_fresh)}"
        header = "from uir.core.plugins import Pass, hookimpl\n\n"
        (tmp_path / f"{name}.py").write_text(header + textwrap.dedent(body))
        return name

    return write


def passes(*specs: str) -> str:
    """A uir_passes hook returning identity passes, each `name stage [before=x] [after=y]
    [lowering=True]`."""
    made = []
    for spec in specs:
        name, stage, *places = spec.split()
        extra = "".join(
            f", {key}={value if value in ('True', 'False') else repr(value)}"
            for key, value in (place.split("=") for place in places)
        )
        made.append(f"Pass({name!r}, {stage!r}, 'a test pass', lambda s: s{extra})")
    return f"@hookimpl\ndef uir_passes():\n    return [{', '.join(made)}]\n"


def order(registry, among):
    return [p.name for p in registry.passes if p.name in among]


def test_passes_of_several_plugins_run_in_registration_order(plugin):
    a = plugin(passes("a1 simplify", "a2 lower"))
    b = plugin(passes("b1 simplify", "b2 inline"))
    names = {"a1", "a2", "b1", "b2"}
    assert order(load_registry([a, b]), names) == ["b2", "a1", "b1", "a2"]
    assert order(load_registry([b, a]), names) == ["b2", "b1", "a1", "a2"]


def test_a_lowering_runs_when_named_or_when_the_backend_takes_kernels(plugin):
    a = plugin(passes("a1 simplify", "a2 lower lowering=True", "a3 lower"))
    registry = load_registry([a])

    def chosen(only=(), skip=(), form="program"):
        return [p.name for p in registry.pipeline(only, skip, form) if p.name in ("a1", "a2", "a3")]

    assert chosen() == ["a1", "a3"]
    assert chosen(["a2", "a1"]) == ["a1", "a2"]  # pipeline order, whatever order they are named
    assert chosen(["a2"], ["a2"]) == []
    assert chosen(form="kernels") == ["a1", "a2", "a3"]
    assert chosen(["a1"], form="kernels") == ["a1", "a2"]  # named or not, the lowering runs
    assert chosen(skip=["a1"], form="kernels") == ["a2", "a3"]
    assert [p.name for p in registry.lowerings() if p.name in ("a1", "a2", "a3")] == ["a2"]


def test_a_lowering_cannot_be_skipped_for_a_backend_taking_kernels(plugin):
    registry = load_registry([plugin(passes("a2 lower lowering=True"))])
    with pytest.raises(UsageError, match="pass 'a2' cannot be skipped"):
        registry.pipeline(skip=["a2"], form="kernels")


def test_a_required_pass_runs_for_every_form_and_cannot_be_skipped(plugin):
    registry = load_registry([plugin(passes("a1 simplify", "a2 inline required=True"))])

    def chosen(only=(), skip=(), form="program"):
        return [p.name for p in registry.pipeline(only, skip, form) if p.name in ("a1", "a2", "a3")]

    assert chosen() == chosen(form="kernels") == ["a2", "a1"]
    assert chosen(["a1"]) == ["a2", "a1"]  # named or not
    assert chosen(skip=["a1"]) == ["a2"]
    for form in ("program", "kernels"):
        with pytest.raises(UsageError, match="pass 'a2' cannot be skipped"):
            registry.pipeline(skip=["a2"], form=form)


def test_a_pass_for_some_backends_is_left_out_of_the_others_default_pipeline(plugin):
    body = passes("a1 simplify", "a2 simplify")  # a2, the last, is made a pass for CPUs
    name = plugin(body.replace("lambda s: s)]", "lambda s: s, backends=('c', 'interp'))]"))
    registry = load_registry([name])

    def chosen(only=(), skip=(), backend=None):
        got = registry.pipeline(only, skip, "kernels", backend)
        return [p.name for p in got if p.name in ("a1", "a2")]

    assert chosen() == chosen(backend="c") == chosen(backend="interp") == ["a1", "a2"]
    assert chosen(backend="cuda") == ["a1"]  # a2's choices are made for CPUs
    assert chosen(["a2"], backend="cuda") == ["a2"]  # named, it runs anywhere
    assert chosen(skip=["a2"], backend="c") == ["a1"]


def test_the_tile_pass_is_for_the_cpu_backends_only():
    registry = load_registry()
    (tile,) = [p for p in registry.passes if p.name == "tile"]
    assert tile.backends == ("interp", "c")
    for backend, expected in (("c", True), ("interp", True), ("cuda", False), ("cuda-emu", False)):
        names = [p.name for p in registry.pipeline(form="kernels", backend=backend)]
        assert ("tile" in names) is expected, backend


def test_without_optimization_prepare_runs_the_passes_the_form_needs():
    seen = []

    def record(name):
        def run(s):
            seen.append(name)
            return s

        return run

    chain = [
        Pass("r", "inline", "required", record("r"), required=True),
        Pass("o", "simplify", "optimizing", record("o")),
        Pass("l", "lower", "lowering", record("l"), lowering=True),
    ]
    prepare(sink, "program", chain, optimize=False)
    assert seen == ["r"]
    seen.clear()
    prepare(sink, "kernels", chain, optimize=False)
    assert seen == ["r", "l"]
    seen.clear()
    prepare(sink, "kernels", chain)
    assert seen == ["r", "o", "l"]


def test_a_pass_places_itself_right_before_or_after_another_of_its_stage(plugin):
    a = plugin(passes("a1 simplify", "a2 simplify"))
    b = plugin(passes("b1 simplify before=a1", "b2 simplify after=a1", "b3 inline"))
    c = plugin(passes("c1 simplify after=a1", "c2 simplify after=b1"))
    names = {"a1", "a2", "b1", "b2", "b3", "c1", "c2"}
    assert order(load_registry([a, b, c]), names) == ["b3", "b1", "c2", "a1", "b2", "c1", "a2"]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (("x1 simplify after=nothing",), "no such pass"),
        (("x1 simplify", "x2 lower before=x1"), "another stage"),
        (("x1 simplify after=x2", "x2 simplify after=x1"), "circle"),
        (("x1 simplify", "x2 simplify", "x3 simplify before=x1 after=x2"), "both"),
    ],
)
def test_a_place_that_cannot_be_kept_is_an_error(plugin, specs, message):
    with pytest.raises(BackendError, match=message):
        load_registry([plugin(passes(*specs))])


def test_passes_and_backends_have_separate_owners(plugin):
    with_pass = plugin(passes("twin simplify"))
    with_backend = plugin(
        """
        class Twin:
            name = "twin"
            description = "a backend named like a pass"

            def available(self):
                return True, ""


        @hookimpl
        def uir_backends():
            return [Twin()]
        """
    )
    registry = load_registry([with_pass, with_backend])
    assert registry.pass_owners["twin"] == with_pass
    assert registry.backend_owners["twin"] == with_backend


def test_a_module_in_the_current_directory_is_found_and_sys_path_is_left_alone(plugin):
    import sys

    before = list(sys.path)
    name = plugin(passes("here simplify"))
    assert "here" in {p.name for p in load_registry([name]).passes}
    assert sys.path == before


def test_an_unimportable_module_is_a_usage_error(plugin):
    with pytest.raises(UsageError, match="cannot import plugin module"):
        load_registry([plugin("this is not python\n")])


# --- run_passes: every pass's result is checked -----------------------------------------------

x = UOp(Op.CONST, I32, (), 2)
sink = UOp(Op.SINK, VOID, (x.alu(Op.ADD, x),))


def test_passes_that_keep_the_program_run_in_order():
    trail = []

    def make(name, value):
        def run(s):
            trail.append(name)
            return UOp(Op.SINK, VOID, (UOp(Op.CONST, I32, (), value),))

        return Pass(name, "simplify", "", run)

    assert run_passes(sink, [make("first", 3), make("second", 4)]).src[0].arg == 4
    assert trail == ["first", "second"]


@pytest.mark.parametrize(
    ("run", "message"),
    [
        # an i32 output becomes CONST f32 1.5: valid, but not what the program prints
        (lambda s: UOp(Op.SINK, VOID, (UOp(Op.CONST, F32, (), 1.5),)), "changed the program's out"),
        (lambda s: UOp(Op.SINK, VOID, (x, x)), "changed the program's outputs"),
        (lambda s: UOp(Op.SINK, VOID, (UOp(Op.ADD, I32, (x, UOp(Op.CONST, F32, (), 1.0))),)),
         "produced an invalid program"),
        (lambda s: UOp(Op.SINK, VOID, (UOp(Op.CONST, I32, (), "two"),)), "invalid program"),
        (lambda s: x, "not a SINK"),
        (lambda s: 1 // 0, "ZeroDivisionError"),
    ],
)  # fmt: skip
def test_a_pass_that_breaks_the_program_is_named(run, message):
    with pytest.raises(BackendError, match=message) as error:
        run_passes(sink, [Pass("fine", "inline", "", lambda s: s), Pass("bad", "lower", "", run)])
    assert "pass 'bad'" in error.value.message


def test_the_first_pass_whose_result_is_invalid_is_named():
    invalid = UOp(Op.SINK, VOID, (UOp(Op.ADD, I32, (x, UOp(Op.CONST, F32, (), 1.0))),))
    pipeline = [
        Pass("fine", "inline", "", lambda s: s),
        Pass("bad", "simplify", "", lambda s: invalid),
        Pass("innocent", "lower", "", lambda s: s),
    ]
    with pytest.raises(BackendError, match="pass 'bad' produced an invalid program"):
        run_passes(sink, pipeline)
