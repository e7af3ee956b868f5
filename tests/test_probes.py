"""Connectivity checks' words, from the programs that print them (netcat,
curl, bash): which address, and what became of the attempt."""

from __future__ import annotations

import datetime as dt

import pytest
from mwms_doctor.ingest.probes import probe_result, stated_time, tells_probes
from mwms_doctor.ingest.readers import claim


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Connection to 127.0.0.1 58840 port [tcp/*] succeeded!", ("127.0.0.1:58840", "open")),
        ("Connection to 10.0.0.2 port 2222 [tcp/*] succeeded!", ("10.0.0.2:2222", "open")),
        (
            "nc: connect to 127.0.0.1 port 58842 (tcp) failed: Connection refused",
            ("127.0.0.1:58842", "connection_refused"),
        ),
        (
            "nc: connect to trainer-1.svc port 2222 (tcp) timed out: Operation now in progress",
            ("trainer-1.svc:2222", "connect_timeout"),
        ),
        ("nc: connect to 10.0.0.9 port 2222 (tcp) failed: No route to host", ("10.0.0.9:2222", "no_route")),
        ("localhost [127.0.0.1] 58842 (?) : Connection refused", ("127.0.0.1:58842", "connection_refused")),
        ("w1 [10.0.0.3] 2222 (?) open", ("10.0.0.3:2222", "open")),
        (
            "curl: (7) Failed to connect to 127.0.0.1 port 58842 after 0 ms: Connection refused",
            ("127.0.0.1:58842", "connection_refused"),
        ),
        (
            "curl: (7) Failed to connect to 127.0.0.1 port 58842: Connection refused",
            ("127.0.0.1:58842", "connection_refused"),
        ),
        (
            "curl: (28) Failed to connect to 10.1.1.1 port 2222 after 2001 ms: Timeout was reached",
            ("10.1.1.1:2222", "connect_timeout"),
        ),
        ("bash: /dev/tcp/127.0.0.1/58842: Connection refused", ("127.0.0.1:58842", "connection_refused")),
        # TF's own words about a refused connection are no probe's.
        ("E1128 grpc ... failed to connect to all addresses; Connection refused", None),
        ("I0000 00:00:1795851119.281616 7756 grpc_server_lib.cc:467] Started server", None),
    ],
)
def test_each_programs_result_line(line: str, expected: tuple[str, str] | None) -> None:
    assert probe_result(line) == expected


CAPTURE = """\
# port check from the bastion
$ nc -zv -w 2 10.0.0.1 2222
Connection to 10.0.0.1 2222 port [tcp/*] succeeded!
$ nc -zv -w 2 10.0.0.2 2222
nc: connect to 10.0.0.2 port 2222 (tcp) failed: Connection refused
"""


def test_a_capture_of_checks_is_read_and_a_worker_log_with_one_stays_the_workers() -> None:
    assert tells_probes(CAPTURE)
    assert claim(CAPTURE, "netcheck.txt") is not None
    # One result is no capture of checks; nor is a worker's log that ran one.
    assert not tells_probes(CAPTURE.split("$ nc -zv -w 2 10.0.0.2")[0])
    worker = "I1128 10:11:12.000000 7 grpc_server_lib.cc:467] Started server\n" + CAPTURE
    assert not tells_probes(worker)
    # Unclaimed before: no reader knew it.
    assert claim("just some notes\nnothing else\n", "notes.txt") is None


def test_the_time_a_capture_states() -> None:
    utc = dt.UTC
    assert stated_time("# check run at 2026-11-28T07:32:15.796Z") == dt.datetime(
        2026, 11, 28, 7, 32, 15, 796000, tzinfo=utc
    )
    assert stated_time("# 2026-11-28 09:32:15+02:00 from bastion") == dt.datetime(
        2026, 11, 28, 7, 32, 15, tzinfo=utc
    )
    assert stated_time("Sat Nov 28 07:32:15 UTC 2026") == dt.datetime(2026, 11, 28, 7, 32, 15, tzinfo=utc)
    # A local zone by name cannot be placed; a result's numbers are no time.
    assert stated_time("Sat Nov 28 07:32:15 CET 2026") is None
    assert stated_time("Connection to 2026-11-28 ...") is None
