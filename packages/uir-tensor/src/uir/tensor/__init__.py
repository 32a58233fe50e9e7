"""UIR's Python front end (week 10): a Tensor that builds UOps, run by any installed backend."""
