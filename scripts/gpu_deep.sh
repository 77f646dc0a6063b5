#!/usr/bin/env bash
# Run `envcheck --deep` on a real GPU node and keep everything docs/gpu.md asks to record.
#
#   scripts/gpu_deep.sh [OUTDIR]          # as the user who runs jobs
#   sudo -E scripts/gpu_deep.sh [OUTDIR]  # also reads ACS on the PCIe bridges (config space)
#
# Needs envcheck importable by $PYTHON (default python3), e.g. `pip install -e .` in a checkout,
# and torch in the same interpreter for the --deep=torch step. Nothing here changes the node.
set -u
OUT=${1:-gpu-deep-$(hostname -s)-$(date -u +%Y%m%dT%H%M%SZ)}
PY=${PYTHON:-python3}
RUNS=${RUNS:-5}
mkdir -p "$OUT"

# what the node is: driver, GPUs, topology (for the record in docs/gpu.md)
{ cat /proc/driver/nvidia/version; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,persistence_mode,ecc.mode.current,pcie.link.gen.current,pcie.link.width.current --format=csv; } > "$OUT/node.txt" 2>&1
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
nvidia-smi topo -p2p r > "$OUT/p2p.txt" 2>&1
"$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)' > "$OUT/torch.txt" 2>&1

# the facts and findings
"$PY" -m envcheck probe --deep > "$OUT/probe-deep.txt" 2>&1
"$PY" -m envcheck probe --deep --json -o "$OUT/probe-deep.json" 2>> "$OUT/stderr.txt"
"$PY" -m envcheck check --deep --json > "$OUT/check-deep.json" 2>> "$OUT/stderr.txt"
echo "check --deep exit: $?" >> "$OUT/exit-codes.txt"
"$PY" -m envcheck check --deep=torch --json > "$OUT/check-deep-torch.json" 2>> "$OUT/stderr.txt"
echo "check --deep=torch exit: $?" >> "$OUT/exit-codes.txt"

# binary truth: the architectures envcheck reads from each library's fatbin headers, against
# NVIDIA's cuobjdump on the same files (torch's libraries and the nvidia-* wheels), when the
# CUDA toolkit is on the node; and torch's own arch list against what envcheck reads
if command -v cuobjdump >/dev/null; then
  SITE=$("$PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
  if [ -n "$SITE" ]; then
    "$PY" -c 'import torch; print(" ".join(torch.cuda.get_arch_list()))' > "$OUT/torch-arch-list.txt" 2>&1
    for dir in "$SITE/torch/lib" "$SITE/nvidia"; do
      [ -d "$dir" ] && timeout "${CROSSCHECK_S:-150}" "$PY" "$(dirname "$0")/fatbin_crosscheck.py" "$dir" --timeout 60
    done > "$OUT/fatbin-crosscheck.txt" 2>&1
  fi
fi

# time: check vs check --deep, $RUNS runs each, and the duration of every --deep step
"$PY" - "$OUT" "$RUNS" <<'PY' > "$OUT/timing.txt" 2>&1
import json, statistics, subprocess, sys, time
out, runs = sys.argv[1], int(sys.argv[2])
def wall(args):
    samples, steps = [], {}
    for _ in range(runs):
        start = time.perf_counter()
        text = subprocess.run([sys.executable, "-m", "envcheck", *args], capture_output=True, text=True).stdout
        samples.append(time.perf_counter() - start)
        report = json.loads(text)["data"]["reports"][0]
        if report["deep"]["status"] == "ok":
            for step in report["deep"]["data"]["steps"]:
                steps.setdefault(step["name"], []).append(step["duration_ms"])
    return statistics.median(samples), {k: statistics.median(v) for k, v in steps.items()}
plain, _ = wall(["check", "--json"])
deep, steps = wall(["check", "--deep", "--json"])
gpu = json.load(open(f"{out}/probe-deep.json")).get("gpu") or {}
gpus = len((gpu.get("data") or {}).get("gpus") or [])
print(f"GPUs: {gpus}; {runs} runs each")
print(f"check --json        median {plain:.3f} s")
print(f"check --deep --json median {deep:.3f} s (adds {deep - plain:.3f} s)")
print("steps (median ms): " + ", ".join(f"{k} {v:.0f}" for k, v in steps.items()))
PY
cat "$OUT/timing.txt"
echo "results in $OUT (copy node.txt, probe-deep.txt, timing.txt and fatbin-crosscheck.txt into docs/gpu.md)"
