"""What blind batch AW's first score (93.8% class, 100% root, no false alarm)
missed, on the batch's own recording (fixtures/blind/batch_aw, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_aw" / "runs"


def test_a_probe_from_outside_refused_at_a_live_tasks_port_is_a_block() -> None:
    # aw08: one combined file; worker:0 started its server on 57616 and never joined;
    # the platform's '[netcheck] tcp connect 127.0.0.1:57616 -> ConnectionRefusedError'
    # (a time of day, no date) came after that in the file, and worker:0 logged on until
    # the runner's kill: its port was blocked, not a peer that never came (handshake).
    assert verdict(RUNS / "aw08" / "logs") == ("firewall_blocked", ["worker:0"], "failure")


def test_a_tasks_own_refused_dial_still_names_no_block_of_the_dialed() -> None:
    # ae08 (batch AE): worker:2, cut off in its own namespace, was refused by worker:0's
    # port, which worker:1 reached: a task's own dial is no outside probe.
    run = FIXTURES / "blind" / "batch_ae" / "runs" / "ae08" / "logs"
    assert verdict(run)[:2] == ("handshake_deadlock", ["worker:2"])
