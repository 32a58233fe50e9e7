"""UIR gradients (week 9): the `autodiff` pass rewrites every GRAD into the ops that compute it.

`rules.py` holds the derivative of every op as a rule table (one rule per op, run on the UOp with
the gradient it receives as context, as tinygrad's `pm_gradient`); `backward.py` the walk from a
loss that sums what each value receives; `passes.py` the pass and its registration.
"""
