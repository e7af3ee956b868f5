"""Preemption: workers the platform asked to stop."""
