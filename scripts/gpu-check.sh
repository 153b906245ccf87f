#!/usr/bin/env bash
# gpu-check.sh: the CUDA backend's tests and benchmarks in one go, with a summary printed last.
# Usage (repository root, on a machine with a GPU):
#   scripts/gpu-check.sh BUILD STEP...        BUILD: a `make gpu BUILD=...` folder
#   BASE=OTHER_BUILD scripts/gpu-check.sh BUILD compare
# Steps:
#   tests      the GPU suite (every kernel and the prover against the CPU backend, bit-exact)
#   bench      MSM (G1 2^16..2^27, G2 2^20/2^24, 0/1 sums), NTT and h pipeline (2^20..2^27)
#   prove      the GPU prover: a 32 GiB PoRep-shaped partition (2^27), resident and streamed
#              key, and two provers with witness prefetch (~60 GiB of host memory)
#   profile    ncu over the accumulation, round and NTT kernels (stall reasons, pipe use)
#   sanitize   compute-sanitizer memcheck over the prover tests
#   compare    bench and prove for BASE, then for BUILD, on the same card (a change's
#              before/after); compare-bench and compare-prove run one half each
# Logs go to $OUT/<step>.log (OUT defaults to ./gpu-out) and are folded into all_logs.txt.
set -u
B=${1:?build folder}
shift
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

run_step() {   # name, timeout seconds, command...
    local name=$1 to=$2
    shift 2
    local t0=$(date +%s)
    timeout "$to" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    note "== $name rc=$rc $(( $(date +%s) - t0 ))s: $(grep -E '^suite:|median|per proof|error|FAIL' "$OUT/$name.log" | tail -${TAILN:-8} | tr '\n' '|')"
}

bench_steps() {   # tag, build
    local t=$1 bench="$2/bin/cuzk-bench-gpu"
    run_step "msm_g1_$t" ${BENCH_TO:-400} "$bench" gpu-msm --g 1 --lg 16 --lg 20 --lg 24 --lg 26 --lg 27 --reps 5
    run_step "msm_g2_$t" 300 "$bench" gpu-msm --g 2 --lg 20 --lg 24 --reps 5
    run_step "sum_$t" 300 "$bench" gpu-msm --g 1 --lg 27 --density 0.5 --reps 5
    run_step "sum_g2_$t" 300 "$bench" gpu-msm --g 2 --lg 25 --density 0.5 --reps 5
    run_step "ntt_$t" 300 "$bench" gpu-ntt --lg 20 --lg 24 --lg 27 --reps 5
    run_step "ntt_nr_$t" 300 "$bench" gpu-ntt-nr --lg 24 --lg 27 --reps 5
    run_step "ntt_oop_$t" 300 "$bench" gpu-ntt-oop --lg 24 --lg 27 --reps 5
    run_step "h_$t" 300 "$bench" gpu-h --lg 24 --lg 27 --reps 5
}

prove_steps() {   # tag, build
    local t=$1 bench="$2/bin/cuzk-bench-gpu"
    # PROVE_ARGS replaces the key/pinning/pipeline arguments (e.g. "--key resident --pinned 2 --reps 3")
    TAILN=12 run_step "prove27_$t" ${PROVE_TO:-580} "$bench" gpu-prove --porep-like 27 \
        ${PROVE_ARGS:---key both --pinned 2 --reps 3 --pipeline ${PROOFS:-6}}
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total,temperature.gpu \
    --format=csv > "$OUT/smi.txt" 2>&1
note "device: $(tail -1 "$OUT/smi.txt")"

for step in "$@"; do
    case $step in
    tests)
        for t in test_ntt test_msm test_prove; do run_step "$t" 400 "$B/tests/gpu/$t"; done
        note "tests: $(cat "$OUT"/test_*.log | grep -c '^PASS') PASS, $(cat "$OUT"/test_*.log | grep -c '^FAIL') FAIL" ;;
    bench) bench_steps new "$B" ;;
    prove) prove_steps new "$B" ;;
    compare|compare-bench|compare-prove)
        : "${BASE:?compare needs BASE=baseline build folder}"
        if [ "$step" != compare-prove ]; then bench_steps base "$BASE"; bench_steps new "$B"; fi
        if [ "$step" != compare-bench ]; then prove_steps base "$BASE"; prove_steps new "$B"; fi ;;
    profile)
        if command -v ncu > /dev/null; then
            M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active'
            run_step ncu_ntt 300 ncu --clock-control none -k regex:k_ntt_pass4 -c 2 --metrics "$M" \
                "$B/bin/cuzk-bench-gpu" gpu-ntt --lg 27 --reps 1
            run_step ncu_aff 300 ncu --clock-control none -k regex:k_aff_round -c 2 --metrics "$M" \
                "$B/bin/cuzk-bench-gpu" gpu-msm --g 1 --lg 26 --reps 1
            run_step ncu_accum 300 ncu --clock-control none -k regex:k_accum_u -c 1 --metrics "$M" \
                "$B/bin/cuzk-bench-gpu" gpu-msm --g 1 --lg 26 --reps 1
        else
            note "profile: ncu not found"
        fi ;;
    sanitize)
        if command -v compute-sanitizer > /dev/null; then
            run_step sanitize_prove 300 compute-sanitizer --tool memcheck --show-backtrace host "$B/tests/gpu/test_prove"
            note "sanitize: $(grep -cE 'Program hit|Invalid' "$OUT/sanitize_prove.log") findings"
        else
            note "sanitize: compute-sanitizer not found"
        fi ;;
    *) note "unknown step $step (tests | bench | prove | profile | sanitize | compare[-bench|-prove])" ;;
    esac
done
for f in "$OUT"/*.log; do
    [ -f "$f" ] || continue
    echo "=== $(basename "$f")"
    cat "$f"
done > "$OUT/all_logs.txt"
echo "---- summary"
cat "$SUMMARY"
