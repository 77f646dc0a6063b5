"""SYS169: a package with a Rust extension built from its source distribution where no Rust
toolchain is installed (the signature `rust-toolchain-missing-sdist-build` in
matrices/signatures/build.toml).

The packages whose extension is Rust (tokenizers, safetensors, orjson, pydantic-core,
cryptography, tiktoken) publish wheels for the common Pythons and platforms; pip builds the
sdist only when no wheel of the release it chose fits: a pip too old for the wheel's manylinux
tag (setuptools-rust's own message says so), a Python newer than the release's wheels, a 32-bit
Python on Windows, a platform without wheels. The fix that works for every one of them is to
take a wheel: an up-to-date pip, then `--only-binary=:all:`, which makes pip pick the newest
release with a wheel for this interpreter or say that none has one; building needs Rust.
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.utils import canonicalize_name

from envcheck.facts.node import Facts
from envcheck.facts.skip import Skip
from envcheck.model.finding import Fix, Severity
from envcheck.patterns import lazy
from envcheck.rules.base import Hit, LogLine, from_log, rule
from envcheck.rules.fixes import fix, manual

_RUSTUP = "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh"
# an sdist file name: {name}-{version}.tar.gz (the name's own '-' are '_' or kept; the version
# starts with a digit)
_SDIST = lazy(r"^(?P<name>.+?)-(?P<version>[0-9][A-Za-z0-9_.!+]*)\.(?:tar\.gz|zip)$")


@rule("SYS169", "rust-sdist-build-without-toolchain", Severity.ERROR)
def rust_sdist_build(facts: Facts) -> Iterable[Hit]:
    """pip builds a Rust-extension package from source and finds no Rust toolchain

    ## What it checks
    Only an install log says it: maturin's `Cargo, the Rust package manager, is not installed
    or is not on PATH.` or setuptools-rust's `error: can't find Rust compiler`, with the sdist
    pip took (`Downloading tokenizers-0.15.0.tar.gz`) and the build it failed (`Building wheel
    for tokenizers`) where the log shows them.

    ## Why it matters
    tokenizers, safetensors, orjson, pydantic-core, cryptography and tiktoken publish wheels:
    pip compiles one only when no wheel of the release fits this pip, Python or platform (a pip
    before 20.3 does not know the manylinux_2_24+ tags, a Python newer than the release's
    wheels, a 32-bit Python on Windows). Installing Rust makes the build work, but the wheel is
    what the package's users are meant to get.

    ## Example
    `pip install tokenizers` on Windows with Python 3.12: `Downloading
    tokenizers-0.15.0.tar.gz`, then `Cargo, the Rust package manager, is not installed or is
    not on PATH.`

    ## Fix
    `python -m pip install --upgrade pip`, then `pip install --only-binary=:all: <package>`
    (pip picks the newest release with a wheel for this Python, or says none has one); on
    Windows use a 64-bit Python; where no release has a wheel for this Python, use a Python
    the package publishes wheels for, or install Rust (rustup) and build.

    ## References
    - https://github.com/PyO3/maturin (maturin/__init__.py, the PEP 517 backend's cargo check)
    - https://github.com/PyO3/setuptools-rust (setuptools_rust/build.py)
    - https://pip.pypa.io/en/stable/cli/pip_install/#cmdoption-only-binary
    - https://github.com/ijl/orjson/issues/192
    """
    raise Skip("only an install log states a Rust sdist build", "log.build")


def package_named(line: LogLine) -> tuple[str, str | None]:
    """The package (and release) the log names: the sdist pip took, else the failed build."""
    sdist = line.stated.get("sdist")
    if sdist is not None and (named := _SDIST.match(sdist)) is not None:
        return canonicalize_name(named.group("name")), named.group("version")
    built = line.stated.get("pip_build") or line.stated.get("extension")
    if built is not None:
        return canonicalize_name(built), None
    return "<the package>", None


def take_a_wheel(package: str) -> Fix:
    """The fix of a Rust sdist build: a wheel instead (an up-to-date pip, --only-binary), or
    Rust; also what a wrapper line of the same build (pip's summary, SYS153) prints."""
    only_binary = f"pip install --only-binary=:all: {package}"
    return fix(
        "Install a wheel instead of building: python -m pip install --upgrade pip (pip "
        f"before 20.3 does not know the manylinux_2_24+ tags), then {only_binary} (pip "
        "picks the newest release with a wheel for this Python and platform, or says none "
        "has one); on Windows a 32-bit Python gets no wheel: use a 64-bit one; where no "
        "release has a wheel for this Python, use a Python the package publishes wheels "
        f"for, or install Rust ({_RUSTUP}, then a new shell) and build",
        "manual",
        manual("python -m pip install --upgrade pip"),
        manual(only_binary),
        manual(_RUSTUP),
    )


@from_log("SYS169")
def rust_sdist_build_in_log(facts: Facts, line: LogLine) -> Hit:
    package, version = package_named(line)
    release = f"{package} {version}" if version else package
    return Hit(
        f"pip is building {release} from its source distribution and finds no Rust toolchain "
        f"(line {line.line}): the package publishes wheels, so none of this release fits this "
        "pip, Python or platform",
        evidence={"line": line.line, "package": package, "sdist_version": version},
        fix=take_a_wheel(package),
    )
