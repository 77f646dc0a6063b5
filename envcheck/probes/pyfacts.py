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


def facts() -> "dict[str, object]":
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "conda_env": os.environ.get("CONDA_DEFAULT_ENV"),
        "conda_prefix": os.environ.get("CONDA_PREFIX"),
        "markers": marker_environment(),
        "sys_path": [p for p in sys.path if p],
        "headers": _has_headers(),
    }


if __name__ == "__main__":
    sys.stdout.write(json.dumps(facts()))
