"""Helpers shared by the zeus_cpp modules (framework detection)."""
