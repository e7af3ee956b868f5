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
