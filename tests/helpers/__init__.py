"""What several test modules share: the ``undertow`` command, a scripted OpenAI-compatible endpoint, episode and
trajectory builders, the real S3 + MLflow stack, the tiny vLLM model, generated Spider folders, and the shipped
suites and configs built once per session. ``tests/`` is on the path (pytest puts the conftest's folder there), so
a test imports ``from helpers.cli import run_cli``."""
