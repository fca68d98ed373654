#!/bin/sh
# QEMU launcher for pmuos: the one place that spells out the emulated card.
# Used by `make run`, the system tests and the benchmarks alike.
#
# Environment (all optional):
#   CPUS    hardware threads, 1..255 (default 4). Multiples of 4 get a KNC-like
#           topology: 1 socket, CPUS/4 cores, 4 threads per core.
#   BOOT    multiboot (QEMU -kernel, default), uefi (OVMF + BOOTX64.EFI) or
#           linux (QEMU -kernel with the bzImage: the Linux boot protocol)
#   ACCEL   tcg (default) or kvm
#   CPU     max (default): QEMU's full CPU; knl: the same presenting as a
#           Xeon Phi x200 (family 6 model 0x57), whose PMU the model
#           presents (architectural perfmon); knc: a CPU stripped to what a
#           KNC core reports and executes (docs/knc.md "The strict CPU"):
#           CPUID family 0x0B model 1, maximum basic leaf 4 (no leaf 0xB),
#           leaves 1 and 0x80000001 as a card's, so CMOV, FCMOV/FCOMI,
#           SSE*, fences, CLFLUSH, POPCNT, MOVBE, MONITOR, RDTSCP raise #UD.
#           CPUID's hypervisor bit stays: the kernel takes family 0x0B
#           under a hypervisor for a PC without KNC's PMU MSRs (the model
#           backend, the pc platform); the plugin (PLUGIN=1) reports every
#           KNC-missing instruction QEMU runs anyway (MMX, long NOPs, PAUSE,
#           PREFETCH, port I/O on platform=knc) to stderr and to the file
#           /dev/shm/pmuos-$CARD-knc, but for the PC firmware's code and
#           KNC_IGNORE's. TCG only; Multiboot or Linux boot (OVMF is SSE code)
#   KNC_IGNORE with CPU=knc: address ranges LO-HI (space-separated) whose
#           code the plugin does not report: not pmuos's (the simulated
#           card's bootstrap stand-in)
#   ICOUNT  1 (default): -icount shift=$ICOUNT_SHIFT (default 0: one TSC tick
#           per guest instruction, so counts are exact, docs/design.md §5.2;
#           N: 2^N ns of virtual time per instruction); 0: free-running TCG
#   MEM     guest RAM (default 512M)
#   BUILD   build directory (default build)
#   KERNEL  image to boot (default $BUILD/kernel.mb; $BUILD/pmuos.bzImage for linux)
#   CMDLINE kernel command line
#   CARD    mailbox name (default card0): /dev/shm/pmuos-$CARD, for host tools;
#           one card per name (scripts/card-keeper.py)
#   MBOX    ivshmem (default): the mailbox is an ivshmem device's memory,
#           /dev/shm/pmuos-$CARD (pmuctl --card $CARD); card: it is in guest
#           RAM as on a KNC card, the RAM being the shared file
#           /dev/shm/pmuos-$CARD-ram that pmuctl maps as card memory (the
#           aperture: file offset = guest physical address below the PCI
#           hole) and the kernel told its place with pmuos.mbox=BASE,SIZE
#           (pmuctl --card sim:$CARD); Multiboot or Linux boot only
#   DOORBELL 1 (default, with MBOX=ivshmem): the mailbox device is an
#           ivshmem-doorbell with one MSI-X vector, its memory and eventfds
#           handed out by scripts/ivshmem-server.py (run by
#           scripts/card-keeper.py, it ends with QEMU) on the socket
#           /dev/shm/pmuos-$CARD.sock, where pmuctl connects too;
#           0: ivshmem-plain, no doorbell (the card polls)
#   MBOX_BASE where in card memory (default 0x10000000, pmuos MBOX_CARD_BASE)
#   KNC_MMIO a file of 128 KiB: a KNC card's BAR4 (DBOX, SBOX) at the
#           physical addresses a card's cores see it, 0x8007C0000 (a QEMU
#           pc-dimm there; platform/knc/sbox.h), for the simulated card
#   RAM_KEEP 1: with MBOX=card, keep the RAM file's contents and a
#           pmuos.mbox= already on CMDLINE (the simulated card's bootstrap,
#           tests/cardsim/card.py, put image and command line there)
#   PROGRAMS pmuos programs (ELF files, space-separated) to load as Multiboot
#           modules; the shell's `run NAME` starts them by file name
#           without ".elf"
#   PLUGIN  1 (default with tcg): load $BUILD/pmuos-pmu.so, the TCG plugin that
#           counts the KNC events beyond instructions and cycles (caches,
#           TLBs, branches, VPU), with its page shared with the card's PMU
#           model in /dev/shm/pmuos-$CARD-pmu; 0: no plugin (those events
#           are not counted)
#   PLUGIN_ARGS more plugin arguments, comma-separated (e.g. verify=on)
#   QEMU    the QEMU binary (default: /usr/local/lib/pmuos-qemu/qemu-system-x86_64,
#           Debian's 7.2 rebuilt with the fixes of scripts/qemu-fixes/ by
#           scripts/build-qemu.sh, which install-deps.sh runs; else Debian's
#           qemu-system-x86_64, which the plugin can make abort (QEMU issue
#           1381) and which keeps a descriptor for every pmuctl run;
#           docs/design.md §11 "The QEMU pmuos runs")
# Arguments after the environment are passed to QEMU unchanged.
set -eu
umask 077 # what is made for the card is this user's only (docs/run.md "The card's files")

die() { echo "qemu.sh: $*" >&2; exit 2; }

B=${BUILD:-build}
CPUS=${CPUS:-4}
BOOT=${BOOT:-multiboot}
ACCEL=${ACCEL:-tcg}
CPU=${CPU:-max}
ICOUNT=${ICOUNT:-1}
ICOUNT_SHIFT=${ICOUNT_SHIFT:-0}
case "$ICOUNT_SHIFT" in
[0-9] | 10) ;;
*) die "ICOUNT_SHIFT must be 0 to 10 (2^N ns per instruction), got '$ICOUNT_SHIFT'" ;;
esac
MEM=${MEM:-512M}
case "$BOOT" in
linux) KERNEL=${KERNEL:-$B/pmuos.bzImage} ;;
*) KERNEL=${KERNEL:-$B/kernel.mb} ;;
esac
CMDLINE=${CMDLINE:-}
PROGRAMS=${PROGRAMS:-}
CARD=${CARD:-card0}
PLUGIN=${PLUGIN:-1}
PLUGIN_ARGS=${PLUGIN_ARGS:-}
MBOX=${MBOX:-ivshmem}
MBOX_BASE=${MBOX_BASE:-0x10000000}
DOORBELL=${DOORBELL:-1}
QEMU=${QEMU:-/usr/local/lib/pmuos-qemu/qemu-system-x86_64}
[ -x "$QEMU" ] || [ "$QEMU" != /usr/local/lib/pmuos-qemu/qemu-system-x86_64 ] || QEMU=qemu-system-x86_64
case "$("$QEMU" --version 2>/dev/null | head -1)" in
*pmuos-fixes-*) QEMU_FIXED=1 ;;
'') die "QEMU=$QEMU does not run" ;;
*) QEMU_FIXED=0 ;;
esac
case "$CARD" in ''|*/*|*[!A-Za-z0-9._-]*) die "CARD must be a name of letters, digits, '.', '_' or '-', got '$CARD'";; esac

case "$CPUS" in ''|*[!0-9]*) die "CPUS must be a number from 1 to 255, got '$CPUS'";; esac
[ "$CPUS" -ge 1 ] && [ "$CPUS" -le 255 ] || die "CPUS must be from 1 to 255 (xAPIC, 8-bit APIC IDs), got $CPUS"
if [ $((CPUS % 4)) -eq 0 ]; then
	SMP="$CPUS,sockets=1,cores=$((CPUS / 4)),threads=4"
	THREADS=4
else
	SMP="$CPUS"
	THREADS=1
fi
case "$PLUGIN" in 0|1) ;; *) die "PLUGIN must be 1 or 0, got '$PLUGIN'" ;; esac
case "$MBOX" in ivshmem|card) ;; *) die "MBOX must be ivshmem or card, got '$MBOX'" ;; esac
case "$DOORBELL" in 0|1) ;; *) die "DOORBELL must be 1 or 0, got '$DOORBELL'" ;; esac
case "${MBOX_BASE#0x}" in "$MBOX_BASE"|''|*[!0-9a-fA-F]*) die "MBOX_BASE must be 0x hex, got '$MBOX_BASE'" ;; esac
[ "$MBOX" = ivshmem ] || [ "$BOOT" != uefi ] || die "MBOX=card gives the kernel its place on the command line: BOOT=multiboot or linux"

# The strict CPU: what a KNC core reports in CPUID, from QEMU's qemu64 (whose
# leaf 1 and 0x80000001 are a P6-class x86-64: fpu de pse tsc msr pae mce
# cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2, pni
# cx16; syscall nx lm, lahf_lm svm). A card reports (Intel 327364-001's
# CPUID appendix, and Linux on a card: "cpuid level 4", flags fpu vme de
# pse tsc msr pae mce cx8 apic mtrr mca pat fxsr ht syscall nx lm lahf_lm)
# family 0x0B model 1, maximum basic leaf 4, maximum extended leaf
# 0x80000008; FXSR but no CMOV, CLFSH, MMX, SSE, SSE2, MONITOR, CX16. So off
# go SYSENTER (sep: App. B's table), PSE-36, CLFLUSH, CMOV, MMX, SSE, SSE2,
# SSE3 (pni), CMPXCHG16B (cx16) and AMD's SVM. PGE stays, as on a card,
# which reports it and faults on CR4.PGE (SSDG 328207-002 4.2.10): TCG
# takes the bit, so the kernel stops itself on it instead (arch/x86.h
# write_cr4). VME a card has, TCG does not. HT is set
# by QEMU itself when a package has several threads. The hypervisor bit
# (CPUID.1:ECX[31], 0 on a card) stays: it tells the kernel that this family
# 0x0B is a PC without KNC's PMU MSRs (arch/x86.h cpuid_knc_card).
KNC_CPU=qemu64,vendor=GenuineIntel,family=11,model=1,level=4,xlevel=0x80000008
KNC_CPU=$KNC_CPU,-sep,-pse36,-clflush,-cmov,-mmx,-sse,-sse2,-pni,-cx16,-svm
case "$CPU" in
max) CPU_ARG=max,vendor=GenuineIntel ;;
# A Xeon Phi x200 (Knights Landing, family 6 model 0x57: Linux's
# INTEL_FAM6_XEON_PHI_KNL) on QEMU's full CPU. TCG reports CPUID leaf 0xA as
# zeros and has no PMU MSRs, so the model backend presents KNL's
# architectural perfmon (pmu/arch/regs.h); AVX-512, which TCG lacks, is absent.
knl) CPU_ARG=max,vendor=GenuineIntel,family=6,model=87,stepping=1 ;;
knc)
	[ "$ACCEL" = tcg ] || die "CPU=knc is QEMU's TCG CPU stripped to KNC's: ACCEL=tcg (KVM runs the host's instructions)"
	[ "$BOOT" != uefi ] || die "CPU=knc cannot run OVMF, which is SSE code: BOOT=multiboot or linux"
	CPU_ARG=$KNC_CPU
	;;
*) die "CPU must be max, knl or knc, got '$CPU'" ;;
esac

case "$ACCEL" in
tcg)
	# thread=single: one thread runs every vCPU (as -icount does anyway), so the
	# plugin's simulation of shared caches needs no locks.
	ACC="-accel tcg -cpu $CPU_ARG"
	[ "$PLUGIN" = 1 ] && ACC="-accel tcg,thread=single -cpu $CPU_ARG"
	# -icount forbids multi-threaded TCG; shift=0 makes the TSC count instructions.
	[ "$ICOUNT" = 1 ] && ACC="$ACC -icount shift=$ICOUNT_SHIFT"
	;;
kvm) ACC="-accel kvm -cpu host" ;;
*) die "ACCEL must be tcg or kvm, got '$ACCEL'" ;;
esac

case "$BOOT" in
multiboot)
	[ -f "$KERNEL" ] || die "no kernel image at $KERNEL (run make)"
	BOOTARGS="-kernel $KERNEL"
	if [ -n "$PROGRAMS" ]; then
		MODS=""
		for p in $PROGRAMS; do
			[ -f "$p" ] || die "PROGRAMS: no file $p"
			case "$p" in *,*) die "PROGRAMS: a path may not contain a comma: $p" ;; esac
			MODS="${MODS:+$MODS,}$p"
		done
		BOOTARGS="$BOOTARGS -initrd $MODS"
	fi
	;;
linux)
	[ -z "$PROGRAMS" ] || die "PROGRAMS are loaded as Multiboot modules: use BOOT=multiboot"
	[ -f "$KERNEL" ] || die "no bzImage at $KERNEL (run make)"
	BOOTARGS="-kernel $KERNEL"
	;;
uefi)
	[ -z "$PROGRAMS" ] || die "PROGRAMS are loaded as Multiboot modules: use BOOT=multiboot"
	[ -f "$B/esp/EFI/BOOT/BOOTX64.EFI" ] || die "no $B/esp/EFI/BOOT/BOOTX64.EFI (run make)"
	# Each run gets its own copy of the variable store, so runs can overlap:
	# a file already removed, open on fd 3, which QEMU (this script becomes
	# it) opens as /proc/self/fd/3. Nothing is left behind however QEMU ends,
	# and a kill of this process reaches QEMU (a trap to remove the file
	# kept the shell as QEMU's parent: a test's SIGKILL orphaned QEMU).
	VARS=$(mktemp "${TMPDIR:-/tmp}/pmuos-vars.XXXXXX")
	cp /usr/share/OVMF/OVMF_VARS_4M.fd "$VARS"
	exec 3<>"$VARS"
	rm -f "$VARS"
	BOOTARGS="-drive if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd"
	BOOTARGS="$BOOTARGS -drive if=pflash,format=raw,file=/proc/self/fd/3"
	BOOTARGS="$BOOTARGS -drive format=raw,file=fat:rw:$B/esp"
	;;
*) die "BOOT must be multiboot, uefi or linux, got '$BOOT'" ;;
esac

if [ -t 0 ]; then
	# A person at a terminal: Ctrl-C goes to the shell, Ctrl-A x quits QEMU.
	CONSOLE="-chardev stdio,id=con,mux=on,signal=off -serial chardev:con -mon chardev=con,mode=readline"
	echo "qemu.sh: serial console on this terminal; Ctrl-A x quits QEMU, Ctrl-A c opens its monitor" >&2
else
	# Piped input: every byte goes to the card unchanged.
	CONSOLE="-serial stdio"
fi

# The card's files in /dev/shm (its name, mailbox, plugin page, RAM, doorbell
# socket) are scripts/card-keeper.py's: it refuses a second card of this
# name, creates them this user's only (0600) and removes them when QEMU
# ends, however it ends (docs/run.md "The card's files"). Its options, gathered
# below: KEEP.
KEEP=""
# The mailbox: shared memory the host maps (docs/design.md §7), a power of two.
MBOX_FILE=/dev/shm/pmuos-$CARD
MBOX_BYTES=33554432
MAILBOX="-object memory-backend-file,id=mbox,size=$MBOX_BYTES,share=on,mem-path=$MBOX_FILE"
MAILBOX="$MAILBOX -device ivshmem-plain,memdev=mbox"
if [ "$MBOX" = ivshmem ]; then
	KEEP="--mbox $MBOX_BYTES"
fi
if [ "$MBOX" = ivshmem ] && [ "$DOORBELL" = 1 ]; then
	# The same file, from the doorbell server (scripts/ivshmem-server.py, run by
	# the keeper: it listens before QEMU starts, for the device reads its ID
	# and memory while it is created).
	KEEP="$KEEP --doorbell 1"
	# A fixed QEMU is told when a peer leaves and closes its eventfds (scripts/qemu-fixes/0002).
	[ "$QEMU_FIXED" = 1 ] && KEEP="$KEEP --qemu-closes-peers"
	MAILBOX="-chardev socket,path=$MBOX_FILE.sock,id=mboxbell -device ivshmem-doorbell,chardev=mboxbell,vectors=1"
fi
RAM="-m $MEM"
if [ "$MBOX" = card ]; then
	# Card memory the host maps, as a KNC card's GDDR through BAR0; a fresh
	# file each boot, or with RAM_KEEP=1 the simulated card's own.
	RAM_FILE=/dev/shm/pmuos-$CARD-ram
	if [ "${RAM_KEEP:-0}" = 1 ]; then KEEP="$KEEP --keep-ram"; else KEEP="$KEEP --ram"; fi
	RAM="-m $MEM -object memory-backend-file,id=ram,size=$MEM,share=on,mem-path=$RAM_FILE -machine memory-backend=ram"
	MAILBOX=""
	case " $CMDLINE" in *" pmuos.mbox="*) ;; *) CMDLINE="${CMDLINE:+$CMDLINE }pmuos.mbox=$MBOX_BASE,$MBOX_BYTES" ;; esac
fi
if [ -n "${KNC_MMIO:-}" ]; then
	[ "$(stat -c %s "$KNC_MMIO" 2>/dev/null)" = 131072 ] || die "KNC_MMIO must be a file of 131072 bytes, got '$KNC_MMIO'"
	# Not RAM the guest is told of (no e820 entry): device memory at the card's DBOX address.
	RAM="$(echo "$RAM" | sed "s/^-m $MEM/-m $MEM,slots=1,maxmem=64G/")"
	RAM="$RAM -object memory-backend-file,id=kncmmio,size=128K,share=on,mem-path=$KNC_MMIO"
	RAM="$RAM -device pc-dimm,memdev=kncmmio,addr=0x8007c0000"
fi

# The plugin and its page: a second ivshmem-plain device, after the mailbox's
# (the card takes the first ivshmem device as the mailbox and finds this one
# by its size and the header the plugin writes, include/pmuos/pmushare.h).
PMU=""
if [ "$ACCEL" = tcg ] && [ "$PLUGIN" = 1 ]; then
	SO=$B/pmuos-pmu.so
	[ -f "$SO" ] || die "no plugin at $SO (run make, or PLUGIN=0)"
	[ "$QEMU_FIXED" = 1 ] || echo "qemu.sh: $QEMU lacks the fix for QEMU issue 1381: with the plugin it can abort" \
		"(scripts/build-qemu.sh builds one that has it)" >&2
	case "$PLUGIN_ARGS" in *[!A-Za-z0-9=,._-]*) die "PLUGIN_ARGS must be key=value[,key=value...], got '$PLUGIN_ARGS'" ;; esac
	PMU_FILE=/dev/shm/pmuos-$CARD-pmu
	PMU_BYTES=65536 # PMUSHARE_BYTES
	KEEP="$KEEP --pmu"
	PMU="-object memory-backend-file,id=pmushare,size=$PMU_BYTES,share=on,mem-path=$PMU_FILE"
	PMU="$PMU -device ivshmem-plain,memdev=pmushare"
	KNC=""
	if [ "$CPU" = knc ]; then
		# A PC's devices (UART, PIT, ACPI) are I/O ports, a card has none.
		case " $CMDLINE" in *" platform=knc"*) KNC=",knc=on" ;; *) KNC=",knc=pc" ;; esac
		KNC="$KNC,knc_log=/dev/shm/pmuos-$CARD-knc"
		KEEP="$KEEP --knc"
		# Not pmuos's code, and on no card: SeaBIOS (PAUSE, port I/O) in its
		# segments 0xC0000-0xFFFFF (with the option ROMs, QEMU's loaders),
		# its ROM below 4 GiB, and the 32 MiB under the top of RAM below
		# 4 GiB (q35: all of it up to 2.75 GiB, else 2 GiB), where it runs
		# its init code below q35's 16 MiB TSEG; and KNC_IGNORE's ranges.
		case "$MEM" in
		*G) RAM_BYTES=$((${MEM%G} << 30)) ;; *M) RAM_BYTES=$((${MEM%M} << 20)) ;; *) RAM_BYTES=$MEM ;;
		esac
		case "$RAM_BYTES" in ''|*[!0-9]*) die "CPU=knc: MEM must be a number of bytes, or end in M or G, got '$MEM'" ;; esac
		LOW_TOP=$RAM_BYTES
		[ "$LOW_TOP" -lt $((0xb0000000)) ] || LOW_TOP=$((0x80000000))
		for r in 0xc0000-0x100000 0xfffc0000-0x100000000 $((LOW_TOP - (32 << 20)))-$LOW_TOP ${KNC_IGNORE:-}; do
			case "$r" in *[!0-9a-fA-Fx-]*|-*|*-) die "KNC_IGNORE must be LO-HI ranges, got '$r'" ;; esac
			KNC="$KNC,knc_ignore=$r"
		done
	fi
	PMU="$PMU -plugin $SO,page=$PMU_FILE,threads=$THREADS$KNC${PLUGIN_ARGS:+,$PLUGIN_ARGS}"
fi

# The keeper execs QEMU: this process becomes QEMU (a kill of it is one of QEMU).
# shellcheck disable=SC2086
set -- "$(dirname "$0")/card-keeper.py" --card="$CARD" $KEEP -- \
	"$QEMU" -machine q35 $RAM -smp "$SMP" $ACC \
	-nodefaults -no-user-config -display none $CONSOLE $MAILBOX $PMU \
	$BOOTARGS "$@"
if [ "$BOOT" != uefi ]; then
	exec "$@" -append "$CMDLINE"
fi
exec "$@"
