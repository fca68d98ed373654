/* Block records for QEMU's translations (see plugin/plugin.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "plugin/classify.h"
#include "plugin/internal.h"

/* ---- translation ---- */

/*
 * Block records: QEMU translates the same code again and again (each time
 * -icount cuts a block short), so a record is kept once per (address, host
 * address, bytes) and shared by every translation of that code. Records are
 * carved from large mappings (arenas), close together for the host's caches.
 * A record's address is the userdata of its blocks' callbacks, so it may be
 * freed only when no block translated with it can run again: when QEMU
 * flushes its translation cache (a flush callback, with every vCPU stopped;
 * QEMU 7.2 has no callback per block freed). Then all of them go at once.
 * QEMU flushes when its code buffer fills, but a guest that keeps making new
 * code (rewriting its own, each version a new record) could fill the host's
 * memory with records long before: at RECORDS_MAX_BYTES of arenas the plugin
 * asks QEMU for a flush (qemu_plugin_reset), which comes as soon as the vCPU
 * leaves its block. So records hold at most RECORDS_MAX_BYTES, plus the few
 * blocks translated before the flush comes, plus their table (at most 32
 * bytes per record, each at least 256 bytes: an eighth more), so 36 MiB,
 * whatever the guest does.
 */
#define RECORDS_MAX_BYTES (32u << 20)
#define ARENA_BYTES (1u << 20)
struct arena {
	struct arena *next;
	size_t bytes;
} __attribute__((aligned(16)));
static struct arena *arenas;
static uint8_t *arena_next;
static size_t arena_left, arena_bytes;
static struct tb **known; /* open addressing; a power-of-two number of slots */
static size_t known_slots, known_used;
static bool flush_asked;

/* n zeroed bytes (anonymous mappings are), 16-aligned; NULL when out of memory. */
static void *arena_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > arena_left) {
		size_t bytes = ARENA_BYTES > n + sizeof(struct arena) ? ARENA_BYTES : n + sizeof(struct arena);
		struct arena *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (a == MAP_FAILED)
			return NULL;
		*a = (struct arena){ arenas, bytes };
		arenas = a;
		arena_bytes += bytes;
		arena_next = (uint8_t *)(a + 1);
		arena_left = bytes - sizeof(*a);
	}
	void *p = arena_next;
	arena_next += n;
	arena_left -= n;
	return p;
}

void on_flush(qemu_plugin_id_t id)
{
	threads_forget_blocks();
	while (arenas) {
		struct arena *a = arenas;
		arenas = a->next;
		munmap(a, a->bytes);
	}
	arena_left = arena_bytes = 0;
	free(known);
	known = NULL;
	known_slots = known_used = 0;
}

/* After the flush the plugin asked for: QEMU unregistered every callback; they come back. */
static void on_reset(qemu_plugin_id_t id)
{
	flush_asked = false;
	callbacks_register(id);
}

static uint64_t tb_hash(uint64_t vaddr, const void *haddr, uint32_t nbytes)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)(uintptr_t)haddr ^ ((uint64_t)nbytes << 48);
	return h ^ (h >> 29);
}

static bool known_grow(void)
{
	size_t n = known_slots ? known_slots * 2 : 1 << 16;
	struct tb **k = calloc(n, sizeof(*k));

	if (!k)
		return false;
	for (size_t i = 0; i < known_slots; i++) {
		struct tb *b = known[i];
		if (!b)
			continue;
		size_t j = tb_hash(b->vaddr, b->haddr, b->nbytes) & (n - 1);
		while (k[j])
			j = (j + 1) & (n - 1);
		k[j] = b;
	}
	free(known);
	known = k;
	known_slots = n;
	return true;
}

/* The line tag of a code byte: physical in the kernel's identity map, by host address in Ring 3. */
static uint64_t code_line(uint64_t vaddr, const uint8_t *host, bool user)
{
	if (user && host)
		return USER_CODE_TAG | ((uint64_t)(uintptr_t)host >> MS_LINE_SHIFT);
	return vaddr >> MS_LINE_SHIFT;
}

/* Builds the record of a block from its instructions. */
static struct tb *tb_build(struct qemu_plugin_tb *qtb, size_t n, uint64_t vaddr, const void *haddr,
			   const uint8_t *bytes, uint32_t nbytes)
{
	struct tb *b = arena_alloc(sizeof(*b) + n * sizeof(b->slot[0]));
	struct fetch *fetch = b ? arena_alloc(2 * n * sizeof(*fetch)) : NULL;
	struct slot *vec = fetch ? arena_alloc(n * sizeof(*vec)) : NULL;
	struct tm_insn *tm = vec ? arena_alloc(n * sizeof(*tm)) : NULL;
	uint8_t *copy = tm ? arena_alloc(nbytes) : NULL;
	struct knc_hit *knc = copy && knc_mode != KNC_OFF ? arena_alloc(n * sizeof(*knc)) : NULL;

	if (!copy || (knc_mode != KNC_OFF && !knc))
		return NULL;
	b->knc = knc;
	b->vaddr = vaddr;
	b->n = n;
	b->user = is_user(vaddr);
	b->haddr = haddr;
	b->nbytes = nbytes;
	b->bytes = memcpy(copy, bytes, nbytes);
	b->fetch = fetch;
	b->vec = vec;
	b->hit_epoch = UINT64_MAX;
	uint64_t last_line = UINT64_MAX;
	unsigned pshift = b->user ? PAGE_4K_SHIFT : PAGE_2M_SHIFT;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(qtb, i);
		uint64_t va = qemu_plugin_insn_vaddr(qi);
		const uint8_t *ha = qemu_plugin_insn_haddr(qi);
		size_t len = qemu_plugin_insn_size(qi);
		struct x86_insn d;
		x86_decode(qemu_plugin_insn_data(qi), len, va, &d);
		b->slot[i] = (struct slot){ .idx = i, .elements = d.vec_bytes ? d.elements : 0, .user = b->user,
					    .prefetch = va == page->prefetch_load[0] ? 1 : va == page->prefetch_load[1] ? 2 : 0 };
		if (d.vec_bytes) {
			vec[b->nvec++] = b->slot[i];
			b->elements += d.elements;
		}
		b->flush_tlb |= d.flush_tlb;
		classify(qemu_plugin_insn_data(qi), len, va, d.vec_bytes != 0, &tm[i]);
		if (knc_reported(d.knc_missing, d.port_io, va)) {
			knc[b->nknc++] = (struct knc_hit){ (uint16_t)i, knc_site(va, d.knc_missing, b->user) };
		}
		uint64_t lines[2] = { code_line(va, ha, b->user), code_line(va + len - 1, ha ? ha + len - 1 : NULL, b->user) };
		for (int k = 0; k < 2; k++) {
			if (lines[k] != last_line)
				fetch[b->nfetch++] = (struct fetch){ lines[k], i };
			last_line = lines[k];
		}
		for (uint64_t p = va >> pshift; p <= (va + len - 1) >> pshift; p++)
			if ((b->npages == 0 || b->page[b->npages - 1] != p) && b->npages < 2)
				b->page[b->npages++] = p;
		if (i == n - 1 && d.branch != BR_NONE)
			b->br = (struct branch){ .vaddr = va, .next = va + len, .target = d.target, .kind = d.branch, .user = b->user };
	}
	b->insn = tm;
	if (b->br.kind == BR_NONE && !(b->tm_exit = arena_alloc((TM_THREADS - 1) * sizeof(*b->tm_exit))))
		return NULL;
	tm_schedule(tm, n, &b->tm, b->tm_exit);
	return b;
}

/* The record of the block QEMU is translating (an old one if the same code was translated before). */
static struct tb *tb_record(struct qemu_plugin_tb *qtb)
{
	size_t n = qemu_plugin_tb_n_insns(qtb);
	uint8_t bytes[COUNT_MAX_BLOCK * 16];
	uint32_t nbytes = 0;

	if (n == 0 || n > COUNT_MAX_BLOCK)
		return NULL;
	struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(qtb, 0);
	uint64_t vaddr = qemu_plugin_insn_vaddr(first);
	const void *haddr = qemu_plugin_insn_haddr(first);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(qtb, i);
		size_t len = qemu_plugin_insn_size(qi);
		if (nbytes + len > sizeof(bytes))
			return NULL;
		memcpy(bytes + nbytes, qemu_plugin_insn_data(qi), len);
		nbytes += len;
	}
	if ((known_used + 1) * 2 > known_slots && !known_grow())
		return NULL;
	size_t j = tb_hash(vaddr, haddr, nbytes) & (known_slots - 1);
	for (; known[j]; j = (j + 1) & (known_slots - 1)) {
		const struct tb *b = known[j];
		if (b->vaddr == vaddr && b->haddr == haddr && b->n == n && b->nbytes == nbytes &&
		    memcmp(b->bytes, bytes, nbytes) == 0)
			return known[j];
	}
	struct tb *b = tb_build(qtb, n, vaddr, haddr, bytes, nbytes);
	if (b) {
		known[j] = b;
		known_used++;
	}
	return b;
}

void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *qtb)
{
	check_thread();
	size_t n = qemu_plugin_tb_n_insns(qtb);
	for (size_t i = 0; i < n; i++) /* the threads' clocks (internal.h clock_switch), whether counting or not */
		qemu_plugin_register_vcpu_insn_exec_inline(qemu_plugin_tb_get_insn(qtb, i), QEMU_PLUGIN_INLINE_ADD_U64,
							   &page->clock, 1);
	struct tb *b = tb_record(qtb);
	if (!b) {
		if (!stopped)
			fprintf(stderr, "pmuos-pmu: out of memory, or a block of more than %d instructions; counting stops\n",
				COUNT_MAX_BLOCK);
		stopped = true;
		counting_cpus = 0;
		if (n)
			qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(qtb, 0), on_block_clock,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		return;
	}
	if (arena_bytes >= RECORDS_MAX_BYTES && !flush_asked) {
		flush_asked = true;
		qemu_plugin_reset(id, on_reset);
	}
	b->trans_vcpu = clock_vcpu; /* QEMU 7.2 translates a block on the vCPU about to run it */
	qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(qtb, 0), on_block, QEMU_PLUGIN_CB_NO_REGS, b);
	for (size_t k = 0; k < b->nknc; k++)
		qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(qtb, b->knc[k].idx), on_knc,
						       QEMU_PLUGIN_CB_NO_REGS, b->knc[k].site);
	for (size_t i = 0; i < b->n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(qtb, i);
		qemu_plugin_register_vcpu_mem_cb(qi, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, &b->slot[i]);
	}
}
