/*
 * pmuos-pmu.so: a QEMU TCG plugin that counts what a KNC core's PMU counts
 * beyond instructions and cycles (pmu/plugin_events.h), from the guest's
 * execution, into the counters the card's PMU model owns (the shared page,
 * include/pmuos/pmushare.h). Loaded by scripts/qemu.sh:
 *   -plugin build/pmuos-pmu.so,page=/dev/shm/pmuos-CARD-pmu,threads=4[,verify=on]
 *   page=PATH   the file behind the card's shared-page device (created, sized and
 *               zeroed here if need be)
 *   threads=N   hardware threads per core, 1-4: vCPU i is thread i % N of core i / N
 *   verify=on   check every cached address translation against QEMU's (slow;
 *               the page's xlate_checks / xlate_mismatches show the result)
 *   knc=pc|on   report each instruction a KNC core lacks that QEMU runs anyway
 *               (plugin/isacheck.h; pc: all but port I/O); knc=off (default): none
 *   knc_log=PATH  the report's lines also go to this file (truncated first)
 *   knc_ignore=LO-HI  code at [LO, HI) is not reported (up to 8 ranges)
 *   vcpu=translating  credit each block's callbacks to the vCPU that
 *               translated it, not the one running it: what QEMU 10.0's
 *               round-robin TCG does (accel/tcg/plugin-gen.c gen_cpu_index
 *               bakes the index into the block), so that a test can show it
 *               catches that fault (tests/system/test_per_thread.py);
 *               vcpu=running (default): the index QEMU 7.2 passes
 * Per vCPU it sees each translation block (a straight run of instructions
 * ending at a branch) as it starts (exec callback on its first instruction:
 * the block's instruction fetches, code TLB, vector instructions and
 * branch) and each memory access after it happens (memory callback);
 * a branch is resolved by the next block the vCPU executes. An
 * instruction is counted when its block starts: one that follows a faulting
 * instruction of the same block would count too, but in pmuos such a fault
 * (a page fault) ends the task. An access counts, and reaches the
 * caches, only as one of an instruction of the block being executed: the
 * accesses QEMU makes to deliver an interrupt come as another's and count
 * nowhere (exec.c executing; the rule, docs/design.md §11). The
 * simulation (caches, TLBs, branch predictor: plugin/memsys.h, tlb.h,
 * bpred.h) runs at all times, so caches are warm when counting starts;
 * a thread's TLBs only while one of its EvtSels names a TLB event (nothing
 * else depends on them), starting empty when one does (exec.c tlb_events).
 * It also keeps each vCPU's own instruction clock in the page (an inline
 * add before every instruction, switched at each block's first callback:
 * internal.h clock_switch), which the model counts instructions and cycles
 * by, so each thread's counts are its own (docs/design.md §5.2).
 * QEMU runs the plugin in its vCPU thread; under -icount (and
 * -accel tcg,thread=single, which scripts/qemu.sh sets) all vCPUs share one
 * thread, so neither the simulation nor the page needs locks. The plugin
 * refuses to go on if it sees a second thread.
 * This file sets the plugin up (arguments, the shared page, each vCPU's
 * state); exec.c has the callbacks, translate.c the block records.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/classify.h"
#include "plugin/internal.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct pmushare *page;
struct thr *thr;
unsigned ncpus, threads_per_core = 1;
struct memsys mem;
bool verify;
bool vcpu_translating;
bool stopped;
unsigned counting_cpus;

/* ---- set-up ---- */

/* Maps the shared file (created or resized to PMUSHARE_BYTES) and writes its header. */
static bool map_page(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0 ||
	    (st.st_size != PMUSHARE_BYTES && ftruncate(fd, PMUSHARE_BYTES) != 0)) {
		fprintf(stderr, "pmuos-pmu: cannot use %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	void *p = mmap(NULL, PMUSHARE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "pmuos-pmu: cannot map %s: %s\n", path, strerror(errno));
		return false;
	}
	page = p;
	memset(page, 0, PMUSHARE_BYTES); /* a new machine: nothing the last one left counts */
	page->version = PMUSHARE_VERSION;
	page->cpus = ncpus;
	page->threads_per_core = threads_per_core;
	page->magic = PMUSHARE_MAGIC;
	return true;
}

static bool parse_args(int argc, char **argv, const char **path, const char **knc_log)
{
	*path = *knc_log = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "page=", 5) == 0 && a[5]) {
			*path = a + 5;
		} else if (strncmp(a, "threads=", 8) == 0 && a[8] >= '1' && a[8] <= '0' + MS_THREADS && !a[9]) {
			threads_per_core = a[8] - '0';
		} else if (strcmp(a, "verify=on") == 0 || strcmp(a, "verify=off") == 0) {
			verify = a[7] == 'o' && a[8] == 'n';
		} else if (strcmp(a, "vcpu=translating") == 0 || strcmp(a, "vcpu=running") == 0) {
			vcpu_translating = a[5] == 't';
		} else if (strcmp(a, "knc=off") == 0 || strcmp(a, "knc=pc") == 0 || strcmp(a, "knc=on") == 0) {
			knc_mode = a[4] == 'p' ? KNC_PC : a[5] == 'n' ? KNC_ON : KNC_OFF;
		} else if (strncmp(a, "knc_log=", 8) == 0 && a[8]) {
			*knc_log = a + 8;
		} else if (strncmp(a, "knc_ignore=", 11) == 0) {
			if (!knc_ignore(a + 11)) {
				fprintf(stderr, "pmuos-pmu: %s: not LO-HI with LO < HI, or more than %d ranges\n", a,
					KNC_IGNORE_MAX);
				return false;
			}
		} else {
			fprintf(stderr, "pmuos-pmu: unknown argument '%s' (page=PATH, threads=1-%d, verify=on|off, "
				"vcpu=running|translating, knc=off|pc|on, knc_log=PATH, knc_ignore=LO-HI)\n", a, MS_THREADS);
			return false;
		}
	}
	if (*knc_log && knc_mode == KNC_OFF) {
		fprintf(stderr, "pmuos-pmu: knc_log=PATH needs knc=pc or knc=on\n");
		return false;
	}
	if (!*path) {
		fprintf(stderr, "pmuos-pmu: page=PATH is required (the shared page's file)\n");
		return false;
	}
	return true;
}

static void on_exit_knc(qemu_plugin_id_t id, void *udata)
{
	knc_summary();
}

/* Every callback, at install and again after a qemu_plugin_reset (which removes them all). */
void callbacks_register(qemu_plugin_id_t id)
{
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_flush_cb(id, on_flush);
	if (knc_mode != KNC_OFF)
		qemu_plugin_register_atexit_cb(id, on_exit_knc, NULL);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	const char *path, *knc_log;

	if (!info->system_emulation || strcmp(info->target_name, "x86_64") != 0) {
		fprintf(stderr, "pmuos-pmu: needs qemu-system-x86_64\n");
		return -1;
	}
	ncpus = info->system.max_vcpus;
	if (ncpus < 1 || ncpus > PMUSHARE_CPUS) {
		fprintf(stderr, "pmuos-pmu: %u vCPUs; the shared page has slots for 1 to %d\n", ncpus, PMUSHARE_CPUS);
		return -1;
	}
	if (!parse_args(argc, argv, &path, &knc_log) || !map_codes() || !map_page(path) ||
	    (knc_log && !knc_open_log(knc_log)))
		return -1;
	if (!classify_init()) {
		fprintf(stderr, "pmuos-pmu: Capstone cannot decode x86-64: no timing model\n");
		return -1;
	}
	uint32_t ncores = (ncpus + threads_per_core - 1) / threads_per_core;
	thr = calloc(ncpus, sizeof(*thr));
	if (!thr || !memsys_init(&mem, ncores, on_event)) {
		fprintf(stderr, "pmuos-pmu: out of memory for %u vCPUs\n", ncpus);
		return -1;
	}
	for (unsigned v = 0; v < ncpus; v++) {
		struct thr *t = &thr[v];
		t->core = v / threads_per_core;
		t->xc = calloc(XC_ENTRIES, sizeof(*t->xc));
		if (!t->xc || !tlb_init(&t->tlb) || !bpred_init(&t->bp[0]) || !bpred_init(&t->bp[1]) ||
		    !memsys_attach(&mem, t->core, &t->cnt)) {
			fprintf(stderr, "pmuos-pmu: out of memory for %u vCPUs\n", ncpus);
			return -1;
		}
		count_init(&t->cnt, &page->thread[v], event_of);
		t->l1d_epoch = &mem.core[t->core].l1d_epoch;
		t->l1i_epoch = &mem.core[t->core].l1i_epoch;
		flush_translations(t);
		t->op_seq = UINT64_MAX;
	}
	counting_cpus = ncpus;
	callbacks_register(id);
	return 0;
}
