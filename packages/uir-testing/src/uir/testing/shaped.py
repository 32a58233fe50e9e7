"""Week-4 programs over N elements that tests and benchmarks share, as `.uir` text templates
(`.format(n=N)`): the benchmark measures the very programs the tests check."""

from __future__ import annotations

A_TIMES_B_PLUS_C = """
%a = BUFFER f32[{n}] 0
%b = BUFFER f32[{n}] 1
%c = BUFFER f32[{n}] 2
%la = LOAD f32[{n}] %a
%lb = LOAD f32[{n}] %b
%lc = LOAD f32[{n}] %c
%m = MUL f32[{n}] %la %lb
%s = ADD f32[{n}] %m %lc
%out = SINK void %s
"""

SUM = """
%a = BUFFER f32[{n}] 0
%la = LOAD f32[{n}] %a
%s = REDUCE f32 %la (ADD, (0))
%out = SINK void %s
"""
