/*
 * The mailbox request decoder; see mailbox/mailbox.h. Pure: unit-tested and
 * fuzzed on the host. One descriptor per opcode says what a request must
 * carry (payload length, a CPU set); those checks are made once, here,
 * before the opcode's handler runs. What the PMU takes is the PMU's to say
 * (pmu/rules.h): its verdict becomes a status through one table, and an
 * error answer carries the verdict itself (struct mbox_verdict).
 */
#include "mailbox/mailbox.h"
#include "lib/lib.h"
#include "pmu/rules.h"

/* The PMU's verdicts as statuses (the shell turns them into text instead). */
static const int8_t pmu_status[PMU_ERR_COUNT] = {
	[PMU_OK]             = MBOX_OK,
	[PMU_ERR_EVENT]      = MBOX_E_EVENT,
	[PMU_ERR_COUNTER]    = MBOX_E_RANGE,
	[PMU_ERR_L2_COUNTER] = MBOX_E_EVENT,
	[PMU_ERR_PERIOD]     = MBOX_E_RANGE,
	[PMU_ERR_TOO_MANY]   = MBOX_E_RANGE,
	[PMU_ERR_SLICE]      = MBOX_E_RANGE,
	[PMU_ERR_SPFLT]      = MBOX_E_RANGE,
	[PMU_ERR_SPFLT_MUX]  = MBOX_E_EVENT, /* a counter constraint: the events do not stay on the counters */
	[PMU_ERR_CPUSET]     = MBOX_E_CPUSET,
	[PMU_ERR_OFFLINE]    = MBOX_E_CPUSET, /* the set names a CPU that cannot count: nothing was done */
	[PMU_ERR_BUSY]       = MBOX_E_BUSY,
	[PMU_ERR_NOMEM]      = MBOX_E_BUSY,   /* not now: the card is short of memory */
	[PMU_ERR_FRAMES]     = MBOX_E_RANGE,
	[PMU_ERR_CPU_CLOCK]  = MBOX_E_RANGE,
	[PMU_ERR_GROUP]      = MBOX_E_RANGE,
	[PMU_ERR_GROUP_L2]   = MBOX_E_EVENT, /* a counter constraint */
};

int mbox_pmu_status(enum pmu_err err)
{
	return (unsigned)err < PMU_ERR_COUNT ? pmu_status[err] : MBOX_E_BUSY;
}

/*
 * The answer to a PMU request: the verdict's status and, for an error, the
 * verdict as the payload after the resp->len bytes already there.
 */
static int answer_pmu(struct mbox_response *resp, struct pmu_result r)
{
	int st = mbox_pmu_status(r.err);

	if (st != MBOX_OK) {
		struct mbox_verdict v = { .err = r.err, .cpu = r.cpu, .value = r.value, .done = r.done,
					  .wanted = r.wanted };
		memcpy(resp->payload + resp->len, &v, sizeof(v));
		resp->len += sizeof(v);
	}
	return st;
}

/* A handler: the request passed its descriptor's checks; `set` is its CPU set if it carries one. */
typedef int serve_fn(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		     const struct mbox_ops *ops);

struct mbox_op_desc {
	serve_fn *serve;
	uint32_t min_len, max_len; /* payload bytes */
	bool cpuset;               /* carries a CPU set: not empty, only CPUs the card has */
	bool pmu;                  /* a PMU request: its refusals carry the verdict (struct mbox_verdict) */
};

/*
 * The request's CPU set, checked against the card's CPUs: PMU_OK, or
 * PMU_ERR_CPUSET naming the first CPU the card does not have (0 if empty).
 */
static struct pmu_result cpus_of(const struct mbox_request *req, uint32_t ncpus, struct cpuset *set)
{
	bool any = false;

	memset(set, 0, sizeof(*set));
	for (uint32_t c = 0; c < MBOX_CPUSET_WORDS * 64; c++) {
		if (!((req->cpuset[c / 64] >> (c % 64)) & 1))
			continue;
		if (c >= ncpus)
			return (struct pmu_result){ .err = PMU_ERR_CPUSET, .cpu = c };
		cpuset_add(set, c);
		any = true;
	}
	return (struct pmu_result){ .err = any ? PMU_OK : PMU_ERR_CPUSET };
}

/* The payload as one uint32_t (its descriptor says it is 4 bytes). */
static uint32_t u32_of(const struct mbox_request *req)
{
	uint32_t v;

	memcpy(&v, req->payload, sizeof(v));
	return v;
}

static int serve_info(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		      const struct mbox_ops *ops)
{
	memset(resp->payload, 0, sizeof(struct mbox_info));
	ops->info((struct mbox_info *)resp->payload);
	resp->len = sizeof(struct mbox_info);
	return MBOX_OK;
}

static int serve_config(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
			const struct mbox_ops *ops)
{
	struct mbox_pmu_config c;

	memcpy(&c, req->payload, sizeof(c));
	return answer_pmu(resp, ops->pmu_configure(set, c.counter, c.evtsel, c.period));
}

static int serve_control(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
			 const struct mbox_ops *ops)
{
	return answer_pmu(resp, ops->pmu_control(set, req->opcode));
}

/*
 * Every CPU's counts; a CPU that cannot be read is left out and the first
 * one's verdict is the status (after the counts, with room kept for it).
 */
static int serve_read(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		      const struct mbox_ops *ops)
{
	struct mbox_pmu_count *out = (struct mbox_pmu_count *)resp->payload;
	size_t n = 0, max = MBOX_RESP_PAYLOAD / sizeof(*out);
	struct pmu_reading r;
	struct pmu_result first = { .err = PMU_OK };
	uint32_t done = 0, wanted = 0;

	for (uint32_t c = 0; c < ops->ncpus; c++) {
		if (!cpuset_has(set, c))
			continue;
		wanted++;
		enum pmu_err e = ops->pmu_read(c, &r);
		if (e != PMU_OK) {
			if (!first.err)
				first = (struct pmu_result){ .err = e, .cpu = c };
			continue;
		}
		done++;
		for (uint32_t i = 0; i < MIN(r.nev, (uint32_t)MBOX_MUX_MAX) && n < max; i++) {
			if (!r.evtsel[i])
				continue;
			out[n++] = (struct mbox_pmu_count){
				.cpu = c, .slot = i, .evtsel = r.evtsel[i],
				.flags = (r.running ? MBOX_COUNT_RUNNING : 0) | (r.mux ? MBOX_COUNT_MUX : 0) |
					 (ops->counts_event(r.evtsel[i]) ? MBOX_COUNT_COUNTED : 0) |
					 (r.throttles ? MBOX_COUNT_THROTTLED : 0) | (r.shared ? MBOX_COUNT_SHARED : 0),
				.value = r.value[i], .samples = r.samples[i],
				.enabled = r.enabled_ticks, .running = r.running_ticks[i],
			};
		}
	}
	first.done = done;
	first.wanted = wanted;
	if (first.err) /* a CPU failed: at most 255 CPUs' counts, and room for the verdict */
		n = MIN(n, (MBOX_RESP_PAYLOAD - sizeof(struct mbox_verdict)) / sizeof(*out));
	resp->len = n * sizeof(*out);
	return answer_pmu(resp, first);
}

static int serve_spflt(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		       const struct mbox_ops *ops)
{
	return answer_pmu(resp, ops->pmu_spflt(set, u32_of(req)));
}

static int serve_mux(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		     const struct mbox_ops *ops)
{
	struct mbox_pmu_mux m;

	_Static_assert(ARRAY_SIZE(m.evtsel) == MBOX_MUX_MAX, "the wire list is the PMU's longest");
	memcpy(&m, req->payload, sizeof(m));
	/* The list's length is said twice (nev, and 0 in the slots past it): they must agree. */
	for (uint32_t i = 0; i < ARRAY_SIZE(m.evtsel); i++)
		if ((i < m.nev) != (m.evtsel[i] != 0))
			return MBOX_E_PAYLOAD;
	/* The one conversion of the mailbox's microseconds to the PMU's TSC ticks. */
	uint64_t slice = pmu_time_to_ticks(m.slice_us, 1000000, ops->tsc_hz);
	return answer_pmu(resp, ops->pmu_mux(set, m.nev, m.evtsel, m.paired, slice));
}

static int serve_callchain(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
			   const struct mbox_ops *ops)
{
	return answer_pmu(resp, ops->pmu_callchain(set, u32_of(req)));
}

static int serve_cpu_clock(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
			   const struct mbox_ops *ops)
{
	uint64_t ns;

	memcpy(&ns, req->payload, sizeof(ns));
	return answer_pmu(resp, ops->pmu_cpu_clock(set, ns));
}

/* Which of the request's EvtSels the backend counts: bit i of the answer for the i-th. */
static int serve_counted(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
			 const struct mbox_ops *ops)
{
	uint64_t bits = 0;
	uint32_t e;

	_Static_assert(MBOX_COUNTED_MAX * sizeof(e) <= MBOX_REQ_PAYLOAD && MBOX_COUNTED_MAX <= 64, "a request's worth");
	if (req->len % sizeof(e))
		return MBOX_E_PAYLOAD;
	for (uint32_t i = 0; i < req->len / sizeof(e); i++) {
		memcpy(&e, req->payload + i * sizeof(e), sizeof(e));
		if (ops->counts_event(e))
			bits |= 1ULL << i;
	}
	memcpy(resp->payload, &bits, sizeof(bits));
	resp->len = sizeof(bits);
	return MBOX_OK;
}

/* Splits run->args into argc strings; false if they do not fit in the field. */
static bool split_args(const struct mbox_run *run, char *copy, char **argv)
{
	memcpy(copy, run->args, sizeof(run->args));
	size_t off = 0;
	for (uint32_t i = 0; i < run->argc; i++) {
		size_t n = strnlen(copy + off, sizeof(run->args) - off);
		if (off + n >= sizeof(run->args) || n == 0)
			return false;
		argv[i] = copy + off;
		off += n + 1;
	}
	return true;
}

static int serve_run(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		     const struct mbox_ops *ops)
{
	struct mbox_run run;
	char copy[sizeof(run.args)], *argv[MBOX_RUN_ARGS];

	memcpy(&run, req->payload, sizeof(run));
	if (run.argc < 1 || run.argc > ARRAY_SIZE(argv) || !split_args(&run, copy, argv) ||
	    (run.flags & ~MBOX_RUN_THREADS) || run.reserved)
		return MBOX_E_PAYLOAD;
	if (run.image_len == 0 || run.image_len > ops->upload_size)
		return MBOX_E_RANGE;
	int id = ops->run(ops->upload, run.image_len, run.argc, argv, set, run.flags & MBOX_RUN_THREADS);
	if (id < 0)
		return MBOX_E_PROGRAM;
	struct mbox_run_answer a = { .launch = id };
	memcpy(resp->payload, &a, sizeof(a));
	int n = ops->status(id, (struct mbox_task *)(resp->payload + sizeof(a)),
			    (MBOX_RESP_PAYLOAD - sizeof(a)) / sizeof(struct mbox_task));
	resp->len = sizeof(a) + (n > 0 ? n : 0) * sizeof(struct mbox_task);
	return MBOX_OK;
}

static int serve_status(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
			const struct mbox_ops *ops)
{
	int n = ops->status(u32_of(req), (struct mbox_task *)resp->payload,
			    MBOX_RESP_PAYLOAD / sizeof(struct mbox_task));
	if (n < 0)
		return MBOX_E_LAUNCH;
	resp->len = n * sizeof(struct mbox_task);
	return MBOX_OK;
}

static int serve_kill(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		      const struct mbox_ops *ops)
{
	return ops->kill(u32_of(req)) ? MBOX_OK : MBOX_E_LAUNCH;
}

/* The transport resets after the answer is out (mbox_wants_reset). */
static int serve_reset(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		       const struct mbox_ops *ops)
{
	return MBOX_OK;
}

static int serve_cpu_init(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
			  const struct mbox_ops *ops)
{
	uint32_t cpu = u32_of(req);

	if (cpu == 0 || cpu >= ops->ncpus)
		return MBOX_E_CPUSET;
	int r = ops->cpu_init(cpu);
	return r == 0 ? MBOX_OK : r == -1 ? MBOX_E_CPUSET : MBOX_E_BUSY;
}

static int serve_shell(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
		       const struct mbox_ops *ops)
{
	char line[MBOX_SHELL_LINE_CAP];

	if (req->payload[req->len - 1] != 0)
		return MBOX_E_PAYLOAD;
	memcpy(line, req->payload, req->len);
	return ops->shell(line, req->seq) == 0 ? MBOX_OK : MBOX_E_AGAIN;
}

static int serve_shell_intr(const struct mbox_request *req, const struct cpuset *set, struct mbox_response *resp,
			    const struct mbox_ops *ops)
{
	ops->shell_intr();
	return MBOX_OK;
}

#define EXACTLY(n) .min_len = (n), .max_len = (n)
static const struct mbox_op_desc descs[] = {
	[MBOX_OP_INFO]       = { serve_info, EXACTLY(0) },
	[MBOX_OP_PMU_CONFIG] = { serve_config, EXACTLY(sizeof(struct mbox_pmu_config)), .cpuset = true, .pmu = true },
	[MBOX_OP_PMU_START]  = { serve_control, EXACTLY(0), .cpuset = true, .pmu = true },
	[MBOX_OP_PMU_STOP]   = { serve_control, EXACTLY(0), .cpuset = true, .pmu = true },
	[MBOX_OP_PMU_CLEAR]  = { serve_control, EXACTLY(0), .cpuset = true, .pmu = true },
	[MBOX_OP_PMU_READ]   = { serve_read, EXACTLY(0), .cpuset = true, .pmu = true },
	[MBOX_OP_PMU_SPFLT]  = { serve_spflt, EXACTLY(sizeof(uint32_t)), .cpuset = true, .pmu = true },
	[MBOX_OP_RUN]        = { serve_run, EXACTLY(sizeof(struct mbox_run)), .cpuset = true },
	[MBOX_OP_STATUS]     = { serve_status, EXACTLY(sizeof(uint32_t)) },
	[MBOX_OP_KILL]       = { serve_kill, EXACTLY(sizeof(uint32_t)) },
	[MBOX_OP_RESET_WARM] = { serve_reset, EXACTLY(0) },
	[MBOX_OP_CPU_INIT]   = { serve_cpu_init, EXACTLY(sizeof(uint32_t)) },
	[MBOX_OP_SHELL]      = { serve_shell, .min_len = 1, .max_len = MBOX_SHELL_LINE_CAP },
	[MBOX_OP_PMU_MUX]    = { serve_mux, EXACTLY(sizeof(struct mbox_pmu_mux)), .cpuset = true, .pmu = true },
	[MBOX_OP_SHELL_INTR] = { serve_shell_intr, EXACTLY(0) },
	[MBOX_OP_PMU_CALLCHAIN] = { serve_callchain, EXACTLY(sizeof(uint32_t)), .cpuset = true, .pmu = true },
	[MBOX_OP_EVENTS_COUNTED] = { serve_counted, .min_len = sizeof(uint32_t),
				     .max_len = MBOX_COUNTED_MAX * sizeof(uint32_t) },
	[MBOX_OP_PMU_CPU_CLOCK] = { serve_cpu_clock, EXACTLY(sizeof(uint64_t)), .cpuset = true, .pmu = true },
};

/* The descriptor's checks, once for every opcode, then its handler: the status. */
static int check_and_serve(const struct mbox_request *req, struct mbox_response *resp, const struct mbox_ops *ops)
{
	const struct mbox_op_desc *d = req->opcode < ARRAY_SIZE(descs) ? &descs[req->opcode] : NULL;
	struct cpuset set = { 0 };

	if (req->flags || req->reserved || req->len > MBOX_REQ_PAYLOAD)
		return MBOX_E_PAYLOAD;
	if (!d || !d->serve)
		return MBOX_E_OPCODE;
	if (req->len < d->min_len || req->len > d->max_len)
		return MBOX_E_PAYLOAD;
	if (d->cpuset) {
		struct pmu_result r = cpus_of(req, ops->ncpus, &set);
		if (r.err)
			return d->pmu ? answer_pmu(resp, r) : MBOX_E_CPUSET;
	}
	return d->serve(req, &set, resp, ops);
}

void mbox_serve(const struct mbox_request *req, struct mbox_response *resp, const struct mbox_ops *ops)
{
	resp->seq = req->seq;
	resp->reserved = 0;
	resp->len = 0; /* a handler sets it when it answers with data */
	resp->status = check_and_serve(req, resp, ops);
}

bool mbox_wants_reset(const struct mbox_request *req, const struct mbox_response *resp)
{
	return req->opcode == MBOX_OP_RESET_WARM && resp->status == MBOX_OK;
}
