"""Memory: allocations that failed on a device or on the host."""
