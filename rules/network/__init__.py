"""Network: peers that are alive but cannot be reached, and gRPC limits."""
