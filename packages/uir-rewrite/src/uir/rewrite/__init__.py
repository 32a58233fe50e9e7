"""UIR rewrites: the inline, fold and simplify passes, rule tables run by uir.core.engine."""
