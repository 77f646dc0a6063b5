"""Importing this module registers every node rule (the cluster rules: rules/cluster/catalog.py,
imported only by what needs them: `check` never runs them)."""

from envcheck.rules.node import (  # noqa: F401
    bounds,
    bounds_log,
    coverage,
    cuda_libs,
    driver,
    driver_arch,
    dtype,
    flash_attn,
    gpu_cuda,
    gpu_health,
    gpu_torch,
    packages,
    pip_offered,
    python_range,
    ray,
    sgl_kernel,
    sim_render,
    simulators,
    system,
    system_build,
    torch_build,
    torch_cpu,
    torch_stated,
)
from envcheck.rules.node import network as node_network  # noqa: F401
