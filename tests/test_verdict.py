"""The verdict policy, one decision at a time: each decision of the table
applies where it should, and an earlier one wins over a later one."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest
from mwms_doctor.classes import INCONCLUSIVE
from mwms_doctor.facts import Facts, establish
from mwms_doctor.findings import Evidence, Finding, RuleStatus
from mwms_doctor.pipeline import load_tables
from mwms_doctor.verdict import DECISIONS, PARTIAL, Case, decide, split_noise

from .paths import RUNS

T0 = dt.datetime(2026, 11, 21, 18, 0, tzinfo=dt.timezone.utc)


@pytest.fixture(scope="module")
def healthy() -> Facts:
    """The facts of a real job that trained and finished (every worker exit 0)."""
    return establish(load_tables(RUNS / "healthy" / "logs")[0]).facts


def _finding(
    code: str,
    cls: str,
    severity: str,
    worker: str = "worker:1",
    cascade_of: str | None = None,
    proof: str = "error",
) -> Finding:
    ev = Evidence(worker, f"{worker}.log", 10, 10, T0, "the evidence", "cause")
    return Finding(
        code=code,
        name=code.lower(),
        cls=cls,
        title="title",
        severity=severity,
        confidence=0.9,
        root_workers=[worker],
        first_ts=T0,
        summary=f"{code} summary",
        evidence=[ev],
        explanation="",
        remedy="do this",
        facts={},
        local=True,
        cascade_of=cascade_of,
        proof=proof,
    )


def _error(worker: str = "worker:2") -> Evidence:
    return Evidence(worker, f"{worker}.log", 20, 20, T0 + dt.timedelta(seconds=1), "E0000 boom", "echo")


def test_the_decisions_are_in_the_documented_order() -> None:
    assert [d.name for d in DECISIONS] == [
        "root cause",
        "unknown failure",
        "inconclusive",
        "warning",
        "unrecognised",
        "stalled at start",
        "ended short",
        "healthy",
    ]


def test_root_cause_an_error_finding_is_the_failure(healthy: Facts) -> None:
    v = decide(Case([_finding("OM001", "oom", "error")], [_error()], healthy, []))
    assert (v.decision, v.status, v.cls, v.root_workers, v.title) == (
        "root cause",
        "failure",
        "oom",
        ["worker:1"],
        "Out of memory",
    )


def test_root_cause_the_same_rule_on_several_workers_names_them_all(healthy: Facts) -> None:
    findings = [_finding("OM001", "oom", "error"), _finding("OM001", "oom", "error", "worker:2")]
    assert decide(Case(findings, [], healthy, [])).root_workers == ["worker:1", "worker:2"]


def test_a_cascade_is_never_the_root_cause(healthy: Facts) -> None:
    cascade = _finding("PD001", "peer_died", "error", cascade_of="OM001@worker:1")
    v = decide(Case([cascade], [], healthy, []))
    assert v.decision == "healthy"


def test_a_finding_whose_evidence_simply_ends_is_inconclusive(healthy: Facts) -> None:
    """Precision first: no error, no measured stall and no kill or bad exit in
    the job is no failure; the class stays as a lead, with what to fetch."""
    ended = _finding("HG001", "hang", "error", proof="")
    v = decide(Case([ended], [], healthy, []))
    assert (v.decision, v.status, v.cls, v.title, v.first_failure_ts) == (
        "inconclusive",
        "warning",
        "hang",
        INCONCLUSIVE,
        None,
    )
    assert v.confidence <= 0.5 and "Fetch what shows how it ended" in v.remedy


def test_a_kill_or_a_bad_exit_proves_what_the_evidence_alone_does_not(healthy: Facts) -> None:
    ended = _finding("HS001", "handshake_deadlock", "error", proof="")
    for facts in (
        replace(healthy, bad_exits=("worker:0",)),
        replace(healthy, signalled=("worker:0", "worker:1")),
    ):
        v = decide(Case([ended], [], facts, []))
        assert (v.decision, v.status, v.cls) == ("root cause", "failure", "handshake_deadlock")


def test_a_measured_stall_is_proof(healthy: Facts) -> None:
    v = decide(Case([_finding("HG001", "hang", "error", proof="stall")], [], healthy, []))
    assert (v.decision, v.status) == ("root cause", "failure")


def test_unknown_failure_errors_no_rule_explains(healthy: Facts) -> None:
    v = decide(Case([_finding("VS001", "version_skew", "warning")], [_error("worker:2")], healthy, []))
    assert (v.decision, v.status, v.cls, v.root_workers) == (
        "unknown failure",
        "failure",
        "unknown",
        ["worker:2"],
    )


def test_unknown_failure_a_bad_exit_without_any_error(healthy: Facts) -> None:
    v = decide(Case([], [], replace(healthy, bad_exits=("worker:0",)), []))
    assert (v.decision, v.cls, v.root_workers) == ("unknown failure", "unknown", ["worker:0"])
    assert "exited abnormally" in v.summary


def test_warning_a_warning_finding_without_errors(healthy: Facts) -> None:
    v = decide(Case([_finding("ST001", "straggler", "warning")], [], healthy, []))
    assert (v.decision, v.status, v.cls) == ("warning", "warning", "straggler")


def test_unrecognised_text_is_not_healthy(healthy: Facts) -> None:
    v = decide(Case([], [], replace(healthy, recognised=False), []))
    assert (v.decision, v.status, v.cls, v.title) == ("unrecognised", "warning", "unknown", INCONCLUSIVE)


def test_stalled_at_start_is_inconclusive(healthy: Facts) -> None:
    epoch = {"text": "Epoch 1/500", "source": "paste.txt", "line": 7}
    v = decide(Case([], [], replace(healthy, stalled_at_start=epoch), []))
    assert (v.decision, v.status, v.cls, v.title, v.first_failure_ts) == (
        "stalled at start",
        "warning",
        "unknown",
        INCONCLUSIVE,
        None,
    )
    assert "Epoch 1/500, paste.txt:7" in v.summary


def test_healthy_when_nothing_applies(healthy: Facts) -> None:
    v = decide(Case([], [], healthy, []))
    assert (v.decision, v.status, v.confidence, v.missing) == ("healthy", "healthy", 1.0, [])


def test_what_could_not_be_checked_is_said_unless_it_failed(healthy: Facts) -> None:
    skipped = [
        RuleStatus("ST001", "worker-straggling", "straggler", "not evaluated", "no trace_events table")
    ]
    assert "Not checked, for lack of data: ST001" in decide(Case([], [], healthy, skipped)).summary
    failed = decide(Case([_finding("OM001", "oom", "error")], [], healthy, skipped))
    assert "Not checked" not in failed.summary


def test_partial_evidence_lowers_the_confidence(healthy: Facts) -> None:
    rows = dict(healthy.workers)
    rows["worker:2"] = {**rows["worker:2"], "has_log": False}
    facts = replace(healthy, workers=rows, untimed=True)
    v = decide(Case([_finding("OM001", "oom", "error")], [], facts, []))
    assert v.missing == ["no log from worker:2", "no time stamps (order is taken from the file)"]
    assert v.confidence == round(0.9 * PARTIAL["logs"] * PARTIAL["times"], 2)


def test_errors_after_a_worker_finished_are_noise_not_failure(healthy: Facts) -> None:
    worker, done = next((w, t) for w, t in healthy.finished.items() if t is not None)
    late = Evidence(worker, "x.log", 1, 1, done + dt.timedelta(seconds=1), "E0000 peer gone", "echo")
    # An error its worker trained on after, and then finished: survived.
    early = replace(late, ts=done - dt.timedelta(seconds=60))
    # An error of a worker that never finished its training counts.
    other = replace(late, worker="worker:9")
    failing, marked = split_noise([late, early, other], healthy)
    assert failing == [other]
    assert [e.role for e in marked] == [
        "after its training finished; it exited 0",
        "the worker trained on after it and finished",
        "echo",
    ]


def test_the_verdict_is_frozen(healthy: Facts) -> None:
    v = decide(Case([], [], healthy, []))
    with pytest.raises(AttributeError):
        v.confidence = 0.5  # type: ignore[misc]


def _cut_at_last_epoch(src, dest, workers):
    """A real finished job's logs, the given workers' cut just after they begin
    their last epoch ("Epoch 3/3"), the exit records left behind."""
    dest.mkdir()
    for f in sorted((src).glob("*.log")):
        lines = f.read_text().splitlines(keepends=True)
        if f.stem in workers:
            at = next(i for i, ln in enumerate(lines) if ln.startswith("Epoch 3/"))
            lines = lines[: at + 1]
        (dest / f.name).write_text("".join(lines))
    return dest


def test_every_log_ending_as_its_last_epoch_begins_is_no_finished_job(tmp_path) -> None:
    # Every worker's last record is the same "Epoch 3/3", within moments: no
    # closing words, and an epoch begun is no end of training.
    logs = _cut_at_last_epoch(
        RUNS / "healthy" / "logs", tmp_path / "logs", {"worker-0", "worker-1", "worker-2"}
    )
    job = establish(load_tables(logs)[0])
    assert not job.facts.finished
    from mwms_doctor.engine import run_rules

    assert run_rules(job).verdict.status == "warning"


def test_ended_short_one_worker_whose_log_ends_mid_training_is_no_healthy_job(tmp_path) -> None:
    logs = _cut_at_last_epoch(RUNS / "healthy" / "logs", tmp_path / "logs", {"worker-2"})
    from mwms_doctor.engine import run_rules

    job = establish(load_tables(logs)[0])
    assert set(job.facts.ended_short) == {"worker:2"}
    v = run_rules(job).verdict
    assert (v.status, v.cls, v.root_workers, v.decision) == (
        "warning",
        "unknown",
        ["worker:2"],
        "ended short",
    )
    assert "worker:0, worker:1 completed their training" in v.summary


def test_ended_short_not_where_the_log_reaches_its_total(healthy: Facts) -> None:
    assert not healthy.ended_short
