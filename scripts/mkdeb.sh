#!/bin/sh
# mkdeb.sh BUILD: the Debian 12 package of cuzk, with dpkg-deb (make deb). With nvcc (the CUDA
# toolkit) the daemon and cuzk-params are the CUDA builds and the package is "cuzk"; without,
# the CPU builds and the package is "cuzk-cpu" (the two conflict). CUZK_DEB_CPU=1 makes the
# CPU package on a machine with nvcc. Writes BUILD/<package>_<version>_amd64.deb and prints
# its path on the last line. See docs/daemon.md ("Install").
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [ -x "$NVCC" ] && [ "${CUZK_DEB_CPU:-0}" != 1 ]; then
    make -s BUILD="$B" NVCC="$NVCC" daemon-gpu
    PICK="INSTALL_DAEMON=$B/bin/cuzk-daemon-gpu INSTALL_PARAMS=$B/bin/cuzk-params-gpu"
    PKG=cuzk; OTHER=cuzk-cpu; FLAVOUR="CUDA build: proves on NVIDIA GPUs (needs the NVIDIA driver)"
else
    PICK="INSTALL_DAEMON=$B/bin/cuzk-daemon INSTALL_PARAMS=$B/bin/cuzk-params"
    PKG=cuzk-cpu; OTHER=cuzk; FLAVOUR="CPU build: proves on the CPU only (no CUDA at build time)"
fi
MAINT=${DEB_MAINTAINER:-cuzk maintainers <cuzk@example.org>}
VERSION=$("$B/bin/cuzk-daemon" --version | awk '{ print $2 }')
ST="$B/deb/$PKG"
rm -rf "$ST"
DOC=/usr/share/doc/$PKG
make -s BUILD="$B" NVCC="$NVCC" $PICK install DESTDIR="$(pwd)/$ST" PREFIX=/usr SYSCONFDIR=/etc \
     UNITDIR=/lib/systemd/system DOCDIR="$DOC" >/dev/null
for p in "$ST"/usr/bin/*; do
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$p"
done
# Debian's doc files: the copyright and a changelog (gzip -9n: reproducible)
cat > "$ST$DOC/copyright" <<EOT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: cuzk
Source: the cuzk repository

Files: *
Copyright: 2025-2026 the cuzk authors
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this software
 and associated documentation files (the "Software"), to deal in the Software without
 restriction, including without limitation the rights to use, copy, modify, merge, publish,
 distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
 Software is furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies or
 substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
 BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
 NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
 DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
EOT
printf '%s (%s) unstable; urgency=medium\n\n  * Package built from commit %s.\n\n -- %s  %s\n' \
    "$PKG" "$VERSION" "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" "$MAINT" "$(LC_ALL=C date -R)" |
    gzip -9n > "$ST$DOC/changelog.gz"
# Depends: the Debian packages that hold the shared libraries the programs load
DEPS=$(for p in "$ST"/usr/bin/*; do ldd "$p"; done | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
       while read -r lib; do dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null; done |
       cut -d: -f1 | sort -u | paste -sd, - | sed 's/,/, /g')
mkdir -p "$ST/DEBIAN"
cat > "$ST/DEBIAN/control" <<EOT
Package: $PKG
Version: $VERSION
Architecture: amd64
Maintainer: $MAINT
Installed-Size: $(du -sk --exclude=DEBIAN "$ST" | cut -f1)
Depends: adduser, $DEPS
Conflicts: $OTHER
Replaces: $OTHER
Section: misc
Priority: optional
Description: persistent Groth16 proving daemon for Filecoin (Curio's cuzk)
 cuzk-daemon proves Filecoin PoRep C2, SnapDeals and PoSt for Curio over
 gRPC (cuzk.v1.ProvingEngine), with its parameters resident, a job journal
 in /var/lib/cuzk, and /status and /metrics.
 $FLAVOUR.
 .
 The systemd unit cuzk-daemon.service runs it as the cuzk user on
 /etc/cuzk/cuzk.toml; enable it with: systemctl enable --now cuzk-daemon
EOT
echo /etc/cuzk/cuzk.toml > "$ST/DEBIAN/conffiles"
cat > "$ST/DEBIAN/postinst" <<'EOT'
#!/bin/sh
# the cuzk system user the unit runs as, in the GPU device groups where they exist
set -e
if [ "$1" = configure ]; then
    if ! getent passwd cuzk >/dev/null; then
        adduser --system --group --home /var/lib/cuzk --no-create-home \
            --gecos "cuzk proving daemon" cuzk >/dev/null
    fi
    for g in video render; do
        if getent group "$g" >/dev/null; then adduser cuzk "$g" >/dev/null 2>&1 || true; fi
    done
    if [ -d /run/systemd/system ]; then systemctl --system daemon-reload >/dev/null || true; fi
fi
exit 0
EOT
cat > "$ST/DEBIAN/prerm" <<'EOT'
#!/bin/sh
# a removed daemon must not keep running: stop it (SIGTERM drains, see docs/daemon.md)
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    deb-systemd-invoke stop cuzk-daemon.service >/dev/null 2>&1 || true
    deb-systemd-helper disable cuzk-daemon.service >/dev/null 2>&1 || true
fi
exit 0
EOT
cat > "$ST/DEBIAN/postrm" <<'EOT'
#!/bin/sh
# remove leaves only the configuration (a conffile; purge takes it): the journal of jobs no
# daemon will answer, and the cuzk user and group, go with the package.
set -e
case "$1" in
remove|purge)
    rm -rf /var/lib/cuzk
    if getent passwd cuzk >/dev/null && command -v deluser >/dev/null; then
        deluser --system cuzk >/dev/null 2>&1 || true
    fi
    if getent group cuzk >/dev/null && command -v delgroup >/dev/null; then
        delgroup --system cuzk >/dev/null 2>&1 || true
    fi
    if [ -d /run/systemd/system ]; then systemctl --system daemon-reload >/dev/null || true; fi
    ;;
esac
if [ "$1" = purge ]; then rmdir /etc/cuzk 2>/dev/null || true; fi
exit 0
EOT
chmod 0755 "$ST/DEBIAN/postinst" "$ST/DEBIAN/prerm" "$ST/DEBIAN/postrm"
(cd "$ST" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort | xargs md5sum) > "$ST/DEBIAN/md5sums"
chmod 0644 "$ST/DEBIAN/md5sums" "$ST/DEBIAN/control" "$ST/DEBIAN/conffiles"
find "$ST" -type d -exec chmod 0755 {} +
OUTDEB="$B/${PKG}_${VERSION}_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$ST" "$OUTDEB" >/dev/null
echo "$OUTDEB"
