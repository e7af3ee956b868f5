"""The scan engines, ranges and process pool give the same answer, and the
scan keeps no Python object per hit.

Both engines run in every CI run: hyperscan (the wheel is a dependency on
x86-64 Linux) and the RE2 fallback that other platforms get.
"""

from __future__ import annotations

import dataclasses
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from mwms_doctor.ingest import logfile, multipattern, scan, templates
from mwms_doctor.ingest.logfile import Limits, LogTask, read_logs
from mwms_doctor.ingest.scan import merge, scan_file, scan_range, split_points

from .paths import RUNS

PLAIN_RUNS = sorted(RUNS.glob("*/logs/worker-*.log"))
ENGINES = ["hyperscan", "re2"]


@pytest.fixture
def use_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    def use(name: str) -> None:
        monkeypatch.setenv("MWMS_DOCTOR_SCAN_ENGINE", name)
        scan.reset_engine()
        templates.reset_prefilter()
        assert scan.engine().name == name

    yield use
    monkeypatch.delenv("MWMS_DOCTOR_SCAN_ENGINE", raising=False)
    scan.reset_engine()
    templates.reset_prefilter()


def test_hyperscan_is_installed_here() -> None:
    """CI installs the wheel: the fast path is the one under test, not skipped."""
    assert multipattern.hyperscan_module() is not None


def _noisy_log(path: Path, epochs: int = 300) -> Path:
    """A recorded failure with thousands of progress lines and warnings between."""
    src = (RUNS / "peer_killed" / "logs" / "worker-0.log").read_text()
    head, tail = src.split("Epoch 1/", 1)
    body = "".join(
        f"Epoch {n}/9999\n"
        + "".join(f"step {i}: samples/s=3012.5 lr=0.001\n" for i in range(40))
        + (f"W1121 10:11:{n % 60:02d}.000000 1 ring.cc:1] slow all-reduce {n}\n" if n % 3 == 0 else "")
        + "8/8 - 0s - loss: 0.6112 - accuracy: 0.6302 - 244ms/epoch - 30ms/step\n"
        for n in range(1, epochs)
    )
    path.write_text(head + body + "Epoch 1/" + tail)
    return path


@pytest.mark.parametrize("limits", [(None, None), (40, 20)], ids=["all", "thinned"])
def test_engines_find_the_same_lines(tmp_path: Path, use_engine, limits) -> None:  # type: ignore[no-untyped-def]
    files = [*PLAIN_RUNS[:12], _noisy_log(tmp_path / "noisy.log")]
    got = {}
    for name in ENGINES:
        use_engine(name)
        got[name] = [scan_file(p, limits) for p in files]
    for a, b in zip(got["hyperscan"], got["re2"], strict=True):
        assert (a.hits, a.n_lines, a.n_matched, a.dropped, a.dropped_frequent) == (
            b.hits,
            b.n_lines,
            b.n_matched,
            b.dropped,
            b.dropped_frequent,
        ), a.path


@pytest.mark.parametrize("block", [64 << 10, 4 << 20], ids=["many-blocks", "one-block"])
def test_thinning_keeps_the_first_and_last_of_each_group(tmp_path: Path, monkeypatch, block: int) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(scan, "BLOCK", block)
    path = _noisy_log(tmp_path / "noisy.log")
    everything = scan_file(path)
    thin = scan_file(path, (40, 20))
    frequent = [h for h in everything.hits if h.frequent]
    other = [h for h in everything.hits if not h.frequent]
    assert len(frequent) > 20 and len(other) > 40
    assert [h for h in thin.hits if h.frequent] == frequent[:10] + frequent[-10:]
    assert [h for h in thin.hits if not h.frequent] == other[:20] + other[-20:]
    assert thin.dropped == len(other) - 40
    # Frequent lines between the first and the last few are not counted one
    # by one (that is most of a long log's lines): the counts are lower bounds.
    assert everything.frequent_counted
    assert 0 <= thin.dropped_frequent <= len(frequent) - 20
    assert thin.n_matched <= everything.n_matched == len(everything.hits)


@pytest.mark.parametrize("pieces", [2, 3, 7])
def test_a_file_scanned_in_ranges_is_the_file_scanned_whole(tmp_path: Path, monkeypatch, pieces: int) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(scan, "BLOCK", 64 << 10)  # small blocks: several per range
    path = _noisy_log(tmp_path / "noisy.log", 900)
    size = path.stat().st_size
    ranges = split_points(path, size, pieces)
    assert len(ranges) == pieces
    data = path.read_bytes()
    assert all(a == 0 or data[a - 1 : a] == b"\n" for a, _ in ranges)
    for limits in ((None, None), (40, 20)):
        whole = scan_file(path, limits)
        merged = merge(path, size, [scan_range(path, a, b, limits) for a, b in ranges], limits)
        if limits == (None, None):
            assert merged == whole
        else:  # the same lines; frequent ones in the middle are counted as far as each range read them
            assert (merged.hits, merged.n_lines, merged.dropped) == (whole.hits, whole.n_lines, whole.dropped)
            assert not merged.frequent_counted


def test_a_log_is_read_up_to_its_size_when_the_read_began(tmp_path: Path) -> None:
    """A log still being written: what is appended during the analysis is not read."""
    path = _noisy_log(tmp_path / "growing.log")
    before = scan_file(path)
    size = path.stat().st_size
    with open(path, "ab") as fh:
        fh.write(b"E1121 10:11:12.000000 1 x.cc:1] appended later\n" * 1000)
    during = scan_file(path, size=size)
    assert dataclasses.replace(during) == before
    (log,) = logfile.parse_scanned(during, "growing.log", 2026, None)
    assert not any("appended later" in t for t in log.text)
    assert log.n_bytes == size


def test_a_pool_of_processes_reads_like_one(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(logfile, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(logfile, "RANGE_BYTES", 200_000)  # the big file is scanned in ranges
    tasks = [
        LogTask(p, p.name, 2026, None) for p in [*PLAIN_RUNS[:6], _noisy_log(tmp_path / "noisy.log", 900)]
    ]
    tasks.append(LogTask(tmp_path / "missing.log", "missing.log", 2026, None))
    seen: list[tuple[int, int, int, int]] = []
    serial = read_logs(tasks, processes=1)
    pooled = read_logs(tasks, processes=2, progress=lambda *a: seen.append(a))
    assert isinstance(serial[-1], OSError) and isinstance(pooled[-1], OSError)
    for a, b in zip(serial[:-1], pooled[:-1], strict=True):
        assert isinstance(a, list) and isinstance(b, list)
        assert [vars(x) for x in a] == [vars(x) for x in b]
    assert seen and seen[-1][0] == seen[-1][1] and seen[-1][2] == seen[-1][3] == len(tasks)


def _warnings(path: Path, n: int) -> Path:
    line = b"W1121 10:11:12.345678 2795 ring_reducer.cc:1] Slow all-reduce: step %d took too long\n"
    with open(path, "wb") as fh:
        for start in range(0, n, 10_000):
            fh.write(b"".join(line % i for i in range(start, min(n, start + 10_000))))
    return path


@pytest.mark.parametrize("engine_name", ENGINES)
def test_memory_does_not_grow_with_the_number_of_hits(tmp_path: Path, use_engine, engine_name: str) -> None:  # type: ignore[no-untyped-def]
    """Regression guard for the scan: ten times the matching lines, the same
    memory (blocks and a bounded number of kept hits, never one object a hit).
    Python's allocator is traced, so this is a count of bytes, not a timing."""
    use_engine(engine_name)
    few = _warnings(tmp_path / "few.log", 60_000)
    many = _warnings(tmp_path / "many.log", 600_000)
    peaks = []
    for path in (few, many):
        scan_file(path, (Limits().max_hits, Limits().max_frequent))  # warm up: the engine, its imports
        tracemalloc.start()
        got = scan_file(path, (Limits().max_hits, Limits().max_frequent))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert got.n_matched == got.n_lines and len(got.hits) == Limits().max_hits
    few_peak, many_peak = peaks
    # One block's worth of arrays either way; 600 k Hit objects alone would be ~60 MB.
    assert many_peak < few_peak * 1.5 + (2 << 20), peaks
    assert many_peak < 48 << 20, peaks


def _recorded_texts() -> list[str]:
    """Every record of every recorded log, and every excerpt, as ``parse_log``
    folds them: the texts the classifier meets in real output."""
    from mwms_doctor.ingest.worker_log import fold_records, numbered

    root = RUNS.parent
    files = [
        *PLAIN_RUNS,
        *sorted((root / "blind" / "runs").glob("*/logs/**/*.log")),
        *sorted((root / "excerpts").glob("*/*/excerpt.txt")),
    ]
    texts = []
    for path in files:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        texts += [r.text for r in fold_records(numbered(lines), 2026)]
    return texts


def test_one_pass_over_many_records_classifies_each_as_one_pass_each(use_engine) -> None:  # type: ignore[no-untyped-def]
    """classify_many (one multi-pattern pass over a batch of records) gives every
    record the very kind, fields and benign flag classify gives it alone, and
    never fewer candidate templates, in both engines."""
    texts = _recorded_texts()
    assert len(texts) > 5000
    use_engine("hyperscan")
    one_by_one = [templates.classify(t) for t in texts]
    for start in range(0, len(texts), 997):  # batches of several sizes, cut anywhere
        batch = texts[start : start + 997 - start % 7]
        assert templates.classify_many(batch) == one_by_one[start : start + len(batch)]
        many = templates._candidates_many(batch)
        assert many is not None
        for t, cands in zip(batch, many, strict=True):
            assert templates._candidates(t) <= cands  # type: ignore[operator]
    assert sum(k is not None for k, _, _ in one_by_one) > 1000
    use_engine("re2")
    assert templates.classify_many(texts[:3000]) == one_by_one[:3000]
