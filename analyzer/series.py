"""The script's own numbers, compared across workers.

A training script prints its global step (``step 140 loss=0.14``) and, in
lines of its own, where its epochs end or begin (``epoch 2 done``,
``Starting epoch 3``). Under MultiWorkerMirroredStrategy every step is one
all-reduce that every worker joins, so the workers' global steps move
together; their epochs, counted over each worker's own input, move together
only when the inputs are the same length. At the same global step, one
worker in a later epoch than the others has shorter epochs: less input.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from .facts import Job
from .rows import Row, to_rows

# An epoch number in a script's own line ("epoch 2 done", "Epoch: 3", "epoch=3").
# ("epoch 2/3" names epoch 2 of 3)
_EPOCH = re.compile(r"(?i)\bepoch\b[\s:=#\[]*(?P<epoch>\d+)\b")
_EPOCH_WORD = r"(?i)\bepoch\b[\s:=#\[]*\d"


@dataclass(frozen=True)
class UnevenEpochs:
    step: int  # the last global step every compared worker printed
    epochs: dict[str, int]  # worker -> the epoch its last marker at or before that step named
    ahead: list[str]  # the workers in the latest epoch there: their epochs are shorter
    markers: dict[str, Row]  # worker -> that marker


def _markers(job: Job) -> dict[str, list[Row]]:
    """Each worker's own lines that name an epoch (no template's but the script's epoch line, no
    step in them), in file order (read once a job: the rows are shared, not to be changed)."""
    return job.rows.once("series.markers", lambda: _read_markers(job))


def _read_markers(job: Job) -> dict[str, list[Row]]:
    ev = job.tables.events
    text = pc.cast(ev["text"], pa.string())
    own = pc.or_(
        pc.is_null(ev["kind"]), pc.fill_null(pc.equal(pc.cast(ev["kind"], pa.string()), "train.epoch"), False)
    )
    mask = pc.and_(own, pc.fill_null(pc.match_substring_regex(text, _EPOCH_WORD), False))
    out: dict[str, list[Row]] = {}
    for r in sorted(to_rows(ev.filter(mask)), key=lambda r: (r["source"], r["line"])):
        if r["severity"] in ("error", "fatal", "warning") or "\n" in r["text"].strip():
            continue
        out.setdefault(r["worker"], []).append(r)
    return out


def uneven_epochs(job: Job) -> UnevenEpochs | None:
    """Workers whose epochs end at different global steps, when the script
    prints both: at the last step that every worker printed, the epoch each
    was in differs. None when the evidence cannot tell (one worker, no epoch
    lines of the script's own, steps that do not line up)."""
    markers = _markers(job)
    steps: dict[str, list[Row]] = {}
    for r in job.rows.of(["train.step"]):
        if str(r["fields"].get("step", "")).isdigit() and not r["fields"].get("steps"):
            steps.setdefault(r["worker"], []).append(r)
    workers = sorted(set(markers) & set(steps))
    if len(workers) < 2:
        return None
    common = set.intersection(*({int(r["fields"]["step"]) for r in steps[w]} for w in workers))
    if not common:
        return None
    epochs: dict[str, int] = {}
    at: dict[str, Row] = {}
    for step in sorted(common, reverse=True):
        epochs, at = {}, {}
        for w in workers:
            row = next(r for r in steps[w] if int(r["fields"]["step"]) == step)
            before = [m for m in markers[w] if m["source"] == row["source"] and m["line"] < row["line"]]
            if not before or (m := _EPOCH.search(before[-1]["text"])) is None:
                break
            epochs[w], at[w] = int(m["epoch"]), before[-1]
        else:
            break
    if len(epochs) != len(workers) or len(set(epochs.values())) < 2:
        return None
    latest = max(epochs.values())
    ahead = [w for w in workers if epochs[w] == latest]
    return UnevenEpochs(step, epochs, ahead, at)


@dataclass(frozen=True)
class ShortEpochs:
    short: str  # the worker whose epochs had fewer steps than every other's
    steps: dict[str, int]  # worker -> its steps in the compared epoch
    epoch: int
    rows: dict[str, Row]  # worker -> the line that says so


# An epoch's own summary line with its count of steps: "epoch_end epoch=2 steps=7",
# "Epoch 3 finished: 120 steps", "epoch 1 done (steps: 32)".
# (a count of steps in any of a script's words for them: steps, batches, iterations)
_EPOCH_STEPS = re.compile(
    r"(?i)\bepoch\b\D{0,3}(?P<epoch>\d+)\b[^\n]*?\b(?:(?P<n1>\d+) (?:steps|batches|iterations|iters)\b"
    r"|(?:steps|batches|iterations|iters)\s*[=:]\s*(?P<n2>\d+))"
)


def short_epochs(job: Job) -> ShortEpochs | None:
    """The one worker whose epoch had fewer steps than every other worker's
    same epoch, by the counts the script itself prints at each epoch's end:
    its input was shorter. None when no epoch is counted by two workers, or
    no one worker stands below the rest."""
    ev = job.tables.events
    text = pc.cast(ev["text"], pa.string())
    mask = pc.fill_null(pc.match_substring_regex(text, r"(?i)epoch[^\n]*(?:steps?|batches|iter)"), False)
    counted: dict[int, dict[str, tuple[int, Row]]] = {}
    for r in to_rows(ev.filter(mask)):
        if r["kind"] not in (None, "train.epoch", "script.input_ended") or r["severity"] in (
            "error",
            "fatal",
        ):
            continue  # a step's own progress line ("epoch 1 step 4") counts nothing
        if (m := _EPOCH_STEPS.search(r["text"])) is None:
            continue
        n = int(m["n1"] or m["n2"])
        counted.setdefault(int(m["epoch"]), {}).setdefault(r["worker"], (n, r))
    # Beside the counts, the steps each worker printed inside an epoch: a
    # worker still in an epoch when the other left it had at least that many.
    reached: dict[int, dict[str, tuple[int, Row]]] = {}
    for r in job.rows.of(["train.step"]):
        f = r["fields"]
        if str(f.get("epoch", "")).isdigit() and str(f.get("step", "")).isdigit() and not f.get("steps"):
            e, n = int(f["epoch"]), int(f["step"])
            if n > reached.setdefault(e, {}).get(r["worker"], (-1, r))[0]:
                reached[e][r["worker"]] = (n, r)
    for epoch in sorted(counted):
        done = counted[epoch]
        per = {**{w: v for w, v in reached.get(epoch, {}).items() if w not in done}, **done}
        if len(per) < 2:
            continue
        low = min(n for n, _ in done.values())
        shorts = [w for w, (n, _) in done.items() if n == low]
        if len(shorts) == 1 and all(n > low for w, (n, _) in per.items() if w != shorts[0]):
            return ShortEpochs(
                shorts[0], {w: n for w, (n, _) in per.items()}, epoch, {w: r for w, (_, r) in per.items()}
            )
    return None


# What a script prints of the data a worker read: a run of record ids or a digest.
_IDS = r"(?:\b\d+\b[ ,;]+){3,}\b\d+\b"
# ... or a range of them ("example ids 80..89", "rows 0...127", "ids 0…511").
_RANGE = r"\b\d+ ?(?:\.\.\.?|…) ?\d+\b"
# NumPy 2's scalars as a list prints them: "[np.int64(0), np.int64(1), ...]".
_NP_SCALAR = r"\b(?:np|numpy)\.(?:u?int|float)\d*\((-?\d+(?:\.\d+)?)\)"
_NP_IDS = rf"(?:{_NP_SCALAR}[ ,;]+){{3,}}"
_DIGEST = r"\b[0-9a-fA-F]{16,}\b"
_IDS_RE, _DIGEST_RE, _NP_SCALAR_RE = (
    re.compile(f"{_IDS}|{_RANGE}"),
    re.compile(_DIGEST),
    re.compile(_NP_SCALAR),
)
_DATA_WORD = re.compile(
    r"(?i)\b(?:batch(?:es)?|samples?|rows?|records?|examples?|ids?|indices|index|hash|fingerprint|"
    r"checksum|digest|shards?|files?)\b"
)


@dataclass(frozen=True)
class SameFingerprint:
    rows: dict[str, Row]  # worker -> the record holding its line, the same on every worker
    line: str


_WHO = re.compile(r"/job:\w+/replica:\d+/task:\d+|\b(?:chief|worker|master|ps|evaluator)[:_-]?\d+\b")


def same_fingerprint(job: Job) -> SameFingerprint | None:
    """A line of the script's own about the data a worker read (record ids,
    a digest), printed by every worker and the same on all of them, numbers
    and all. None when no such line is printed by every worker, or when any
    such line differs between workers (they read different data)."""
    from .text import mask_message

    workers = [w for w, r in job.facts.workers.items() if r["has_log"] and not w.startswith("?")]
    if len(workers) < 2:
        return None
    ev = job.tables.events
    text = pc.cast(ev["text"], pa.string())
    shaped = pc.or_(
        pc.or_(
            pc.fill_null(pc.match_substring_regex(text, f"{_IDS}|{_RANGE}"), False),
            pc.fill_null(pc.match_substring_regex(text, _NP_IDS), False),
        ),
        pc.fill_null(pc.match_substring_regex(text, _DIGEST), False),
    )
    found: dict[str, dict[str, tuple[str, Row]]] = {}
    for r in to_rows(ev.filter(shaped)):
        # A print can follow a TF record unheadered, and be read as its last
        # lines: each line is looked at on its own.
        for line in r["text"].splitlines():
            line = _NP_SCALAR_RE.sub(r"\1", line.strip())
            if (_IDS_RE.search(line) or _DIGEST_RE.search(line)) and _DATA_WORD.search(line):
                # (grouped as the same line whatever task it names: "role=chief-0" and
                # "role=worker-1" print one line of the script's)
                found.setdefault(mask_message(_WHO.sub("<task>", line)), {}).setdefault(
                    r["worker"], (line, r)
                )
    same = None
    for by_worker in found.values():
        if set(workers) - set(by_worker):
            continue
        # What each worker's line says of its data: its runs of ids and its
        # digests (not its own name, "task=worker:1", nor the time it printed
        # in the line, "ts=1795847182.868").
        if len({_data_of(by_worker[w][0]) for w in workers}) > 1:
            return None  # the workers read different data: sharded
        same = same or SameFingerprint({w: by_worker[w][1] for w in workers}, by_worker[workers[0]][0])
    return same or _same_ids_per_step(job, workers)


def _data_of(line: str) -> tuple[str, ...]:
    """What a line says of the data read: its runs of ids and its digests."""
    return tuple(_IDS_RE.findall(line)) + tuple(_DIGEST_RE.findall(line))


# A named number that identifies the data a step read ("first_example_id=384",
# "sample_idx: 12", "batch_hash=..."), not a count of it ("examples_seen=384").
_ID_KEY = re.compile(
    r"(?i)(?:^|[_.-])(?:ids?|idx|index|indices|offset|hash|digest|fingerprint|checksum)$"
    r"|^first[_.-]?(?:example|sample|record|row|item)"
)
_COUNT_KEY = re.compile(r"(?i)count|num|seen|total|processed|done|^(?:step|epoch|batch|iter\w*)$")
MIN_IDS = 3


def _same_ids_per_step(job: Job, workers: list[str]) -> SameFingerprint | None:
    """Every worker printed, at each step, the same identifier of what it
    read (a first example's id that changes from step to step): at three
    steps or more, on every worker, the same values. Sharded inputs give
    each worker other examples. None when any step's values differ."""
    seen: dict[str, dict[tuple[str, str, str], tuple[str, Row]]] = {}
    for r in job.rows.of(["train.step"]):
        f = r["fields"]
        at = (f.get("epoch", ""), f.get("step", ""))
        if not at[1]:
            continue
        for m in _PAIR.finditer(r["text"].split("\n", 1)[0]):
            key = m["key"]
            if _ID_KEY.search(key) and not _COUNT_KEY.search(key) and not m["unit"]:
                seen.setdefault(key, {}).setdefault((r["worker"], *at), (m["value"], r))
    for key, values in sorted(seen.items()):
        steps: dict[tuple[str, str], dict[str, tuple[str, Row]]] = {}
        for (w, epoch, step), v in values.items():
            steps.setdefault((epoch, step), {})[w] = v
        shared = {at: v for at, v in steps.items() if not set(workers) - set(v)}
        if len(shared) < MIN_IDS:
            continue
        if any(len({v[w][0] for w in workers}) > 1 for v in shared.values()):
            return None  # the workers read different examples at a step: sharded
        if len({v[workers[0]][0] for v in shared.values()}) < MIN_IDS:
            continue  # a constant, not what each step read
        last = shared[max(shared, key=lambda at: values[(workers[0], *at)][1]["line"])]
        return SameFingerprint({w: last[w][1] for w in workers}, f"{key}={last[workers[0]][0]} at every step")
    return None


# A named number in a script's line: "input_ms=201.3", "data_time: 0.8", "wait 6.5s"
# ("data_wait 3.51s step_time 0.361s": a space between a name and its number too.)
_PAIR = re.compile(
    r"\b(?P<key>[A-Za-z][\w.-]*?)(?:\s*[=:]\s*|\s+)(?P<value>\d+(?:\.\d+)?)(?:\s*(?P<unit>ms|s|sec|secs)\b(?!\s*[=:]))?"
)
# Time spent getting the input ready, or on the worker's own part of a step (its
# forward and backward pass, before the all-reduce): the straggler's is the longest.
_INPUT_TIME = re.compile(
    r"(?i)input|data|load|fetch|read|prep|io_|_io\b|comput|forward|backward|fwd|bwd|busy"
)
# Time that includes waiting for the others in the all-reduce: the straggler's is the shortest.
_SYNC_TIME = re.compile(r"(?i)step|sync|allreduce|all_reduce|collective|wait")
_TIME_UNIT = re.compile(r"(?i)(?:^|_)(?:ms|s|sec|secs|seconds|time|t)$|_ms_|time|wait|dur")
# A line's subject before its first named value ("input wait" in "input wait
# epoch=1 step=4 secs=0.6"), and a name that says only that a value is a time.
_ABOUT = re.compile(r"^\s*([A-Za-z][A-Za-z _-]{2,40}?)\s+[A-Za-z_]\w*\s*[=:]")
_BARE_TIME = re.compile(r"s|ms|sec|secs|seconds|time|t|took|dur|duration|elapsed")
# An input time only one worker printed counts from this long a typical wait.
ALONE_S = 0.25
# One worker's typical value this many times the others' (or a fraction of
# them), the others within SPREAD of each other, over at least MIN_SAMPLES each.
APART = 3.0
SPREAD = 2.0
MIN_SAMPLES = 3
# Where the others' input time is nothing (rounded to 0), no ratio can be
# taken: theirs at most NEGLIGIBLE_S, the odd one's at least APART_S.
NEGLIGIBLE_S = 0.005
APART_S = 0.05


def _seconds(key: str, unit: str | None) -> float:
    """What one unit of a named time is in seconds: its printed unit, else
    the unit its name holds ("input_ms_per_batch", "load_us"), else seconds."""
    named = unit or next(iter(re.findall(r"(?i)(?:^|_)(ms|us|s|sec|secs)(?:_|$)", key)), "s")
    return {"ms": 1e-3, "us": 1e-6}.get(named.lower(), 1.0)


@dataclass(frozen=True)
class StandsApart:
    worker: str
    key: str
    medians: dict[str, float]  # worker -> its typical value
    higher: bool  # the worker's value is the highest (input time), else the lowest (time with waiting)
    rows: dict[str, Row]  # worker -> a line that shows it
    alone: bool = False  # only this worker printed the timing (the others printed their steps without it)


def standing_apart(job: Job) -> StandsApart | None:
    """One worker whose per-step or per-epoch timings, as the script prints
    them, stand apart from every other worker's: its input time several
    times theirs, or its step time (which holds the wait for the others)
    a fraction of theirs. Needs three workers or more (with two, either could
    be the odd one) and timings the script names as such."""
    import statistics

    workers = [w for w, r in job.facts.workers.items() if r["has_log"] and not w.startswith("?")]
    if len(workers) < 3:
        return None
    values: dict[str, dict[str, list[float]]] = {}
    shown: dict[tuple[str, str], Row] = {}
    units: dict[str, str] = {}
    steps: dict[str, int] = {}
    for r in job.rows.of(["train.step", "train.epoch"]) + [m for ms in _markers(job).values() for m in ms]:
        first = r["text"].split("\n", 1)[0]
        steps[r["worker"]] = steps.get(r["worker"], 0) + 1
        # What the line is about, before its first named value ("input wait epoch=1
        # step=4 secs=0.60"): a bare "secs" there is the input's time.
        about = _ABOUT.match(first)
        for m in _PAIR.finditer(first):
            key = m["key"].lower()
            if about is not None and _BARE_TIME.fullmatch(key):
                key = f"{about[1].strip().lower()} {key}"
            # A time by its name ("data_time"), or by its unit ("input 1.0s").
            if not (_TIME_UNIT.search(key) or m["unit"]) or key in ("step", "epoch", "loss"):
                continue
            values.setdefault(key, {}).setdefault(r["worker"], []).append(float(m["value"]))
            if m["unit"]:
                units.setdefault(key, m["unit"].lower())
            shown.setdefault((key, r["worker"]), r)
    found: list[StandsApart] = []
    for key, by_worker in sorted(values.items()):
        if len(by_worker) == 1 and _INPUT_TIME.search(key):
            # Only one worker printed its input time, on enough steps, and long ones;
            # the others printed the same steps without it (a script that logs a
            # wait only when there is one worth logging): its input is the slow one.
            ((w, vals),) = by_worker.items()
            typical = statistics.median(vals) * _seconds(key, units.get(key))
            others_logged = all(steps.get(o, 0) >= MIN_SAMPLES for o in workers if o != w)
            if len(vals) >= MIN_SAMPLES and typical >= ALONE_S and others_logged:
                med = {x: (statistics.median(vals) if x == w else 0.0) for x in workers}
                found.append(StandsApart(w, key, med, True, {w: shown[(key, w)]}, alone=True))
            continue
        if set(workers) - set(by_worker) or any(len(by_worker[w]) < MIN_SAMPLES for w in workers):
            continue
        med = {w: statistics.median(by_worker[w]) for w in workers}
        higher = bool(_INPUT_TIME.search(key))
        if not higher and not _SYNC_TIME.search(key):
            continue
        odd = max(med, key=med.__getitem__) if higher else min(med, key=med.__getitem__)
        rest = [v for w, v in med.items() if w != odd]
        if higher and max(rest) * _seconds(key, units.get(key)) <= NEGLIGIBLE_S:
            # The others' input took no time worth the name ("input_ms_per_batch=0"):
            # no ratio to take; the odd one's must be real time, not rounding.
            if med[odd] * _seconds(key, units.get(key)) >= APART_S:
                found.append(StandsApart(odd, key, med, higher, {w: shown[(key, w)] for w in workers}))
            continue
        if min(rest) <= 0 or max(rest) > SPREAD * min(rest):
            continue
        if (higher and med[odd] >= APART * max(rest)) or (not higher and med[odd] * APART <= min(rest)):
            found.append(StandsApart(odd, key, med, higher, {w: shown[(key, w)] for w in workers}))
    if not found or len({f.worker for f in found}) != 1:
        return None
    return found[0]


# Keras' epoch line: "12/12 - 12s - loss: ... - 997ms/step" (verbose=2, tf_keras),
# "8/8 [====] - 1s 9ms/step - loss: ..." (verbose=1), or only the epoch's time.
_PER_STEP = re.compile(r"(?<![\w.])(?P<t>\d+(?:\.\d+)?)(?P<u>ms|s|us|\u00b5s)/step\b")
_EPOCH_TIME = re.compile(r"^(?P<steps>\d+)/\d+ (?:\S+ )?- (?P<t>\d+(?:\.\d+)?)(?P<u>ms|s) ")
_UNIT = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6}


def keras_step_seconds(job: Job) -> dict[str, list[float]]:
    """Each worker's seconds per step as Keras printed them at its epochs'
    ends, in order: its ``ms/step``, else the epoch's time over its steps.
    Under MultiWorkerMirroredStrategy every worker's steps take the time of
    the slowest member's, waits included."""
    out: dict[str, list[float]] = {}
    for r in sorted(job.rows.of(["keras.epoch_end"]), key=lambda r: (r["source"], r["line"])):
        text = r["text"].strip()
        if m := _PER_STEP.search(text):
            out.setdefault(r["worker"], []).append(float(m["t"]) * _UNIT[m["u"]])
        elif (m := _EPOCH_TIME.match(text)) and int(m["steps"]) > 0:
            out.setdefault(r["worker"], []).append(float(m["t"]) * _UNIT[m["u"]] / int(m["steps"]))
    return out


# A worker that comes last to this share of the progress points every worker
# printed, over at least ARRIVES_MIN_POINTS of them, reaches every step after
# the others: under MultiWorkerMirroredStrategy each step's all-reduce waits
# for it. With three or more workers, a last place this steady is no chance
# (for one of three, 9 of 9 by chance is 1 in 20,000).
ARRIVES_LAST_SHARE = 0.9
ARRIVES_MIN_POINTS = 6
# Where times tell, it must also come late by a margin, not by a print's
# jitter: at least this many seconds, and this share of the time between its
# own progress points (a slow worker adds its delay to every step).
ARRIVES_MIN_LAG_S = 0.1
ARRIVES_MIN_LAG_SHARE = 0.1
# Times read from one clock (a collector's stamp, a worker's own clock after
# alignment) are compared; a line's time borrowed from a neighbour is not.
_OWN_TIMES = ("absl_epoch", "absl_noyear", "tf_date", "python_logging", "collector")


@dataclass(frozen=True)
class ArrivesLast:
    worker: str
    points: int  # progress points every compared worker printed, where an order could be read
    last_at: int  # of them, the points where this worker came last
    lag_s: float | None  # its median lag behind the worker before it, where times tell
    period_s: float | None  # the median time between its own progress points
    basis: str  # "one stream" (the order of lines one collector wrote) or "clocks"
    rows: list[Row]  # the first step it came last at, every worker's row, in the order they came


def arrives_last(job: Job) -> ArrivesLast | None:
    """One worker that prints each step of training after every other worker,
    steadily: the one the others' all-reduces wait for, even where every
    worker's step takes the same time (the job moves in lock-step at its
    pace). Read from the step lines every worker printed, in the order one
    collector wrote them (one merged stream: its order is the order the
    lines came), or by the workers' own clocks where they are separate files
    and the clocks are aligned closer than the lag. Needs three workers or
    more; where the order is the only evidence, the others' order among
    themselves must vary (a collector that reads its streams in a fixed
    order puts one of them last every time)."""
    import statistics

    workers = [w for w, r in job.facts.workers.items() if r["has_log"] and not w.startswith("?")]
    if len(workers) < 3:
        return None
    at: dict[tuple[str, str], dict[str, Row]] = {}
    for r in job.rows.of(["train.step"]):
        f = r["fields"]
        step = str(f.get("step", ""))
        if r["worker"] not in workers or not step.isdigit():
            continue
        at.setdefault((str(f.get("epoch", "")), step), {}).setdefault(r["worker"], r)
    shared = [(k, by) for k, by in at.items() if len(by) == len(workers)]
    if len(shared) < ARRIVES_MIN_POINTS:
        return None
    bounds = {w: job.facts.workers[w].get("clock_bound_s") for w in workers}
    orders: list[tuple[list[str], str, float | None]] = []  # (workers in arrival order, basis, lag)
    for _, by in shared:
        timed = all(r["ts"] is not None and r["ts_kind"] in _OWN_TIMES for r in by.values())
        one_stream = len({r["source"] for r in by.values()}) == 1
        if not (one_stream or timed):
            continue  # separate files with no clock to order them by
        order = _arrival(by)
        lag = (order[-1]["ts"] - order[-2]["ts"]).total_seconds() if timed else None
        orders.append(([r["worker"] for r in order], "one stream" if one_stream else "clocks", lag))
    if len(orders) < ARRIVES_MIN_POINTS:
        return None
    lasts = Counter(o[-1] for o, _, _ in orders)
    worker, n = lasts.most_common(1)[0]
    if n < ARRIVES_LAST_SHARE * len(orders):
        return None
    mine = [(o, basis, lag) for o, basis, lag in orders if o[-1] == worker]
    basis = Counter(b for _, b, _ in mine).most_common(1)[0][0]
    lags = [lag for _, _, lag in mine if lag is not None]
    lag_s = statistics.median(lags) if len(lags) * 2 >= len(mine) else None
    own = sorted(
        (r for _, by in shared for w, r in by.items() if w == worker and r["ts"] is not None),
        key=lambda r: r["ts"],
    )
    gaps = [(b["ts"] - a["ts"]).total_seconds() for a, b in zip(own, own[1:], strict=False)]
    period_s = statistics.median(gaps) if gaps else None
    if not period_s:
        # Its steps bear one time (output buffered and flushed at once, a
        # collector's stamp of the flush): the times do not tell when a line was printed.
        lag_s = None
    if lag_s is not None and period_s:
        if lag_s < ARRIVES_MIN_LAG_S or lag_s < ARRIVES_MIN_LAG_SHARE * period_s:
            return None  # last by a print's jitter, not by a delay
        bound = bounds.get(worker)
        if basis == "clocks" and (bound is None or bound >= lag_s):
            return None  # the clocks may be off by as much as the lag
    elif basis != "one stream":
        return None
    if basis == "one stream" and lag_s is None and len({tuple(o[:-1]) for o, _, _ in mine}) < 2:
        return None  # the order alone, and the others always in one order: a collector's, maybe
    if basis == "one stream" and not _interleaved(shared):
        return None  # each worker's lines in a block of their own: flushed at once, not as printed
    # What shows it: the first step it came last at, as every worker printed it.
    points = sorted(shared, key=lambda kb: (kb[1][worker]["source"], kb[1][worker]["line"]))
    shown = next(order for _, by in points if (order := _arrival(by))[-1]["worker"] == worker)
    return ArrivesLast(worker, len(orders), n, lag_s, period_s, basis, shown)


def _interleaved(shared: list[tuple[tuple[str, str], dict[str, Row]]]) -> bool:
    """Whether one stream holds the workers' step lines as they came, one
    worker's after another's at each step: the writer changes at least once a
    step. Output buffered and flushed at once lands as one block per worker."""
    rows = sorted((r for _, by in shared for r in by.values()), key=lambda r: (r["source"], r["line"]))
    changes = sum(bool(a["worker"] != b["worker"]) for a, b in zip(rows, rows[1:], strict=False))
    return changes >= len(shared)


def _arrival(by: dict[str, Row]) -> list[Row]:
    """One progress point's rows in the order the workers printed it: by line
    in one stream, else by time."""
    rows = list(by.values())
    if len({r["source"] for r in rows}) == 1:
        return sorted(rows, key=lambda r: r["line"])
    return sorted(rows, key=lambda r: (r["ts"] is None, r["ts"] or 0))


# A loss the line names as this worker's own ("local_loss=2.6", "replica loss: 0.4",
# "loss_per_worker=1.2"), beside the all-reduced one it may print too.
_LOCAL_LOSS = re.compile(
    r"(?i)(?:\b|_)(?:local|per[_-]?(?:worker|replica)|replica|worker)[_ -]?loss\b\s*[=:]?\s*(?P<a>[-+]?[\w.]+)"
    r"|\bloss[_ -](?:local|per[_-]?(?:worker|replica))\b\s*[=:]?\s*(?P<b>[-+]?[\w.]+)"
    # The own loss in brackets after the all-reduced one: "loss = 12.84 (local 12.24)".
    r"|\bloss\w*\s*[=:]\s*[-+]?[\w.]+\s*\(\s*(?:local|per[_-]?(?:worker|replica)|replica|own)\b\s*[=:]?\s*(?P<c>[-+]?[\w.]+)\s*\)"
)
_ANY_LOSS = re.compile(r"(?i)loss\w*\s*[=:]")


def local_loss(row: Row, named: bool = False) -> str | None:
    """The worker's own loss in a progress line that says it logs one: the
    value named as local where the line names one, else (unless ``named``)
    its only loss (a line with more than one loss and none named local says
    nothing)."""
    text = str(row["text"])
    if m := _LOCAL_LOSS.search(text):
        return m["a"] or m["b"] or m["c"]
    if named or len(_ANY_LOSS.findall(text)) > 1:
        return None
    loss = row["fields"].get("loss")
    return str(loss) if loss else None


@dataclass(frozen=True)
class EmptyBatches:
    worker: str  # the worker whose own batches became empty
    field: str  # the script's name for the count ("local_batch", "examples")
    first: Row  # its first progress record with a count of 0
    before: Row  # its last record with a count above 0
    others: dict[str, Row]  # each other worker's record at the same step, its count above 0
    empty: int  # its records with a count of 0


# A script's count of what this worker's batch held ("local_batch=8", "examples: 40").
_BATCH_COUNT = re.compile(
    r"(?i)\b(?P<key>[a-z_.]*(?:batch(?:_size)?|examples|samples)[a-z_.]*)\s*[=:]\s*(?P<n>\d+)\b"
)


def empty_batches(job: Job) -> EmptyBatches | None:
    """The one worker whose own count of its batch (a field of its step
    lines: ``local_batch=0``, ``examples=0``) fell to 0 from some step on,
    after counts above 0, while every other worker counted more than 0 at
    those same steps: its input ended, and MultiWorkerMirroredStrategy kept
    it in step with empty batches. None when no one worker stands so."""
    counts: dict[str, dict[str, list[tuple[tuple[str, str], int, Row]]]] = {}
    for r in job.rows.of(["train.step"]):
        f = r["fields"]
        at = (str(f.get("epoch", "")), str(f.get("step", "")))
        if not at[1]:
            continue
        for m in _BATCH_COUNT.finditer(r["text"]):
            counts.setdefault(m["key"].lower(), {}).setdefault(r["worker"], []).append((at, int(m["n"]), r))
    for key, per in counts.items():
        if len(per) < 2 or "global" in key:
            continue
        empty = [w for w, seq in per.items() if seq and seq[-1][1] == 0 and any(n > 0 for _, n, _ in seq)]
        if len(empty) != 1:
            continue
        (w,) = empty
        zeros = [(at, r) for at, n, r in per[w] if n == 0]
        if len(zeros) < 2:
            continue
        first_at, first = zeros[0]
        others: dict[str, Row] = {}
        for o, seq in per.items():
            if o == w:
                continue
            same = [(n, r) for at, n, r in seq if at == first_at]
            if not same or same[0][0] <= 0:
                break
            others[o] = same[0][1]
        else:
            before = [r for at, n, r in per[w] if n > 0][-1]
            return EmptyBatches(w, key, first, before, others, len(zeros))
    return None
