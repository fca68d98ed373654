/* The report of KNC-missing instructions; see plugin/isacheck.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/isacheck.h"

enum knc_mode knc_mode;
static FILE *log_file;
static struct knc_site sites[KNC_SITES_MAX + 1]; /* [KNC_SITES_MAX]: every site past the ceiling */
static unsigned nsites;

static struct { uint64_t lo, hi; } ignored[KNC_IGNORE_MAX];
static unsigned nignored;

bool knc_ignore(const char *range)
{
	char *end;
	uint64_t lo = strtoull(range, &end, 0), hi;

	if (end == range || *end != '-' || nignored == KNC_IGNORE_MAX)
		return false;
	range = end + 1;
	hi = strtoull(range, &end, 0);
	if (end == range || *end || hi <= lo)
		return false;
	ignored[nignored].lo = lo;
	ignored[nignored++].hi = hi;
	return true;
}

bool knc_reported(const char *mnemonic, bool port_io, uint64_t vaddr)
{
	if (!mnemonic || knc_mode == KNC_OFF || (port_io && knc_mode == KNC_PC))
		return false;
	for (unsigned i = 0; i < nignored; i++)
		if (vaddr >= ignored[i].lo && vaddr < ignored[i].hi)
			return false;
	return true;
}

struct knc_site *knc_site(uint64_t vaddr, const char *mnemonic, bool user)
{
	for (unsigned i = 0; i < nsites; i++)
		if (sites[i].vaddr == vaddr && sites[i].mnemonic == mnemonic)
			return &sites[i];
	struct knc_site *s = &sites[nsites < KNC_SITES_MAX ? nsites++ : KNC_SITES_MAX];
	if (s->mnemonic)
		return s; /* the shared one, made by the first site past the ceiling */
	*s = (struct knc_site){ .vaddr = vaddr, .mnemonic = mnemonic, .user = user };
	return s;
}

bool knc_open_log(const char *path)
{
	log_file = fopen(path, "w");
	if (!log_file)
		fprintf(stderr, "pmuos-pmu: cannot write %s: %s\n", path, strerror(errno));
	return log_file != NULL;
}

/* One line to stderr and, flushed at once (QEMU may be killed), to the log. */
static void say(const char *line)
{
	fputs(line, stderr);
	if (log_file) {
		fputs(line, log_file);
		fflush(log_file);
	}
}

void on_knc(unsigned int vcpu, void *udata)
{
	struct knc_site *s = udata;
	char line[224];

	if (s->count++)
		return;
	int n = snprintf(line, sizeof(line), "pmuos-pmu: knc: CPU %u CPL %d at %#" PRIx64 ": %s, which a KNC core lacks",
			 vcpu, s->user ? 3 : 0, s->vaddr, s->mnemonic);
	if (s == &sites[KNC_SITES_MAX] && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, " (past %d sites: every later one is counted with this one)", KNC_SITES_MAX);
	strncat(line, "\n", sizeof(line) - strlen(line) - 1);
	say(line);
}

void knc_summary(void)
{
	uint64_t n = 0, executions = 0;
	char line[160];

	for (const struct knc_site *s = sites; s <= &sites[KNC_SITES_MAX]; s++)
		if (s->count) {
			n++;
			executions += s->count;
		}
	snprintf(line, sizeof(line), "pmuos-pmu: knc: %" PRIu64 " instructions a KNC core lacks ran, %" PRIu64
		 " times in all\n", n, executions);
	say(line);
}
