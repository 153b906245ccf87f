#!/bin/sh
# timeline-report.sh: where a partition's time went, from the daemon's TIMELINE lines (text log
# format; see docs/daemon.md "Observability").
#
#   scripts/timeline-report.sh DAEMON_LOG [FIRST_LINE]
#
# Only lines from FIRST_LINE on are read (c2-32g-bench.sh passes the log's length before each
# batch). Prints, over the window from the first SYNTH_START to the last GPU_END:
#   - the GPU busy fraction: the union of the [GPU_START, GPU_END] intervals (a prover holds the
#     device lock over exactly its kernels) divided by the window;
#   - the steady state: the median interval between consecutive device-lock starts times the
#     partitions per proof (the rate once the pipeline is full; a batch's throughput also
#     counts its first synthesis and its last proof's assembly and verification);
#   - medians and maxima per partition of synthesis, synthesized-to-picked-up (queue), picked-up
#     to device lock (staging the witness and waiting for the other prover), device-lock hold
#     (kernels) with its phases, witness staging, and self-verification.
# A GPU that never waits for synthesis shows a busy fraction near 1 and a queue time above 0.
set -eu
LOG=${1:?DAEMON_LOG}
FROM=${2:-1}
tail -n +"$FROM" "$LOG" | awk -F, '
function kv(s, key,   n, a, i, p) {
    n = split(s, a, ",")
    for (i = 1; i <= n; i++) { split(a[i], p, "="); if (p[1] == key) return p[2] }
    return ""
}
function median(arr, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]; arr[j + 1] = t }
    return n ? (n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2) : 0
}
function stat(name, arr, n,   i, mx) {
    mx = 0; for (i = 1; i <= n; i++) if (arr[i] > mx) mx = arr[i]
    if (n) printf "  %-26s median %7.0f ms   max %7.0f ms   (%d partitions)\n", name, median(arr, n), mx, n
}
BEGIN { NPH = split("wit abc ntt h l a bg1 bg2", ph, " ") }
$1 == "TIMELINE" {
    t = $2 + 0; ev = $3; job = $4
    d = $5; for (i = 6; i <= NF; i++) d = d "," $i
    p = kv(d, "partition"); key = job "/" p
    if (p != "" && p + 1 > ppj) ppj = p + 1
    if (first == "" && ev == "SYNTH_START") first = t
    if (ev == "SYNTH_START") ss[key] = t
    else if (ev == "SYNTH_END") { ns++; synth[ns] = kv(d, "synth_ms") + 0 }
    else if (ev == "GPU_QUEUE") gq[key] = t
    else if (ev == "GPU_PICKUP") { pk[key] = t; if (key in gq) { nq++; queue[nq] = t - gq[key] } }
    else if (ev == "GPU_START") { st[key] = t; if (key in pk) { nl++; lockw[nl] = t - pk[key] } }
    else if (ev == "GPU_END") {
        if (key in st) { nb++; bs[nb] = st[key]; be[nb] = t; nh++; hold[nh] = t - st[key] }
        last = t
        for (k = 1; k <= NPH; k++) { v = kv(d, ph[k] "_ms"); if (v != "") { nph[k]++; phv[k, nph[k]] = v + 0 } }
    }
    else if (ev == "VERIFY_END") { nv++; ver[nv] = kv(d, "verify_ms") + 0 }
    else if (ev == "WITNESS_STAGED") { nw++; wst[nw] = kv(d, "ms") + 0 }
}
END {
    if (!nb) { print "timeline: no GPU_START/GPU_END pairs (timeline lines missing?)"; exit 1 }
    # union of busy intervals (sort by start)
    for (i = 2; i <= nb; i++) { a = bs[i]; b = be[i]; for (j = i - 1; j >= 1 && bs[j] > a; j--) { bs[j + 1] = bs[j]; be[j + 1] = be[j] } bs[j + 1] = a; be[j + 1] = b }
    busy = 0; cs = bs[1]; ce = be[1]
    for (i = 2; i <= nb; i++) {
        if (bs[i] > ce) { busy += ce - cs; cs = bs[i]; ce = be[i] } else if (be[i] > ce) ce = be[i]
    }
    busy += ce - cs
    for (i = 1; i < nb; i++) gap[i] = bs[i + 1] - bs[i]
    win = last - first
    printf "timeline: %d partitions proved in %.1f s (first synthesis start to last GPU end)\n", nb, win / 1000
    printf "  GPU busy fraction          %.2f (device lock held %.1f s of %.1f s)\n", win ? busy / win : 0, busy / 1000, win / 1000
    if (nb > 1) {
        g = median(gap, nb - 1)
        printf "  steady state               %.2f s/proof (median interval between device-lock starts %.0f ms x %d partitions per proof)\n", g * ppj / 1000, g, ppj
    }
    stat("synthesis", synth, ns)
    stat("queue (synth end->pickup)", queue, nq)
    stat("stage + lock wait", lockw, nl)
    stat("GPU (device lock held)", hold, nh)
    stat("self-verification", ver, nv)
    printf "  witnesses staged before the device lock: %d of %d partitions\n", nw, nb
    stat("staging (beside kernels)", wst, nw)
    printf "  GPU phase medians (ms):"
    for (k = 1; k <= NPH; k++) if (nph[k]) { n = nph[k]; for (i = 1; i <= n; i++) tmp[i] = phv[k, i]; printf " %s %.0f", ph[k], median(tmp, n) }
    printf "\n"
}'
