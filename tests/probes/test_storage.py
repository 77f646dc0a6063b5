from __future__ import annotations

from pathlib import Path

from envcheck.probes.storage import probe_storage, ray_temp_dir


def test_ray_temp_dir_follows_ray():
    assert ray_temp_dir({}) == "/tmp/ray"
    assert ray_temp_dir({"TMPDIR": "/scratch"}) == "/scratch/ray"
    assert ray_temp_dir({"RAY_TMPDIR": "/data/rt", "TMPDIR": "/scratch"}) == "/data/rt/ray"


def test_storage_roles_and_missing_paths(stage, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    stage.mkdir("/dev/shm")
    stage.write(
        "/proc/self/mounts", f"tmpfs /dev/shm tmpfs rw 0 0\n/dev/nvme0n1 {tmp_path} ext4 rw 0 0\n"
    )
    env = {"RAY_TMPDIR": str(scratch), "HF_HOME": str(tmp_path / "hf")}
    info = probe_storage(stage.ctx(env=env)).data
    roles = {d.role: d for d in info.disks}
    assert list(roles) == ["tmp", "ray_tmp", "hf_cache", "torch_cache", "dev_shm"]
    ray = roles["ray_tmp"]
    assert ray.path == f"{scratch}/ray" and not ray.exists
    assert ray.measured_path == str(scratch)
    assert ray.total_bytes > 0 and 0 <= ray.used_fraction <= 1
    assert ray.fs_type == "ext4"
    assert roles["hf_cache"].measured_path == str(tmp_path)
    assert roles["dev_shm"].path == "/dev/shm" and roles["dev_shm"].exists
    assert roles["dev_shm"].fs_type == "tmpfs"


def test_used_fraction_matches_rays_measure():
    from envcheck.model.report import DiskUsage

    disk = DiskUsage(role="ray_tmp", path="/tmp/ray", total_bytes=100 * 2**30, free_bytes=3 * 2**30)
    assert round(disk.used_fraction, 2) == 0.97
    assert DiskUsage(role="x", path="/x").used_fraction is None


def test_total_and_free_are_shutils(tmp_path: Path) -> None:
    import shutil

    from envcheck.probes.storage import _total_and_free

    usage = shutil.disk_usage(tmp_path)
    total, free = _total_and_free(tmp_path)
    assert total == usage.total
    assert abs(free - usage.free) < 64 * 2**20  # the same statvfs, moments apart
