"""Log shippers' exports of a whole job, read as the workers' own logs.

The layouts themselves are checked on real recordings by
tests/test_layout_invariance.py (the fluentbit, kibana-csv and dshbak
transforms); these hold the pieces that once went wrong."""

from __future__ import annotations

import json

from mwms_doctor.ingest.exports import _iso
from mwms_doctor.ingest.wrappers import detect, unwrap


def test_epoch_seconds_with_two_decimals_are_not_milliseconds():
    # "1795817482.85" is thirteen characters long, as a millisecond stamp is.
    assert _iso("1795817482.85").startswith("2026-11-27T")
    assert _iso("1795817482850").startswith("2026-11-27T")
    assert _iso("1795817482").startswith("2026-11-27T")


def test_a_fluent_bit_record_is_no_docker_json_file_line():
    # Docker's json-file driver writes log, stream and time alone; a shipper's
    # record with a "log" field and its own is one line, not a partial one.
    recs = [
        {"date": 1795817467.703 + i, "log": f"line {i}", "stream": "stderr",
         "kubernetes": {"pod_name": "ranker-worker-1", "container_name": "trainer"}}
        for i in range(30)
    ]  # fmt: skip
    lines = [json.dumps(r) for r in recs]
    chain = detect(lines)
    assert chain != ("docker_json",)
    got = unwrap(lines[3], chain)
    assert got.text == "line 3" and not got.partial
    assert got.key == "ranker-worker-1"
    assert got.ts is not None and got.ts.year == 2026


def _repacked(transform: str, tmp_path):
    """The recorded peer_killed job, re-packed as ``transform`` (tests/relayout.py)."""
    from .paths import RUNS
    from .relayout import TRANSFORMS, Layout

    logs = RUNS / "peer_killed" / "logs"
    out = tmp_path / transform
    fn, _ = TRANSFORMS[transform]
    assert fn(logs, out, Layout(logs))
    return out


def test_a_collectors_syslog_of_several_hosts_is_one_log_per_host(tmp_path):
    from mwms_doctor.ingest.logfile import read_log

    logs = read_log(_repacked("syslog-combined", tmp_path) / "messages", "messages", 2026, None)
    assert sorted(lg.key for lg in logs) == ["node-worker-0", "node-worker-1", "node-worker-2"]


def test_one_hosts_syslog_stays_one_log_named_by_its_file(tmp_path):
    from mwms_doctor.ingest.logfile import read_log

    out = _repacked("syslog", tmp_path)
    logs = read_log(out / "worker-1.log", "worker-1.log", 2026, None)
    assert [lg.key for lg in logs] == [None]
