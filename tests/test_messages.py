"""The message catalogue: one entry per message, signatures that find every
record their messages recognise, signatures derived from regexes that every
engine reads alike, and tags instead of copied wording."""

from __future__ import annotations

import re
from functools import cache

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from mwms_doctor.ingest.messages import MESSAGES, PHRASES, TIERS, clues, errno_of, grpc_reason, says
from mwms_doctor.ingest.portable import signature
from mwms_doctor.ingest.templates import TEMPLATES
from mwms_doctor.pipeline import load_tables

from .paths import BLIND_RUNS, EXCERPTS, RUNS


@cache
def _recorded_texts() -> tuple[str, ...]:
    """Every record of every recorded run (tuned and blind) and real excerpt."""
    paths = [r / "logs" for r in [*sorted(RUNS.iterdir()), *sorted(BLIND_RUNS.iterdir())]]
    paths += sorted(EXCERPTS.glob("*/*/excerpt.txt"))
    texts: list[str] = []
    for p in paths:
        texts += load_tables(p)[0].events.column("text").to_pylist()
    return tuple(texts)


def test_one_entry_per_message_and_phrase() -> None:
    """Each wording once; a kind's wordings side by side, sharing what the kind means."""
    wordings = [(m.kind, m.regex) for m in MESSAGES]
    assert len(wordings) == len(set(wordings))
    kinds = list(dict.fromkeys(m.kind for m in MESSAGES))
    for kind in kinds:
        mine = [i for i, m in enumerate(MESSAGES) if m.kind == kind]
        assert mine == list(range(mine[0], mine[-1] + 1)), kind
        assert len({(m.means, m.tags, m.tier, m.severity, m.benign) for m in MESSAGES if m.kind == kind}) == 1
    names = [p.name for p in PHRASES]
    assert len(names) == len(set(names))
    assert all(m.tier in TIERS for m in MESSAGES)
    assert all(m.means and m.origin.emitter for m in MESSAGES), [m.kind for m in MESSAGES if not m.means]


def test_messages_are_tried_by_tier_then_catalogue_order() -> None:
    tiers = [TIERS.index(t.tier) for t in TEMPLATES]
    assert tiers == sorted(tiers)
    for tier in TIERS:
        inside = [(t.kind, t.regex) for t in TEMPLATES if t.tier == tier]
        assert inside == [(m.kind, m.regex) for m in MESSAGES if m.tier == tier and m.benign is None]


def test_derived_signatures_find_every_record_their_regex_recognises() -> None:
    """``portable.signature`` of every message's regex matches wherever the
    regex does, line by line as the scanner reads, over every recorded record."""
    texts = _recorded_texts()
    assert len(texts) > 9_000
    checked = 0
    for m in MESSAGES:
        derived = re.compile(signature(m.regex, m.flags))
        for text in texts:
            found = m.pattern.search(text)
            if found is None:
                continue
            checked += 1
            line_start = text.rfind("\n", 0, found.start()) + 1
            line_end = text.find("\n", found.start())
            line = text[line_start : line_end if line_end != -1 else None]
            assert derived.search(line) or derived.search(text), (
                m.kind,
                signature(m.regex, m.flags),
                line[:120],
            )
    assert checked > 2000


def test_derived_signatures_read_alike_in_every_engine() -> None:
    """Python's re, RE2 (pyarrow) and, where installed, hyperscan compile each
    derived signature; none has an unescaped "[" inside a bracket (ripgrep
    would read a nested class) or a newline (grep -f reads one per line)."""
    nested = re.compile(r"(?<!\\)\[(?:\\.|[^\]\\])*?(?<!\\)\[")
    sigs = [signature(m.regex, m.flags) for m in MESSAGES]
    for sig in sigs:
        assert "\n" not in sig and not nested.search(sig), sig
        re.compile(sig)
        pc.match_substring_regex(pa.array(["x"]), sig)  # RE2 raises on what it cannot read
    hs = pytest.importorskip("hyperscan")
    db = hs.Database()
    db.compile(expressions=[s.encode() for s in sigs], ids=list(range(len(sigs))), flags=[0] * len(sigs))
    # as the scanner embeds them: in a line pattern, many in one alternation
    lines = [f"(?:{s})[^\\n]*$".encode() for s in sigs]
    hs.Database().compile(
        expressions=lines, ids=list(range(len(lines))), flags=[hs.HS_FLAG_MULTILINE] * len(lines)
    )


@pytest.mark.parametrize(
    ("regex", "line", "matches"),
    [
        (r"Waiting for (?P<n>\d+)/(?P<t>\d+) tasks", "I0000 Waiting for 1/3 tasks to connect", True),
        (r"(?i)\bloss\b\s*(?:is|became)\s*(?P<v>nan|inf)\b", "Loss IS NaN", True),
        (
            r"OOM when allocating tensor(?: with shape ?\[(?P<s>[^\]]*)\])?",
            "OOM when allocating tensor with shape[5,7]",
            True,
        ),
        (r"^(?P<a>[^\n:]*?) : Tensor had (?P<v>NaN|Inf) values", "x/y : Tensor had NaN values", True),
        (r"Socket closed(?!\w)", "Socket closed", True),
        (r"Started server with target: grpc://", "Started a server", False),
        (r"^Epoch (?P<e>\d+)/(?P<n>\d+)\s*$", "Epoch 3/10", True),
    ],
)
def test_a_derived_signature_matches_as_its_regex_does(regex: str, line: str, matches: bool) -> None:
    assert bool(re.search(signature(regex), line)) is matches


def test_phrases_mean_one_thing_wherever_they_appear() -> None:
    """The wording that grpc reasons, PD001, UE001 and the unknown verdict's
    clues each kept a copy of is one phrase now, read through its tags."""
    text = "UnavailableError: Connection reset by peer"
    assert grpc_reason(text) == "connection_reset" and errno_of(text) == 104
    assert says(text, "peer_lost") and says(text, "echo")
    assert not says("ValueError: bad shape", "echo")
    assert (
        grpc_reason("failed to connect to all addresses; last error: Connection refused")
        == "connection_refused"
    )
    assert [cls for cls, p in clues() if p.search("Socket closed")] == ["peer_died"]


# Texts rendered from the emitters' own format strings (file and era beside
# each), for wordings no recording of this project holds: each is the kind
# its catalogue entry says.
EMITTERS_WORDS = [
    # coordination_service.cc, TF 2.19+ (absl::StrFormat of the barrier timeout)
    (
        "Barrier timed out. Id: PeerHealthCheck::1. This usually happens because a task triggered the barrier "
        "too early or too slowly. Please look at the task logs (both timed out and first task) to debug further.",
        "coord.barrier_timeout",
    ),
    # coordination_service.cc, TF 2.14-2.17 (LOG(ERROR) before stopping the service)
    (
        "Stopping coordination service as the following tasks are unhealthy (stopped sending heartbeats):\n"
        "/job:worker/replica:0/task:1",
        "coord.unhealthy_tasks",
    ),
    # node_def_util.cc ValidateNodeDef, TF 2.5+
    (
        "NodeDef mentions attribute use_inter_op_parallelism which is not in the op definition: "
        "Op<name=FlatMapDataset; signature=input_dataset:variant>",
        "tf.graph_incompatible",
    ),
    # cpu_feature_guard.cc, TF 2.3-2.11 (harmless)
    (
        "This TensorFlow binary is optimized with oneAPI Deep Neural Network Library (oneDNN) to use the "
        "following CPU instructions in performance-critical operations:  AVX2 FMA",
        "benign.cpu_instructions",
    ),
    # Keras Progbar.update: per-sample times (array inputs, TF 1.x-2.1) and Keras 3's bar
    (
        "60000/60000 [==============================] - 3s 53us/sample - loss: 0.2937 - acc: 0.9145",
        "keras.epoch_end",
    ),
    (
        "938/938 \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501 2s 2ms/step - accuracy: 0.9312 - loss: 0.2418",
        "keras.epoch_end",
    ),
    ("938/938 - 2s - 2ms/step - accuracy: 0.9312 - loss: 0.2418", "keras.epoch_end"),
    # Open MPI help-mpi-btl-tcp.txt [client connect fail], 3.1+
    (
        "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This\nshould not happen.",
        "net.connect_failed",
    ),
    # horovod/common/common.h SHUT_DOWN_ERROR
    (
        "[1,0]<stderr>: Horovod has been shut down. This was caused by an exception on one of the ranks or an "
        "attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.",
        "peer.lost",
    ),
    # systemd src/core/service.c (a unit's result: its cgroup's OOM kill), systemd 243+
    (
        "Nov 27 19:12:59 ml-node-2 systemd[1]: mwms-worker-0.service: Failed with result 'oom-kill'.",
        "platform.memory_limit",
    ),
    # base_collective_executor.cc, TF 2.3-2.21 (the timeout's status, logged by StartAbort)
    (
        "BaseCollectiveExecutor::StartAbort DEADLINE_EXCEEDED: Collective has timed out waiting for other workers.",
        "collective.timed_out",
    ),
    # slurmstepd req.c, a task's own output at its time limit (fixtures/blind/batch_z z05)
    (
        "slurmstepd: error: *** STEP 551207.0 ON cn042 CANCELLED AT 2026-11-27T20:13:32 DUE TO TIME LIMIT ***",
        "sched.cancelled",
    ),
    # OpenPBS/Torque pbs_mom job_over_limit, in the job's error file (public HPC docs and threads)
    ("=>> PBS: job killed: walltime 3611 exceeded limit 3600", "sched.cancelled"),
    ("=>> PBS: job killed: vmem 9000000kb exceeded limit 8000000kb", "platform.memory_limit"),
    # Slurm step_launch.c, srun as a step is torn down
    ("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.", "sched.cancelled"),
    # generator_dataset_op.cc, the iterator destroyed as Python finalizes (fixtures/blind/batch_v v13)
    (
        "Error occurred when finalizing GeneratorDataset iterator: FAILED_PRECONDITION: Python interpreter state "
        "is not initialized. The process may be terminated.",
        "benign.interpreter_exit",
    ),
    # coreutils timeout.c with --verbose
    ("timeout: sending signal TERM to command \u2018python\u2019", "sched.cancelled"),
]


@pytest.mark.parametrize(("text", "kind"), EMITTERS_WORDS, ids=[k for _, k in EMITTERS_WORDS])
def test_the_emitters_words_are_known(text: str, kind: str) -> None:
    from mwms_doctor.ingest.templates import classify

    got, fields, _ = classify(text)
    assert got == kind, (got, fields)
    if kind == "coord.unhealthy_tasks":
        assert fields["tasks"] == "worker:1"


def test_a_traceback_ending_in_horovods_shutdown_is_a_lost_peer_and_an_echo() -> None:
    """Horovod's SHUT_DOWN_ERROR, as a TF exception ends in it: its words mean
    a peer went away (an exception on another rank, or a rank that finished)."""
    text = "UnknownError:  Horovod has been shut down. This was caused by an exception on one of the ranks"
    assert says(text, "peer_lost") and says(text, "echo")
