"""Optimizers: `power_limit` (the JIT power-limit profiler) and `batch_size` (the service client)."""
