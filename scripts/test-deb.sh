#!/bin/sh
# test-deb.sh: the Debian package as an operator uses it (run by scripts/test.sh as root; CI
# runs as root on Debian 12). Builds it (CPU flavour: CI has no GPU), lintian must report no
# error, dpkg -i, checks the user, unit and conffile, runs the INSTALLED daemon on the
# INSTALLED config as systemd would (the cuzk user, STATE_DIRECTORY=/var/lib/cuzk, /run/curio)
# and proves a SYNTHETIC job with the installed cuzk-bench, checks the journal is in
# /var/lib/cuzk and the installed daemon's metrics pass promtool, stops it, dpkg -r and asserts
# that only the conffile is left, then purges. Prints "test-deb: PASS" or the failed step.
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
fail() { echo "test-deb: FAIL: $*"; [ -f "$T/daemon.log" ] && tail -20 "$T/daemon.log"; cleanup; exit 1; }
cleanup() {
    [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null
    if dpkg-query -W -f='${Status}' cuzk-cpu 2>/dev/null | grep -q "ok installed\|config-files"; then
        dpkg --purge cuzk-cpu >/dev/null 2>&1
    fi
    rm -rf "$T"
}
[ "$(id -u)" = 0 ] || { echo "test-deb: SKIP (needs root: it installs the package)"; exit 0; }
for p in cuzk cuzk-cpu; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        echo "test-deb: SKIP ($p is installed on this machine; not touching it)"; exit 0
    fi
done
T=$(mktemp -d /tmp/cuzk-deb-XXXXXX)
PID=
DEB=$(CUZK_DEB_CPU=1 scripts/mkdeb.sh "$B" | tail -1) || fail "make deb"
echo "== $DEB ($(du -h "$DEB" | cut -f1))"
lintian --fail-on error "$DEB" > "$T/lintian.txt" 2>&1 || { cat "$T/lintian.txt"; fail "lintian reports errors"; }
echo "lintian: $(grep -c '^E:' "$T/lintian.txt") errors, $(grep -c '^W:' "$T/lintian.txt") warnings"
dpkg -i "$DEB" > "$T/dpkg-i.txt" 2>&1 || { cat "$T/dpkg-i.txt"; fail "dpkg -i"; }
getent passwd cuzk >/dev/null || fail "no cuzk user after dpkg -i"
/usr/bin/cuzk-daemon --print-default-config | cmp -s - /etc/cuzk/cuzk.toml ||
    fail "/etc/cuzk/cuzk.toml is not what cuzk-daemon --print-default-config prints"
U=/lib/systemd/system/cuzk-daemon.service
grep -q '^ExecStart=/usr/bin/cuzk-daemon -c /etc/cuzk/cuzk.toml$' $U || fail "$U: ExecStart"
grep -q '^StateDirectory=cuzk$' $U && grep -q '^User=cuzk$' $U || fail "$U: StateDirectory/User"
grep -qx /etc/cuzk/cuzk.toml /var/lib/dpkg/info/cuzk-cpu.conffiles || fail "cuzk.toml is not a conffile"
dpkg -L cuzk-cpu > "$T/files.txt"

# ---- the installed daemon on the installed config, as the unit runs it ----
install -d -o cuzk -g cuzk -m 0755 /run/curio /var/lib/cuzk
setpriv --reuid=cuzk --regid=cuzk --init-groups env STATE_DIRECTORY=/var/lib/cuzk /usr/bin/cuzk-daemon -c /etc/cuzk/cuzk.toml \
    > "$T/daemon.out" 2> "$T/daemon.log" &
PID=$!
i=0
until grep -q "cuzk-daemon ready" "$T/daemon.out" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 600 ] || fail "installed daemon not ready after 60 s"
    kill -0 $PID 2>/dev/null || fail "installed daemon exited before ready"
    sleep 0.1
done
A=unix:///run/curio/cuzk.sock
/usr/bin/cuzk-bench -a $A single -t synthetic --constraints 4096 > "$T/job.txt" 2>&1 ||
    { cat "$T/job.txt"; fail "SYNTHETIC job through the installed daemon"; }
grep -q "COMPLETED" "$T/job.txt" || { cat "$T/job.txt"; fail "the job did not complete"; }
[ -f /var/lib/cuzk/journal.db ] || fail "no journal in /var/lib/cuzk (StateDirectory)"
[ "$(stat -c %U /var/lib/cuzk/journal.db)" = cuzk ] || fail "the journal is not the cuzk user's"
/usr/bin/cuzk-bench -a $A metrics > "$T/metrics.txt" 2>&1 || fail "metrics"
if command -v promtool >/dev/null; then
    promtool check metrics < "$T/metrics.txt" || fail "promtool check metrics on the installed daemon"
fi
grep -q '^cuzk_proofs_completed_total 1$' "$T/metrics.txt" || fail "metrics do not count the proof"
kill -TERM $PID; wait $PID; rc=$?; PID=
[ $rc = 0 ] || fail "installed daemon exited $rc on SIGTERM"
echo "installed daemon proved: $(grep -m1 COMPLETED "$T/job.txt")"

# ---- dpkg -r leaves the conffile and nothing else ----
dpkg -r cuzk-cpu > "$T/dpkg-r.txt" 2>&1 || { cat "$T/dpkg-r.txt"; fail "dpkg -r"; }
dpkg-query -W -f='${Status}' cuzk-cpu | grep -q "deinstall ok config-files" || fail "status after dpkg -r"
[ -f /etc/cuzk/cuzk.toml ] || fail "dpkg -r removed the conffile"
left=$(while read -r f; do [ "$f" != /etc/cuzk/cuzk.toml ] && [ -f "$f" ] && echo "$f"; done < "$T/files.txt")
[ -z "$left" ] || fail "dpkg -r left files: $left"
[ ! -e /var/lib/cuzk ] || fail "dpkg -r left /var/lib/cuzk"
! getent passwd cuzk >/dev/null || fail "dpkg -r left the cuzk user"
! getent group cuzk >/dev/null || fail "dpkg -r left the cuzk group"
for f in /run/curio/cuzk.sock /run/curio/cuzk.sock.lock; do [ ! -e "$f" ] || fail "$f left behind"; done
rmdir /run/curio 2>/dev/null
dpkg --purge cuzk-cpu >/dev/null 2>&1 || fail "dpkg --purge"
[ ! -e /etc/cuzk ] || fail "dpkg --purge left /etc/cuzk"
rm -rf "$T"
echo "test-deb: PASS"
