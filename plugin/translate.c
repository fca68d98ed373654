/* Block records for QEMU's translations (see plugin/plugin.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/internal.h"

/* ---- translation ---- */

/*
 * Block records: QEMU translates the same code again and again (each time
 * -icount cuts a block short, or its cache is flushed), so records are kept
 * once per (address, host address, bytes) and live as long as QEMU. They are
 * carved from large allocations, close together for the host's caches.
 */
static struct tb **known; /* open addressing; a power-of-two number of slots */
static size_t known_slots, known_used;
#define ARENA_BYTES (1 << 20)
static uint8_t *arena;
static size_t arena_left;

static void *arena_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n > arena_left) {
		arena = malloc(ARENA_BYTES > n ? ARENA_BYTES : n);
		if (!arena)
			return NULL;
		arena_left = ARENA_BYTES > n ? ARENA_BYTES : n;
	}
	void *p = arena;
	arena += n;
	arena_left -= n;
	return memset(p, 0, n);
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
	uint8_t *copy = vec ? arena_alloc(nbytes) : NULL;
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
		b->slot[i] = (struct slot){ .idx = i, .elements = d.vec_bytes ? d.elements : 0, .user = b->user };
		if (d.vec_bytes) {
			vec[b->nvec++] = b->slot[i];
			b->elements += d.elements;
		}
		b->flush_tlb |= d.flush_tlb;
		if (knc_reported(d.knc_missing, d.port_io, va)) {
			struct knc_site *site = knc_site(va, d.knc_missing, b->user);
			if (!site)
				return NULL;
			knc[b->nknc++] = (struct knc_hit){ (uint16_t)i, site };
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
	struct tb *b = tb_record(qtb);
	if (!b) {
		if (!stopped)
			fprintf(stderr, "pmuos-pmu: out of memory, or a block of more than %d instructions; counting stops\n",
				COUNT_MAX_BLOCK);
		stopped = true;
		counting_cpus = 0;
		return;
	}
	qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(qtb, 0), on_block, QEMU_PLUGIN_CB_NO_REGS, b);
	for (size_t k = 0; k < b->nknc; k++)
		qemu_plugin_register_vcpu_insn_exec_cb(qemu_plugin_tb_get_insn(qtb, b->knc[k].idx), on_knc,
						       QEMU_PLUGIN_CB_NO_REGS, b->knc[k].site);
	for (size_t i = 0; i < b->n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(qtb, i);
		qemu_plugin_register_vcpu_mem_cb(qi, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, &b->slot[i]);
	}
}
