#!/usr/bin/env bash
# make install and make deb, checked as a user would see them:
#  1. `cmake --install` into a staging folder (DESTDIR) puts the binary, the man pages, the bash
#     completion and the docs under the prefix; the staged knee runs from another folder, and an
#     strace of a short sweep shows it opening nothing in the source or build tree;
#  2. cpack builds the .deb: its Depends come from dpkg-shlibdeps, Recommends/Suggests name the
#     optional components, lintian reports no error (warnings are printed, and explained in
#     docs/install.md); dpkg -i installs it, `knee --version`, `man -w knee-sweep` and a short
#     `knee sweep` work from /, and dpkg -r removes every file again.
# Needs root for dpkg (CI runs as root); skipped (exit 77) without it, and when a knee package is
# already installed: the test does not replace or remove a user's knee.
# usage: deb_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD=$(cd "$1" && pwd); SRC=$(cd "$2" && pwd)
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }
tmp=$(mktemp -d)
installed=
# cmake --install and cpack rewrite the build folder's install_manifest.txt, which a user's
# `make install` from this folder may need for `make uninstall`: kept and put back.
manifest=$BUILD/install_manifest.txt
[ -f "$manifest" ] && cp -p "$manifest" "$tmp/manifest.kept"
cleanup() {
  [ -n "$installed" ] && dpkg -r knee > /dev/null 2>&1
  if [ -f "$tmp/manifest.kept" ]; then cp -p "$tmp/manifest.kept" "$manifest"; else rm -f "$manifest"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# 1. make install into a staging folder.
DESTDIR=$tmp/stage cmake --install "$BUILD" --prefix /usr/local > "$tmp/install.log"
stage=$tmp/stage/usr/local
for f in bin/knee share/man/man1/knee.1.gz share/man/man1/knee-sweep.1.gz \
         share/bash-completion/completions/knee share/doc/knee/README.md \
         share/doc/knee/docs/methodology.md share/doc/knee/copyright; do
  [ -e "$stage/$f" ] || err "make install did not install $f"
done
(cd / && "$stage/bin/knee" --version > /dev/null) || err "the staged knee does not run"
# detect_leaks=0: an ASan build's leak checker cannot run under ptrace (CI packages that build).
(cd "$tmp" && ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=%file -o "$tmp/strace.log" \
   "$stage/bin/knee" sweep --levels 1 \
   -d 100ms -w 0 > /dev/null 2>&1) || err "the staged knee's sweep failed"
if grep -E "\"($SRC|$BUILD)[/\"]" "$tmp/strace.log" | grep -v ENOENT > "$tmp/opened"; then
  err "the staged knee opened files in the source or build tree: $(head -3 "$tmp/opened")"
fi

# 2. the Debian package.
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: dpkg -i needs root (CI runs as root)"
  [ "$fail" -eq 0 ] && exit 77 || exit 1
fi
if dpkg-query -W -f='${Status}' knee 2>/dev/null | grep -q installed; then
  echo "SKIP: a knee package is installed on this host; the test neither replaces nor removes it"
  [ "$fail" -eq 0 ] && exit 77 || exit 1
fi
(cd "$BUILD" && cpack -G DEB -B "$tmp/deb" > "$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log" >&2; err "cpack failed"; exit 1; }
deb=$(ls "$tmp"/deb/knee_*.deb)
fields=$(dpkg-deb -f "$deb" Package Version Depends Recommends Suggests Section)
echo "$fields"
grep -q '^Depends:.*libc6' <<< "$fields" || err "Depends does not come from dpkg-shlibdeps: $fields"
grep -q '^Depends:.*libssl3' <<< "$fields" || err "Depends lacks libssl3 (OpenSSL, linked)"
grep -q '^Recommends:.*nginx-light' <<< "$fields" || err "Recommends lacks nginx-light"
grep -q '^Suggests:.*postgresql.*redis-server.*openmpi-bin' <<< "$fields" ||
  err "Suggests lacks postgresql, redis-server, openmpi-bin"
if command -v lintian > /dev/null; then
  lintian --tag-display-limit 0 "$deb" > "$tmp/lintian.log" 2>&1 || true
  cat "$tmp/lintian.log"
  ! grep -q '^E:' "$tmp/lintian.log" || err "lintian reports errors (above)"
else
  err "lintian is not installed (scripts/install-deps.sh installs it)"
fi
dpkg -i "$deb" > "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; err "dpkg -i failed"; exit 1; }
installed=1
# /usr/bin/knee by its path: a make install under /usr/local may come first on PATH.
(cd / && /usr/bin/knee --version) || err "knee --version failed after dpkg -i"
man -w knee-sweep > /dev/null || err "man -w knee-sweep finds no page"
(cd / && /usr/bin/knee sweep --levels 1,2 -d 100ms -w 0 > "$tmp/sweep.out" 2>&1) ||
  { cat "$tmp/sweep.out" >&2; err "knee sweep failed after dpkg -i"; }
grep -q "Little's law" "$tmp/sweep.out" || err "the installed knee's sweep printed no Little's law line"
files=$(dpkg -L knee | grep -v '/$' || true)
dpkg -r knee > /dev/null; installed=
for f in $files; do
  [ -d "$f" ] || [ ! -e "$f" ] || err "dpkg -r left $f"
done
[ "$fail" -eq 0 ] && echo "PASS: make install, the .deb, dpkg -i and dpkg -r"
exit "$fail"
