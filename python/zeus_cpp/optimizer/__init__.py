"""Optimizers: `power_limit` (the JIT power-limit profiler), `batch_size` (the service client) and
`pipeline_frequency` (Perseus's per-instruction GPU clocks for pipeline parallelism)."""
