"""FW001 peer-unreachable: a worker that was running could not be reached.

## What it means
Other workers tried to open a connection to this worker for the collectives
(`/tensorflow.WorkerService/RecvBuf`) and gave up: the TCP connection was
never answered (`tcp handshaker shutdown`, `Connection timed out`,
`DEADLINE_EXCEEDED`, `No route to host`), although the worker was alive:
it had started its server and kept logging after they gave up. Packets to it
were dropped on the way, which is what a firewall rule or a network policy
does. A worker that is down looks different: its connections are refused or
reset, and its log stops (see PD001). The matrix below shows which worker
could not reach which.

## Why it happens
A firewall, security group or Kubernetes NetworkPolicy allows the port the
coordination service uses (the first task's) but not the other workers'
ports; a host firewall (`iptables`, `firewalld`, `ufw`) on one node; workers
on different networks where one cannot route to the other. A connection the
worker makes *out* succeeds (it registers with the coordination service)
while connections *in* are dropped, so the job starts and then fails at its
first all-reduce, about 20 s later.

## What to do
From an observer's host, try the unreachable worker's address
(`nc -vz host port`). Open every worker's port (the ports in TF_CONFIG) to
every other worker, in both directions, in the firewall, security group or
NetworkPolicy; a refused connection instead of a silent drop would have made
this fail fast.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Evidence, Hit
from mwms_doctor.ingest.templates import PROGRESS_KINDS
from mwms_doctor.rows import Row, evidence
from mwms_doctor.tables import sort_key

CODE = "FW001"
NAME = "peer-unreachable"
CLASS = "firewall_blocked"
SEVERITY = "error"
REQUIRES = ("events", "workers", "rpc")
PRECEDENCE = "specific"
# A refusal at an address the peer never listened on is a wrong cluster list, not a firewall.
DEFERS_TO: tuple[str, ...] = ("TC002",)

# Connection attempts that were never answered: packets dropped on the way.
UNANSWERED = ("connect_timeout", "deadline_exceeded", "no_route", "connect_failed")


def _connect_failures(job: Job) -> list[Row]:
    out = []
    for r in job.rows.rpc():
        if (
            r["peer_task"]
            and r["peer_task"] != r["worker"]
            and r["reason"] in (*UNANSWERED, "connection_refused")
        ):
            out.append(r)
    return out


def _coordination_unreachable(job: Job) -> Iterator[Hit]:
    """Every task started its server, yet no task could register with the
    coordination service (not even the leader's own agent) and nothing
    trained: connections to the leader's port go nowhere. With every task
    present, a task that never started is ruled out; what is left is a
    network path that drops packets to the leader (or a wrong address)."""
    wk = job.facts.workers
    tasks = [w for w in wk if not w.startswith("?")]
    live = [w for w, r in wk.items() if r["has_log"]]
    if len(live) < 2 or any(not wk[t]["has_log"] for t in tasks):
        return
    if job.rows.has(["coord.agent_connected", "coord.task_connected", *PROGRESS_KINDS]):
        return
    started = {r["worker"]: r for r in job.rows.of(["tf.server_started"])}
    if set(started) != set(live):
        return
    leaders = [r["worker"] for r in job.rows.of(["coord.service_started"])]
    leader = leaders[0] if leaders else min(tasks or live, key=sort_key)
    ev = [evidence(started[w], "started, never registered") for w in sorted(started, key=sort_key)]
    ev += [evidence(r, "its last line") for w in live for r in job.rows.last(w, 1)][:4]
    yield Hit(
        subject=leader,
        summary=(
            f"Every worker started its server, but none could register with the coordination service on "
            f"{leader}, not even {leader}'s own agent, and nothing trained: connections to {leader}'s port "
            f"get no answer. A firewall or network policy dropping that port (or a wrong address for it) "
            f"does this; no worker was missing."
        ),
        evidence=ev,
        confidence=0.55,
        ts=min((e.ts for e in ev if e.ts is not None), default=None),
        local=False,
        facts={"port": str(wk.get(leader, {}).get("port") or ""), "unreachable": [leader]},
    )


def _unnamed_peer(job: Job) -> Iterator[Hit]:
    """Connections that failed to an address no cluster spec here names (one
    worker's excerpt, a client outside the cluster): the peer is unreachable
    from this side; whether it is blocked, down or not started, this
    evidence alone cannot tell."""
    rows = [
        r
        for r in job.rows.rpc()
        if not r["peer_task"] and r["reason"] in (*UNANSWERED, "connection_refused", "name_resolution")
    ]
    # Connections that failed outside gRPC (Open MPI, launchers) say the same.
    rows += [
        {
            "worker": r["worker"],
            "source": r["source"],
            "line": r["line"],
            "ts": r["ts"],
            "peer": r["fields"].get("address"),
            "message": r["text"].strip().splitlines()[0],
        }
        for r in job.rows.of(["net.connect_failed"])
    ]
    if not rows or job.rows.of([*PROGRESS_KINDS]):
        return
    first = rows[0]
    peer = first["peer"] or "a peer"
    yield Hit(
        subject="?",
        summary=(
            f"{first['worker']} could not connect to {peer} ({(first['message'] or '')[:160]}); nothing trained. "
            f"A firewall, a network policy or an address that does not route from here would do this; so would "
            f"a peer that was not running."
        ),
        evidence=[
            Evidence(
                r["worker"],
                r["source"],
                r["line"],
                r["line"],
                r["ts"],
                r["message"] or "",
                "could not connect",
            )
            for r in rows[:2]
        ],
        confidence=0.45,
        ts=first["ts"],
        local=False,
        facts={"peer": peer},
    )


def _logged_on_after(job: Job, peer: str, row: Row) -> bool:
    """Whether ``peer`` printed a later line of the file ``row`` is in."""
    return any(r["source"] == row["source"] and r["line"] > row["line"] for r in job.rows.last(peer, 50))


def check(job: Job) -> Iterator[Hit]:
    failures = _connect_failures(job)
    if not failures:
        yield from _coordination_unreachable(job)
        yield from _unnamed_peer(job)
        return
    wk = job.facts.workers
    specs_agree = len({str(sorted(v[0].items())) for v in job.facts.dialed_views.values()}) <= 1
    by_peer: dict[str, list[Row]] = defaultdict(list)
    for r in sorted(failures, key=lambda r: (r["ts"] is None, r["ts"] or dt.datetime.min)):
        by_peer[r["peer_task"]].append(r)
    matrix: dict[str, dict[str, str]] = defaultdict(dict)
    unreachable: list[tuple[str, list[Row]]] = []
    rpc = job.rows.rpc()
    # A worker's errors that report a connection it could not make (its own
    # check of its peers) are no failure of its own.
    reports = {(r["source"], r["line"]) for r in rpc if r["reason"] in (*UNANSWERED, "connection_refused")}
    for peer, rows in by_peer.items():
        # A failure before the peer's server listened is the start-up's race
        # (a script's own check retried until it answered), no block.
        listening = min(
            (r["ts"] for r in job.rows.of(["tf.server_started"], peer) if r["ts"] is not None), default=None
        )
        rows = [r for r in rows if listening is None or r["ts"] is None or r["ts"] > listening]
        if not rows:
            continue
        # An observer outside the cluster (a platform's probe, a launcher's port
        # check: no task's own dial, which may be its own path that is cut)
        # whose lines carry no time (a time-of-day prefix, no date), in the
        # file the peer logged to as well: that file's order is their time.
        started_in = {(r["source"], r["line"]) for r in job.rows.of(["tf.server_started"], peer)}
        in_order = [
            r
            for r in rows
            if r["ts"] is None
            and str(r["worker"]).startswith("?")
            and any(src == r["source"] and line < r["line"] for src, line in started_in)
        ]
        ordered = {(r["source"], r["line"]) for r in in_order}
        timed = next((r for r in rows if r["ts"] is not None), None)
        # A peer that logged on after the others gave up on it was not dead
        # (gRPC gives up on a connect after ~20 s).
        alive = (
            wk.get(peer, {}).get("has_log")
            and timed is not None
            and job.facts.alive_after(peer, timed["ts"], job.rows.ts_kind_at(timed["source"], timed["line"]))
            and job.rows.has(["tf.server_started"], peer)
        )
        # A peer refused at its own address by its own dial (it reports the
        # refusal itself) was up: what stands between is the path to that
        # address (a published port that is not forwarded, a rule on it).
        alive = alive or (
            job.rows.has(["tf.server_started"], peer)
            and any(
                r["worker"] == peer
                and r["peer_task"] == peer
                and r["reason"] in ("connection_refused", *UNANSWERED)
                for r in rpc
            )
        )
        # A peer listening before it was refused (the rows left are after that),
        # with no error of its own (its reports of peers it could not reach are
        # none), in a job whose every worker was then killed
        # from outside (a runner's deadline): it was up until that kill.
        # Refused after it listened, by that file's order, and it logged on after
        # the refusal in the same file: it was up.
        alive = alive or any(_logged_on_after(job, peer, r) for r in in_order)
        alive = alive or (
            timed is not None
            and listening is not None
            and not [e for e in job.rows.errors(peer) if (e["source"], e["line"]) not in reports]
            and all(wk[w].get("exit_signal") for w in job.facts.live)
        )
        if not alive:
            continue  # down, not blocked: PD001's business
        dropped = [r for r in rows if r["reason"] in UNANSWERED]
        # Refused by a live peer: a firewall that rejects, unless the workers'
        # specs differ (then it is the wrong address: TC002).
        refused = (
            [
                r
                for r in rows
                if r["reason"] == "connection_refused"
                and (
                    (r["ts"] is not None and listening is not None and r["ts"] > listening)
                    or (r["source"], r["line"]) in ordered
                )
            ]
            if specs_agree
            else []
        )
        if not dropped and not refused:
            continue
        for r in dropped + refused:
            matrix[r["worker"]].setdefault(
                peer, "no answer (dropped)" if r["reason"] in UNANSWERED else "refused"
            )
        unreachable.append((peer, dropped or refused))
    if not unreachable:
        return
    unreachable.sort(key=lambda pr: -len({r["worker"] for r in pr[1]}))
    subject, rows = unreachable[0]
    # One worker cut off from every other (none reaches it, it reaches none):
    # the others are "unreachable" only from it; the fault is on its side.
    others = set(job.facts.named) - {subject}
    if others and {r["worker"] for r in rows} >= others:
        unreachable = [unreachable[0]] + [
            (p, rs) for p, rs in unreachable[1:] if {r["worker"] for r in rs} - {subject}
        ]
    observers = sorted({r["worker"] for r in rows})
    ev: list[Evidence] = []
    for obs in observers:
        first = next(r for r in rows if r["worker"] == obs)
        ev.append(
            Evidence(
                obs,
                first["source"],
                first["line"],
                first["line"],
                first["ts"],
                first["message"] or "",
                "could not connect",
            )
        )
    alive_rows = job.rows.last(subject, 1)
    ev += [evidence(r, "it logged on after they gave up") for r in alive_rows]
    how = "never answered (packets dropped)" if rows[0]["reason"] in UNANSWERED else "were refused"
    workers_list = sorted(wk)
    # An observer no task is: a check from outside the cluster, named by its file.
    said = [
        o
        if not o.startswith("?")
        else f"a check from outside the cluster ({next(r['source'] for r in rows if r['worker'] == o)})"
        for o in observers
    ]
    yield Hit(
        subject=subject,
        also=[p for p, _ in unreachable[1:]],
        summary=(
            f"{', '.join(said)} could not connect to {subject}, which was running: their connections "
            f"{how} ({rows[0]['message'][:160]}). A firewall or network policy blocks {subject}'s port."
        ),
        evidence=ev,
        confidence=0.85 if rows[0]["reason"] in UNANSWERED else 0.6,
        ts=rows[0]["ts"],
        local=False,
        facts={
            "matrix": {o: {p: matrix[o].get(p, "") for p in workers_list} for o in workers_list},
            "unreachable": [p for p, _ in unreachable],
            "port": str(wk.get(subject, {}).get("port") or ""),
        },
    )
