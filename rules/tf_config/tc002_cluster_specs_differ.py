"""TC002 cluster-specs-differ: workers were given different cluster lists.

## What it means
Every worker of a MultiWorkerMirroredStrategy job must be given the same
`cluster` in its TF_CONFIG (the same addresses, in the same order); only
`task.index` differs. Here at least one worker's cluster list differs from
the others'. It then looks for its peers at addresses where they are not
listening (`Connection refused`), or the collectives' rings differ between
workers. The worker whose list differs from the majority is named; the
others' connection errors are echoes.

Without any worker's TF_CONFIG in the evidence, the addresses show it: a
worker dialed a task at an address where that task's server is not (the
task started its server on another port, `Started server with target:`,
and was running), and the connection was refused. Its cluster list is the
one that differs; nothing was listening where it looked.

## Why it happens
A pod re-created with a stale TF_CONFIG after the job was resized or its
services renamed, a launcher that builds each worker's list from a different
source (host files, DNS names vs IPs), or a hand-edited config on one host.

## What to do
Compare the cluster lists below: generate TF_CONFIG for all workers from one
place (the operator or one launcher template) and restart every worker
together, so that none keeps an old list.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import Row, evidence, time_key, to_rows
from mwms_doctor.tasks import tasks_in

CODE = "TC002"
NAME = "cluster-specs-differ"
CLASS = "tf_config_mismatch"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def _key(spec: dict[str, list[str]]) -> str:
    return json.dumps(spec, sort_keys=True)


# The address a refused connection was made to, as gRPC core prints it.
_DIALED = re.compile(r"ipv4:(?P<host>[\d.]+):(?P<port>\d+)|ipv6:\[(?P<host6>[^\]]+)\]:(?P<port6>\d+)")


def _misdialed(job: Job) -> Iterator[Hit]:
    """Workers that were refused at an address where the task they dialed
    does not listen, while that task ran (its own log says where it listens)."""
    served: dict[str, tuple[str, str]] = {}
    for r in job.rows.of(["tf.server_started"]):
        f = r["fields"]
        if f.get("port"):
            served.setdefault(r["worker"], (f.get("host", ""), f["port"]))
    if len(served) < 2:
        return
    first: dict[str, tuple[Row, str]] = {}
    rpc = sorted(job.rows.rpc(), key=time_key)
    # A refusal relayed from a peer ("Collective ops is aborted by: ...") is the peer's, not this worker's dial.
    relayed = {(r["source"], r["line"]) for r in rpc if r["reason"] == "relayed_abort"}
    # Every task of the job running, each where its own log says: an address
    # none of them listens on is no task's at all.
    tasks = {w for w in job.facts.workers if not w.startswith("?")}
    all_served = bool(tasks) and tasks <= set(served)
    ports = {port for _, port in served.values()}
    # Where the cluster lists each task, and the tasks that listen elsewhere
    # than listed yet were never refused: the deployment maps ports (docker's
    # published ports, a Kubernetes service, NAT), so a refusal at a task's
    # listed address is the path to it, not a cluster list that misdials it.
    listed: dict[str, str] = {}
    for spec, _ in job.facts.cluster_views.values():
        for role, addrs in spec.items():
            for i, addr in enumerate(addrs):
                listed.setdefault(f"{role}:{i}", str(addr).rsplit(":", 1)[-1])
    refused = {r["peer_task"] for r in rpc if r["reason"] == "connection_refused" and r["peer_task"]}
    mapped = {t for t, (_, port) in served.items() if t in listed and listed[t] != port and t not in refused}
    for r in rpc:
        task, dialer = r["peer_task"], r["worker"]
        if r["reason"] != "connection_refused" or task == dialer:
            continue
        if (r["source"], r["line"]) in relayed:
            continue
        m = _DIALED.search(r["message"] or "")
        if m is None:
            continue
        host, port = (m["host"], m["port"]) if m["host"] else (m["host6"], m["port6"])
        if not task:
            if all_served and port not in ports and dialer in served:
                first.setdefault(dialer, (r, f"{host}:{port}"))
            continue
        if task not in served:
            continue
        where = served[task]
        # Refused where the task listens: it was down (PD001's). Refused at another
        # port: nothing of that task was ever there, alive or not.
        if port == where[1]:
            continue
        if port == listed.get(task) and mapped - {task}:
            continue  # dialed where the cluster lists it, as others were reached behind their mapping
        first.setdefault(dialer, (r, f"{host}:{port}"))
    if not first:
        return
    rows = sorted(first.items(), key=lambda kv: time_key(kv[1][0]))
    for dialer, (r, addr) in rows[:1]:
        task = r["peer_task"]
        errs = [e for e in job.rows.errors(dialer) if e["source"] == r["source"] and e["line"] <= r["line"]]
        ev = [evidence(errs[0] if errs else job.rows.errors(dialer)[0], "refused")]
        if task:
            host, port = served[task]
            summary = (
                f"{dialer} looked for {task} at {addr}, where nothing listened (connection refused); "
                f"{task} had started its server on {host}:{port}: {dialer}'s cluster list gives {task} "
                "another address than the one it was started with."
            )
            ev.append(
                evidence(next(x for x in job.rows.of(["tf.server_started"], task)), "where it listened")
            )
            facts = {"dialed": addr, "listening": f"{host}:{port}", "task": task}
        else:
            listening = ", ".join(f"{t} on {h}:{p}" for t, (h, p) in sorted(served.items()))
            summary = (
                f"{dialer} looked for a peer at {addr}, where nothing listened (connection refused), while "
                f"every task was running elsewhere ({listening}): {dialer}'s cluster list holds an address "
                "no task was started with."
            )
            facts = {"dialed": addr}
        yield Hit(
            subject=dialer,
            also=[d for d, _ in rows[1:]],
            summary=summary,
            evidence=ev,
            confidence=0.75 if task else 0.7,
            ts=r["ts"],
            facts=facts,
        )


# A script's word on how many replicas its strategy counts ("strategy ready
# replicas=4", "3 replicas in sync", "num_replicas_in_sync: 4").
_REPLICAS = re.compile(
    r"(?i)\b(?:num_)?replicas(?:_in_sync)?\s*[=:]\s*(?P<a>\d+)\b|\b(?P<b>\d+) replicas? in sync\b"
)


def _replicas_said(job: Job) -> dict[str, int]:
    """Each worker's first count of its strategy's replicas, as its script said it."""
    ev = job.rows.tables.events
    # (a script's print may be read as the continuation of the TF record before it)
    mask = pc.match_substring_regex(pc.cast(ev["text"], pa.string()), r"(?i)replicas")
    out: dict[str, int] = {}
    for r in sorted(to_rows(ev.filter(pc.fill_null(mask, False))), key=lambda r: (r["source"], r["line"])):
        if r["worker"] not in out and (m := _REPLICAS.search(r["text"])):
            out[r["worker"]] = int(m["a"] or m["b"])
    return {w: n for w, n in out.items() if w in job.facts.named}


def _sizes_differ(job: Job) -> Iterator[Hit]:
    """A collective group whose members disagree on its size: under
    MultiWorkerMirroredStrategy every all-reduce's group is the whole cluster,
    so a task joining with another size counts another cluster in its
    TF_CONFIG ("Device /job:worker/.../task:2/device:CPU:0 is joining a group
    with size 4, but that group has size 3"). The joining task is the odd one."""
    # The sizes count tasks (one device each) only where one of them is the
    # job's own count of workers; a group of GPUs, or one process's devices
    # (/job:localhost), counts devices.
    n = len([w for w in job.facts.workers if not w.startswith("?")])
    for row in job.rows.first_reports(["collective.group_mismatch"]).values():
        f = row["fields"]
        mine, theirs = f.get("joining") or f.get("size"), f.get("existing") or f.get("group_size")
        if not (mine and theirs) or mine == theirs or n < 2 or n not in (int(mine), int(theirs)):
            continue
        if "/job:localhost/" in row["text"]:
            continue
        named = tasks_in(row["text"])
        subject = named[0] if named and named[0] in job.facts.workers else row["worker"]
        summary = (
            f"{subject} joined the job's collectives as one of {mine} tasks where the group has "
            f"{theirs}: its TF_CONFIG lists a cluster of another size than the other workers'."
        )
        # The joining task counted the workers that really ran; the group was
        # registered with another count by the other member: that one is odd.
        live = job.facts.named
        others = [w for w in live if w != subject]
        counted = _replicas_said(job)
        odd = [w for w, k in counted.items() if list(counted.values()).count(k) == 1]
        if (
            int(mine) == len(live) != int(theirs)
            and set(counted) == set(live)
            and len(odd) == 1
            and counted[odd[0]] == int(theirs)
            and odd[0] != subject
        ):
            # Each worker's script said how many replicas its strategy counts:
            # the one that counted the group's other size registered it so.
            subject = odd[0]
            summary = (
                f"{subject} registered the job's collective group with {theirs} tasks where {len(live)} "
                f"workers ran (its script counted {theirs} replicas, the others {mine}; "
                f"{named[0] if named else row['worker']} joined it as {mine}): its TF_CONFIG lists a "
                "cluster of another size than the other workers'."
            )
        elif int(mine) == len(live) != int(theirs) and len(others) == 1:
            subject = others[0]
            summary = (
                f"{subject} registered the job's collective group with {theirs} tasks where {len(live)} "
                f"workers ran ({named[0] if named else row['worker']} joined it as {mine}): its TF_CONFIG "
                f"lists a cluster of another size than the other workers'."
            )
        yield Hit(
            subject=subject,
            summary=summary,
            evidence=[evidence(row, "collective error")],
            confidence=0.8,
            ts=row["ts"],
            local=subject == row["worker"],
            facts={"its_cluster_size": int(mine), "group_size": int(theirs)},
        )
        return


def check(job: Job) -> Iterator[Hit]:
    views = job.facts.cluster_views
    if len(views) < 2:
        found = list(_sizes_differ(job))
        yield from found
        if not found:
            yield from _misdialed(job)
        return
    # Compared as the peers dial each task: behind published ports each
    # worker's own entry (where it binds) differs by design.
    views = job.facts.dialed_views
    counts = Counter(_key(spec) for spec, _ in views.values())
    if len(counts) < 2:
        return
    (common, n_common), *_ = counts.most_common()
    if list(counts.values()).count(n_common) > 1:
        odd = sorted(views)  # no majority: every view is suspect
    else:
        odd = sorted(w for w, (spec, _) in views.items() if _key(spec) != common)
    majority = json.loads(common)
    for worker in odd:
        spec, where = views[worker]
        diffs = []
        for role in sorted(set(spec) | set(majority)):
            mine, theirs = spec.get(role, []), majority.get(role, [])
            if mine != theirs:
                diffs.append(f"{role}: {mine} where the others have {theirs}")
        if not diffs:
            continue  # the list taken for the others' (no majority: each is compared with it)
        ev = [where]
        errs = job.rows.errors(worker)
        if errs:
            ev.append(evidence(errs[0], "its first error"))
        yield Hit(
            subject=worker,
            summary=f"{worker}'s TF_CONFIG lists a different cluster than the other workers' ({'; '.join(diffs)}).",
            evidence=ev,
            confidence=0.9,
            ts=min((e.ts for e in ev if e.ts is not None), default=None),
            facts={"its_cluster": spec, "others_cluster": majority},
        )
