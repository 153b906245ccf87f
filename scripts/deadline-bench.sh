#!/usr/bin/env bash
# deadline-bench.sh: deadlines under load (issue 48). One daemon, one GPU, the card saturated by
# a PoRep C2 batch (SIZE, `cuzk-bench batch -c COUNT -j CONC`) while WinningPoSt requests (CRITICAL,
# sector size SIZE) arrive every INTERVAL seconds and WindowPoSt partitions (HIGH, sector size
# WSIZE) every WINDOW_INTERVAL seconds between them, each through its own `cuzk-bench single`
# (its `wall time:` line is the latency: submit to the verified answer of the Prove call).
# Prints one summary block:
#   - WinningPoSt latency alone (idle daemon) and under the batch, median and worst;
#     goal: worst under the batch <= WIN_GOAL_MS (2000 ms, on an H100);
#   - WindowPoSt latency alone and under the batch; goal: worst under the batch <= worst alone +
#     one PoRep partition's device lock (the median lock hold of the batch alone);
#   - PoRep s/proof alone (ALONE_COUNT proofs) and under the load (COUNT proofs), both at -j
#     CONC and both steady rates (from the first answer to the last, so batches of different
#     lengths compare), and the loss; goal <= 5 %;
#   - the GPU busy fraction over the loaded batch: the backend's kernel phases (the GPU_END
#     lines' abc .. bg2) over the window from the first synthesis to the last GPU_END; goal
#     >= 0.95 (saturated); and timeline-report.sh's device-lock fraction beside it, which
#     also counts a key read back from its file under the lock;
#   - the key switches during the loaded batch: key uploads and PoRep key read-backs (a PoSt
#     proof runs beside the resident PoRep key, so a healthy run shows none; a switch costs a
#     ~20 s read of the PoRep key; docs/daemon.md "Deadlines under load"), to explain the figures.
# It prints PASS / MISS per goal and does not fail on a MISS. It exits non-zero when any proof
# failed: a request not answered COMPLETED (FAILED, TIMEOUT, RPC error), a failed proof of a
# batch, or a returned proof that does not verify apart from the daemon (`cuzk-bench verify`
# against the key's .vk: the warm-up PoRep proof and every PoSt proof).
#
#   scripts/daemon-gpu-check.sh --pack DIR BUILD    (here: the daemon, cuzk-bench, cuzk-params-gpu)
#   KEYS_ONLY=1 PARAMS=/tmp/deadline-keys scripts/deadline-bench.sh DIR OUT    (GPU call 1: keys)
#   PARAMS=/tmp/deadline-keys scripts/deadline-bench.sh DIR OUT                (GPU call 2: measure)
#   REQUIRE_GPU=0 BIN=build/bin SIZE=2KiB WSIZE=2KiB INTERVAL=1 COUNT_WINNING=3 ALONE_N=1 \
#       scripts/deadline-bench.sh build OUT        (a CPU dry run; PARAMS=DIR reuses 2 KiB keys)
#
# Settings (environment):
#   SIZE=32GiB       PoRep C2 and WinningPoSt sector size
#   WSIZE=512MiB     WindowPoSt sector size. Its key must fit on disk beside the PoRep key: the
#                    GPU machine has 64 GiB of disk and the 32 GiB PoRep key takes 54.9 GB
#                    (47.4 GB .params + 7.5 GB .shape); the 32 GiB WindowPoSt key is ~70.8 GB
#                    (60.8 GB = 56.6 GiB .params, docs/circuits.md, + ~10 GB .shape) and does not
#                    fit, 512 MiB (45.3 MB + 6.8 MB, 2 sectors x 10 challenges, the deepest tree
#                    below 32 GiB) does. Before each setup the script checks the key's size
#                    (key_bytes below) against the free space and names the sizes that fit.
#   INTERVAL=15      seconds between WinningPoSt arrivals; COUNT_WINNING=10 of them, the first
#                    FIRST=INTERVAL seconds after the batch starts (its pipeline is full by then)
#   COUNT_WINDOW=ceil(COUNT_WINNING/2) WindowPoSt partitions every WINDOW_INTERVAL=2*INTERVAL
#                    seconds, the first at FIRST + INTERVAL/2 (between two WinningPoSts)
#   The issue's production setting is a WinningPoSt every 30 s, at least 10 of them:
#   INTERVAL=30 COUNT_WINNING=10 FIRST=20 ALONE_COUNT=8 REQ_TIMEOUT=30 BUDGET_S=585: a ~30-proof
#   loaded batch (~5.5 min) after an 8-proof batch alone, in one 10-minute device call with the
#   keys made; the default INTERVAL=15 keeps a call at ~7 min.
#   COUNT=           PoRep proofs of the loaded batch; default ceil((last arrival + INTERVAL +
#                    the warm-up proof's wall time) / the batch alone's s/proof), so the batch
#                    outlasts every arrival (its first answer comes about one proof's wall time
#                    after it starts)
#   CONC=3           the batches' -j: with two proofs in flight the card idled whenever both
#                    ended close together and the next request was still being decoded
#   ALONE_COUNT=     PoRep proofs of the batch alone (its steady rate needs >= 3); default
#                    ceil((last arrival + INTERVAL) / EST_S), EST_S= an s/proof estimate
#                    (default 0.7 x the warm-up PoRep proof's wall time)
#   ALONE_N=3        PoSt requests of each kind measured alone (window, winning, window, ...)
#   WIN_GOAL_MS=2000 LOSS_GOAL_PCT=5 BUSY_GOAL=0.95
#   BUDGET_S=540     the run's time limit (from the script's start): the loaded batch is stopped
#                    BUDGET_S - REQ_TIMEOUT - 20 s after it (room for the PoSt requests still
#                    in flight, the daemon's stop and the verifications) and its s/proof taken
#                    from the proofs completed by then (marked "stopped"), so one 10-minute
#                    device call still ends with its summary
#   REQ_TIMEOUT=60   each PoSt request's --timeout (no answer in time: a failed request)
#   PARAMS=DIR       keys and vanilla files made earlier (what KEYS_ONLY=1 writes; missing ones
#                    are made): <stem>.params/.vk/.shape (`cuzk-params stem`), deadline-c1-SIZE.json,
#                    deadline-winning-SIZE.json, deadline-window-WSIZE.json. Keys are made with
#                    `cuzk-params(-gpu) setup --seed 1 [--gpu]` (NOT FOR PRODUCTION).
#   KEYS_ONLY=1      make the keys and vanilla files into PARAMS, print their sizes, exit
#   GPU_TRACE=1      [gpus] trace (MSM plans, device allocations in daemon.log)
#   REQUIRE_GPU=0    with a CPU build (BIN=build/bin, DIR a build dir): CPU provers, a dry run
#
# Phases and their expected time at 32 GiB on an H100 (keys made; docs/performance.md):
#   daemon start, PoSt keys loaded (preload winning-32g, wpost-512m)       ~5 s
#   PoSt alone: ALONE_N of each kind alternating (each loads its own key, as an arrival
#     during the batch does; ~0.1-0.5 s each), the first of each verified apart    ~5 s
#   PoRep key loaded (47.4 GB .params, digest cache hit, + 7.5 GB .shape) ~30-60 s
#   warm-up PoRep proof (~12 s) + its verification apart (C1 parse ~4 s)    ~20 s
#   PoRep batch alone, ALONE_COUNT=14 at ~10.7 s/proof                    ~155 s
#   PoRep batch under the load: >= the same, plus what the PoSt proofs take  ~160 s
#     (measured on an H100: 3.7 % more; a key switch would add ~20 s each)
#   apart verification of every PoSt proof, summary                         ~5 s
# Outputs in OUT: daemon.log (TIMELINE lines), requests.tsv (one row per PoSt request: phase,
# kind, tag, exit code, status, wall ms, then the daemon's total/queue/srs/synth/gpu ms),
# req/*.txt (each request's cuzk-bench output), batch-alone.txt, batch-loaded.txt,
# timeline-alone.txt, timeline-loaded.txt, summary.txt.
set -u
DIR=${1:?DIR (made by daemon-gpu-check.sh --pack) or a build dir with BIN set}
OUT=${2:-deadline-bench-out}
SIZE=${SIZE:-32GiB}
WSIZE=${WSIZE:-512MiB}
INTERVAL=${INTERVAL:-15}
COUNT_WINNING=${COUNT_WINNING:-10}
COUNT_WINDOW=${COUNT_WINDOW:-$(( (COUNT_WINNING + 1) / 2 ))}
WINDOW_INTERVAL=${WINDOW_INTERVAL:-$(awk -v i="$INTERVAL" 'BEGIN { print 2 * i }')}
FIRST=${FIRST:-$INTERVAL}
CONC=${CONC:-3}
ALONE_N=${ALONE_N:-3}
WIN_GOAL_MS=${WIN_GOAL_MS:-2000}
LOSS_GOAL_PCT=${LOSS_GOAL_PCT:-5}
BUSY_GOAL=${BUSY_GOAL:-0.95}
BUDGET_S=${BUDGET_S:-540}
REQ_TIMEOUT=${REQ_TIMEOUT:-60}
T_START=$(date +%s.%N)
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT/req" "$OUT/proofs" "$OUT/requests.tsv"
mkdir -p "$OUT/req" "$OUT/proofs"
HERE=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=lib/pack.sh
. "$HERE/lib/pack.sh"
pack_init "$DIR" || exit 1
run() { pack_run "$@"; }
B=$PACK_BIN
if [ "$PACK" = 1 ]; then
    DAEMON="$B/cuzk-daemon-gpu"
    PARAMS_BIN="$B/cuzk-params-gpu"
    GPU_FLAG=--gpu
else
    DAEMON="$B/cuzk-daemon"
    PARAMS_BIN="$B/cuzk-params"
    GPU_FLAG=
fi

T=$(mktemp -d /tmp/cuzk-deadline-XXXXXX)
PID=
BG=()
cleanup() {
    for p in ${BG[@]+"${BG[@]}"}; do kill "$p" 2>/dev/null; done
    [ -n "$PID" ] && kill "$PID" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
fail() {
    echo "deadline-bench: FAIL: $*"
    [ -f "$OUT/daemon.log" ] && tail -20 "$OUT/daemon.log"
    exit 1
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
gb() { awk -v b="$1" 'BEGIN { if (b >= 1e9) printf "%.2f GB", b / 1e9; else printf "%.1f MB", b / 1e6 }'; }

for v in INTERVAL WINDOW_INTERVAL FIRST BUDGET_S; do
    awk -v x="${!v}" 'BEGIN { exit !(x ~ /^[0-9]+(\.[0-9]+)?$/ && x > 0) }' ||
        fail "$v=${!v}: expected a positive number of seconds"
done
for v in COUNT_WINNING COUNT_WINDOW CONC ALONE_N REQ_TIMEOUT; do
    case "${!v}" in ''|*[!0-9]*) fail "$v=${!v}: expected a whole number" ;; esac
done
[ "$ALONE_N" -ge 1 ] && [ "$CONC" -ge 1 ] || fail "ALONE_N and CONC must be at least 1"

# Sizes: the circuit id suffix and the Go registered PoSt proof (Winning 0-4, Window V1_1 10-14).
size_index() {
    case "$1" in
        2KiB) echo 0 ;; 8MiB) echo 1 ;; 512MiB) echo 2 ;; 32GiB) echo 3 ;; 64GiB) echo 4 ;;
        *) fail "sector size $1: expected 2KiB, 8MiB, 512MiB, 32GiB or 64GiB" ;;
    esac
}
idsuffix() { echo "$1" | tr "[:upper:]" "[:lower:]" | sed "s/ib$//"; }
WIN_REG=$(size_index "$SIZE") || exit 1
WIN_REG_W=$(size_index "$WSIZE") || exit 1
WIN_REG_W=$((10 + WIN_REG_W))

# Bytes of a key on disk (.params + .shape) by kind and size, to check that it fits before it
# is made: measured here (2 KiB, 8 MiB, 512 MiB) or on the GPU machine (PoRep 32 GiB), else the
# .params size formula of docs/circuits.md (which the measured files equal) and 8.8 bytes of
# .shape per constraint-matrix nonzero (measured on the PoSt shapes). 0: no estimate.
key_bytes() {
    case "$1:$2" in
        porep:2KiB) echo 1260000000 ;;          # 1.11 GB .params + 0.15 GB .shape
        porep:32GiB) echo 54900000000 ;;        # 47.4 GB .params + 7.5 GB .shape
        window-post:2KiB) echo 13300000 ;;      # 11.5 MB + 1.8 MB
        window-post:8MiB) echo 36000000 ;;      # 30.9 MB + 5.1 MB
        window-post:512MiB) echo 52100000 ;;    # 45.3 MB + 6.8 MB
        window-post:32GiB) echo 70800000000 ;;  # 60.8 GB + ~10 GB (1.15 G nonzeros)
        window-post:64GiB) echo 72900000000 ;;  # 62.6 GB + ~10.3 GB
        winning-post:2KiB) echo 54500000 ;;     # 47.3 MB + 7.2 MB
        winning-post:32GiB) echo 222000000 ;;   # 192 MB + ~30 MB
        winning-post:64GiB) echo 235000000 ;;
        *) echo 0 ;;
    esac
}
free_bytes() { df -B1 --output=avail "$1" 2>/dev/null | tail -1; }
# SPARE: bytes kept free beside a key for the vanilla files (a 32 GiB C1 is 51 MB) and the logs;
# small, because the 32 GiB PoRep key leaves little of the GPU machine's disk.
SPARE=200000000
# The WindowPoSt sizes whose key fits in the free space of $1.
window_fits() {
    local f s fit="" no=""
    f=$(free_bytes "$1")
    for s in 2KiB 8MiB 512MiB 32GiB 64GiB; do
        if [ "$(key_bytes window-post "$s")" -le $((f - SPARE)) ]; then fit="$fit $s"
        else no="$no $s (~$(gb "$(key_bytes window-post "$s")"))"; fi
    done
    echo "WindowPoSt keys that fit in $(gb "$f") free:${fit:- none}${no:+; not:$no}"
}

# 1. keys and vanilla files
P=${PARAMS:-$T/params}
[ "${KEYS_ONLY:-0}" = 1 ] && [ -z "${PARAMS:-}" ] && fail "KEYS_ONLY=1 needs PARAMS=DIR, where the keys stay"
mkdir -p "$P" || fail "cannot create PARAMS=$P"
stem() { run "$PARAMS_BIN" stem --kind "$1" --sector-size "$2" || fail "cuzk-params stem --kind $1 --sector-size $2"; }
STEM_POREP=$(stem porep "$SIZE") || exit 1
STEM_WIN=$(stem winning-post "$SIZE") || exit 1
STEM_WIN_W=$(stem window-post "$WSIZE") || exit 1
make_key() {   # KIND SIZE STEM
    [ -f "$P/$3.params" ] && [ -f "$P/$3.vk" ] && return 0
    local need free
    need=$(key_bytes "$1" "$2")
    free=$(free_bytes "$P")
    if [ -n "$free" ] && [ "$need" -gt 0 ] && [ "$need" -gt $((free - SPARE)) ]; then
        echo "deadline-bench: the $1 $2 key needs ~$(gb "$need") (.params + .shape), $P has $(gb "$free") free"
        if [ "$1" = window-post ]; then window_fits "$P"; fail "no room for the $1 $2 key: pick a WSIZE that fits"; fi
        fail "no room for the $1 $2 key"
    fi
    local t0
    t0=$(now)
    run "$PARAMS_BIN" setup --kind "$1" --sector-size "$2" --out "$P" --seed 1 $GPU_FLAG \
        > "$OUT/setup-$1-$2.txt" 2>&1 || { tail -5 "$OUT/setup-$1-$2.txt"; fail "setup --kind $1 --sector-size $2"; }
    echo "setup $1 $2 (${GPU_FLAG:-cpu}): $(secs "$t0" "$(now)") s, .params $(gb "$(stat -c %s "$P/$3.params")")," \
         ".shape $(gb "$(stat -c %s "$P/$3.shape" 2>/dev/null || echo 0)")"
}
make_key porep "$SIZE" "$STEM_POREP"
make_key winning-post "$SIZE" "$STEM_WIN"
make_key window-post "$WSIZE" "$STEM_WIN_W"
C1="$P/deadline-c1-$SIZE.json"
WIN_V="$P/deadline-winning-$SIZE.json"
WINDOW_V="$P/deadline-window-$WSIZE.json"
gen() {   # FILE ARGS...: gen-vanilla once into PARAMS
    local f=$1
    shift
    [ -s "$f" ] && return 0
    local t0
    t0=$(now)
    run "$B/cuzk-bench" gen-vanilla "$@" -o "$f.tmp" > "$OUT/gen-$(basename "$f" .json).txt" 2>&1 ||
        { tail -5 "$OUT/gen-$(basename "$f" .json).txt"; rm -f "$f.tmp"; fail "gen-vanilla $*"; }
    mv "$f.tmp" "$f"
    echo "gen-vanilla $1: $(secs "$t0" "$(now)") s, $(gb "$(stat -c %s "$f")")"
}
gen "$C1" porep --sector-size "$SIZE"
gen "$WIN_V" winning-post --sector-size "$SIZE"
gen "$WINDOW_V" window-post --sector-size "$WSIZE"
if [ "${KEYS_ONLY:-0}" = 1 ]; then
    du -sh "$P"
    window_fits "$P"
    echo "deadline-bench: keys and vanilla files ready in $P (KEYS_ONLY=1)"
    exit 0
fi

# 2. the daemon, on a config pointing at the keys (full validation: the setup wrote each key's
# digest cache, so a load reads at file speed)
ADDR="unix://$T/cuzk.sock"
{
    printf '[daemon]\nshutdown_grace = "5s"\n'   # a stopped batch's partitions must not hold the exit
    printf '[srs]\nparam_cache = "%s"\nvalidation = "full"\n' "$P"
    [ "${GPU_TRACE:-0}" = 1 ] && printf '[gpus]\ntrace = true\n'
} > "$T/cuzk.toml"
pack_bg "$DAEMON" -c "$T/cuzk.toml" -l "$ADDR" > "$OUT/daemon.out" 2> "$OUT/daemon.log"
PID=$!
i=0
until grep -q "cuzk-daemon ready" "$OUT/daemon.out" 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 600 ] || fail "the daemon was not ready after 60 s"
    kill -0 "$PID" 2>/dev/null || fail "the daemon exited before it was ready"
    sleep 0.1
done
if [ "${REQUIRE_GPU:-1}" = 1 ]; then
    grep -q "GPU 0:" "$OUT/daemon.log" || fail "the daemon found no GPU (REQUIRE_GPU=0 for a CPU dry run)"
fi
DEVICE=$(grep -o "GPU 0: [^,]*" "$OUT/daemon.log" | head -1)
preload() {
    local t0
    t0=$(now)
    run "$B/cuzk-bench" -a "$ADDR" preload -c "$1" > "$OUT/preload-$1.txt" 2>&1 ||
        { cat "$OUT/preload-$1.txt"; fail "preload $1"; }
    echo "preload $1: $(secs "$t0" "$(now)") s"
}
# the PoSt keys first, measured alone before the PoRep key is read (each load of a 32 GiB
# PoRep key is a 47 GB read, so it is read once, after them)
preload "winning-$(idsuffix "$SIZE")"
preload "wpost-$(idsuffix "$WSIZE")"

# post_req KIND PHASE I: one PoSt request through `cuzk-bench single` (request id KIND-PHASE-I,
# the proof kept for the verification apart); appends its row to requests.tsv. Exit status:
# that of cuzk-bench (0 only for COMPLETED).
post_req() {
    local kind=$1 phase=$2 n=$3 tag="$1-$2-$3"
    local f="$OUT/req/$tag.txt" rc st wall tm
    local -a a
    if [ "$kind" = winning ]; then a=(-t winning --registered-proof "$WIN_REG" --vanilla "$WIN_V")
    else a=(-t wpost --registered-proof "$WIN_REG_W" --vanilla "$WINDOW_V"); fi
    run "$B/cuzk-bench" -a "$ADDR" single "${a[@]}" --request-id "$tag" --timeout "$REQ_TIMEOUT" \
        --proof-out "$OUT/proofs/$tag.bin" > "$f" 2>&1
    rc=$?
    st=$(awk '$1 == "status:" { print $2; exit }' "$f")
    wall=$(awk '$1 == "wall" && $2 == "time:" { print $3; exit }' "$f")
    # "timings:   total=N ms (queue=N ms, srs=N ms, synth=N ms, gpu=N ms)" -> five numbers
    tm=$(awk '$1 == "timings:" { gsub(/[^0-9 ]/, " "); n = split($0, v, " "); printf "%s\t%s\t%s\t%s\t%s", v[1], v[2], v[3], v[4], v[5]; exit }' "$f")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$phase" "$kind" "$tag" "$rc" "${st:-none}" "${wall:-0}" \
        "${tm:-0	0	0	0	0}" >> "$OUT/requests.tsv"
    return $rc
}
# verify_post KIND TAG: the returned proof checked apart from the daemon against the key's .vk
verify_post() {
    local v=$WINDOW_V k=window-post vk="$P/$STEM_WIN_W.vk"
    [ "$1" = winning ] && v=$WIN_V k=winning-post vk="$P/$STEM_WIN.vk"
    run "$B/cuzk-bench" verify --kind "$k" --vanilla "$v" --vk "$vk" --proof "$OUT/proofs/$2.bin" \
        > "$OUT/req/$2.verify.txt" 2>&1
}
req_error() { grep -E "^(status|error):" "$OUT/req/$1.txt" | tr '\n' ' '; }

# 3. PoSt alone on the idle daemon: ALONE_N of each kind, alternating, so that each request
# finds the other kind's key on the GPU and pays for loading its own, as an arrival during the
# PoRep batch does; the first proof of each kind is verified apart from the daemon at once
for n in $(seq 1 "$ALONE_N"); do
    for kind in window winning; do
        post_req "$kind" alone "$n" || fail "$kind-alone-$n: $(req_error "$kind-alone-$n")"
        [ "$n" = 1 ] || continue
        verify_post "$kind" "$kind-alone-1" ||
            { cat "$OUT/req/$kind-alone-1.verify.txt"; fail "the $kind proof does not verify apart from the daemon"; }
        echo "$kind: $(head -1 "$OUT/req/$kind-alone-1.verify.txt") (apart from the daemon)"
    done
done
for kind in window winning; do
    echo "$kind alone: $(awk -F'\t' -v k="$kind" '$2 == k { printf "%s ms ", $6 }' "$OUT/requests.tsv")"
done

# 4. the PoRep key, a warm-up proof verified apart from the daemon; its time estimates the
# batch's s/proof when EST_S is not given
preload "porep-$(idsuffix "$SIZE")"
t0=$(now)
run "$B/cuzk-bench" -a "$ADDR" single -t porep --c1 "$C1" --request-id porep-warmup --proof-out "$T/porep.bin" \
    > "$OUT/porep-warmup.txt" 2>&1 || { cat "$OUT/porep-warmup.txt"; fail "the warm-up PoRep proof"; }
WARM_S=$(secs "$t0" "$(now)")
run "$B/cuzk-bench" verify --kind porep --c1 "$C1" --vk "$P/$STEM_POREP.vk" --proof "$T/porep.bin" > "$OUT/porep-verify.txt" 2>&1 ||
    { cat "$OUT/porep-verify.txt"; fail "the warm-up PoRep proof does not verify apart from the daemon"; }
echo "warm-up PoRep proof: $WARM_S s; $(tail -1 "$OUT/porep-verify.txt")"

# the arrival schedule (seconds after the loaded batch starts, kind, number), in time order
awk -v f="$FIRST" -v i="$INTERVAL" -v n="$COUNT_WINNING" -v wi="$WINDOW_INTERVAL" -v m="$COUNT_WINDOW" 'BEGIN {
    for (k = 0; k < n; k++) printf "%.3f winning %d\n", f + k * i, k + 1
    for (k = 0; k < m; k++) printf "%.3f window %d\n", f + i / 2 + k * wi, k + 1
}' | sort -g > "$OUT/arrivals.txt"
LAST=$(awk 'END { print $1 + 0 }' "$OUT/arrivals.txt")
# A lone proof cannot overlap its synthesis with another proof's kernels, so a batch's s/proof
# is lower than the warm-up's wall time (H100, 32 GiB: 11.59 against 15.9 s; sized from the
# warm-up itself, 3 of 10 arrivals fell after the batch): 0.7 of it, so the batch outlasts them
EST_S=${EST_S:-$(awk -v w="$WARM_S" 'BEGIN { printf "%.1f", 0.7 * w }')}
# ceil_div D A...: the least whole number >= (A + ...) / D, at least 1
ceil_div() { awk -v d="$1" -v s="${*:2}" 'BEGIN { n = split(s, t, " "); for (i = 1; i <= n; i++) a += t[i]
    c = a / d; k = int(c); if (k < c) k++; print (k < 1 ? 1 : k) }'; }
ALONE_COUNT=${ALONE_COUNT:-$(ceil_div "$EST_S" "$LAST" "$INTERVAL")}
case "$ALONE_COUNT" in ''|0|*[!0-9]*) fail "ALONE_COUNT: expected a whole number >= 1" ;; esac
case "${COUNT:-1}" in 0|*[!0-9]*) fail "COUNT=$COUNT: expected a whole number >= 1" ;; esac
echo "schedule: $COUNT_WINNING WinningPoSt every $INTERVAL s and $COUNT_WINDOW WindowPoSt every $WINDOW_INTERVAL s," \
     "the last at $LAST s; PoRep batches at -j $CONC, alone -c $ALONE_COUNT"

# batch_s FILE ELAPSED: a batch's steady s/proof: from its first answer to its last over the
# answers after the first (each COMPLETED line ends "at T s"; a batch stopped before its summary
# has them too), so a short batch alone and a long loaded one compare; with fewer than 3
# answers, ELAPSED over the answers
batch_s() {
    awk -v el="$2" '/^  \[[0-9]+\/[0-9]+\] COMPLETED/ {
        n++
        if (match($0, / at [0-9.]+s/)) { t = substr($0, RSTART + 4, RLENGTH - 5) + 0; if (m == 0 || t < lo) lo = t; if (t > hi) hi = t; m++ }
    }
    END {
        if (m >= 3) printf "%.2f", (hi - lo) / (m - 1)
        else if (n) printf "%.2f", el / n
        else print ""
    }' "$1"
}
batch_failed() {   # proofs of a batch not COMPLETED (RPC errors included)
    awk '/^  \[[0-9]+\/[0-9]+\] / && $2 != "COMPLETED" { n++ } END { print n + 0 }' "$1"
}
# lock_stats FROM TO: median and max device-lock hold (GPU_START -> GPU_END) of the PoRep
# partitions (jobs other than the PoSt requests' ids) in daemon.log lines FROM..TO
lock_stats() {
    sed -n "$1,$2p" "$OUT/daemon.log" | awk -F, '
    $1 == "TIMELINE" && $4 !~ /^"?(winning|window)-/ {
        key = $4 "/" (match($0, /partition=[0-9]+/) ? substr($0, RSTART + 10, RLENGTH - 10) : "")
        if ($3 == "GPU_START") st[key] = $2
        else if ($3 == "GPU_END" && (key in st)) { n++; h[n] = $2 - st[key] }
    }
    END {
        for (i = 2; i <= n; i++) { t = h[i]; for (j = i - 1; j >= 1 && h[j] > t; j--) h[j + 1] = h[j]; h[j + 1] = t }
        if (n) printf "%.0f %.0f %d\n", n % 2 ? h[(n + 1) / 2] : (h[n / 2] + h[n / 2 + 1]) / 2, h[n], n
        else print "0 0 0"
    }'
}
busy_of() { awk '/GPU busy fraction/ { print $4 }' "$1"; }
# kernel_busy LOG: the time in the backend's kernel phases (abc .. bg2 of each GPU_END line)
# over the window timeline-report.sh uses (first SYNTH_START to last GPU_END). The device lock
# (timeline-report's busy fraction) also covers make_resident, which reads a released key back
# from its file under the lock: ~20 s of an idle card for a 32 GiB PoRep key after a PoSt key
# took its place. In steady state the phases are 99.7 % of the lock (1063 of 1066 ms). With
# CPU provers (a dry run) two partitions' phases overlap, so the figure may pass 1 there.
kernel_busy() {
    awk -F, '$1 == "TIMELINE" {
        if ($3 == "SYNTH_START" && !have) { first = $2 + 0; have = 1 }
        if ($3 != "GPU_END") next
        last = $2 + 0
        for (i = 5; i <= NF; i++) if ($i ~ /^(abc|ntt|h|l|a|bg1|bg2)_ms=/) { split($i, kv, "="); k += kv[2] }
    }
    END { if (have && last > first) printf "%.2f", k / (last - first) }' "$1"
}

# 5. the batch alone
from=$(($(wc -l < "$OUT/daemon.log") + 1))
t0=$(now)
run "$B/cuzk-bench" -a "$ADDR" batch -t porep --c1 "$C1" -c "$ALONE_COUNT" -j "$CONC" > "$OUT/batch-alone.txt" 2>&1
el=$(secs "$t0" "$(now)")
to=$(wc -l < "$OUT/daemon.log")
[ "$(batch_failed "$OUT/batch-alone.txt")" = 0 ] && grep -q "^failed: *0$" "$OUT/batch-alone.txt" ||
    { tail -20 "$OUT/batch-alone.txt"; fail "the PoRep batch alone: a proof failed"; }
S_ALONE=$(batch_s "$OUT/batch-alone.txt" "$el")
sed -n "$from,${to}p" "$OUT/daemon.log" > "$T/alone.log"
"$HERE/timeline-report.sh" "$T/alone.log" > "$OUT/timeline-alone.txt" 2>&1
BUSY_ALONE=$(busy_of "$OUT/timeline-alone.txt")
KBUSY_ALONE=$(kernel_busy "$T/alone.log")
read -r LOCK_MED LOCK_MAX LOCK_N <<< "$(lock_stats "$from" "$to")"
# the loaded batch outlasts the last arrival at the rate alone (deadline proofs only slow it)
COUNT=${COUNT:-$(ceil_div "${S_ALONE:-$EST_S}" "$LAST" "$INTERVAL" "$WARM_S")}
echo "PoRep batch alone: $el s, $S_ALONE s/proof, GPU busy ${KBUSY_ALONE:-?} in kernels (${BUSY_ALONE:-?} lock held), device lock per partition median $LOCK_MED ms (max $LOCK_MAX, $LOCK_N partitions)"

# 6. the batch under the deadline load: the batch in the background, each arrival its own
# request in the background at its time; arrivals after the batch ended are not sent. At
# STOP_AT (BUDGET_S - REQ_TIMEOUT - 20 s after the start: room for the requests still in
# flight, the daemon's stop and the verifications) the batch is stopped.
from=$(($(wc -l < "$OUT/daemon.log") + 1))
t0=$(now)
STOP_AT=$(awk -v s="$T_START" -v b="$BUDGET_S" -v r="$REQ_TIMEOUT" 'BEGIN { printf "%.3f", s + b - r - 20 }')
left=$(awk -v s="$STOP_AT" -v n="$(now)" 'BEGIN { printf "%.0f", s - n }')
if awk -v l="$left" -v a="$S_ALONE" -v c="$COUNT" 'BEGIN { exit !(l < a * c) }'; then
    echo "deadline-bench: note: BUDGET_S=$BUDGET_S leaves $left s for the loaded batch, less than $COUNT proofs" \
         "at the rate alone; it will be stopped early (raise BUDGET_S or lower COUNT)"
fi
pack_bg "$B/cuzk-bench" -a "$ADDR" batch -t porep --c1 "$C1" -c "$COUNT" -j "$CONC" > "$OUT/batch-loaded.txt" 2>&1
BPID=$!
BG+=("$BPID")
SENT=0
SKIPPED=0
STOPPED=0
REQ_PIDS=()
past() { awk -v n="$(now)" -v t="$1" 'BEGIN { exit !(n > t) }'; }
# sleep_until T: wait until T (epoch seconds) or STOP_AT, whichever is first; 1 when STOP_AT came
sleep_until() {
    local d
    while d=$(awk -v n="$(now)" -v t="$1" 'BEGIN { d = t - n; printf "%.3f", (d > 0.5 ? 0.5 : d) }'); \
          awk -v d="$d" 'BEGIN { exit !(d > 0) }'; do
        past "$STOP_AT" && return 1
        sleep "$d"
    done
    ! past "$STOP_AT"
}
while read -r at kind n <&3; do
    sleep_until "$(awk -v t0="$t0" -v at="$at" 'BEGIN { printf "%.3f", t0 + at }')" || break
    if ! kill -0 "$BPID" 2>/dev/null; then SKIPPED=$((SKIPPED + 1)); continue; fi
    post_req "$kind" load "$n" < /dev/null &
    REQ_PIDS+=($!)
    BG+=($!)
    SENT=$((SENT + 1))
done 3< "$OUT/arrivals.txt"
while kill -0 "$BPID" 2>/dev/null; do
    if past "$STOP_AT"; then
        kill "$BPID" 2>/dev/null
        STOPPED=1
        break
    fi
    sleep 0.5
done
wait "$BPID" 2>/dev/null
el_loaded=$(secs "$t0" "$(now)")
to=$(wc -l < "$OUT/daemon.log")
for p in ${REQ_PIDS[@]+"${REQ_PIDS[@]}"}; do wait "$p"; done
S_LOADED=$(batch_s "$OUT/batch-loaded.txt" "$el_loaded")
FAILED_LOADED=$(batch_failed "$OUT/batch-loaded.txt")
DONE_LOADED=$(grep -c "^  \[[0-9]*/[0-9]*\] COMPLETED" "$OUT/batch-loaded.txt")
sed -n "$from,${to}p" "$OUT/daemon.log" > "$T/loaded.log"
"$HERE/timeline-report.sh" "$T/loaded.log" > "$OUT/timeline-loaded.txt" 2>&1
BUSY_LOADED=$(busy_of "$OUT/timeline-loaded.txt")
KBUSY_LOADED=$(kernel_busy "$T/loaded.log")
SWITCHES=$(grep -c "SRS resident in VRAM" "$T/loaded.log")
READBACK=$(awk '/SRS host copy read back: circuit=porep/ { n++; sub(/.*elapsed_ms=/, ""); ms += $1 } END { printf "%d %.1f", n, ms / 1000 }' "$T/loaded.log")
if [ "$STOPPED" = 1 ]; then
    echo "PoRep batch under the load: stopped at the time budget (BUDGET_S=$BUDGET_S) after $el_loaded s," \
         "$DONE_LOADED of $COUNT proofs completed"
else
    echo "PoRep batch under the load: $el_loaded s"
fi
# the daemon's stop: SIGTERM (it drains), and a second signal if it is still busy after 30 s
# (a stopped batch may leave a PoRep key being read back under the device lock)
kill -TERM "$PID"
for _ in $(seq 1 300); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$PID" 2>/dev/null && { echo "deadline-bench: the daemon still ran 30 s after SIGTERM: a second signal"; kill -TERM "$PID"; }
wait "$PID" || echo "deadline-bench: note: the daemon's exit status after SIGTERM: $?"
PID=

# 7. every PoSt proof of the loaded phase verified apart from the daemon
BAD_APART=0
while IFS=$'\t' read -r phase kind tag rc st wall rest; do
    [ "$phase" = load ] && [ "$st" = COMPLETED ] || continue
    verify_post "$kind" "$tag" || { BAD_APART=$((BAD_APART + 1)); echo "$tag: does not verify apart from the daemon"; }
done < "$OUT/requests.tsv"

# 8. the summary
stats() {   # PHASE KIND -> "n median worst" of the COMPLETED requests' wall ms
    awk -F'\t' -v p="$1" -v k="$2" '$1 == p && $2 == k && $5 == "COMPLETED" { n++; v[n] = $6 + 0 }
    END {
        for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
        if (n) printf "%d %.0f %.0f\n", n, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[n]
        else print "0 0 0"
    }' "$OUT/requests.tsv"
}
BAD_REQ=$(awk -F'\t' '$5 != "COMPLETED" { n++ } END { print n + 0 }' "$OUT/requests.tsv")
read -r WA_N WA_MED WA_MAX <<< "$(stats alone winning)"
read -r WL_N WL_MED WL_MAX <<< "$(stats load winning)"
read -r DA_N DA_MED DA_MAX <<< "$(stats alone window)"
read -r DL_N DL_MED DL_MAX <<< "$(stats load window)"
SENT_WIN=$(awk -F'\t' '$1 == "load" && $2 == "winning" { n++ } END { print n + 0 }' "$OUT/requests.tsv")
PASSES=0
MISSES=0
goal() {   # VAR CONDITION: VAR=PASS|MISS (an awk condition), counted
    if awk "BEGIN { exit !($2) }"; then printf -v "$1" PASS; PASSES=$((PASSES + 1))
    else printf -v "$1" MISS; MISSES=$((MISSES + 1)); fi
}
W_GOAL=$((DA_MAX + LOCK_MED))
LOSS=$(awk -v a="$S_ALONE" -v b="$S_LOADED" 'BEGIN { if (a > 0 && b > 0) printf "%.1f", (b - a) / a * 100 }')
goal G_WIN "$WL_N > 0 && $WL_MAX <= $WIN_GOAL_MS"
goal G_ARR "$SENT_WIN >= $COUNT_WINNING"
goal G_WINDOW "$DL_N > 0 && $DL_MAX <= $W_GOAL"
goal G_LOSS "${LOSS:-1e9} <= $LOSS_GOAL_PCT"
goal G_BUSY "${KBUSY_LOADED:-0} >= $BUSY_GOAL"
read -r RB_N RB_S <<< "$READBACK"
{
    echo "=== deadline-bench summary ==="
    echo "device:      ${DEVICE:-no GPU (CPU provers: a dry run; the phases of two provers overlap, so the kernel fraction may pass 1)}"
    echo "sizes:       PoRep C2 and WinningPoSt $SIZE, WindowPoSt $WSIZE (registered PoSt proofs $WIN_REG / $WIN_REG_W)"
    echo "load:        $SENT_WIN WinningPoSt (CRITICAL) every $INTERVAL s, $((SENT - SENT_WIN)) WindowPoSt (HIGH) every" \
         "$WINDOW_INTERVAL s, during a PoRep C2 batch of $COUNT at -j $CONC"
    [ "$SKIPPED" -gt 0 ] && echo "             $SKIPPED arrival(s) came after the batch ended and were not sent"
    awk -F'\t' '$1 == "load" { printf "  %-16s %6s ms  %s (daemon: total %s, queue %s, srs %s, synth %s, gpu %s ms)\n", $3, $6, $5, $7, $8, $9, $10, $11 }' \
        "$OUT/requests.tsv"
    printf "WinningPoSt alone:        n=%-3s median %6s ms  worst %6s ms\n" "$WA_N" "$WA_MED" "$WA_MAX"
    printf "WinningPoSt under load:   n=%-3s median %6s ms  worst %6s ms   goal worst <= %s ms: %s\n" \
        "$WL_N" "$WL_MED" "$WL_MAX" "$WIN_GOAL_MS" "$G_WIN"
    printf "  arrivals during the batch: %s, goal >= COUNT_WINNING=%s: %s\n" "$SENT_WIN" "$COUNT_WINNING" "$G_ARR"
    printf "WindowPoSt alone:         n=%-3s median %6s ms  worst %6s ms\n" "$DA_N" "$DA_MED" "$DA_MAX"
    printf "WindowPoSt under load:    n=%-3s median %6s ms  worst %6s ms   goal worst <= alone %s + PoRep lock %s = %s ms: %s\n" \
        "$DL_N" "$DL_MED" "$DL_MAX" "$DA_MAX" "$LOCK_MED" "$W_GOAL" "$G_WINDOW"
    printf "PoRep partition device lock (batch alone): median %s ms, max %s ms (%s partitions)\n" "$LOCK_MED" "$LOCK_MAX" "$LOCK_N"
    printf "PoRep batch alone:        %s s/proof steady (-c %s)\n" "${S_ALONE:-?}" "$ALONE_COUNT"
    printf "PoRep batch under load:   %s s/proof steady (-c %s)%s\n" "${S_LOADED:-?}" "$COUNT" \
        "$([ "$STOPPED" = 1 ] && echo " (stopped at BUDGET_S after $el_loaded s: $DONE_LOADED of $COUNT proofs)")"
    printf "throughput loss:          %s %%   goal <= %s %%: %s\n" "${LOSS:-?}" "$LOSS_GOAL_PCT" "$G_LOSS"
    printf "GPU busy fraction:        %s in kernels under load (%s alone)   goal >= %s: %s\n" "${KBUSY_LOADED:-?}" \
        "${KBUSY_ALONE:-?}" "$BUSY_GOAL" "$G_BUSY"
    printf "  device lock held:       %s under load (%s alone; it also covers reading a key back)\n" \
        "${BUSY_LOADED:-?}" "${BUSY_ALONE:-?}"
    printf "key switches under load:  %s key uploads; the PoRep key read back from its file %s time(s), %s s\n" \
        "$SWITCHES" "$RB_N" "$RB_S"
    printf "proofs:                   %s PoSt requests, %s not COMPLETED, %s verified apart from the daemon;" \
        "$(wc -l < "$OUT/requests.tsv")" "$BAD_REQ" "$(find "$OUT/req" -name '*.verify.txt' | wc -l)"
    printf " PoRep: %s failed under load, the warm-up proof verified apart\n" "$FAILED_LOADED"
    echo "goals:                    $PASSES PASS, $MISSES MISS (a MISS does not fail the run)"
} | tee "$OUT/summary.txt"
NBAD=$((BAD_REQ + FAILED_LOADED + BAD_APART))
if [ "$NBAD" -gt 0 ]; then
    echo "deadline-bench: FAIL: $BAD_REQ PoSt request(s) not COMPLETED, $FAILED_LOADED PoRep proof(s) failed," \
         "$BAD_APART PoSt proof(s) not verified apart from the daemon (requests.tsv, req/, batch-loaded.txt)"
    exit 1
fi
echo "deadline-bench: DONE: every proof verified (logs and figures in $OUT)"
