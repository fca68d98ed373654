/*
 * Call chains for samples (pmuctl record -g, shell `pmu callchain`): the
 * PMI walks the interrupted task's frame pointers (docs/design.md §5.4). A
 * frame is the pair the System V AMD64 prologue `push %rbp; mov %rsp,%rbp`
 * leaves: [rbp] the caller's rbp, [rbp + 8] the return address. pmuos-cc
 * keeps frame pointers (-fno-omit-frame-pointer) so the chain holds every
 * function that has a frame.
 *
 * The stack is the task's to write, so every frame is checked before it is
 * read, and the walk ends (never the card) at: a frame pointer that is not
 * 8-byte aligned or not above the last one (a loop, or a chain running
 * down), one outside the user region or on a page the task has not mapped
 * (vm_translate: the page tables, read through the kernel's identity map,
 * so the PMI takes no page fault), or a return address outside the user
 * region (a pointer into the kernel). At most PMU_CALLCHAIN_MAX frames,
 * and a page-table walk per page they and the code at RIP touch (struct
 * reader): the cost per sample is bounded (make bench).
 */
#include "pmu/pmu.h"
#include "pmu/internal.h"
#include "kernel/percpu.h"
#include "kernel/pmm.h"
#include "kernel/task.h"
#include "kernel/vm.h"
#include "lib/lib.h"
#include <pmuos/syscall.h>

/* Frames each CPU's samples carry (0: none), set by pmu_set_callchain; each CPU's newest chain. */
volatile uint8_t pmu_chain_frames[MAX_CPUS];
static struct {
	uint64_t ip[PMU_CALLCHAIN_MAX];
	size_t n;
} last[MAX_CPUS];

size_t pmu_last_callchain(uint32_t cpu, uint64_t *ips)
{
	if (cpu >= MAX_CPUS)
		return 0;
	size_t n = MIN(last[cpu].n, (size_t)PMU_CALLCHAIN_MAX);
	memcpy(ips, last[cpu].ip, n * sizeof(*ips));
	return n;
}

static enum pmu_err set_frames(uint32_t cpu, uint64_t frames)
{
	pmu_chain_frames[cpu] = frames;
	return PMU_OK;
}

struct pmu_result pmu_set_callchain(const struct cpuset *set, uint32_t frames)
{
	return pmu_each_cpu(pmu_check_callchain(frames), set, set_frames, frames);
}

/*
 * Reads of one task's memory in the PMI: each page is translated (a walk
 * of the page tables) once, as a chain's frames and the code at RIP lie on
 * a page or two (make bench: the walk's cost).
 */
struct reader {
	uint64_t as, page;      /* the last page translated, ~0: none */
	const uint8_t *base;    /* its kernel address, NULL if not mapped user memory */
};

/* The byte at user address va, through r's page; NULL if it is not mapped user memory. */
static const uint8_t *user_at(struct reader *r, uint64_t va)
{
	uint64_t page = va & ~(uint64_t)(PAGE_SIZE - 1);

	if (page != r->page) {
		r->page = page;
		r->base = vm_translate(r->as, page); /* NULL outside USER_BASE..USER_END or unmapped */
	}
	return r->base ? r->base + (va - page) : NULL;
}

/* The 8-byte word at 8-aligned user address va (on one page), or false if it is not mapped user memory. */
static bool user_word(struct reader *r, uint64_t va, uint64_t *out)
{
	const uint64_t *p = (const uint64_t *)user_at(r, va);

	if (!p)
		return false;
	*out = *p;
	return true;
}

/* Whether the code at user address va starts with the n bytes of `code`. */
static bool code_is(struct reader *r, uint64_t va, const uint8_t *code, int n)
{
	for (int i = 0; i < n; i++) {
		const uint8_t *b = user_at(r, va + i);
		if (!b || *b != code[i])
			return false;
	}
	return true;
}

/*
 * Where the sampled function's return address is when its frame is not set
 * up: at its first instruction (push %rbp) or its last (ret) it is on top
 * of the stack, after the push (at mov %rsp,%rbp) 8 bytes up; RBP is still
 * (or again) the caller's frame. -1 anywhere else: [rbp + 8] holds it.
 * Without this a sample there would leave the caller out of the chain
 * (issue 26: 3.6 % of matmul's samples in __muldf3 named main its caller).
 */
static int unframed(struct reader *r, uint64_t rip)
{
	static const uint8_t push_rbp[] = { 0x55 }, ret[] = { 0xc3 }, mov_rsp_rbp[] = { 0x48, 0x89, 0xe5 };

	if (code_is(r, rip, push_rbp, 1) || code_is(r, rip, ret, 1))
		return 0;
	return code_is(r, rip, mov_rsp_rbp, 3) ? 8 : -1;
}

static bool user_code(uint64_t va) { return va >= USER_BASE && va < USER_END; }

extern char __kernel_start[], __kernel_end[]; /* linker.ld */
#define KSTACK_SPAN (64u << 10) /* a kernel stack is smaller (kernel/smp.c: 4 pages); a sanity bound */

/*
 * A Ring-0 sample's chain: the kernel's frame pointers (the kernel keeps
 * them: Makefile's KCFLAGS), only between the interrupted RSP and the top
 * of the CPU's stack it lies under (its own or the one for entries from
 * Ring 3), so every read is of the live stack; each return address must
 * lie in the kernel's image. Code on the entry path, before the kernel's
 * frame, still holds the task's RBP: outside the stack, no chain.
 */
static size_t kernel_chain(const struct trap_frame *f, uint64_t *ips, size_t max)
{
	const struct percpu *p = this_cpu();
	uint64_t top = 0, fp = f->rbp, low = f->rsp, ret, n = 0;

	for (int i = 0; i < 2; i++) {
		uint64_t t = i ? p->tstack_top : p->kstack_top;
		if (f->rsp < t && t - f->rsp <= KSTACK_SPAN)
			top = t;
	}
	while (n < max && !(fp & 7) && fp >= low && fp + 16 <= top) {
		ret = ((const uint64_t *)fp)[1];
		if (ret < (uint64_t)__kernel_start || ret >= (uint64_t)__kernel_end)
			break;
		ips[n++] = ret;
		low = fp + 16;
		fp = ((const uint64_t *)fp)[0];
	}
	return n;
}

/* A Ring-3 sample's chain: the task's frame pointers, each read checked (the file's head comment). */
static size_t user_chain(const struct trap_frame *f, const struct task *t, uint64_t *ips, size_t max)
{
	/* A frame lies at or above the stack pointer, each above the one it was called from. */
	uint64_t fp = f->rbp, low = f->rsp, next, ret, n = 0;
	struct reader r = { t->as, ~0ULL, NULL };
	int top = unframed(&r, f->rip);

	if (top >= 0 && !(f->rsp & 7) && user_word(&r, f->rsp + top, &ret) && user_code(ret))
		ips[n++] = ret;
	while (n < max && !(fp & 7) && fp >= low && fp < USER_END - 16) {
		if (!user_word(&r, fp, &next) || !user_word(&r, fp + 8, &ret) || !user_code(ret))
			break;
		ips[n++] = ret;
		low = fp + 16;
		fp = next;
	}
	return n;
}

/* The walk, apart: with chains off (the usual sample) pmu_callchain is a few instructions without a frame. */
static size_t __attribute__((noinline)) chain(const struct trap_frame *f, uint64_t *ips, uint32_t cpu, size_t max)
{
	struct task *t = this_cpu()->task;
	size_t n = 0;

	if (!(f->cs & 3))
		n = kernel_chain(f, ips, max);
	else if (t)
		n = user_chain(f, t, ips, max);
	memcpy(last[cpu].ip, ips, n * sizeof(*ips));
	last[cpu].n = n;
	return n;
}

size_t pmu_callchain(const struct trap_frame *f, uint64_t *ips)
{
	uint32_t cpu = this_cpu()->cpu;
	size_t max = cpu < MAX_CPUS ? pmu_chain_frames[cpu] : 0;

	return max ? chain(f, ips, cpu, max) : 0;
}
