/* The cores' caches and coherence; see plugin/memsys.h. */
#include "plugin/memsys.h"
#include "pmu/plugin_events.h"

#include <stdlib.h>
#include <string.h>

#define L1_BYTES (32 * 1024)
#define L2_BYTES (512 * 1024)
#define LINE     64

enum l2_req { REQ_CODE, REQ_READ, REQ_RFO };

bool memsys_init(struct memsys *m, uint32_t ncores, ms_event_fn event)
{
	memset(m, 0, sizeof(*m));
	m->core = calloc(ncores, sizeof(*m->core));
	if (!m->core)
		return false;
	m->ncores = ncores;
	m->event = event;
	for (uint32_t c = 0; c < ncores; c++) {
		struct ms_core *k = &m->core[c];
		k->l1i_last = SA_EMPTY;
		if (!sa_init(&k->l1d, L1_BYTES / LINE, 8, false) || !sa_init(&k->l1i, L1_BYTES / LINE, 8, false) ||
		    !sa_init(&k->l2, L2_BYTES / LINE, 8, false)) {
			memsys_free(m);
			return false;
		}
	}
	return true;
}

void memsys_free(struct memsys *m)
{
	for (uint32_t c = 0; m->core && c < m->ncores; c++) {
		sa_free(&m->core[c].l1d);
		sa_free(&m->core[c].l1i);
		sa_free(&m->core[c].l2);
	}
	free(m->core);
	memset(m, 0, sizeof(*m));
}

bool memsys_attach(struct memsys *m, uint32_t c, void *thread)
{
	if (c >= m->ncores || m->core[c].nthreads == MS_THREADS)
		return false;
	m->core[c].thread[m->core[c].nthreads++] = thread;
	return true;
}

/* An event of the core as a whole (a snoop): every thread of it sees it. */
static void core_event(struct memsys *m, struct ms_core *k, int ev)
{
	for (uint32_t t = 0; t < k->nthreads; t++)
		m->event(k->thread[t], ev, 1);
}

/*
 * Takes `line` out of core k's L1s (the L2 lost it). A dirty L1D copy is
 * written back first: to `thread`'s count, or the whole core's when thread
 * is NULL (a snoop from elsewhere).
 */
static void l1_remove(struct memsys *m, struct ms_core *k, void *thread, uint64_t line)
{
	uint8_t st;

	/* An epoch moves only if its L1 had the line (an L2 victim mostly left the L1I long ago). */
	if (sa_remove(&k->l1d, line, &st)) {
		k->l1d_epoch++;
		if ((st & MS_DIRTY) && thread)
			m->event(thread, PEV_DATA_CACHE_LINES_WRITTEN_BACK, 1);
		else if (st & MS_DIRTY)
			core_event(m, k, PEV_DATA_CACHE_LINES_WRITTEN_BACK);
	}
	if (sa_remove(&k->l1i, line, NULL)) {
		k->l1i_epoch++;
		k->l1i_last = SA_EMPTY;
	} else if (k->l1i_last == line) {
		k->l1i_last = SA_EMPTY;
	}
}

/*
 * Every other core's L2 sees a snoop for `line`: a read turns M and E copies
 * into S, an ownership request invalidates every copy. Returns whether any
 * other L2 held the line (it supplies the data).
 */
static bool snoop(struct memsys *m, struct ms_core *self, uint64_t line, bool invalidate)
{
	bool held = false;

	for (uint32_t c = 0; c < m->ncores; c++) {
		struct ms_core *k = &m->core[c];
		if (k == self)
			continue;
		uint8_t *st = sa_peek(&k->l2, line);
		if (!st)
			continue;
		held = true;
		core_event(m, k, *st == MS_M ? PEV_SNP_HITM_L2 : PEV_SNP_HIT_L2);
		if (invalidate) {
			sa_remove(&k->l2, line, NULL);
			l1_remove(m, k, NULL, line);
			continue;
		}
		if (*st == MS_M) { /* the modified data goes to memory too; the L1D copy is clean from now on */
			uint8_t *d = sa_peek(&k->l1d, line);
			if (d && (*d & MS_DIRTY)) {
				*d &= ~MS_DIRTY;
				k->l1d_epoch++;
				core_event(m, k, PEV_DATA_CACHE_LINES_WRITTEN_BACK);
			}
		}
		*st = MS_S;
	}
	return held;
}

static const int read_hit_event[] = { [MS_S] = PEV_L2_READ_HIT_S, [MS_E] = PEV_L2_READ_HIT_E, [MS_M] = PEV_L2_READ_HIT_M };

/* An L1 miss (or, for REQ_RFO, an ownership request) reaches core k's L2. */
static void l2_request(struct memsys *m, struct ms_core *k, void *thread, uint64_t line, enum l2_req req)
{
	uint8_t *st = sa_lookup(&k->l2, line, NULL);

	if (st) {
		if (req != REQ_RFO) {
			m->event(thread, read_hit_event[*st], 1);
			return;
		}
		m->event(thread, PEV_L2_WRITE_HIT, 1);
		if (*st == MS_S) {
			snoop(m, k, line, true);
			st = sa_peek(&k->l2, line); /* the snoop touched other sets only, but look again */
		}
		*st = MS_M;
		return;
	}
	if (req != REQ_RFO)
		m->event(thread, PEV_L2_READ_MISS, 1);
	bool from_cache = snoop(m, k, line, req == REQ_RFO);
	static const int fill[3][2] = {
		[REQ_CODE] = { PEV_L2_CODE_READ_MISS_MEM_FILL, PEV_L2_CODE_READ_MISS_CACHE_FILL },
		[REQ_READ] = { PEV_L2_DATA_READ_MISS_MEM_FILL, PEV_L2_DATA_READ_MISS_CACHE_FILL },
		[REQ_RFO] = { PEV_L2_DATA_WRITE_MISS_MEM_FILL, PEV_L2_DATA_WRITE_MISS_CACHE_FILL },
	};
	m->event(thread, fill[req][from_cache], 1);
	uint8_t state = req == REQ_RFO ? MS_M : from_cache ? MS_S : MS_E;
	struct sa_way victim = sa_insert(&k->l2, line, state, 0);
	if (victim.key != SA_EMPTY)
		l1_remove(m, k, thread, victim.key); /* inclusion */
}

/*
 * flatten: the L2 request, the snoops and the set look-ups inlined into this
 * one call (QEMU's CPU for matmul 256, whose every other access comes here,
 * 0.95x: median of 16 paired runs, 11 of them faster).
 */
__attribute__((flatten)) bool memsys_data_slow(struct memsys *m, uint32_t c, void *thread, uint64_t line, bool write)
{
	struct ms_core *k = &m->core[c];
	uint8_t *st = sa_lookup_slow(&k->l1d, line, NULL); /* memsys_data saw it is not the set's most recent */

	k->l1d_epoch++;
	if (st) {
		if (write && !(*st & MS_DIRTY)) {
			*st |= MS_DIRTY;
			uint8_t *l2 = sa_peek(&k->l2, line);
			if (*l2 == MS_S)
				l2_request(m, k, thread, line, REQ_RFO);
			else
				*l2 = MS_M;
		}
		return false;
	}
	l2_request(m, k, thread, line, write ? REQ_RFO : REQ_READ);
	struct sa_way victim = sa_insert(&k->l1d, line, write ? MS_DIRTY : 0, 0);
	if (victim.key != SA_EMPTY && (victim.state & MS_DIRTY))
		m->event(thread, PEV_DATA_CACHE_LINES_WRITTEN_BACK, 1);
	return true;
}

bool memsys_l2_prefetch(struct memsys *m, uint32_t c, void *thread, uint64_t line)
{
	struct ms_core *k = &m->core[c];

	if (sa_lookup(&k->l2, line, NULL))
		return false; /* a hit: the line is the set's most recent now, as a read's would be */
	l2_request(m, k, thread, line, REQ_READ);
	return true;
}

bool memsys_code_slow(struct memsys *m, uint32_t c, void *thread, uint64_t line)
{
	struct ms_core *k = &m->core[c];

	k->l1i_epoch++;
	k->l1i_last = line;
	if (sa_lookup(&k->l1i, line, NULL))
		return false;
	l2_request(m, k, thread, line, REQ_CODE);
	sa_insert(&k->l1i, line, 0, 0);
	/* l2_request may have removed l1i_last's line (inclusion) before the insert: this line is in now. */
	k->l1i_last = line;
	return true;
}
