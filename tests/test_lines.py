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
