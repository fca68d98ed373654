/*
 * The card's event tables and strings (see pmu/events.h) and the one text for each PMU verdict
 * (pmu/rules.h), which names events: the shell prints it, and pmuctl
 * prints it for the verdict a mailbox answer carries (linked into pmuctl,
 * host/host.mk). Pure, unit-tested on the host.
 */
#include "pmu/events.h"
#include "pmu/plugin_events.h"
#include "pmu/knc/regs.h"
#include "pmu/rules.h"
#include "lib/fmt.h"
#include "lib/lib.h"
#include "knc_events.h" /* generated: $(BUILD)/gen/knc_events.h */
#include "knl_events.h" /* generated: $(BUILD)/gen/knl_events.h */

struct table {
	const char *pfm;
	const struct pmu_event *e;
	size_t n;
};
static const struct table knc = { "knc", knc_events, KNC_EVENT_COUNT }, knl = { "knl", knl_events, KNL_EVENT_COUNT };
static const struct table *cur = &knc;

void pmu_events_use(const char *pfm) { cur = pfm && strcmp(pfm, "knl") == 0 ? &knl : &knc; }
const char *pmu_events_pmu(void) { return cur->pfm; }
size_t pmu_event_count(void) { return cur->n; }
const struct pmu_event *pmu_event_at(size_t i) { return i < cur->n ? &cur->e[i] : NULL; }

const struct pmu_event *pmu_event_by_code(uint32_t evtsel)
{
	for (size_t i = 0; i < cur->n; i++)
		if (cur->e[i].code == EVTSEL_CODE(evtsel))
			return &cur->e[i];
	return NULL;
}

static const struct pmu_event *named_in(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->e[i].name, name) == 0)
			return &t->e[i];
	return NULL;
}

const struct pmu_event *pmu_event_named(const char *name) { return named_in(cur, name); }
const struct pmu_event *knc_event_named(const char *name) { return named_in(&knc, name); }

/* On KNL the model's two events and the plugin's KNL_PLUGIN_EVENTS, each the definition of its plugin event. */
static const char *knl_definition(const char *name, bool *plugin)
{
	static const char *const defs[PEV_COUNT] = {
#define DEF(n, def) def,
		PLUGIN_EVENTS(DEF)
#undef DEF
	};
	*plugin = false;
	if (strcmp(name, "INSTRUCTION_RETIRED") == 0 || strcmp(name, "INST_RETIRED:ANY") == 0)
		return "instructions, a tick of the thread's clock each (the model's, as KNC's INSTRUCTIONS_EXECUTED)";
	if (strcmp(name, "UNHALTED_CORE_CYCLES") == 0)
		return "a cycle per instruction (the model's: the plugin's timing model is KNC's)";
	*plugin = true;
#define KNL_DEF(knl_name, pev, how) if (strcmp(name, knl_name) == 0) return defs[PEV_##pev];
	KNL_PLUGIN_EVENTS(KNL_DEF)
#undef KNL_DEF
	return NULL;
}

const char *pmu_event_definition(const char *name, bool *plugin)
{
	if (cur == &knl)
		return knl_definition(name, plugin);
#define DEFINED(n, def) if (strcmp(name, #n) == 0) return def;
	*plugin = false;
	MODEL_EVENTS(DEFINED)
	*plugin = true;
	PLUGIN_EVENTS(DEFINED)
#undef DEFINED
	return NULL;
}

static char upper(char c) { return c >= 'a' && c <= 'z' ? c - 32 : c; }

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (upper(c) >= 'A' && upper(c) <= 'F');
}

/* "r" followed by hex digits (optionally "0x"): a raw event, not a name. */
static bool looks_raw(const char *s, size_t n)
{
	size_t i = 1;

	if (n < 2 || upper(s[0]) != 'R')
		return false;
	if (n > 3 && s[1] == '0' && upper(s[2]) == 'X')
		i = 3;
	for (; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	return true;
}

/* Case-insensitive comparison of s[0..n) with a NUL-terminated name. */
static bool name_is(const char *s, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!name[i] || upper(s[i]) != upper(name[i]))
			return false;
	return name[n] == 0;
}

static bool parse_raw(const char *s, size_t n, uint32_t *v, char *err, size_t errlen)
{
	char buf[24];
	uint64_t x;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (n == 0 || n > 8) {
		snprintf(err, errlen, "raw event needs 1 to 8 hex digits");
		return false;
	}
	buf[0] = '0';
	buf[1] = 'x';
	memcpy(buf + 2, s, n);
	buf[n + 2] = 0;
	if (!parse_u64(buf, 0xffffffff, &x)) {
		snprintf(err, errlen, "raw event 'r%.*s' is not hexadecimal", (int)n, s);
		return false;
	}
	/* No string can stand for an EvtSel the PMU refuses: its rule and its words. */
	struct pmu_result r = { .err = pmu_check_evtsel(x), .value = x };
	if (r.err) {
		pmu_result_text(&pmu_knc_desc, &r, err, errlen); /* the rule is KNC's Table 1-5, for every PMU */
		return false;
	}
	*v = x;
	return true;
}

bool pmu_event_parse(const char *s, uint32_t *evtsel, char *err, size_t errlen)
{
	uint32_t v = 0;
	const char *p = s;
	size_t plen = strlen(cur->pfm);

	if (name_is(p, plen, cur->pfm) && p[plen] == ':' && p[plen + 1] == ':')
		p += plen + 2;
	size_t n = 0, n2;
	while (p[n] && p[n] != ':')
		n++;
	if (n == 0) {
		snprintf(err, errlen, "missing event name in '%.40s'", s);
		return false;
	}
	for (n2 = n + (p[n] == ':'); p[n2] && p[n2] != ':'; n2++) /* "EVENT:UMASK", if the table has it */
		;
	const struct pmu_event *ev = NULL;
	for (size_t i = 0; i < cur->n && !ev && n2 > n + 1; i++)
		if (name_is(p, n2, cur->e[i].name))
			ev = &cur->e[i];
	if (ev)
		n = n2;
	for (size_t i = 0; i < cur->n && !ev; i++)
		if (name_is(p, n, cur->e[i].name))
			ev = &cur->e[i];
	if (ev) {
		v = ev->code;
	} else if (looks_raw(p, n)) {
		if (!parse_raw(p + 1, n - 1, &v, err, errlen))
			return false;
	} else {
		snprintf(err, errlen, "unknown event '%.*s' (see 'pmu events')", (int)MIN(n, 48), p);
		return false;
	}

	bool priv = false;
	for (p += n; *p == ':';) {
		const char *m = ++p;
		while (*p && *p != ':')
			p++;
		size_t len = p - m;
		uint64_t c;
		char num[8];

		char mod = len == 1 ? upper(*m) : 0; /* modifiers are case-insensitive, as in libpfm4 */

		if (mod == 'U') {
			v |= EVTSEL_USR;
			priv = true;
		} else if (mod == 'K') {
			v |= EVTSEL_OS;
			priv = true;
		} else if (mod == 'E') {
			v |= EVTSEL_EDGE;
		} else if (mod == 'I') {
			v |= EVTSEL_INV;
		} else if (mod == 'T') {
			v |= EVTSEL_ANY;
		} else if (len > 2 && upper(m[0]) == 'C' && m[1] == '=' && len - 2 < sizeof(num)) {
			memcpy(num, m + 2, len - 2);
			num[len - 2] = 0;
			if (!parse_u64(num, 255, &c)) {
				snprintf(err, errlen, "counter mask 'c=%s' must be 0-255", num);
				return false;
			}
			v = (v & ~EVTSEL_CMASK_MASK) | (uint32_t)c << EVTSEL_CMASK_SHIFT;
		} else {
			snprintf(err, errlen, "unknown modifier ':%.*s' (expected u, k, e, i, c=N or t)",
				 (int)MIN(len, 16), m);
			return false;
		}
	}
	if (!priv && !(v & (EVTSEL_USR | EVTSEL_OS)))
		v |= EVTSEL_USR | EVTSEL_OS;
	*evtsel = v;
	return true;
}

void pmu_event_format(uint32_t evtsel, char *buf, size_t len)
{
	const struct pmu_event *ev = pmu_event_by_code(evtsel);
	size_t n;

	if (ev)
		n = snprintf(buf, len, "%s", ev->name);
	else
		n = snprintf(buf, len, "r%04x", EVTSEL_CODE(evtsel));
	bool both = (evtsel & (EVTSEL_USR | EVTSEL_OS)) == (EVTSEL_USR | EVTSEL_OS);
	if (!both && (evtsel & EVTSEL_USR) && n < len)
		n += snprintf(buf + n, len - n, ":u");
	if (!both && (evtsel & EVTSEL_OS) && n < len)
		n += snprintf(buf + n, len - n, ":k");
	if ((evtsel & EVTSEL_EDGE) && n < len)
		n += snprintf(buf + n, len - n, ":e");
	if ((evtsel & EVTSEL_INV) && n < len)
		n += snprintf(buf + n, len - n, ":i");
	if (EVTSEL_CMASK(evtsel) && n < len)
		n += snprintf(buf + n, len - n, ":c=%u", EVTSEL_CMASK(evtsel));
	if ((evtsel & EVTSEL_ANY) && n < len)
		snprintf(buf + n, len - n, ":t");
}

/* A PMU's longest period in words: 2^k, 2^k - 1, or the number. */
static void period_words(uint64_t max, char *buf, size_t len)
{
	int k = 0;

	while (k < 63 && (1ULL << k) < max)
		k++;
	if (max == 1ULL << k)
		snprintf(buf, len, "2^%d", k);
	else if (max == (1ULL << k) - 1)
		snprintf(buf, len, "2^%d - 1", k);
	else
		snprintf(buf, len, "%llu", (unsigned long long)max);
}

void pmu_result_text(const struct pmu_desc *d, const struct pmu_result *r, char *buf, size_t len)
{
	unsigned long long v = r->value;
	char name[48];

	switch (r->err) {
	case PMU_OK:
		snprintf(buf, len, "%s", "");
		return;
	case PMU_ERR_EVENT:
		snprintf(buf, len, "EvtSel %#llx sets EN, INT or %s bit 19 (the driver owns them)", v,
			 d->evtsel_reserved & EVTSEL_RESERVED ? "reserved" : "the PC");
		return;
	case PMU_ERR_COUNTER:
		if (d->counters == 2)
			snprintf(buf, len, "counter '%llu' must be 0 or 1", v);
		else
			snprintf(buf, len, "counter '%llu' must be 0 to %u", v, d->counters - 1u);
		return;
	case PMU_ERR_L2_COUNTER:
		pmu_event_format(r->value & (EVTSEL_UMASK_MASK | EVTSEL_EVENT_MASK), name, sizeof(name));
		snprintf(buf, len, "%s is an L2 event and counts only on counter 0", name);
		return;
	case PMU_ERR_PERIOD:
		period_words(d->max_period, name, sizeof(name));
		if (v && v <= d->max_period)
			snprintf(buf, len, "a period needs an event");
		else
			snprintf(buf, len, "period %llu: should be period=N with N from 1 to %s events", v, name);
		return;
	case PMU_ERR_TOO_MANY:
		snprintf(buf, len, "%llu events: 1 to %d take turns (at most %d events take turns)", v,
			 MBOX_MUX_MAX, MBOX_MUX_MAX);
		return;
	case PMU_ERR_SLICE:
		snprintf(buf, len, "a slice of %llu TSC ticks: should be slice=MS with MS from 1 to 1000 "
			 "(1 ms to 1 s of counting time)", v);
		return;
	case PMU_ERR_SPFLT:
		snprintf(buf, len, "SPFLT mask %#llx: only counters 0 and 1 can be gated", v);
		return;
	case PMU_ERR_SPFLT_MUX:
		snprintf(buf, len, "CPU %u's events take turns on the counters: SPFLT gating needs them on the "
			 "counters for the whole run (at most 2 events, at most one of them L2)", r->cpu);
		return;
	case PMU_ERR_GROUP:
		snprintf(buf, len, "groups %#llx: a group is at most 2 events (a hardware thread has 2 counters) "
			 "and ends inside the list", v);
		return;
	case PMU_ERR_GROUP_L2:
		snprintf(buf, len, "events %llu and %llu of the list are one group but both are L2 events, "
			 "which count only on counter 0: they cannot be counted at once", v + 1, v + 2);
		return;
	case PMU_ERR_CPUSET:
		snprintf(buf, len, "no CPU %u on this card (or an empty CPU set)", r->cpu);
		return;
	case PMU_ERR_OFFLINE:
		snprintf(buf, len, "CPU %u is not online (nothing was done)", r->cpu);
		return;
	case PMU_ERR_BUSY:
		snprintf(buf, len, "CPU %u did not answer (%u of the %u CPUs did it)", r->cpu, r->done, r->wanted);
		return;
	case PMU_ERR_NOMEM:
		snprintf(buf, len, "out of memory for CPU %u's sample ring", r->cpu);
		return;
	case PMU_ERR_FRAMES:
		snprintf(buf, len, "a call chain of %llu frames: 0 (none) to %d", v, PMU_CALLCHAIN_MAX);
		return;
	case PMU_ERR_CPU_CLOCK:
		snprintf(buf, len, "a cpu-clock period of %llu ns: should be %llu ns to %llu ns (-F 100000 to 1)", v,
			 PMU_CPU_CLOCK_MIN_NS, PMU_CPU_CLOCK_MAX_NS);
		return;
	case PMU_ERR_COUNT:
		break;
	}
	snprintf(buf, len, "unknown PMU verdict %d", (int)r->err);
}
