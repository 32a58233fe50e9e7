"""Shards: K/N slices that partition the work, and partial results merged only when they are
the complete shards 1..N of one run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uir.grading.shards import (
    Shard,
    ShardError,
    fingerprint,
    read_partials,
    select,
    write_partial,
)


@given(st.integers(0, 200), st.integers(1, 30))
def test_slices_partition_the_items_evenly(size: int, count: int) -> None:
    items = list(range(size))
    slices = [select(items, Shard(k, count)) for k in range(1, count + 1)]
    assert sorted(i for s in slices for i in s) == items  # each item in exactly one slice
    assert max(map(len, slices)) - min(map(len, slices)) <= 1
    assert all(s == sorted(s) for s in slices)  # each in the work's order


def test_slices_are_interleaved() -> None:
    assert select(list("abcdefg"), Shard(2, 3)) == ["b", "e"]
    assert select(list("abc"), None) == ["a", "b", "c"]


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "3", "a/b", "-1/2", "1/2/3"])
def test_malformed_shards_are_refused(text: str) -> None:
    with pytest.raises(ShardError):
        Shard.parse(text)


def test_parse_round_trips() -> None:
    assert Shard.parse(" 2 / 5 ") == Shard(2, 5)
    assert str(Shard(2, 5)) == "2/5"


def test_fingerprints_ignore_key_order_and_see_values() -> None:
    assert fingerprint({"a": 1, "b": [2, 3]}) == fingerprint({"b": [2, 3], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})


def _write(tmp_path: Path, name: str, shard: str, print_: str = "f", complete: bool = True) -> str:
    path = tmp_path / name
    path.mkdir()
    write_partial(
        str(path / "partial.json"), "k", print_, Shard.parse(shard), [shard], complete, {"n": 1}
    )
    return str(path)


def test_complete_shards_merge_in_shard_order(tmp_path: Path) -> None:
    parts = [_write(tmp_path, "b", "2/2"), _write(tmp_path, "a", "1/2")]
    merged = read_partials(parts, "k")
    assert [p.shard for p in merged] == [Shard(1, 2), Shard(2, 2)]
    assert [p.results() for p in merged] == [["1/2"], ["2/2"]]


def test_results_are_read_when_merged_and_a_file_replaced_meanwhile_is_refused(
    tmp_path: Path,
) -> None:
    (first,) = read_partials([_write(tmp_path, "a", "1/1")], "k")
    shutil.rmtree(tmp_path / "a")
    _write(tmp_path, "a", "1/1", print_="g")  # the shard run again, for another grading
    with pytest.raises(ShardError, match="changed while it was merged"):
        first.results()


@pytest.mark.parametrize(
    ("shards", "message"),
    [
        ([("1/3", "f"), ("3/3", "f")], "missing shards (of 3): 2"),
        ([("1/2", "f"), ("1/2", "f"), ("2/2", "f")], "shard 1/2 is given twice"),
        ([("1/2", "f"), ("2/2", "g")], "come from different runs"),
        ([("1/2", "f"), ("2/3", "f")], "split the work differently"),
    ],
)
def test_shards_that_do_not_make_one_run_are_refused(
    tmp_path: Path, shards: list[tuple[str, str]], message: str
) -> None:
    parts = [_write(tmp_path, f"p{i}", s, f) for i, (s, f) in enumerate(shards)]
    with pytest.raises(ShardError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_partials(parts, "k")


def test_an_unfinished_or_absent_shard_is_refused(tmp_path: Path) -> None:
    unfinished = _write(tmp_path, "a", "1/1", complete=False)
    with pytest.raises(ShardError, match="did not finish"):
        read_partials([unfinished], "k")
    with pytest.raises(ShardError, match="no partial result"):
        read_partials([str(tmp_path / "nowhere")], "k")
    with pytest.raises(ShardError, match="not a partial result of kind other"):
        read_partials([unfinished], "other")


def test_submitit_shards_get_a_day_unless_told() -> None:
    # Issue 28 item 6: submitit's own default (2 minutes for local jobs) stopped a 5-minute
    # shard with an unexplained "4".
    from uir.grading.executors import executor_parameters

    assert executor_parameters([])["timeout_min"] == 24 * 60
    given = executor_parameters(["timeout_min=20", "slurm_partition=long", "mem_gb=1.5"])
    assert given == {"timeout_min": 20, "slurm_partition": "long", "mem_gb": 1.5}
