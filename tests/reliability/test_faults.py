"""Fault injection: hung and failing NVML, hung nvidia-smi / nvcc / --python interpreters,
hostile dist-info trees, FIFOs and endless streams, and a memory bound on huge input.
Each fault must cost at most the --timeout it was given and end in a value with a reason."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envcheck.model.section import Status
from envcheck.probes.gpu import probe_gpu
from envcheck.probes.python_env import interpreter_facts, parse_headers, probe_packages
from envcheck.probes.system import probe_system
from envcheck.probes.torch_build import probe_torch
from tests.conftest import FAKES, cli_env
from tests.distfactory import make_dist


@pytest.mark.parametrize("call", ["nvmlInit", "nvmlDeviceGetName"])
def test_hung_nvml_costs_at_most_the_timeout(stage, fake_nvml, monkeypatch, call) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FAKE_PYNVML_HANG", call)
    fake_nvml("h100x2")
    stage.copy_fixture("nvidia-version-proprietary", "/proc/driver/nvidia/version")
    stage.executable("nvidia-smi", "#!/bin/sh\nsleep 30\n")  # nvidia-smi would hang too
    started = time.monotonic()
    section = probe_gpu(stage.ctx(timeout=0.5))
    assert time.monotonic() - started < 0.5 + 1.0
    assert "NVML did not answer within 0.5 s" in " ".join(section.notes) + (section.reason or "")
    assert section.data is not None and section.data.driver_version == "535.104.05"


def test_failing_nvml_call_is_a_reason_not_a_crash(stage, fake_nvml, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    module = fake_nvml("h100x2")

    def broken() -> None:
        raise RuntimeError("segfault-ish")

    monkeypatch.setattr(module, "nvmlInit", broken)
    section = probe_gpu(stage.ctx(timeout=0.5))
    assert section.status is not Status.ERROR or "NVML" in (section.reason or "")
    assert "NVML failed: RuntimeError: segfault-ish" in " ".join(section.notes) + (
        section.reason or ""
    )


def test_probe_with_hung_nvml_exits_within_its_timeout(tmp_path: Path) -> None:
    env = cli_env(
        PYTHONPATH=f"{FAKES}:{os.environ.get('PYTHONPATH', '')}",
        FAKE_PYNVML_SCENARIO="h100x2",
        FAKE_PYNVML_HANG="nvmlInit",
        PATH=f"{tmp_path}:/usr/bin:/bin",
    )
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "envcheck", "probe", "--json", "--timeout", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,  # the process must exit although a thread is stuck in nvmlInit
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "NVML did not answer within 1 s" in proc.stdout
    assert time.monotonic() - started < 30


def test_hung_nvcc_costs_at_most_the_timeout(stage) -> None:  # type: ignore[no-untyped-def]
    stage.executable("nvcc", "#!/bin/sh\nsleep 30\n")
    started = time.monotonic()
    section = probe_system(stage.ctx(timeout=0.5))
    assert time.monotonic() - started < 0.5 + 1.5
    assert section.data is not None and section.data.nvcc is not None
    assert section.data.nvcc.version is None  # found, but it did not answer


def test_hung_python_interpreter_costs_at_most_the_timeout(stage) -> None:  # type: ignore[no-untyped-def]
    python = stage.executable("python3.11", "#!/bin/sh\nsleep 30\n")
    started = time.monotonic()
    facts = interpreter_facts(stage.ctx(python=str(python), timeout=0.5))
    assert time.monotonic() - started < 0.5 + 1.5
    assert isinstance(facts, str) and "timed out after 0.5 s" in facts


def _facts(site: Path) -> dict[str, object]:
    return {"sys_path": [str(site)]}


def test_fifo_as_metadata_never_blocks(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = make_dist(site, "evil", "1.0", metadata=False)
    os.mkfifo(info / "METADATA")
    make_dist(site, "fine", "2.0")
    started = time.monotonic()
    packages = probe_packages(_facts(site)).data
    assert time.monotonic() - started < 5
    assert [d.name for d in packages.distributions] == ["fine"]
    assert "not a regular file" in packages.broken[0].reason


def test_fifo_as_torch_version_py_never_blocks(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "torch", "2.4.0")
    (site / "torch").mkdir()
    os.mkfifo(site / "torch" / "version.py")
    packages = probe_packages(_facts(site))
    started = time.monotonic()
    torch = probe_torch(packages, {})
    assert time.monotonic() - started < 5
    assert "not a regular file" in " ".join(torch.notes)


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ("", "no METADATA file"),
        ("Name: x\n", "has no Version"),
        ("Version: 1\n", "has no Name"),
        ("\xff\xfe garbage", "has no Name"),
    ],
)
def test_hostile_dist_info(tmp_path: Path, metadata: str, reason: str) -> None:
    site = tmp_path / "site"
    info = make_dist(site, "x", "1", metadata=False)
    (info / "METADATA").write_text(metadata, encoding="utf-8", errors="surrogateescape")
    packages = probe_packages(_facts(site)).data
    assert reason in packages.broken[0].reason


def test_metadata_with_400k_requires_is_read_in_linear_time(tmp_path: Path) -> None:
    lines = "".join(f"Requires-Dist: pkg{i} (>=1.0)\n" for i in range(400_000))
    text = f"Metadata-Version: 2.1\nName: huge\nVersion: 1.0\n{lines}\nbody\n"
    started = time.monotonic()
    headers = parse_headers(text)
    assert time.monotonic() - started < 3  # a bound against hangs (email.parser: 5 s, then 19 s)
    assert headers["name"] == ["huge"] and len(headers["requires-dist"]) == 2000


def test_folded_and_crlf_headers(tmp_path: Path) -> None:
    text = "Name: a\r\nVersion: 1\r\nRequires-Dist: b;\r\n  extra == 'x'\r\n\r\nbody: no\r\n"
    assert parse_headers(text) == {
        "name": ["a"],
        "version": ["1"],
        "requires-dist": ["b; extra == 'x'"],
    }


@pytest.mark.parametrize("args", [["check", "--report"], ["check", "--spec"], ["diff"]])
def test_huge_input_stays_under_256_mib(args: list[str]) -> None:
    """`check --report /dev/zero` grew to 23 GB before; now the 64 MiB cap ends it."""
    limit = 768 * 1024**2  # address space: the interpreter and its libraries need ~300 MiB

    def bound() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, sys\n"
            "from envcheck.cli import main\n"
            "code = main(sys.argv[1:])\n"
            # VmHWM: this program's own peak (ru_maxrss keeps the forking pytest's across exec)
            "peak = next(int(l.split()[1]) for l in open('/proc/self/status') "
            "if l.startswith('VmHWM:'))\n"
            "sys.stderr.write(f'peak {peak}\\n')\n"
            "sys.exit(code)\n",
            *args,
            "/dev/zero",
        ],
        capture_output=True,
        text=True,
        env=cli_env(),
        preexec_fn=bound,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "over 64 MiB" in proc.stderr
    peak_kib = int(proc.stderr.strip().splitlines()[-1].split()[1])
    assert peak_kib < 256 * 1024


def test_endless_fifo_spec_is_cut_off(tmp_path: Path) -> None:
    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["/bin/sh", "-c", f'yes "# comment" > "{fifo}"'], stdout=subprocess.DEVNULL
    )
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "envcheck", "check", "--spec", str(fifo)],
            capture_output=True,
            text=True,
            env=cli_env(),
            timeout=120,
            check=False,
        )
    finally:
        writer.kill()
        writer.wait()
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"envcheck: error: {fifo}: over 64 MiB: too big for a stack spec"
    ]


def test_fifo_without_writer_is_empty_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "r.json"
    os.mkfifo(fifo)
    proc = subprocess.run(
        [sys.executable, "-m", "envcheck", "check", "--report", str(fifo)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"envcheck: error: {fifo}")
