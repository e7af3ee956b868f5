"""``mwms-doctor preflight``: the commonest MWMS failures caught in seconds,
before the job starts (issue 25).

Run it on every worker with the TF_CONFIG the job will have (the same
environment, or ``--tf-config``), at the same time. Each instance listens
on its own task's address from TF_CONFIG (the port the job's gRPC server
will use), serves what it sees (its TF_CONFIG, versions, its clock) and
connects to every other task of its cluster to fetch theirs, until all
answered and all fetched its own, or ``timeout`` passed. Then each says,
the same way ``analyze`` does, what would break the job:

* its TF_CONFIG missing, malformed, or naming a task its cluster lacks;
* its port already taken (a leftover process, or a second process given
  the same task index);
* a peer's address refused (nothing listens: not started, wrong port) or
  timed out (packets dropped: a firewall), or a host that does not resolve;
* a peer whose cluster differs from its own (a task missing from one
  worker's list, another port), or that answers at another task's address;
* TensorFlow or Python versions that differ between workers;
* a peer's clock off by more than ``CLOCK_LIMIT_S``.

Exit 0 when nothing would break the job, 1 when something would, 2 for a
usage error. Nothing here imports TensorFlow (versions are read from the
installed packages' metadata).

With ``allreduce``, when nothing above would break the job, each worker
then runs a tiny all-reduce over the real cluster: a child process with the
same interpreter and TF_CONFIG creates the MultiWorkerMirroredStrategy on the
task's port (the check's own listener closed first), all-reduces one number
per worker and checks the sum, under a time limit. It fails where the job
would: a handshake that does not complete, collectives that cannot run, a
TensorFlow that does not import.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from typing import Any

CLOCK_LIMIT_S = 1.0
CONNECT_TIMEOUT_S = 2.0
PATH = "/mwms-preflight"


@dataclass
class Finding:
    severity: str  # error | warning
    cls: str  # the verdict class it would end in
    task: str
    summary: str
    remedy: str


@dataclass
class Result:
    task: str
    facts: dict[str, Any]
    peers: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> its facts, as fetched
    reach: dict[str, str] = field(default_factory=dict)  # task -> ok | refused | timed out | unresolved
    findings: list[Finding] = field(default_factory=list)
    allreduce: dict[str, str] = field(default_factory=dict)  # status, detail, stderr_tail; {}: not asked

    @property
    def failed(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    def as_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "status": "failure" if self.failed else "warning" if self.findings else "ok",
            "facts": self.facts,
            "reach": self.reach,
            "peers": self.peers,
            "findings": [asdict(f) for f in self.findings],
            "allreduce": self.allreduce,
        }


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-keras", "keras"):
        try:
            out[dist.replace("-cpu", "").replace("-gpu", "")] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def parse_tf_config(text: str | None) -> tuple[dict[str, Any] | None, str]:
    """(TF_CONFIG, "") or (None, what is wrong with it)."""
    if not text:
        return None, "TF_CONFIG is not set"
    try:
        cfg = json.loads(text)
    except ValueError as exc:
        return None, f"TF_CONFIG is not valid JSON ({exc})"
    if (
        not isinstance(cfg, dict)
        or not isinstance(cfg.get("cluster"), dict)
        or not isinstance(cfg.get("task"), dict)
    ):
        return None, "TF_CONFIG has no cluster or no task"
    return cfg, ""


def _addresses(cluster: dict[str, Any]) -> dict[str, str]:
    return {f"{role}:{i}": str(a) for role, addrs in cluster.items() for i, a in enumerate(addrs or [])}


def compare(me: str, mine: dict[str, Any], peers: dict[str, dict[str, Any]]) -> list[Finding]:
    """What the peers' facts say against this worker's: clusters, identities,
    versions, clocks. Pure: ``peers`` as fetched (each with ``offset_s``)."""
    out: list[Finding] = []
    my_cluster = mine["tf_config"]["cluster"]
    for task, facts in sorted(peers.items()):
        theirs = (facts.get("tf_config") or {}).get("cluster")
        said = facts.get("task")
        if said != task:
            out.append(
                Finding(
                    "error",
                    "tf_config_mismatch",
                    task,
                    f"the process at {task}'s address ({_addresses(my_cluster).get(task)}) says it is {said}: "
                    f"two processes were given task {said}, or the cluster lists the ports in another order",
                    "Give every process its own task.index (0 to N-1, each once), matching its address's place in the cluster.",
                )
            )
        if theirs != my_cluster:
            mine_a, theirs_a = _addresses(my_cluster), _addresses(theirs or {})
            missing = sorted(set(mine_a) - set(theirs_a))
            extra = sorted(set(theirs_a) - set(mine_a))
            moved = sorted(t for t in set(mine_a) & set(theirs_a) if mine_a[t] != theirs_a[t])
            parts = (
                [f"{', '.join(missing)} missing from its cluster"] * bool(missing)
                + [f"{', '.join(extra)} only in its cluster"] * bool(extra)
                + [f"{', '.join(moved)} at another address"] * bool(moved)
            )
            out.append(
                Finding(
                    "error",
                    "tf_config_mismatch",
                    task,
                    f"{task}'s cluster differs from {me}'s: {'; '.join(parts) or 'the same tasks, listed otherwise'}",
                    "Render every worker's TF_CONFIG from one cluster spec; only task.index may differ.",
                )
            )
        mv, tv = mine.get("versions") or {}, facts.get("versions") or {}
        for pkg in ("tensorflow", "python"):
            if mv.get(pkg) and tv.get(pkg) and mv[pkg] != tv[pkg]:
                out.append(
                    Finding(
                        "error" if pkg == "tensorflow" else "warning",
                        "version_skew",
                        task,
                        f"{task} has {pkg} {tv[pkg]}, {me} has {mv[pkg]}",
                        "Run every worker from one image or one lock file (tensorflow==X.Y.Z).",
                    )
                )
        if abs(float(facts.get("offset_s") or 0.0)) > CLOCK_LIMIT_S:
            out.append(
                Finding(
                    "warning",
                    "clock",
                    task,
                    f"{task}'s clock is {facts['offset_s']:+.1f} s off {me}'s: its logs' times will not line up",
                    "Run NTP (chrony, systemd-timesyncd) on every host.",
                )
            )
    return out


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    facts: dict[str, Any]
    fetched_by: set[str]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        if not self.path.startswith(PATH):
            self.send_error(404)
            return
        if "?from=" in self.path:
            self.server.fetched_by.add(self.path.split("?from=", 1)[1])
        body = json.dumps({**self.server.facts, "time": time.time()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:  # quiet
        pass


def _reach(address: str) -> str:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            return "ok"
    except socket.gaierror:
        return "unresolved"
    except ConnectionRefusedError:
        return "refused"
    except TimeoutError:
        return "timed out"
    except OSError as exc:
        return f"error ({exc.strerror or exc})"


def run(tf_config_text: str | None, timeout_s: float = 30.0) -> Result:
    """This worker's pre-flight: serve, probe, compare (see the module's docstring)."""
    cfg, problem = parse_tf_config(tf_config_text)
    facts: dict[str, Any] = {"versions": versions(), "host": socket.gethostname(), "pid": os.getpid()}
    if cfg is None:
        r = Result("?", facts)
        r.findings.append(
            Finding(
                "error",
                "tf_config_mismatch",
                "?",
                problem,
                "Set TF_CONFIG as a JSON object with cluster and task.",
            )
        )
        return r
    task = f"{cfg['task'].get('type')}:{cfg['task'].get('index')}"
    facts.update(task=task, tf_config=cfg)
    r = Result(task, facts)
    addresses = _addresses(cfg["cluster"])
    if task not in addresses:
        r.findings.append(
            Finding(
                "error",
                "tf_config_mismatch",
                task,
                f"{task} is not in its own cluster ({', '.join(sorted(addresses)) or 'empty'})",
                "Give every process a task its cluster lists (index 0 to N-1 of its type).",
            )
        )
        return r
    host, _, port = addresses[task].rpartition(":")
    try:
        server = _Server(("" if host in ("localhost", "0.0.0.0") else host, int(port)), _Handler)
    except OSError as exc:
        r.findings.append(
            Finding(
                "error",
                "tf_config_mismatch",
                task,
                f"{task} cannot listen on {addresses[task]} ({exc.strerror or exc}): another process holds the "
                f"port (a leftover of an earlier run, or a second process given task {task})",
                f"Find who holds it (`ss -ltnp | grep {port}`); give every process its own task index.",
            )
        )
        return r
    server.facts, server.fetched_by = facts, set()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    peers = {t: a for t, a in addresses.items() if t != task}
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            for t, addr in peers.items():
                if t in r.peers:
                    continue
                r.reach[t] = _reach(addr)
                if r.reach[t] != "ok":
                    continue
                try:
                    t0 = time.time()
                    with urllib.request.urlopen(
                        f"http://{addr}{PATH}?from={task}", timeout=CONNECT_TIMEOUT_S
                    ) as resp:
                        got = json.loads(resp.read())
                    t1 = time.time()
                    got["offset_s"] = round(float(got.pop("time")) - (t0 + t1) / 2, 3)
                    r.peers[t] = got
                except (OSError, ValueError, urllib.error.URLError):
                    r.reach[t] = "not a preflight (something else listens there)"
            if len(r.peers) == len(peers) and set(peers) <= server.fetched_by:
                break
            time.sleep(0.3)
    finally:
        # Stay a moment for peers still fetching, then close.
        end = time.monotonic() + min(3.0, max(0.0, deadline - time.monotonic()))
        while time.monotonic() < end and not set(peers) <= server.fetched_by:
            time.sleep(0.2)
        server.shutdown()
        server.server_close()
    for t in sorted(peers):
        how = r.reach.get(t, "not tried")
        if t in r.peers:
            continue
        why = {
            "refused": "nothing listens there: the task is not running (its preflight, later its job), or the port is wrong",
            "timed out": "connections are dropped: a firewall or a network policy between the hosts",
            "unresolved": "the host name does not resolve from here",
        }.get(how, how)
        r.findings.append(
            Finding(
                "error",
                "firewall_blocked" if how == "timed out" else "handshake_deadlock",
                t,
                f"{task} cannot reach {t} at {peers[t]}: {why}",
                "Start every task (with the same TF_CONFIG cluster); open every task's port to every other host.",
            )
        )
    r.findings += compare(task, facts, r.peers)
    return r


# The child process of the tiny all-reduce: prints one JSON line, the sum it got.
_ALLREDUCE = """
import json, os, time
t0 = time.time()
import tensorflow as tf
strategy = tf.distribute.MultiWorkerMirroredStrategy()
n = strategy.num_replicas_in_sync
total = strategy.reduce(
    tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(1.0)), axis=None
)
print(json.dumps({"sum": float(total), "replicas": n, "seconds": round(time.time() - t0, 1)}), flush=True)
"""


def allreduce(tf_config_text: str, timeout_s: float) -> tuple[str, str, str]:
    """Run the tiny all-reduce: (status, what it says, its stderr's tail);
    status ok | failed | timed out | no tensorflow."""
    import subprocess
    import sys

    env = {**os.environ, "TF_CONFIG": tf_config_text}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _ALLREDUCE],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired as exc:
        tail = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return "timed out", f"no result in {timeout_s:.0f} s", _tail(tail)
    tail = _tail(proc.stderr)
    if "No module named 'tensorflow'" in proc.stderr:
        return "no tensorflow", "TensorFlow does not import in this interpreter", tail
    for line in reversed(proc.stdout.splitlines()):
        try:
            got = json.loads(line)
        except ValueError:
            continue
        if isinstance(got, dict) and "sum" in got:
            replicas = int(got.get("replicas") or 0)
            if abs(float(got["sum"]) - replicas) < 1e-6:
                return "ok", f"sum {got['sum']:g} over {replicas} replicas in {got.get('seconds')} s", tail
            return "failed", f"sum {got['sum']:g}, expected {replicas}", tail
    last = next((ln for ln in reversed(tail.splitlines()) if ln.strip()), f"exit {proc.returncode}")
    return "failed", last.strip()[:400], tail


def _classify(task: str, stderr: str, exit_record: str | None = None) -> tuple[str | None, str | None]:
    """What ``analyze`` concludes from the all-reduce's stderr, as one worker's
    log (with its exit record when preflight stopped it at its time limit):
    (class, summary), or (None, None) when it finds no failure."""
    import tempfile
    from pathlib import Path

    from .pipeline import run_job

    if not stderr.strip():
        return None, None
    with tempfile.TemporaryDirectory(prefix="mwms-preflight-") as d:
        name = task.replace(":", "-")
        (Path(d) / f"{name}.log").write_text(stderr, encoding="utf-8")
        if exit_record is not None:
            (Path(d) / f"{name}.exit").write_text(exit_record, encoding="utf-8")
        try:
            v = run_job(Path(d)).analysis.verdict
        except Exception:  # noqa: BLE001 - the stderr is still shown as it is
            return None, None
    return (v.cls, v.summary) if v.status == "failure" else (None, None)


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def with_allreduce(r: Result, tf_config_text: str | None, timeout_s: float) -> Result:
    """``r`` with the tiny all-reduce's outcome, when nothing before would break the job."""
    if r.failed or tf_config_text is None:
        r.allreduce = {"status": "not run", "detail": "the checks above found what would break the job"}
        return r
    status, detail, tail = allreduce(tf_config_text, timeout_s)
    r.allreduce = {"status": status, "detail": detail, "stderr_tail": tail}
    if status == "ok":
        return r
    if status == "no tensorflow":
        r.findings.append(
            Finding(
                "warning",
                "not_checked",  # nothing is known to be wrong: the all-reduce could not be tried here
                r.task,
                f"the all-reduce was not run: {detail}",
                "Run preflight with the interpreter the job uses (its image, its virtualenv).",
            )
        )
        return r
    # A child stopped at its time limit was killed, as a launcher's deadline kills it.
    killed = f"exit_code: 137\nsignal: SIGKILL\nnote: stopped by preflight after {timeout_s:.0f} s\n"
    cls, why = _classify(r.task, tail, killed if status == "timed out" else None)
    r.findings.append(
        Finding(
            "error",
            cls or ("handshake_deadlock" if status == "timed out" else "unknown"),
            r.task,
            f"the tiny all-reduce over the cluster {status}: {(why or detail).rstrip('.')}",
            "Run preflight on every task at once; read the all-reduce's stderr below (saved with --out): "
            "the first error there is what the job would hit.",
        )
    )
    return r


def html(r: Result) -> str:
    """The pre-flight as one self-contained page, as the reports are."""
    import datetime as dt

    from . import __version__
    from .report.html import environment

    cluster = ((r.facts.get("tf_config") or {}).get("cluster")) or {}
    addresses = _addresses(cluster) if isinstance(cluster, dict) else {}
    return (
        environment()
        .get_template("preflight.html.j2")
        .render(
            r=r,
            status="would fail" if r.failed else "warnings" if r.findings else "ready",
            tasks=sorted(set(r.reach) | (set(addresses) - {r.task})),
            addresses=addresses,
            version=__version__,
            generated=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        )
    )


def redacted(r: Result) -> Result:
    """``r`` with secrets taken out of what it shows (the all-reduce's stderr
    can print anything the environment held), as analyze's reports are."""
    from .redact import redact_secrets

    if r.allreduce.get("stderr_tail"):
        r.allreduce = {**r.allreduce, "stderr_tail": redact_secrets(r.allreduce["stderr_tail"])}
    return r


def markdown(r: Result) -> str:
    status = "would fail" if r.failed else "has warnings" if r.findings else "is ready"
    lines = [f"# Pre-flight of {r.task}: the job {status}", ""]
    lines += [f"- **{f.severity}** ({f.cls}) {f.task}: {f.summary}. *Do:* {f.remedy}" for f in r.findings]
    if not r.findings:
        lines.append("Every task answered, with the same cluster, versions and clock.")
    if r.allreduce:
        lines += [
            "",
            f"Tiny all-reduce over the cluster: **{r.allreduce['status']}** ({r.allreduce['detail']}).",
        ]
    lines += ["", "| task | reached | tensorflow | python | clock offset (s) |", "|---|---|---|---|---|"]
    for t in sorted(r.reach):
        p = r.peers.get(t, {})
        v = p.get("versions") or {}
        lines.append(
            f"| {t} | {r.reach[t]} | {v.get('tensorflow', '')} | {v.get('python', '')} | {p.get('offset_s', '')} |"
        )
    return "\n".join(lines) + "\n"
