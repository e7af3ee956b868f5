"""CK001 checkpoint-files-collided: workers overwrote each other's checkpoint files.

## What it means
Saving a checkpoint failed because files it had just written were gone or
replaced: `MergeV2Checkpoints` could not find its `<prefix>_temp/part-*`
files (`allow_missing_files was set to false and ..._temp/part-00000-of-00001
did not exist`, `No such file or directory`), or a rename of a temporary
file failed. Under MultiWorkerMirroredStrategy this means several workers
wrote to the same checkpoint path at once, and one's merge removed or
replaced another's temporary files.

## Why it happens
Every worker must take part in saving (the variables are mirrored and saving
runs collectives), but only the chief may write to the real path; the others
must write to a temporary directory of their own. A script that calls
`model.save(path)`, `checkpoint.save(path)` or a `CheckpointManager` with
the same shared path (an NFS or GCS directory) on every worker collides.

## What to do
Write the chief's checkpoint to the real path and every other worker's to a
per-worker temporary path, then delete it, as in TensorFlow's MWMS tutorial
(`write_filepath` with `task_type`/`task_id`), or use
`tf.keras.callbacks.BackupAndRestore` / `ModelCheckpoint`, which do this for
you.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import Row, evidence

CODE = "CK001"
NAME = "checkpoint-files-collided"
CLASS = "checkpoint_conflict"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def _path(row: Row) -> str:
    """The checkpoint file the failed save names."""
    f = row["fields"]
    return str(
        f.get("path") or f.get("temp_path") or f.get("h5_path") or f.get("io_path") or "its checkpoint"
    )


def check(job: Job) -> Iterator[Hit]:
    failed = job.rows.first_reports(["checkpoint.write_failed"])
    live = job.facts.named
    leader = job.facts.leader
    others = [w for w in live if w != leader]
    if leader is not None and list(failed) == [leader] and others:
        # Only the chief's save failed: another worker wrote where only the
        # chief may (the chief is where it showed). With one other worker,
        # that one; with several, nothing here says which of them: all are named.
        row = failed[leader]
        path = _path(row)
        who = others[0] if len(others) == 1 else ", ".join(others)
        verb = (
            "writes its checkpoints" if len(others) == 1 else "write their checkpoints (one or more of them)"
        )
        yield Hit(
            subject=others[0],
            also=others[1:],
            summary=(
                f"{who} {verb} where only the chief may: {leader}'s save failed because "
                f"another writer removed or replaced its temporary file {path}."
            ),
            evidence=[evidence(row, "checkpoint error")],
            confidence=0.8 if len(others) == 1 else 0.6,
            ts=row["ts"],
            local=False,
            facts={"path": path, "failed_on": leader},
        )
        return
    if (removed := _removed_under(job, failed)) is not None:
        yield removed
        return
    for row in failed.values():
        path = _path(row)
        # The other workers (not the chief, who may) that name the same
        # checkpoint folder in their own lines write there too.
        folder = _folder(path)
        also = [
            w
            for w in others
            if w != row["worker"] and w not in failed and folder and _mentions(job, w, folder)
        ]
        yield Hit(
            subject=row["worker"],
            also=also,
            summary=(
                f"{row['worker']} failed to save a checkpoint: another writer removed or replaced its "
                f"temporary file {path}; several workers write to the same checkpoint path"
                + (
                    f" ({', '.join(also)} also name{'s' if len(also) == 1 else ''} {folder} in "
                    f"{'its log' if len(also) == 1 else 'their logs'})."
                    if also
                    else "."
                )
            ),
            evidence=[evidence(row, "checkpoint error")],
            confidence=0.85,
            ts=row["ts"],
            facts={"path": path},
        )


# A line of a script's own that says it deletes a folder ("removing temporary
# checkpoint dir path=/ckpt", "shutil.rmtree(/ckpt)", "cleaning up /ckpt").
_REMOVES = re.compile(r"(?i)\b(?:remov\w*|delet\w*|clean\w*|rmtree|rm -r\w*|purg\w*|wip(?:e|ed|ing)\b)")
_A_PATH = re.compile(r"(?:[a-z][\w+.-]*://[^\s'\"),;]+|(?<![\w.])/[\w.@%+=:-]+(?:/[\w.@%+=:-]+)*)")


def _removed_under(job: Job, failed: dict[str, Row]) -> Hit | None:
    """One worker whose save did not fail said it removed a folder that
    holds every path the failed saves name, before they failed: it deleted
    their files (its 'temporary' folder is theirs). None when no worker, or
    more than one, said so."""
    paths = {w: _path(r) for w, r in failed.items()}
    for w, r in failed.items():
        if not paths[w].startswith(("/", "gs:", "s3:", "hdfs:")):
            # (the path the error's own words name: "... /ckpt/tmp_worker_1; No such file or directory")
            named = [m for m in _A_PATH.findall(r["text"]) if m.count("/") >= 2]
            if not named:
                return None
            paths[w] = named[-1]
    # Said before the last of the failures at least (a removal logged as it
    # happened races the error it causes on another worker).
    last = max((r["ts"] for r in failed.values() if r["ts"] is not None), default=None)
    found: dict[str, tuple[Row, str]] = {}
    for r in job.rows.matching(None, _REMOVES.pattern):
        w = r["worker"]
        if w in failed or w.startswith("?") or (last is not None and r["ts"] is not None and r["ts"] > last):
            continue
        line = r["text"].split("\n", 1)[0]
        if not _REMOVES.search(line):
            continue
        for folder in (m.rstrip("/") for m in _A_PATH.findall(line)):
            if folder.count("/") >= 2 and all(
                p == folder or p.startswith(folder + "/") for p in paths.values()
            ):
                found.setdefault(w, (r, folder))
    if len(found) != 1:
        return None
    ((worker, (row, folder)),) = found.items()
    victims = sorted(failed)
    return Hit(
        subject=worker,
        summary=(
            f"{worker} removed {folder} ({row['text'].splitlines()[0].strip()[:120]!r}), the folder "
            f"{', '.join(victims)} {'was' if len(victims) == 1 else 'were'} saving checkpoints in; "
            f"{'its save' if len(victims) == 1 else 'their saves'} failed there for files gone from it "
            f"({paths[victims[0]]}). A worker's temporary checkpoint folder must be its own."
        ),
        evidence=[evidence(row, "removes the folder")]
        + [evidence(failed[w], "checkpoint error") for w in victims[:3]],
        confidence=0.85,
        ts=row["ts"],
        facts={"path": folder, "failed_on": ", ".join(victims)},
    )


def _folder(path: str) -> str:
    """The checkpoint's folder: the path up to its temporary part
    (``/ckpt/ckpt-1_temp/part-0`` -> ``/ckpt``), else its parent."""
    parts = path.split("/")
    for i, part in enumerate(parts):
        if "_temp" in part or part.startswith(".tmp"):
            return "/".join(parts[:i])
    return "/".join(parts[:-1]) if len(parts) > 2 else ""


def _mentions(job: Job, worker: str, folder: str) -> bool:
    import pyarrow as pa
    import pyarrow.compute as pc

    ev = job.tables.events
    mine = ev.filter(pc.equal(pc.cast(ev["worker"], pa.string()), worker))
    return bool(pc.any(pc.match_substring(pc.cast(mine["text"], pa.string()), folder + "/")).as_py())
