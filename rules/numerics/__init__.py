"""Numerics: losses and activations that stop being numbers."""
