"""The facts stage and row access: columnar twins of per-row definitions give
the same answers, on every recorded run."""

from __future__ import annotations

import pyarrow as pa
from mwms_doctor.facts import establish
from mwms_doctor.ingest.templates import PROGRESS_KINDS
from mwms_doctor.pipeline import load_tables
from mwms_doctor.rows import to_rows
from mwms_doctor.text import mask_column, mask_message

from .paths import BLIND_RUNS, RUNS


def test_masking_a_column_in_arrow_is_masking_each_message() -> None:
    texts: list[str] = ["", "  \n", "value 0x1F at /a/b/c.py:12 from 10.0.0.1:2222", "ünïcode ٣ digits"]
    for run in [*sorted(RUNS.iterdir()), *sorted(BLIND_RUNS.iterdir())[:10]]:
        if (run / "logs").is_dir():
            tables, _ = load_tables(run / "logs")
            texts += tables.events.column("text").to_pylist()
    assert len(texts) > 1000
    assert mask_column(pa.array(texts)).to_pylist() == [mask_message(t) for t in texts]


def _all_tables():  # type: ignore[no-untyped-def]
    for run in [*sorted(RUNS.iterdir()), *sorted(BLIND_RUNS.iterdir())]:
        if (run / "logs").is_dir():
            yield run.name, load_tables(run / "logs")[0]


def test_progress_read_from_columns_is_what_the_rows_said() -> None:
    """The facts' last progress and finished read plain columns of the
    progress records; their answers are the row-by-row definitions' on every
    recorded run (tuned and blind), with progress, completion and input ends
    of all kinds."""
    finished = 0
    for name, tables in _all_tables():
        job = establish(tables)
        want: dict[str, dict[str, object]] = {}
        for r in job.rows.of(list(PROGRESS_KINDS)):
            want[r["worker"]] = r
        assert dict(job.facts.last_progress) == want, name
        done = job.facts.finished
        finished += len(done)
        for w, at in done.items():
            timed = [r["ts"] for r in job.rows.of(list(PROGRESS_KINDS), w) if r["ts"] is not None]
            if timed:
                assert at == max(timed), name
            else:
                # Untimed progress: at the latest, the worker's last timed record before its first error.
                ev = job.tables.events.to_pylist()
                own = [r["ts"] for r in ev if r["worker"] == w and r["ts"] is not None]
                assert at is None or at <= max(own), name
    assert finished > 50


def test_rows_carry_the_times_pyarrow_gives() -> None:
    """Times are converted apart from the rest of a row (tables.datetimes): the
    same values, the same ZoneInfo('UTC'), nulls kept, each in its place."""
    from mwms_doctor.tables import datetimes

    for name, tables in list(_all_tables())[:12]:
        ev = tables.events
        assert to_rows(ev) == [{**r, "fields": dict(r["fields"] or ())} for r in ev.to_pylist()], name
        assert [list(r) for r in to_rows(ev)] == [ev.column_names] * ev.num_rows
    col = pa.array([0, None, -1, 1795447866123456], pa.timestamp("us", tz="UTC"))
    got, want = datetimes(col), col.to_pylist()
    assert got == want and [type(t.tzinfo) for t in got if t] == [type(t.tzinfo) for t in want if t]


def test_the_arrow_prefilter_of_nl001_keeps_every_non_finite_loss() -> None:
    from mwms_doctor.rules.numerics import nl001_loss_not_finite as nl001

    kinds = ["keras.epoch_end", "keras.invalid_loss", "train.step", "train.loss_not_finite", "py.traceback"]
    seen = 0
    for name, tables in _all_tables():
        job = establish(tables)
        want = [r for r in job.rows.of(kinds) if nl001._not_finite(r)]
        got = [r for r in job.rows.where(kinds, nl001._maybe_not_finite(job)) if nl001._not_finite(r)]
        assert got == want, name
        seen += len(want)
    assert seen > 10


def test_a_job_that_ends_in_its_scripts_own_words_finished() -> None:
    """Recorded (healthy_own_words): Keras prints nothing, the script prints a
    line per step with no totals and its own closing lines, no exit records.
    Every worker stopped at the same step and then printed the same new line:
    it finished, learned from the job, not from a fixed vocabulary."""
    job = establish(load_tables(RUNS / "healthy_own_words" / "logs")[0])
    assert sorted(job.facts.finished) == ["worker:0", "worker:1", "worker:2"]
    assert all(t is not None for t in job.facts.finished.values())


def test_a_job_whose_workers_stopped_at_different_steps_did_not_finish() -> None:
    """Recorded (hang_own_words): the same script, worker 1 blocked in its fifth
    step, the others waiting after theirs; the logs simply end."""
    job = establish(load_tables(RUNS / "hang_own_words" / "logs")[0])
    assert dict(job.facts.finished) == {}
