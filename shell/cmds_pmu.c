/*
 * `pmu` shell commands (the PMU service for a person at the console):
 * info, events, set, mux, start, stop, read, clear, regs, samples, limit, selftest.
 * CPU sets are written "0-3,8" or "all" (the default where one is optional).
 */
#include "pmu/pmu.h"
#include "pmu/bench.h"
#include "pmu/events.h"
#include "pmu/desc.h"
#include "pmu/evtsel.h"
#include "pmu/selftest.h"
#include "shell/shell.h"
#include "shell/cmds_pmu.h"
#include "kernel/console.h"
#include "lib/cpuset.h"
#include "lib/fmt.h"
#include "lib/lib.h"
#include "kernel/percpu.h"
#include "arch/irq.h"
#include "arch/tsc.h"

static bool parse_set(const char *s, struct cpuset *set)
{
	char err[80];

	if (!cpuset_parse(s, cpu_count, set, err, sizeof(err))) {
		shell_error("pmu", "%s", err);
		return false;
	}
	return true;
}

/* argv[2], if present, is the CPU set; otherwise the online CPUs (as perf -a). */
static bool set_arg(int argc, char **argv, struct cpuset *set)
{
	if (argc > 3) {
		shell_error("pmu", "%s takes at most one CPU set", argv[1]);
		return false;
	}
	if (argc == 3)
		return parse_set(argv[2], set);
	memset(set, 0, sizeof(*set));
	for (uint32_t c = 0; c < cpu_count; c++)
		if (cpu_table[c]->state == CPU_ONLINE)
			cpuset_add(set, c);
	return true;
}

static int pmu_info(int argc, char **argv)
{
	kprintf("backend      %s\n", pmu_backend_name());
	kprintf("exact        %s\n", !pmu_counts_exact() ? "no" : pmu_counts_own_thread() ?
		"yes: one tick of the thread's own clock per instruction" :
		"yes: one TSC tick per instruction (QEMU -icount shift=0)");
	kprintf("per-thread   %s\n", pmu_counts_own_thread() ? "yes: each thread's counts are its own" :
		"no: the model counts by the TSC, which every CPU advances (no QEMU plugin); with tasks on "
		"several CPUs each count includes the others'");
	kprintf("counters     %d per hardware thread, %d bits\n", pmu_description()->counters, pmu_description()->width);
	kprintf("PMI          LVT 0x340 -> vector %#x, limit %u PMIs/s per thread\n", VEC_PMI, pmu_pmi_limit());
	kprintf("plugin       %s\n", pmu_plugin_present() ?
		"yes: QEMU's pmuos-pmu.so counts caches, TLBs, branches and SSE/AVX (as VPU) from execution" :
		"no (QEMU without pmuos-pmu.so, PLUGIN=0, or a PMU other than KNC's, whose event codes the plugin has)");
	kprintf("events       %lu (libpfm4 %s); counted by this backend:", pmu_event_count(), pmu_events_pmu());
	for (size_t i = 0; i < pmu_event_count(); i++)
		if (pmu_counts_event(pmu_event_at(i)->code))
			kprintf(" %s", pmu_event_at(i)->name);
	kprintf("\n");
	return 0;
}

static int pmu_events(int argc, char **argv)
{
	const char *filter = argc > 2 ? argv[2] : "";
	size_t flen = strlen(filter), shown = 0;

	for (size_t i = 0; i < pmu_event_count(); i++) {
		const struct pmu_event *e = pmu_event_at(i);
		bool match = flen == 0;
		for (size_t j = 0; !match && e->name[j]; j++)
			match = strncmp(e->name + j, filter, flen) == 0;
		if (!match)
			continue;
		shown++;
		bool plugin;
		const char *def = pmu_event_definition(e->name, &plugin);
		kprintf("%-34s umask 0x%02x event 0x%02x%s", e->name, e->code >> 8, e->code & 0xff,
			pmu_counter_can(pmu_description(), 1, e->code) ? "" : "  counter 0 only");
		if (pmu_counts_event(e->code))
			kprintf("  %s: %s\n", plugin ? "plugin" : "model", def);
		else if (def)
			kprintf("  (not counted by this backend; the QEMU plugin would count: %s)\n", def);
		else
			kprintf("  (not counted by this backend)\n");
	}
	if (!shown)
		return shell_error("pmu", "no event matches '%.40s'", filter);
	return 0;
}

static int pmu_set(int argc, char **argv)
{
	struct cpuset set;
	uint64_t ctr, period = 0;
	uint32_t evtsel = 0;
	char err[96];

	if (argc < 5 || argc > 6)
		return shell_error("pmu", "usage: pmu set CPUS CTR EVENT|none [period=N]");
	if (!parse_set(argv[2], &set))
		return 1;
	if (!parse_u64(argv[3], UINT32_MAX, &ctr))
		return shell_error("pmu", "counter '%.16s' is not a number (0 or 1)", argv[3]);
	if (strcmp(argv[4], "none") != 0 && !pmu_event_parse(argv[4], &evtsel, err, sizeof(err)))
		return shell_error("pmu", "%s", err);
	if (argc == 6) {
		if (strncmp(argv[5], "period=", 7) != 0 || !parse_u64(argv[5] + 7, UINT64_MAX, &period))
			return shell_error("pmu", "'%.32s' is not period=N (N a number of events)", argv[5]);
		if (period == 0) /* to the PMU, period 0 is counting: period=0 asks for no period */
			return pmu_verdict((struct pmu_result){ .err = PMU_ERR_PERIOD });
	}
	struct pmu_result r = pmu_configure(&set, ctr, evtsel, period);
	if (r.err)
		return pmu_verdict(r);
	if (evtsel && !pmu_counts_event(evtsel))
		kprintf("note: the %s backend does not count this event; it will read as not counted\n",
			pmu_backend_name());
	return 0;
}

static int pmu_mux_cmd(int argc, char **argv)
{
	struct cpuset set;
	/* A 256-byte list holds at most 128 events: the PMU says how many take turns. */
	uint32_t evtsel[128], nev = 0;
	uint64_t ms = PMU_MUX_SLICE_MS_DEFAULT;
	char err[96], list[256];

	if (argc < 4 || argc > 5)
		return shell_error("pmu", "usage: pmu mux CPUS EVENT,EVENT,... [slice=MS]");
	if (!parse_set(argv[2], &set))
		return 1;
	if (argc == 5 && (strncmp(argv[4], "slice=", 6) != 0 || !parse_u64(argv[4] + 6, UINT32_MAX, &ms)))
		return shell_error("pmu", "'%.32s' is not slice=MS (MS a number of milliseconds)", argv[4]);
	strlcpy(list, argv[3], sizeof(list));
	for (char *ev = list;;) {
		char *end = ev;
		while (*end && *end != ',')
			end++;
		bool more = *end == ',';
		*end = 0;
		if (!pmu_event_parse(ev, &evtsel[nev++], err, sizeof(err)))
			return shell_error("pmu", "%s", err);
		if (!more)
			break;
		ev = end + 1;
	}
	return pmu_verdict(pmu_mux_configure(&set, nev, evtsel, 0, pmu_time_to_ticks(ms, 1000, tsc_hz)));
}

static int pmu_ctl(int argc, char **argv, struct pmu_result (*fn)(const struct cpuset *))
{
	struct cpuset set;

	if (!set_arg(argc, argv, &set))
		return 1;
	return pmu_verdict(fn(&set));
}

static int pmu_start_cmd(int argc, char **argv) { return pmu_ctl(argc, argv, pmu_start); }
static int pmu_stop_cmd(int argc, char **argv) { return pmu_ctl(argc, argv, pmu_stop); }
static int pmu_clear_cmd(int argc, char **argv) { return pmu_ctl(argc, argv, pmu_clear); }

static int pmu_read_cmd(int argc, char **argv)
{
	struct cpuset set;
	struct pmu_reading r;
	char name[64];

	if (!set_arg(argc, argv, &set))
		return 1;
	kprintf("CPU  CTR  %-32s %20s %10s  STATE\n", "EVENT", "COUNT", "SAMPLES");
	for (uint32_t c = 0; c < cpu_count; c++) {
		if (!cpuset_has(&set, c))
			continue;
		enum pmu_err e = pmu_read(c, &r);
		if (e != PMU_OK) {
			kprintf("%3u    -  %-32s %20s %10s  %s\n", c, "-", "-", "-",
				e == PMU_ERR_OFFLINE ? "not online" : "not answering");
			continue;
		}
		for (uint32_t i = 0; i < r.nev; i++) {
			if (!r.evtsel[i])
				continue;
			const char *ctr = r.mux ? "mux" : i ? "1" : "0";
			pmu_event_format(r.evtsel[i], name, sizeof(name));
			if (pmu_counts_event(r.evtsel[i]))
				kprintf("%3u  %3s  %-32s %20lu", c, ctr, name, r.value[i]);
			else
				kprintf("%3u  %3s  %-32s %20s", c, ctr, name, "<not counted>");
			if (r.period[i])
				kprintf(" %10lu", r.samples[i]);
			else
				kprintf(" %10s", "-");
			kprintf("  %s", r.running ? "running" : "stopped");
			/* Multiplexed: the share of the counting time this event had a counter (scale by it). */
			if (r.mux && r.enabled_ticks)
				kprintf(" (on a counter %lu%% of the time)", r.running_ticks[i] * 100 / r.enabled_ticks);
			if (r.shared && pmu_counts_event(r.evtsel[i]))
				kprintf(" (includes other CPUs' instructions: no per-thread clock without the QEMU plugin)");
			kprintf("\n");
		}
		if (r.throttles || r.stuck || r.overwritten)
			kprintf("%3u       throttled %lu times, stuck %lu times, %lu samples overwritten in the card's "
				"ring (of %lu PMIs)\n", c, r.throttles, r.stuck, r.overwritten, r.pmis);
	}
	return 0;
}

static int pmu_regs_cmd(int argc, char **argv)
{
	uint32_t cpu;
	struct pmu_regs r;

	if (argc != 3)
		return shell_error("pmu", "usage: pmu regs CPU");
	if (!shell_parse_cpu("pmu", argv[2], &cpu))
		return 1;
	enum pmu_err e = pmu_read_regs(cpu, &r);
	if (e != PMU_OK)
		return pmu_verdict((struct pmu_result){ .err = e, .cpu = cpu });
	kprintf("IA32_TIME_STAMP_COUNTER   (0x10) %#018lx\n", r.tsc);
	const struct pmu_desc *d = pmu_description();
	for (int i = 0; i < d->counters; i++)
		kprintf("IA32_PerfCnt%d             (%#x) %#012lx\n", i, pmu_ctr_msr(d, i), r.ctr[i]);
	for (int i = 0; i < d->counters; i++)
		kprintf("IA32_PerfEvtSel%d          (%#x) %#010lx\n", i, pmu_evtsel_msr(d, i), r.evtsel[i]);
	if (d->spflt_ctrl)
		kprintf("PERF_SPFLT_CONTROL        (%#x) %#018lx\n", d->spflt_ctrl, r.spflt);
	kprintf("IA32_PERF_GLOBAL_STATUS   (%#x) %#010lx\n", d->global_status, r.status);
	kprintf("IA32_PERF_GLOBAL_CTRL     (%#x) %#010lx\n", d->global_ctrl, r.global_ctrl);
	kprintf("APIC LVT performance counter (0x340) %#010x%s\n", r.lvt_pc,
		r.lvt_pc & (1u << 16) ? " (masked)" : "");
	return 0;
}

static int pmu_samples_cmd(int argc, char **argv)
{
	static struct pmu_sample s[PMU_SAMPLE_RING];
	uint32_t cpu;
	uint64_t want = 16, overwritten;

	if (argc < 3 || argc > 4)
		return shell_error("pmu", "usage: pmu samples CPU [N]");
	if (!shell_parse_cpu("pmu", argv[2], &cpu))
		return 1;
	if (argc == 4 && !parse_u64(argv[3], PMU_SAMPLE_RING, &want))
		return shell_error("pmu", "'%.16s' is not a number of samples (0-%d)", argv[3], PMU_SAMPLE_RING);
	size_t n = pmu_samples(cpu, s, want, &overwritten);
	kprintf("%-20s %-18s CPL  OVF  %12s %12s FRAMES\n", "TSC", "RIP", "CTR0", "CTR1");
	for (size_t i = 0; i < n; i++)
		kprintf("%-20lu %#018lx %3u  %3u  %12lu %12lu %6u\n", s[i].tsc, s[i].rip, s[i].cpl,
			s[i].ovf_mask, s[i].ctr[0], s[i].ctr[1], s[i].nframes);
	kprintf("%lu samples shown, %lu overwritten\n", n, overwritten);
	return 0;
}

static int pmu_spflt_cmd(int argc, char **argv)
{
	static const struct { const char *name; uint32_t mask; } modes[] = {
		{ "off", 0 }, { "0", 1 }, { "1", 2 }, { "both", 3 },
	};
	struct cpuset set;

	if (argc != 4)
		return shell_error("pmu", "usage: pmu spflt CPUS off|0|1|both");
	if (!parse_set(argv[2], &set))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		if (strcmp(argv[3], modes[i].name) != 0)
			continue;
		return pmu_verdict(pmu_set_spflt(&set, modes[i].mask));
	}
	return shell_error("pmu", "'%.16s' should be off, 0, 1 or both (the counters SPFLT gates)", argv[3]);
}

/* The shell's pmuctl record -g: `pmu callchain CPUS FRAMES|off`; `pmu callchain CPU`: its newest chain. */
static int pmu_callchain_cmd(int argc, char **argv)
{
	uint64_t ips[PMU_CALLCHAIN_MAX], frames = 0;
	struct cpuset set;
	uint32_t cpu;

	if (argc == 3) {
		if (!shell_parse_cpu("pmu", argv[2], &cpu))
			return 1;
		size_t n = pmu_last_callchain(cpu, ips);
		kprintf("CPU %u's newest sample: %lu return addresses\n", cpu, n);
		for (size_t i = 0; i < n; i++)
			kprintf("  #%lu %#018lx\n", i + 1, ips[i]);
		return 0;
	}
	if (argc != 4)
		return shell_error("pmu", "usage: pmu callchain CPUS FRAMES|off, or pmu callchain CPU");
	if (!parse_set(argv[2], &set))
		return 1;
	if (strcmp(argv[3], "off") != 0 && !parse_u64(argv[3], UINT32_MAX, &frames))
		return shell_error("pmu", "'%.16s' should be off or 0-%d frames", argv[3], PMU_CALLCHAIN_MAX);
	return pmu_verdict(pmu_set_callchain(&set, frames));
}

/* The shell's pmuctl record -e cpu-clock: `pmu cpu-clock CPUS NS|off`, a time sample every NS ns of card time. */
static int pmu_cpu_clock_cmd(int argc, char **argv)
{
	struct cpuset set;
	uint64_t ns = 0;

	if (argc != 4)
		return shell_error("pmu", "usage: pmu cpu-clock CPUS NS|off");
	if (!parse_set(argv[2], &set))
		return 1;
	if (strcmp(argv[3], "off") != 0 && !parse_u64(argv[3], UINT64_MAX, &ns))
		return shell_error("pmu", "'%.16s' should be off or a period in ns (%llu to %llu)", argv[3],
				   PMU_CPU_CLOCK_MIN_NS, PMU_CPU_CLOCK_MAX_NS);
	return pmu_verdict(pmu_set_cpu_clock(&set, ns));
}

static int pmu_limit_cmd(int argc, char **argv)
{
	uint64_t v;

	if (argc == 2) {
		kprintf("%u PMIs per second per thread\n", pmu_pmi_limit());
		return 0;
	}
	if (argc != 3 || !parse_u64(argv[2], PMU_PMI_LIMIT_MAX, &v) || v == 0)
		return shell_error("pmu", "limit must be 1-%u PMIs per second", PMU_PMI_LIMIT_MAX);
	pmu_set_pmi_limit(v);
	return 0;
}

static int pmu_selftest_cmd(int argc, char **argv)
{
	return pmu_selftest() ? 1 : 0;
}

static int pmu_bench_cmd(int argc, char **argv)
{
	return pmu_bench();
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} subcommands[] = {
	{ "info", pmu_info }, { "events", pmu_events }, { "set", pmu_set }, { "mux", pmu_mux_cmd },
	{ "start", pmu_start_cmd }, { "stop", pmu_stop_cmd }, { "read", pmu_read_cmd },
	{ "clear", pmu_clear_cmd }, { "regs", pmu_regs_cmd }, { "samples", pmu_samples_cmd },
	{ "spflt", pmu_spflt_cmd }, { "callchain", pmu_callchain_cmd }, { "cpu-clock", pmu_cpu_clock_cmd },
	{ "limit", pmu_limit_cmd }, { "selftest", pmu_selftest_cmd }, { "bench", pmu_bench_cmd },
	{ "metrics", pmu_metrics_cmd },
};

static int cmd_pmu(int argc, char **argv)
{
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].fn(argc, argv);
	return shell_error("pmu", "unknown subcommand '%.32s' (info, events, set, mux, start, stop, read, "
			   "clear, regs, samples, spflt, callchain, cpu-clock, limit, selftest, bench, metrics)", argv[1]);
}
SHELL_COMMAND(pmu, "pmu", "SUBCOMMAND ...", "KNC core PMU; subcommands:\n"
	      "             info                        backend, exactness, counters, PMI vector\n"
	      "             events [FILTER]             the libpfm4 knc events\n"
	      "             set CPUS CTR EVENT|none [period=N]  configure counter 0 or 1\n"
	      "             mux CPUS EVENT,... [slice=MS]  up to 8 events taking turns (time slices)\n"
	      "             metrics CPUS GROUP,... [slice=MS]  count a metric group's events (pmuctl stat -M)\n"
	      "             metrics [CPUS] | list       their metrics so far; the groups and formulas\n"
	      "             start|stop|clear|read [CPUS]  control and read (default: the online CPUs)\n"
	      "             regs CPU                    raw PMU registers and LVT 0x340\n"
	      "             samples CPU [N]             the newest N samples\n"
	      "             spflt CPUS off|0|1|both     which counters a program's SPFLT gates\n"
	      "             callchain CPUS N|off | CPU  samples carry N return addresses; the newest chain\n"
	      "             cpu-clock CPUS NS|off       a time sample every NS ns while a task runs\n"
	      "             limit [N]                   PMI rate limit per thread (PMIs/s)\n"
	      "             selftest                    exact counts, period, double overflow\n"
	      "             bench                       instructions one overflow costs (make bench)",
	      1, 5, cmd_pmu);
