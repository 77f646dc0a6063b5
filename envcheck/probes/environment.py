"""The environment variables that steer this stack; secret-looking ones are always redacted."""

from __future__ import annotations

from envcheck.model.report import EnvInfo
from envcheck.model.section import Section
from envcheck.probes.context import ProbeContext
from envcheck.redact import redact_env

PREFIXES = (
    "CUDA_", "NVIDIA_", "NCCL_", "GLOO_", "TP_SOCKET", "RAY_", "VLLM_", "TORCH_", "PYTORCH_",
    "TORCHINDUCTOR_", "OMNIGIBSON_", "ISAAC", "HF_", "TRANSFORMERS_", "MUJOCO_", "PYOPENGL_",
    "__EGL_", "__GLX_", "VK_", "RLINF_", "MASTER_", "UCX_", "OMPI_", "SLURM_",
)  # fmt: skip
EXACT = frozenset(
    {
        "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "PYTHONHOME", "PATH", "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV", "VIRTUAL_ENV", "OMP_NUM_THREADS", "WORLD_SIZE", "RANK", "LOCAL_RANK",
        "DISPLAY", "TMPDIR", "container",
    }
)  # fmt: skip
PROXIES = frozenset({"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy"})


def is_relevant(name: str) -> bool:
    return name in EXACT or name.lower() in PROXIES or name.startswith(PREFIXES)


def probe_env(ctx: ProbeContext) -> Section[EnvInfo]:
    chosen = {k: v for k, v in ctx.env.items() if is_relevant(k)}
    values, hidden = redact_env(chosen)
    info = EnvInfo(variables=dict(sorted(values.items())), redacted=hidden)
    return Section.ok(info, source="environment")
