"""SYS173: a build passes its compiler a CPU option the compiler does not know (the signature
`compiler-cpu-option-unknown` in matrices/signatures/build_toolchains.toml): GCC's
`unrecognized command-line option '-mavx2'`, `bad value 'sapphirerapids' for '-march=' switch`,
clang's `unknown target CPU 'x'`.

Two situations give it. An x86 SIMD option (`-mavx`, `-mavx2`, `-mfma`, `-mf16c`, `-msse3`,
`-mavx512f`) reaches a compiler for another CPU (an aarch64 GH200 or Jetson, a ppc64 host,
an `aarch64-linux-gnu-gcc` cross compiler): GCC's `-m` options are per target, so the ARM
compiler has none of x86's; the build's configuration is for x86 (a TARGET or CMake option, a
cached configure, flags hard-coded for x86). Or the option names a CPU or extension newer than
the compiler (`-mavxvnni`, `-march=sapphirerapids` under an old GCC): the compiler is too old
for the flag. The host's architecture (the compiler's own name, the build directory's
`linux-aarch64`, the node's) decides which."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, NotStated, from_log, rule
from envcheck.rules.fixes import fix, manual

# GCC's x86 target options (gcc/config/i386/i386.opt): the SIMD extensions and the x86-only
# code-model options a build hard-codes
_X86 = lazy(
    r"^-m(?:no-)?(?:avx\w*|sse\w*|ssse3|fma4?|f16c|bmi2?|popcnt|lzcnt|amx\w*|vnni\w*|xop|"
    r"pclmul|aes|sha|adx|rdrnd|rdseed|movbe|mmx|3dnow|80387|red-zone|(?:arch|tune)=(?:haswell|"
    r"skylake\w*|znver\d|icelake\w*|sapphirerapids|alderlake|core-avx2|core-avx-i|core2|"
    r"corei7\w*|nehalem|westmere|sandybridge|ivybridge|broadwell|cascadelake|cooperlake|"
    r"tigerlake|rocketlake|raptorlake|x86-64(?:-v[234])?|k8|btver\d|bdver\d))$"
)
_OPTION = lazy(
    r"""option ['‘"](?P<flag>-m[^'’"]+)['’"]|bad value ['‘"](?P<cpu>[^'’"]+)['’"]"""
    r"""|unknown value ['‘"](?P<value>[^'’"]+)['’"] for ['‘"]?-(?P<which>m(?:arch|cpu|tune))"""
    r"""|invalid feature modifier (?:['‘"][^'’"]+['’"] )?in ['‘"]?(?P<modified>-m(?:arch|cpu)=[^'’"\s]+)"""
)
# GCC's aarch64 back end words a -march/-mcpu/-mtune it does not know 'unknown value %qs for
# %<-march%>' (gcc/common/config/aarch64/aarch64-common.cc); x86's says 'bad value'
_AARCH64_WORDS = lazy(
    r"unknown value ['‘\"][^'’\"]+['’\"] for ['‘\"]?-m(?:arch|cpu|tune)|invalid feature modifier"
)
# GCC's spelling hint ('did you mean ‘-mavx512vnni’?'): an option of the compiler's own target
_SUGGESTED = lazy(r"""did you mean ['‘"](-m[^'’"]+)['’"]""")
_NON_X86 = lazy(r"\b(aarch64|arm64|armv[0-9]\w*|ppc64\w*|powerpc64\w*|riscv64|s390x)\b")


def _flag(line: LogLine) -> str:
    found = _OPTION.search(line.text)
    if found is None:
        return line.stated.get("cpu_option") or ""
    if found.group("value"):
        return f"-{found.group('which')}={found.group('value')}"
    return found.group("flag") or found.group("modified") or f"-march={found.group('cpu')}"


def _host(facts: Facts, line: LogLine) -> str | None:
    """The CPU the compiler builds for: its own name on the line (aarch64-linux-gnu-gcc), an
    x86 option GCC suggests instead (its own target's), else the node's (a report, a spec)."""
    stated = _NON_X86.search(line.text)
    if stated is not None:
        name = stated.group(1)
        return "aarch64" if name == "arm64" or name.startswith(("armv8", "armv9")) else name
    if _AARCH64_WORDS.search(line.text):
        return "aarch64"  # only GCC's aarch64 back end words its refusal so
    suggested = _SUGGESTED.search(line.text)
    if suggested is not None and _X86.match(suggested.group(1)):
        return "x86_64"  # GCC suggests only options its own target has
    with contextlib.suppress(Skip):
        section = facts.report.system
        arch = getattr(section.data, "arch", None) if section.is_ok else None
        if arch:
            return str(arch)
    return None


@rule("SYS173", "compiler-cpu-option-unknown", Severity.ERROR)
def compiler_cpu_option(facts: Facts) -> Iterable[Hit]:
    """A build passes its compiler a CPU option the compiler does not know: x86's -mavx2 to an ARM compiler, or a CPU newer than the compiler

    ## What it checks
    Only a build log says it: GCC's `c++: error: unrecognized command-line option '-mavx2'`
    (also in GCC's translated words, `错误： unrecognized command line option`), `bad value
    'sapphirerapids' for '-march=' switch`, clang's `unknown target CPU`, and GCC's aarch64
    back end's `unknown value 'core-avx2' for '-march'` (also `-mcpu`, `-mtune`) and `invalid
    feature modifier in '-march=armv8.2-a+dotprod'`, words only an ARM compiler prints. An x86
    option or CPU name (`-march=haswell`, `core-avx2`) with a
    compiler for another CPU (its name, `aarch64-linux-gnu-gcc`; a build directory's
    `linux-aarch64`; the node's architecture) is the build configured for x86; otherwise the
    compiler is older than the CPU or extension the option names.

    ## Why it matters
    GCC's `-m` options belong to one target: the aarch64 compiler of a GH200, a Jetson or a
    cross toolchain has none of x86's `-mavx`, `-mavx2`, `-mfma`, `-mf16c`, `-msse3`. A project
    that hard-codes them, a TARGET left at AVX, or a CMake cache configured on an x86 machine
    stops at the first file. On x86 itself, an option for a newer CPU (`-mavxvnni`,
    `-march=sapphirerapids`) needs a GCC that knows it.

    ## Example
    `aarch64-linux-gnu-gcc: 错误： unrecognized command line option '-mavx'` building ggml for
    ARM (qwen2.cpp); `c++: error: unrecognized command-line option '-mavx2'` building vLLM's CPU
    extension on aarch64; `cc: error: unrecognized command line option '-mavxvnni'; did you
    mean '-mavx512vnni'?` building ggml's Alder Lake variant with an older GCC.

    ## Fix
    On ARM: configure the build for this CPU, not x86: the project's generic or ARM target
    (a `TARGET=GENERIC`-style option instead of AVX), a fresh configure that detects the CPU
    (`cmake -B build` in an empty build directory, no CMake cache from an x86 machine), no
    x86 `-m` flags in CFLAGS/CXXFLAGS. On x86: a newer GCC (or clang) that knows the option,
    or the project's option to leave that CPU variant out.

    ## References
    - https://github.com/yvonwin/qwen2.cpp/issues/5 (maintainer: the compile options are x86's)
    - https://github.com/giaf/hpipm/issues/91 (maintainer: 'switch to the GENERIC target ... AVX is an instruction set of the x86 architecture not supported in ARM')
    - https://github.com/vllm-project/vllm/issues/20523
    - https://github.com/ollama/ollama/issues/9013
    - https://github.com/parthenon-hpc-lab/phoebus/issues/52 (`unknown value 'core-avx2' for '-march'`: Kokkos configured for Haswell on aarch64)
    - GCC's aarch64 option checks, gcc/common/config/aarch64/aarch64-common.cc (aarch64_validate_march)
    - GCC's x86 options, gcc/config/i386/i386.opt; https://gcc.gnu.org/onlinedocs/gcc/x86-Options.html
    """
    raise Skip("only a build log states a compiler's refused CPU option", "log.build")


@from_log("SYS173")
def compiler_cpu_option_in_log(facts: Facts, line: LogLine) -> Hit:
    flag = _flag(line)
    if not flag:
        raise NotStated(f"line {line.line} names no CPU option", "log.build")
    host = _host(facts, line)
    if _X86.match(flag) and host is not None and host != "x86_64":
        return Hit(
            f"the build passes x86's {flag} to a compiler for {host} (line {line.line}): GCC's -m "
            "options belong to one CPU, so the build is configured for x86 (a TARGET or CMake "
            "option, a cached configure, flags hard-coded for x86), not for this machine",
            evidence={"line": line.line, "option": flag, "host": host},
            fix=fix(
                f"Configure the build for {host}, not x86: the project's generic or ARM target "
                "(a TARGET=GENERIC-style option instead of AVX), a fresh configure that "
                "detects the CPU (cmake -B build from an empty build directory, no CMake cache "
                f"made on x86), and no {flag} or other x86 -m flags in CFLAGS/CXXFLAGS",
                "manual",
                manual("rm -rf build && cmake -B build && cmake --build build -j"),
                manual("env | grep -E 'C(XX)?FLAGS'  # no -mavx/-msse/-mfma here"),
            ),
        )
    if _X86.match(flag) and host is None:
        raise NotStated(
            f"line {line.line}: {flag} is an x86 option, and the compiler's CPU is not stated",
            "system.arch",
            fix=(
                "on an ARM host, configure the build for it (the project's generic or ARM "
                "target, a fresh `cmake -B build`); on x86, a newer GCC that knows the option"
            ),
        )
    return Hit(
        f"the compiler does not know {flag} (line {line.line}): the option names a CPU or "
        "extension newer than the compiler, or belongs to another CPU's compiler",
        evidence={"line": line.line, "option": flag, "host": host},
        fix=fix(
            f"Build with a newer GCC or clang that knows {flag} (gcc --version; a toolset such "
            "as gcc-12/13, or conda install -c conda-forge gxx), or the project's option to "
            "leave that CPU variant out",
            "manual",
            manual("gcc --version"),
        ),
    )
