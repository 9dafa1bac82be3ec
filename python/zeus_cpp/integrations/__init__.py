"""Integrations with training frameworks: `huggingface` (Trainer callbacks).

Prometheus is `zeus_cpp.metric`. (A carbon-intensity integration would sit here too.)
"""
