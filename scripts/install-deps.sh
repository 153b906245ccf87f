#!/bin/sh
# install-deps.sh: install the Debian packages cuzk builds and tests with (idempotent; needs
# root or sudo). Only packages missing from the machine are installed.
set -e
PKGS="make gcc clang libgmp-dev libssl-dev pkg-config curl libsqlite3-dev \
libgrpc-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler \
libmicrohttpd-dev libjansson-dev libsystemd-dev python3-grpcio python3-protobuf \
openssl libclang-rt-14-dev chromium lintian"   # openssl: the CLI tests/e2e/test_security.c makes its TLS certificates with;
# libclang-rt-14-dev: libFuzzer and the sanitizer runtimes for `make fuzz` (only recommended by clang);
# chromium: the headless browser tests/e2e/test_page.c drives against the status page;
# lintian: scripts/test-deb.sh checks the package with it
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
if [ -n "$missing" ]; then
  echo "install-deps: installing$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# promtool (the tests check /metrics with `promtool check metrics`) comes from Debian's
# prometheus package (19 MB); installing that package would also start a Prometheus server,
# so only its promtool (one static binary) is taken out of the .deb, into /usr/local/bin.
if ! command -v promtool >/dev/null 2>&1; then
  d=$(mktemp -d)
  (cd "$d" && apt-get download prometheus >/dev/null 2>&1) || { $SUDO apt-get update -qq; (cd "$d" && apt-get download prometheus >/dev/null); }
  dpkg-deb -x "$d"/prometheus_*.deb "$d/x" && $SUDO install -m 0755 "$d/x/usr/bin/promtool" /usr/local/bin/promtool
  rm -rf "$d"
  echo "install-deps: promtool from Debian's prometheus package in /usr/local/bin"
fi
