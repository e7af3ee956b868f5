"""What the black box (mwms_doctor.capture) costs a training job: step time
with and without its Keras callback, and how fast its file grows.

    python benchmarks/blackbox_overhead.py            # needs the tf extra

A real MultiWorkerMirroredStrategy job of one worker (no TF_CONFIG), Keras
fit on synthetic data, for two model sizes: a tiny one (a step of a few
milliseconds, where any per-step cost shows most) and a wider one (tens of
milliseconds a step, closer to real training). Each configuration runs
``REPEATS`` times, turn about; the median step time of the steady steps
(the first epoch left out: tracing) is compared. File growth is the steady
state's: one step record per ``SAMPLE_S`` seconds, of the size the run's
records have (the start record and the first steps are written once; the
file is bounded at 1 MB whatever the rate).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402
from mwms_doctor import capture  # noqa: E402

REPEATS = 5
SAMPLE_S = 2.0  # the black box's default: at most one step record per this many seconds
EPOCHS, STEPS = 3, 100


class StepTimes(keras.callbacks.Callback):
    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []
        self.epoch = 0

    def on_epoch_begin(self, epoch: int, logs: object = None) -> None:
        self.epoch = epoch

    def on_train_batch_begin(self, batch: int, logs: object = None) -> None:
        self.t0 = time.perf_counter()

    def on_train_batch_end(self, batch: int, logs: object = None) -> None:
        if self.epoch > 0:
            self.times.append(time.perf_counter() - self.t0)


def run(strategy: tf.distribute.Strategy, width: int, box_dir: str | None) -> tuple[float, float, int]:
    """(median step seconds, run seconds, black box bytes)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4096, 64)).astype("float32")
    y = (x.sum(1) > 0).astype("int64")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(256)
    with strategy.scope():
        model = keras.Sequential(
            [
                keras.Input((64,)),
                keras.layers.Dense(width, activation="relu"),
                keras.layers.Dense(width, activation="relu"),
                keras.layers.Dense(2),
            ]
        )
        model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    times = StepTimes()
    callbacks: list[keras.callbacks.Callback] = [times]
    if box_dir is not None:
        callbacks.append(capture.keras_callback(box_dir, sample_s=SAMPLE_S))
    t0 = time.perf_counter()
    model.fit(ds, epochs=EPOCHS, steps_per_epoch=STEPS, verbose=0, callbacks=callbacks)
    took = time.perf_counter() - t0
    size = 0
    if box_dir:
        # Steady state: one step record per sample_s seconds, its mean size
        # (the start record and the first steps are written once a run).
        lines = [ln for p in Path(box_dir).glob("mwms-blackbox-*") for ln in p.read_text().splitlines()]
        steps = [len(ln) + 1 for ln in lines if '"kind": "step"' in ln]
        size = int(statistics.mean(steps) * 3600 / SAMPLE_S) if steps else 0
    return statistics.median(times.times), took, size


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=REPEATS, help="pairs of runs (without, with), turn about")
    ap.add_argument("--widths", default="64,1024", help="model widths to time, comma-separated")
    args = ap.parse_args()
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    print(
        f"TensorFlow {tf.__version__}, {os.cpu_count()} cores, {EPOCHS}x{STEPS} steps, "
        f"{args.repeats} pairs each, turn about"
    )
    print(
        f"{'model':>10} {'without (ms/step)':>18} {'with (ms/step)':>15} {'overhead':>9} "
        f"{'pairs 25-75%':>14} {'black box MB/hour':>18}"
    )
    for width in (int(w) for w in args.widths.split(",")):
        base: list[float] = []
        boxed: list[float] = []
        rates: list[float] = []
        for _ in range(args.repeats):
            base.append(run(strategy, width, None)[0])
            with tempfile.TemporaryDirectory() as d:
                step, took, size = run(strategy, width, d)
                boxed.append(step)
                rates.append(size / 1e6)
        b, w = statistics.median(base), statistics.median(boxed)
        # Each pair's own ratio: how far the machine's noise spreads the figure.
        ratios = sorted((y / x - 1) * 100 for x, y in zip(base, boxed, strict=True))
        q1, q3 = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        print(
            f"{f'width {width}':>10} {b * 1e3:18.3f} {w * 1e3:15.3f} {(w / b - 1) * 100:8.1f}% "
            f"{f'{q1:+.1f}..{q3:+.1f}%':>14} {statistics.median(rates):18.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
