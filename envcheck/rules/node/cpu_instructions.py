"""A prebuilt binary that uses instructions this CPU lacks (matrices/signatures/
cpu_instructions.toml): the process dies with SIGILL, or a library's own start-up check says
which extensions are missing. The node report holds no CPU flags, so only a log states it; the
fix is worded from the package the log names."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Action, Severity
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual, pip_install, pip_uninstall, set_env
from envcheck.rules.signals import routes_elsewhere


@dataclass(frozen=True)
class CpuBuild:
    """What runs a package on a CPU below its wheels' baseline, from the package's own words."""

    summary: str
    actions: tuple[Action, ...]
    source: str


# import name -> the package's own build or setting for older CPUs. Each entry is a library
# that states its baseline itself; any other package gets the generic fix.
CPU_BUILDS: dict[str, CpuBuild] = {
    "polars": CpuBuild(
        "replace polars with polars-lts-cpu, polars' build for CPUs without AVX2/FMA/BMI "
        "(pip uninstall -y polars && pip install polars-lts-cpu)",
        (pip_uninstall("polars"), pip_install("polars-lts-cpu")),
        "pola-rs/polars py-polars/polars/_cpu_check.py ('Install the `polars-lts-cpu` package "
        "instead of `polars` to run Polars with better compatibility.')",
    ),
    "tensorflow": CpuBuild(
        "TensorFlow's wheels use AVX from 1.6 on: install tensorflow==1.5, the last release "
        "built without it (wheels for Python 3.6 and older), or build TensorFlow on this CPU",
        (pip_install("tensorflow==1.5"),),
        "https://github.com/tensorflow/tensorflow/releases/tag/v1.6.0 ('Starting from 1.6 "
        "release, our prebuilt binaries will use AVX instructions. This may break TF on older "
        "CPUs.')",
    ),
    "torch": CpuBuild(
        "make torch dispatch only its baseline kernels: ATEN_CPU_CAPABILITY=default (torch "
        "builds its CPU kernels for default, AVX2 and AVX-512 and picks one at run time)",
        (set_env(ATEN_CPU_CAPABILITY="default"),),
        "pytorch/pytorch aten/src/ATen/native/DispatchStub.cpp (ATEN_CPU_CAPABILITY: default, "
        "avx2, avx512) ; https://github.com/pytorch/pytorch/issues/12112 "
        "('ATEN_CPU_CAPABILITY=default fixed my issue with Illegal Instruction core dumps')",
    ),
}
CPU_BUILDS["tf"] = CPU_BUILDS["tensorflow"]

CHECK_FLAGS = "grep -o -w -E 'avx512f|avx2|avx|fma|bmi2|sse4_2' /proc/cpuinfo | sort -u"


@rule("SYS243", "binary-needs-cpu-instructions", Severity.WARNING)
def binary_needs_cpu_instructions(facts: Facts) -> Iterable[Hit]:
    """A prebuilt binary uses instructions this CPU lacks (SIGILL, illegal instruction)

    ## What it checks
    Only a log states it: the process killed by SIGILL in any layer's words (`Illegal
    instruction (core dumped)`, zsh's `illegal hardware instruction`, `Fatal Python error:
    Illegal instruction`, `exit code 132 (interrupted by signal 4: SIGILL)`, Windows'
    0xC000001D), or a library's own check naming the missing extensions (polars' `Missing
    required CPU features`, TensorFlow's `compiled to use AVX instructions, but these aren't
    available on your machine`). The package is read from the command on the line or the
    import and site-packages path in the lines above it.

    ## Why it matters
    Wheels are compiled for a CPU baseline: TensorFlow 1.6+ for AVX, polars 0.19.8+ for
    AVX2/FMA/BMI. An older or low-end CPU, a VM whose virtual CPU model hides the host's
    extensions, or x86-64 Python under Rosetta on Apple silicon lacks them, and the process
    dies at import with no traceback.

    ## Example
    `pip install polars` on a Xeon X5660 (no AVX): `import polars` ends with `Illegal
    instruction (core dumped)`.

    ## Fix
    The package's build for older CPUs where it has one (`pip install polars-lts-cpu`;
    `tensorflow==1.5`; torch: `ATEN_CPU_CAPABILITY=default`); else build the package on this
    machine (`pip install --no-binary PKG PKG`) or run on a CPU with the extensions. In a VM,
    give it the host's CPU model (QEMU `-cpu host`, libvirt `host-passthrough`); on Apple
    silicon, a native arm64 Python. `grep -o -w -E 'avx2|avx|fma' /proc/cpuinfo` shows what
    the CPU has.

    ## References
    - https://github.com/pola-rs/polars/issues/12754
    - https://github.com/tensorflow/tensorflow/issues/17411
    - https://github.com/pytorch/pytorch/issues/22338
    - https://github.com/houndry/barbet/issues/11
    """
    raise Skip("only a log states that the CPU refused an instruction", "log.sigill")


def _vm_and_rosetta() -> tuple[Action, ...]:
    return (
        manual(f"{CHECK_FLAGS}  (the extensions this CPU has)"),
        manual(
            "in a VM: give it the host's CPU model (QEMU -cpu host, libvirt "
            "host-passthrough); on Apple silicon: a native arm64 Python, not one under Rosetta"
        ),
    )


def _emulated(platform: str, package: str) -> tuple[str, tuple[Action, ...]] | None:
    """The fix where the log says x86-64 code runs on a Mac (Rosetta on Apple silicon) or
    emulated in an amd64 container on an arm64 host; None where it says neither."""
    if platform.startswith("linux/arm64") or platform.startswith("qemu"):
        return (
            "an amd64 image runs emulated on this arm64 host (QEMU implements no AVX): run an "
            "arm64 image (docker run --platform linux/arm64, a multi-arch build) or run on an "
            "x86-64 host",
            (manual("docker run --platform linux/arm64 ...  (an image built for linux/arm64)"),),
        )
    if not platform:
        return None
    then = ""
    # TensorFlow 2.16.1's release notes: 'Apple Silicon users: If you previously installed
    # TensorFlow using pip install tensorflow-macos, please update your installation method.
    # Use pip install tensorflow from now on.'
    if package.lower() in ("tensorflow", "tf"):
        then = "; then pip install tensorflow (TF 2.16+; older releases: tensorflow-macos)"
    return (
        "on a Mac: an x86-64 Python under Rosetta on Apple silicon runs x86 wheels built for AVX "
        "that Rosetta does not provide: use a native arm64 Python (Miniforge's arm64 "
        "installer; the terminal's 'Open using Rosetta' off) and reinstall the packages in it"
        + then,
        (
            manual('python -c "import platform; print(platform.machine())"  (must print arm64)'),
            manual(
                "an Intel Mac: sysctl -n machdep.cpu.features machdep.cpu.leaf7_features  "
                "(no AVX/AVX2 there: a build for older CPUs)"
            ),
        ),
    )


@from_log("SYS243")
def binary_needs_cpu_instructions_in_log(facts: Facts, line: LogLine) -> Hit | None:
    """The package's own build for older CPUs where the log names one that has it; else a
    build on this CPU; the check of the CPU's flags and the VM/Rosetta case in both."""
    if routes_elsewhere(line.signature, line.stated, "SYS243"):
        return None  # a signal line that states another signal than SIGILL
    package = line.stated.get("sigill_package", "") or line.stated.get("crash_package", "")
    missing = line.stated.get("cpu_features", "")
    lacks = f" (it lacks {missing})" if missing else ""
    named = f" in {package}" if package else ""
    refused = (
        f"this CPU lacks instructions {package or 'a library'} was built for"
        if line.signature == "library-cpu-features-missing"
        else f"the CPU refused an instruction{named}"
    )
    message = (
        f"{refused} (line {line.line}){lacks}: a prebuilt binary compiled for a newer "
        "instruction set (AVX, AVX2, FMA) than this CPU has"
    )
    build = CPU_BUILDS.get(package.lower())
    emulated = _emulated(line.stated.get("cpu_platform", ""), package)
    if emulated is not None:
        summary, actions = emulated
        # a container keeps the package's own older-CPU build as the other fix; on a Mac the
        # Linux commands (/proc/cpuinfo, an old x86 wheel) are no fix
        on_mac = not summary.startswith("an amd64 image")
        more = () if on_mac else (*(build.actions if build else ()), *_vm_and_rosetta())
        return Hit(
            message,
            evidence={"line": line.line, "package": package},
            fix=fix(summary[0].upper() + summary[1:], "manual", *actions, *more),
            severity=Severity.ERROR,
        )
    if build is not None:
        return Hit(
            message,
            evidence={"line": line.line, "package": package},
            fix=fix(build.summary, "manual", *build.actions, *_vm_and_rosetta()),
            severity=Severity.ERROR,
        )
    target = package or "PKG"
    return Hit(
        message,
        evidence={"line": line.line, "package": package},
        fix=fix(
            f"Build {target} on this CPU (pip install --no-binary {target} {target}) or install "
            "a build for older CPUs (conda-forge's, the project's own), or run on a CPU with "
            "AVX2",
            "manual",
            manual(f"pip install --force-reinstall --no-binary {target} {target}"),
            *_vm_and_rosetta(),
        ),
        severity=Severity.ERROR,
    )
