"""DA001 data-not-sharded: every worker reads the same data.

## What it means
The profiler traces show each worker's tf.data pipeline, and no worker's has
a `Shard` stage: every worker iterates over the whole dataset, so all
workers train on the same batches in the same order. The job runs and exits
0, but each epoch does N times the work for the data of one worker, and the
effective batch holds N copies of each example. With auto-sharding on,
MultiWorkerMirroredStrategy inserts `Shard` into every worker's pipeline
(by FILE, or by DATA, which is what TF's "AUTO sharding policy will apply
DATA sharding policy" warning means: sharding *was* applied). This is read
from profiler traces only: without them this rule is not evaluated.

## Why it happens
`options.experimental_distribute.auto_shard_policy = AutoShardPolicy.OFF`
(often copied to silence the DATA fallback warning), a dataset built per
worker with `distribute_datasets_from_function` that ignores
`input_context`, or a source TF cannot shard (a generator) with the same
seed everywhere.

## What to do
Remove `AutoShardPolicy.OFF`, or set it to DATA or FILE; with
`distribute_datasets_from_function`, call `dataset.shard(
input_context.num_input_pipelines, input_context.input_pipeline_id)`. If
every worker deliberately reads different files without a Shard op, this
finding does not apply.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Evidence, Hit

CODE = "DA001"
NAME = "data-not-sharded"
CLASS = "identical_data"
SEVERITY = "warning"
REQUIRES = ("trace_events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def check(job: Job) -> Iterator[Hit]:
    paths: dict[str, set[str]] = {}
    sources: dict[str, str] = {}
    for r in job.rows.trace(["iterator"]):
        if r["iterator_path"]:
            sources.setdefault(r["worker"], r["source"])
            paths.setdefault(r["worker"], set()).add(r["iterator_path"])
    if len(paths) < 2 or len([w for w in job.facts.workers if not w.startswith("?")]) < 2:
        return
    unsharded = sorted(w for w, ps in paths.items() if not any("::Shard" in p for p in ps))
    if not unsharded:
        return
    sharded = sorted(set(paths) - set(unsharded))
    example = max(paths[unsharded[0]], key=len)
    scope = "no worker's" if not sharded else f"{', '.join(unsharded)}'s (but {', '.join(sharded)}'s does)"
    yield Hit(
        subject=unsharded[0],
        also=unsharded[1:],
        summary=(
            f"{scope[0].upper() + scope[1:]} input pipeline has a Shard stage: "
            f"{'every worker reads' if not sharded else 'these workers read'} the whole dataset, so they train "
            f"on the same batches (pipeline: {example})."
        ),
        evidence=[
            Evidence(w, sources[w], 0, 0, None, f"tf.data pipeline: {max(paths[w], key=len)}", "profile")
            for w in unsharded
        ],
        confidence=0.85,
        ts=None,
        local=True,
        facts={"pipelines": {w: sorted(ps, key=len)[-1] for w, ps in sorted(paths.items())}},
    )
