"""The random program generator: everything it draws verifies, and it draws every week-1 op."""

from hypothesis import HealthCheck, Phase, given, settings

from uir.core.ops import ALU, Op
from uir.core.parse import Program
from uir.core.strategies import programs
from uir.core.verify import verify

WEEK1_OPS = ALU | {Op.CONST, Op.PARAM, Op.CALL, Op.STACK, Op.INDEX, Op.SINK}
DRAW = settings(
    max_examples=1000,
    phases=[Phase.generate],  # no shrinking: we only look at what is drawn
    derandomize=True,  # the same draws every run, so the coverage test is not flaky
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_every_drawn_program_verifies(sink):
    assert sink.op is Op.SINK
    verify(Program(sink, {}))


def test_the_generator_draws_every_week1_op_and_nested_calls():
    seen: set[Op] = set()
    nested = []

    @DRAW
    @given(programs())
    def draw(sink):
        seen.update(u.op for u in sink.toposort())
        for call in (u for u in sink.toposort() if u.op is Op.CALL):
            nested.extend(u for u in call.src[0].toposort(bodies=False) if u.op is Op.CALL)

    draw()
    assert seen == WEEK1_OPS
    assert nested
