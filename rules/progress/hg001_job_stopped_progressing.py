"""HG001 job-stopped-progressing: the workers stopped making progress, and the job was stopped or its logs end.

## What it means
No worker finished its training, and no worker made progress (a step, a
loss line, an epoch) for a long stretch before the logs end or before every
worker was stopped at the same moment (SIGTERM on all of them at once: a
job runner's timeout or a person cancelling it). The job was stuck: in a
collective that a peer never joined, behind a network path that silently
drops packets, or in a worker blocked in its own code. This finding stands
alone only when nothing more specific explains the stop; the worker that
stopped progressing first is named when one did.

## Why it happens
A worker blocked outside TensorFlow (a data loader waiting on storage, a
lock, an infinite loop in the script), a port blocked mid-training (packets
dropped without an error), a peer that hangs instead of dying, or a
collective that some worker never reaches (a step skipped on one worker).

## What to do
Start with the worker that stopped first and its last lines below. Next
time, take stacks while it hangs (`py-spy dump --pid`, or
`faulthandler.dump_traceback_later`), and give collectives a timeout
(`tf.distribute.experimental.CommunicationOptions(timeout_seconds=...)`) so a
hang becomes an error that names the missing peer.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping

from mwms_doctor.facts import Job, stop_times
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.messages import messages_tagged
from mwms_doctor.rows import evidence
from mwms_doctor.stacks import INPUT, OWN, TF, MainThread, main_threads
from mwms_doctor.text import mask_message

CODE = "HG001"
NAME = "job-stopped-progressing"
CLASS = "hang"
SEVERITY = "error"
REQUIRES = ("events", "workers")
# Only when no other error finding explains the job: a hang is what is left
# once the specific causes (handshake, firewall, a dead peer) are ruled out.
PRECEDENCE = "fallback"
DEFERS_TO: tuple[str, ...] = ()

# Silence before the end this long, and much longer than a step took, is a stop.
STUCK_AFTER = dt.timedelta(seconds=20)
# A worker whose last progress is this much earlier than the others' stopped first.
FIRST_BY = dt.timedelta(seconds=5)


def _point(row: dict[str, object]) -> tuple[int, int] | None:
    """How far a progress record says training got: (epoch, step)."""
    f = row["fields"]
    assert isinstance(f, dict)
    epoch, step = str(f.get("epoch") or ""), str(f.get("step") or "")
    if not (epoch.isdigit() or step.isdigit()):
        return None
    return (int(epoch) if epoch.isdigit() else 0, int(step) if step.isdigit() else 0)


def _behind(progress: Mapping[str, dict[str, object]]) -> str | None:
    """The one worker whose last progress is behind every other worker's, by
    the counters the lines print (all of one kind); None when no one is."""
    kinds = {str(r["kind"]) for r in progress.values()}
    if len(progress) < 2 or len({k.split(".", 1)[0] for k in kinds}) != 1:
        return None
    if len(kinds) > 1:
        return _behind_by_epoch(progress)
    points = {w: pt for w, r in progress.items() if (pt := _point(r)) is not None}
    if len(points) != len(progress):
        return None
    low = min(points.values())
    behind = [w for w, pt in points.items() if pt == low]
    return behind[0] if len(behind) == 1 else None


def _behind_by_epoch(progress: Mapping[str, dict[str, object]]) -> str | None:
    """One script's records of two kinds (its step lines and its epoch-end
    lines): their epochs, counted alike, still order them. The one worker
    whose last record is of an earlier epoch than every other worker's
    ("epoch finished epoch=1" while the others logged "train step epoch=2
    step=15") stopped first. None when the epochs do not say."""
    epochs: dict[str, int] = {}
    for w, r in progress.items():
        f = r["fields"]
        assert isinstance(f, dict)
        epoch = str(f.get("epoch") or "")
        if not epoch.isdigit():
            return None
        epochs[w] = int(epoch)
    low = min(epochs.values())
    behind = [w for w, e in epochs.items() if e == low]
    return behind[0] if len(behind) == 1 else None


def _behind_in_epoch(job: Job, progress: Mapping[str, dict[str, object]]) -> str | None:
    """Keras' lines of two kinds: a worker whose last word is an epoch's start
    ("Epoch 2/5") while every other printed that epoch's end ("15/15 - 1s -
    loss: ...") stopped inside it, before its epoch-end callbacks finished:
    the others waited for it there. None when no one worker is so behind."""
    if len(progress) < 2 or {r["kind"] for r in progress.values()} != {"keras.epoch", "keras.epoch_end"}:
        return None
    points: dict[str, tuple[int, int]] = {}
    for w, r in progress.items():
        f = r["fields"]
        assert isinstance(f, dict)
        epoch = str(f.get("epoch") or "")
        if not epoch.isdigit():
            starts = [
                x
                for x in job.rows.of(["keras.epoch"], w)
                if x["line"] <= r["line"] and x["source"] == r["source"]
            ]
            epoch = str(starts[-1]["fields"].get("epoch") or "") if starts else ""
        if not epoch.isdigit():
            return None
        points[w] = (int(epoch), 0 if r["kind"] == "keras.epoch" else 1)
    low = min(points.values())
    behind = [w for w, pt in points.items() if pt == low]
    return behind[0] if len(behind) == 1 and len(set(points.values())) == 2 else None


# A Keras progress bar's update ("7/10 [=====>....] - ETA: 0s - loss: ..."):
# verbose=1 rewrites it in place, so a log holds its updates glued together.
_BAR = re.compile(r"(?<!\d)(\d+)/(\d+) \[[=>.]*\]")


def _behind_in_bar(job: Job, live: list[str]) -> str | None:
    """Keras' bars inside the epoch every worker started last: the one
    worker whose bar got to a lower batch than every other worker's (the
    others' bars went on to the next batch, and waited there for it in the
    all-reduce). None when no one worker is behind, or the bars do not say."""
    points: dict[str, tuple[int, int]] = {}
    for w in live:
        starts = job.rows.of(["keras.epoch"], w)
        if not starts:
            return None
        start = max(starts, key=lambda r: (r["source"], r["line"]))
        epoch = str(start["fields"].get("epoch") or "")
        after = [
            r
            for r in job.rows.last(w, LAST_WORDS)
            if r["source"] == start["source"] and r["line"] > start["line"]
        ]
        batches = [int(m[1]) for r in after for m in _BAR.finditer(r["text"])]
        if not epoch.isdigit() or not batches:
            return None
        points[w] = (int(epoch), max(batches))
    if len(points) < 2 or len(set(points.values())) < 2:
        return None
    low = min(points.values())
    behind = [w for w, pt in points.items() if pt == low]
    return behind[0] if len(behind) == 1 else None


# Lines this close before the moment every worker was told to stop belong to
# the stop (a runner's or systemd's "reached runtime time limit. Stopping."), not
# to what the script was doing.
STOP_MARGIN = dt.timedelta(seconds=2)


def _last_words(job: Job, live: list[str]) -> dict[str, list[str]]:
    """Each worker's last plain lines (no signal, warning or error, nothing
    said as the job was stopped: a scheduler's record of stopping it is none
    of its words, wherever a collector put it), masked, oldest first."""
    seq: dict[str, list[str]] = {}
    stops = stop_times(job.rows) if job.facts.stopped_together else {}
    cut = min(stops.values()) - STOP_MARGIN if stops else None
    stopped = messages_tagged("stop_order")  # a scheduler's record of stopping it, in its output
    for w in live:
        rows = [
            r
            for r in job.rows.last(w, LAST_WORDS)
            if r["kind"] != "tf.sigterm_caught"
            and r["kind"] not in stopped
            and r["severity"] not in ("warning", "error", "fatal")
            and (cut is None or r["ts"] is None or r["ts"] < cut)
        ]
        seq[w] = [mask_message(r["text"]) for r in rows]
    return seq


def _last_words_behind(job: Job, live: list[str]) -> str | None:
    """The one worker whose last words the others all printed and went past:
    every other worker printed this worker's last line (numbers, paths and
    tasks masked) before its own last line, and this worker never printed
    theirs (it stopped on the way, in the script's own sequence: "refreshing
    hard examples" with no "hard examples loaded" after). None when no one is."""
    seq = _last_words(job, live)
    lasts = {w: s[-1] for w, s in seq.items() if s}
    if len(lasts) < 2 or len(lasts) != len(live):
        return None
    behind = [
        w for w in lasts if all(lasts[w] in seq[o][:-1] and lasts[o] not in seq[w] for o in lasts if o != w)
    ]
    if len(behind) != 1:
        return None
    (w,) = behind
    if not _AT_BAR.match(lasts[w]) and len(lasts) > 2:
        return w
    # Its last word is a progress bar's redraw, which the others reached too;
    # or there are two workers, where the other's going on is as well its
    # own work begun (one worker's "fetching next shard", then nothing):
    # they went past it only if they went on with lines it prints as well (the
    # next step), not with work of their own (one worker's "reading next
    # shard", then nothing: that one stopped there, the bar's waited for it).
    habits = _said_ever(job, w)
    # (after the last time they printed its last line: a line printed every epoch is printed more than once)
    went_on = {x for o in lasts if o != w for x in seq[o][len(seq[o]) - seq[o][::-1].index(lasts[w]) :]}
    return w if went_on & habits else None


# A Keras bar's redraw, as masked ("<n>/<n> [=====>....] - ETA: ...").
_AT_BAR = re.compile(r"^\s*<n>/<n> \[[=>.]*\]")


def _said_ever(job: Job, w: str, most: int = 400) -> set[str]:
    """The lines (masked) a worker printed, its last ``most`` records."""
    return {mask_message(r["text"].split("\n", 1)[0]) for r in job.rows.last(w, most)}


def _last_words_apart(job: Job, live: list[str]) -> str | None:
    """The one worker that went on to say something the others never said,
    after the point they all reached, and then nothing: every other worker's
    last line is the same line (numbers masked), which this worker printed
    too before its own last words ("waiting for prefetch worker to deliver
    shard 3" after the step every worker logged last). Its script was busy
    with something of its own when every collective stopped. None when no
    one worker stands so."""
    seq = _last_words(job, live)
    lasts = {w: s[-1] for w, s in seq.items() if s}
    if len(lasts) < 2 or len(lasts) != len(live):
        return None
    if len(lasts) == 2:
        # Two workers: the one whose last words the other never said, anywhere,
        # after the other's last line (which it printed too).
        a, b = lasts
        own = [
            w
            for w, o in ((a, b), (b, a))
            if lasts[o] in seq[w][:-1] and lasts[w] not in _said_ever(job, o) and lasts[o] != lasts[w]
        ]
        return own[0] if len(own) == 1 else None
    odd = [w for w in lasts if sum(lasts[o] == lasts[w] for o in lasts) == 1]
    if len(odd) != 1:
        return None
    (w,) = odd
    shared = {lasts[o] for o in lasts if o != w}
    if len(shared) != 1:
        return None
    (line,) = shared
    mine = seq[w]
    return w if line in mine[:-1] and all(lasts[w] not in seq[o] for o in lasts if o != w) else None


LAST_WORDS = 12


def _own_lines(job: Job, w: str, progress: dict[str, object], after: bool) -> list[str] | None:
    """A worker's own plain lines (masked) after its last progress record
    (what it went on to do: a few, LAST_WORDS records at most, else None), or
    before it (what it was in the habit of doing)."""
    src, line = str(progress["source"]), progress["line"]
    assert isinstance(line, int)
    rows = (
        job.rows.plain(w, src, after=line, most=LAST_WORDS) if after else job.rows.plain(w, src, before=line)
    )
    return None if rows is None else [mask_message(r["text"].split("\n", 1)[0]) for r in rows]


def _went_least_far(job: Job, progress: Mapping[str, dict[str, object]], live: list[str]) -> str | None:
    """Every worker's last progress is the same step, and after it the others
    went on with the script's own recurring work ("loader: finished input
    file", "loader: reading input file") while one worker printed less of it
    than every other did: its script stopped first, and the others then
    waited for it in the next all-reduce. The others' further lines must be
    ones this worker printed before (work it does too), so a line only some
    workers print (a chief's checkpoint notice) names no one. None when no one
    worker stands so."""
    if len(live) < 2 or set(progress) != set(live) or len({r["kind"] for r in progress.values()}) != 1:
        return None
    points = {w: _point(r) for w, r in progress.items()}
    if None in points.values() or len(set(points.values())) != 1:
        return None
    # (Only the lines after the last step are read for every worker; the
    # habits of the one that went least far, only for it.)
    went: dict[str, list[str]] = {}
    for w in live:
        after = _own_lines(job, w, progress[w], after=True)
        if after is None:
            return None  # a worker that logged on at length after the last step did not stop there
        went[w] = after
    least = min(len(after) for after in went.values())
    short = [w for w, after in went.items() if len(after) == least]
    if len(short) != 1:
        return None
    (w,) = short
    mine_after = went[w]
    if any(went[o][:least] != mine_after or len(went[o]) == least for o in live if o != w):
        return None
    habits = set(_own_lines(job, w, progress[w], after=False) or [])
    return w if all(x in habits for o in live if o != w for x in went[o][least:]) else None


def _main_thread_apart(job: Job, live: list[str]) -> MainThread | None:
    """The one worker whose main thread, in the thread dumps the workers'
    logs hold (Python's faulthandler), waited on its input pipeline or sat in
    the script's own code while every other worker's was in TensorFlow
    running the step (a collective waiting for it). None when not every
    worker's log holds a dump, or no one worker stands so."""
    threads = main_threads(job)
    named = [w for w in live if not w.startswith("?")]
    if len(named) < 2 or set(named) - set(threads):
        return None
    odd = [threads[w] for w in named if threads[w].where in (INPUT, OWN)]
    if len(odd) != 1 or any(threads[w].where != TF for w in named if w != odd[0].worker):
        return None
    return odd[0]


def check(job: Job) -> Iterator[Hit]:
    wk = job.facts.workers
    live = [w for w, r in wk.items() if r["has_log"]]
    if not live or job.facts.finished:
        return
    progress = job.facts.last_progress
    together = job.facts.stopped_together
    ends = {w: wk[w]["last_ts"] for w in live if wk[w]["last_ts"] is not None}
    stuck: dict[str, dt.timedelta] = {}
    unmeasured: list[str] = []
    for w in live:
        p = progress.get(w)
        if p is None or w not in ends:
            continue
        if p["ts"] is None or p["ts_kind"] == "inferred_before":
            # Its progress carries no time (or none came before it: it was
            # printed at the next timed line's time or earlier); how long it
            # has been quiet is unknown, never 0 s.
            unmeasured.append(w)
            continue
        if ends[w] - p["ts"] >= STUCK_AFTER:
            stuck[w] = ends[w] - p["ts"]
    if not progress and not together:
        return  # nothing trained: the start-up rules (HS001, HS002) speak for that
    # Training began, no worker finished and the logs simply end: a hang the
    # runner (or whoever collected the logs) cut short, or a log cut before its end.
    ended_mid_training = not together and len(stuck) < max(1, len(progress))
    if ended_mid_training and len(live) < 2:
        return  # one worker's fragment (a paste, a tail) ends where it was cut: that says nothing
    ev = [evidence(progress[w], "last progress") for w in sorted(progress) if progress[w]["ts"] is not None]
    stops = job.rows.of(["tf.sigterm_caught"])
    ev += [evidence(r, "stopped") for r in stops[:3]]
    timed = {w: r["ts"] for w, r in progress.items() if r["ts"] is not None}
    # Named as the stuck ones when no one stands out: the cluster's tasks, not a
    # part no task is (a CI runner's transcript beside them), where any is named.
    subject, also = "?", sorted(w for w in live if not w.startswith("?")) or sorted(live)
    if len(timed) >= 2:
        order = sorted(timed, key=lambda w: timed[w])
        if timed[order[1]] - timed[order[0]] >= FIRST_BY:
            subject, also = order[0], []
    behind = _behind(progress) or _behind_in_epoch(job, progress) or _behind_in_bar(job, sorted(live))
    if subject == "?" and behind is not None:
        # The worker whose counter stopped first: the others went on to a
        # later step, waiting for it there (in a collective every member joins).
        subject, also = behind, []
    if subject == "?" and (behind := _last_words_behind(job, live)) is not None:
        subject, also = behind, []
    if subject == "?" and (apart := _last_words_apart(job, live)) is not None:
        subject, also = apart, []
    because = ""
    if subject == "?" and (least := _went_least_far(job, progress, live)) is not None:
        subject, also = least, []
        because = (
            f" (after the last step every worker printed, the others went on with work {least} had logged "
            f"before, and {least} logged no more)"
        )
    by_stacks = False
    if subject == "?" and (odd := _main_thread_apart(job, live)) is not None:
        subject, also, by_stacks = odd.worker, [], True
        because = (
            f" (in the thread stacks its log dumped while it hung, its main thread was {odd.where} "
            f"({odd.frame}), while every other worker's was in TensorFlow running the step, waiting for it)"
        )
        ev = [evidence(odd.row, "its main thread, dumped while it hung")] + ev
    # The black boxes' stalls (mwms_doctor.capture): measured while the
    # processes lived, with where each main thread was. The one worker stuck
    # in its own code, the others in TensorFlow waiting for it, is the cause.
    stalls = {r["worker"]: r for r in job.rows.of(["blackbox.stall"])}
    own = [w for w, r in stalls.items() if r["fields"].get("where") == "in the script's own code"]
    if len(own) == 1 and len(stalls) >= 2:
        subject, also = own[0], []
    if stalls:
        ev = [evidence(stalls[w], "black box: where it was stuck") for w in sorted(stalls)][:3] + ev
        for w, r in stalls.items():
            quiet = dt.timedelta(seconds=float(r["fields"].get("quiet_s") or 0))
            stuck[w] = max(stuck.get(w, dt.timedelta()), quiet)
        ended_mid_training = False
    first_stop = min((r["ts"] for r in stops if r["ts"] is not None), default=None)
    how = (
        "all were stopped at once (SIGTERM on every worker: a runner's timeout or a cancel)"
        if together
        else "the logs end"
    )
    if not progress:
        what = "No worker made any training progress before " + how
    elif ended_mid_training and by_stacks:
        # Dumped while it hung: every worker waiting, one of them in its own code.
        what = "The workers' thread stacks, dumped before the logs end, show every worker waiting"
    elif ended_mid_training:
        what = (
            "The logs end in the middle of training, with no error and no worker finishing (the job was "
            "stuck or stopped, or the logs were cut before their end)"
        )
    elif stalls:
        quiet = max(stuck.values(), default=dt.timedelta())
        where = (
            f" ({subject}'s black box: its main thread {stalls[subject]['fields'].get('where')}"
            f", {stalls[subject]['fields'].get('frame') or '?'}; the others' in TensorFlow, waiting for it)"
            if subject in own
            else ""
        )
        what = (
            f"The black boxes measured {quiet.total_seconds():.0f} s without a step while the workers "
            f"lived{where}, before {how}"
        )
    elif not stuck and unmeasured:
        what = (
            f"The workers made no progress, for a time this evidence cannot measure (their progress lines "
            f"carry no time), before {how}"
        )
    else:
        quiet = max(stuck.values(), default=dt.timedelta())
        what = f"The workers made no progress for {quiet.total_seconds():.0f} s before {how}"
    who = f"; {subject} stopped progressing first{because}" if subject != "?" else ""
    points = {_point(r) for r in progress.values()}
    if subject == "?" and len(progress) >= 2 and len(points) == 1 and None not in points:
        # Every worker at the same step: the one blocked in its own code and the
        # ones waiting for it in the all-reduce print alike. Said so, not guessed.
        said = progress[sorted(progress)[0]]["text"].split("\n", 1)[0].strip()[:100]
        who = (
            f"; every worker's last progress is the same point ({said!r}), and nothing in these logs says "
            f"which of them blocked first (the one stuck in its own code and the ones waiting for it in "
            f"the all-reduce print alike): only their stacks can tell"
        )
    last = [evidence(r, "its last line") for w in live for r in job.rows.last(w, 1)][:4]
    yield Hit(
        subject=subject if subject != "?" else also[0],
        also=[] if subject != "?" else also[1:],
        summary=f"{what}: the job was stuck{who}.",
        evidence=ev + last,
        confidence=0.85
        if subject in own
        else 0.7
        if by_stacks
        else 0.4
        if ended_mid_training
        else 0.6
        if subject != "?"
        else 0.5,
        ts=min((t for t in timed.values()), default=first_stop),
        local=False,
        facts={
            "stopped_together": sorted(together),
            "quiet_s": {w: d.total_seconds() for w, d in stuck.items()},
            "quiet_unknown": sorted(unmeasured),
        },
        proof="stall" if stuck and not ended_mid_training else "stacks" if by_stacks else "",
    )
