/* The recording file pmuctl record writes: its one reader, and the build ID it records; see host/record.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/pfm.h"
#include "host/pmuctl.h"
#include "host/record.h"

int rec_cpu_clock_events(const char *ev, uint32_t sel[PMU_SAMPLE_COUNTERS], char name[PMU_SAMPLE_COUNTERS][64])
{
	char list[256];
	int n = 0;

	snprintf(list, sizeof(list), "%s", ev + 9);
	for (char *save, *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		if (n == PMU_SAMPLE_COUNTERS)
			return -1;
		snprintf(name[n], 64, "%s", e);
		sel[n++] = encode(e);
	}
	return n;
}

FILE *rec_open(const char *file, struct rec_header *h)
{
	FILE *f = fopen(file, "rb");

	memset(h, 0, sizeof(*h));
	if (!f) {
		fprintf(stderr, "pmuctl: cannot open %s: %s%s\n", file, strerror(errno),
			errno == ENOENT ? " (pmuctl record writes it; -i FILE names another)" : "");
		return NULL;
	}
	if (fread(h, REC_HEADER_V1, 1, f) != 1 || memcmp(h->magic, REC_MAGIC, 8)) {
		fprintf(stderr, "pmuctl: %s is not a pmuctl recording\n", file);
		fclose(f);
		return NULL;
	}
	size_t size = h->version == 2 ? REC_HEADER_V2 : sizeof(*h); /* version 1's is read */
	if (h->version < 1 || h->version > REC_VERSION ||
	    (h->version > 1 && fread((char *)h + REC_HEADER_V1, size - REC_HEADER_V1, 1, f) != 1)) {
		fprintf(stderr, "pmuctl: %s is a pmuctl recording of version %u%s; this pmuctl reads versions 1 to %d\n",
			file, h->version, h->version > 1 && h->version <= REC_VERSION ? " with a short header" : "",
			REC_VERSION);
		fclose(f);
		return NULL;
	}
	for (uint32_t cpu = 0; h->version < 3 && cpu < CPUSET_MAX; cpu++) /* before threads: a task per CPU */
		h->tid[cpu] = PERF_PID + cpu;
	h->program[sizeof(h->program) - 1] = h->event[sizeof(h->event) - 1] = h->path[sizeof(h->path) - 1] = 0;
	if (h->version == 1) { /* version 1: the program as given, no chains (nframes was reserved, 0) */
		h->frames = 0;
		snprintf(h->path, sizeof(h->path), "%s", h->program);
	}
	if (h->frames > PMU_CALLCHAIN_MAX || h->build_id_len > REC_BUILD_ID_MAX) {
		fprintf(stderr, "pmuctl: %s: its header says %u frames and a %u-byte build ID (at most %d and %d)\n",
			file, h->frames, h->build_id_len, PMU_CALLCHAIN_MAX, REC_BUILD_ID_MAX);
		fclose(f);
		return NULL;
	}
	return f;
}

int rec_next(FILE *f, const char *file, struct rec_sample *out)
{
	uint64_t slot[PMU_FRAMES_PER_SLOT];

	if (fread(&out->s, sizeof(out->s), 1, f) != 1)
		return 0;
	if (out->s.nframes > PMU_CALLCHAIN_MAX) {
		fprintf(stderr, "pmuctl: %s: a sample of CPU %u says it has %u frames (at most %d)\n", file,
			out->s.cpu, out->s.nframes, PMU_CALLCHAIN_MAX);
		return -1;
	}
	for (uint32_t k = 0; k < PMU_CHAIN_SLOTS(out->s.nframes); k++) {
		if (fread(slot, sizeof(slot), 1, f) != 1) {
			fprintf(stderr, "pmuctl: %s: the file ends inside a call chain\n", file);
			return -1;
		}
		for (uint32_t i = 0; i < PMU_FRAMES_PER_SLOT && k * PMU_FRAMES_PER_SLOT + i < out->s.nframes; i++)
			out->chain[k * PMU_FRAMES_PER_SLOT + i] = slot[i];
	}
	return 1;
}

uint32_t rec_build_id(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY);
	uint32_t len = 0;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	for (Elf_Scn *scn = NULL; e && !len && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		GElf_Nhdr nh;
		size_t off = 0, name, desc;
		while (!len && (off = gelf_getnote(d, off, &nh, &name, &desc)) > 0)
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name, "GNU", 4) && nh.n_descsz <= REC_BUILD_ID_MAX) {
				memcpy(id, (char *)d->d_buf + desc, nh.n_descsz);
				len = nh.n_descsz;
			}
	}
	if (e)
		elf_end(e);
	close(fd);
	return len;
}
