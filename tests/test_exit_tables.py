"""A platform's table of how each process ended, read as those workers' exit
statuses: ``docker compose ps -a``, GNU parallel's ``--joblog``, a runner's
list of exit codes, and a runner's own log of its workers' ends. Each file
here was written by a blind batch's harness, in the platform's own format."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables

from .paths import FIXTURES

BLIND = FIXTURES / "blind"


def _exits(run: str) -> dict[str, int | None]:
    batch = f"batch_{run[:-2]}"
    tables, _ = load_tables(BLIND / batch / "runs" / run / "logs")
    return {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()}


def test_docker_compose_ps_gives_each_services_exit_code() -> None:
    # ah02: 'mwms-worker1-1 ... worker1 ... Exited (137) 4 seconds ago'
    assert _exits("ah02") == {"chief:0": 1, "worker:0": 1, "worker:1": 137}


def test_a_compose_service_named_for_its_role_alone_is_the_chief() -> None:
    # ag15: services 'tf-chief' and 'tf-worker0', containers 'ctr-tf-chief-1' (the replica number).
    assert _exits("ag15") == {"chief:0": 0, "worker:0": 0}


def test_gnu_parallels_joblog_gives_the_exit_value_of_the_task_its_command_names() -> None:
    # ag16: 'TF_CONFIG="$(./mkcfg.sh worker 1)" python train.py' with Exitval 0.
    assert _exits("ag16") == {"worker:0": 0, "worker:1": 0}


def test_a_runners_list_of_exit_codes_inside_an_archive() -> None:
    # ac16: exitcodes.txt in the tarball: 'chief0 1', 'worker0 1', 'worker1 0'.
    assert _exits("ac16") == {"chief:0": 1, "worker:0": 1, "worker:1": 0}


def test_a_runners_own_log_of_its_workers_ends_is_read() -> None:
    # ad16: launch.log holds '22:52:08 worker:0 exited rc=1' and no TF line.
    tables, _ = load_tables(BLIND / "batch_ad" / "runs" / "ad16" / "logs")
    assert "launch.log" not in {s for s, _ in tables.skipped}
    assert {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()} == {"chief:0": 1, "worker:0": 1}
