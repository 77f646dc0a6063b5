"""A physics simulator's preallocated buffers that the scene outgrew: SYS231, read from the line
(matrices/signatures/memory_runtimes.toml). PhysX's GPU pipeline (Isaac Lab, Isaac Sim, Isaac Gym,
ManiSkill/SAPIEN) sizes its contact, patch, pair and heap buffers once, from the scene
description, and MuJoCo its arena (or, before 2.3, njmax/nconmax). The line names the buffer and,
mostly, the size it needs: the fix is that buffer's setting in the simulator's config, at the
next power of two (PhysX) or twice the size (MuJoCo); Taichi's (Genesis') CUDA pool, reserved
at ti.init, is its device_memory_fraction / device_memory_GB. The config names are derived from PhysX's
field name, not listed: Isaac Lab's PhysxCfg prefixes ``gpu_`` to the field in snake case
(``foundLostPairsCapacity`` -> ``gpu_found_lost_pairs_capacity``; ``tempBufferCapacity`` is
``gpu_temp_buffer_size``), ManiSkill's GPUMemoryConfig uses the snake case itself."""

from __future__ import annotations

import re
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

# PhysX: the PxGpuDynamicsMemoryConfig field a line names (PxgDynamicsMemoryConfig in older
# PhysX releases, as Isaac Sim 2022/2023 and SAPIEN print it), and the size it needs
_FIELD = lazy(r"Px(?:Gpu|g)DynamicsMemoryConfig::(?P<field>[A-Za-z]+)")
_AT_LEAST = lazy(r"(?:at least|to) (?P<size>-?[0-9]+)")
# the two PhysX lines that name their buffer in words (PxgNphaseCore / the CPU narrow phase)
_WORDS = {"Contact buffer": "maxRigidContactCount", "Patch buffer": "maxRigidPatchCount"}
# Isaac Lab's PhysxCfg spells this one field differently (isaaclab/sim/simulation_cfg.py)
_ISAACLAB_EXCEPTION = {"tempBufferCapacity": "gpu_temp_buffer_size"}
# MuJoCo: the arena in bytes (2.3+: <size memory=...>), or njmax / nconmax before it
_ARENA = lazy(r"above (?P<size>[0-9.]+)(?P<unit>[KMG]?) bytes")
_MAX = lazy(r"Increase (?P<name>njmax|nconmax) above (?P<size>[0-9]+)")
# the stack's own numbers (mj_stackAlloc, or 'stack overflow' before 2.3), in bytes
_STACK = lazy(r"max = (?P<max>[0-9]+), available = (?P<free>[0-9]+), requested = (?P<asked>[0-9]+)")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _power_of_two(size: int) -> str:
    """The next power of two at or above ``size`` as Python writes it (2**N)."""
    exponent = max(size - 1, 1).bit_length()
    return f"2**{exponent}"


@rule("SYS231", "simulator-buffer-too-small", Severity.WARNING)
def simulator_buffer_too_small(facts: Facts) -> Iterable[Hit]:
    """A physics simulator's preallocated buffer is smaller than the scene needs (PhysX GPU, MuJoCo)

    ## What it checks
    Only a log says it: PhysX's GPU pipeline reporting a buffer overflow
    (`PxGpuDynamicsMemoryConfig::foundLostPairsCapacity buffer overflow detected, please
    increase its size to at least N in the scene desc!`, `Patch buffer overflow detected`,
    `Contact buffer overflow detected`, `The application needs to increase
    PxGpuDynamicsMemoryConfig::tempBufferCapacity to N`; older PhysX releases, as Isaac Sim
    2022/2023 and SAPIEN print them: `PxgDynamicsMemoryConfig::collisionStackSize buffer
    overflow detected`, `the application need to increase the
    PxgDynamicsMemoryConfig::foundLostPairsCapacity parameter to N`) and MuJoCo's full arena
    (`Insufficient arena memory for the number of constraints generated. Increase arena memory
    allocation above N bytes.`, before 2.3 `Pre-allocated constraint buffer is full. Increase
    njmax above N`), and Taichi's CUDA pool used up (`Out of CUDA pre-allocated memory`; Genesis
    runs on Taichi's forks).

    ## Why it matters
    These buffers are sized once from the scene description, not from the GPU's memory: with
    many parallel environments or many contacts the simulation drops contacts (objects pass
    through each other), produces NaNs, or stops, while the GPU still has memory free.

    ## Example
    Isaac Lab with 8192 environments: `[Error] [omni.physx.plugin] PhysX error: Patch buffer
    overflow detected, please increase its size to at least 170478 in the scene desc!`.

    ## Fix
    Raise the buffer the line names to the next power of two of the size it states: Isaac Lab
    `sim=SimulationCfg(physx=PhysxCfg(gpu_max_rigid_patch_count=2**18))`, ManiSkill
    `sim_config=dict(gpu_memory_config=dict(max_rigid_patch_count=2**18))`, Isaac Gym
    `sim_params.physx.max_gpu_contact_pairs`; MuJoCo `<size memory="..."/>` in the model (older:
    `njmax`/`nconmax`); Taichi `ti.init(arch=ti.cuda, device_memory_fraction=0.9)` (or
    `device_memory_GB=N`). Fewer parallel environments need less.

    ## References
    - https://github.com/NVIDIA-Omniverse/PhysX (physx/source/gpunarrowphase, PxgNphaseCore:
      'PxGpuDynamicsMemoryConfig::... buffer overflow detected')
    - https://isaac-sim.github.io/IsaacLab/main/source/api/lab/isaaclab.sim.html (PhysxCfg)
    - https://github.com/google-deepmind/mujoco/blob/main/src/engine/engine_util_errmem.c
      (mjWARN_CNSTRFULL)
    - taichi-dev/taichi taichi/runtime/llvm/runtime_module/runtime.cpp
      (allocate_from_reserved_memory: 'Out of CUDA pre-allocated memory')
    """
    raise Skip("only a log line states a simulator buffer overflow", "log.simulator_buffer")


def _physx(line: LogLine) -> tuple[str, str, tuple[Action, ...]]:
    text = line.text
    named = _FIELD.search(text)
    field_name = (
        named.group("field")
        if named
        else next((f for words, f in _WORDS.items() if words in text), "maxRigidContactCount")
    )
    needed = _AT_LEAST.search(text)
    size = int(needed.group("size")) if needed else None
    if size is None:
        value = "<larger>"
        said = ""
    elif size <= 0:  # PhysX printed a signed 32-bit count that wrapped: it needs more than 2**31
        value = "2**31 - 1"
        said = f" (the line's {size} is a count past 2**31 that wrapped)"
    else:
        value = _power_of_two(size)
        said = f" (it needs {size})"
    isaaclab = _ISAACLAB_EXCEPTION.get(field_name, "gpu_" + _snake(field_name))
    maniskill = _snake(field_name)
    message = (
        f"PhysX's GPU buffer {field_name} is smaller than the scene needs (line {line.line})"
        f"{said}: it is sized once from the scene description, so contacts are dropped or the "
        "simulation stops while the GPU may still have memory free"
    )
    summary = (
        f"Raise {field_name} to {value}: Isaac Lab PhysxCfg({isaaclab}={value}); ManiSkill "
        f"gpu_memory_config {maniskill}={value}; or fewer parallel environments"
    )
    steps = (
        manual(f"Isaac Lab: sim=SimulationCfg(physx=PhysxCfg({isaaclab}={value}))"),
        manual(
            f"ManiSkill / SAPIEN: gym.make(..., sim_config=dict(gpu_memory_config=dict("
            f"{maniskill}={value})))"
        ),
        manual(
            "Isaac Gym: a larger sim_params.physx.max_gpu_contact_pairs or "
            "default_buffer_size_multiplier; or fewer environments (num_envs)"
        ),
    )
    return message, summary, steps


def _mujoco(line: LogLine) -> tuple[str, str, tuple[Action, ...]]:
    text = line.text
    arena = _ARENA.search(text)
    older = _MAX.search(text)
    if older is not None:
        name, size = older.group("name"), int(older.group("size"))
        value = str(2 * size)
        message = (
            f"MuJoCo's preallocated {name} buffer is full (line {line.line}): the scene generates "
            f"more {'constraints' if name == 'njmax' else 'contacts'} than {size}, and the extra "
            "ones are dropped"
        )
        summary = (
            f'Raise it in the model: <size {name}="{value}"/> (MuJoCo 2.3+: <size memory=.../>)'
        )
        steps: tuple[Action, ...] = (manual(f'in the MJCF: <size {name}="{value}"/>'),)
        return message, summary, steps
    stack = _STACK.search(text)
    if arena is not None:
        number = float(arena.group("size")) * 2
        value = f"{number:g}{arena.group('unit')}"
    elif stack is not None:  # what it had plus what was missing, twice, in MB
        needed = int(stack.group("max")) + int(stack.group("asked")) - int(stack.group("free"))
        value = f"{-(-2 * needed // 2**20)}M"
    else:
        value = "<larger, e.g. 100M>"
    message = (
        f"MuJoCo's arena (the memory it preallocates for contacts and constraints) is too small "
        f"for the scene (line {line.line}): constraints are dropped and the simulation goes "
        "unstable"
    )
    summary = f'Raise the arena in the model: <size memory="{value}"/> (MjSpec: spec.memory)'
    steps = (
        manual(f'in the MJCF: <mujoco> <size memory="{value}"/> ... (or spec.memory in MjSpec)'),
        manual("older MuJoCo (before 2.3): <size njmax=... nconmax=.../>"),
    )
    return message, summary, steps


def _taichi(line: LogLine) -> tuple[str, str, tuple[Action, ...]]:
    """Taichi's CUDA pool, reserved once at ti.init (runtime.cpp's own advice names the two
    knobs)."""
    message = (
        f"Taichi's CUDA runtime ran out of the device memory it reserved at ti.init (line "
        f"{line.line}): the fields or sparse structures outgrew that pool, while the GPU may "
        "still have memory free"
    )
    summary = (
        "Reserve a larger pool: ti.init(arch=ti.cuda, device_memory_fraction=0.9) or "
        "ti.init(arch=ti.cuda, device_memory_GB=<N>); or fewer environments/particles"
    )
    steps = (
        manual("ti.init(arch=ti.cuda, device_memory_fraction=0.9)"),
        manual("ti.init(arch=ti.cuda, device_memory_GB=<N>)  (a fixed size in GiB)"),
        manual("fewer parallel environments, particles or a smaller sparse grid"),
    )
    return message, summary, steps


@from_log("SYS231")
def simulator_buffer_too_small_in_log(facts: Facts, line: LogLine) -> Hit:
    """The buffer the line names, in the config of the simulators that expose it."""
    physx = "buffer overflow detected" in line.text or "DynamicsMemoryConfig" in line.text
    if "pre-allocated memory" in line.text:
        message, summary, steps = _taichi(line)
    else:
        message, summary, steps = _physx(line) if physx else _mujoco(line)
    return Hit(
        message,
        evidence={"line": line.line, "signature": line.signature},
        fix=fix(summary, "manual", *steps),
    )
