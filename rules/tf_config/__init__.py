"""TF_CONFIG: workers whose cluster configuration is broken or disagrees."""
