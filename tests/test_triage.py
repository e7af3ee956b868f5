"""Batch triage: many recorded jobs at once, the same verdicts as analyze."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from mwms_doctor.batch import TRIAGE_SCHEMA_VERSION, clusters, run_triage
from mwms_doctor.batch.history import from_triage
from mwms_doctor.pipeline import run_job

from .paths import ROOT, RUNS

JOBS = ["oom", "peer_killed", "healthy", "firewall_blocked", "nan_loss", "never_started", "version_skew"]


def _nightly(tmp_path: Path, names: list[str] = JOBS, root: str = "nightly") -> Path:
    base = tmp_path / root
    for name in names:
        shutil.copytree(RUNS / name / "logs", base / name)
    (base / "empty_job").mkdir()
    return base


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mwms_doctor", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=300,
    )


def test_every_job_gets_the_verdict_analyze_gives_it(tmp_path: Path) -> None:
    nightly = _nightly(tmp_path)
    rows = run_triage([nightly], tmp_path / "out", processes=2)
    assert [r["job"] for r in rows] == sorted(f"nightly/{n}" for n in [*JOBS, "empty_job"])
    for r in rows:
        name = r["job"].split("/", 1)[1]
        if name == "empty_job":
            assert r["status"] == "error" and "empty" in r["error"]
            continue
        alone = run_job(nightly / name).model.verdict
        assert (r["status"], r["class"], r["root_workers"]) == (
            alone["status"],
            alone["class"],
            alone["root_workers"],
        ), name
        assert r["confidence"] == pytest.approx(alone["confidence"])
        assert (tmp_path / "out" / r["report"]).is_file()


def test_a_pool_gives_the_rows_one_process_gives(tmp_path: Path) -> None:
    nightly = _nightly(tmp_path, JOBS[:4])
    serial = run_triage([nightly], tmp_path / "a", processes=1)
    pooled = run_triage([nightly], tmp_path / "b", processes=2)
    assert serial == pooled


def test_outputs_are_a_table_a_page_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    rows = run_triage([_nightly(tmp_path)], out, processes=2)
    lines = [json.loads(line) for line in (out / "triage.jsonl").read_text().splitlines()]
    assert [{k: v for k, v in line.items() if k != "schema_version"} for line in lines] == rows
    assert all(line["schema_version"] == TRIAGE_SCHEMA_VERSION for line in lines)
    table = pq.read_table(out / "triage.parquet")
    assert table.num_rows == len(rows)
    assert table.schema.metadata[b"mwms_doctor.triage_schema_version"] == str(TRIAGE_SCHEMA_VERSION).encode()
    assert str(table.schema.field("first_failure_ts").type) == "timestamp[ms, tz=UTC]"
    html = (out / "index.html").read_text()
    assert "default-src 'none'" in html and "<script" not in html
    for r in rows:
        assert r["job"] in html
        if r["report"]:
            assert f'href="{r["report"]}"' in html


def test_jobs_that_share_a_cause_are_one_cluster_and_since_tells_new_from_recurring(tmp_path: Path) -> None:
    night1 = tmp_path / "n1"
    night2 = tmp_path / "n2"
    for night, names in ((night1, ["oom", "peer_killed"]), (night2, ["oom", "firewall_blocked"])):
        for name in names:
            shutil.copytree(RUNS / name / "logs", night / name)
    shutil.copytree(RUNS / "oom" / "logs", night2 / "oom-again")
    run_triage([night1], tmp_path / "t1")
    rows = run_triage([night2], tmp_path / "t2", since=tmp_path / "t1")
    by_job = {r["job"].split("/", 1)[1]: r for r in rows}
    assert by_job["oom"]["cluster"] == by_job["oom-again"]["cluster"]
    assert by_job["oom"]["recurrence"] == "recurring"
    # Since when a signature fails is carried over from the earlier triage: rewrite it there.
    prev = tmp_path / "t1" / "triage.jsonl"
    lines = [json.loads(x) for x in prev.read_text().splitlines()]
    for x in lines:
        if x["class"] == "oom":
            x["first_seen"] = "2026-11-02T03:00:00.000Z"
    prev.write_text("".join(json.dumps(x) + "\n" for x in lines))
    rows = run_triage([night2], tmp_path / "t2", since=tmp_path / "t1")
    by_job = {r["job"].split("/", 1)[1]: r for r in rows}
    assert by_job["oom"]["first_seen"] == by_job["oom-again"]["first_seen"] == "2026-11-02T03:00:00.000Z"
    assert by_job["firewall_blocked"]["first_seen"] == by_job["firewall_blocked"]["first_failure_ts"]
    assert by_job["firewall_blocked"]["recurrence"] == "new"
    groups = {g["class"]: g for g in clusters(rows, from_triage(tmp_path / "t1"))}
    assert len(groups["oom"]["jobs"]) == 2
    assert groups["peer_died"]["recurrence"] == "gone" and groups["peer_died"]["jobs"] == []
    assert "gone" in (tmp_path / "t2" / "index.html").read_text()


def test_two_jobs_with_the_same_name_keep_their_own_reports(tmp_path: Path) -> None:
    a = _nightly(tmp_path / "x", ["oom"], root="nightly")
    b = _nightly(tmp_path / "y", ["healthy"], root="nightly")
    shutil.move(b / "healthy", b / "oom")  # the same job name, another job
    rows = run_triage([a, b], tmp_path / "out", processes=1)
    reports = [r["report"] for r in rows if r["report"]]
    assert len(reports) == len(set(reports)) == 2
    assert sorted(r["class"] for r in rows if r["report"]) == ["healthy", "oom"]


def test_the_command_line(tmp_path: Path) -> None:
    nightly = _nightly(tmp_path, ["oom", "healthy"])
    r = _cli("triage", str(nightly), "--out", str(tmp_path / "out"))
    assert r.returncode == 1, r.stderr
    assert "3 jobs: 1 failed, 0 warnings, 1 healthy, 1 could not be analysed" in r.stdout
    assert "oom" in r.stdout and "index:" in r.stdout
    r = _cli(
        "triage", str(nightly), "--out", str(tmp_path / "out2"), "--fail-on", "firewall_blocked,nan_loss"
    )
    assert r.returncode == 0, r.stderr
    assert _cli("triage", str(tmp_path / "nope"), "--out", str(tmp_path / "o3")).returncode == 2
    healthy_only = _nightly(tmp_path / "h", ["healthy"])
    shutil.rmtree(healthy_only / "empty_job")
    assert _cli("triage", str(healthy_only), "--out", str(tmp_path / "o4")).returncode == 0


def test_the_python_api(tmp_path: Path) -> None:
    import mwms_doctor

    report = mwms_doctor.analyze(RUNS / "oom" / "logs")
    assert report.verdict["class"] == "oom"
    assert report.tables.events.num_rows > 0
    table = mwms_doctor.triage(_nightly(tmp_path, ["oom", "healthy"]), out=tmp_path / "out", processes=1)
    assert table.num_rows == 3
    assert sorted(table.column("status").to_pylist()) == ["error", "failure", "healthy"]


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A real S3 API on loopback (moto's server), reached through s3fs."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(key, value)
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="nightly")
    yield endpoint
    server.stop()


def test_jobs_on_s3_are_triaged_like_local_ones(tmp_path: Path, s3: str) -> None:
    import s3fs

    local = _nightly(tmp_path, ["oom", "healthy", "gz_rotated_oom"])
    fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": s3})
    for job in ("oom", "healthy", "gz_rotated_oom"):
        fs.put(str(local / job), f"nightly/2026-11-23/{job}", recursive=True)
    remote = run_triage(["s3://nightly/2026-11-23"], tmp_path / "remote", processes=2)
    here = run_triage([local], tmp_path / "local", processes=2)
    key = [
        (r["job"].split("/", 1)[1], r["status"], r["class"], r["root_workers"], r["signature"])
        for r in remote
    ]
    assert key == [
        (r["job"].split("/", 1)[1], r["status"], r["class"], r["root_workers"], r["signature"])
        for r in here
        if r["job"] != "nightly/empty_job"
    ]
    assert all((tmp_path / "remote" / r["report"]).is_file() for r in remote)
    # The command line finds the endpoint where the AWS tools do (AWS_ENDPOINT_URL).
    r = _cli("triage", "s3://nightly/2026-11-23", "--out", str(tmp_path / "cli"), "--jobs", "1")
    assert r.returncode == 1, r.stderr
    assert "3 jobs: 2 failed, 0 warnings, 1 healthy" in r.stdout


def test_a_dask_cluster_gives_the_rows_the_local_pool_gives(tmp_path: Path) -> None:
    from distributed import LocalCluster

    nightly = _nightly(tmp_path, ["oom", "peer_killed", "healthy"])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        on_dask = run_triage([nightly], tmp_path / "dask", scheduler=cluster.scheduler_address)
    local = run_triage([nightly], tmp_path / "pool", processes=2)
    assert on_dask == local
    assert (tmp_path / "dask" / "index.html").read_text().count("report.html") == (
        (tmp_path / "pool" / "index.html").read_text().count("report.html")
    )


def test_ctrl_c_keeps_the_jobs_already_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (a KeyboardInterrupt, as Python turns SIGINT into) in the middle
    of the night: the jobs done are written, the page says it was cut short,
    and the command exits 130. Raised at a chosen job so the test is exact."""
    from mwms_doctor import entry
    from mwms_doctor.batch import run as triage_run

    nightly = tmp_path / "nightly"
    for i in range(8):
        shutil.copytree(RUNS / "oom" / "logs", nightly / f"job-{i:02d}")
    real = triage_run._triage_task
    calls = {"n": 0}

    def interrupted_at_the_fourth(task):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(triage_run, "_triage_task", interrupted_at_the_fourth)
    out = tmp_path / "out"
    monkeypatch.setattr(
        sys, "argv", ["mwms-doctor", "triage", str(nightly), "--out", str(out), "--jobs", "1"]
    )
    with pytest.raises(SystemExit) as stop:
        entry.main(hard_exit=False)
    assert stop.value.code == 130

    rows = [json.loads(x) for x in (out / "triage.jsonl").read_text().splitlines()]
    assert [r["job"] for r in rows] == [f"nightly/job-{i:02d}" for i in range(3)]
    assert all(r["class"] == "oom" and (out / r["report"]).is_file() for r in rows)
    assert "Interrupted" in (out / "index.html").read_text()


def test_history_across_nights_marks_new_recurring_regressed_and_gone(tmp_path: Path) -> None:
    """Three nights of real recordings kept in --history: the first has
    nothing recurring; the second has the OOM recurring, the version skew new
    and the dead peer gone; the third has the dead peer regressed (gone a
    night, then back). The history is one Parquet dataset pandas reads."""
    import datetime as dt

    import pandas as pd

    nights = {
        "2026-11-20T02:00:00+00:00": ["oom", "peer_killed"],
        "2026-11-21T02:00:00+00:00": ["oom", "version_skew"],
        "2026-11-22T02:00:00+00:00": ["oom", "peer_killed", "version_skew"],
    }
    history = tmp_path / "history"
    got: list[dict[str, dict[str, object]]] = []
    pages: list[str] = []
    for i, (when, names) in enumerate(nights.items()):
        root = tmp_path / f"n{i}"
        for name in names:
            shutil.copytree(RUNS / name / "logs", root / name)
        out = tmp_path / f"t{i}"
        rows = run_triage([root], out, history=history, night=dt.datetime.fromisoformat(when))
        got.append({r["job"].split("/", 1)[1]: r for r in rows})
        pages.append((out / "index.html").read_text())
    assert {r["recurrence"] for r in got[0].values()} == {""}
    assert got[1]["oom"]["recurrence"] == "recurring" and got[1]["version_skew"]["recurrence"] == "new"
    assert "gone" in pages[1] and "peer_died" in pages[1]
    assert got[2]["peer_killed"]["recurrence"] == "regressed"
    assert got[2]["oom"]["recurrence"] == got[2]["version_skew"]["recurrence"] == "recurring"
    # What to fix first: the regressed signature before the recurring ones, and a trend per signature.
    first = pages[2][pages[2].index("What to fix first") :]
    assert first.index('class="tag regressed"') < first.index('class="tag recurring"')
    assert "<svg" in pages[2] and "jobs per night, oldest first: 1, 1, 1" in pages[2]
    assert "night of 2026-11-22T02:00:00.000Z" in pages[2]  # the page names the night it covers
    # The first night a signature was seen stays its first_seen.
    assert str(got[2]["oom"]["first_seen"]) <= str(got[0]["oom"]["first_failure_ts"])
    df = pd.read_parquet(history)
    assert sorted(df["night"].astype(str).unique()) == [
        "20261120T020000Z",
        "20261121T020000Z",
        "20261122T020000Z",
    ]
    assert len(df) == 7
    # A re-run of a night replaces it.
    run_triage(
        [tmp_path / "n2"],
        tmp_path / "t2b",
        history=history,
        night=dt.datetime.fromisoformat("2026-11-22T02:00:00+00:00"),
    )
    assert len(pd.read_parquet(history)) == 7


def test_history_memory_is_per_signature_not_per_night(tmp_path: Path) -> None:
    """A long history (40 nights of one real night's rows, one signature
    renamed each night as a new bug would be) is held per signature: the
    trend keeps its last nights only, each signature its count of nights,
    and what recurs, regressed or is gone is still told right."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.compute as pc
    from mwms_doctor.batch.history import TREND_NIGHTS, append_history, read_history, recurrence

    root = _nightly(tmp_path, ["oom", "peer_killed"])
    rows = run_triage([root], tmp_path / "t", processes=1)
    table = pq.read_table(tmp_path / "t" / "triage.parquet")
    oom = next(r["cluster"] for r in rows if r["class"] == "oom")
    peer = next(r["cluster"] for r in rows if r["class"] == "peer_died")
    history = tmp_path / "history"
    day = dt.datetime(2026, 10, 1, 2, tzinfo=dt.timezone.utc)
    for k in range(40):
        cluster = table.column("cluster")
        # The dead peer is a new signature every night but the last two, where it is itself.
        renamed = (
            pc.if_else(pc.equal(cluster, peer), pa.scalar(f"{peer}-{k}"), cluster) if k < 38 else cluster
        )
        night = (day + dt.timedelta(days=k)).strftime("%Y%m%dT%H%M%SZ")
        append_history(
            history, night, table.set_column(table.schema.get_field_index("cluster"), "cluster", renamed)
        )
    past = read_history(history, "20991231T000000Z")
    assert past.count == 40 and len(past.recent_nights) == TREND_NIGHTS - 1
    assert all(len(s.recent) <= TREND_NIGHTS - 1 for s in past.seen.values())
    assert past.seen[oom].nights == 40 and past.seen[peer].nights == 2
    assert recurrence(oom, past) == recurrence(peer, past) == "recurring"
    assert recurrence(f"{peer}-3", past) == "regressed" and recurrence("never", past) == "new"
    groups = {g["cluster"]: g for g in clusters(rows, past)}
    assert groups[oom]["trend"] == [1] * (TREND_NIGHTS - 1) + [1] and groups[oom]["nights_seen"] == 41


def test_a_typo_in_fail_on_is_a_usage_error_not_a_silent_gate(tmp_path: Path) -> None:
    root = _nightly(tmp_path, ["oom"])
    r = _cli("triage", str(root), "--out", str(tmp_path / "t"), "--fail-on", "oomm")
    assert r.returncode == 2 and "no class oomm" in r.stderr
    r = _cli("triage", str(root), "--out", str(tmp_path / "t"), "--fail-on", "oom")
    assert r.returncode == 1


def test_reports_and_the_index_are_readable_as_the_umask_says(tmp_path: Path) -> None:
    """A triage folder published on a team share: files take the umask's
    mode (0644 under 022), not mkstemp's 0600."""
    root = _nightly(tmp_path, ["oom"])
    old = os.umask(0o022)
    try:
        run_triage([root], tmp_path / "t", processes=1)
    finally:
        os.umask(old)
    for name in ("index.html", "triage.jsonl"):
        assert (tmp_path / "t" / name).stat().st_mode & 0o777 == 0o644
    reports = list((tmp_path / "t" / "jobs").rglob("report.html"))
    assert reports and all(p.stat().st_mode & 0o777 == 0o644 for p in reports)


def test_a_reused_out_ends_with_this_runs_jobs_only(tmp_path: Path) -> None:
    run_triage([_nightly(tmp_path / "a", ["oom", "healthy"])], tmp_path / "t", processes=1)
    (tmp_path / "t" / "jobs" / "notes").mkdir()
    (tmp_path / "t" / "jobs" / "notes" / "mine.txt").write_text("kept")
    run_triage([_nightly(tmp_path / "b", ["peer_killed"])], tmp_path / "t", processes=1)
    left = sorted(p.name for p in (tmp_path / "t" / "jobs").iterdir())
    assert len(left) == 2 and "notes" in left and any("peer_killed" in name for name in left), left


def test_each_job_report_links_back_to_the_index(tmp_path: Path) -> None:
    out = tmp_path / "t"
    run_triage([_nightly(tmp_path, ["oom"])], out, processes=1)
    report = next((out / "jobs").rglob("report.html"))
    html = report.read_text()
    assert 'href="../../index.html"' in html
    assert (report.parent / "../../index.html").resolve() == (out / "index.html").resolve()


def test_the_index_filters_by_status_and_class_without_script(tmp_path: Path) -> None:
    out = tmp_path / "t"
    run_triage([_nightly(tmp_path, ["oom", "healthy", "peer_killed"])], out, processes=1)
    html = (out / "index.html").read_text()
    assert "<script" not in html
    for anchor in ("status-failure", "status-healthy", "class-oom", "class-peer_died"):
        assert f'href="#{anchor}"' in html and f'id="{anchor}"' in html
    oom_view = html[html.index('id="class-oom"') :]
    oom_view = oom_view[: oom_view.index("</table>")]
    assert (
        "nightly/oom" in oom_view
        and "nightly/healthy" not in oom_view
        and "nightly/peer_killed" not in oom_view
    )


def test_junit_xml_is_read_by_a_junit_parser(tmp_path: Path) -> None:
    """--junit: one test case per job; a real consumer (junitparser, as CI
    plugins read it) sees the failures, the error and the passes."""
    from junitparser import Error, Failure, JUnitXml

    root = _nightly(tmp_path, ["oom", "healthy"])  # and an empty job folder
    xml = tmp_path / "junit.xml"
    r = _cli("triage", str(root), "--out", str(tmp_path / "t"), "--junit", str(xml), "--jobs", "1")
    assert r.returncode == 1, r.stderr
    suites = JUnitXml.fromfile(str(xml))
    cases = {c.name: c for suite in suites for c in suite}
    assert len(cases) == 3
    oom = next(c for n, c in cases.items() if n.endswith("/oom"))
    assert [type(x) for x in oom.result] == [Failure] and oom.result[0].type == "oom"
    empty = next(c for n, c in cases.items() if n.endswith("/empty_job"))
    assert [type(x) for x in empty.result] == [Error]
    healthy = next(c for n, c in cases.items() if n.endswith("/healthy"))
    assert healthy.is_passed
    _junit_schema().validate(str(xml))  # raises, naming the element, where it is not valid


def _junit_schema():  # type: ignore[no-untyped-def]
    import xmlschema

    return xmlschema.XMLSchema(str(Path(__file__).parent / "schemas" / "junit-10.xsd"))


def test_junit_schema_rejects_what_ci_would_not_read(tmp_path: Path) -> None:
    """The schema check can fail: a test case without its name, or a failure
    without its type, is not JUnit a CI plugin accepts."""
    schema = _junit_schema()
    bad = tmp_path / "bad.xml"
    bad.write_text(
        '<testsuites><testsuite name="x" tests="1"><testcase classname="c"/></testsuite></testsuites>'
    )
    assert not schema.is_valid(str(bad))


@pytest.mark.parametrize("run", ["oom", "healthy"])
def test_analyze_junit_is_one_valid_test_case(tmp_path: Path, run: str) -> None:
    """analyze --junit: the job as one test case (a failure with its class as
    the type, or a pass), valid against the JUnit schema and read by junitparser."""
    from junitparser import Failure, JUnitXml

    xml = tmp_path / "ci" / "junit.xml"
    r = _cli(
        "analyze", str(RUNS / run / "logs"), "--out", str(tmp_path / "r"), "--junit", str(xml), "--jobs", "1"
    )
    assert r.returncode == (1 if run == "oom" else 0), r.stderr
    _junit_schema().validate(str(xml))
    cases = [c for suite in JUnitXml.fromfile(str(xml)) for c in suite]
    assert len(cases) == 1
    if run == "oom":
        assert [type(x) for x in cases[0].result] == [Failure] and cases[0].result[0].type == "oom"
        assert "report: " in (cases[0].result[0].text or "")
    else:
        assert cases[0].is_passed
