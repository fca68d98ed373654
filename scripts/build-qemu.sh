#!/bin/sh
# Builds the QEMU that pmuos runs: Debian bookworm's own QEMU 7.2 source
# package, for x86_64 only, with the fixes in scripts/qemu-fixes/ (QEMU
# issue 1381's abort; ivshmem's double free of a departed peer; -icount's
# round-robin turns, which starved the vCPU after one that ran to every
# timer), into
# $PREFIX (default /usr/local/lib/pmuos-qemu). Why this QEMU and what the
# others cost: docs/design.md §11 "The QEMU pmuos runs".
#
# `build-qemu.sh --check` exits 0 if $PREFIX holds a QEMU with this set of
# fixes, 1 if not. Run by scripts/install-deps.sh when it does not; about
# 4 minutes on 2 cores (the download, configure, 1,430 compilations). Needs
# the packages install-deps.sh installs and a deb-src line for bookworm in
# apt's sources (install-deps.sh adds one when none is there).
set -eu

PREFIX=${PREFIX:-/usr/local/lib/pmuos-qemu}
HERE=$(cd "$(dirname "$0")" && pwd)
# The version string says which fixes a binary has; qemu.sh and install-deps.sh
# read it. Raise the number with every change to scripts/qemu-fixes/ or to
# configure's options below.
FIXES=pmuos-fixes-4

die() { echo "build-qemu: $*" >&2; exit 1; }

if [ "${1:-}" = --check ]; then
	"$PREFIX/qemu-system-x86_64" --version 2>/dev/null | grep -q "$FIXES"
	exit
fi
[ $# -eq 0 ] || die "usage: build-qemu.sh [--check]"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pmuos-qemu.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
echo "build-qemu: Debian's QEMU source package into $WORK" >&2
apt-get source -qq qemu >/dev/null 2>apt.log || die "apt-get source qemu failed (a deb-src line for bookworm?): $(tail -3 apt.log)"
SRC=$(find . -maxdepth 1 -type d -name 'qemu-*' | head -1)
[ -n "$SRC" ] || die "apt-get source left no qemu-* directory"
VERSION=$(cd "$SRC" && dpkg-parsechangelog -S Version)
case "$VERSION" in 1:7.2*) ;; *) die "Debian's QEMU source is $VERSION; the fixes are for 7.2" ;; esac
for p in "$HERE"/qemu-fixes/*.patch; do
	patch -d "$SRC" -p1 -s --dry-run < "$p" >/dev/null || die "$(basename "$p") does not apply to QEMU $VERSION"
	patch -d "$SRC" -p1 -s < "$p"
done
mkdir "$SRC/b"
cd "$SRC/b"
# x86_64 system emulation only, TCG with plugins, no optional library but
# vvfat and qcow1, which vvfat writes through (the UEFI boot's ESP is a
# directory, -drive file=fat:rw:DIR); the firmware from Debian's packages
# (seabios, ovmf, ipxe-qemu), as Debian's own build finds it (debian/rules
# FIRMWAREPATH).
../configure --target-list=x86_64-softmmu --without-default-features --enable-tcg --enable-plugins --enable-vvfat --enable-qcow1 \
	--disable-docs --disable-werror --disable-install-blobs --with-git-submodules=ignore \
	--prefix="$PREFIX" --firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu \
	--with-pkgversion="Debian $VERSION, $FIXES" >configure.log 2>&1 ||
	die "configure failed: $(tail -5 configure.log)"
ninja qemu-system-x86_64 >ninja.log 2>&1 || die "the build failed: $(tail -5 ninja.log)"
./qemu-system-x86_64 --version | grep -q "$FIXES" || die "the binary does not name $FIXES"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO mkdir -p "$PREFIX"
$SUDO install -m 0755 qemu-system-x86_64 "$PREFIX/qemu-system-x86_64.new"
$SUDO mv -f "$PREFIX/qemu-system-x86_64.new" "$PREFIX/qemu-system-x86_64"
echo "build-qemu: $PREFIX/qemu-system-x86_64 ($("$PREFIX/qemu-system-x86_64" --version | head -1))" >&2
