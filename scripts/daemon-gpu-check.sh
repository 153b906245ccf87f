#!/usr/bin/env bash
# daemon-gpu-check.sh: the README's main job with the CUDA daemon (`make daemon-gpu`) on a GPU
# machine that lacks the daemon's Debian libraries (gRPC, protobuf-c, microhttpd, jansson,
# systemd), such as the device machine, whose image has only the CUDA toolkit and the driver.
#
#   scripts/daemon-gpu-check.sh --pack DIR BUILD    (here) DIR gets stripped copies of
#       BUILD/bin/cuzk-daemon-gpu, cuzk-bench, cuzk-params-gpu and cuzk-bench-gpu, every shared library they load
#       (glibc included) and the dynamic loader, so nothing of the target's userland is used
#   scripts/daemon-gpu-check.sh DIR [OUT]            (there) starts the daemon on its embedded
#       default config through DIR's loader, proves SYNTHETIC jobs through cuzk-bench (the
#       daemon verifies every proof before answering), prints status, stops it with SIGTERM;
#       logs in OUT (default ./daemon-gpu-out). Exit 0 only if every step passed: proofs
#       verified, all 24 partitions proved on a GPU, at least one witness staged ahead (the
#       prefetch beside the other worker's kernels), exit 0 on SIGTERM, no socket left.
#       N=constraints (default 100000); REQUIRE_GPU=0 for a dry run without a GPU.
set -u
# shellcheck source=lib/pack.sh
. "$(dirname "$0")/lib/pack.sh"
if [ "${1:-}" = "--pack" ]; then
    pack_make "${2:?DIR}" "${3:?BUILD}" cuzk-daemon-gpu cuzk-bench cuzk-params-gpu cuzk-bench-gpu || exit 1
    exit 0
fi

DIR=$(cd "${1:?DIR (made by --pack)}" && pwd)
OUT=${2:-daemon-gpu-out}
mkdir -p "$OUT"
BIN='' pack_init "$DIR" || exit 1   # a pack only (BIN emptied: no plain-build fallback here)
T=$(mktemp -d /tmp/cuzk-gpu-XXXXXX)
ADDR="unix://$T/cuzk.sock"
fail() { echo "daemon-gpu-check: FAIL: $*"; tail -30 "$OUT/daemon.log"; kill "$PID" 2>/dev/null; exit 1; }

pack_bg "$DIR/bin/cuzk-daemon-gpu" -l "$ADDR" > "$OUT/daemon.out" 2> "$OUT/daemon.log"
PID=$!
i=0
until grep -q "cuzk-daemon ready" "$OUT/daemon.out" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 600 ] || fail "not ready after 60 s"
    kill -0 $PID 2>/dev/null || fail "daemon exited before ready"
    sleep 0.1
done
cat "$OUT/daemon.out"
grep -i "gpu" "$OUT/daemon.log" | head -5
# one job of 8 partitions (both prover workers of the GPU, so witness prefetch), then a batch
pack_run "$DIR/bin/cuzk-bench" -a "$ADDR" single -t synthetic --constraints "${N:-100000}" --partitions 8 > "$OUT/single.txt" 2>&1 ||
    { cat "$OUT/single.txt"; fail "single"; }
cat "$OUT/single.txt"
pack_run "$DIR/bin/cuzk-bench" -a "$ADDR" batch -t synthetic --constraints "$(( ${N:-100000} / 2 ))" --partitions 2 -c 8 -j 4 > "$OUT/batch.txt" 2>&1 ||
    { cat "$OUT/batch.txt"; fail "batch"; }
cat "$OUT/batch.txt"
pack_run "$DIR/bin/cuzk-bench" -a "$ADDR" status > "$OUT/status.txt" 2>&1 || { cat "$OUT/status.txt"; fail "status"; }
cat "$OUT/status.txt"
starts=$(grep -c 'GPU_START.*gpu=[0-9]' "$OUT/daemon.log")
staged=$(grep -c 'WITNESS_STAGED' "$OUT/daemon.log")
echo "timeline: $starts partitions started on a GPU, $staged witnesses staged ahead"
# REQUIRE_GPU=0: a dry run of this script on a machine without a GPU (CPU provers)
if [ "${REQUIRE_GPU:-1}" = 1 ]; then
    grep -A1 "^GPUs:" "$OUT/status.txt" | grep -q "NVIDIA" || fail "status lists no NVIDIA GPU"
    [ "$starts" -ge 24 ] || fail "only $starts of 24 partitions started on a GPU"
    [ "$staged" -ge 1 ] || fail "no witness was staged ahead of its proof"
fi
kill -TERM $PID
wait $PID
rc=$?
[ $rc -eq 0 ] || fail "daemon exit status $rc after SIGTERM"
[ -e "$T/cuzk.sock" ] && fail "stale socket left behind"
echo "daemon-gpu-check: PASS (daemon stopped with exit 0; logs in $OUT)"
