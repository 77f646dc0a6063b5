"""GPU memory that ran out in the words of a library that does not say "out of memory": SYS230,
read from the line (matrices/signatures/memory_runtimes.toml). cuDNN's convolution search finds
no algorithm whose workspace fits (torch, ONNX Runtime, darknet); torch's allocator fails an
allocation and then fails asking NVML who holds the GPU; cuBLAS's CUBLAS_STATUS_ALLOC_FAILED
and cuDNN's, cuFFT's, cuSOLVER's and cuSPARSE's ALLOC_FAILED (cuda_libs.toml); XLA's allocator refusing a size on a TPU's HBM. The fix is the out-of-memory fix in the
knobs of the program that printed the line."""

from __future__ import annotations

from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_DARKNET = "isn't found"
_CUBLAS_ALLOC = "CUBLAS_STATUS_ALLOC_FAILED"  # cuda_libs.toml's cublas-alloc-failed
# the other CUDA libraries' allocation failures (cuda_libs.toml's cuda-library-alloc-failed):
# (status name, the library)
_LIBRARY_ALLOC = (
    ("CUDNN_STATUS_ALLOC_FAILED", "cuDNN"),
    ("CUFFT_ALLOC_FAILED", "cuFFT"),
    ("CUSOLVER_STATUS_ALLOC_FAILED", "cuSOLVER"),
    ("CUSPARSE_STATUS_ALLOC_FAILED", "cuSPARSE"),
)
_XLA_REFUSED = "That was not possible"  # XLA's allocator (TPU HBM): memory_runtimes.toml  # darknet's wording; torch's and ONNX Runtime's say "Unable to find"
# XLA's TPU compiler: the program does not fit a memory space (memory_runtimes.toml's
# xla-tpu-compile-out-of-memory): "Used 17.91G of 15.48G hbm"
_TPU_COMPILE = lazy(
    r"Ran out of memory in memory space (?P<space>[a-z]+)\.?(?: Used (?P<used>[0-9.]+[KMGT]?) "
    r"of (?P<limit>[0-9.]+[KMGT]?) )?"
)
_NVML = "NVML_SUCCESS"
_NVML_INIT = "nvmlInit"
# torch 2.1's out-of-memory report asserting on its driver API table before NVML
# (memory_runtimes.toml): the unversioned libcuda.so it looks for is not loaded on WSL 2
_DRIVER_API = "torch-oom-report-driver-api-assert"
# expandable segments asserting after a growth that failed partway (memory_runtimes.toml)
_SEGMENT_MAP = "torch-expandable-segment-map-assert"
_HELD = (
    "nvidia-smi --query-compute-apps=pid,used_memory --format=csv (other processes holding the "
    "GPU: a second notebook or run, stale workers)"
)
_SMALLER = (
    "a smaller batch size (--batch-size / batch_size; gradient accumulation keeps the "
    "effective batch), a smaller input size or model"
)
# GPU memory short in another API's or a retry loop's words (memory_runtimes.toml)
_OTHER_API = "device-memory-short-other-api"
_BATCH_FINDER = "No executable batch size found"
# the job runs, but close to the GPU's memory: DeepSpeed's cache flushes, Accelerate's offload
_PRESSURE = "gpu-memory-pressure-warning"
_OFFLOADED = "offloaded to the"
# PhysX's GPU allocator (Isaac Gym/Sim/Lab, SAPIEN): the simulation's own buffers
_PHYSX = "physx-gpu-allocation-failed"
# Isaac Gym's own CUDA check saying out of memory (memory_runtimes.toml): PhysX's buffers too
_PHYSX_LINES = frozenset({_PHYSX, "isaac-gym-cuda-out-of-memory"})
# (words of the line, the API that said it, what lowers its memory): the first that fits
_KIT = (
    "fewer cameras or render products and a lower render resolution, --headless (no "
    "viewport), fewer environments (num_envs)"
)
_API_KNOBS = (
    (
        "ggml_vulkan",
        "llama.cpp's Vulkan backend",
        "fewer layers on the GPU (-ngl / --n-gpu-layers <fewer>), a smaller context (-c), a "
        "smaller quantization of the model",
    ),
    (
        "rmm",
        "RAPIDS (rmm)",
        "smaller partitions or batches; rmm.reinitialize(pool_allocator=True, "
        "managed_memory=True) lets it spill to host memory",
    ),
    (
        "[metal::malloc]",
        "MLX (one buffer above the Metal device's maximum buffer size)",
        "a smaller batch, context or image size, so that no single array is that large "
        "(the line states the device's limit); a smaller or more quantized model",
    ),
    (
        "Invalid buffer size",
        "torch's MPS backend (one buffer above the Metal device's maximum)",
        "a smaller batch, image size or sequence length, so that no single tensor is that "
        "large; or run that step on the CPU",
    ),
    # blender/blender intern/cycles/device/memory.cpp (generic_alloc's set_error)
    (
        "System is out of GPU",
        "Blender Cycles",
        "a lower render resolution and smaller textures (Render Properties > Simplify > "
        "Texture Limit), fewer or simpler objects, Performance > Memory > Use Tiling; or "
        "render on the CPU (Device: CPU)",
    ),
    # Unreal Engine's RHI (TerminateOnOutOfMemory); CARLA's launch options
    # (carla.readthedocs.io: -quality-level=Low, -ResX/-ResY, -RenderOffScreen)
    (
        "Out of video memory",
        "Unreal Engine (CARLA, AirSim)",
        "a lower resolution and quality (CARLA: -quality-level=Low -ResX=<w> -ResY=<h>), close "
        "other programs that hold the GPU; where nvidia-smi shows the GPU's memory free, the "
        "host's RAM ran out instead",
    ),
    # turboderp/exllamav2 model.py (set_device_map's assert over the gpu_split list)
    (
        "Insufficient space in device allocation",
        "ExLlama's GPU split",
        "a larger or one more GPU in the split (gpu_split / --gpu_split 20,24, or autosplit), "
        "a shorter max_seq_len (its cache and scratch space), a smaller quantization",
    ),
    # turboderp-org/exllamav3 model/model_ls.py (the split filled every device)
    (
        "Insufficient VRAM in split for model and cache",
        "ExLlamaV3's GPU split",
        "a shorter context (max_seq_len) or a quantized cache (cache_mode Q4), a smaller "
        "quantization (bpw), MoE experts on the CPU, or one more GPU in the split",
    ),
    (
        "memory isn't enough and alloc failed",
        "MindSpore",
        "a smaller batch size or model (the alloc size on the line is one request), or a device "
        "with more memory",
    ),
    # Omniverse Kit's Vulkan allocations (Isaac Sim): the renderer's memory grows with the
    # cameras and render products; Isaac Lab's --headless runs without the viewport
    (
        "vkAllocateMemory failed",
        "Omniverse Kit's renderer (Isaac Sim)",
        _KIT,
    ),
    ("subAllocate() failed", "Omniverse Kit's renderer (Isaac Sim)", _KIT),
    ("carb.graphics-vulkan", "Omniverse Kit's renderer (Isaac Sim)", _KIT),
    ("Unable to allocate buffer", "Omniverse Kit's renderer (Isaac Sim)", _KIT),
    # ggml-org/llama.cpp ggml/src/ggml-metal: a buffer the Mac's GPU working set cannot hold
    (
        "metal",
        "llama.cpp's Metal backend (the Mac's unified memory)",
        "fewer layers on the GPU (-ngl / --n-gpu-layers <fewer>), a smaller context (-c), a "
        "smaller quantization of the model; close other apps that hold unified memory",
    ),
    ("OutOfDeviceMemory", "Vulkan", _SMALLER),
    ("OUT_OF_DEVICE_MEMORY", "Vulkan / Level Zero (SYCL)", _SMALLER),
    ("Allocation failure", "OpenCL", _SMALLER),
    ("ALLOCATION_FAILURE", "OpenCL", _SMALLER),
)


# NVIDIA DALI's allocations (memory_runtimes.toml's dali-gpu-allocation-failed): the pipeline's
# batch, its decoder threads and its largest images; DALI's docs/advanced_topics.rst (memory
# consumption: the mixed decoder's buffers grow to the largest image, preallocated with
# device_memory_padding / hw_decoder_load); https://github.com/NVIDIA/DALI/issues/2598
_DALI = "dali-gpu-allocation-failed"
_DALI_KNOBS = (
    "a smaller batch_size and fewer decoder threads for the pipeline (num_threads=3 or 4); "
    "downscale or drop the dataset's oversized images (the mixed decoder's buffers grow to "
    "the largest image); or decode on the CPU (fn.decoders.image(..., device='cpu'))"
)
# a Jetson's NvMap out of memory (memory_runtimes.toml's jetson-nvmap-allocation-failed): the
# GPU allocates from the module's RAM; https://github.com/0xShug0/audio.cpp/issues/12 (a reboot
# cleared NvMap's fragmentation)
_JETSON = "jetson-nvmap-allocation-failed"
_JETSON_KNOBS = (
    "a smaller model, batch, input size or TensorRT workspace; free the module's RAM (stop "
    "the desktop: sudo systemctl isolate multi-user.target, other containers); reboot where "
    "the same job ran before (NvMap's pool fragments); swap does not serve GPU buffers"
)
# Intel GPUs' runtimes (memory_runtimes.toml's intel-gpu-out-of-resources)
_INTEL = "intel-gpu-out-of-resources"
_INTEL_4GB = "larger than 4GB"
_INTEL_KNOBS = (
    "a smaller model, context (max tokens) or batch; low-bit weights (ipex-llm: "
    "load_in_low_bit='sym_int4'); ipex-llm: cpu_embedding=True keeps the embedding in host "
    "memory; spread the model over more GPUs; an integrated GPU uses a share of system RAM: "
    "close other programs (Intel's Shared GPU Memory Override raises the share)"
)


@rule("SYS230", "gpu-memory-short-unnamed", Severity.WARNING)
def gpu_memory_short_unnamed(facts: Facts) -> Iterable[Hit]:
    """GPU memory ran out where the library's message does not say out of memory

    ## What it checks
    Only a log says it: torch's (and ONNX Runtime's) `Unable to find a valid cuDNN algorithm to
    run convolution` and darknet's `cuDNN isn't found FWD algo for convolution` (every cuDNN
    algorithm's workspace failed to allocate), and torch's `NVML_SUCCESS == r INTERNAL ASSERT
    FAILED at ".../CUDACachingAllocator.cpp"` (an allocation failed, and writing the
    out-of-memory message torch's query of NVML for the processes on the GPU failed too) and
    torch 2.1's `handle_0 INTERNAL ASSERT FAILED at ".../c10/cuda/driver_api.cpp"` (the same
    report failing one step earlier, at the libcuda it looks up by its unversioned name: WSL 2),
    and `!handles_.at(i) INTERNAL ASSERT FAILED at ".../CUDACachingAllocator.cpp"` (expandable
    segments after a growth that failed partway);
    the CUDA libraries' `CUBLAS_STATUS_ALLOC_FAILED`, `CUDNN_STATUS_ALLOC_FAILED`,
    `CUFFT_ALLOC_FAILED` (a cudaMalloc inside the library that failed); XLA's TPU compiler,
    `Ran out of memory in memory space hbm. Used 17.91G of 15.48G hbm` (also `smem`,
    `vmem`: the compiled step does not fit the chip).

    ## Why it matters
    Neither line says "out of memory", so the search goes to cuDNN versions and driver bugs; the
    fix is the out-of-memory one: less GPU memory for the job, or the GPU freed of other
    processes. torch's NVML assert comes mostly from a MIG slice, where NVML answers no
    per-process query and the slice is small.

    ## Example
    YOLOv5 training with `--batch-size 64` on a 6 GB GPU: `RuntimeError: Unable to find a valid
    cuDNN algorithm to run convolution`; it trains with `--batch-size 16`.

    ## Fix
    A smaller batch size (darknet: a larger `subdivisions=` or a smaller `batch=` in the
    model's .cfg), a smaller input or model; stop other processes on the GPU (`nvidia-smi`). On
    a MIG slice: `CUDA_VISIBLE_DEVICES` must name the slice the job was given (`nvidia-smi -L`
    lists `MIG-<uuid>`), and the job must fit the slice's memory.

    ## References
    - https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/cudnn/Conv_v7.cpp
    - https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDACachingAllocator.cpp
      (reportProcessMemoryInfo)
    - https://github.com/ultralytics/yolov5/issues/11250
    - https://github.com/AlexeyAB/darknet/issues/7660
    - https://github.com/Stability-AI/sd3.5/issues/18
    - https://github.com/pytorch/pytorch/issues/112957 (driver_api.cpp's handle_0 on WSL 2)
    - https://github.com/pytorch/pytorch/issues/188008 (expandable segments' !handles_.at(i))
    - https://github.com/vllm-project/vllm/issues/8318 (TPU SMEM: --max-model-len 8192)
    """
    raise Skip("only a log line states a library's hidden out-of-memory", "log.gpu_memory")


@from_log("SYS230")
def gpu_memory_short_unnamed_in_log(facts: Facts, line: LogLine) -> Hit:
    """The out-of-memory fix in the knobs of the program that printed the line."""
    text = line.text
    steps: tuple[Action, ...]
    if _NVML in text:
        init = _NVML_INIT in text
        message = (
            f"torch could not allocate GPU memory (line {line.line}): its out-of-memory report "
            "asks NVML which processes hold the GPU, and that NVML call failed ("
            + (
                "NVML could not start: its library does not match the driver, or the container "
                "lacks it"
                if init
                else "NVML answers no per-process query on a MIG slice"
            )
            + "), so the assert hides torch's 'CUDA out of memory' message"
        )
        summary = (
            "Lower the job's GPU memory (a smaller batch size, a smaller model or input); on a "
            "MIG slice check that CUDA_VISIBLE_DEVICES names the slice the job was given "
            "(nvidia-smi -L) and that the job fits its memory"
        )
        steps = (
            manual(_SMALLER),
            manual(
                "nvidia-smi -L  (MIG: export CUDA_VISIBLE_DEVICES=MIG-<uuid> of the slice the "
                "scheduler gave the job; a 1g/2g slice holds a small part of the GPU's memory)"
            ),
            manual(_HELD),
        )
        if init:
            steps += (
                manual(
                    "nvidia-smi fails too: the driver and its NVML library differ (reboot after a "
                    "driver update; a container started with --gpus all)"
                ),
            )
    elif line.signature == _DRIVER_API:
        message = (
            f"torch could not allocate GPU memory (line {line.line}): writing its out-of-memory "
            "report, torch 2.1 looks up the libcuda already loaded by its unversioned name "
            "(libcuda.so), which WSL 2 and some containers load only as libcuda.so.1, and the "
            "assert hides torch's 'CUDA out of memory' message (with "
            "expandable_segments:True it fires at the first allocation instead)"
        )
        summary = (
            "Lower the job's GPU memory (a smaller batch size, a smaller model or input); where "
            "PYTORCH_CUDA_ALLOC_CONF sets expandable_segments:True, unset it"
        )
        steps = (
            manual(_SMALLER),
            manual(_HELD),
            manual("unset PYTORCH_CUDA_ALLOC_CONF  (where it sets expandable_segments:True)"),
        )
    elif line.signature == _SEGMENT_MAP:
        message = (
            f"torch's expandable segments assert on pages an earlier growth recorded but never "
            f"mapped (line {line.line}): that growth failed partway, an out-of-memory (or, on WSL "
            "2, the driver refusing cuMemSetAccess), and every allocation after it fails the same "
            "way without torch's 'CUDA out of memory' message"
        )
        summary = (
            "Lower the job's GPU memory (a smaller batch size, a smaller model or input), or "
            "turn expandable segments off (unset PYTORCH_CUDA_ALLOC_CONF) so an out-of-memory "
            "is reported as one; restart the process"
        )
        steps = (
            manual(_SMALLER),
            manual("unset PYTORCH_CUDA_ALLOC_CONF  (where it sets expandable_segments:True)"),
            manual(_HELD),
        )
    elif line.signature in _PHYSX_LINES:
        message = (
            f"PhysX could not allocate GPU memory for the simulation (line {line.line}): the "
            "parallel environments' buffers, the viewer and the learner together need more than "
            "the GPU has free; the illegal memory access that follows is its consequence"
        )
        summary = (
            "Lower the simulation's GPU memory: fewer parallel environments (num_envs), run "
            "headless (no viewer), smaller PhysX buffers; stop other processes on the GPU"
        )
        steps = (
            manual(
                "fewer environments: --num_envs <fewer> (task.env.numEnvs=<fewer>) and --headless"
            ),
            manual(
                "Isaac Gym: a smaller sim_params.physx.max_gpu_contact_pairs / "
                "default_buffer_size_multiplier (sized for 24 GB GPUs in many configs)"
            ),
            manual(_HELD),
        )
    elif line.signature == _PRESSURE and _OFFLOADED in text:
        message = (
            f"the model did not fit the GPU's memory and Accelerate put part of it on the CPU or "
            f"the disk (line {line.line}): it runs slowly, or fails where code expects every "
            "weight on the GPU"
        )
        summary = (
            "Load the model so that it fits the GPU: quantized (4-bit or 8-bit), in "
            "bf16/fp16, spread over more GPUs (device_map='auto' with max_memory), or a smaller "
            "model; stop other processes on the GPU"
        )
        steps = (
            manual(
                "from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_4bit=True), "
                "torch_dtype=torch.bfloat16, device_map='auto')"
            ),
            manual(
                "more GPUs: device_map='auto', max_memory={0: '<GiB>', 1: '<GiB>'}; or a "
                "smaller model"
            ),
            manual(_HELD),
        )
    elif line.signature == _PRESSURE:
        message = (
            f"DeepSpeed found torch's caching allocator flushing its cache every step to avoid "
            f"an out-of-memory (line {line.line}): the job is at the edge of the GPU's memory "
            "(slow steps; a longer batch fails)"
        )
        summary = (
            "Lower the job's GPU memory per step: a smaller train_micro_batch_size_per_gpu "
            "(gradient accumulation keeps the effective batch), activation checkpointing, "
            "shorter sequences; against fragmentation: export "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
        )
        steps = (
            manual(
                "ds_config: a smaller train_micro_batch_size_per_gpu with a larger "
                "gradient_accumulation_steps; activation checkpointing"
            ),
            manual("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
            manual(
                "or get_accelerator().empty_cache() in the training loop (DeepSpeed's own advice)"
            ),
        )
    elif line.signature == _DALI:
        message = (
            f"NVIDIA DALI could not allocate GPU memory for the pipeline (line {line.line}): "
            "its 'CUDA allocation failed' / 'Can't allocate N bytes on device' is a "
            "cudaMalloc that failed with out of memory (nvJPEG's allocator failure the same), "
            "for the decoder's buffers of a batch beside the model on the GPU"
        )
        summary = f"Lower DALI's GPU memory: {_DALI_KNOBS}; stop other processes on the GPU"
        steps = (manual(_DALI_KNOBS), manual(_HELD))
    elif line.signature == _JETSON:
        message = (
            f"the Jetson's memory manager (NvMap) could not allocate a GPU buffer (line "
            f"{line.line}, error 12: ENOMEM): the GPU shares the module's RAM with the system, "
            "and the model, its workspace and the other processes need more than is left"
        )
        summary = f"Lower the job's memory on the Jetson: {_JETSON_KNOBS}"
        steps = (
            manual(_JETSON_KNOBS),
            manual("tegrastats (or jtop): the RAM the GPU and the other processes use"),
        )
    elif line.signature == _INTEL and _INTEL_4GB in text:
        message = (
            f"Intel's GPU runtime refused one allocation above 4 GB (line {line.line}): "
            "a single tensor of the job is larger than the block size the platform allows, "
            "whatever memory is free"
        )
        summary = (
            "Keep every tensor below 4 GB: a smaller batch, sequence or image size (or the "
            "step in chunks); a newer ipex-llm / IPEX where the model's own code made the block"
        )
        steps = (manual(_SMALLER), manual(_HELD))
    elif line.signature == _INTEL:
        message = (
            f"Intel's GPU runtime ran out of device resources (line {line.line}): the "
            "device's memory (an Arc card's, or an integrated GPU's share of system RAM) is "
            "too small for the model, context or batch, or other programs hold it; a kernel's "
            "out-of-bounds access is the rarer cause the same code reports"
        )
        summary = f"Lower the job's GPU memory: {_INTEL_KNOBS}"
        steps = (
            manual(_INTEL_KNOBS),
            manual("xpu-smi stats -d 0 (or intel_gpu_top): what else holds the GPU's memory"),
        )
    elif line.signature == _OTHER_API and _BATCH_FINDER in text:
        message = (
            f"the batch-size finder halved the batch after every out-of-memory down to zero "
            f"(line {line.line}): even a batch of 1 does not fit the GPU memory left"
        )
        summary = (
            "Lower the memory of one sample: gradient checkpointing, bf16/fp16 or 8-bit "
            "weights and optimizer, a shorter max sequence length or a smaller model; stop "
            "other processes on the GPU"
        )
        steps = (
            manual(
                "model.gradient_checkpointing_enable(); TrainingArguments(bf16=True, "
                "gradient_checkpointing=True, optim='adamw_bnb_8bit'); a shorter max_length"
            ),
            manual(_HELD),
        )
    elif line.signature == _OTHER_API:
        who, lower = next(
            ((name, knob) for words, name, knob in _API_KNOBS if words in text),
            ("the GPU runtime", _SMALLER),
        )
        message = (
            f"{who} could not allocate GPU memory (line {line.line}): an out-of-memory in its "
            "own words; the job needs more than the GPU has free"
        )
        summary = f"Lower the job's GPU memory ({lower}); stop other processes on the GPU"
        steps = (manual(lower), manual(_HELD))
    elif _CUBLAS_ALLOC in text or any(status in text for status, _ in _LIBRARY_ALLOC):
        status, library = next(
            ((status, lib) for status, lib in _LIBRARY_ALLOC if status in text),
            (_CUBLAS_ALLOC, "cuBLAS"),
        )
        message = (
            f"{library} could not allocate its workspace in GPU memory (line {line.line}): "
            f"{status} is a cudaMalloc that failed, an out-of-memory in {library}'s "
            "words; the job, or other processes on the GPU, left too little free"
        )
        summary = (
            "Lower the job's GPU memory: a smaller batch size (gradient accumulation keeps the "
            "effective batch), a smaller model or input; run on a GPU with free memory "
            "(CUDA_VISIBLE_DEVICES) and stop other processes on it"
        )
        steps = (manual(_SMALLER), manual(_HELD))
        if library == "cuDNN":
            steps += (
                manual(
                    "torch.backends.cudnn.benchmark = False  (the benchmark tries every "
                    "algorithm, the ones with large workspaces too)"
                ),
            )
    elif (compiled := _TPU_COMPILE.search(text)) is not None:
        space = compiled.group("space")
        sizes = (
            f": used {compiled.group('used')} of {compiled.group('limit')}"
            if compiled.group("used")
            else ""
        )
        message = (
            f"XLA's TPU compiler ran out of the chip's {space.upper()} (line {line.line}"
            f"{sizes}): the compiled step needs more than one TPU core has, before it runs; "
            "the per-device batch, the sequence length and the sharding decide it"
        )
        summary = (
            "Lower the compiled step's memory per device: a smaller per-device batch or a "
            "shorter sequence (vLLM on TPU: a lower --max-model-len), shard weights and "
            "optimizer state over more devices (FSDP), rematerialize activations "
            "(jax.checkpoint / remat); else a TPU with more HBM"
        )
        steps = (
            manual("a smaller per-device batch (--per_device_train_batch_size)"),
            manual("a shorter sequence or context (vLLM: --max-model-len 8192)"),
            manual("shard weights over the devices (fsdp); jax.checkpoint on layers"),
        )
    elif _XLA_REFUSED in text:
        message = (
            f"XLA's device allocator refused a buffer (line {line.line}): the device's memory "
            "(a TPU's HBM) has less free than the program asks for, an out-of-memory in XLA's "
            "words"
        )
        summary = (
            "Lower the program's memory per device: a smaller per-device batch, shard weights "
            "and optimizer state over more devices (FSDP), rematerialize activations "
            "(jax.checkpoint / remat), donate buffers the step replaces"
        )
        steps = (
            manual(
                "a smaller per-device batch (global batch / device count), or gradient "
                "accumulation for the same effective batch"
            ),
            manual(
                "shard parameters and optimizer state over the devices (an fsdp mesh axis); "
                "jax.checkpoint on the layers; jax.jit(..., donate_argnums=...) for the state"
            ),
        )
    elif _DARKNET in text:
        message = (
            f"cuDNN found no convolution algorithm whose workspace fits the GPU memory left "
            f"(line {line.line}): darknet's batch per step (batch/subdivisions) and the "
            "network's input size need more GPU memory than is free"
        )
        summary = (
            "Lower darknet's GPU memory: a larger subdivisions= (or a smaller batch=) in the "
            "model's .cfg, or smaller width=/height=; stop other processes on the GPU"
        )
        steps = (
            manual(
                "in the .cfg: subdivisions=32 (or 64) instead of 16, or a smaller batch size "
                "(batch=); smaller width=/height= (multiples of 32)"
            ),
            manual(_HELD),
        )
    else:
        message = (
            f"cuDNN found no convolution algorithm whose workspace fits the GPU memory left "
            f"(line {line.line}): torch tries every algorithm and each failed to allocate its "
            "workspace, an out-of-memory in other words"
        )
        summary = (
            "Lower the job's GPU memory: a smaller batch size (or input size), fewer processes "
            "or models on the GPU; check nvidia-smi for other processes holding it"
        )
        steps = (
            manual(_SMALLER),
            manual(_HELD),
            manual(
                "if the GPU is nearly empty when it fails: a cuDNN older than torch's build "
                "may be loaded first (unset LD_LIBRARY_PATH; torch brings its own cuDNN)"
            ),
        )
    return Hit(
        message,
        evidence={"line": line.line, "signature": line.signature},
        fix=fix(summary, "manual", *steps),
    )
