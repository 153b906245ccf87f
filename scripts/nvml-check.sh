#!/usr/bin/env bash
# nvml-check.sh: on a GPU machine, the daemon's NVML telemetry (/metrics, here read through the
# GetMetrics RPC, which serves the same text) against nvidia-smi in the same run.
#
#   scripts/daemon-gpu-check.sh --pack DIR build     (here: the daemon and its libraries)
#   scripts/nvml-check.sh DIR [OUT]                   (there)
#
# Starts DIR/bin/cuzk-daemon-gpu (CUDA_DEVICE_ORDER=PCI_BUS_ID, as the systemd unit sets, so
# CUDA's ordinals are nvidia-smi's indexes), proves a SYNTHETIC job in the background so the
# GPU is busy, and for each GPU reads nvidia-smi, then the metrics, then nvidia-smi again.
# Fixed figures must be equal (memory total, power limit); moving ones must lie between the
# two nvidia-smi readings, widened by a tolerance (temperature 3 C, power 15 % + 10 W, SM clock
# 15 %, memory used 5 % of total, utilization 0.35). Prints a table; exit 0 only if all match.
set -u
DIR=$(cd "${1:?DIR (made by scripts/daemon-gpu-check.sh --pack)}" && pwd)
OUT=${2:-nvml-check-out}
mkdir -p "$OUT"
command -v nvidia-smi >/dev/null || { echo "nvml-check: no nvidia-smi here"; exit 1; }
# shellcheck source=lib/pack.sh
. "$(dirname "$0")/lib/pack.sh"
# a pack only (BIN emptied: no plain-build fallback); the driver's NVML library beside libcuda
BIN='' pack_init "$DIR" 'libcuda\.so\.1|libnvidia-ml\.so\.1' || exit 1
T=$(mktemp -d /tmp/cuzk-nvml-XXXXXX)
ADDR="unix://$T/cuzk.sock"
printf '[daemon]\nstate_dir = "off"\n[gpus]\nnvml_library = "libnvidia-ml.so.1"\n' > "$T/cuzk.toml"
CUDA_DEVICE_ORDER=PCI_BUS_ID pack_bg "$DIR/bin/cuzk-daemon-gpu" \
    -c "$T/cuzk.toml" -l "$ADDR" > "$OUT/daemon.out" 2> "$OUT/daemon.log"
PID=$!
fail() { echo "nvml-check: FAIL: $*"; tail -20 "$OUT/daemon.log"; kill "$PID" 2>/dev/null; exit 1; }
i=0
until grep -q "cuzk-daemon ready" "$OUT/daemon.out" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 600 ] || fail "not ready after 60 s"
    kill -0 $PID 2>/dev/null || fail "daemon exited before ready"
    sleep 0.1
done
grep "GPU telemetry" "$OUT/daemon.log" || fail "no 'GPU telemetry' line in the log"
grep -q "GPU telemetry: NVML" "$OUT/daemon.log" || fail "the daemon did not load NVML"
pack_bg "$DIR/bin/cuzk-bench" -a "$ADDR" single -t synthetic --constraints "${N:-2000000}" --partitions 8 \
    > "$OUT/load.txt" 2>&1
LOAD=$!
sleep "${WARM:-3}"
Q=index,memory.total,power.limit,temperature.gpu,power.draw,clocks.sm,memory.used,utilization.gpu
smi() { nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits | tr -d ' '; }
smi > "$OUT/smi1.csv"
pack_run "$DIR/bin/cuzk-bench" -a "$ADDR" metrics > "$OUT/metrics.txt" 2>&1 || fail "metrics"
smi > "$OUT/smi2.csv"
wait $LOAD; echo "load job: exit $? ($(tail -1 "$OUT/load.txt"))"
kill -TERM $PID; wait $PID
# one awk over the two readings and the metrics: every row GPU, figure, smi range, metric, ok
awk -F, -v OFS='\t' '
function m(name, gpu,   k) { k = name "{gpu=\"" gpu "\"}"; return (k in M) ? M[k] : "absent" }
function lo(a, b) { return a < b ? a : b }  function hi(a, b) { return a > b ? a : b }
function check(gpu, what, a, b, got, tol,   ok) {
    ok = got != "absent" && got + 0 >= lo(a, b) - tol && got + 0 <= hi(a, b) + tol
    printf "%s\t%-22s\t%s .. %s\t%s\t%s\n", gpu, what, lo(a, b), hi(a, b), got, ok ? "ok" : "MISMATCH"
    if (!ok) bad++
}
FILENAME ~ /metrics/ { if ($0 !~ /^#/ && split($0, p, " ") == 2) M[p[1]] = p[2]; next }
FILENAME ~ /smi1/ { S1[$1] = $0; next }
FILENAME ~ /smi2/ { S2[$1] = $0; next }
END {
    print "gpu", "figure", "nvidia-smi", "metric", ""
    for (g in S2) {
        n1 = split(S1[g], a, ","); n2 = split(S2[g], b, ",")
        if (m("cuzk_gpu_telemetry_up", g) != 1) { print g, "telemetry_up", "1", m("cuzk_gpu_telemetry_up", g), "MISMATCH"; bad++; continue }
        tot = b[2] * 1048576
        check(g, "memory_total_bytes", tot, tot, m("cuzk_gpu_memory_total_bytes", g), 1048576)
        check(g, "power_limit_watts", a[3], b[3], m("cuzk_gpu_power_limit_watts", g), 1)
        check(g, "temperature_celsius", a[4], b[4], m("cuzk_gpu_temperature_celsius", g), 3)
        check(g, "power_watts", a[5], b[5], m("cuzk_gpu_power_watts", g), 10 + 0.15 * hi(a[5], b[5]))
        check(g, "sm_clock_hertz", a[6] * 1e6, b[6] * 1e6, m("cuzk_gpu_sm_clock_hertz", g), 0.15 * hi(a[6], b[6]) * 1e6)
        check(g, "memory_used_bytes", a[7] * 1048576, b[7] * 1048576, m("cuzk_gpu_memory_used_bytes", g), 0.05 * tot)
        check(g, "utilization_ratio", a[8] / 100, b[8] / 100, m("cuzk_gpu_utilization_ratio", g), 0.35)
        seen++
    }
    if (!seen) { print "no GPU compared"; bad++ }
    exit bad ? 1 : 0
}' "$OUT/metrics.txt" "$OUT/smi1.csv" "$OUT/smi2.csv" | tee "$OUT/compare.tsv"
rc=${PIPESTATUS[0]}
grep '^cuzk_gpu_' "$OUT/metrics.txt" | head -40
[ "$rc" = 0 ] && echo "nvml-check: PASS" || echo "nvml-check: FAIL (rows marked MISMATCH)"
rm -rf "$T"
exit "$rc"
