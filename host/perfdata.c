/*
 * pmuctl report --to-perf FILE: a pmuctl recording (host/record.h, read
 * through rec_open/rec_next only) as a perf.data file that Linux perf's
 * `perf report -i`, `perf script -i` and hotspot open. The format is the
 * one Linux documents in "perf.data format" (tools/perf/Documentation,
 * "PERFILE2"): a header, one attribute per event, the data section of
 * records, then the feature sections the header's bitmap announces. The
 * records' layouts are those of include/uapi/linux/perf_event.h
 * (Debian's linux-libc-dev: struct perf_event_attr, PERF_RECORD_*):
 *   - one attribute: the KNC event as PERF_TYPE_RAW, config = its EvtSel
 *     without EN/INT (327357-001 Table 1-5), sampling every `period`; or
 *     for record -e cpu-clock perf's PERF_TYPE_SOFTWARE/PERF_COUNT_SW_CPU_CLOCK
 *     every `period` ns leading the counted events (struct events);
 *   - PERF_RECORD_COMM for each task that has samples (pid PERF_PID, its
 *     tid as the recording names it, rec_tid: PERF_PID + CPU for an
 *     instance per CPU, PERF_PID + thread number for a process's threads);
 *   - PERF_RECORD_MMAP of the card's kernel as perf writes the host's
 *     ("[kernel.kallsyms]" + a reference symbol, pgoff = that symbol's
 *     address, pid -1), spanning System.map's symbols: `perf report
 *     --kallsyms System.map` or `--vmlinux kernel.elf` names kernel samples;
 *   - PERF_RECORD_MMAP2 of each executable segment of the program, by its
 *     absolute path, as the kernel reports an ELF's mapping (address,
 *     length, file offset; once, for the pid all tasks share);
 *   - PERF_RECORD_SAMPLE with IP, TID, TIME (ns from the card's TSC), CPU,
 *     PERIOD and, for record -g, CALLCHAIN (PERF_CONTEXT_USER, the IP, the
 *     return addresses);
 *   - features HEADER_BUILD_ID (the program's build ID, so perf refuses a
 *     rebuilt program instead of naming the wrong functions), HEADER_HOSTNAME,
 *     HEADER_OSRELEASE, HEADER_ARCH and HEADER_EVENT_DESC (the event's name
 *     as given to record -e). HOSTNAME is not optional in practice: perf's
 *     header reader (and hotspot's, after it) takes a file without HOSTNAME
 *     or CMDLINE for one whose feature bitmap was byte-swapped, and drops
 *     every feature but BUILD_ID ("bad feature data").
 * Kernel samples (CPL 0) carry PERF_RECORD_MISC_KERNEL and their chain after
 * PERF_CONTEXT_KERNEL.
 *
 * The program's mapping: hotspot (through libdwfl) places an executable ELF
 * at its first PT_LOAD's page and requires it to equal the mapping's
 * address - file offset, which holds when that segment starts the file, as
 * ld lays out a static program (user/user.ld does). Debian's perf 6.1 then
 * prints call chains' user addresses as file offsets (`perf script`: its
 * "binary offset" for user DSOs, for its own recordings as for these) and
 * the sampled IP (`perf script -G`) as the virtual address.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host/pfm.h"
#include "host/pmuctl.h"
#include "host/record.h"

#define PERF_MAGIC2      0x32454c4946524550ULL /* "PERFILE2" read as a little-endian u64 */
#define HEADER_BUILD_ID   2                    /* feature bits ("perf.data format") */
#define HEADER_HOSTNAME   3
#define HEADER_OSRELEASE  4
#define HEADER_ARCH       6
#define HEADER_EVENT_DESC 12
#define NFEATURES         5                    /* the ones written, above */
#define NAME_ALIGN        64                   /* strings of feature sections are padded to this */
#define MAX_SEGMENTS      8

struct perf_file_section {
	uint64_t offset, size;
};

struct perf_file_header {
	uint64_t magic, size, attr_size;
	struct perf_file_section attrs, data, event_types;
	uint64_t features[4]; /* HEADER_* bits, 256 */
};

struct perf_file_attr {
	struct perf_event_attr attr;
	struct perf_file_section ids;
};

struct out {
	FILE *f;
	const char *path;
	int failed;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (n && fwrite(p, n, 1, o->f) != 1)
		o->failed = 1;
}

static void pad(struct out *o, size_t n)
{
	static const char zeros[NAME_ALIGN];
	put(o, zeros, n);
}

/* A string padded with NULs to a multiple of `align` bytes (its NUL included). */
static size_t put_string(struct out *o, const char *s, size_t align)
{
	size_t n = strlen(s) + 1, all = (n + align - 1) / align * align;

	put(o, s, n);
	pad(o, all - n);
	return all;
}

static void put_header(struct out *o, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = size };
	put(o, &h, sizeof(h));
}

struct segment {
	uint64_t addr, len, pgoff;
};

/* The program's executable PT_LOAD segments (libelf); how many, 0 if it cannot be read (said on stderr). */
static int exec_segments(const char *path, struct segment *seg)
{
	int fd = open(path, O_RDONLY), n = 0;
	size_t nph = 0;

	if (fd < 0) {
		fprintf(stderr, "pmuctl: report: %s: %s; its samples have no map in perf.data\n", path, strerror(errno));
		return 0;
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &nph) != 0)
		fprintf(stderr, "pmuctl: report: %s is not an ELF file with program headers\n", path);
	for (size_t i = 0; e && i < nph && n < MAX_SEGMENTS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			seg[n++] = (struct segment){ ph.p_vaddr, ph.p_memsz, ph.p_offset };
	}
	if (e)
		elf_end(e);
	close(fd);
	return n;
}

static void write_comm(struct out *o, uint32_t tid, const char *comm)
{
	size_t n = (strlen(comm) + 1 + 7) / 8 * 8;
	uint32_t ids[2] = { PERF_PID, tid };

	put_header(o, PERF_RECORD_COMM, 0, sizeof(struct perf_event_header) + sizeof(ids) + n);
	put(o, ids, sizeof(ids));
	put_string(o, comm, 8);
}

/* PERF_RECORD_MMAP2's body after pid/tid (perf_event.h): no device, inode or build ID of the mapping itself. */
struct mmap2_body {
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};

static void write_mmap2(struct out *o, const struct segment *s, const char *path)
{
	size_t n = (strlen(path) + 1 + 7) / 8 * 8;
	uint32_t ids[2] = { PERF_PID, PERF_PID };
	struct mmap2_body b = { .addr = s->addr, .len = s->len, .pgoff = s->pgoff, .prot = PROT_READ | PROT_EXEC,
				.flags = MAP_PRIVATE };

	put_header(o, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER,
		   sizeof(struct perf_event_header) + sizeof(ids) + sizeof(b) + n);
	put(o, ids, sizeof(ids));
	put(o, &b, sizeof(b));
	put_string(o, path, 8);
}

/* The card kernel's image from System.map: its first symbol (perf's reference symbol) to its last. */
struct kernel_map {
	uint64_t start, end;
	char ref[128];
};

/* Reads `path` (nm -n output) into *k; 0, or -1 if it cannot be read or holds no symbol. */
static int kernel_map(const char *path, struct kernel_map *k)
{
	FILE *f = fopen(path, "r");
	char line[512], type, name[128];
	unsigned long long a;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &a, &type, name) == 3 && n++ == 0) {
			k->start = a;
			strcpy(k->ref, name);
		} else if (n) {
			k->end = a;
		}
	fclose(f);
	return n > 1 && k->end > k->start ? 0 : -1;
}

/* PERF_RECORD_MMAP of the kernel: pid -1 (perf's "[kernel.kallsyms]" machine), pgoff = the reference symbol's address. */
static void write_kernel_mmap(struct out *o, const struct kernel_map *k)
{
	char name[sizeof("[kernel.kallsyms]") + sizeof(k->ref)];
	size_t n = (size_t)snprintf(name, sizeof(name), "[kernel.kallsyms]%s", k->ref);
	uint32_t ids[2] = { (uint32_t)-1, 0 };
	uint64_t b[3] = { k->start, k->end - k->start, k->start };

	put_header(o, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL,
		   sizeof(struct perf_event_header) + sizeof(ids) + sizeof(b) + (n + 1 + 7) / 8 * 8);
	put(o, ids, sizeof(ids));
	put(o, b, sizeof(b));
	put_string(o, name, 8);
}

/*
 * The events of a recording: one that samples, or for cpu-clock (rec_timed)
 * perf's cpu-clock leading the events counted beside it, as perf writes
 * `-e '{cpu-clock,EV,EV}:S'`: each sample reads the group
 * (PERF_SAMPLE_READ, PERF_FORMAT_GROUP | PERF_FORMAT_ID), and perf report
 * gives each event the increments of its count between samples.
 */
struct events {
	int n;                         /* 1 + the counted events */
	uint32_t evtsel[1 + 2];        /* [0] the sampling event's (0 for cpu-clock) */
	char name[1 + 2][64];
	uint64_t last[PMU_SAMPLE_COUNTERS];              /* cpu-clock: each counted event's count so far (40-bit counters unwrapped) */
	uint64_t raw[PMU_SAMPLE_COUNTERS], clock;        /* the counters' last readings; the cpu-clock's ns so far */
};

static void events_of(const struct rec_header *h, struct events *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->n = 1;
	ev->evtsel[0] = h->evtsel;
	snprintf(ev->name[0], sizeof(ev->name[0]), "%s", h->event);
	if (!rec_timed(h))
		return;
	snprintf(ev->name[0], sizeof(ev->name[0]), "cpu-clock");
	pfm_setup(pfm_pmu_at(h->pmu)); /* the names are the recorded card's PMU's */
	int n = rec_cpu_clock_events(h->event, ev->evtsel + 1, ev->name + 1);
	ev->n += n > 0 ? n : 0; /* record wrote at most 2 */
}

static uint64_t id_of(int k) { return 1 + k; } /* each event's one ID */

static void write_sample(struct out *o, const struct rec_header *h, struct events *ev, const struct rec_sample *r)
{
	struct {
		uint64_t ip;
		uint32_t pid, tid;
		uint64_t time;
		uint32_t cpu, res;
		uint64_t period;
	} b = { .ip = r->s.rip, .pid = rec_tid(h, r->s.cpu) ? PERF_PID : 0, .tid = rec_tid(h, r->s.cpu), .cpu = r->s.cpu,
		.period = h->period }; /* tid 0: a CPU no thread held, perf's idle task */
	uint64_t chain[PMU_CALLCHAIN_MAX + 3], read[1 + 2 * 3];
	uint64_t nr = 0, id = id_of(0);
	size_t nread = 0;
	int user = r->s.cpl != 0, timed = rec_timed(h);

	if (timed) { /* the group's read: nr, then each event's count and ID */
		ev->clock += h->period;
		read[nread++] = ev->n;
		read[nread++] = ev->clock;
		read[nread++] = id_of(0);
		for (int k = 1; k < ev->n; k++) {
			ev->last[k - 1] += (r->s.ctr[k - 1] - ev->raw[k - 1]) & ((1ULL << PMU_SAMPLE_CTR_BITS) - 1);
			ev->raw[k - 1] = r->s.ctr[k - 1];
			read[nread++] = ev->last[k - 1];
			read[nread++] = id_of(k);
		}
	}

	b.time = h->tsc_hz ? (uint64_t)((unsigned __int128)r->s.tsc * 1000000000u / h->tsc_hz) : r->s.tsc;
	if (h->frames) {
		chain[nr++] = user ? PERF_CONTEXT_USER : PERF_CONTEXT_KERNEL;
		chain[nr++] = r->s.rip;
		for (uint32_t i = 0; i < r->s.nframes; i++)
			chain[nr++] = r->chain[i];
	}
	put_header(o, PERF_RECORD_SAMPLE, user ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL,
		   sizeof(struct perf_event_header) + (timed ? sizeof(id) : 0) + sizeof(b) + nread * 8 +
		   (h->frames ? 8 + nr * 8 : 0));
	if (timed)
		put(o, &id, sizeof(id)); /* PERF_SAMPLE_IDENTIFIER: which event, first */
	put(o, &b, sizeof(b));
	put(o, read, nread * 8);
	if (h->frames) {
		put(o, &nr, sizeof(nr));
		put(o, chain, nr * 8);
	}
}

/* Event k's attribute (struct events): the group's, for cpu-clock, all of one sample type. */
static struct perf_event_attr attr_of(const struct rec_header *h, const struct events *ev, int k)
{
	int timed = rec_timed(h); /* perf's own cpu-clock leads, its period in ns */
	struct perf_event_attr a = {
		.type = timed && k == 0 ? PERF_TYPE_SOFTWARE : PERF_TYPE_RAW, .size = sizeof(a),
		.config = timed && k == 0 ? PERF_COUNT_SW_CPU_CLOCK : ev->evtsel[k], .sample_period = k ? 0 : h->period,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_PERIOD | (h->frames ? PERF_SAMPLE_CALLCHAIN : 0) |
			       (timed ? PERF_SAMPLE_READ | PERF_SAMPLE_IDENTIFIER : 0),
		.read_format = timed ? PERF_FORMAT_GROUP | PERF_FORMAT_ID : 0,
	};
	return a;
}

/* HEADER_BUILD_ID: one build_id_event ("perf.data format") for the program; pid -1, the host. */
static uint64_t write_build_ids(struct out *o, const struct rec_header *h)
{
	if (!h->build_id_len)
		return 0;
	size_t name = (strlen(h->path) + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
	uint8_t id[24] = { 0 }; /* 20 bytes, aligned to 8 */
	int32_t pid = -1;
	size_t size = sizeof(struct perf_event_header) + sizeof(pid) + sizeof(id) + name;

	memcpy(id, h->build_id, h->build_id_len);
	put_header(o, 0, PERF_RECORD_MISC_USER, size);
	put(o, &pid, sizeof(pid));
	put(o, id, sizeof(id));
	put_string(o, h->path, NAME_ALIGN);
	return size;
}

/* A perf_header_string ("perf.data format"): its padded length, then the string; the bytes written. */
static uint64_t write_string_feature(struct out *o, const char *str)
{
	uint32_t len = (strlen(str) + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	put(o, &len, sizeof(len));
	return sizeof(len) + put_string(o, str, NAME_ALIGN);
}

/* HEADER_EVENT_DESC: each event's attribute, name and (for a group) ID. */
static uint64_t write_event_desc(struct out *o, const struct rec_header *h, const struct events *ev)
{
	uint32_t head[2] = { ev->n, sizeof(struct perf_event_attr) }, nr_ids = ev->n > 1;
	uint64_t size = sizeof(head);

	put(o, head, sizeof(head));
	for (int k = 0; k < ev->n; k++) {
		struct perf_event_attr a = attr_of(h, ev, k);
		uint32_t len = (strlen(ev->name[k]) + 1 + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
		uint64_t id = id_of(k);
		put(o, &a, sizeof(a));
		put(o, &nr_ids, sizeof(nr_ids));
		put(o, &len, sizeof(len));
		put_string(o, ev->name[k], NAME_ALIGN);
		if (nr_ids)
			put(o, &id, sizeof(id));
		size += sizeof(a) + sizeof(nr_ids) + sizeof(len) + len + nr_ids * sizeof(id);
	}
	return size;
}

int perf_convert(const char *in, const char *outpath, const char *system_map)
{
	struct rec_header h;
	struct rec_sample r;
	uint64_t cpus[CPUSET_MAX / 64] = { 0 }, n = 0, nkernel = 0;
	int st;
	FILE *f = rec_open(in, &h);

	if (!f)
		return 1;
	while ((st = rec_next(f, in, &r)) == 1) { /* first pass: the CPUs, whose tasks get a COMM; kernel samples */
		if (r.s.cpu < CPUSET_MAX)
			cpus[r.s.cpu / 64] |= 1ULL << (r.s.cpu % 64);
		nkernel += r.s.cpl == 0;
	}
	fclose(f);
	if (st < 0)
		return 1;
	struct out o = { fopen(outpath, "wb"), outpath, 0 };
	if (!o.f) {
		fprintf(stderr, "pmuctl: cannot write %s: %s\n", outpath, strerror(errno));
		return 1;
	}
	struct events ev;
	events_of(&h, &ev);
	struct perf_file_header fh = { .magic = PERF_MAGIC2, .size = sizeof(fh), .attr_size = sizeof(struct perf_file_attr) };
	struct perf_file_attr fa[3];
	uint64_t ids[3];
	/* the header, each event's ID (a group's only), the attributes, then the data */
	size_t ids_at = sizeof(fh), attrs_at = ids_at + (ev.n > 1 ? ev.n * sizeof(ids[0]) : 0);
	for (int k = 0; k < ev.n; k++) {
		ids[k] = id_of(k);
		fa[k] = (struct perf_file_attr){ .attr = attr_of(&h, &ev, k) };
		if (ev.n > 1)
			fa[k].ids = (struct perf_file_section){ ids_at + k * sizeof(ids[0]), sizeof(ids[0]) };
	}
	fh.attrs = (struct perf_file_section){ attrs_at, ev.n * sizeof(fa[0]) };
	fh.data.offset = attrs_at + ev.n * sizeof(fa[0]);
	fh.features[0] = 1ULL << HEADER_BUILD_ID | 1ULL << HEADER_HOSTNAME | 1ULL << HEADER_OSRELEASE |
			 1ULL << HEADER_ARCH | 1ULL << HEADER_EVENT_DESC;
	put(&o, &fh, sizeof(fh));
	if (ev.n > 1)
		put(&o, ids, ev.n * sizeof(ids[0]));
	put(&o, fa, ev.n * sizeof(fa[0]));

	const char *comm = strrchr(h.path, '/') ? strrchr(h.path, '/') + 1 : h.path;
	for (uint32_t cpu = 0; cpu < CPUSET_MAX; cpu++) { /* each tid once: a CPU's thread, an idle CPU none */
		int named = !rec_tid(&h, cpu) || !(cpus[cpu / 64] >> (cpu % 64) & 1);
		for (uint32_t k = 0; k < cpu && !named; k++)
			named = cpus[k / 64] >> (k % 64) & 1 && rec_tid(&h, k) == rec_tid(&h, cpu);
		if (!named)
			write_comm(&o, rec_tid(&h, cpu), comm);
	}
	struct kernel_map k = { 0 };
	if (kernel_map(system_map, &k) == 0)
		write_kernel_mmap(&o, &k);
	else if (nkernel)
		fprintf(stderr, "pmuctl: report: no kernel symbols from %s: its %llu kernel samples have no map in "
			"perf.data\n", system_map, (unsigned long long)nkernel);
	struct segment seg[MAX_SEGMENTS];
	for (int i = 0, nseg = exec_segments(h.path, seg); i < nseg; i++)
		write_mmap2(&o, &seg[i], h.path);
	if (!(f = rec_open(in, &h)))
		return 1;
	while ((st = rec_next(f, in, &r)) == 1) {
		write_sample(&o, &h, &ev, &r);
		n++;
	}
	fclose(f);
	fh.data.size = ftell(o.f) - fh.data.offset;

	/* The features: their sections' table, then each one's bytes, in bit order. */
	struct perf_file_section feat[NFEATURES];
	uint64_t at = fh.data.offset + fh.data.size + sizeof(feat);
	put(&o, feat, sizeof(feat)); /* rewritten below */
	uint64_t sizes[NFEATURES]; /* written in this order: an initializer list's calls have none */
	sizes[0] = write_build_ids(&o, &h);
	sizes[1] = write_string_feature(&o, "pmuos card");
	sizes[2] = write_string_feature(&o, "pmuos " PMUOS_VERSION);
	sizes[3] = write_string_feature(&o, "x86_64"); /* KNC's x86-64 (k1om), as perf names it */
	sizes[4] = write_event_desc(&o, &h, &ev);
	for (int i = 0; i < NFEATURES; i++) {
		feat[i] = (struct perf_file_section){ at, sizes[i] };
		at += sizes[i];
	}
	if (fseek(o.f, fh.data.offset + fh.data.size, SEEK_SET) == 0)
		put(&o, feat, sizeof(feat));
	if (fseek(o.f, 0, SEEK_SET) == 0)
		put(&o, &fh, sizeof(fh));
	if (fclose(o.f) != 0 || o.failed || st < 0) {
		fprintf(stderr, "pmuctl: %s: %s\n", outpath, st < 0 ? "not written in full" : strerror(errno));
		return 1;
	}
	fprintf(stderr, "[ pmuctl report: %llu samples written to %s (perf.data) ]\n", (unsigned long long)n, outpath);
	return 0;
}
