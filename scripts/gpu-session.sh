#!/usr/bin/env bash
# gpu-session.sh: one device-machine call that checks and times the CUDA backend.
# Usage (repository root, on the GPU machine): scripts/gpu-session.sh BUILD STEP...
#   BUILD   build folder made here with `make gpu BUILD=... GPU_ARCHS=...` (carried) or there
#   STEPS   tests | stream-tests | variants | g2variant | msm | ntt | sass | ncu | porep22 | porep27 |
#           porep27-registered | porep27-pinned | ncu-ntt | msm-variants-quick | range-variants |
#           ntt-variants | msm-tune | ncu-breakdown | red-variants | wr-variants | aff | aff-tune |
#           final | csweep | sanitize | cmp | cmp-ntt (BASE=baseline build) | fieldmix | aff-sweep | ntt-reg | ncu-stalls |
#           pipeline27 | pipeline27-pageable | csweep8 | aff-tune8 | round9 | g2-tune9 | g1-joint9 |
#           sum10 | porep-sum10 | round10 | fmul11 | round11 | porep27-res | porep27-res-base |
#           round12 | porep27-h6 | round12b | porep27-rev | ntt12c | gsweep12 | sortlg12 | round12d | aff12 | final12 | csweep12 | g2tune12 | lsweep12 | final12b | round13 | final13 | check13 | check13b | round14
# Every step logs to $OUT/<step>.log (OUT defaults to ./gpu-out); the summary is printed last.
set -u
B=${1:?build folder}
shift
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
BENCH="$B/bin/cuzk-bench-gpu"
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

run_step() {   # name, timeout seconds, command...
    local name=$1 to=$2
    shift 2
    local t0=$(date +%s)
    timeout "$to" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    note "== $name rc=$rc $(( $(date +%s) - t0 ))s: $(grep -E '^suite:|median|phase|pipeline|build |upload|error|FAIL' "$OUT/$name.log" | tail -${TAILN:-6} | tr '\n' '|')"
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1
note "device: $(tail -1 "$OUT/smi.txt")"

best_variant=""
for step in "$@"; do
    case $step in
    tests)
        for t in test_ntt test_msm test_prove; do run_step "$t" 300 "$B/tests/gpu/$t"; done
        note "tests: $(cat "$OUT"/test_*.log | grep -c '^PASS') PASS, $(cat "$OUT"/test_*.log | grep -c '^FAIL') FAIL" ;;
    stream-tests)
        CUZK_GPU_STREAM_KEY=1 run_step test_prove_streamed 300 "$B/tests/gpu/test_prove" ;;
    variants)
        # the accumulation variants of msm.cu: correctness (test_msm) and G1 timings
        for v in ${VARIANTS:-0 3}; do
            CUZK_GPU_MSM_ACC=$v run_step "test_msm_v$v" 300 "$B/tests/gpu/test_msm"
            CUZK_GPU_MSM_ACC=$v run_step "msm_v$v" 300 "$BENCH" gpu-msm --g 1 --lg 20 --lg 24 --reps 5
            CUZK_GPU_MSM_ACC=$v run_step "sum_v$v" 300 "$BENCH" gpu-msm --g 1 --lg 27 --density 0.5 --reps 5
        done
        best_variant=$(for v in ${VARIANTS:-0 3}; do
            m=$(grep -E '_2\^24 ' "$OUT/msm_v$v.log" | sed -E 's/.*_2\^24 ([0-9.]+) ms.*/\1/' | head -1)
            [ -n "$m" ] && ! grep -q FAIL "$OUT/test_msm_v$v.log" && echo "$m $v"
        done | sort -n | head -1 | cut -d' ' -f2)
        note "best accumulation variant: ${best_variant:-none}"
        [ -n "$best_variant" ] && export CUZK_GPU_MSM_ACC=$best_variant ;;
    msm)
        run_step msm_g1 400 "$BENCH" gpu-msm --g 1 --lg 16 --lg 20 --lg 24 --lg 26 --lg 27 --reps 5
        run_step msm_g2 300 "$BENCH" gpu-msm --g 2 --lg 20 --lg 24 --reps 5
        run_step sum_g2 300 "$BENCH" gpu-msm --g 2 --lg 25 --density 0.5 --reps 5 ;;
    ntt)
        run_step ntt 300 "$BENCH" gpu-ntt --lg 20 --lg 24 --lg 27 --reps 5
        run_step h 300 "$BENCH" gpu-h --lg 24 --lg 27 --reps 5 ;;
    sass)
        # instruction mix of the G1 accumulation kernels (cuobjdump is on the device image)
        if command -v cuobjdump > /dev/null; then
            cuobjdump --dump-sass "$B/bin/cuzk-bench-gpu" > "$OUT/sass_all.txt" 2>&1
            awk '/Function :/ { f = ($3 ~ /(k_accum|k_bitmap_partial).*fp_params/) ? $3 : ""; next }
                 f != "" && $1 ~ /^\/\*[0-9a-f]+\*\/$/ { op = $2; if (op ~ /^@/) op = $3; sub(/\..*/, "", op); sub(/;$/, "", op); c[f " " op]++; t[f]++ }
                 END { for (k in c) print c[k], k; for (k in t) print t[k], k, "TOTAL" }' "$OUT/sass_all.txt" | sort -k2,2 -k1,1nr > "$OUT/sass_accum_mix.txt"
            note "sass: $(wc -l < "$OUT/sass_accum_mix.txt") opcode rows in sass_accum_mix.txt"
            rm -f "$OUT/sass_all.txt"
        else
            note "sass: no cuobjdump"
        fi ;;
    porep22)
        run_step porep22 300 "$BENCH" gpu-prove --porep-like 22 --key both --reps 3 ;;
    porep27)
        run_step porep27 540 "$BENCH" gpu-prove --porep-like 27 --key both --reps 3 ;;
    g2variant)
        for v in ${G2VARIANTS:-0 2}; do
            CUZK_GPU_MSM_ACC2=$v run_step "test_msm_g2v$v" 300 "$B/tests/gpu/test_msm"
            CUZK_GPU_MSM_ACC2=$v run_step "msm_g2v$v" 300 "$BENCH" gpu-msm --g 2 --lg 22 --lg 24 --reps 3
            CUZK_GPU_MSM_ACC2=$v run_step "sum_g2v$v" 300 "$BENCH" gpu-msm --g 2 --lg 25 --density 0.5 --reps 3
        done ;;
    ncu)
        # where the G1 accumulation kernel stalls (one 2^22 MSM; clocks left alone)
        if command -v ncu > /dev/null; then
            run_step ncu_accum 300 ncu --clock-control none --kernel-name regex:k_accum --launch-count 1 \
                --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
                --section Occupancy --section LaunchStats --section InstructionStats \
                "$BENCH" gpu-msm --g 1 --lg 22 --reps 1
        else
            note "ncu: not found"
        fi ;;
    ncu-ntt)
        if command -v ncu > /dev/null; then
            run_step ncu_ntt 300 ncu --clock-control none --kernel-name-base demangled --kernel-name regex:ntt_pass --launch-count 3 \
                --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
                --section MemoryWorkloadAnalysis --section Occupancy "$BENCH" gpu-ntt --lg 27 --reps 1
        else
            note "ncu: not found"
        fi ;;
    msm-variants-quick)
        for v in ${VARIANTS:-0 3}; do
            CUZK_GPU_MSM_ACC=$v run_step "msmq_v$v" 300 "$BENCH" gpu-msm --g 1 --lg 22 --lg 24 --reps 3
        done
        for v in 0 2; do
            CUZK_GPU_MSM_ACC2=$v run_step "msmq_g2v$v" 300 "$BENCH" gpu-msm --g 2 --lg 22 --reps 3
        done ;;
    range-variants)
        # accumulation range length: short ranges (many buckets crossing ranges) for
        # correctness, then G1 and G2 timings per length
        CUZK_GPU_MSM_L=8 run_step test_msm_l8 300 "$B/tests/gpu/test_msm"
        for l in ${LENS:-32 64 128}; do
            CUZK_GPU_MSM_L=$l run_step "msm_l$l" 300 "$BENCH" gpu-msm --g 1 --lg 20 --lg 24 --lg 26 --reps 3
            CUZK_GPU_MSM_L=$l run_step "msm_g2_l$l" 300 "$BENCH" gpu-msm --g 2 --lg 22 --lg 24 --reps 3
        done ;;
    msm-tune)
        # range length and window bits of the G1 MSM at the sizes the prover uses
        for l in 32 64 128; do
            CUZK_GPU_MSM_L=$l run_step "tune_l$l" 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 27 --reps 3
        done
        for c in 20 21 23 24; do
            CUZK_GPU_MSM_C=$c run_step "tune_c$c" 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 27 --reps 3
        done ;;
    ntt-variants)
        CUZK_GPU_NTT_R4=0 run_step test_ntt_r2 300 "$B/tests/gpu/test_ntt"
        CUZK_GPU_NTT_R4=0 run_step ntt_r2 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5
        run_step ntt_r4 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5
        CUZK_GPU_NTT_R4=0 run_step h_r2 300 "$BENCH" gpu-h --lg 27 --reps 3
        run_step h_r4 300 "$BENCH" gpu-h --lg 27 --reps 3 ;;
    red-variants)
        # inlined (1, default) vs out-of-line (0) additions in k_winred / k_combine_u
        CUZK_GPU_MSM_RED_INL=0 run_step test_msm_red0 300 "$B/tests/gpu/test_msm"
        for v in 0 1; do
            CUZK_GPU_MSM_RED_INL=$v run_step "msm_red$v" 300 "$BENCH" gpu-msm --g 1 --lg 20 --lg 24 --lg 26 --reps 3
        done ;;
    wr-variants)
        # one-level (0) vs two-level (1, default) window reduction
        CUZK_GPU_MSM_WR2=0 run_step test_msm_wr0 300 "$B/tests/gpu/test_msm"
        for v in 0 1; do
            CUZK_GPU_MSM_WR2=$v run_step "msm_wr$v" 300 "$BENCH" gpu-msm --g 1 --lg 20 --lg 24 --lg 27 --reps 3
            CUZK_GPU_MSM_WR2=$v run_step "msm_g2_wr$v" 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 3
        done ;;
    ncu-breakdown)
        # time per kernel name over one warm-up + one timed MSM (NB_G=1|2, NB_LGS sizes)
        if command -v ncu > /dev/null; then
            for lg in ${NB_LGS:-24 26}; do
                timeout 300 ncu --clock-control none --kernel-name-base function --metrics gpu__time_duration.sum --print-units base --csv \
                    "$BENCH" gpu-msm --g ${NB_G:-1} --lg $lg --reps 1 > "$OUT/ncu_breakdown_g${NB_G:-1}_$lg.csv" 2>&1
                note "ncu breakdown G${NB_G:-1} 2^$lg (ms, both MSMs): $(awk -F'","' '/gpu__time_duration/ { n = $5; v = $NF; gsub(/[",]/, "", v); t[n] += v } END { for (k in t) printf "%s %.2f; ", k, t[k] / 1e6 }' "$OUT/ncu_breakdown_g${NB_G:-1}_$lg.csv")"
            done
        fi ;;
    porep27-registered)
        run_step porep27_registered 540 "$BENCH" gpu-prove --porep-like 27 --key both --pinned 2 --reps 3 ;;
    porep27-pinned)
        run_step porep27_pinned 540 "$BENCH" gpu-prove --porep-like 27 --streamed --pinned 1 --reps 3 ;;
    aff)
        # batch-affine rounds before the XYZZ accumulation, variants side by side in one process:
        # G1 rounds 0..3, G2 rounds 0..2
        run_step msm_aff 400 "$BENCH" gpu-msm --g 1 --lg 20 --lg 22 --lg 24 --lg 26 --lg 27 --reps 3 \
            --vary CUZK_GPU_MSM_AFF=${AFFR:-0,1,2,3}
        run_step msm_g2_aff 300 "$BENCH" gpu-msm --g 2 --lg 22 --lg 24 --reps 3 --vary CUZK_GPU_MSM_AFF2=${AFFR2:-0,1,2} ;;
    aff-tune)
        # threads per SM and minimum pairs per thread of the batch-affine rounds (G1)
        run_step aff_tps 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 27 --reps 3 --vary CUZK_GPU_MSM_AFF_TPS=${TPS:-128,256,512}
        run_step aff_minpt 300 "$BENCH" gpu-msm --g 1 --lg 20 --lg 22 --reps 3 --vary CUZK_GPU_MSM_AFF_MINPT=${MINPT:-32,128,512} ;;
    cmp)
        # this build against a baseline build (BASE=folder, e.g. the previous commit's), and
        # the round kernel's one inversion per block (1, default) against one per thread (0)
        if [ -x "${BASE:-}/bin/cuzk-bench-gpu" ]; then
            run_step msm_base 400 "$BASE/bin/cuzk-bench-gpu" gpu-msm --g 1 --lg 24 --lg 26 --lg 27 --reps 5
            run_step msm_g2_base 300 "$BASE/bin/cuzk-bench-gpu" gpu-msm --g 2 --lg 22 --lg 24 --reps 5
        fi
        run_step msm_new 400 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --lg 27 --reps 5 --vary CUZK_GPU_MSM_AFF_BINV=0,1
        run_step msm_g2_new 300 "$BENCH" gpu-msm --g 2 --lg 22 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF_BINV=0,1 ;;
    aff-sweep)
        # number of batch-affine rounds (G1: CUZK_GPU_MSM_AFF, G2: CUZK_GPU_MSM_AFF2)
        run_step msm_aff_sweep 400 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --lg 27 --reps 3 --vary CUZK_GPU_MSM_AFF=${AFFS:-2,3,4}
        run_step msm_g2_aff_sweep 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 3 --vary CUZK_GPU_MSM_AFF2=${AFFS2:-2,3,4} ;;
    round9)
        # session 7: trivial twiddles, tiled bit reversal, G2 norm inversion (each against off)
        CUZK_GPU_NTT_BITREV=0 run_step ntt_triv 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5 --vary CUZK_GPU_NTT_TRIV=0,1,0,1
        CUZK_GPU_NTT_TRIV=0 run_step ntt_bitrev 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5 --vary CUZK_GPU_NTT_BITREV=0,1,0,1
        run_step h_triv 300 "$BENCH" gpu-h --lg 24 --lg 27 --reps 5 --vary CUZK_GPU_NTT_TRIV=0,1,0,1
        run_step msm_g2_norm 300 "$BENCH" gpu-msm --g 2 --lg 22 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF_NORM=0,1 ;;
    g2-tune9)
        # G2 with the norm inversion (round 9): rounds, window bits, round threads, overlap
        run_step g2_aff2 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF2=3,4,5
        run_step g2_c 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_C=15,16,17
        run_step g2_tps 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF_TPS=256,384,512
        run_step g2_ovl 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_OVERLAP=0,1 ;;
    sum10)
        # session 8: 0/1 sums by batch-affine rounds (CUZK_GPU_SUM_AFF = max rounds, 0: XYZZ only)
        run_step sum_g1_27 300 "$BENCH" gpu-msm --g 1 --lg 27 --density 0.5 --reps 5 --vary CUZK_GPU_SUM_AFF=0,2,4,6,8,16
        run_step sum_g1_27_d45 300 "$BENCH" gpu-msm --g 1 --lg 27 --density 0.45 --reps 5 --vary CUZK_GPU_SUM_AFF=0,8
        run_step sum_g2_25 300 "$BENCH" gpu-msm --g 2 --lg 25 --density 0.5 --reps 5 --vary CUZK_GPU_SUM_AFF=0,2,4,6,8,16
        for M in ${SUMM:-16 256}; do
            CUZK_GPU_SUM_AFF_MINPT=$M run_step "sum_minpt$M" 300 "$BENCH" gpu-msm --g 1 --lg 27 --density 0.5 --reps 5 --vary CUZK_GPU_SUM_AFF=4,8
            CUZK_GPU_SUM_AFF_MINPT=$M run_step "sum2_minpt$M" 300 "$BENCH" gpu-msm --g 2 --lg 25 --density 0.5 --reps 5 --vary CUZK_GPU_SUM_AFF=4,8
        done ;;
    porep-sum10)
        # the 2^27 PoRep-shaped prove with the 0/1 sums in XYZZ only and by batch-affine rounds
        TAILN=10 run_step porep27_sum 560 "$BENCH" gpu-prove --porep-like 27 --key resident --pinned 2 --reps 3 --vary CUZK_GPU_SUM_AFF=0,${SUMR:-4},0,${SUMR:-4} ;;
    round10)
        # session 8 record: kernels after the review commits, 0/1 sums default against XYZZ only
        run_step msm_g1 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --lg 27 --reps 5
        run_step msm_g2 300 "$BENCH" gpu-msm --g 2 --lg 20 --lg 24 --reps 5
        run_step ntt 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5
        run_step sum_g1 300 "$BENCH" gpu-msm --g 1 --lg 27 --density 0.5 --reps 5 --vary CUZK_GPU_SUM_AFF=0,4
        run_step sum_g2 300 "$BENCH" gpu-msm --g 2 --lg 25 --density 0.5 --reps 5 --vary CUZK_GPU_SUM_AFF=0,4 ;;
    g1-joint9)
        # G1 round parameters swept together (range L x MINPT x rounds), as paid for G2 in round 9
        for L in ${G1L:-32 64}; do for M in ${G1M:-32 128}; do
            CUZK_GPU_MSM_L=$L CUZK_GPU_MSM_AFF_MINPT=$M run_step "g1_L${L}_M${M}" 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --reps 5 --vary CUZK_GPU_MSM_AFF=2,3
        done; done ;;
    ntt-reg)
        # register cap of the radix-4 NTT passes (0: none, 100 registers, 16 warps/SM)
        run_step ntt_reg 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5 --vary CUZK_GPU_NTT_REG=${REGS:-0,72,80}
        run_step h_reg 300 "$BENCH" gpu-h --lg 27 --reps 5 --vary CUZK_GPU_NTT_REG=${REGS:-0,72,80} ;;
    pipeline27)
        # key and witness registered: one prover (phases), P proofs by one prover and by two
        # provers with witness prefetch, then the streamed key
        TAILN=8 run_step porep27_pipeline 560 "$BENCH" gpu-prove --porep-like 27 --key both --pinned 2 --reps 3 --pipeline ${PROOFS:-6} ;;
    pipeline27-pageable)
        # the same with pageable key and witness (uploads staged through the pinned chunks)
        TAILN=4 run_step porep27_pipeline_pageable 560 "$BENCH" gpu-prove --porep-like 27 --key resident --reps 3 --pipeline ${PROOFS:-6} ;;
    ncu-stalls)
        # why warps wait: stall reasons and pipe use of the NTT passes and the MSM round kernel
        if command -v ncu > /dev/null; then
            M='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active'
            run_step ncu_ntt_stalls 300 ncu --clock-control none -k regex:k_ntt_pass4 -c 2 --metrics "$M" "$BENCH" gpu-ntt --lg 27 --reps 1
            run_step ncu_aff_stalls 300 ncu --clock-control none -k regex:k_aff_round -c 2 --metrics "$M" "$BENCH" gpu-msm --g 1 --lg 26 --reps 1
            run_step ncu_acc_stalls 300 ncu --clock-control none -k regex:k_accum_u -c 1 --metrics "$M" "$BENCH" gpu-msm --g 1 --lg 26 --reps 1
        fi ;;
    fmul11)
        # session 9: field product throughput (Fr, Fp, Fr at 72 registers), and the
        # pipes each keeps busy
        run_step fmul 300 "$BENCH" gpu-fmul --lg 22 --iters 64 --reps 5
        if command -v ncu > /dev/null; then
            M='regex:sm__pipe_(fmaheavy|fp64|alu|fma|xu)_cycles_active\.avg\.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,smsp__inst_executed.sum'
            for v in 0 1 2; do
                run_step ncu_fmul_v$v 120 ncu --clock-control none -k "regex:^k_fmul(_cap)?$" -c 1 --metrics "$M" "$BENCH" gpu-fmul --lg 20 --iters 16 --reps 1 --variant $v
            done
        fi ;;
    round11)
        # session 9: Fr products with n0 from memory (fused IMAD.WIDE) against the old form
        # (BASE = a build with -DCZ_FR_N0_IMM), base-new-base
        for k in base new base2; do
            b=$BENCH; [ "$k" != new ] && b="${BASE:-$B}/bin/cuzk-bench-gpu"
            run_step "ntt11_$k" 300 "$b" gpu-ntt --lg 24 --lg 27 --reps 5
            run_step "h11_$k" 300 "$b" gpu-h --lg 24 --lg 27 --reps 5
            [ "$k" != base2 ] && run_step "msm11_$k" 300 "$b" gpu-msm --g 1 --lg 24 --lg 27 --reps 5
        done
        run_step ntt_reg11 300 "$BENCH" gpu-ntt --lg 27 --reps 5 --vary CUZK_GPU_NTT_REG=72,80,0
        run_step h_reg11 300 "$BENCH" gpu-h --lg 27 --reps 5 --vary CUZK_GPU_NTT_REG=72,80 ;;
    round12)
        # session 10: the h pipeline in 6 transforms (c without its coset NTT) against the
        # 7-transform baseline, same process; the gpu-fmul benchmark of round 11's review
        run_step fmul12 300 "$BENCH" gpu-fmul --lg 22 --iters 64 --reps 5
        run_step h12 300 "$BENCH" gpu-h --lg 24 --lg 27 --reps 5 --vary CUZK_GPU_H_SIX=0,1,0,1 ;;
    round12b)
        # the NTT in both output orders (NN with the bit-reversal pass, NR as sppark's "NTT
        # (NR)"), and the h pipeline's last pass with the bit reversal folded into its stores
        run_step ntt12 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5
        run_step ntt12_nr 300 "$BENCH" gpu-ntt-nr --lg 24 --lg 27 --reps 5
        run_step h12b 300 "$BENCH" gpu-h --lg 24 --lg 27 --reps 5 --vary CUZK_GPU_H_REVSTORE=0,1,0,1 ;;
    ntt12c)
        # the forward NTT in place (NN with the bit-reversal pass), in NR order, and out of place
        # (NN with the bit reversal folded into the last pass's stores)
        run_step ntt12c 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5
        run_step ntt12c_nr 300 "$BENCH" gpu-ntt-nr --lg 24 --lg 27 --reps 5
        run_step ntt12c_oop 300 "$BENCH" gpu-ntt-oop --lg 24 --lg 27 --reps 5
        run_step ntt12c_again 300 "$BENCH" gpu-ntt --lg 27 --reps 5 ;;
    gsweep12)
        # windows per sort at the sizes over their goals (never swept: the plan sorts up to 2^26
        # keys at once)
        run_step gsweep12_g1 300 "$BENCH" gpu-msm --g 1 --lg 24 --reps 5 --vary CUZK_GPU_MSM_G=4,1,2,3,4
        run_step gsweep12_g2 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_G=4,1,2,4 ;;
    sortlg12)
        # more windows per sort than the 2^26 keys of the plan (g = 2^SORT_LG / n, at most W)
        TAILN=12 run_step sortlg12_g1 400 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --reps 5 --vary CUZK_GPU_MSM_SORT_LG=26,27,28,29,26
        TAILN=12 run_step sortlg12_g1_27 300 "$BENCH" gpu-msm --g 1 --lg 27 --reps 3 --vary CUZK_GPU_MSM_SORT_LG=26,28,29,26
        TAILN=12 run_step sortlg12_g2 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_SORT_LG=26,27,28,26 ;;
    round12d)
        # the new default (2^29 keys per sort): kernels, and the batch-affine rounds again now
        # that a round sees more pairs per launch
        TAILN=12 run_step msm12d_g1 400 "$BENCH" gpu-msm --g 1 --lg 20 --lg 22 --lg 24 --lg 26 --reps 5 --vary CUZK_GPU_MSM_AFF=2,3
        TAILN=12 run_step msm12d_g1_27 300 "$BENCH" gpu-msm --g 1 --lg 27 --reps 3 --vary CUZK_GPU_MSM_AFF=3,4
        TAILN=12 run_step msm12d_g2 300 "$BENCH" gpu-msm --g 2 --lg 22 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF2=4,5,6
        TAILN=12 run_step sum12d 300 "$BENCH" gpu-msm --g 1 --lg 27 --density 0.5 --reps 5 ;;
    aff12)
        # rounds per size with the larger window groups (picks the defaults)
        TAILN=12 run_step aff12_g1 300 "$BENCH" gpu-msm --g 1 --lg 21 --lg 25 --lg 26 --reps 5 --vary CUZK_GPU_MSM_AFF=3,4
        TAILN=16 run_step aff12_g2 400 "$BENCH" gpu-msm --g 2 --lg 20 --lg 21 --lg 23 --lg 25 --reps 5 --vary CUZK_GPU_MSM_AFF2=4,5,6 ;;
    final12)
        # round 12's closing figures
        TAILN=8 run_step final12_g1 400 "$BENCH" gpu-msm --g 1 --lg 16 --lg 20 --lg 24 --lg 26 --lg 27 --reps 5
        TAILN=8 run_step final12_g2 300 "$BENCH" gpu-msm --g 2 --lg 20 --lg 24 --reps 5
        TAILN=8 run_step final12_sums 300 "$BENCH" gpu-msm --g 1 --lg 27 --density 0.5 --reps 5
        TAILN=8 run_step final12_sums2 300 "$BENCH" gpu-msm --g 2 --lg 25 --density 0.5 --reps 5
        TAILN=8 run_step final12_ntt 300 "$BENCH" gpu-ntt-oop --lg 27 --reps 5
        TAILN=8 run_step final12_h 300 "$BENCH" gpu-h --lg 24 --lg 27 --reps 5 ;;
    csweep12)
        # window bits again with the larger window groups
        TAILN=16 run_step csweep12_g2 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_C=16,17,18,16
        TAILN=16 run_step csweep12_g1 400 "$BENCH" gpu-msm --g 1 --lg 24 --reps 5 --vary CUZK_GPU_MSM_C=19,18,20,21
        TAILN=16 run_step csweep12_g1_26 400 "$BENCH" gpu-msm --g 1 --lg 26 --reps 3 --vary CUZK_GPU_MSM_C=20,21,22
        TAILN=16 run_step csweep12_g1_27 400 "$BENCH" gpu-msm --g 1 --lg 27 --reps 3 --vary CUZK_GPU_MSM_C=22,23 ;;
    g2tune12)
        # G2 2^24 round parameters with the larger window groups
        TAILN=16 run_step g2tune12_minpt 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF_MINPT=64,32,128,64
        TAILN=16 run_step g2tune12_tps 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF_TPS=256,128,512,256 ;;
    lsweep12)
        # accumulation range length (read once per process) with the larger window groups
        for l in 32 64 128 256; do
            CUZK_GPU_MSM_L=$l TAILN=4 run_step lsweep12_g1_$l 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --reps 5
            CUZK_GPU_MSM_L=$l TAILN=4 run_step lsweep12_g2_$l 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5
        done ;;
    final12b)
        # range lengths by group size: the MSM tests at the new lengths, then the kernels
        CUZK_GPU_MSM_L=32 run_step test_msm_l32 300 "$B/tests/gpu/test_msm"
        CUZK_GPU_MSM_L=256 run_step test_msm_l256 300 "$B/tests/gpu/test_msm"
        run_step test_msm 300 "$B/tests/gpu/test_msm"
        run_step test_prove 300 "$B/tests/gpu/test_prove"
        TAILN=8 run_step final12b_g1 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --lg 27 --reps 5
        TAILN=8 run_step final12b_g2 300 "$BENCH" gpu-msm --g 2 --lg 24 --lg 25 --reps 5
        CUZK_GPU_MSM_L=64 TAILN=8 run_step final12b_g2_l64 300 "$BENCH" gpu-msm --g 2 --lg 24 --lg 25 --reps 5 ;;
    round13)
        # session 11: round outputs hold the prefix products (no prefix buffer), exact CUB
        # scratch in the plan: MSM tests, kernels, and the prove with every MSM's plan traced
        run_step test_msm 300 "$B/tests/gpu/test_msm"
        run_step test_prove 300 "$B/tests/gpu/test_prove"
        TAILN=8 run_step round13_g1 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --lg 27 --reps 5
        TAILN=8 run_step round13_g2 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5
        TAILN=4 run_step round13_sum 300 "$BENCH" gpu-msm --g 1 --lg 27 --density 0.5 --reps 5
        CUZK_GPU_MSM_TRACE=1 TAILN=8 run_step porep27_pipeline 560 "$BENCH" gpu-prove --porep-like 27 --key both --pinned 2 --reps 3 --pipeline ${PROOFS:-6}
        note "H plans: $(grep 'msm plan: G1 n=134217727' "$OUT/porep27_pipeline.log" | sed 's/ free=.*//' | sort | uniq -c | tr '\n' '|')"
        note "$(grep 'device buffer' "$OUT/porep27_pipeline.log" | tail -1)" ;;
    final13)
        # session 11 close: the whole GPU suite, memcheck over the prover tests (third streamed
        # key buffer), and G1 batch-affine rounds one above the defaults (never measured there)
        for t in test_ntt test_msm test_prove; do run_step $t 300 "$B/tests/gpu/$t"; done
        note "tests: $(cat "$OUT"/test_*.log | grep -c '^PASS') PASS, $(cat "$OUT"/test_*.log | grep -c '^FAIL') FAIL"
        if command -v compute-sanitizer > /dev/null; then
            run_step sanitize_prove 240 compute-sanitizer --tool memcheck --show-backtrace host "$B/tests/gpu/test_prove"
            note "sanitize: $(grep -cE 'Program hit|Invalid' "$OUT/sanitize_prove.log") findings, $(grep -c '^PASS' "$OUT/sanitize_prove.log") PASS"
        fi
        TAILN=4 run_step aff13_24 300 "$BENCH" gpu-msm --g 1 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF=3,4,3,4
        TAILN=8 run_step aff13_27 300 "$BENCH" gpu-msm --g 1 --lg 26 --lg 27 --reps 5 --vary CUZK_GPU_MSM_AFF=4,5,4,5 ;;
    check13)
        # five G1 rounds above 2^25 points: MSM tests (five forced on small MSMs), kernels, prove
        run_step test_msm 300 "$B/tests/gpu/test_msm"
        run_step test_prove 300 "$B/tests/gpu/test_prove"
        TAILN=8 run_step check13_g1 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 25 --lg 26 --lg 27 --reps 5
        TAILN=8 run_step porep27_pipeline 560 "$BENCH" gpu-prove --porep-like 27 --key both --pinned 2 --reps 3 --pipeline ${PROOFS:-6} ;;
    check13b)
        # regrown scratch counted net in the plan: MSM tests, then sizes in the order that
        # made the plan shrink (2^25 before 2^26 and 2^27 on one context) and the usual order
        run_step test_msm 300 "$B/tests/gpu/test_msm"
        CUZK_GPU_MSM_TRACE=1 TAILN=8 run_step check13b_hist 300 "$BENCH" gpu-msm --g 1 --lg 25 --lg 26 --lg 27 --reps 5
        note "plans: $(grep 'msm plan' "$OUT/check13b_hist.log" | sed 's/ free=.*//' | sort | uniq -c | tr '\n' '|')"
        TAILN=8 run_step check13b_g1 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --lg 27 --reps 5 ;;
    round14)
        # the MSMs' sort buffers lent by the h pipeline's idle vectors: MSM and prover tests, then
        # the 2^27 prove without and with the loan in one process (every plan traced)
        for t in test_msm test_prove; do run_step "$t" 300 "$B/tests/gpu/$t"; done
        CUZK_GPU_MSM_TRACE=1 TAILN=8 run_step porep27_loan 540 "$BENCH" gpu-prove --porep-like 27 --key resident \
            --pinned 2 --reps 3 --vary CUZK_GPU_MSM_LOAN=0,1
        note "plans: $(grep 'msm plan' "$OUT/porep27_loan.log" | sed 's/ new scratch=.*//' | sort | uniq -c | tr '\n' '|')" ;;
    porep27-rev)
        run_step porep27_rev 540 "$BENCH" gpu-prove --porep-like 27 --key resident --pinned 2 --reps 3 \
            --vary CUZK_GPU_H_REVSTORE=0,1,0,1 ;;
    porep27-h6)
        # the 2^27 prove with the 7- and the 6-transform h pipeline, in one process
        run_step porep27_h6 540 "$BENCH" gpu-prove --porep-like 27 --key resident --pinned 2 --reps 3 \
            --vary CUZK_GPU_H_SIX=0,1,0,1 ;;
    porep27-res)
        run_step porep27_res 540 "$BENCH" gpu-prove --porep-like 27 --key resident --pinned 2 --reps 3 ;;
    porep27-res-base)
        run_step porep27_res_base 540 "${BASE:-$B}/bin/cuzk-bench-gpu" gpu-prove --porep-like 27 --key resident --pinned 2 --reps 3 ;;
    cmp-ntt)
        [ -x "${BASE:-}/bin/cuzk-bench-gpu" ] && run_step ntt_base 300 "$BASE/bin/cuzk-bench-gpu" gpu-ntt --lg 24 --lg 27 --reps 5
        run_step ntt_new 300 "$BENCH" gpu-ntt --lg 24 --lg 27 --reps 5
        [ -x "${BASE:-}/bin/cuzk-bench-gpu" ] && run_step h_base 300 "$BASE/bin/cuzk-bench-gpu" gpu-h --lg 27 --reps 5
        run_step h_new 300 "$BENCH" gpu-h --lg 27 --reps 5
        [ -x "${BASE:-}/bin/cuzk-bench-gpu" ] && run_step ntt_base2 300 "$BASE/bin/cuzk-bench-gpu" gpu-ntt --lg 27 --reps 5 ;;
    fieldmix)
        # instruction mix of the field kernels in $B/sass/k.cubin (products, squares, Fp2)
        if command -v cuobjdump > /dev/null && [ -f "$B/sass/k.cubin" ]; then
            cuobjdump --dump-sass "$B/sass/k.cubin" | awk '/Function :/ { f = $3; next }
                 f != "" && $1 ~ /^\/\*[0-9a-f]+\*\/$/ { op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op); c[f " " op]++; t[f]++ }
                 END { for (k in c) print c[k], k; for (k in t) print t[k], k, "TOTAL" }' | sort -k2,2 -k1,1nr > "$OUT/field_mix.txt"
            note "fieldmix: $(grep -E 'IMAD|TOTAL' "$OUT/field_mix.txt" | tr '\n' ' ')"
        fi ;;
    final)
        # the MSM's last step (Horner over the window sums) on the CPU (1, default) or in one
        # GPU thread (0), side by side in one process
        run_step msm_final 300 "$BENCH" gpu-msm --g 1 --lg 16 --lg 20 --lg 24 --reps 5 --vary CUZK_GPU_MSM_HOST_FINAL=0,1
        run_step msm_g2_final 300 "$BENCH" gpu-msm --g 2 --lg 16 --lg 20 --lg 24 --reps 5 --vary CUZK_GPU_MSM_HOST_FINAL=0,1 ;;
    aff-tune8)
        # round threads and minimum pairs per thread with the per-block inversion (round 8)
        run_step tps_g2 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF_TPS=128,256,384,512
        run_step minpt_g2 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF_MINPT=32,128,512
        run_step tps_g1 300 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --reps 5 --vary CUZK_GPU_MSM_AFF_TPS=256,512,768,1024
        run_step minpt_g1 300 "$BENCH" gpu-msm --g 1 --lg 24 --reps 5 --vary CUZK_GPU_MSM_AFF_MINPT=32,128,512 ;;
    csweep8)
        # window bits again now that the window reductions overlap the next group (round 8),
        # with the rounds' count where a different c changes the run lengths
        run_step c24 300 "$BENCH" gpu-msm --g 1 --lg 24 --reps 5 --vary CUZK_GPU_MSM_C=18,19,20,21
        CUZK_GPU_MSM_AFF=3 run_step c24_aff3 300 "$BENCH" gpu-msm --g 1 --lg 24 --reps 5 --vary CUZK_GPU_MSM_C=17,18,19
        run_step c26 300 "$BENCH" gpu-msm --g 1 --lg 26 --reps 5 --vary CUZK_GPU_MSM_C=19,20,21,22
        CUZK_GPU_MSM_AFF=2 run_step c26_aff2 300 "$BENCH" gpu-msm --g 1 --lg 26 --reps 5 --vary CUZK_GPU_MSM_C=20,21,22
        run_step c27 300 "$BENCH" gpu-msm --g 1 --lg 27 --reps 3 --vary CUZK_GPU_MSM_C=21,22,23
        run_step c24_g2 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_C=15,16,17
        CUZK_GPU_MSM_OVERLAP=1 run_step c24_g2_ovl 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 5 --vary CUZK_GPU_MSM_C=16,17,18 ;;
    csweep)
        # window bits with the batch-affine rounds on (G1 at the prover's sizes, G2 at 2^24)
        run_step msm_csweep 400 "$BENCH" gpu-msm --g 1 --lg 24 --lg 26 --lg 27 --reps 3 --vary CUZK_GPU_MSM_C=${CS:-20,21,22,23}
        run_step msm_g2_csweep 300 "$BENCH" gpu-msm --g 2 --lg 24 --reps 3 --vary CUZK_GPU_MSM_C=${CS2:-18,19,20,21} ;;
    sanitize)
        # compute-sanitizer over the prover tests: invalid accesses and CUDA API errors with
        # their host backtraces
        if command -v compute-sanitizer > /dev/null; then
            run_step sanitize_prove ${SAN_TO:-200} compute-sanitizer --tool memcheck --show-backtrace host "$B/tests/gpu/test_prove"
            note "sanitize: $(grep -cE 'Program hit|Invalid' "$OUT/sanitize_prove.log") findings"
        else
            note "sanitize: no compute-sanitizer"
        fi ;;
    *) note "unknown step $step" ;;
    esac
done
# the device tool brings back only a few files: fold every log into one
for f in "$OUT"/*.log "$OUT"/*.txt; do
    [ -f "$f" ] && [ "$f" != "$SUMMARY" ] && [ "$f" != "$OUT/all_logs.txt" ] || continue
    { echo "######## $(basename "$f")"; cat "$f"; } >> "$OUT/all_logs.txt"
    rm -f "$f"
done
echo "---- summary ----"
cat "$SUMMARY"
