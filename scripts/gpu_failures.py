"""Make real GPU-node failures on a real GPU node and triage each one.

    python3 scripts/gpu_failures.py OUTDIR [--only NAME ...] [--deadline S] [--list]

Each scenario drives a library's own code into a failure of a known kind (an allocation larger
than the GPU, a CUDA ordinal beyond the visible GPUs, NCCL ranks sharing one GPU, a TCP port
already taken, nvcc asked for an architecture it does not know, ...). The library writes the
log in its own words; nobody tuned envcheck to these lines. What each failure *is* comes from
how it was made, written here before envcheck reads the log (``kind``), never from what triage
prints. Two clean scenarios (a short training loop, NCCL at INFO) must come out with no finding.

For each scenario OUTDIR gets NAME.log (the failing command's stdout and stderr), NAME.triage.txt
(``envcheck triage`` at 80 columns) and NAME.triage.json; ``results.tsv`` and the table printed at
the end give the command's exit, triage's exit, each signature triage matched with its first cause.
Triage reads the node from one ``envcheck probe -o`` report taken at the start, as
``triage --report`` does on any node.

Not a unit test: the scenarios need a GPU, torch, and for some CuPy, JAX, Triton or nvcc;
a scenario whose tool is missing is skipped with the reason. Run it on a GPU machine
(docs/gpu.md); the tests run only the scenarios that need no GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # what the failure is, from how it is made ("clean" when nothing fails)
    python: str = ""  # a Python program run with this interpreter, or
    shell: str = ""  # a bash script (run with `bash -c`, $PY is this interpreter)
    env: dict[str, str] = field(default_factory=dict)
    needs: tuple[str, ...] = ()  # modules or programs the scenario needs
    timeout: float = 60.0


_DIST_WORKER = """
import datetime, os, sys, time
import torch, torch.distributed as dist, torch.multiprocessing as mp

def work(rank, backend, world, port, sleep_rank):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if backend == "nccl":
        torch.cuda.set_device(0)
    dist.init_process_group(backend, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=5))
    if rank == sleep_rank:
        time.sleep(12)
    t = torch.ones(4, device="cuda" if backend == "nccl" else "cpu")
    dist.all_reduce(t)
    if backend == "nccl":
        torch.cuda.synchronize()
    dist.destroy_process_group()
"""

# a DataLoader whose worker dies of a signal while loading (the main process reports it)
_LOADER = (
    "import os, signal, torch\n"
    "from torch.utils.data import DataLoader\n"
    "class D(torch.utils.data.Dataset):\n"
    "    def __len__(self): return 64\n"
    "    def __getitem__(self, i):\n"
    "        if i == 9: os.kill(os.getpid(), signal.{signal})\n"
    "        return torch.zeros(4)\n"
    "if __name__ == '__main__':\n"
    "    for batch in DataLoader(D(), batch_size=4, num_workers=2): pass\n"
)

# a process that holds GPU memory ({holder}, then sleeps) and, once it holds it, torch asking
# for half the GPU beside it; the holder is stopped after
_BESIDE = (
    "d=$(mktemp -d)\n"
    "$PY -c \"{holder}; print('holder ready', flush=True); time.sleep(90)\" > $d/h 2>&1 & h=$!\n"
    "for i in $(seq 120); do grep -q ready $d/h || ! kill -0 $h && break; sleep 0.5; done\n"
    '$PY -c "import torch; y = torch.empty(int(0.5 * '
    "torch.cuda.get_device_properties(0).total_memory), dtype=torch.uint8, "
    "device='cuda')\"\nrc=$?; kill $h; wait; exit $rc\n"
)

# spawned workers import the main module again: the call must sit under the __main__ guard
_MAIN = "if __name__ == '__main__':\n    mp.spawn(work, args={})\n"

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "torch_oom",
        "CUDA out of memory: one allocation larger than the GPU",
        python="import torch\nx = torch.empty(300 * 2**30, dtype=torch.uint8, device='cuda')\n",
        needs=("torch",),
    ),
    Scenario(
        "torch_invalid_ordinal",
        "CUDA device ordinal beyond the visible GPUs (cuda:3 on a 1-GPU node)",
        python="import torch\nx = torch.zeros(1, device='cuda:3')\n",
        needs=("torch",),
    ),
    Scenario(
        "torch_no_visible_gpu",
        "no GPU visible to the process: CUDA_VISIBLE_DEVICES is empty",
        python="import torch\nx = torch.zeros(1, device='cuda')\n",
        env={"CUDA_VISIBLE_DEVICES": ""},
        needs=("torch",),
    ),
    Scenario(
        "torch_visible_index_past_end",
        "CUDA_VISIBLE_DEVICES names an index the node does not have (1 on a 1-GPU node)",
        python="import torch\nx = torch.zeros(1, device='cuda')\n",
        env={"CUDA_VISIBLE_DEVICES": "1"},
        needs=("torch",),
    ),
    Scenario(
        "torch_init_under_vmem_limit",
        "CUDA initialised under an address-space limit (ulimit -v 16 GiB): the driver cannot "
        "reserve its virtual address range",
        shell="ulimit -v 16777216\n$PY -c \"import torch; x = torch.zeros(1, device='cuda')\"\n",
        needs=("torch",),
    ),
    Scenario(
        "jax_init_under_vmem_limit",
        "CUDA initialised under an address-space limit (ulimit -v 16 GiB), through JAX",
        shell='ulimit -v 16777216\n$PY -c "import jax; jax.numpy.zeros(1).block_until_ready()"\n',
        env={"JAX_PLATFORMS": "cuda"},
        needs=("jax",),
    ),
    Scenario(
        "torch_stub_libcuda",
        "the CUDA driver stub library loaded instead of the driver (stubs on LD_LIBRARY_PATH)",
        shell=(
            'stub=$(ls "$(dirname "$(command -v nvcc)")"/../lib64/stubs/libcuda.so '
            '"$(dirname "$(command -v nvcc)")"/../targets/*/lib/stubs/libcuda.so 2>/dev/null '
            "| head -1)\n"
            'd=$(mktemp -d); ln -s "$stub" "$d/libcuda.so.1"\n'
            "LD_LIBRARY_PATH=$d:${LD_LIBRARY_PATH:-} "
            "$PY -c \"import torch; torch.zeros(1, device='cuda')\"\n"
        ),
        needs=("torch", "nvcc"),
    ),
    Scenario(
        "torch_device_assert",
        "a device-side assert: an index out of bounds in a CUDA kernel",
        python=(
            "import torch\nx = torch.zeros(3, device='cuda')\n"
            "y = x[torch.tensor([5], device='cuda')]\ntorch.cuda.synchronize()\n"
        ),
        needs=("torch",),
    ),
    Scenario(
        "triton_illegal_address",
        "an illegal memory access: a Triton kernel stores far outside its tensor",
        python=(
            "import torch, triton, triton.language as tl\n"
            "@triton.jit\ndef k(p):\n    tl.store(p + (1 << 40), 1.0)\n"
            "x = torch.zeros(1, device='cuda')\nk[(1,)](x)\ntorch.cuda.synchronize()\n"
        ),
        needs=("torch", "triton"),
    ),
    Scenario(
        "cupy_illegal_address",
        "an illegal memory access: a CuPy raw kernel writes far outside its array",
        python=(
            "import cupy as cp\n"
            "k = cp.RawKernel(r'extern \"C\" __global__ void k(float* p) { p[1LL << 40] = 1.0f; }', 'k')\n"
            "x = cp.zeros(1, dtype=cp.float32)\nk((1,), (1,), (x,))\n"
            "cp.cuda.runtime.deviceSynchronize()\n"
        ),
        needs=("cupy",),
    ),
    Scenario(
        "cupy_oom",
        "CUDA out of memory in CuPy's allocator",
        python="import cupy as cp\nx = cp.empty(300 * 2**30, dtype=cp.uint8)\n",
        needs=("cupy",),
    ),
    Scenario(
        "jax_oom",
        "CUDA out of memory in JAX/XLA",
        python=(
            "import jax.numpy as jnp\n"
            "x = jnp.ones((300 * 2**30,), dtype=jnp.uint8)\nx.block_until_ready()\n"
        ),
        env={"XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
        needs=("jax",),
    ),
    Scenario(
        "jax_no_visible_gpu",
        "no GPU visible to the process: JAX asked for CUDA with CUDA_VISIBLE_DEVICES empty",
        python="import jax\nprint(jax.devices())\n",
        env={"CUDA_VISIBLE_DEVICES": "", "JAX_PLATFORMS": "cuda"},
        needs=("jax",),
    ),
    Scenario(
        "cuda_in_forked_child",
        "CUDA used in a fork()ed child after the parent initialised it",
        python=(
            "import multiprocessing as mp, torch\n"
            "def child():\n    torch.zeros(1, device='cuda')\n"
            "if __name__ == '__main__':\n    torch.zeros(1, device='cuda')\n"
            "    p = mp.get_context('fork').Process(target=child)\n"
            "    p.start(); p.join(); raise SystemExit(p.exitcode)\n"
        ),
        needs=("torch",),
    ),
    Scenario(
        "nccl_duplicate_gpu",
        "two NCCL ranks on the same GPU",
        python=_DIST_WORKER + _MAIN.format("('nccl', 2, 29611, -1), nprocs=2"),
        env={"NCCL_DEBUG": "WARN"},
        needs=("torch",),
        timeout=90,
    ),
    Scenario(
        "nccl_bad_socket_ifname",
        "NCCL_SOCKET_IFNAME names no interface of the node",
        python=_DIST_WORKER + _MAIN.format("('nccl', 1, 29612, -1), nprocs=1"),
        env={"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "bogus0"},
        needs=("torch",),
        timeout=90,
    ),
    Scenario(
        "gloo_bad_socket_ifname",
        "GLOO_SOCKET_IFNAME names no interface of the node",
        python=_DIST_WORKER + _MAIN.format("('gloo', 1, 29613, -1), nprocs=1"),
        env={"GLOO_SOCKET_IFNAME": "bogus0"},
        needs=("torch",),
    ),
    Scenario(
        "gloo_recv_timeout",
        "a collective timed out: one rank stalls past the process group's timeout",
        python=_DIST_WORKER + _MAIN.format("('gloo', 2, 29614, 1), nprocs=2"),
        needs=("torch",),
        timeout=90,
    ),
    Scenario(
        "store_port_in_use",
        "the rendezvous port is already taken on the master (EADDRINUSE)",
        python=(
            "import os, socket, torch.distributed as dist\n"
            "s = socket.socket()\ns.bind(('0.0.0.0', 29615))\ns.listen()\n"
            "os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='29615')\n"
            "dist.init_process_group('gloo', rank=0, world_size=1)\n"
        ),
        needs=("torch",),
    ),
    Scenario(
        "store_clients_timeout",
        "rendezvous timed out: a rank of the world never joined",
        python=(
            "import datetime, os, torch.distributed as dist\n"
            "os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT='29616')\n"
            "dist.init_process_group('gloo', rank=0, world_size=2,"
            " timeout=datetime.timedelta(seconds=5))\n"
        ),
        needs=("torch",),
    ),
    Scenario(
        "nvcc_unknown_arch",
        "nvcc asked for a GPU architecture it does not know",
        shell=(
            'd=$(mktemp -d); echo "__global__ void k() {}" > $d/k.cu\n'
            "nvcc -arch=sm_200 -c $d/k.cu -o $d/k.o\n"
        ),
        needs=("nvcc",),
    ),
    Scenario(
        "ptxas_unknown_arch",
        "ptxas asked for a GPU architecture it does not know",
        shell=(
            'd=$(mktemp -d); echo "__global__ void k() {}" > $d/k.cu\n'
            "nvcc -ptx $d/k.cu -o $d/k.ptx && ptxas -arch=sm_99 $d/k.ptx -o $d/k.cubin\n"
        ),
        needs=("nvcc", "ptxas"),
    ),
    Scenario(
        "nvcc_missing_header",
        "a build includes a header of a library that is not installed (CUTLASS)",
        shell=(
            'd=$(mktemp -d); printf "#include <cutlass/cutlass.h>\\n__global__ void k() {}\\n"'
            " > $d/k.cu\nnvcc -c $d/k.cu -o $d/k.o\n"
        ),
        needs=("nvcc",),
    ),
    Scenario(
        "torch_ext_unknown_arch",
        "TORCH_CUDA_ARCH_LIST names an architecture torch does not know",
        python=(
            "from torch.utils.cpp_extension import load_inline\n"
            "load_inline('archx', cpp_sources='', cuda_sources='__global__ void k() {}',"
            " verbose=True)\n"
        ),
        env={"TORCH_CUDA_ARCH_LIST": "12.5"},
        needs=("torch", "nvcc"),
        timeout=120,
    ),
    Scenario(
        "torch_ext_compile_error",
        "a torch C++ extension's source does not compile (ninja build failed)",
        python=(
            "from torch.utils.cpp_extension import load_inline\n"
            "load_inline('brokenx', cpp_sources='int f() { return undefined_fn(); }',"
            " functions=['f'], verbose=True)\n"
        ),
        needs=("torch", "ninja"),
        timeout=180,
    ),
    Scenario(
        "ext_undefined_symbol",
        "an extension built against another torch: a c10 symbol this torch does not export",
        shell=(
            "d=$(mktemp -d); mkdir -p $d/fakeext\n"
            "printf 'extern void _ZN3c1013MessageLoggerC1EPKciib(void);\\n"
            "void PyInit__C(void) { _ZN3c1013MessageLoggerC1EPKciib(); }\\n' > $d/c.c\n"
            "touch $d/fakeext/__init__.py\n"
            "cc -shared -fPIC -o $d/fakeext/_C$($PY -c 'import sysconfig; "
            'print(sysconfig.get_config_var("EXT_SUFFIX"))\') $d/c.c\n'
            'cd $d && $PY -c "import torch, fakeext._C"\n'
        ),
        needs=("torch", "cc"),
    ),
    Scenario(
        "ext_missing_cudart11",
        "an extension built for CUDA 11 on a node without CUDA 11's runtime (libcudart.so.11.0)",
        shell=(
            "d=$(mktemp -d); mkdir -p $d/stub $d/fakeext; touch $d/fakeext/__init__.py\n"
            "echo 'int cudaGetDeviceCount(int *n) { return 0; }' > $d/s.c\n"
            "cc -shared -fPIC -Wl,-soname,libcudart.so.11.0 -o $d/stub/libcudart.so.11.0 $d/s.c\n"
            "echo 'int cudaGetDeviceCount(int *n); void PyInit__C(void) { int n; "
            "cudaGetDeviceCount(&n); }' > $d/c.c\n"
            "cc -shared -fPIC -o $d/fakeext/_C$($PY -c 'import sysconfig; "
            'print(sysconfig.get_config_var("EXT_SUFFIX"))\') $d/c.c $d/stub/libcudart.so.11.0\n'
            'rm -r $d/stub; cd $d && $PY -c "import torch, fakeext._C"\n'
        ),
        needs=("torch", "cc"),
    ),
    Scenario(
        "triton_shared_memory",
        "a Triton kernel asks for more shared memory than the GPU has per block",
        python=(
            "import torch, triton, triton.language as tl\n"
            "@triton.jit\ndef k(X, Y, B: tl.constexpr):\n    o = tl.arange(0, B)\n"
            "    a = tl.load(X + o[:, None] * B + o[None, :])\n"
            "    b = tl.load(Y + o[:, None] * B + o[None, :])\n"
            "    tl.store(X + o[:, None] * B + o[None, :], tl.dot(a, b).to(tl.float16))\n"
            "x = torch.zeros(256 * 256, device='cuda', dtype=torch.float16)\n"
            "k[(1,)](x, x.clone(), B=256, num_stages=4)\n"
        ),
        needs=("torch", "triton"),
        timeout=60,
    ),
    Scenario(
        "torch_oom_other_process",
        "CUDA out of memory because another process holds most of the GPU",
        shell=_BESIDE.format(
            holder="import torch, time; x = torch.empty(int(0.8 * "
            "torch.cuda.get_device_properties(0).total_memory), dtype=torch.uint8, device='cuda')"
        ),
        needs=("torch",),
        timeout=90,
    ),
    Scenario(
        "torch_oom_beside_jax",
        "CUDA out of memory because a JAX process preallocated 75% of the GPU",
        shell=_BESIDE.format(
            holder="import jax.numpy as jnp, time; jnp.ones(8).block_until_ready()"
        ),
        needs=("torch", "jax"),
        timeout=90,
    ),
    Scenario(
        "nvidia_smi_missing_index",
        "nvidia-smi asked for a GPU index the node does not have (-i 5 on a 1-GPU node)",
        shell="nvidia-smi -i 5\n",
        needs=("nvidia-smi",),
    ),
    Scenario(
        "cupy_block_too_large",
        "a kernel launched with more threads per block than the GPU allows (2048 > 1024)",
        python=(
            "import cupy as cp\n"
            "k = cp.RawKernel(r'extern \"C\" __global__ void k(float* p) { p[0] = 1.0f; }', 'k')\n"
            "x = cp.zeros(1, dtype=cp.float32)\nk((1,), (2048,), (x,))\n"
            "cp.cuda.runtime.deviceSynchronize()\n"
        ),
        needs=("cupy",),
    ),
    Scenario(
        "cupy_kernel_compile_error",
        "a CuPy raw kernel's source does not compile (NVRTC: an undefined identifier)",
        python=(
            "import cupy as cp\n"
            "k = cp.RawKernel(r'extern \"C\" __global__ void k(float* p) { p[0] = undefined_x; }',"
            " 'k')\nk((1,), (1,), (cp.zeros(1, dtype=cp.float32),))\n"
        ),
        needs=("cupy",),
    ),
    Scenario(
        "cubin_other_arch",
        "a kernel binary built only for another GPU (an sm_80 cubin, no PTX) loaded on this one",
        shell=(
            "d=$(mktemp -d)\n"
            "echo 'extern \"C\" __global__ void k(float* p) { p[0] = 1.0f; }' > $d/k.cu\n"
            "nvcc -cubin -arch=sm_80 -o $d/k.cubin $d/k.cu\n"
            "$PY -c \"import cupy as cp; cp.RawModule(path='$d/k.cubin').get_function('k')\"\n"
        ),
        needs=("cupy", "nvcc"),
    ),
    Scenario(
        "ext_no_kernel_image",
        "a torch CUDA extension built for another GPU only (TORCH_CUDA_ARCH_LIST=8.0, no PTX)",
        python=(
            "import torch\nfrom torch.utils.cpp_extension import load_inline\n"
            "cu = '''#include <torch/extension.h>\n#include <c10/cuda/CUDAException.h>\n"
            "__global__ void k(float* p) { p[0] = 1.0f; }\n"
            "void run(torch::Tensor t) { k<<<1, 1>>>(t.data_ptr<float>());"
            " C10_CUDA_KERNEL_LAUNCH_CHECK(); }'''\n"
            "m = load_inline('archext', cpp_sources='void run(torch::Tensor t);',"
            " cuda_sources=cu, functions=['run'])\n"
            "m.run(torch.zeros(1, device='cuda'))\ntorch.cuda.synchronize()\n"
        ),
        env={"TORCH_CUDA_ARCH_LIST": "8.0"},
        needs=("torch", "ninja", "nvcc"),
        timeout=240,
    ),
    Scenario(
        "dataloader_worker_killed",
        "a DataLoader worker killed by SIGKILL, the signal the kernel's OOM killer sends",
        python=_LOADER.format(signal="SIGKILL"),
        needs=("torch",),
    ),
    Scenario(
        "dataloader_worker_bus_error",
        "a DataLoader worker died of SIGBUS, what a full /dev/shm raises in its shared tensors",
        python=_LOADER.format(signal="SIGBUS"),
        needs=("torch",),
    ),
    Scenario(
        "dataloader_open_files_limit",
        "DataLoader workers pass tensors by file descriptor past the open-files limit",
        shell=(
            'ulimit -n 128\n$PY -c "import torch\n'
            "from torch.utils.data import DataLoader\n"
            "class D(torch.utils.data.Dataset):\n"
            "    def __len__(self): return 4096\n"
            "    def __getitem__(self, i): return [torch.zeros(4) for _ in range(8)]\n"
            "if __name__ == '__main__':\n"
            '    kept = [b for b in DataLoader(D(), batch_size=None, num_workers=2)]\n"\n'
        ),
        needs=("torch",),
        timeout=120,
    ),
    Scenario(
        "native_segfault",
        "a native crash: the process died of SIGSEGV",
        shell="$PY -X faulthandler -c 'import ctypes; ctypes.string_at(0)'; exit $?\n",
    ),
    Scenario(
        "module_missing",
        "a package the job imports is not installed (flash-attn)",
        python="import flash_attn\n",
    ),
    Scenario(
        "clean_train",
        "clean",
        python=(
            "import torch\ntorch.manual_seed(0)\n"
            "m = torch.nn.Linear(256, 256).cuda().bfloat16()\n"
            "opt = torch.optim.AdamW(m.parameters(), lr=1e-3)\n"
            "for step in range(20):\n"
            "    x = torch.randn(64, 256, device='cuda', dtype=torch.bfloat16)\n"
            "    loss = m(x).float().pow(2).mean()\n"
            "    opt.zero_grad(); loss.backward(); opt.step()\n"
            "    print(f'step {step} loss {loss.item():.4f}', flush=True)\n"
            "print(torch.cuda.max_memory_allocated() // 2**20, 'MiB peak')\n"
        ),
        needs=("torch",),
    ),
    Scenario(
        "clean_nccl_info",
        "clean",
        python=_DIST_WORKER + _MAIN.format("('nccl', 1, 29617, -1), nprocs=1"),
        env={"NCCL_DEBUG": "INFO"},
        needs=("torch",),
        timeout=90,
    ),
)


def _missing(needs: tuple[str, ...], python: str) -> str | None:
    import importlib.util

    for need in needs:
        if need in {"nvcc", "ptxas", "cc", "ninja", "nvidia-smi"}:
            if shutil.which(need) is None:
                return f"{need} not on PATH"
        elif importlib.util.find_spec(need) is None:
            return f"{need} not importable by {python}"
    return None


def _run(argv: list[str], env: dict[str, str], timeout: float, log: Path) -> int | str:
    with log.open("wb") as handle:
        try:
            done = subprocess.run(
                argv,
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=env,
                timeout=timeout,
                check=False,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return f"timeout {timeout:.0f} s"
    return done.returncode


def _triage(
    log: Path, report: Path | None, out: Path, env: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    node = ["--report", str(report)] if report else ["--no-probe"]
    base = [sys.executable, "-m", "envcheck", "triage", *node, str(log)]
    text_env = dict(env, COLUMNS="80", NO_COLOR="1")
    with (out / f"{log.stem}.triage.txt").open("wb") as handle:
        subprocess.run(
            base, stdout=handle, stderr=subprocess.STDOUT, env=text_env, timeout=120, check=False
        )
    done = subprocess.run([*base, "--json"], capture_output=True, env=env, timeout=120, check=False)
    (out / f"{log.stem}.triage.json").write_bytes(done.stdout)
    try:
        return done.returncode, json.loads(done.stdout)["data"]
    except (ValueError, KeyError, TypeError):
        return done.returncode, {}


def _signatures(data: dict[str, Any]) -> str:
    """Each signature triage matched (noise left out), with its first cause and verdict."""
    found = []
    for match in data.get("matches") or []:
        if match.get("noise"):
            continue
        causes = match.get("causes") or []
        top = f" {causes[0]['code']} {causes[0]['verdict']}" if causes else ""
        found.append(f"{match.get('id', '?')}{top}")
    return "; ".join(found) or "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path, nargs="?")
    parser.add_argument("--only", nargs="*", default=None, help="scenario names")
    parser.add_argument(
        "--deadline",
        type=float,
        default=480.0,
        help="skip the scenarios left after this many seconds (default 480)",
    )
    parser.add_argument(
        "--no-probe", action="store_true", help="triage without this node's facts (no GPU needed)"
    )
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = parser.parse_args(argv)
    if args.list:
        for scenario in SCENARIOS:
            print(f"{scenario.name:26} {scenario.kind}")
        return 0
    if args.outdir is None:
        parser.error("OUTDIR is required")
    chosen = [s for s in SCENARIOS if args.only is None or s.name in args.only]
    unknown = set(args.only or ()) - {s.name for s in SCENARIOS}
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    out: Path = args.outdir
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", PY=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    report: Path | None = None
    if not args.no_probe:
        report = out / "node-report.json"
        subprocess.run(
            [sys.executable, "-m", "envcheck", "probe", "-o", str(report), "--force"],
            capture_output=True,
            env=env,
            timeout=180,
            check=False,
        )
        if not report.is_file():
            report = None
    start = time.monotonic()
    rows: list[tuple[str, ...]] = []
    for scenario in chosen:
        missing = _missing(scenario.needs, sys.executable)
        if missing or time.monotonic() - start > args.deadline:
            rows.append((scenario.name, "skipped", "-", missing or "deadline", scenario.kind, "-"))
            continue
        work = Path(tempfile.mkdtemp(prefix=f"{scenario.name}-"))
        log = out / f"{scenario.name}.log"
        if scenario.python:
            program = work / "job.py"
            program.write_text(textwrap.dedent(scenario.python))
            command = [sys.executable, str(program)]
        else:
            command = ["bash", "-c", scenario.shell]
        began = time.monotonic()
        code = _run(command, dict(env, **scenario.env), scenario.timeout, log)
        took = time.monotonic() - began
        triage_exit, data = _triage(log, report, out, env)
        rows.append(
            (
                scenario.name,
                str(code),
                str(triage_exit),
                _signatures(data),
                scenario.kind,
                f"{took:.1f}",
            )
        )
        shutil.rmtree(work, ignore_errors=True)
        print("\t".join(rows[-1]), flush=True)
    (out / "results.tsv").write_text(
        "scenario\tjob exit\ttriage exit\tsignatures (first cause)\tkind\tseconds\n"
        + "".join("\t".join(row) + "\n" for row in rows)
    )
    made = [r for r in rows if r[1] != "skipped"]
    failures = [r for r in made if r[4] != "clean"]
    found = [r for r in failures if r[2] == "1"]
    clean_ok = [r for r in made if r[4] == "clean" and r[2] == "0"]
    print(
        f"failures made: {len(failures)}; triage found {len(found)}; "
        f"clean runs with no finding: {len(clean_ok)}/{len(made) - len(failures)}; "
        f"skipped: {len(rows) - len(made)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
