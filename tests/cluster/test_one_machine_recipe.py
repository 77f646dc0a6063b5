"""docs/cluster.md's one-machine recipe: `ray start --head --node-ip-address=127.0.0.1` and then
`envcheck cluster --address 127.0.0.1:PORT`. Ray replaces 127.0.0.1 with the machine's address
(unless RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0): envcheck joins anyway, and a connection that does
not come names the address Ray advertises."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_connection_that_never_comes_names_the_address_ray_advertises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray at the edge: a fake `ray` whose init blocks, as a driver waiting for a raylet that
    registered under another address does."""
    from envcheck.cluster import fanout

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text(f"192.0.2.2:{port}\n")
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    called: dict[str, object] = {}
    never = threading.Event()

    def init(**kwargs: object) -> None:
        called.update(kwargs)
        never.wait(5)

    fake = types.SimpleNamespace(init=init, is_initialized=lambda: False, __version__="2.x")
    monkeypatch.setattr(fanout, "import_ray", lambda: fake)
    try:
        with pytest.raises(fanout.ClusterError) as caught:
            fanout.connect(f"127.0.0.1:{port}", timeout=0.5)
    finally:
        never.set()
        listener.close()
    message = str(caught.value)
    assert f"Ray advertises this machine's cluster at 192.0.2.2:{port}" in message
    assert f"try --address 192.0.2.2:{port}" in message
    # and the driver was told the address its raylet registered under (Ray's own advice)
    assert called["_node_ip_address"] == "192.0.2.2"


RAY = Path(sys.executable).parent / "ray"


@pytest.mark.skipif(not RAY.exists(), reason="no `ray` command beside this interpreter")
def test_the_one_machine_recipe_works_even_when_ray_rewrites_the_address(
    tmp_path: Path,
) -> None:
    """The recipe as a user first runs it (without RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0): a
    real head started by `ray start`, then `envcheck cluster --address 127.0.0.1:PORT`. The
    head runs with --block in its own process group, which the test ends (and nothing else:
    no `ray stop`, which would stop every Ray on the machine)."""
    import signal
    import time

    port = _free_port()
    short = Path(f"/tmp/ec-{os.getpid()}")  # Ray's socket paths must stay short
    short.mkdir(exist_ok=True)
    env = cli_env(RAY_TMPDIR=str(short), RAY_USAGE_STATS_ENABLED="0")
    env.pop("RAY_ADDRESS", None)
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
    start = [str(RAY), "start", "--head", "--block", "--node-ip-address=127.0.0.1"]
    start += [f"--port={port}", "--num-cpus=1", "--include-dashboard=false"]
    head = subprocess.Popen(
        start,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        recorded = short / "ray" / "ray_current_cluster"
        deadline = time.monotonic() + 120
        while not recorded.exists() and head.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert recorded.exists(), "ray start did not come up"
        res = run_cli(
            "cluster",
            "--address",
            f"127.0.0.1:{port}",
            "--timeout",
            "60",
            "--json",
            env=env,
            timeout=180,
        )
        assert res.returncode in (0, 1), res.stderr
        assert res.json()["data"]["summary"]["answered"] == 1
    finally:
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            try:
                os.killpg(head.pid, sig)
            except ProcessLookupError:
                break
            try:
                head.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
        shutil.rmtree(short, ignore_errors=True)
