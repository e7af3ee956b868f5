"""Verdict classes: stable ids of the JSON schema (users triage and count by
them), with the words a person reads. A rule's CLASS must be one of these."""

from __future__ import annotations

CLASSES: dict[str, str] = {
    "healthy": "No failure found",
    "handshake_deadlock": "Deadlock at handshake",
    "tf_config_mismatch": "TF_CONFIG mismatch",
    "firewall_blocked": "Connection blocked",
    "peer_died": "A worker died",
    "oom": "Out of memory",
    "version_skew": "Version skew between workers",
    "identical_data": "Every worker reads the same data",
    "straggler": "Straggler",
    "data_exhaustion": "A worker ran out of data",
    "nan_loss": "NaN or Inf loss",
    "checkpoint_conflict": "Checkpoint write conflict",
    "grpc_message_size": "gRPC message size limit",
    "preemption": "Preemption",
    "collective_mismatch": "Collective shape or type mismatch",
    "nccl_error": "NCCL error",
    "worker_exception": "Uncaught exception in the training script",
    "hang": "The job stopped making progress",
    "unknown": "Failure of unknown cause",
}

# The title of class unknown when nothing failed in the evidence (it holds no
# error, yet no sign that the job finished either).
INCONCLUSIVE = "Inconclusive: no failure in the evidence, and no sign that the job finished"


# What evidence would settle each class, when it is only a candidate: shown
# beside the ranked alternatives so a person knows what to fetch next.
SETTLE: dict[str, str] = {
    "handshake_deadlock": "every task's log from the start (does each reach 'Coordination agent has successfully connected'?) and the pod/launcher status of any task without a log",
    "tf_config_mismatch": "each worker's TF_CONFIG exactly as its process saw it (an env dump or the first lines of each log)",
    "firewall_blocked": "a connection test between the workers' hosts on the TF_CONFIG ports (nc -vz host port), and both sides' logs",
    "peer_died": "the silent worker's exit code and last lines, and the node's kernel log (dmesg) or the pod's status (kubectl describe pod)",
    "oom": "the worker's exit code (137 = SIGKILL), dmesg on its node ('Out of memory: Killed process'), or the pod's OOMKilled reason",
    "version_skew": "pip freeze (or the image digest) of each worker",
    "identical_data": "a profile of one step per worker (xplane.pb: a Shard stage in the tf.data pipeline?) or each worker's local loss",
    "straggler": "a profile of a few steps on each worker, or per-worker step times",
    "data_exhaustion": "each worker's dataset size or steps per epoch, and whether the dataset repeats",
    "nan_loss": "tf.debugging.enable_check_numerics() on a rerun: it stops at the op and on the worker that made the NaN",
    "checkpoint_conflict": "the checkpoint paths each worker writes to (only the chief should write the real one)",
    "grpc_message_size": "the size of the largest tensor or variable sent between workers",
    "preemption": "the platform's events for the worker (kubectl get events, the VM's preemption notice, the scheduler's log)",
    "collective_mismatch": "each worker's model and batch definition (per-worker config?), and the collective error on every worker",
    "nccl_error": "NCCL_DEBUG=INFO output of every worker and the GPUs' topology (nvidia-smi topo -m)",
    "worker_exception": "the failing worker's full traceback and the input it was processing",
    "hang": "stack dumps of every worker while it hangs (py-spy dump --pid), and each worker's last progress line",
    "unknown": "each worker's complete log (stdout and stderr), its exit code and the node's kernel log",
    "healthy": "each worker's last lines: did every one finish its last epoch and exit 0?",
}
