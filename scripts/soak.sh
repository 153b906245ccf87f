#!/usr/bin/env bash
# soak.sh: a bounded soak of cuzk-daemon (issue 28; not in CI). For DURATION seconds a daemon on
# a temporary config (CPU provers, [daemon] state_dir in the temp dir, so the job journal is on)
# takes a mix of load:
#   - 3 background clients, each proving one job after another with its own request ids
#     (soak-cK-N): SYNTHETIC 4096 constraints, every 6th job a 2 KiB PoRep C2;
#   - a canceller: a SYNTHETIC 65536 job (soak-xN), then `cuzk-bench cancel` on it;
#   - an SRS eviction (`cuzk-bench evict`) of synthetic-4096 / porep-2k every ~45 s;
#   - malformed requests every ~20 s (a truncated C1, a request id with a control character,
#     an overlong request id, a PoRep without C1) that must be refused while the daemon serves;
#   - two `kill -9` of the daemon, at 1/3 and 2/3 of DURATION, restarted on the same state_dir.
# A client whose call is cut by a kill resubmits the same request id once the daemon is back
# (cuzk-bench has no AwaitProof-only command): that joins the replayed job, never a fresh one —
# which the script checks in the daemon's logs (each job unfinished at a kill must be re-queued
# by the next start's journal replay, not enqueued afresh).
# At the end: jobs accepted / completed / cancelled / lost (accepted, not cancelled, never
# completed) / unverified (COMPLETED without a verified proof), refused malformed requests, and
# the daemon's RSS (start, end, VmHWM) per daemon instance. Exit 1 if lost or unverified > 0 (or
# a malformed request was accepted, or the last daemon does not exit 0 on SIGTERM).
#
#   scripts/soak.sh [DURATION_S (1800)] [OUT (soak-out)]
# Needs build/bin/cuzk-daemon and build/bin/cuzk-bench (make -j2 daemon) and local 2 KiB PoRep
# parameters in ${CUZK_DEMO_PARAMS:-~/.cache/cuzk/params-2KiB} (scripts/demo.sh makes them).
set -u
cd "$(dirname "$0")/.."
DUR=${1:-1800}
OUT=${2:-soak-out}
case "$DUR" in ''|*[!0-9]*) echo "usage: scripts/soak.sh [DURATION_S] [OUT]" >&2; exit 2 ;; esac
B=build/bin
for x in cuzk-daemon cuzk-bench; do
  [ -x "$B/$x" ] || { echo "soak: $B/$x missing: run make -j2 daemon first" >&2; exit 2; }
done
PARAMS=${CUZK_DEMO_PARAMS:-${XDG_CACHE_HOME:-$HOME/.cache}/cuzk/params-2KiB}
ls "$PARAMS"/v28-stacked-proof-of-replication-*.params >/dev/null 2>&1 ||
  { echo "soak: no 2 KiB PoRep parameters in $PARAMS (run scripts/demo.sh once)" >&2; exit 2; }
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) && rm -f "$OUT"/daemon.*.log "$OUT"/daemon.*.out
T=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-soak-XXXXXX")
ADDR="unix://$T/cuzk.sock"
LEDGER=$OUT/ledger.txt      # one line per finished request: ID OUTCOME KIND ATTEMPTS [detail]
EVENTS=$OUT/events.txt      # kills, restarts, RSS, evictions, cancels, malformed requests
: >"$LEDGER"; : >"$EVENTS"
bench() { timeout 1200 "$B/cuzk-bench" -a "$ADDR" "$@"; }
ev() { echo "$(date -u +%H:%M:%S) $*" >>"$EVENTS"; }
mem() { awk '/^VmRSS|^VmHWM/ { printf "%s %.0f MB  ", $1, $2 / 1024 }' "/proc/$1/status" 2>/dev/null; }

PID=
BGS=
cleanup() {
  for p in $BGS; do kill "$p" 2>/dev/null; done
  [ -n "$PID" ] && kill -9 "$PID" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cat >"$T/cuzk.toml" <<EOF
# written by scripts/soak.sh
[daemon]
state_dir = "$T/state"
[srs]
param_cache = "$PARAMS"
validation = "curve"
EOF
"$B/cuzk-bench" gen-vanilla porep --sector-size 2KiB -o "$T/c1.json" >"$OUT/gen.txt" 2>&1 ||
  { cat "$OUT/gen.txt"; echo "soak: gen-vanilla failed" >&2; exit 1; }
head -c 400 "$T/c1.json" >"$T/c1-truncated.json"

SEG=0
start_daemon() {
  SEG=$((SEG + 1))
  "$B/cuzk-daemon" -c "$T/cuzk.toml" -l "$ADDR" >"$OUT/daemon.$SEG.out" 2>"$OUT/daemon.$SEG.log" &
  PID=$!
  echo "$PID" >"$T/daemon.pid"
  local i=0
  until grep -q "cuzk-daemon ready" "$OUT/daemon.$SEG.out" 2>/dev/null; do
    kill -0 "$PID" 2>/dev/null || { echo "soak: daemon $SEG exited during startup"; tail -20 "$OUT/daemon.$SEG.log"; exit 1; }
    i=$((i + 1)); [ $i -lt 1200 ] || { echo "soak: daemon $SEG not ready after 120 s"; exit 1; }
    sleep 0.1
  done
  if grep -q "unknown key\|state_dir = \"off\"\|no journal" "$OUT/daemon.$SEG.log"; then
    echo "soak: daemon $SEG runs without its job journal (a stale build? make -j2 daemon):"
    grep "unknown key\|journal" "$OUT/daemon.$SEG.log"; exit 1
  fi
  ev "daemon $SEG ready pid=$PID $(mem "$PID")"
  echo "$SEG $(awk '/^VmRSS/ { print $2 }' /proc/$PID/status)" >>"$T/rss-start"
}
daemon_up() { [ -S "$T/cuzk.sock" ] && [ -f "$T/up" ]; }

T0=$(date +%s)
END=$((T0 + DUR))
DEADLINE=$((END + 900))   # clients give up waiting for a job this long after the load ends
touch "$T/up"
start_daemon

# run_job ID KIND ARGS...: one request, resubmitted with the same id while the daemon is away.
run_job() {
  local id=$1 kind=$2; shift 2
  local a=0 f="$T/r.$id" st err
  while :; do
    a=$((a + 1))
    while ! daemon_up && [ "$(date +%s)" -lt $DEADLINE ]; do sleep 0.5; done
    bench single "$@" --request-id "$id" >"$f" 2>&1
    st=$(sed -n 's/^status: *//p' "$f" | head -1)
    case "$st" in
      COMPLETED)
        if grep -q '^proof: *[1-9][0-9]* bytes' "$f" && grep -q '^verified: *yes' "$f"; then
          echo "$id COMPLETED $kind $a" >>"$LEDGER"
        else
          echo "$id UNVERIFIED $kind $a" >>"$LEDGER"
        fi
        return ;;
      CANCELLED) echo "$id CANCELLED $kind $a" >>"$LEDGER"; return ;;
      RPC_ERROR|"")
        err=$(sed -n 's/^error: *//p' "$f" | head -1)
        case "$err" in
          INVALID_ARGUMENT*|FAILED_PRECONDITION*|PERMISSION_DENIED*|UNAUTHENTICATED*)
            echo "$id REFUSED $kind $a $err" >>"$LEDGER"; return ;;
        esac
        if [ "$(date +%s)" -ge $DEADLINE ]; then echo "$id GAVE_UP $kind $a $err" >>"$LEDGER"; return; fi
        sleep 1 ;;   # daemon killed mid-call, restarting, or busy: same id again
      *) echo "$id $st $kind $a $(sed -n 's/^error: *//p' "$f" | head -1)" >>"$LEDGER"; return ;;
    esac
  done
}

client() {
  local k=$1 n=0
  while [ "$(date +%s)" -lt $END ]; do
    n=$((n + 1))
    if [ $(((n + k) % 6)) -eq 0 ]; then
      run_job "soak-c$k-$n" porep -t porep --c1 "$T/c1.json"
    else
      run_job "soak-c$k-$n" synthetic -t synthetic --constraints 4096
    fi
  done
}

canceller() {
  local n=0 p
  while [ "$(date +%s)" -lt $END ]; do
    n=$((n + 1))
    run_job "soak-x$n" synthetic-65536 -t synthetic --constraints 65536 &
    p=$!
    sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.1f", 0.2 + (r % 30) / 10 }')"
    if daemon_up && bench cancel "soak-x$n" >"$T/cancel.out" 2>&1; then
      ev "cancel soak-x$n: $(cat "$T/cancel.out")"
    else
      ev "cancel soak-x$n refused: $(cat "$T/cancel.out")"
    fi
    wait "$p"
    sleep 8
  done
}

evicter() {
  local n=0 id
  while [ "$(date +%s)" -lt $END ]; do
    sleep 45
    n=$((n + 1))
    if [ $((n % 2)) -eq 0 ]; then id=porep-2k; else id=synthetic-4096; fi
    if daemon_up; then ev "evict $id: $(bench evict -c "$id" 2>&1 | tr '\n' ' ')"; fi
  done
}

# Malformed requests: a refusal is INVALID_ARGUMENT at submit or FAILED from the engine; the
# daemon must then still answer status.
malformed() {
  local n=0 f long
  long=$(head -c 600 /dev/zero | tr '\0' 'x')
  while [ "$(date +%s)" -lt $END ]; do
    sleep 20
    daemon_up || continue
    n=$((n + 1)); f="$T/m.out"
    case $((n % 4)) in
      0) bench single -t porep --c1 "$T/c1-truncated.json" --request-id "soak-bad-$n" >"$f" 2>&1; what="truncated C1" ;;
      1) bench single -t synthetic --constraints 4096 --request-id "soak-bad-$n$(printf '\t')x" >"$f" 2>&1; what="request id with a TAB" ;;
      2) bench single -t synthetic --constraints 4096 --request-id "soak-bad-$long" >"$f" 2>&1; what="600-byte request id" ;;
      3) bench single -t porep --request-id "soak-bad-$n" >"$f" 2>&1; what="PoRep without a C1" ;;
    esac
    st=$(sed -n 's/^status: *//p' "$f" | head -1); err=$(sed -n 's/^error: *//p' "$f" | head -1)
    if [ "$st" = COMPLETED ]; then
      echo "MALFORMED_ACCEPTED $what" >>"$T/malformed"; ev "malformed $what: ACCEPTED (COMPLETED)"
    elif [ "$st" = RPC_ERROR ] && ! echo "$err" | grep -q '^INVALID_ARGUMENT'; then
      ev "malformed $what: not counted (daemon away?): $err"
    else
      echo "REFUSED $what" >>"$T/malformed"; ev "malformed $what: refused: $st ${err:0:160}"
      bench status >/dev/null 2>&1 || { daemon_up && echo "DEAD_AFTER $what" >>"$T/malformed"; }
    fi
  done
}

for k in 1 2 3; do client $k & BGS="$BGS $!"; done
canceller & BGS="$BGS $!"
evicter & BGS="$BGS $!"
malformed & BGS="$BGS $!"
CL="$BGS"

for frac in 1 2; do
  while [ "$(date +%s)" -lt $((T0 + DUR * frac / 3)) ]; do sleep 1; done
  rm -f "$T/up"
  ev "kill -9 daemon $SEG pid=$PID before: $(mem "$PID")"
  echo "$SEG $(awk '/^VmRSS/ { print $2 }' /proc/$PID/status) $(awk '/^VmHWM/ { print $2 }' /proc/$PID/status)" >>"$T/rss-end"
  kill -9 "$PID"; wait "$PID" 2>/dev/null
  sleep 2
  start_daemon
  touch "$T/up"
done

for p in $CL; do wait "$p"; done
BGS=
ev "load done; final daemon $SEG: $(mem "$PID")"
echo "$SEG $(awk '/^VmRSS/ { print $2 }' /proc/$PID/status) $(awk '/^VmHWM/ { print $2 }' /proc/$PID/status)" >>"$T/rss-end"
bench status >"$OUT/status-end.txt" 2>&1
kill -TERM "$PID"; DST=0; wait "$PID" || DST=$?
PID=

# ---- accounting ----
GOOD='soak-[cx][0-9]'
acc=$(cat "$OUT"/daemon.*.log | sed -n 's/.*job enqueued: job="\{0,1\}\([^ "]*\).*/\1/p; s/.*journal: job="\{0,1\}\([^ "]*\)"\{0,1\} .*re-queued.*/\1/p' |
      grep "^$GOOD" | sort -u)
echo "$acc" | sed '/^$/d' >"$OUT/accepted.txt"
awk '$2 == "COMPLETED" { print $1 }' "$LEDGER" | sort -u >"$T/completed"
awk '$2 == "CANCELLED" { print $1 }' "$LEDGER" | sort -u >"$T/cancelled"
awk '$2 == "UNVERIFIED" { print $1 }' "$LEDGER" | sort -u >"$T/unverified"
comm -23 "$OUT/accepted.txt" <(sort -u "$T/completed" "$T/cancelled") >"$OUT/lost.txt"
# Journal: each job unfinished at a kill (enqueued or re-queued in that daemon's life, neither
# proved nor cancelled there or by the client) must be re-queued by the next start.
notreplayed=0; replay_note=
for s in 1 2; do
  L=$OUT/daemon.$s.log; N=$OUT/daemon.$((s + 1)).log
  sed -n 's/.*job enqueued: job="\{0,1\}\([^ "]*\).*/\1/p; s/.*journal: job="\{0,1\}\([^ "]*\)"\{0,1\} .*re-queued.*/\1/p' "$L" | grep "^$GOOD" | sort -u >"$T/in.$s"
  { sed -n 's/.*proof completed: job="\{0,1\}\([^ "]*\).*/\1/p' "$L"; cat "$T/cancelled"; } | sort -u >"$T/done.$s"
  comm -23 "$T/in.$s" "$T/done.$s" >"$T/open.$s"
  sed -n 's/.*journal: job="\{0,1\}\([^ "]*\)"\{0,1\} .*re-queued.*/\1/p' "$N" | sort -u >"$T/rq.$s"
  miss=$(comm -23 "$T/open.$s" "$T/rq.$s" | wc -l)
  notreplayed=$((notreplayed + miss))
  replay_note="$replay_note kill $s: $(wc -l <"$T/open.$s") unfinished, $(wc -l <"$T/rq.$s") re-queued, $miss missing;"
  comm -23 "$T/open.$s" "$T/rq.$s" | sed "s/^/not re-queued after kill $s: /" >>"$OUT/lost.txt"
done
dups=$(cat "$OUT"/daemon.*.log | sed -n 's/.*proof completed: job="\{0,1\}\([^ "]*\).*/\1/p' | grep "^$GOOD" | sort | uniq -d | wc -l)
n_acc=$(wc -l <"$OUT/accepted.txt")
n_done=$(wc -l <"$T/completed")
n_can=$(wc -l <"$T/cancelled")
n_lost=$(wc -l <"$OUT/lost.txt")
n_unv=$(wc -l <"$T/unverified")
n_porep=$(awk '$2 == "COMPLETED" && $3 == "porep"' "$LEDGER" | wc -l)
n_other=$(awk '$2 != "COMPLETED" && $2 != "CANCELLED" && $2 != "UNVERIFIED"' "$LEDGER" | wc -l)
n_ref=$(grep -c '^REFUSED' "$T/malformed" 2>/dev/null); n_ref=${n_ref:-0}
n_macc=$(grep -c '^MALFORMED_ACCEPTED\|^DEAD_AFTER' "$T/malformed" 2>/dev/null); n_macc=${n_macc:-0}
n_cancel_sent=$(grep -c '^.\{9\}cancel soak-x[0-9]*: ' "$EVENTS")
n_evict=$(grep -c ' evict ' "$EVENTS")
{
  echo "=== cuzk-daemon soak: ${DUR} s, $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null) ==="
  echo "accepted:       $n_acc  (distinct request ids the daemon enqueued or re-queued)"
  echo "completed:      $n_done  ($n_porep PoRep 2 KiB; each with a proof the daemon verified)"
  echo "cancelled:      $n_can  (of $n_cancel_sent cancel calls answered OK)"
  echo "lost:           $n_lost  (accepted, not cancelled, never completed; must be 0)"
  echo "unverified:     $n_unv  (COMPLETED without a verified proof; must be 0)"
  echo "other outcomes: $n_other  (client requests ending neither COMPLETED nor CANCELLED, see ledger.txt)"
  echo "journal:       $replay_note proved twice: $dups"
  echo "malformed:      $n_ref refused, $n_macc accepted or killed the daemon (must be 0)"
  echo "evictions:      $n_evict calls"
  echo "restarts:       2 x kill -9 on the same state_dir; last daemon's SIGTERM exit status $DST"
  while read -r s r; do
    e=$(awk -v s="$s" '$1 == s { printf "end %.0f MB, VmHWM %.0f MB", $2 / 1024, $3 / 1024 }' "$T/rss-end")
    printf 'daemon %s RSS:  start %.0f MB, %s\n' "$s" "$((r / 1024))" "$e"
  done <"$T/rss-start"
} | tee "$OUT/summary.txt"
if [ "$n_lost" -gt 0 ] || [ "$n_unv" -gt 0 ] || [ "$n_macc" -gt 0 ] || [ "$DST" != 0 ]; then
  echo "soak: FAIL"; exit 1
fi
echo "soak: PASS"
