#!/bin/sh
# install-deps.sh: install the Debian packages cuzk builds and tests with (idempotent; needs
# root or sudo). Only packages missing from the machine are installed.
set -e
PKGS="make gcc clang libgmp-dev libssl-dev pkg-config curl libsqlite3-dev \
libgrpc-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler \
libmicrohttpd-dev libjansson-dev libsystemd-dev python3-grpcio python3-protobuf \
openssl libclang-rt-14-dev chromium"   # openssl: the CLI tests/e2e/test_security.c makes its TLS certificates with;
# libclang-rt-14-dev: libFuzzer and the sanitizer runtimes for `make fuzz` (only recommended by clang);
# chromium: the headless browser tests/e2e/test_page.c drives against the status page
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
