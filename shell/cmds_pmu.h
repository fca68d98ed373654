/* What the `pmu` command's files share (shell/cmds_pmu.c, shell/cmds_metrics.c). */
#ifndef SHELL_CMDS_PMU_H
#define SHELL_CMDS_PMU_H

#include "pmu/pmu.h"
#include "pmu/rules.h"
#include "shell/shell.h"

/*
 * The PMU's verdict as the shell's answer: 0, or its one text as an error
 * (pmu/events.c). Here, not in cmds_pmu.c, so that cmds_metrics.c, which
 * cmds_pmu.c dispatches to, does not call back into it.
 */
static inline int pmu_verdict(struct pmu_result r)
{
	char text[192];

	if (r.err == PMU_OK)
		return 0;
	pmu_result_text(pmu_description(), &r, text, sizeof(text));
	return shell_error("pmu", "%s", text);
}
/* `pmu metrics ...` (shell/cmds_metrics.c): argv[1] is "metrics"; 0, or non-zero after an error. */
int pmu_metrics_cmd(int argc, char **argv);

#endif
