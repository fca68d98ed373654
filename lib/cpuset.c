/* CPU-set parsing; see lib/cpuset.h. Pure, unit-tested on the host. */
#include "lib/cpuset.h"
#include "lib/fmt.h"
#include "lib/lib.h"

static bool parse_cpu(const char *s, size_t n, uint32_t ncpus, uint32_t *cpu, char *err, size_t errlen)
{
	char buf[12];
	uint64_t v;

	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, errlen, "'%.*s' is not a CPU number", (int)MIN(n, 16), s);
		return false;
	}
	memcpy(buf, s, n);
	buf[n] = 0;
	if (!parse_u64(buf, UINT32_MAX, &v)) {
		snprintf(err, errlen, "'%s' is not a CPU number", buf);
		return false;
	}
	if (v >= ncpus || v >= CPUSET_MAX) {
		if (ncpus == 0)
			snprintf(err, errlen, "no CPU %lu (there are no CPUs)", (unsigned long)v);
		else
			snprintf(err, errlen, "no CPU %lu (CPUs are 0-%u)", (unsigned long)v,
				 MIN(ncpus, CPUSET_MAX) - 1);
		return false;
	}
	*cpu = v;
	return true;
}

bool cpuset_parse(const char *s, uint32_t ncpus, struct cpuset *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (strcmp(s, "all") == 0) {
		for (uint32_t i = 0; i < ncpus && i < CPUSET_MAX; i++)
			cpuset_add(out, i);
		return true;
	}
	if (!*s) {
		snprintf(err, errlen, "empty CPU set");
		return false;
	}
	for (const char *p = s;;) {
		const char *end = p;
		while (*end && *end != ',')
			end++;
		const char *dash = p;
		while (dash < end && *dash != '-')
			dash++;
		uint32_t a, b;
		if (!parse_cpu(p, dash - p, ncpus, &a, err, errlen))
			return false;
		b = a;
		if (dash < end && !parse_cpu(dash + 1, end - dash - 1, ncpus, &b, err, errlen))
			return false;
		if (b < a) {
			snprintf(err, errlen, "range '%.*s' runs backwards", (int)MIN(end - p, 24), p);
			return false;
		}
		for (uint32_t c = a; c <= b; c++)
			cpuset_add(out, c);
		if (!*end)
			return true;
		p = end + 1;
	}
}

uint32_t cpuset_count(const struct cpuset *s)
{
	uint32_t n = 0;

	for (size_t i = 0; i < CPUSET_MAX / 64; i++)
		n += popcount64(s->bits[i]);
	return n;
}
