#!/bin/sh
# Installs the Debian packages pmuos needs to build, run and test.
# Only missing packages are installed; apt-get runs through sudo when not root.
set -eu

PKGS="
gcc make binutils
qemu-system-x86
ovmf
gnu-efi
libcmocka-dev
python3 python3-pytest python3-pexpect
libpfm4-dev
libdw-dev libelf-dev
linux-libc-dev linux-perf hotspot
libjson-c-dev libedit-dev
newlib-source glibc-source
clang libclang-rt-14-dev
valgrind
gnuplot-nox
chromium python3-pil
"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
