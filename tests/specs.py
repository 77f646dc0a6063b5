"""Declared nodes shared by several test modules."""

from __future__ import annotations

import textwrap

# the TinyZero H20 node of the README: cuBLAS 12.1.3.1 on Hopper, Gloo/NCCL set-up mistakes,
# a full /tmp/ray and Docker's 64 MB /dev/shm
TINYZERO = textwrap.dedent(
    """\
    [gpu]
    driver = "535.104.05"
    models = ["NVIDIA H20", "NVIDIA H20"]   # names as nvidia-smi prints them; one entry per GPU
    # compute_capability = "9.0"           # when the name is not in the matrix

    [python]
    version = "3.10.12"

    [packages]                              # distribution = installed version
    torch = "2.4.0+cu121"
    vllm = "0.6.3"
    "nvidia-cublas-cu12" = "12.1.3.1"
    numpy = "1.26.4"

    [system]
    os = "Ubuntu 22.04"
    glibc = "2.35"
    memory_gib = 1024
    shm_gib = 0.0625
    in_container = true
    disks = [{ path = "/tmp/ray", size_gib = 100, free_gib = 3 }]

    [env]
    LD_LIBRARY_PATH = "/usr/local/cuda-12.1/lib64"
    GLOO_SOCKET_IFNAME = "^lo,docker0"

    [network]
    hostname_resolves_to = "127.0.1.1"
    interfaces = [{ name = "eth0", ipv4 = "10.0.0.5", up = true }, { name = "docker0", ipv4 = "172.17.0.1", up = true }]
    """
)
