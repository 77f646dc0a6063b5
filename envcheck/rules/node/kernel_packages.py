"""The package manager and the package that hold a Linux kernel's headers, read from the kernel
release a log states (`uname -r`, DKMS' `module build on kernel: 6.2.6-zen1-1-zen`): each
distribution names its kernels in its own form, so the release alone says whether the fix is
apt's `linux-headers-<release>`, pacman's `linux-zen-headers`, dnf's `kernel-devel-<release>`
or zypper's `kernel-default-devel`. Used by the NVIDIA module's build rules (DRV223, DRV224).

Sources, each distribution's kernel naming and its headers package:
- Arch Linux: https://wiki.archlinux.org/title/Kernel (linux `-arch1-1`, linux-lts `-lts`,
  linux-zen `-zen1-1-zen`, linux-hardened `-hardened1-1-hardened`; each with its
  `<name>-headers` package, https://wiki.archlinux.org/title/NVIDIA (DKMS needs the headers
  of every installed kernel: linux-headers, linux-lts-headers, linux-zen-headers)
- Fedora/RHEL: https://docs.nvidia.com/cuda/cuda-installation-guide-linux/ (`sudo dnf install
  kernel-devel-$(uname -r) kernel-headers-$(uname -r)`; releases `.fc39.x86_64`, `.el9.x86_64`)
- Ubuntu/Debian: the same guide (`sudo apt-get install linux-headers-$(uname -r)`; Ubuntu's
  flavours `-generic`, `-aws`, ...; Debian's `-amd64`, `-cloud-amd64`)
- Manjaro: https://wiki.manjaro.org/index.php/Manjaro_Kernels (`linux66` and its
  `linux66-headers`; releases `6.6.19-1-MANJARO`), as in
  https://github.com/smlinux/rtl8723de/issues/23 (`5.6.15-1-MANJARO`: `linux56-headers`)
- openSUSE/SLES: the same guide (`sudo zypper install -y kernel-<variant>-devel=<version>`;
  releases end in the variant, `-default`)
"""

from __future__ import annotations

from dataclasses import dataclass

from envcheck.patterns import lazy

# Arch's kernels end in their package's suffix: 6.8.9-arch1-1 (linux), 6.6.30-2-lts,
# 6.2.6-zen1-1-zen, 6.8.9-hardened1-1-hardened, 6.9.1-1-cachyos (CachyOS, Arch-based)
_ARCH = lazy(
    r"^[0-9][0-9.]*-(?:(?P<arch>arch[0-9]+-[0-9]+)|[a-z]*[0-9]*-?[0-9]+-"
    r"(?P<flavour>lts|zen|hardened|rt|cachyos(?:-[a-z]+)?))$"
)
# Manjaro's kernels: 6.6.19-1-MANJARO, headers in linux<major><minor>-headers (linux66-headers)
_MANJARO = lazy(r"^(?P<major>[0-9]+)\.(?P<minor>[0-9]+)\.[0-9]+-[0-9]+-MANJARO$")
_FEDORA = lazy(r"\.(?:fc|el)[0-9]+(?:_[0-9]+)?(?:\.[a-z0-9_]+)*$|\.amzn[0-9]+\.")
_SUSE = lazy(r"-(?P<variant>default|azure|rt|kvmsmall|64kb)$")
_DEBIAN = lazy(
    r"-(?:generic|lowlatency|aws|azure|gcp|gke|oracle|nvidia|ibm|kvm|raspi|hwe|oem)"
    r"(?:-[0-9.]+)?$|-(?:cloud-|rt-)?(?:amd64|arm64)$|\+deb[0-9]+"
)


@dataclass(frozen=True)
class KernelPackages:
    """How to install the headers of one kernel release on its distribution."""

    distro: str  # "Arch Linux", "Fedora/RHEL", "openSUSE", "Ubuntu/Debian"
    headers: str  # the command that installs them
    apt: bool  # whether dpkg/apt is the package manager (Ubuntu's prebuilt modules apply)


def kernel_packages(release: str | None) -> KernelPackages | None:
    """The distribution a kernel release names and its headers command, or None when the
    release does not say (a custom kernel, or none stated)."""
    if not release or "elrepo" in release:  # ELRepo's kernel-ml/-lt: their own -devel
        return None
    manjaro = _MANJARO.match(release)
    if manjaro is not None:
        package = f"linux{manjaro.group('major')}{manjaro.group('minor')}-headers"
        return KernelPackages("Manjaro", f"sudo pacman -S --needed {package}", apt=False)
    arch = _ARCH.match(release)
    if arch is not None:
        flavour = arch.group("flavour")
        package = f"linux-{flavour}-headers" if flavour else "linux-headers"
        return KernelPackages("Arch Linux", f"sudo pacman -S --needed {package}", apt=False)
    if _FEDORA.search(release):
        return KernelPackages(
            "Fedora/RHEL",
            f"sudo dnf install kernel-devel-{release} kernel-headers-{release}",
            apt=False,
        )
    if _DEBIAN.search(release):
        return KernelPackages(
            "Ubuntu/Debian", f"sudo apt install linux-headers-{release}", apt=True
        )
    suse = _SUSE.search(release)
    if suse is not None:
        variant = suse.group("variant")
        return KernelPackages("openSUSE", f"sudo zypper install kernel-{variant}-devel", apt=False)
    return None


def headers_command(release: str | None) -> str:
    """The command that installs the headers of ``release``: its distribution's where the
    release names one, else apt's with dnf's beside it."""
    known = kernel_packages(release)
    if known is not None:
        return known.headers
    target = release or "$(uname -r)"
    return (
        f"sudo apt install linux-headers-{target}  (RHEL/Fedora: sudo dnf install "
        f"kernel-devel-{target} kernel-headers-{target})"
    )
