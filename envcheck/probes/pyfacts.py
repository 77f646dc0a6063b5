"""Facts about a Python interpreter, stdlib only.

This file also runs inside *another* interpreter (``envcheck probe --python PATH``): its source
is passed to ``PATH -c``, so it must stay importable on any Python 3 and import nothing of
envcheck's.
"""

import json
import os
import platform
import sys


def _implementation_version() -> "str":
    info = sys.implementation.version
    version = f"{info.major}.{info.minor}.{info.micro}"
    if info.releaselevel != "final":
        version += info.releaselevel[0] + str(info.serial)
    return version


def marker_environment() -> "dict[str, str]":
    """The PEP 508 environment, computed as packaging.markers.default_environment() does."""
    return {
        "implementation_name": sys.implementation.name,
        "implementation_version": _implementation_version(),
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }


def _has_headers() -> "bool | None":
    """Whether Python.h exists for this interpreter (C extensions built here include it)."""
    try:
        import sysconfig

        include = sysconfig.get_path("include")
    except Exception:
        return None
    return os.path.isfile(os.path.join(include, "Python.h")) if include else None


def _venv() -> "tuple[str, bool] | None":
    """The virtual environment this interpreter belongs to (the directory of its pyvenv.cfg)
    and whether it includes the system site-packages, as site.py's venv() finds them."""
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    for folder in (exe_dir, os.path.dirname(exe_dir)):
        config = os.path.join(folder, "pyvenv.cfg")
        if not os.path.isfile(config):
            continue
        system = False
        try:
            with open(config, encoding="utf-8", errors="replace") as handle:
                for line in handle.read(1 << 16).splitlines():
                    key, _, value = line.partition("=")
                    if key.strip().lower() == "include-system-site-packages":
                        system = value.strip().lower() == "true"
        except OSError:
            pass
        return folder, system
    return None


def _pth_dirs(site_dirs: "list[str]") -> "list[str]":
    """The directories .pth files add, read as text (site.addpackage's path lines); their
    ``import`` lines are never run."""
    found = []  # type: list[str]
    for folder in site_dirs:
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                    lines = handle.read(1 << 20).splitlines()
            except OSError:
                continue
            for raw in lines:
                line = raw.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                path = os.path.abspath(os.path.join(folder, line))
                if os.path.isdir(path) and path not in site_dirs and path not in found:
                    found.append(path)
    return found


def isolated_paths() -> "tuple[str, list[str]]":
    """(prefix, sys.path) as the interpreter would have them after site.py, computed without
    running site (``-I -S``): no .pth file or sitecustomize is executed. site-packages come
    from ``site.getsitepackages`` (which, imported under -S, changes nothing) for the
    environment's prefix; a .pth file's path lines are read as text."""
    import site

    prefixes = [sys.prefix, sys.exec_prefix]
    venv = _venv()
    prefix = sys.prefix
    if venv is not None:
        prefix = venv[0]
        prefixes = [venv[0]] + (prefixes if venv[1] else [])
    site_dirs = []  # type: list[str]
    for folder in site.getsitepackages(list(dict.fromkeys(prefixes))):
        if os.path.isdir(folder) and folder not in site_dirs:
            site_dirs.append(folder)
    path = [p for p in sys.path if p and p not in site_dirs]
    return prefix, path + site_dirs + _pth_dirs(site_dirs)


def facts() -> "dict[str, object]":
    prefix, path = sys.prefix, [p for p in sys.path if p]
    if sys.flags.no_site:  # another interpreter, run with -I -S (probes/python_env.py)
        prefix, path = isolated_paths()
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "prefix": prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "conda_env": os.environ.get("CONDA_DEFAULT_ENV"),
        "conda_prefix": os.environ.get("CONDA_PREFIX"),
        "markers": marker_environment(),
        "sys_path": path,
        "headers": _has_headers(),
    }


if __name__ == "__main__":
    sys.stdout.write(json.dumps(facts()))
