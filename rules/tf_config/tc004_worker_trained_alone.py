"""TC004 worker-trained-alone: a worker had no cluster and trained on its own.

## What it means
This worker never joined the cluster: it started no gRPC server and never
connected to the coordination service, yet it trained (Keras printed its
epochs). MultiWorkerMirroredStrategy without a TF_CONFIG (or with one that
lists a single worker) silently becomes a one-worker strategy, so the process
trains alone on its own data and exits 0, while the real cluster waits for
the task forever. The waiting workers' handshake errors are echoes of this.

## Why it happens
TF_CONFIG did not reach the process: it is set in a shell the launcher does
not inherit, the pod spec lacks the env entry, `sudo`/`su` or a wrapper
script dropped the environment, or the variable was misspelled.

## What to do
Print `os.environ.get("TF_CONFIG")` at the top of the training script and
fail fast when it is missing on a multi-worker job (`assert
strategy.num_replicas_in_sync > 1`). Fix how the environment reaches the
process and restart every worker.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence

CODE = "TC004"
NAME = "worker-trained-alone"
CLASS = "tf_config_mismatch"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

_CLUSTER = ("tf.server_started", "coord.agent_connected", "coord.service_started", "coord.task_connected")


def check(job: Job) -> Iterator[Hit]:
    in_cluster = {r["worker"] for r in job.rows.of(_CLUSTER)}
    if not in_cluster:
        return  # a single-worker job, or no cluster at all: nothing to be missing from
    for worker, row in job.facts.workers.items():
        if worker in in_cluster or not row.get("has_log") or worker.startswith("?"):
            continue
        trained = job.rows.of(["keras.epoch_end", "keras.epoch"], worker)
        if not trained:
            continue
        ev = []
        dumps = job.rows.of(["tf_config.dump"], worker)
        unset = [r for r in job.rows.env(["tf_config", "env_var"], worker) if r["key"] == "TF_CONFIG"]
        ev += [evidence(r, "its TF_CONFIG") for r in dumps[:1]]
        ev.append(evidence(trained[0], "trained on its own"))
        how = "no TF_CONFIG reached it" if not unset and not dumps else "its TF_CONFIG gave it no cluster"
        if dumps and "{" in dumps[0]["text"]:
            how = "its TF_CONFIG gave it no cluster to join"
        yield Hit(
            subject=worker,
            summary=(
                f"{worker} never joined the cluster ({how}): it started no server, trained alone as a "
                f"one-worker job, while {', '.join(sorted(in_cluster))} waited for it."
            ),
            evidence=ev,
            confidence=0.85,
            ts=trained[0]["ts"],
            facts={"exit_code": row.get("exit_code")},
        )
