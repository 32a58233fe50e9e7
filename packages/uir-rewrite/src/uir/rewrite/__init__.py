"""UIR rewrites: patterns, the graph rewrite engine, and the inline, fold and simplify passes."""
