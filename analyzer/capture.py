"""A black box for every MWMS worker: a small per-worker file that says what
no log does (issue 25).

In the training script (the ``tf`` extra; the analyzer never imports this
module, and this module imports TensorFlow only when it is used)::

    from mwms_doctor import capture

    # Keras: one callback. It fingerprints the first batches this worker
    # trains on (inside its train step, after MWMS sharded the input).
    model.fit(dataset, callbacks=[capture.keras_callback()])

    # A custom loop: one call, then one line around each step.
    box = capture.install(strategy)
    it = iter(dist_dataset)
    for _ in range(steps):
        batch = box.next(it)          # input wait, and the batch's fingerprint
        loss = train_step(batch)
        box.step(loss=loss)           # step time, this worker's loss

Each worker appends JSON lines to ``mwms-blackbox-<type>-<index>.jsonl`` in
``$MWMS_BLACKBOX_DIR`` (default: the working directory), beside its log.
Every record is flushed as it is written, so a SIGKILL loses at most the one
being written; the file is bounded (``max_bytes``, 1 MB: the start and config
records and the newest records are kept). What it holds:

* ``start``: versions (TensorFlow, its git version and build's CUDA/cuDNN,
  Keras, Python, NumPy), host and pid; ``config``: TF_CONFIG and the
  cluster as the process saw them;
* ``batch``: a fingerprint (BLAKE2b of the batch's bytes) of each of the
  first batches the worker read, and of one batch in ``fingerprint_every``;
  the first empty batch (0 rows: its input ran out while others' had data,
  and MWMS kept it in step with empty batches), and how many were empty;
* ``step``: step time, input wait, the loss the worker reported and its
  memory high-water mark, sampled (every step at first, then at most one
  record per ``sample_s`` seconds);
* ``stall``: when no step ended for ``stall_factor`` times the usual step
  time (at least ``stall_min_s``), every thread's stack (``faulthandler``),
  once per stall;
* ``end``: a normal end, or an uncaught exception with its traceback. A
  file without one ends where its process was killed.

``mwms-doctor analyze`` reads these files as evidence of their own: equal
fingerprints on every worker are identical data, one worker's input wait
standing apart is the straggler, versions that differ are skew, and a
stall's stacks say where a hang is.
"""

from __future__ import annotations

import atexit
import faulthandler
import hashlib
import json
import os
import platform
import resource
import socket
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FILE_PREFIX = "mwms-blackbox-"
FILE_SUFFIX = ".jsonl"
DIR_ENV = "MWMS_BLACKBOX_DIR"


def _task() -> tuple[str, int]:
    try:
        task = json.loads(os.environ.get("TF_CONFIG") or "{}").get("task") or {}
        return str(task.get("type") or "worker"), int(task.get("index") or 0)
    except (ValueError, TypeError, AttributeError):
        return "worker", 0


def _versions() -> dict[str, Any]:
    out: dict[str, Any] = {"python": platform.python_version()}
    for name in ("numpy", "tensorflow", "keras", "tf_keras"):
        mod = sys.modules.get(name)
        if mod is not None and (v := getattr(mod, "__version__", None)):
            out[name] = v
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        try:
            out["tensorflow_git"] = tf.version.GIT_VERSION
            build = tf.sysconfig.get_build_info()
            out.update({k: build[k] for k in ("cuda_version", "cudnn_version") if k in build})
        except Exception:  # noqa: BLE001 - a build without the info: the version alone
            pass
    return out


def fingerprint(data: Any) -> str:
    """A short digest of a batch: every array's dtype, shape and bytes."""
    h = hashlib.blake2b(digest_size=8)
    for x in _leaves(data):
        arr = x.numpy() if hasattr(x, "numpy") else x
        for part in (str(getattr(arr, "dtype", type(arr))), str(getattr(arr, "shape", ""))):
            h.update(part.encode())
        h.update(arr.tobytes() if hasattr(arr, "tobytes") else repr(arr).encode())
    return h.hexdigest()


def _leaves(data: Any) -> Iterator[Any]:
    values = getattr(data, "values", None)  # a distributed value: this worker's replicas
    if isinstance(values, tuple) and not isinstance(data, dict):
        for v in values:
            yield from _leaves(v)
    elif isinstance(data, dict):
        for k in sorted(data):
            yield from _leaves(data[k])
    elif isinstance(data, (list, tuple)):
        for v in data:
            yield from _leaves(v)
    elif data is not None:
        yield data


def _rows(data: Any) -> int | None:
    """The number of examples in a batch: its first array's first dimension
    (on this worker's first replica); None when it has no shape."""
    for x in _leaves(data):
        shape = getattr(x, "shape", None)
        try:
            return int(shape[0]) if shape is not None and len(shape) else None
        except (TypeError, ValueError):  # an unknown dimension
            return None
    return None


def _memory() -> dict[str, int]:
    out = {"host_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        try:
            for i, _ in enumerate(tf.config.list_logical_devices("GPU")):
                out[f"gpu{i}_peak"] = int(tf.config.experimental.get_memory_info(f"GPU:{i}")["peak"])
        except Exception:  # noqa: BLE001 - no device memory info on this build
            pass
    return out


class BlackBox:
    """One worker's black box (see the module's docstring)."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        max_bytes: int = 1 << 20,
        fingerprints: int = 4,
        fingerprint_every: int = 200,
        sample_s: float = 2.0,
        stall_factor: float = 20.0,
        stall_min_s: float | None = None,
    ) -> None:
        role, index = _task()
        self.task = f"{role}:{index}"
        folder = Path(directory or os.environ.get(DIR_ENV) or ".")
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{FILE_PREFIX}{role}-{index}{FILE_SUFFIX}"
        self.max_bytes = max_bytes
        self.fingerprints, self.fingerprint_every = fingerprints, fingerprint_every
        self.sample_s, self.stall_factor = sample_s, stall_factor
        self.stall_min_s = float(
            os.environ.get("MWMS_BLACKBOX_STALL_S", 60.0) if stall_min_s is None else stall_min_s
        )
        self._lock = threading.Lock()
        self._fh = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - kept open for the run
        self._head: list[str] = []
        self._size = 0
        self.batches = self.steps = self.empty = 0
        self.counter: Any = None  # a Keras train step's in-graph count of batches
        self._wait: float | None = None
        self._last_end = time.monotonic()
        self._last_sample = 0.0
        self._times: list[float] = []
        self._stalled = False
        self._ended = False
        self._started = False
        self._hooks()

    # ---- records ----------------------------------------------------------

    def _write(self, kind: str, **fields: Any) -> None:
        rec = {"kind": kind, "t": round(time.time(), 6), "task": self.task, **fields}
        line = json.dumps(rec, default=str) + "\n"
        with self._lock:
            self._fh.write(line)
            self._fh.flush()
            self._size += len(line)
            if kind in ("start", "config"):
                self._head.append(line)
            elif self._size > self.max_bytes:
                self._compact()

    def _compact(self) -> None:
        """Keep the start record and the newest half of the rest."""
        self._fh.close()
        lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True)
        rest = [ln for ln in lines if ln not in self._head]
        kept = self._head + rest[len(rest) // 2 :]
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(kept), encoding="utf-8")
        os.replace(tmp, self.path)
        self._size = sum(len(ln) for ln in kept)
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def start(self, strategy: Any = None) -> BlackBox:
        if self._started:
            return self
        self._started = True
        cluster: Any = None
        resolver = getattr(strategy, "cluster_resolver", None)
        if resolver is not None:
            try:
                cluster = resolver.cluster_spec().as_dict()
            except Exception:  # noqa: BLE001 - a resolver without a spec
                cluster = None
        self._write(
            "start",
            versions=_versions(),
            host=socket.gethostname(),
            pid=os.getpid(),
            main_thread=threading.main_thread().ident,
        )
        self._write("config", tf_config=os.environ.get("TF_CONFIG"), cluster=cluster)
        threading.Thread(target=self._watch, name="mwms-blackbox", daemon=True).start()
        return self

    def batch(self, data: Any, n: int | None = None) -> None:
        """The fingerprint of a batch this worker is about to train on (``n``:
        its number, where the caller counts them). An empty batch (0 rows:
        MWMS keeps a worker whose input ran out in step with the others that
        way) is counted, and the first one recorded."""
        self.batches = n if n is not None else self.batches + 1
        n = self.batches
        if _rows(data) == 0:
            self.empty += 1
            if self.empty == 1:
                self._write("batch", n=n, fp=fingerprint(data), rows=0)
                return
        if n <= self.fingerprints or n % self.fingerprint_every == 0:
            self._write("batch", n=n, fp=fingerprint(data))

    def next(self, iterator: Iterator[Any]) -> Any:
        """``next(iterator)``, timed (the input wait) and fingerprinted."""
        t0 = time.monotonic()
        item = next(iterator)
        self._wait = time.monotonic() - t0
        self.batch(item)
        return item

    def waited(self) -> None:
        """Marks the end of the wait for input (Keras: a batch begins)."""
        self._wait = time.monotonic() - self._last_end

    def step(self, loss: Any = None, step: int | None = None) -> None:
        now = time.monotonic()
        dt = now - self._last_end  # the whole cycle: the wait for input, then the step
        self._last_end = now
        busy = dt - self._wait if self._wait is not None and self._wait <= dt else dt
        self.steps += 1
        self._stalled = False
        self._times.append(dt)
        if len(self._times) > 200:
            del self._times[:100]
        if self.steps > 10 and now - self._last_sample < self.sample_s:
            return
        self._last_sample = now
        value: float | None = None
        if loss is not None:
            try:
                value = float(loss.numpy() if hasattr(loss, "numpy") else loss)
            except (TypeError, ValueError):
                value = None
        self._write(
            "step",
            step=step or self.steps,
            step_time_s=round(busy, 6),
            input_wait_s=None if self._wait is None else round(self._wait, 6),
            loss=value,
            memory=_memory(),
        )

    def end(self, reason: str = "normal", **fields: Any) -> None:
        if self._ended:
            return
        self._ended = True
        self._write(
            "end", reason=reason, steps=self.steps, batches=self.batches, empty_batches=self.empty, **fields
        )

    # ---- hooks ------------------------------------------------------------

    def _hooks(self) -> None:
        atexit.register(self.end, "normal")
        previous = sys.excepthook

        def on_exception(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
            self.end(
                "exception",
                exception=kind.__name__,
                message=str(exc)[:2000],
                traceback="".join(traceback.format_exception(kind, exc, tb))[-8000:],
            )
            previous(kind, exc, tb)

        sys.excepthook = on_exception

    def _watch(self) -> None:
        """Dump every thread's stack once when no step ended for far longer than usual."""
        while not self._ended:
            time.sleep(1.0)
            if self.steps == 0 or self._stalled:
                continue
            usual = statistics.median(self._times) if self._times else 0.0
            quiet = time.monotonic() - self._last_end
            if quiet < max(self.stall_min_s, self.stall_factor * usual):
                continue
            self._stalled = True
            with tempfile.TemporaryFile("w+") as f:
                faulthandler.dump_traceback(file=f, all_threads=True)
                f.seek(0)
                stacks = f.read()
            self._write(
                "stall",
                quiet_s=round(quiet, 1),
                usual_step_s=round(usual, 6),
                after_step=self.steps,
                main_thread=threading.main_thread().ident,
                stacks=stacks[-16000:],
            )


def install(
    strategy: Any = None, directory: str | os.PathLike[str] | None = None, **options: Any
) -> BlackBox:
    """A started black box for a custom training loop (see the module's docstring)."""
    return BlackBox(directory, **options).start(strategy)


def keras_callback(
    directory: str | os.PathLike[str] | None = None, *, fingerprint_batches: bool = True, **options: Any
) -> Any:
    """A Keras callback that keeps this worker's black box. With
    ``fingerprint_batches`` the model's train step also fingerprints the
    first batches (a ``tf.py_function`` that returns at once after them)."""
    import tensorflow as tf  # type: ignore[import-untyped]

    box = BlackBox(directory, **options)

    class BlackBoxCallback(tf.keras.callbacks.Callback):  # type: ignore[misc]
        # Keras hands the batch hooks its logs as tensors, not converted to
        # numbers each step (a device sync); the box converts the sampled ones.
        _supports_tf_logs = True

        def set_model(self, model: Any) -> None:
            super().set_model(model)
            if fingerprint_batches and not getattr(model, "_mwms_blackbox", False):
                model._mwms_blackbox = True
                original = model.train_step

                with tf.init_scope():
                    seen = tf.Variable(0, dtype=tf.int64, trainable=False, name="mwms_blackbox_batches")
                box.counter = seen

                def train_step(data: Any) -> Any:
                    def record(n: Any, *arrays: Any) -> int:
                        box.batch(list(arrays), n=int(n))  # fingerprinted only when it is one to keep
                        return 0

                    # Python is called only for the batches the box keeps (the first
                    # ones, one in fingerprint_every) and for an empty batch; the
                    # others are counted in the graph and cost no call into Python.
                    n = seen.assign_add(1)
                    flat = tf.nest.flatten(data)
                    first = flat[0] if flat else None
                    rows = (
                        tf.shape(first, out_type=tf.int64)[0]
                        if first is not None and first.shape.rank
                        else tf.constant(1, tf.int64)
                    )
                    keep = tf.logical_or(
                        tf.logical_or(n <= box.fingerprints, tf.equal(n % box.fingerprint_every, 0)),
                        tf.equal(rows, 0),
                    )
                    tf.cond(
                        keep,
                        lambda: tf.py_function(record, [n, *flat], Tout=tf.int32),
                        lambda: tf.constant(0, tf.int32),
                    )
                    return original(data)

                model.train_step = train_step

        def on_train_begin(self, logs: Any = None) -> None:
            box.start(getattr(self.model, "distribute_strategy", None))

        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            box.waited()

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            box.step(loss=(logs or {}).get("loss"))

        def on_train_end(self, logs: Any = None) -> None:
            if box.counter is not None:
                box.batches = int(box.counter.numpy())  # the batches counted in the graph
            box.end("normal")

    callback = BlackBoxCallback()
    callback.box = box
    return callback
