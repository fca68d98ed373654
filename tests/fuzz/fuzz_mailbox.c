/*
 * libFuzzer target for the card's mailbox request decoder (mailbox/mailbox_proto.c):
 * any bytes a host can put in a request slot are served without a crash, a
 * hang or an out-of-bounds access (ASan/UBSan), and every answer echoes the
 * sequence number, carries a known status and fits its payload, and a
 * refusal carries nothing but, for a PMU request, the PMU's verdict.
 */
#include <stdlib.h>
#include <string.h>
#include "mailbox/mailbox.h"
#include "pmu/knc/regs.h"

static uint8_t upload[64];

static void info(struct mbox_info *out) { out->cpu_count = 4; }

/* The PMU's own checks (pmu/rules.c), then every CPU of the set did it. */
static struct pmu_result done(struct pmu_result r, const struct cpuset *set)
{
	if (r.err == PMU_OK)
		r.done = r.wanted = cpuset_count(set);
	return r;
}
static struct pmu_result configure(const struct cpuset *set, uint64_t ctr, uint32_t evtsel, uint64_t period)
{
	return done(pmu_check_config(&pmu_knc_desc, ctr, evtsel, period), set);
}
static struct pmu_result control(const struct cpuset *set, uint16_t op) { return done((struct pmu_result){ 0 }, set); }
static bool counts(uint32_t evtsel) { return evtsel & 1; }
static struct pmu_result spflt(const struct cpuset *set, uint64_t mask) { return done(pmu_check_spflt(&pmu_knc_desc, mask), set); }
static struct pmu_result callchain(const struct cpuset *set, uint32_t frames) { return done(pmu_check_callchain(frames), set); }
static struct pmu_result cpu_clock(const struct cpuset *set, uint64_t ns) { return done(pmu_check_cpu_clock(ns), set); }
static struct pmu_result mux(const struct cpuset *set, uint32_t nev, const uint32_t *evtsel, uint32_t paired,
			     uint64_t slice_ticks)
{
	/* The list the decoder passes holds MBOX_MUX_MAX events; nev past it is the PMU's to refuse. */
	struct pmu_result r = pmu_check_mux(&pmu_knc_desc, nev, evtsel, paired, slice_ticks, 1000000000);
	if (r.err == PMU_OK && !evtsel[nev - 1])
		abort(); /* the decoder promised a list as long as nev */
	return done(r, set);
}
static bool kill_launch(uint32_t launch) { return launch == 1; }
static void no_reset(void) { abort(); } /* the transport resets, never the decoder */
static int cpu_init(uint32_t cpu) { return cpu == 2 ? -2 : 0; }

static void shell_intr(void) {}
static int shell(char *line, uint32_t seq)
{
	if (line[strlen(line)] != 0) /* NUL-terminated inside its buffer, or ASan stops us */
		abort();
	return line[0] == 'x' ? -1 : 0;
}

static enum pmu_err read_cpu(uint32_t cpu, struct pmu_reading *r)
{
	memset(r, 0, sizeof(*r));
	r->evtsel[0] = 0x16 + cpu;
	r->evtsel[1] = cpu & 1 ? 0x2a : 0;
	r->value[0] = cpu * 1000;
	r->nev = 2;
	if (cpu == 2) { /* multiplexed: every slot in use */
		r->mux = true;
		r->nev = MBOX_MUX_MAX;
		for (int i = 0; i < MBOX_MUX_MAX; i++)
			r->evtsel[i] = 0x16;
	}
	return cpu == 3 ? PMU_ERR_BUSY : PMU_OK; /* one CPU that does not answer */
}

static int run(const uint8_t *image, uint32_t len, int argc, char **argv, const struct cpuset *set, bool threads)
{
	for (int i = 0; i < argc; i++)
		if (strlen(argv[i]) == 0)
			abort(); /* split_args promised non-empty strings */
	volatile uint8_t last = image[len - 1]; /* ASan: len stays within the upload area */
	(void)last;
	return 7;
}

static int status(uint32_t launch, struct mbox_task *out, int max)
{
	if (launch != 7)
		return -1;
	for (int i = 0; i < 3 && i < max; i++)
		out[i] = (struct mbox_task){ .id = i + 1, .state = MBOX_TASK_EXITED };
	return 3;
}

static const struct mbox_ops ops = {
	.ncpus = 4, .tsc_hz = 1000000000, .info = info, .pmu_configure = configure, .pmu_control = control, .pmu_read = read_cpu,
	.counts_event = counts, .pmu_spflt = spflt, .pmu_callchain = callchain, .pmu_cpu_clock = cpu_clock, .pmu_mux = mux, .run = run, .status = status, .kill = kill_launch,
	.reset = no_reset, .cpu_init = cpu_init, .shell = shell, .shell_intr = shell_intr,
	.upload = upload, .upload_size = sizeof(upload),
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mbox_request req;
	static struct mbox_response resp;

	memset(&req, 0, sizeof(req));
	memcpy(&req, data, size < sizeof(req) ? size : sizeof(req));
	memset(&resp, 0xa5, sizeof(resp));
	mbox_serve(&req, &resp, &ops);
	if (resp.seq != req.seq || resp.len > MBOX_RESP_PAYLOAD || resp.status > 0 || resp.status < MBOX_E_AGAIN)
		abort();
	if (resp.status == MBOX_OK)
		return 0;
	/* A refusal carries nothing but a PMU request's verdict (after PMU_READ's counts), of the kind its status says. */
	uint16_t op = req.opcode;
	uint32_t n = resp.len;
	if (((op >= MBOX_OP_PMU_CONFIG && op <= MBOX_OP_PMU_SPFLT) || op == MBOX_OP_PMU_MUX || op == MBOX_OP_PMU_CALLCHAIN ||
	     op == MBOX_OP_PMU_CPU_CLOCK) &&
	    resp.status != MBOX_E_PAYLOAD && resp.status != MBOX_E_OPCODE) {
		struct mbox_verdict v;
		if (n < sizeof(v))
			abort();
		n -= sizeof(v);
		memcpy(&v, resp.payload + n, sizeof(v));
		if (v.err == PMU_OK || v.err >= PMU_ERR_COUNT || mbox_pmu_status(v.err) != resp.status || v.done > v.wanted)
			abort();
	}
	if (n != 0 && (op != MBOX_OP_PMU_READ || n % sizeof(struct mbox_pmu_count)))
		abort();
	return 0;
}
