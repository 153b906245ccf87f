#!/bin/sh
# demo.sh: the README's main job: install missing packages, build, start cuzk-daemon on its
# embedded default config, prove a SYNTHETIC circuit through cuzk-bench (the daemon verifies
# it before answering), show the result and timings, and stop the daemon with SIGTERM.
#   scripts/demo.sh [CONSTRAINTS]        (default 4096)
set -eu
N=${1:-4096}
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
make -j"$(nproc)" all >/dev/null
DIR=$(mktemp -d /tmp/cuzk-demo-XXXXXX)
ADDR="unix://$DIR/cuzk.sock"
# No -c and no /data/zk/cuzk.toml: the embedded defaults, with only the address overridden.
build/bin/cuzk-daemon -l "$ADDR" >"$DIR/daemon.out" 2>"$DIR/daemon.log" &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
i=0
until grep -q "cuzk-daemon ready" "$DIR/daemon.out" 2>/dev/null; do
  i=$((i + 1)); [ $i -lt 300 ] || { cat "$DIR/daemon.log"; exit 1; }
  kill -0 $PID 2>/dev/null || { cat "$DIR/daemon.log"; exit 1; }
  sleep 0.1
done
cat "$DIR/daemon.out"
build/bin/cuzk-bench -a "$ADDR" single -t synthetic --constraints "$N"
build/bin/cuzk-bench -a "$ADDR" status
kill -TERM $PID
wait $PID && echo "cuzk-daemon stopped (exit 0); log: $DIR/daemon.log"
trap - EXIT
