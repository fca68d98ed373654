/*
 * x86-64 instruction wrappers used across the kernel: port I/O, MSRs, CPUID,
 * TSC, control registers, interrupt flag. Every one is a single instruction a
 * KNC core executes (docs/design.md §3: no RDTSCP, PAUSE or fences here; barriers and
 * spin-waits are in arch/sync.h).
 */
#ifndef ARCH_X86_H
#define ARCH_X86_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "arch/regs.h"

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

/* RDTSC is not serializing; callers that bracket work order it themselves. */
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

struct cpuid_regs { uint32_t eax, ebx, ecx, edx; };

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;
	__asm__ volatile("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

/*
 * The family in CPUID.1:EAX (SDM Vol. 2A, CPUID, "Family ID": bits 11:8,
 * plus the extended family in bits 27:20 when those read 0xF).
 */
static inline uint32_t cpuid_family(uint32_t eax)
{
	uint32_t f = (eax >> 8) & 0xf;
	return f == 0xf ? f + ((eax >> 20) & 0xff) : f;
}
/*
 * The model in CPUID.1:EAX (SDM Vol. 2A, CPUID, "Model": bits 7:4, plus the
 * extended model in bits 19:16 shifted left by 4 for families 6 and 0xF).
 */
static inline uint32_t cpuid_model(uint32_t eax)
{
	uint32_t f = (eax >> 8) & 0xf, m = (eax >> 4) & 0xf;
	return f == 6 || f == 0xf ? m + (((eax >> 16) & 0xf) << 4) : m;
}
/* A Xeon Phi x200 core: Knights Landing, family 6 model 0x57, or Knights Mill, 0x85 (Linux INTEL_FAM6_XEON_PHI_KNL/KNM). */
static inline bool cpuid_xeon_phi_x200(struct cpuid_regs l1)
{
	uint32_t m = cpuid_model(l1.eax);
	return cpuid_family(l1.eax) == 6 && (m == 0x57 || m == 0x85);
}
/* A Knights Corner core (k1om): family 11, model 1 (Linux drivers/misc/mic/card/mic_x100.c mic_init). */
#define CPUID_FAMILY_KNC 0x0b
/*
 * CPUID.1:ECX bit 31: set by a hypervisor in its virtual CPUs (Linux's
 * X86_FEATURE_HYPERVISOR); 0 on hardware (SDM Vol. 2A, CPUID: "Not Used").
 */
#define CPUID1_ECX_HYPERVISOR (1u << 31)

/*
 * Whether CPUID leaf 1 (l1) is a KNC card's core: family 0x0B and no
 * hypervisor. QEMU's strict KNC CPU (scripts/qemu.sh CPU=knc) is family
 * 0x0B under a hypervisor: a PC, and without KNC's PMU MSRs.
 */
static inline bool cpuid_knc_card(struct cpuid_regs l1)
{
	return cpuid_family(l1.eax) == CPUID_FAMILY_KNC && !(l1.ecx & CPUID1_ECX_HYPERVISOR);
}

/*
 * Hardware threads per core (1 or more) from CPUID: max_leaf is
 * CPUID.0:EAX, l1, l4 and lb leaves 1, 4 (subleaf 0) and 0xB (subleaf 0),
 * each read only if max_leaf has it. With leaf 0xB, its SMT level's count
 * (SDM Vol. 2A, CPUID leaf 0BH: EBX[15:0]). Without, as Intel's "Intel 64
 * Architecture Processor Topology Enumeration" (legacy method) and Linux
 * count siblings and cores: logical processors per package CPUID.1:EBX[23:16]
 * (valid with CPUID.1:EDX.HTT, bit 28) over cores per package
 * CPUID.4:EAX[31:26] + 1. A KNC core's maximum basic leaf is 4 (SSDG
 * 328207-002 4.2.17); Linux on a card counts 240 siblings and 60 cores
 * from them, 4 threads a core, and its APIC ID is core * 4 + thread.
 */
uint32_t cpuid_threads_per_core(uint32_t max_leaf, struct cpuid_regs l1, struct cpuid_regs l4, struct cpuid_regs lb);

#define DEFINE_CR(n, write)                                                       \
	static inline uint64_t read_cr##n(void)                                   \
	{ uint64_t v; __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v)); return v; } \
	static inline void write(uint64_t v)                                      \
	{ __asm__ volatile("mov %0, %%cr" #n :: "r"(v) : "memory"); }
DEFINE_CR(0, write_cr0)
DEFINE_CR(2, write_cr2)
DEFINE_CR(3, write_cr3)
DEFINE_CR(4, write_cr4_raw)
#undef DEFINE_CR

/*
 * Stops the calling CPU for good, printing why (a short sentence naming
 * the condition) and its registers' owner, as a kernel exception does;
 * the other CPUs go on (kernel/trap.c). For what must never happen.
 */
void kernel_stop(const char *why) __attribute__((noreturn, cold));

/*
 * Why a CR4 value must not be written, or NULL if it may be. A KNC core
 * reports PGE in CPUID.1:EDX[13] but raises #GP when CR4.PGE is set
 * (SSDG 328207-002 §4.2.10, as Lasimeri/Intel-Phi-3120A found: their
 * x86_64_start_kernel's CR4.PGE toggle faulted, docs/knc.md): the kernel
 * never sets it, on any platform, so that QEMU, which takes it, cannot
 * hide a write a card would fault on.
 */
static inline const char *cr4_refused(uint64_t v)
{
	return v & CR4_PGE ? "CR4.PGE (bit 7) would be set: a KNC core raises #GP on it (SSDG 328207-002 4.2.10)"
			   : NULL;
}

/*
 * Why a CPU must not run with this CR0, or NULL if it may: CD or NW set
 * means caches off or not kept coherent (SDM Vol. 3A Table 11-5). An INIT
 * leaves both as they were and sets them only at power-up (SDM Vol. 3A
 * Table 9-1, note 2), so a start-up code that ORs its bits into the CR0 an
 * AP had keeps them; QEMU's INIT sets both, and its TCG ignores them.
 */
static inline const char *cr0_refused(uint64_t v)
{
	return v & (CR0_CD | CR0_NW) ? "CR0.CD (bit 30) or NW (bit 29) set: this CPU would run with its caches off "
				       "(SDM Vol. 3A Table 11-5)"
				     : NULL;
}

/* Writes CR4, or stops the CPU with cr4_refused's reason (a card would #GP there instead). */
static inline void write_cr4(uint64_t v)
{
	const char *why = cr4_refused(v);

	if (why)
		kernel_stop(why);
	write_cr4_raw(v);
}

static inline void cli(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void sti(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void hlt(void) { __asm__ volatile("hlt" ::: "memory"); }
/* STI's one-instruction interrupt shadow makes "sti; hlt" race-free. */
static inline void sti_hlt(void) { __asm__ volatile("sti; hlt" ::: "memory"); }

static inline uint64_t irq_save(void)
{
	uint64_t f;
	__asm__ volatile("pushfq; popq %0; cli" : "=r"(f) :: "memory");
	return f;
}

static inline void irq_restore(uint64_t f)
{
	if (f & RFLAGS_IF)
		sti();
}

static inline bool irqs_enabled(void)
{
	uint64_t f;
	__asm__ volatile("pushfq; popq %0" : "=r"(f));
	return f & RFLAGS_IF;
}

static inline uint64_t read_rflags(void)
{
	uint64_t f;
	__asm__ volatile("pushfq; popq %0" : "=r"(f));
	return f;
}

#endif
