"""Measuring policies: the evaluation harness with regret (`evaluation`), matches and
tournaments (`tournament`), the env benchmarks (`bench`) and the Ray backend
(`ray_backend`)."""
