"""Importing this module registers every node rule (the cluster rules: rules/cluster/catalog.py,
imported only by what needs them: `check` never runs them)."""

from envcheck.rules.node import (  # noqa: F401
    bounds,
    coverage,
    cuda_libs,
    cuda_stated,
    driver,
    driver_arch,
    dtype,
    flash_attn,
    flash_attn1,
    gpu_cuda,
    gpu_health,
    gpu_torch,
    packages,
    pkg_stated,
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
