/* What the `pmu` command's files share (shell/cmds_pmu.c, shell/cmds_metrics.c). */
#ifndef SHELL_CMDS_PMU_H
#define SHELL_CMDS_PMU_H

#include "pmu/pmu.h"

/* The PMU's verdict as the shell's answer: 0, or its one text as an error (pmu/rules_text.c). */
int pmu_verdict(struct pmu_result r);
/* `pmu metrics ...` (shell/cmds_metrics.c): argv[1] is "metrics"; 0, or non-zero after an error. */
int pmu_metrics_cmd(int argc, char **argv);

#endif
