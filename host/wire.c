/*
 * What the mailbox's words mean to pmuctl (include/pmuos/mailbox.h): the
 * layout a header gives checked against the mailbox's size, and the names
 * of states, requests and answer statuses. No card state: see host/wire.h.
 */
#include "host/wire.h"

#include <stdio.h>

#include "lib/cpuset.h"
#include "pmu/rules.h"

int mbox_areas(const struct mbox_header *h, struct mbox_area a[MBOX_AREAS])
{
	a[0] = (struct mbox_area){ "request ring control", h->req_ctl_off, sizeof(struct mbox_ring_ctl) };
	a[1] = (struct mbox_area){ "request ring", h->req_off, MBOX_REQ_SLOTS * sizeof(struct mbox_request) };
	a[2] = (struct mbox_area){ "response ring control", h->resp_ctl_off, sizeof(struct mbox_ring_ctl) };
	a[3] = (struct mbox_area){ "response ring", h->resp_off, MBOX_RESP_SLOTS * sizeof(struct mbox_response) };
	a[4] = (struct mbox_area){ "console ring", h->console_off, MBOX_CONSOLE_SIZE };
	a[5] = (struct mbox_area){ "upload area", h->upload_off, MBOX_UPLOAD_SIZE };
	a[6] = (struct mbox_area){ "sample rings", h->samples_off, (uint64_t)h->cpu_count * sizeof(struct mbox_sample_ring) };
	a[7] = (struct mbox_area){ "output rings", h->output_off, MBOX_OUTPUT_RINGS * sizeof(struct mbox_output_ring) };
	return 8;
}

const char *mbox_bad_layout(const struct mbox_header *h, uint64_t size, char *why, size_t n)
{
	struct mbox_area a[MBOX_AREAS];
	int na = mbox_areas(h, a);

	if (h->cpu_count == 0 || h->cpu_count > CPUSET_MAX) {
		snprintf(why, n, "a CPU count of %u (1 to %u)", h->cpu_count, CPUSET_MAX);
		return why;
	}
	for (int i = 0; i < na; i++) {
		const char *wrong = a[i].off % 8 ? "is not 8-byte aligned" /* 64-bit fields are read whole */
				    : a[i].off < sizeof(*h) ? "is inside the header"
				    : a[i].off + a[i].len > size ? "passes the end" : NULL;
		if (wrong) {
			snprintf(why, n, "the %s (%llu bytes at %#llx) %s", a[i].name, (unsigned long long)a[i].len,
				 (unsigned long long)a[i].off, wrong);
			return why;
		}
		for (int j = 0; j < i; j++)
			if (a[i].off < a[j].off + a[j].len && a[j].off < a[i].off + a[i].len) {
				snprintf(why, n, "the %s and the %s overlap", a[j].name, a[i].name);
				return why;
			}
	}
	return NULL;
}

const char *mbox_state_name(uint32_t state)
{
	return state == MBOX_BOOTING ? "booting" : state == MBOX_PANIC ? "panic" : state == MBOX_READY ? "READY"
											   : "unknown";
}

const char *mbox_op_name(uint16_t op)
{
	static const char *const names[] = {
		[MBOX_OP_INFO] = "INFO", [MBOX_OP_PMU_CONFIG] = "PMU_CONFIG", [MBOX_OP_PMU_START] = "PMU_START",
		[MBOX_OP_PMU_STOP] = "PMU_STOP", [MBOX_OP_PMU_CLEAR] = "PMU_CLEAR", [MBOX_OP_PMU_READ] = "PMU_READ",
		[MBOX_OP_PMU_SPFLT] = "PMU_SPFLT", [MBOX_OP_RUN] = "RUN", [MBOX_OP_STATUS] = "STATUS",
		[MBOX_OP_KILL] = "KILL", [MBOX_OP_RESET_WARM] = "RESET_WARM", [MBOX_OP_CPU_INIT] = "CPU_INIT",
		[MBOX_OP_SHELL] = "SHELL", [MBOX_OP_PMU_MUX] = "PMU_MUX", [MBOX_OP_SHELL_INTR] = "SHELL_INTR",
		[MBOX_OP_PMU_CALLCHAIN] = "PMU_CALLCHAIN", [MBOX_OP_EVENTS_COUNTED] = "EVENTS_COUNTED",
		[MBOX_OP_PMU_CPU_CLOCK] = "PMU_CPU_CLOCK",
	};
	return op < sizeof(names) / sizeof(names[0]) && names[op] ? names[op] : "?";
}

int mbox_answer_has_verdict(uint16_t op, int status)
{
	int pmu = (op >= MBOX_OP_PMU_CONFIG && op <= MBOX_OP_PMU_SPFLT) || op == MBOX_OP_PMU_MUX ||
		  op == MBOX_OP_PMU_CALLCHAIN || op == MBOX_OP_PMU_CPU_CLOCK;
	return pmu && status != MBOX_OK && status != MBOX_E_PAYLOAD && status != MBOX_E_OPCODE;
}

const char *mbox_verdict_text(const struct pmu_desc *d, const struct mbox_verdict *v, char *buf, size_t n)
{
	const uint32_t cpus = MBOX_CPUSET_WORDS * 64; /* what a request's set can name */

	if (v->err == PMU_OK || v->err >= PMU_ERR_COUNT || v->cpu >= cpus || v->wanted > cpus || v->done > v->wanted) {
		snprintf(buf, n, "verdict %u, CPU %u, %u of %u CPUs: no such verdict (%u kinds, %u CPUs)", v->err, v->cpu,
			 v->done, v->wanted, PMU_ERR_COUNT - 1, cpus);
		return NULL;
	}
	struct pmu_result r = { .err = v->err, .cpu = v->cpu, .value = v->value, .done = v->done, .wanted = v->wanted };
	pmu_result_text(d, &r, buf, n);
	return buf;
}

const char *mbox_status_text(int status)
{
	switch (status) {
	case MBOX_OK: return "ok";
	case MBOX_E_OPCODE: return "unknown request";
	case MBOX_E_CPUSET: return "bad CPU set (empty, a CPU the card does not have, or one not online)";
	case MBOX_E_PAYLOAD: return "malformed request";
	case MBOX_E_EVENT: return "event refused (reserved bits or counter constraint)";
	case MBOX_E_BUSY: return "card busy: some CPUs did not answer";
	case MBOX_E_RANGE: return "value out of range";
	case MBOX_E_PROGRAM: return "the card did not start the program (its console line above says why)";
	case MBOX_E_LAUNCH: return "no such launch";
	case MBOX_E_AGAIN: return "card busy: a shell line from the host is still running";
	default: return "unknown status";
	}
}
