#!/bin/sh
# Installs the Debian packages pmuos needs to build, run and test.
# Only missing packages are installed; apt-get runs through sudo when not root.
# Then the QEMU pmuos runs (scripts/build-qemu.sh: Debian's QEMU 7.2 source
# rebuilt with scripts/qemu-fixes/), if /usr/local/lib/pmuos-qemu lacks it.
set -eu

PKGS="
gcc make binutils
qemu-system-x86
ovmf
gnu-efi
libcmocka-dev
python3 python3-pytest python3-pexpect
libpfm4-dev
libcapstone-dev
libdw-dev libelf-dev
linux-libc-dev linux-perf hotspot
libjson-c-dev libedit-dev
newlib-source glibc-source gcc-12-source
clang libclang-rt-14-dev
valgrind
gnuplot-nox
chromium python3-pil
dpkg-dev meson ninja-build pkg-config libglib2.0-dev libpixman-1-dev zlib1g-dev libfdt-dev
"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
	echo "install-deps: installing$missing" >&2
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

"$(dirname "$0")/build-qemu.sh" --check && exit 0
# Debian's QEMU source: apt needs a deb-src line for the suite the binaries come from.
if ! apt-cache showsrc qemu 2>/dev/null | grep -q '^Package: qemu$'; then
	echo "install-deps: adding Debian bookworm's sources to apt (/etc/apt/sources.list.d/pmuos-deb-src.sources)" >&2
	printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm bookworm-updates' \
		'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
		$SUDO tee /etc/apt/sources.list.d/pmuos-deb-src.sources >/dev/null
	$SUDO apt-get update -qq
fi
"$(dirname "$0")/build-qemu.sh"
