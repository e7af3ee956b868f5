"""TC006 tf-config-inconsistent: a worker's TF_CONFIG contradicts itself.

## What it means
One worker's TF_CONFIG, as its log or a file beside it shows it, cannot
describe a working cluster on its own: its `task.type` is not a job of its
`cluster` (a `chief` task in a cluster that lists no chief), its
`task.index` is past the end of its job's address list, or two tasks of
the cluster are given the same `host:port`. TensorFlow refuses such a
TF_CONFIG at start-up, or the two tasks fight over one port, or the job
waits forever for a task that cannot exist.

## Why it happens
TF_CONFIG is usually rendered from a template (a launcher, a Helm chart, the
Kubernetes operator): a task type named differently from the cluster's keys,
an index computed for a larger job, a replica count that does not match the
address list, or one port used for every task of a host.

## What to do
Print each worker's TF_CONFIG as the process sees it (`echo "$TF_CONFIG" |
python -m json.tool`) and check three things: `task.type` is a key of
`cluster`, `task.index` is below the length of that key's list, and every
`host:port` in the cluster appears once. Fix the template and restart the
whole job.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import Row, env_evidence

CODE = "TC006"
NAME = "tf-config-inconsistent"
CLASS = "tf_config_mismatch"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def _configs(job: Job) -> dict[str, tuple[dict[str, list[str]], dict[str, str], Row]]:
    """worker -> (cluster, task, where it was read), from the env table's TF_CONFIG rows."""
    out: dict[str, tuple[dict[str, list[str]], dict[str, str], Row]] = {}
    grouped: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in job.rows.env(["tf_config"]):
        grouped[(r["worker"], r["source"])].append(r)
    for (worker, _), rows in grouped.items():
        cluster: dict[str, list[str]] = {}
        task: dict[str, str] = {}
        for r in rows:
            key = str(r["key"])
            if key.startswith("TF_CONFIG.cluster."):
                try:
                    cluster[key.rsplit(".", 1)[1]] = [str(a) for a in json.loads(str(r["value"]))]
                except (ValueError, TypeError):
                    continue
            elif key.startswith("TF_CONFIG.task."):
                task[key.rsplit(".", 1)[1]] = str(r["value"])
        if cluster and task:
            out.setdefault(worker, (cluster, task, rows[0]))
    return out


def check(job: Job) -> Iterator[Hit]:
    for worker, (cluster, task, row) in sorted(_configs(job).items()):
        problems = []
        kind, index = task.get("type", ""), task.get("index", "")
        if kind and kind not in cluster and not (kind == "master" and "chief" in cluster):
            problems.append(
                f"its task type '{kind}' is not a job of its cluster ({', '.join(sorted(cluster))})"
            )
        elif kind and index.isdigit() and int(index) >= len(cluster.get(kind, [])):
            problems.append(
                f"its task index {index} is past the end of '{kind}' ({len(cluster.get(kind, []))} addresses)"
            )
        addresses = [a for addrs in cluster.values() for a in addrs]
        dupes = sorted({a for a in addresses if addresses.count(a) > 1})
        if dupes:
            problems.append(f"{', '.join(dupes)} is given to more than one task")
        if not problems:
            continue
        text = f"TF_CONFIG cluster={json.dumps(cluster)} task={json.dumps(task)}"
        yield Hit(
            subject=worker,
            summary=f"{worker}'s TF_CONFIG contradicts itself: {'; '.join(problems)}.",
            evidence=[env_evidence(row, text, "its TF_CONFIG")],
            confidence=0.8,
            ts=None,
            facts={"problems": problems},
        )
