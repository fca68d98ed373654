/*
 * kernel/mailbox_proto.c on the host: the status each opcode answers for
 * good and bad requests. The PMU doubles check their arguments through the
 * PMU's own rules (pmu/rules.c), as the driver does, and play a card of 4
 * CPUs where CPU 2 is not online and CPU 3 does not answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "mailbox/mailbox.h"
#include "pmu/knc/regs.h"

#define NCPUS    4
#define OFFLINE  2
#define SILENT   3
#define TSC_HZ   2999999999ULL /* not a round number: the conversion to ticks must be exact */
#define INSTR    0x30016u      /* INSTRUCTIONS_EXECUTED, USR and OS (327357-001 Table 1-6) */
#define CLK      0x3002au
#define L2       0x310cbu      /* an L2 event: counter 0 only (docs/design.md §5.1) */
#define RESERVED (1u << 19)    /* EvtSel bit 19 (327357-001 Table 1-5) */

/* ------------------------------------------------------------ doubles */

static struct {
	int calls;
	uint64_t ctr, period, mask, slice;
	uint32_t evtsel, nev, paired, launch, cpu, frames;
	uint64_t ns;
	uint16_t opcode;
	bool mux_rotates; /* SPFLT on a CPU whose events take turns */
	char line[256];
} seen;

/* The set's verdict, as pmu.c gives it: offline before anything, then who did not answer. */
static struct pmu_result on_set(struct pmu_result r, const struct cpuset *set)
{
	seen.calls++;
	if (r.err)
		return r;
	r.wanted = cpuset_count(set);
	if (cpuset_has(set, OFFLINE))
		return (struct pmu_result){ .err = PMU_ERR_OFFLINE, .cpu = OFFLINE, .wanted = r.wanted };
	r.done = r.wanted - cpuset_has(set, SILENT);
	if (cpuset_has(set, SILENT))
		r = (struct pmu_result){ .err = PMU_ERR_BUSY, .cpu = SILENT, .done = r.done, .wanted = r.wanted };
	return r;
}

static struct pmu_result configure(const struct cpuset *set, uint64_t ctr, uint32_t evtsel, uint64_t period)
{
	seen.ctr = ctr;
	seen.evtsel = evtsel;
	seen.period = period;
	return on_set(pmu_check_config(&pmu_knc_desc, ctr, evtsel, period), set);
}

static struct pmu_result control(const struct cpuset *set, uint16_t opcode)
{
	seen.opcode = opcode;
	return on_set((struct pmu_result){ 0 }, set);
}

static struct pmu_result spflt(const struct cpuset *set, uint64_t mask)
{
	struct pmu_result r = pmu_check_spflt(&pmu_knc_desc, mask);

	seen.mask = mask;
	if (!r.err && mask && seen.mux_rotates)
		r = (struct pmu_result){ .err = PMU_ERR_SPFLT_MUX, .cpu = 1 };
	return on_set(r, set);
}

static struct pmu_result callchain(const struct cpuset *set, uint32_t frames)
{
	seen.frames = frames;
	return on_set(pmu_check_callchain(frames), set);
}

static struct pmu_result cpu_clock(const struct cpuset *set, uint64_t ns)
{
	seen.ns = ns;
	return on_set(pmu_check_cpu_clock(ns), set);
}

static struct pmu_result mux(const struct cpuset *set, uint32_t nev, const uint32_t *evtsel, uint32_t paired,
			     uint64_t slice)
{
	seen.nev = nev;
	seen.paired = paired;
	seen.slice = slice;
	return on_set(pmu_check_mux(&pmu_knc_desc, nev, evtsel, paired, slice, TSC_HZ), set);
}

static enum pmu_err read_cpu(uint32_t cpu, struct pmu_reading *r)
{
	memset(r, 0, sizeof(*r));
	if (cpu == OFFLINE)
		return PMU_ERR_OFFLINE;
	if (cpu == SILENT)
		return PMU_ERR_BUSY;
	r->nev = 2;
	r->evtsel[0] = INSTR;
	r->value[0] = 1000 + cpu;
	r->enabled_ticks = r->running_ticks[0] = 50;
	r->running = true;
	r->throttles = cpu == 0; /* CPU 0's PMIs were throttled */
	return PMU_OK;
}

static bool counts(uint32_t evtsel) { return evtsel == INSTR; }
static void info(struct mbox_info *out) { out->cpu_count = NCPUS; }

static uint8_t upload[64];

static int run(const uint8_t *image, uint32_t len, int argc, char **argv, const struct cpuset *set, bool threads)
{
	seen.calls++;
	return strcmp(argv[0], "notelf") == 0 ? -1 : 7;
}

static int status(uint32_t launch, struct mbox_task *out, int max)
{
	if (launch != 7)
		return -1;
	for (int i = 0; i < 3; i++)
		out[i] = (struct mbox_task){ .id = i + 1, .state = MBOX_TASK_EXITED };
	return 3;
}

static bool kill_launch(uint32_t launch) { seen.launch = launch; return launch == 7; }
static void no_reset(void) { fail(); } /* the transport resets, never the decoder */

static int cpu_init(uint32_t cpu)
{
	seen.cpu = cpu;
	return cpu == OFFLINE ? -1 : cpu == SILENT ? -2 : 0;
}

static int shell(char *line, uint32_t seq)
{
	strcpy(seen.line, line);
	return line[0] == 'x' ? -1 : 0; /* 'x': a host line is still running */
}

static void shell_intr(void) { seen.calls++; }

static const struct mbox_ops ops = {
	.ncpus = NCPUS, .tsc_hz = TSC_HZ, .info = info, .pmu_configure = configure, .pmu_control = control,
	.pmu_read = read_cpu, .counts_event = counts, .pmu_spflt = spflt, .pmu_callchain = callchain, .pmu_cpu_clock = cpu_clock, .pmu_mux = mux, .run = run,
	.status = status, .kill = kill_launch, .reset = no_reset, .cpu_init = cpu_init, .shell = shell,
	.shell_intr = shell_intr, .upload = upload, .upload_size = sizeof(upload),
};

/* ------------------------------------------------------------ requests */

static struct mbox_request req;
static struct mbox_response resp;

/* A request for `op` on CPUs given as a bit mask, with `len` bytes of payload p. */
static void build(uint16_t op, uint64_t cpus, const void *p, uint32_t len)
{
	memset(&req, 0, sizeof(req));
	memset(&seen, 0, sizeof(seen));
	req.seq = 0x1234 + op;
	req.opcode = op;
	req.cpuset[0] = cpus;
	req.len = len;
	if (p)
		memcpy(req.payload, p, len);
}

static struct mbox_verdict verdict; /* the last refusal's, if it carried one */

/* Whether a request of `op` is a PMU request (include/pmuos/mailbox.h: its refusals carry a verdict). */
static bool pmu_op(uint16_t op)
{
	return (op >= MBOX_OP_PMU_CONFIG && op <= MBOX_OP_PMU_SPFLT) || op == MBOX_OP_PMU_MUX ||
	       op == MBOX_OP_PMU_CALLCHAIN || op == MBOX_OP_PMU_CPU_CLOCK;
}

/*
 * Serves the request built; checks the echo, that a refused request answers
 * nothing but, for a PMU request the PMU refused, its verdict (after
 * PMU_READ's counts), whose kind the status says; the verdict goes out of
 * resp.len into `verdict`.
 */
static int serve_(const char *file, int line)
{
	memset(&resp, 0xa5, sizeof(resp));
	memset(&verdict, 0xa5, sizeof(verdict));
	mbox_serve(&req, &resp, &ops);
	_assert_int_equal(resp.seq, req.seq, file, line);
	_assert_int_equal(resp.reserved, 0, file, line);
	if (resp.status == MBOX_OK)
		return resp.status;
	if (pmu_op(req.opcode) && resp.status != MBOX_E_PAYLOAD && resp.status != MBOX_E_OPCODE) {
		_assert_true(resp.len >= sizeof(verdict), "a verdict", file, line);
		resp.len -= sizeof(verdict);
		memcpy(&verdict, resp.payload + resp.len, sizeof(verdict));
		_assert_true(verdict.err != PMU_OK && verdict.err < PMU_ERR_COUNT, "a known verdict", file, line);
		_assert_int_equal(mbox_pmu_status(verdict.err), resp.status, file, line);
	}
	if (req.opcode != MBOX_OP_PMU_READ)
		_assert_int_equal(resp.len, 0, file, line);
	return resp.status;
}
#define SERVE() serve_(__FILE__, __LINE__)
#define STATUS(op, cpus, p, len, want)                                              \
	do {                                                                         \
		build(op, cpus, p, len);                                             \
		_assert_int_equal(serve_(__FILE__, __LINE__), want, __FILE__, __LINE__); \
	} while (0)

#define CPU(n) (1ULL << (n))
#define GOOD   (CPU(0) | CPU(1))

/* ------------------------------------------------------------ tests */

static void test_header_and_opcode(void **state)
{
	(void)state;
	build(MBOX_OP_INFO, 0, NULL, 0);
	req.flags = 1;
	assert_int_equal(SERVE(), MBOX_E_PAYLOAD);
	build(MBOX_OP_INFO, 0, NULL, 0);
	req.reserved = 1;
	assert_int_equal(SERVE(), MBOX_E_PAYLOAD);
	STATUS(MBOX_OP_SHELL, 0, NULL, MBOX_REQ_PAYLOAD + 1, MBOX_E_PAYLOAD);
	STATUS(0, 0, NULL, 0, MBOX_E_OPCODE);
	STATUS(MBOX_OP_PMU_CPU_CLOCK + 1, 0, NULL, 0, MBOX_E_OPCODE);
	STATUS(0xffff, 0, NULL, 0, MBOX_E_OPCODE);
}

static void test_info(void **state)
{
	(void)state;
	STATUS(MBOX_OP_INFO, 0, NULL, 0, MBOX_OK);
	assert_int_equal(resp.len, sizeof(struct mbox_info));
	assert_int_equal(((struct mbox_info *)resp.payload)->cpu_count, NCPUS);
	STATUS(MBOX_OP_INFO, 0, NULL, 1, MBOX_E_PAYLOAD);
}

static void config(uint64_t cpus, uint32_t ctr, uint32_t evtsel, uint64_t period, uint32_t len, int want, int line)
{
	struct mbox_pmu_config c = { .counter = ctr, .evtsel = evtsel, .period = period };

	build(MBOX_OP_PMU_CONFIG, cpus, &c, sizeof(c));
	req.len = len;
	_assert_int_equal(serve_(__FILE__, line), want, __FILE__, line);
}
#define CONFIG(cpus, ctr, ev, period, want) config(cpus, ctr, ev, period, sizeof(struct mbox_pmu_config), want, __LINE__)

static void test_pmu_config(void **state)
{
	(void)state;
	CONFIG(GOOD, 1, INSTR, 0, MBOX_OK);
	assert_int_equal(seen.ctr, 1);
	assert_int_equal(seen.evtsel, INSTR);
	CONFIG(GOOD, 0, L2, 1ULL << 40, MBOX_OK);       /* the longest period */
	assert_int_equal(seen.period, 1ULL << 40);
	CONFIG(GOOD, 1, 0, 0, MBOX_OK);                 /* frees the counter */
	CONFIG(GOOD, 2, INSTR, 0, MBOX_E_RANGE);        /* PMU_ERR_COUNTER */
	CONFIG(GOOD, 0xffffffff, INSTR, 0, MBOX_E_RANGE);
	CONFIG(GOOD, 0, INSTR | RESERVED, 0, MBOX_E_EVENT);
	CONFIG(GOOD, 0, INSTR | EVTSEL_EN, 0, MBOX_E_EVENT);
	CONFIG(GOOD, 0, INSTR | EVTSEL_INT, 0, MBOX_E_EVENT);
	CONFIG(GOOD, 1, L2, 0, MBOX_E_EVENT);           /* PMU_ERR_L2_COUNTER */
	CONFIG(GOOD, 0, INSTR, (1ULL << 40) + 1, MBOX_E_RANGE);
	CONFIG(GOOD, 0, INSTR, UINT64_MAX, MBOX_E_RANGE);
	CONFIG(GOOD, 0, 0, 1000, MBOX_E_RANGE);         /* a period needs an event */
	CONFIG(0, 0, INSTR, 0, MBOX_E_CPUSET);          /* empty set */
	assert_int_equal(seen.calls, 0);
	CONFIG(CPU(NCPUS), 0, INSTR, 0, MBOX_E_CPUSET); /* a CPU the card does not have */
	CONFIG(CPU(OFFLINE) | CPU(0), 0, INSTR, 0, MBOX_E_CPUSET);
	CONFIG(CPU(SILENT) | CPU(0), 0, INSTR, 0, MBOX_E_BUSY);
	config(GOOD, 0, INSTR, 0, sizeof(struct mbox_pmu_config) - 1, MBOX_E_PAYLOAD, __LINE__);
	config(GOOD, 0, INSTR, 0, sizeof(struct mbox_pmu_config) + 1, MBOX_E_PAYLOAD, __LINE__);
	assert_int_equal(seen.calls, 0);
}

/* The verdict a refusal carries: the PMU's, field for field (what pmuctl prints in the shell's words). */
#define VERDICT(e, c, v, d, w)                                                                    \
	do {                                                                                       \
		assert_int_equal(verdict.err, e);                                                  \
		assert_int_equal(verdict.cpu, c);                                                  \
		assert_int_equal(verdict.value, v);                                                \
		assert_int_equal(verdict.done, d);                                                 \
		assert_int_equal(verdict.wanted, w);                                               \
	} while (0)

static void test_verdicts(void **state)
{
	(void)state;
	const struct mbox_pmu_count *c = (const struct mbox_pmu_count *)resp.payload;
	uint32_t frames = PMU_CALLCHAIN_MAX + 1, mask = 4;

	CONFIG(GOOD, 1, L2, 0, MBOX_E_EVENT);
	VERDICT(PMU_ERR_L2_COUNTER, 0, L2, 0, 0);
	CONFIG(GOOD, 0, INSTR, (1ULL << 40) + 1, MBOX_E_RANGE);
	VERDICT(PMU_ERR_PERIOD, 0, (1ULL << 40) + 1, 0, 0);
	CONFIG(GOOD, 7, INSTR, 0, MBOX_E_RANGE);
	VERDICT(PMU_ERR_COUNTER, 0, 7, 0, 0);
	CONFIG(GOOD | CPU(OFFLINE), 0, INSTR, 0, MBOX_E_CPUSET);
	VERDICT(PMU_ERR_OFFLINE, OFFLINE, 0, 0, 3);
	CONFIG(GOOD | CPU(SILENT), 0, INSTR, 0, MBOX_E_BUSY);
	VERDICT(PMU_ERR_BUSY, SILENT, 0, 2, 3);
	/* The set the decoder refuses itself gets the PMU's verdict too: the first CPU beyond the card's, or 0. */
	CONFIG(GOOD | CPU(63), 0, INSTR, 0, MBOX_E_CPUSET);
	VERDICT(PMU_ERR_CPUSET, 63, 0, 0, 0);
	CONFIG(0, 0, INSTR, 0, MBOX_E_CPUSET);
	VERDICT(PMU_ERR_CPUSET, 0, 0, 0, 0);
	STATUS(MBOX_OP_PMU_CALLCHAIN, GOOD, &frames, sizeof(frames), MBOX_E_RANGE);
	VERDICT(PMU_ERR_FRAMES, 0, PMU_CALLCHAIN_MAX + 1, 0, 0);
	STATUS(MBOX_OP_PMU_SPFLT, GOOD, &mask, sizeof(mask), MBOX_E_RANGE);
	VERDICT(PMU_ERR_SPFLT, 0, 4, 0, 0);
	/* PMU_READ: the counts of the CPUs read, then the verdict of the first that was not. */
	STATUS(MBOX_OP_PMU_READ, GOOD | CPU(SILENT), NULL, 0, MBOX_E_BUSY);
	assert_int_equal(resp.len, 2 * sizeof(*c));
	assert_int_equal(c[1].value, 1001);
	VERDICT(PMU_ERR_BUSY, SILENT, 0, 2, 3);
	STATUS(MBOX_OP_PMU_READ, CPU(1) | CPU(OFFLINE) | CPU(SILENT), NULL, 0, MBOX_E_CPUSET);
	VERDICT(PMU_ERR_OFFLINE, OFFLINE, 0, 1, 3);
	/* Refusals of the request's form, and other requests' refusals, carry nothing (serve_ checks it). */
	STATUS(MBOX_OP_PMU_START, GOOD, NULL, 4, MBOX_E_PAYLOAD);
	STATUS(MBOX_OP_KILL, 0, &mask, sizeof(mask), MBOX_E_LAUNCH);
}

/* EVENTS_COUNTED: bit i says whether the backend counts the i-th EvtSel (the double counts INSTR). */
static void test_events_counted(void **state)
{
	(void)state;
	uint32_t ev[MBOX_COUNTED_MAX] = { CLK, INSTR, L2 };
	uint64_t bits;

	ev[MBOX_COUNTED_MAX - 1] = INSTR;
	STATUS(MBOX_OP_EVENTS_COUNTED, 0, ev, 3 * sizeof(ev[0]), MBOX_OK);
	assert_int_equal(resp.len, sizeof(bits));
	memcpy(&bits, resp.payload, sizeof(bits));
	assert_int_equal(bits, 2);
	STATUS(MBOX_OP_EVENTS_COUNTED, 0, ev, MBOX_COUNTED_MAX * sizeof(ev[0]), MBOX_OK);
	memcpy(&bits, resp.payload, sizeof(bits));
	assert_int_equal(bits, 2 | 1ULL << 63);
	STATUS(MBOX_OP_EVENTS_COUNTED, 0, ev, 0, MBOX_E_PAYLOAD);
	STATUS(MBOX_OP_EVENTS_COUNTED, 0, ev, 6, MBOX_E_PAYLOAD);
	build(MBOX_OP_EVENTS_COUNTED, 0, ev, MBOX_COUNTED_MAX * sizeof(ev[0]));
	req.len += sizeof(ev[0]); /* a 65th: more than the answer's bits */
	assert_int_equal(SERVE(), MBOX_E_PAYLOAD);
}

static void test_pmu_control(void **state)
{
	(void)state;
	static const uint16_t opcodes[] = { MBOX_OP_PMU_START, MBOX_OP_PMU_STOP, MBOX_OP_PMU_CLEAR };

	for (size_t i = 0; i < sizeof(opcodes) / sizeof(opcodes[0]); i++) {
		STATUS(opcodes[i], GOOD, NULL, 0, MBOX_OK);
		assert_int_equal(seen.opcode, opcodes[i]);
		STATUS(opcodes[i], GOOD, NULL, 4, MBOX_E_PAYLOAD);
		STATUS(opcodes[i], 0, NULL, 0, MBOX_E_CPUSET);
		STATUS(opcodes[i], CPU(5), NULL, 0, MBOX_E_CPUSET);
		STATUS(opcodes[i], GOOD | CPU(OFFLINE), NULL, 0, MBOX_E_CPUSET);
		STATUS(opcodes[i], GOOD | CPU(SILENT), NULL, 0, MBOX_E_BUSY);
	}
}

static void test_pmu_read(void **state)
{
	(void)state;
	const struct mbox_pmu_count *c = (const struct mbox_pmu_count *)resp.payload;

	STATUS(MBOX_OP_PMU_READ, GOOD, NULL, 0, MBOX_OK);
	assert_int_equal(resp.len, 2 * sizeof(*c));
	assert_int_equal(c[1].cpu, 1);
	assert_int_equal(c[1].value, 1001);
	assert_int_equal(c[1].flags, MBOX_COUNT_RUNNING | MBOX_COUNT_COUNTED);
	assert_int_equal(c[0].flags, MBOX_COUNT_RUNNING | MBOX_COUNT_COUNTED | MBOX_COUNT_THROTTLED);
	/* A CPU that cannot be read is left out; the others' counts come with its verdict. */
	STATUS(MBOX_OP_PMU_READ, GOOD | CPU(SILENT), NULL, 0, MBOX_E_BUSY);
	assert_int_equal(resp.len, 2 * sizeof(*c));
	STATUS(MBOX_OP_PMU_READ, CPU(OFFLINE) | CPU(1), NULL, 0, MBOX_E_CPUSET);
	assert_int_equal(resp.len, sizeof(*c));
	STATUS(MBOX_OP_PMU_READ, GOOD, NULL, 1, MBOX_E_PAYLOAD);
	STATUS(MBOX_OP_PMU_READ, 0, NULL, 0, MBOX_E_CPUSET);
}

static void test_pmu_callchain(void **state)
{
	(void)state;
	uint32_t frames;

	for (frames = 0; frames <= PMU_CALLCHAIN_MAX; frames += PMU_CALLCHAIN_MAX / 2) {
		STATUS(MBOX_OP_PMU_CALLCHAIN, GOOD, &frames, sizeof(frames), MBOX_OK);
		assert_int_equal(seen.frames, frames);
	}
	frames = PMU_CALLCHAIN_MAX + 1;
	STATUS(MBOX_OP_PMU_CALLCHAIN, GOOD, &frames, sizeof(frames), MBOX_E_RANGE);
	frames = 1;
	STATUS(MBOX_OP_PMU_CALLCHAIN, GOOD, &frames, 2, MBOX_E_PAYLOAD);
	STATUS(MBOX_OP_PMU_CALLCHAIN, 0, &frames, sizeof(frames), MBOX_E_CPUSET);
	STATUS(MBOX_OP_PMU_CALLCHAIN, CPU(OFFLINE), &frames, sizeof(frames), MBOX_E_CPUSET);
}

static void test_pmu_cpu_clock(void **state)
{
	(void)state;
	uint64_t ns;

	for (ns = 0; ns <= PMU_CPU_CLOCK_MAX_NS; ns = ns ? ns * 10 : PMU_CPU_CLOCK_MIN_NS) {
		STATUS(MBOX_OP_PMU_CPU_CLOCK, GOOD, &ns, sizeof(ns), MBOX_OK);
		assert_int_equal(seen.ns, ns);
	}
	ns = PMU_CPU_CLOCK_MIN_NS - 1;
	STATUS(MBOX_OP_PMU_CPU_CLOCK, GOOD, &ns, sizeof(ns), MBOX_E_RANGE);
	ns = PMU_CPU_CLOCK_MAX_NS + 1;
	STATUS(MBOX_OP_PMU_CPU_CLOCK, GOOD, &ns, sizeof(ns), MBOX_E_RANGE);
	STATUS(MBOX_OP_PMU_CPU_CLOCK, GOOD, &ns, 4, MBOX_E_PAYLOAD);
	ns = 0;
	STATUS(MBOX_OP_PMU_CPU_CLOCK, 0, &ns, sizeof(ns), MBOX_E_CPUSET);
}

static void test_pmu_spflt(void **state)
{
	(void)state;
	uint32_t mask;

	for (mask = 0; mask <= 3; mask++) {
		STATUS(MBOX_OP_PMU_SPFLT, GOOD, &mask, sizeof(mask), MBOX_OK);
		assert_int_equal(seen.mask, mask);
	}
	mask = 4;
	STATUS(MBOX_OP_PMU_SPFLT, GOOD, &mask, sizeof(mask), MBOX_E_RANGE);
	mask = 0xffffffff;
	STATUS(MBOX_OP_PMU_SPFLT, GOOD, &mask, sizeof(mask), MBOX_E_RANGE);
	mask = 1;
	STATUS(MBOX_OP_PMU_SPFLT, GOOD, &mask, 2, MBOX_E_PAYLOAD);
	STATUS(MBOX_OP_PMU_SPFLT, 0, &mask, sizeof(mask), MBOX_E_CPUSET);
	STATUS(MBOX_OP_PMU_SPFLT, CPU(OFFLINE), &mask, sizeof(mask), MBOX_E_CPUSET);
	build(MBOX_OP_PMU_SPFLT, GOOD, &mask, sizeof(mask));
	seen.mux_rotates = true; /* the events take turns: SPFLT cannot gate them */
	assert_int_equal(SERVE(), MBOX_E_EVENT);
}

static uint32_t paired; /* the next MUX request's groups */

static void mux_(uint64_t cpus, uint32_t nev, uint32_t slice_us, const uint32_t *ev, int n, int want, int line)
{
	struct mbox_pmu_mux m = { .nev = nev, .slice_us = slice_us, .paired = paired };

	memcpy(m.evtsel, ev, n * sizeof(*ev));
	build(MBOX_OP_PMU_MUX, cpus, &m, sizeof(m));
	_assert_int_equal(serve_(__FILE__, line), want, __FILE__, line);
}
#define MUX(cpus, nev, us, want, ...)                                                           \
	do {                                                                                    \
		const uint32_t ev_[] = { __VA_ARGS__ };                                         \
		mux_(cpus, nev, us, ev_, sizeof(ev_) / sizeof(ev_[0]), want, __LINE__);        \
	} while (0)

static void test_pmu_mux(void **state)
{
	(void)state;
	MUX(GOOD, 3, 4000, MBOX_OK, INSTR, CLK, L2);
	assert_int_equal(seen.nev, 3);
	assert_int_equal(seen.slice, 4 * (TSC_HZ / 1000) + 4 * (TSC_HZ % 1000) / 1000);
	/* 1 ms and 1 s in microseconds are the PMU's limits in ticks, exactly. */
	MUX(GOOD, 1, 1000, MBOX_OK, INSTR);
	assert_int_equal(seen.slice, TSC_HZ / 1000);
	MUX(GOOD, 1, 1000000, MBOX_OK, INSTR);
	assert_int_equal(seen.slice, TSC_HZ);
	MUX(GOOD, 1, 999, MBOX_E_RANGE, INSTR);
	MUX(GOOD, 1, 1000001, MBOX_E_RANGE, INSTR);
	MUX(GOOD, 1, 0, MBOX_E_RANGE, INSTR);
	MUX(GOOD, 8, 4000, MBOX_OK, INSTR, CLK, L2, L2, INSTR, CLK, INSTR, CLK);
	MUX(GOOD, 9, 4000, MBOX_E_RANGE, INSTR, CLK, L2, L2, INSTR, CLK, INSTR, CLK); /* too many */
	assert_int_equal(seen.nev, 9);
	MUX(GOOD, 0, 4000, MBOX_E_RANGE, 0);                  /* none */
	MUX(GOOD, 2, 4000, MBOX_E_EVENT, INSTR, CLK | RESERVED);
	MUX(GOOD, 2, 4000, MBOX_E_EVENT, INSTR | EVTSEL_EN, CLK);
	/* nev and the list disagree: a malformed request, not a PMU verdict */
	MUX(GOOD, 2, 4000, MBOX_E_PAYLOAD, INSTR, CLK, L2);
	MUX(GOOD, 2, 4000, MBOX_E_PAYLOAD, INSTR, 0);
	assert_int_equal(seen.calls, 0);
	MUX(0, 1, 4000, MBOX_E_CPUSET, INSTR);
	MUX(CPU(OFFLINE), 1, 4000, MBOX_E_CPUSET, INSTR);
	MUX(CPU(SILENT), 1, 4000, MBOX_E_BUSY, INSTR);
	build(MBOX_OP_PMU_MUX, GOOD, NULL, sizeof(struct mbox_pmu_mux) - 4);
	assert_int_equal(SERVE(), MBOX_E_PAYLOAD);
}

/* Groups (perf's {a,b}): pairs of events inside the list, never three, never two L2 events. */
static void test_pmu_mux_groups(void **state)
{
	(void)state;
	paired = 1u << 1;
	MUX(GOOD, 3, 4000, MBOX_OK, INSTR, CLK, L2);
	assert_int_equal(seen.paired, 1u << 1);
	paired = 1u << 0 | 1u << 2;
	MUX(GOOD, 4, 4000, MBOX_OK, INSTR, CLK, L2, INSTR);
	paired = 1u << 2;                                     /* the pair's second is past the list */
	MUX(GOOD, 3, 4000, MBOX_E_RANGE, INSTR, CLK, INSTR);
	paired = 1u << 31;
	MUX(GOOD, 3, 4000, MBOX_E_RANGE, INSTR, CLK, INSTR);
	paired = 3;                                           /* a group of three */
	MUX(GOOD, 3, 4000, MBOX_E_RANGE, INSTR, CLK, INSTR);
	paired = 1;                                           /* two L2 events: both counter 0 only */
	MUX(GOOD, 2, 4000, MBOX_E_EVENT, L2, L2 + 1);
	paired = 0;
}

static void run_(uint64_t cpus, uint32_t image_len, uint32_t argc, const char *args, size_t args_len, int want,
		 int line)
{
	struct mbox_run r = { .image_len = image_len, .argc = argc };

	memcpy(r.args, args, args_len);
	build(MBOX_OP_RUN, cpus, &r, sizeof(r));
	_assert_int_equal(serve_(__FILE__, line), want, __FILE__, line);
}
#define RUN(cpus, len, argc, args, want) run_(cpus, len, argc, args, sizeof(args), want, __LINE__)

static void test_run(void **state)
{
	(void)state;
	RUN(GOOD, 10, 2, "hello\0world", MBOX_OK);
	/* the launch ID, then its tasks as STATUS answers them */
	assert_int_equal(resp.len, sizeof(struct mbox_run_answer) + 3 * sizeof(struct mbox_task));
	assert_int_equal(((struct mbox_run_answer *)resp.payload)->launch, 7);
	assert_int_equal(((struct mbox_task *)(resp.payload + sizeof(struct mbox_run_answer)))[2].id, 3);
	RUN(GOOD, sizeof(upload), 1, "hello", MBOX_OK);
	RUN(GOOD, 10, 1, "notelf", MBOX_E_PROGRAM);
	RUN(GOOD, 0, 1, "hello", MBOX_E_RANGE);
	RUN(GOOD, sizeof(upload) + 1, 1, "hello", MBOX_E_RANGE);
	RUN(GOOD, 10, 0, "hello", MBOX_E_PAYLOAD);
	RUN(GOOD, 10, MBOX_RUN_ARGS + 1, "hello", MBOX_E_PAYLOAD);
	RUN(GOOD, 10, 3, "hello\0world", MBOX_E_PAYLOAD); /* the third string is empty */
	RUN(0, 10, 1, "hello", MBOX_E_CPUSET);
	RUN(CPU(7), 10, 1, "hello", MBOX_E_CPUSET);
	/* arguments that fill the field to its end have no NUL */
	struct mbox_run r = { .image_len = 10, .argc = 1 };
	memset(r.args, 'a', sizeof(r.args));
	build(MBOX_OP_RUN, GOOD, &r, sizeof(r));
	assert_int_equal(SERVE(), MBOX_E_PAYLOAD);
	build(MBOX_OP_RUN, GOOD, &r, sizeof(r) - 1);
	assert_int_equal(SERVE(), MBOX_E_PAYLOAD);
}

static void test_status_and_kill(void **state)
{
	(void)state;
	uint32_t launch = 7, other = 8;
	uint64_t wide = 7;

	STATUS(MBOX_OP_STATUS, 0, &launch, sizeof(launch), MBOX_OK);
	assert_int_equal(resp.len, 3 * sizeof(struct mbox_task));
	STATUS(MBOX_OP_STATUS, 0, &other, sizeof(other), MBOX_E_LAUNCH);
	STATUS(MBOX_OP_STATUS, 0, &wide, sizeof(wide), MBOX_E_PAYLOAD);
	STATUS(MBOX_OP_STATUS, 0, NULL, 0, MBOX_E_PAYLOAD);
	STATUS(MBOX_OP_KILL, 0, &launch, sizeof(launch), MBOX_OK);
	assert_int_equal(seen.launch, 7);
	STATUS(MBOX_OP_KILL, 0, &other, sizeof(other), MBOX_E_LAUNCH);
	STATUS(MBOX_OP_KILL, 0, &wide, sizeof(wide), MBOX_E_PAYLOAD);
}

static void test_reset(void **state)
{
	(void)state;
	STATUS(MBOX_OP_RESET_WARM, 0, NULL, 0, MBOX_OK);
	assert_true(mbox_wants_reset(&req, &resp));
	STATUS(MBOX_OP_RESET_WARM, 0, NULL, 1, MBOX_E_PAYLOAD);
	assert_false(mbox_wants_reset(&req, &resp));
	STATUS(MBOX_OP_INFO, 0, NULL, 0, MBOX_OK);
	assert_false(mbox_wants_reset(&req, &resp));
}

static void test_cpu_init(void **state)
{
	(void)state;
	uint32_t cpu = 1;
	uint16_t half = 1;

	STATUS(MBOX_OP_CPU_INIT, 0, &cpu, sizeof(cpu), MBOX_OK);
	assert_int_equal(seen.cpu, 1);
	cpu = 0; /* the BSP */
	STATUS(MBOX_OP_CPU_INIT, 0, &cpu, sizeof(cpu), MBOX_E_CPUSET);
	cpu = NCPUS;
	STATUS(MBOX_OP_CPU_INIT, 0, &cpu, sizeof(cpu), MBOX_E_CPUSET);
	cpu = OFFLINE; /* cannot be: starting already */
	STATUS(MBOX_OP_CPU_INIT, 0, &cpu, sizeof(cpu), MBOX_E_CPUSET);
	cpu = SILENT;  /* did not come back */
	STATUS(MBOX_OP_CPU_INIT, 0, &cpu, sizeof(cpu), MBOX_E_BUSY);
	STATUS(MBOX_OP_CPU_INIT, 0, &half, sizeof(half), MBOX_E_PAYLOAD);
}

static void test_shell(void **state)
{
	(void)state;
	char line[MBOX_SHELL_LINE_CAP];

	STATUS(MBOX_OP_SHELL, 0, "pmu info", 9, MBOX_OK);
	assert_string_equal(seen.line, "pmu info");
	STATUS(MBOX_OP_SHELL, 0, "x", 2, MBOX_E_AGAIN);
	STATUS(MBOX_OP_SHELL, 0, "pmu info", 8, MBOX_E_PAYLOAD); /* no NUL */
	STATUS(MBOX_OP_SHELL, 0, NULL, 0, MBOX_E_PAYLOAD);
	memset(line, 'a', sizeof(line));
	line[sizeof(line) - 1] = 0;
	STATUS(MBOX_OP_SHELL, 0, line, sizeof(line), MBOX_OK);   /* the longest line */
	STATUS(MBOX_OP_SHELL_INTR, 0, NULL, 0, MBOX_OK);
	assert_int_equal(seen.calls, 1);
	STATUS(MBOX_OP_SHELL_INTR, 0, NULL, 1, MBOX_E_PAYLOAD);
	assert_int_equal(seen.calls, 0);
}

/* Each PMU verdict has its status, and no verdict falls outside the table. */
static void test_pmu_status_table(void **state)
{
	(void)state;
	assert_int_equal(mbox_pmu_status(PMU_OK), MBOX_OK);
	for (int e = PMU_OK + 1; e < PMU_ERR_COUNT; e++) {
		int st = mbox_pmu_status(e);
		assert_true(st < 0 && st >= MBOX_E_AGAIN);
	}
	assert_int_equal(mbox_pmu_status(PMU_ERR_OFFLINE), MBOX_E_CPUSET);
	assert_int_equal(mbox_pmu_status(PMU_ERR_BUSY), MBOX_E_BUSY);
	assert_int_equal(mbox_pmu_status(PMU_ERR_L2_COUNTER), MBOX_E_EVENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_and_opcode), cmocka_unit_test(test_info),
		cmocka_unit_test(test_pmu_config), cmocka_unit_test(test_pmu_control),
		cmocka_unit_test(test_pmu_read), cmocka_unit_test(test_pmu_spflt), cmocka_unit_test(test_pmu_callchain),
		cmocka_unit_test(test_pmu_cpu_clock),
		cmocka_unit_test(test_pmu_mux), cmocka_unit_test(test_pmu_mux_groups), cmocka_unit_test(test_run),
		cmocka_unit_test(test_status_and_kill), cmocka_unit_test(test_reset),
		cmocka_unit_test(test_cpu_init), cmocka_unit_test(test_shell),
		cmocka_unit_test(test_pmu_status_table), cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_events_counted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
