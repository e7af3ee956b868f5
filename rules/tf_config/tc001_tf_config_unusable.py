"""TC001 tf-config-unusable: a worker could not use its TF_CONFIG and exited.

## What it means
MultiWorkerMirroredStrategy reads the cluster and the task from the
`TF_CONFIG` environment variable when it is created. On this worker that
failed: the text is not valid JSON (`json.decoder.JSONDecodeError` raised
from `tfconfig_cluster_resolver.py`), or it is valid but does not describe a
task of the cluster (`The task_id 3 exceeds the maximum id of worker`,
`task_type ... not found in cluster_spec`, more than one chief). The worker
exits before it starts its server, so the others wait for it at the handshake
forever: their waiting is an echo of this error.

## Why it happens
TF_CONFIG is usually rendered by a template (a Helm chart, a launcher script,
the Kubernetes operator): a quoting slip cuts the JSON short, an index is
computed off by one, the task count in the template is not the replica count,
or one pod of a resized job kept an old value.

## What to do
Print the worker's TF_CONFIG exactly as the process sees it (`echo
"$TF_CONFIG" | python -m json.tool`) and check that `task.index` is below the
number of addresses in `cluster.worker` and that `task.type` names a job of
the cluster. Fix the template, then restart the whole job.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.messages import says
from mwms_doctor.rows import evidence

CODE = "TC001"
NAME = "tf-config-unusable"
CLASS = "tf_config_mismatch"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

# Where TensorFlow reads and checks TF_CONFIG: an exception raised through
# these is about the configuration, whatever its type.
_CONFIG_FRAMES = {
    "tfconfig_cluster_resolver.py",
    "multi_worker_util.py",
    "run_config.py",  # tf.estimator.RunConfig reads TF_CONFIG (TF1 and TF2 estimators)
    "cluster_resolver.py",
}


def check(job: Job) -> Iterator[Hit]:
    seen: set[str] = set()
    for row in job.rows.of(["py.traceback"]):
        f = row["fields"]
        frames = set(filter(None, f.get("frames", "").split(",")))
        message = f.get("exc_message", "")
        if not (frames & _CONFIG_FRAMES or says(message, "tf_config_error")):
            continue
        worker = row["worker"]
        if worker in seen:
            continue
        seen.add(worker)
        exc = f.get("exc_type", "error").rsplit(".", 1)[-1]
        if exc == "JSONDecodeError":
            what = f"its TF_CONFIG is not valid JSON ({message})"
        else:
            what = f"its TF_CONFIG does not describe a task of the cluster ({exc}: {message})"
        ev = [evidence(row, "exception")]
        ev += [evidence(r, "its TF_CONFIG") for r in job.rows.of(["tf_config.dump"], worker)[:1]]
        yield Hit(
            subject=worker,
            summary=f"{worker} could not start MultiWorkerMirroredStrategy: {what}.",
            evidence=ev,
            confidence=0.95,
            ts=row["ts"],
            facts={"exception": exc, "message": message},
        )
