"""Header recognition for every line format TF has printed."""

from __future__ import annotations

import datetime as dt

import pytest
from mwms_doctor.ingest.lines import parse_header

UTC = dt.timezone.utc


def test_absl_epoch_tf216_plus() -> None:
    # Recorded from TF 2.21 (fixtures/runs/healthy/logs/worker-0.log).
    h = parse_header(
        "I0000 00:00:1795285809.750632    2057 coordination_service.cc:221] Initializing CoordinationService",
        2026,
    )
    assert h is not None
    assert h.ts_kind == "absl_epoch"
    assert h.ts == dt.datetime.fromtimestamp(1795285809.750632, UTC)
    assert (h.severity, h.origin, h.tid) == ("info", "coordination_service.cc:221", 2057)
    assert h.msg == "Initializing CoordinationService"


def test_absl_without_year_takes_the_hint() -> None:
    h = parse_header("E1121 10:11:12.345678 140234 ring_alg.cc:291] Aborting RingReduce", 2026)
    assert h is not None
    assert h.ts == dt.datetime(2026, 11, 21, 10, 11, 12, 345678, tzinfo=UTC)
    assert (h.ts_kind, h.severity, h.tid) == ("absl_noyear", "error", 140234)


def test_tf1_date_format() -> None:
    # Shape of TF 1.x / early 2.x lines as quoted in public TF issues.
    h = parse_header(
        "2020-02-07 18:28:12.016577: W tensorflow/core/common_runtime/bfc_allocator.cc:419] Allocator (GPU_0_bfc) "
        "ran out of memory trying to allocate 26.59MiB (rounded to 27878400).",
        1999,
    )
    assert h is not None
    assert h.ts == dt.datetime(2020, 2, 7, 18, 28, 12, 16577, tzinfo=UTC)
    assert (h.ts_kind, h.severity, h.origin) == (
        "tf_date",
        "warning",
        "tensorflow/core/common_runtime/bfc_allocator.cc:419",
    )


def test_python_logging_plain_and_asctime() -> None:
    # Recorded from TF 2.21 with the tensorflow logger at INFO (fixtures/runs/oom).
    plain = parse_header("INFO:tensorflow:Check health not enabled.", 2026)
    assert plain is not None
    assert (plain.style, plain.severity, plain.origin, plain.ts) == ("python", "info", "tensorflow", None)
    timed = parse_header("2026-11-21 10:11:12,345 - tensorflow - WARNING - something", 2026)
    assert timed is not None
    assert timed.ts == dt.datetime(2026, 11, 21, 10, 11, 12, 345000, tzinfo=UTC)
    assert (timed.severity, timed.ts_kind, timed.msg) == ("warning", "python_logging", "something")


@pytest.mark.parametrize(
    "line",
    [
        "Epoch 1/3",
        "8/8 - 2s - loss: 0.7264 - accuracy: 0.5521 - 2s/epoch - 198ms/step",
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
        "/job:worker/replica:0/task:2",
        "",
        "I0000 garbage",
    ],
)
def test_lines_without_a_header(line: str) -> None:
    assert parse_header(line, 2026) is None


# Python logging layouts of a script's own that put the date first (Airflow's
# "{file:line}", loguru's "|"-separated fields, a thread or rank in brackets,
# key=value fields, a module's file:line): the line's time and its level.
@pytest.mark.parametrize(
    ("line", "severity", "msg"),
    [
        (
            "[2026-11-25 02:15:29,948] {train_fit.py:16} INFO - reading shard index",
            "info",
            "reading shard index",
        ),
        ("2026-11-25 02:15:29,948 {train_fit.py:16} ERROR - shard missing", "error", "shard missing"),
        ("2026-11-25 02:15:29,948 - root - train.py:16 - WARNING - slow step", "warning", "slow step"),
        ("2026-11-25 02:15:29,948 (rank 0) WARNING slow step", "warning", "slow step"),
        ("2026-11-25 02:15:29,948 pid=123 tid=456 ERROR trainer: boom", "error", "trainer: boom"),
        ("2026-11-25T02:15:29.948Z [worker-1] [ERROR] boom", "error", "boom"),
        ("2026/11/25 02:15:29 INFO: step 5", "info", "step 5"),
        ("2026-11-25 02:15:29,948 trainer.py[line:16] INFO step 5", "info", "step 5"),
    ],
)
def test_date_first_layouts_give_time_and_level(line: str, severity: str, msg: str) -> None:
    h = parse_header(line, 2000)
    assert h is not None
    assert h.ts is not None and (h.ts.year, h.ts.hour, h.ts.minute, h.ts.second) == (2026, 2, 15, 29)
    assert (h.severity, h.msg) == (severity, msg)


def test_a_level_word_inside_the_message_is_not_the_lines_level() -> None:
    # A date, then prose: the line is timed, its level unknown ("ERROR" is the text's).
    h = parse_header("2026-11-25 10:00:00 loss went to NaN ERROR here", 2000)
    assert h is not None and h.ts == dt.datetime(2026, 11, 25, 10, tzinfo=UTC)
    assert h.severity is None
    assert h.msg == "loss went to NaN ERROR here"


def test_a_collectors_date_before_a_whole_tf_line_gives_way_to_the_lines_own() -> None:
    # Real excerpt shape (fixtures/excerpts/corpus/nvidia-nccl-1039): a shipper's stamp, then TF's line.
    h = parse_header(
        "2023/10/26 12:12:06 2023-10-26 12:12:06.704113: E hybridbackend/tensorflow/distribute/nccl/"
        "nccl_collective.cc:461] NCCL communication aborted: unhandled system error",
        2000,
    )
    assert h is not None
    assert (h.ts_kind, h.severity) == ("tf_date", "error")
    assert h.ts == dt.datetime(2023, 10, 26, 12, 12, 6, 704113, tzinfo=UTC)
    assert h.msg.startswith("NCCL communication aborted")
    untimed = parse_header("2021-11-17 12:33:08 | INFO:tensorflow:hello", 2000)
    assert untimed is not None and untimed.ts == dt.datetime(2021, 11, 17, 12, 33, 8, tzinfo=UTC)
    assert (untimed.severity, untimed.msg) == ("info", "hello")


def test_horovods_bracketed_tf_date_and_a_redacted_origin() -> None:
    h = parse_header(
        "[2021-02-08 09:24:59.555830: E /tmp/pip-install/horovod/common/operations.cc:548] Horovod background loop",
        2000,
    )
    assert h is not None and (h.ts_kind, h.severity) == ("tf_date", "error")
    assert h.origin.endswith("operations.cc:548")
    r = parse_header(
        "2020-01-11 00:35:35.443989: I <redacted>/tensorflow/core/nccl/nccl_manager.cc:670] done", 2000
    )
    assert r is not None and (r.severity, r.msg) == ("info", "done")
