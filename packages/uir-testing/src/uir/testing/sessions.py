"""Programs for tests of persistent sessions (uir.core.runtime) on every backend: a counter,
a second program over the counter's buffer, and a step of gradient descent with momentum whose
k-step results `numpy_sgd` works out with numpy alone."""

from __future__ import annotations

import numpy as np

COUNTER = """
%z = CONST i32 0
%b = BUFFER i32[1] 0
%p = INDEX i32 %b %z
%v = LOAD i32 %p
%one = CONST i32 1
%w = ADD i32 %v %one
%s = STORE void %p %w
%b1 = AFTER i32[1] %b %s
%out = SINK void %b1
"""

# Adds 10 to the counter's buffer: a second program over the same slot.
ADD_TEN = COUNTER.replace("%one = CONST i32 1", "%one = CONST i32 10")

# One step of gradient descent with momentum on the loss sum((w*x - y)^2): the gradient
# g = 2 (w x - y) x, the momentum m <- 0.9 m + g, the weights w <- w - 0.05 m. It prints the
# loss before the step, and the new weights and momentum (read back from their buffers).
X = (1.0, 0.5, -2.0, 0.25)
Y = (3.0, -1.0, 0.5, 2.0)
W0 = (0.1, 0.2, 0.3, 0.4)
SGD = f"""
%w0 = CONST f32[4] {W0}
%w = BUFFER f32[4] %w0 0
%m = BUFFER f32[4] 1
%x = CONST f32[4] {X}
%y = CONST f32[4] {Y}
%two = CONST f32 2.0
%beta = CONST f32 0.9
%lr = CONST f32 0.05
%two4 = EXPAND f32[4] %two
%beta4 = EXPAND f32[4] %beta
%lr4 = EXPAND f32[4] %lr
%wv = LOAD f32[4] %w
%mv = LOAD f32[4] %m
%p = MUL f32[4] %wv %x
%d = SUB f32[4] %p %y
%g0 = MUL f32[4] %d %x
%g = MUL f32[4] %g0 %two4
%mb = MUL f32[4] %mv %beta4
%m2 = ADD f32[4] %mb %g
%sm = STORE void %m %m2
%step = MUL f32[4] %m2 %lr4
%w2 = SUB f32[4] %wv %step
%sw = STORE void %w %w2
%sq = MUL f32[4] %d %d
%loss = REDUCE f32 %sq (ADD, (0))
%w1 = AFTER f32[4] %w %sw
%m1 = AFTER f32[4] %m %sm
%out = SINK void %loss %w1 %m1
"""


def numpy_sgd(steps: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The weights and momentum after `steps` steps, and the last step's loss, in float32."""
    f = np.float32
    x, y = np.array(X, f), np.array(Y, f)
    w, m = np.array(W0, f), np.zeros(4, f)
    loss = f(0)
    for _ in range(steps):
        d = w * x - y
        loss = f(np.sum(d * d, dtype=f))
        m = m * f(0.9) + (d * x) * f(2.0)
        w = w - m * f(0.05)
    return w, m, float(loss)
