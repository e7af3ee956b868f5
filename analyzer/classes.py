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
