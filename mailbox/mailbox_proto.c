/* The mailbox request decoder; see mailbox/mailbox.h. Pure: unit-tested and fuzzed on the host. */
#include "mailbox/mailbox.h"
#include "lib/lib.h"
#include "pmu/regs.h"

static int fail(struct mbox_response *resp, int status)
{
	resp->status = status;
	resp->len = 0;
	return status;
}

/* The request's CPU set, checked against the card's CPUs; MBOX_E_CPUSET if empty or too wide. */
static int cpus_of(const struct mbox_request *req, uint32_t ncpus, struct cpuset *set)
{
	bool any = false;

	memset(set, 0, sizeof(*set));
	for (uint32_t c = 0; c < MBOX_CPUSET_WORDS * 64; c++) {
		if (!((req->cpuset[c / 64] >> (c % 64)) & 1))
			continue;
		if (c >= ncpus)
			return MBOX_E_CPUSET;
		cpuset_add(set, c);
		any = true;
	}
	return any ? MBOX_OK : MBOX_E_CPUSET;
}

static void serve_read(const struct cpuset *set, struct mbox_response *resp, const struct mbox_ops *ops)
{
	struct mbox_pmu_count *out = (struct mbox_pmu_count *)resp->payload;
	size_t n = 0, max = MBOX_RESP_PAYLOAD / sizeof(*out);
	struct pmu_reading r;
	int status = MBOX_OK;

	for (uint32_t c = 0; c < ops->ncpus; c++) {
		if (!cpuset_has(set, c))
			continue;
		if (ops->pmu_read(c, &r) != 0) {
			status = MBOX_E_BUSY; /* that CPU is left out */
			continue;
		}
		for (uint32_t i = 0; i < MIN(r.nev, (uint32_t)PMU_MUX_MAX) && n < max; i++) {
			if (!r.evtsel[i])
				continue;
			out[n++] = (struct mbox_pmu_count){
				.cpu = c, .counter = i, .evtsel = r.evtsel[i],
				.flags = (r.running ? MBOX_COUNT_RUNNING : 0) | (r.mux ? MBOX_COUNT_MUX : 0) |
					 (ops->counts_event(r.evtsel[i]) ? MBOX_COUNT_COUNTED : 0),
				.value = r.value[i], .samples = r.samples[i],
				.enabled = r.enabled_ticks, .running = r.running_ticks[i],
			};
		}
	}
	resp->status = status;
	resp->len = n * sizeof(*out);
}

/* An EvtSel value a counting counter can take: MBOX_OK or MBOX_E_EVENT. */
static int evtsel_ok(uint32_t evtsel)
{
	return evtsel & (EVTSEL_RESERVED | EVTSEL_EN | EVTSEL_INT) ? MBOX_E_EVENT : MBOX_OK;
}

static int serve_mux(const struct mbox_request *req, struct mbox_response *resp, const struct mbox_ops *ops)
{
	struct mbox_pmu_mux m;
	struct cpuset set;
	int st;

	if (req->len != sizeof(m))
		return fail(resp, MBOX_E_PAYLOAD);
	memcpy(&m, req->payload, sizeof(m));
	if (m.nev < 1 || m.nev > ARRAY_SIZE(m.evtsel) || m.nev > PMU_MUX_MAX)
		return fail(resp, MBOX_E_PAYLOAD);
	for (uint32_t i = 0; i < ARRAY_SIZE(m.evtsel); i++) {
		if ((i < m.nev) != (m.evtsel[i] != 0))
			return fail(resp, MBOX_E_PAYLOAD); /* an event in the list is 0, or one past it is not */
		if ((st = evtsel_ok(m.evtsel[i])) != MBOX_OK)
			return fail(resp, st);
	}
	if (m.slice_us < MBOX_MUX_SLICE_MIN_US || m.slice_us > MBOX_MUX_SLICE_MAX_US)
		return fail(resp, MBOX_E_RANGE);
	if ((st = cpus_of(req, ops->ncpus, &set)) != MBOX_OK)
		return fail(resp, st);
	int n = ops->pmu_mux(&set, m.nev, m.evtsel, m.slice_us);
	return fail(resp, (uint32_t)n == cpuset_count(&set) ? MBOX_OK : MBOX_E_BUSY);
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

static int serve_run(const struct mbox_request *req, struct mbox_response *resp, const struct mbox_ops *ops)
{
	struct mbox_run run;
	char copy[sizeof(run.args)], *argv[16];
	struct cpuset set;
	int st;

	if (req->len != sizeof(run))
		return fail(resp, MBOX_E_PAYLOAD);
	memcpy(&run, req->payload, sizeof(run));
	if (run.argc < 1 || run.argc > 16 || !split_args(&run, copy, argv))
		return fail(resp, MBOX_E_PAYLOAD);
	if (run.image_len == 0 || run.image_len > ops->upload_size)
		return fail(resp, MBOX_E_RANGE);
	if ((st = cpus_of(req, ops->ncpus, &set)) != MBOX_OK)
		return fail(resp, st);
	int id = ops->run(ops->upload, run.image_len, run.argc, argv, &set);
	if (id < 0)
		return fail(resp, MBOX_E_PROGRAM);
	uint32_t v = id;
	memcpy(resp->payload, &v, sizeof(v));
	resp->status = MBOX_OK;
	resp->len = sizeof(v);
	return MBOX_OK;
}

/* Payload that is exactly one uint32_t. */
static bool one_u32(const struct mbox_request *req, uint32_t *v)
{
	if (req->len != sizeof(*v))
		return false;
	memcpy(v, req->payload, sizeof(*v));
	return true;
}

void mbox_serve(const struct mbox_request *req, struct mbox_response *resp, const struct mbox_ops *ops)
{
	struct cpuset set;
	int st;

	resp->seq = req->seq;
	resp->reserved = 0;
	if (req->flags || req->reserved || req->len > MBOX_REQ_PAYLOAD) {
		fail(resp, MBOX_E_PAYLOAD);
		return;
	}
	switch (req->opcode) {
	case MBOX_OP_INFO:
		if (req->len) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		memset(resp->payload, 0, sizeof(struct mbox_info));
		ops->info((struct mbox_info *)resp->payload);
		resp->status = MBOX_OK;
		resp->len = sizeof(struct mbox_info);
		return;
	case MBOX_OP_PMU_CONFIG: {
		struct mbox_pmu_config c;
		if (req->len != sizeof(c)) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		memcpy(&c, req->payload, sizeof(c));
		if ((st = cpus_of(req, ops->ncpus, &set)) != MBOX_OK) {
			fail(resp, st);
			return;
		}
		if (c.counter >= KNC_NUM_COUNTERS || c.period > (1ULL << KNC_CTR_BITS)) {
			fail(resp, MBOX_E_RANGE);
			return;
		}
		if (evtsel_ok(c.evtsel) != MBOX_OK ||
		    (c.counter != 0 && knc_event_counter0_only(EVTSEL_CODE(c.evtsel)))) {
			fail(resp, MBOX_E_EVENT);
			return;
		}
		if (c.evtsel == 0 && c.period) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		int n = ops->pmu_configure(&set, c.counter, c.evtsel, c.period);
		fail(resp, (uint32_t)n == cpuset_count(&set) ? MBOX_OK : MBOX_E_BUSY);
		return;
	}
	case MBOX_OP_PMU_START:
	case MBOX_OP_PMU_STOP:
	case MBOX_OP_PMU_CLEAR:
	case MBOX_OP_PMU_READ:
		if (req->len) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		if ((st = cpus_of(req, ops->ncpus, &set)) != MBOX_OK) {
			fail(resp, st);
			return;
		}
		if (req->opcode == MBOX_OP_PMU_READ) {
			serve_read(&set, resp, ops);
			return;
		}
		fail(resp, (uint32_t)ops->pmu_control(&set, req->opcode) == cpuset_count(&set) ? MBOX_OK
												: MBOX_E_BUSY);
		return;
	case MBOX_OP_PMU_SPFLT: {
		uint32_t mask;
		if (!one_u32(req, &mask) || mask > 3) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		if ((st = cpus_of(req, ops->ncpus, &set)) != MBOX_OK) {
			fail(resp, st);
			return;
		}
		fail(resp, (uint32_t)ops->pmu_spflt(&set, mask) == cpuset_count(&set) ? MBOX_OK : MBOX_E_BUSY);
		return;
	}
	case MBOX_OP_PMU_MUX:
		serve_mux(req, resp, ops);
		return;
	case MBOX_OP_RUN:
		serve_run(req, resp, ops);
		return;
	case MBOX_OP_STATUS: {
		uint32_t launch;
		if (!one_u32(req, &launch)) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		int n = ops->status(launch, (struct mbox_task *)resp->payload,
				    MBOX_RESP_PAYLOAD / sizeof(struct mbox_task));
		if (n < 0) {
			fail(resp, MBOX_E_LAUNCH);
			return;
		}
		resp->status = MBOX_OK;
		resp->len = n * sizeof(struct mbox_task);
		return;
	}
	case MBOX_OP_KILL: {
		uint32_t launch;
		if (!one_u32(req, &launch)) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		fail(resp, ops->kill(launch) ? MBOX_OK : MBOX_E_LAUNCH);
		return;
	}
	case MBOX_OP_RESET_WARM:
		fail(resp, req->len ? MBOX_E_PAYLOAD : MBOX_OK);
		return;
	case MBOX_OP_CPU_INIT: {
		uint32_t cpu;
		if (!one_u32(req, &cpu)) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		if (cpu == 0 || cpu >= ops->ncpus) {
			fail(resp, MBOX_E_CPUSET);
			return;
		}
		int r = ops->cpu_init(cpu);
		fail(resp, r == 0 ? MBOX_OK : r == -1 ? MBOX_E_CPUSET : MBOX_E_BUSY);
		return;
	}
	case MBOX_OP_SHELL: {
		char line[256];
		if (req->len == 0 || req->len > sizeof(line) || req->payload[req->len - 1] != 0) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		memcpy(line, req->payload, req->len);
		fail(resp, ops->shell(line, req->seq) == 0 ? MBOX_OK : MBOX_E_AGAIN);
		return;
	}
	case MBOX_OP_SHELL_INTR:
		if (req->len) {
			fail(resp, MBOX_E_PAYLOAD);
			return;
		}
		ops->shell_intr();
		fail(resp, MBOX_OK);
		return;
	default:
		fail(resp, MBOX_E_OPCODE);
		return;
	}
}

bool mbox_wants_reset(const struct mbox_request *req, const struct mbox_response *resp)
{
	return req->opcode == MBOX_OP_RESET_WARM && resp->status == MBOX_OK;
}
