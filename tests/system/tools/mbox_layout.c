/*
 * Prints the mailbox wire format (include/pmuos/mailbox.h) as JSON for the
 * system tests' own mailbox client (tests/system/mbox.py), which plays a
 * hostile or careless host: offsets and sizes come from the header, never
 * typed twice.
 */
#include <stddef.h>
#include <stdio.h>
#include <pmuos/mailbox.h>

#define FIELD(s, f) printf("%s\"%s\": [%zu, %zu]", first++ ? ", " : "", #f, offsetof(struct s, f), \
			   sizeof(((struct s *)0)->f))
#define CONST(c) printf(", \"%s\": %lld", #c, (long long)(c))

int main(void)
{
	int first = 0;

	printf("{\"header\": {");
	FIELD(mbox_header, magic); FIELD(mbox_header, version); FIELD(mbox_header, state);
	FIELD(mbox_header, heartbeat); FIELD(mbox_header, size); FIELD(mbox_header, cpu_count);
	FIELD(mbox_header, cpus_online); FIELD(mbox_header, req_ctl_off); FIELD(mbox_header, req_off);
	FIELD(mbox_header, resp_ctl_off); FIELD(mbox_header, resp_off); FIELD(mbox_header, host_lock);
	FIELD(mbox_header, console_off); FIELD(mbox_header, console_head); FIELD(mbox_header, upload_off);
	FIELD(mbox_header, samples_off); FIELD(mbox_header, output_off); FIELD(mbox_header, poll_us);
	FIELD(mbox_header, timer_polls); FIELD(mbox_header, tasks_ended);
	first = 0;
	printf("}, \"request\": {");
	FIELD(mbox_request, seq); FIELD(mbox_request, opcode); FIELD(mbox_request, flags);
	FIELD(mbox_request, cpuset); FIELD(mbox_request, len); FIELD(mbox_request, reserved);
	FIELD(mbox_request, payload);
	first = 0;
	printf("}, \"response\": {");
	FIELD(mbox_response, seq); FIELD(mbox_response, status); FIELD(mbox_response, len);
	FIELD(mbox_response, payload);
	printf("}, \"sizes\": {\"request\": %zu, \"response\": %zu, \"ring_ctl\": %zu}",
	       sizeof(struct mbox_request), sizeof(struct mbox_response), sizeof(struct mbox_ring_ctl));
	printf(", \"const\": {\"_\": 0");
	CONST(MBOX_MAGIC); CONST(MBOX_VERSION); CONST(MBOX_READY); CONST(MBOX_REQ_SLOTS);
	CONST(MBOX_RESP_SLOTS); CONST(MBOX_REQ_PAYLOAD); CONST(MBOX_UPLOAD_SIZE);
	CONST(MBOX_SHELL_LINE_CAP); CONST(MBOX_MUX_MAX); CONST(MBOX_RUN_ARGS);
	CONST(MBOX_OP_INFO); CONST(MBOX_OP_PMU_CONFIG); CONST(MBOX_OP_PMU_START); CONST(MBOX_OP_PMU_STOP);
	CONST(MBOX_OP_PMU_CLEAR); CONST(MBOX_OP_PMU_READ); CONST(MBOX_OP_PMU_SPFLT); CONST(MBOX_OP_RUN);
	CONST(MBOX_OP_STATUS); CONST(MBOX_OP_KILL); CONST(MBOX_OP_RESET_WARM); CONST(MBOX_OP_CPU_INIT);
	CONST(MBOX_OP_SHELL); CONST(MBOX_OP_PMU_MUX);
	CONST(MBOX_OK); CONST(MBOX_E_OPCODE); CONST(MBOX_E_CPUSET); CONST(MBOX_E_PAYLOAD); CONST(MBOX_E_EVENT);
	CONST(MBOX_E_BUSY); CONST(MBOX_E_RANGE); CONST(MBOX_E_PROGRAM); CONST(MBOX_E_LAUNCH); CONST(MBOX_E_AGAIN);
	printf("}}\n");
	return 0;
}
