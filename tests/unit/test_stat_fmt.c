/*
 * host/stat_fmt.c: `pmuctl stat`'s scaling (perf's value * enabled /
 * running) and its three output formats (table, -x SEP, --json), each with
 * and without -I. Every expected line is written out in full: the formats
 * are what scripts parse, byte for byte.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/stat_fmt.h"

#define EV "INSTRUCTIONS_EXECUTED:u"

static struct stat_count now[CPUSET_MAX], then[CPUSET_MAX];
static struct cpuset cpus12; /* CPUs 1 and 2 */

/* What one call prints: the table (stderr in pmuctl) and -x/--json (stdout). */
struct printed {
	char *out, *table;
	size_t out_len, table_len;
};

static struct stat_format fmt(struct printed *p, const char *sep, int json, uint64_t tsc_hz)
{
	struct stat_format f = { .sep = sep, .json = json, .tsc_hz = tsc_hz };
	f.out = open_memstream(&p->out, &p->out_len);
	f.table = open_memstream(&p->table, &p->table_len);
	assert_non_null(f.out);
	assert_non_null(f.table);
	return f;
}

static void done(struct stat_format *f)
{
	fclose(f->out);
	fclose(f->table);
}

static void check(struct printed *p, const char *out, const char *table)
{
	assert_string_equal(p->out, out);
	assert_string_equal(p->table, table);
	free(p->out);
	free(p->table);
}

/* Prints EV over CPUs 1-2 in one format and checks both streams. */
static void print_one(const char *sep, int json, int counted, const struct stat_count *then_, double t,
		      const char *out, const char *table)
{
	struct printed p;
	struct stat_format f = fmt(&p, sep, json, 1000000000);

	stat_print(&f, EV, counted, &cpus12, now, then_, t);
	done(&f);
	check(&p, out, table);
}

static int setup(void **state)
{
	(void)state;
	memset(now, 0, sizeof(now));
	memset(then, 0, sizeof(then));
	memset(&cpus12, 0, sizeof(cpus12));
	cpuset_add(&cpus12, 1);
	cpuset_add(&cpus12, 2);
	/* CPUs outside the set never show, whatever they hold. */
	now[0] = now[3] = now[255] = (struct stat_count){ 777, 888, 999, false };
	return 0;
}

/* ------------------------------------------------------------ scaling */

static void test_scale_exact_when_always_on_a_counter(void **state)
{
	(void)state;
	struct stat_count c = { 123456789, 5000, 5000, false };
	assert_true(stat_scale(&c) == 123456789.0);
	assert_true(stat_pcnt(&c) == 100.0);
}

static void test_scale_multiplexed(void **state)
{
	(void)state;
	struct stat_count quarter = { 1000, 4000, 1000, false }, third = { 7, 3, 1, false };
	assert_true(stat_scale(&quarter) == 4000.0);
	assert_true(stat_pcnt(&quarter) == 25.0);
	assert_true(stat_scale(&third) == 21.0);
}

static void test_scale_running_zero(void **state)
{
	(void)state;
	struct stat_count never = { 50, 1000, 0, false }, nothing = { 0, 0, 0, false };
	assert_true(stat_scale(&never) == 0.0);
	assert_true(stat_pcnt(&never) == 0.0);
	/* No counting time at all: nothing was missed, as perf shows it. */
	assert_true(stat_scale(&nothing) == 0.0);
	assert_true(stat_pcnt(&nothing) == 100.0);
}

static void test_group_digits(void **state)
{
	(void)state;
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0" }, { 7, "7" }, { 999, "999" }, { 1000, "1,000" }, { 12345, "12,345" },
		{ 123456, "123,456" }, { 1234567, "1,234,567" },
		{ UINT64_MAX, "18,446,744,073,709,551,615" },
	};
	char buf[27];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 'Z', sizeof(buf));
		group_digits(cases[i].v, buf);
		assert_string_equal(buf, cases[i].s);
	}
}

/* What the table prints is what stat -M computes its metrics from. */
static void test_sum_and_total(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 3000, 6000, 3000, false };
	then[1] = (struct stat_count){ 1000, 2000, 1000, false };
	now[2] = (struct stat_count){ 11, 40, 20, false };
	struct stat_count s = stat_sum(&cpus12, now, NULL);
	assert_true(s.value == 3011 && s.enabled == 6040 && s.running == 3020);
	/* CPU 2 since then: then[2] is 0. */
	s = stat_sum(&cpus12, now, then);
	assert_true(s.value == 2011 && s.enabled == 4040 && s.running == 2020);
	/* 2011 * 4040 / 2020 */
	assert_true(stat_total(&s) == 4022);
	struct stat_count half = { 1, 3, 2, false }, never = { 9, 9, 0, false };
	assert_true(stat_total(&half) == 2);
	assert_true(stat_total(&never) == 0);
}

/* ------------------------------------------------------------ the table */

static void test_table_sums_the_cpus(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1000000, 2000, 2000, false };
	now[2] = (struct stat_count){ 234567, 1000, 1000, false };
	print_one(NULL, 0, 1, NULL, -1, "", "           1,234,567      " EV "\n");
}

static void test_table_multiplexed_is_scaled_with_its_share(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1000, 4000, 1000, false };
	now[2] = (struct stat_count){ 500, 4000, 1000, false };
	/* 1500 * 8000 / 2000 */
	print_one(NULL, 0, 1, NULL, -1, "", "               6,000      " EV "          (25.00%)\n");
}

static void test_table_rounds_to_nearest(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1, 3, 2, false }; /* 1.5 */
	print_one(NULL, 0, 1, NULL, -1, "", "                   2      " EV "          (66.67%)\n");
	now[1] = (struct stat_count){ 1, 5, 4, false }; /* 1.25 */
	print_one(NULL, 0, 1, NULL, -1, "", "                   1      " EV "          (80.00%)\n");
}

static void test_table_not_counted_and_not_supported(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 0, 1000, 0, false };
	print_one(NULL, 0, 1, NULL, -1, "", "       <not counted>      " EV "\n");
	now[1] = (struct stat_count){ 5, 1000, 1000, false };
	print_one(NULL, 0, 0, NULL, -1, "", "     <not supported>      " EV "\n");
}

/* A count that includes other threads' (MBOX_COUNT_SHARED) says so on its line, in each format; a sum if one CPU's does. */
static void test_shared_counts_are_marked(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1000, 1000, 1000, true };
	now[2] = (struct stat_count){ 500, 1000, 1000, false };
	print_one(NULL, 0, 1, NULL, -1, "", "               1,500      " EV " (" STAT_SHARED_NOTE ")\n");
	print_one(",", 0, 1, NULL, -1, "1500,,INSTRUCTIONS_EXECUTED:u,2000,100.00," STAT_SHARED_NOTE "\n", "");
	print_one(NULL, 1, 1, NULL, -1,
		  "{ \"cpu\": \"1\", \"counter-value\": \"1000.000000\", \"unit\": \"\", \"event\": \"" EV "\", "
		  "\"event-runtime\": 1000, \"pcnt-running\": 100.00, \"note\": \"" STAT_SHARED_NOTE "\" }\n"
		  "{ \"cpu\": \"2\", \"counter-value\": \"500.000000\", \"unit\": \"\", \"event\": \"" EV "\", "
		  "\"event-runtime\": 1000, \"pcnt-running\": 100.00 }\n", "");
	now[1].shared = false;
	print_one(NULL, 0, 1, NULL, -1, "", "               1,500      " EV "\n");
}

static void test_table_interval(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 3000, 6000, 3000, false };
	then[1] = (struct stat_count){ 1000, 2000, 1000, false };
	now[2] = (struct stat_count){ 10, 10, 10, false };
	then[2] = (struct stat_count){ 10, 10, 10, false };
	/* Since `then`: 2000 events in 2000 of 4000 ticks. */
	print_one(NULL, 0, 1, then, 1.25, "", "     1.250000000                4,000      " EV "          (50.00%)\n");
}

static void test_table_head_and_tail(void **state)
{
	(void)state;
	struct printed p;
	struct stat_format f = fmt(&p, NULL, 0, 1000000000);

	stat_print_head(&f, "build/user/calib.elf", "1-2");
	stat_print_tail(&f, 0.5);
	stat_print_interval_head(&f);
	done(&f);
	check(&p, "",
	      "\n Performance counter stats for 'build/user/calib.elf' (CPUs 1-2):\n\n"
	      "\n     0.500000000 seconds time elapsed\n\n"
	      "#           time             counts unit events\n");
}

/* ------------------------------------------------------------ -x SEP */

static void test_csv(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1000, 2000, 2000, false };
	now[2] = (struct stat_count){ 500, 1000, 1000, false };
	/* value, unit (empty), event, run time in ns (1 GHz TSC), running percentage */
	print_one(",", 0, 1, NULL, -1, "1500,,INSTRUCTIONS_EXECUTED:u,3000,100.00\n", "");
	print_one(" | ", 0, 1, NULL, -1, "1500 |  | INSTRUCTIONS_EXECUTED:u | 3000 | 100.00\n", "");
}

static void test_csv_multiplexed_and_tsc_rate(void **state)
{
	(void)state;
	struct printed p;
	struct stat_format f = fmt(&p, ",", 0, 2000000000);

	now[1] = (struct stat_count){ 1000, 4000, 1000, false };
	stat_print(&f, EV, 1, &cpus12, now, NULL, -1);
	done(&f);
	/* 1000 ticks on a counter at 2 GHz: 500 ns. */
	check(&p, "4000,,INSTRUCTIONS_EXECUTED:u,500,25.00\n", "");
}

static void test_csv_not_counted_and_not_supported(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 0, 1000, 0, false };
	print_one(",", 0, 1, NULL, -1, "<not counted>,,INSTRUCTIONS_EXECUTED:u,0,0.00\n", "");
	now[1] = (struct stat_count){ 5, 1000, 1000, false };
	print_one(",", 0, 0, NULL, -1, "<not supported>,,INSTRUCTIONS_EXECUTED:u,1000,100.00\n", "");
}

static void test_csv_interval(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 3000, 6000, 3000, false };
	then[1] = (struct stat_count){ 1000, 2000, 1000, false };
	print_one(",", 0, 1, then, 1.25, "1.250000000,4000,,INSTRUCTIONS_EXECUTED:u,2000,50.00\n", "");
}

/* ------------------------------------------------------------ -A, -r */

/* Prints EV with per_cpu / runs and noise set; checks both streams. */
static void print_opts(const char *sep, int json, int per_cpu, int runs, double noise, const char *out,
		       const char *table)
{
	struct printed p;
	struct stat_format f = fmt(&p, sep, json, 1000000000);

	f.per_cpu = per_cpu;
	f.runs = runs;
	f.noise = noise;
	stat_print(&f, EV, 1, &cpus12, now, NULL, -1);
	done(&f);
	check(&p, out, table);
}

static void test_per_cpu_lines(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1234, 10, 10, false };
	now[2] = (struct stat_count){ 5, 10, 10, false };
	print_opts(NULL, 0, 1, 1, 0, "",
		   "CPU1                   1,234      " EV "\n"
		   "CPU2                       5      " EV "\n");
	/* perf's -x with -A: the CPU first */
	print_opts(",", 0, 1, 1, 0, "CPU1,1234,," EV ",10,100.00\nCPU2,5,," EV ",10,100.00\n", "");
}

/*
 * --per-core: the threads of each core summed, cores in ascending order
 * whatever the CPUs' order, perf's S0-D0-Cn and the count of CPUs summed,
 * in the table, -x and --json; CPUs outside the set count nowhere.
 */
static void test_per_core_lines(void **state)
{
	(void)state;
	uint16_t core[CPUSET_MAX];
	struct cpuset set = { 0 };
	struct printed p;

	for (int i = 0; i < CPUSET_MAX; i++)
		core[i] = 0xffff;
	core[1] = core[2] = 5; /* a card numbers its cores by APIC ID: CPU 1's core need not be 0 */
	core[3] = core[4] = 1;
	cpuset_add(&set, 1);
	cpuset_add(&set, 2);
	cpuset_add(&set, 4); /* CPU 3 (core 1) is not in the set */
	now[1] = (struct stat_count){ 100, 10, 10, false };
	now[2] = (struct stat_count){ 20, 10, 10, false };
	now[4] = (struct stat_count){ 3, 10, 10, false };
	struct stat_format f = fmt(&p, NULL, 0, 1000000000);
	f.core = core;
	stat_print(&f, EV, 1, &set, now, NULL, -1);
	done(&f);
	check(&p, "", "S0-D0-C1       1                   3      " EV "\n"
		      "S0-D0-C5       2                 120      " EV "\n");
	f = fmt(&p, ",", 0, 1000000000);
	f.core = core;
	stat_print(&f, EV, 1, &set, now, NULL, -1);
	done(&f);
	check(&p, "S0-D0-C1,1,3,," EV ",10,100.00\nS0-D0-C5,2,120,," EV ",20,100.00\n", "");
	f = fmt(&p, NULL, 1, 1000000000);
	f.core = core;
	stat_print(&f, EV, 1, &set, now, NULL, -1);
	done(&f);
	check(&p, "{ \"core\": \"S0-D0-C1\", \"aggregate-number\": 1, \"counter-value\": \"3.000000\", \"unit\": \"\", "
		  "\"event\": \"" EV "\", \"event-runtime\": 10, \"pcnt-running\": 100.00 }\n"
		  "{ \"core\": \"S0-D0-C5\", \"aggregate-number\": 2, \"counter-value\": \"120.000000\", \"unit\": \"\", "
		  "\"event\": \"" EV "\", \"event-runtime\": 20, \"pcnt-running\": 100.00 }\n", "");
}

/*
 * --per-thread: a line per CPU that held a thread (tid 0: none, no line),
 * its counts the CPU's, perf's COMM-TID: "%16s-%-8d" in the table, bare in
 * -x, --json's "thread"; CPUs outside the set have no line whatever tid says.
 */
static void test_per_thread_lines(void **state)
{
	(void)state;
	uint32_t tid[CPUSET_MAX] = { 0 };
	struct cpuset set = { 0 };
	struct printed p;

	cpuset_add(&set, 1);
	cpuset_add(&set, 2);
	cpuset_add(&set, 4);
	tid[1] = 1000; /* the main thread: tid = pid */
	tid[4] = 1001; /* CPU 2 ran no thread */
	tid[3] = 1002; /* not in the set */
	now[1] = (struct stat_count){ 21639, 10, 10, false };
	now[2] = (struct stat_count){ 7, 10, 10, false };
	now[4] = (struct stat_count){ 3, 10, 5, false };
	struct stat_format f = fmt(&p, NULL, 0, 1000000000);
	f.tid = tid;
	f.comm = "regions.elf";
	stat_print(&f, EV, 1, &set, now, NULL, -1);
	done(&f);
	check(&p, "", "     regions.elf-1000                  21,639      " EV "\n"
		      "     regions.elf-1001                       6      " EV "          (50.00%)\n");
	f = fmt(&p, ",", 0, 1000000000);
	f.tid = tid;
	f.comm = "regions.elf";
	stat_print(&f, EV, 1, &set, now, NULL, -1);
	done(&f);
	check(&p, "regions.elf-1000,21639,," EV ",10,100.00\nregions.elf-1001,6,," EV ",5,50.00\n", "");
	f = fmt(&p, NULL, 1, 1000000000);
	f.tid = tid;
	f.comm = "regions.elf";
	stat_print(&f, EV, 1, &set, now, NULL, -1);
	done(&f);
	check(&p, "{ \"thread\": \"regions.elf-1000\", \"counter-value\": \"21639.000000\", \"unit\": \"\", "
		  "\"event\": \"" EV "\", \"event-runtime\": 10, \"pcnt-running\": 100.00 }\n"
		  "{ \"thread\": \"regions.elf-1001\", \"counter-value\": \"6.000000\", \"unit\": \"\", "
		  "\"event\": \"" EV "\", \"event-runtime\": 5, \"pcnt-running\": 50.00 }\n", "");
}

static void test_repeat_shows_perfs_spread(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1000, 10, 10, false };
	print_opts(NULL, 0, 0, 5, 1.234, "", "               1,000      " EV "           ( +-  1.23% )\n" /* the name in 32 columns, as a multiplexed one's */);
	/* -x: perf's variance column after the event */
	print_opts(",", 0, 0, 5, 1.234, "1000,," EV ",1.23%,10,100.00\n", "");
	print_opts(NULL, 1, 0, 5, 1.234,
		   "{ \"cpu\": \"1\", \"counter-value\": \"1000.000000\", \"unit\": \"\", \"event\": \"" EV "\", "
		   "\"event-runtime\": 10, \"pcnt-running\": 100.00, \"variance\": 1.23 }\n"
		   "{ \"cpu\": \"2\", \"counter-value\": \"<not counted>\", \"unit\": \"\", \"event\": \"" EV "\", "
		   "\"event-runtime\": 0, \"pcnt-running\": 100.00, \"variance\": 1.23 }\n",
		   "");
	/* one run: no spread anywhere */
	print_opts(",", 0, 0, 1, 1.234, "1000,," EV ",10,100.00\n", "");
}

/* ------------------------------------------------------------ --json */

static void test_json_one_object_per_cpu(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1000, 4000, 1000, false };
	now[2] = (struct stat_count){ 0, 4000, 0, false };
	print_one(NULL, 1, 1, NULL, -1,
		  "{ \"cpu\": \"1\", \"counter-value\": \"4000.000000\", \"unit\": \"\", \"event\": \""
		  EV "\", \"event-runtime\": 1000, \"pcnt-running\": 25.00 }\n"
		  "{ \"cpu\": \"2\", \"counter-value\": \"<not counted>\", \"unit\": \"\", \"event\": \""
		  EV "\", \"event-runtime\": 0, \"pcnt-running\": 0.00 }\n",
		  "");
}

static void test_json_unrounded_and_not_supported(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 1, 3, 2, false };
	print_one(NULL, 1, 1, NULL, -1,
		  "{ \"cpu\": \"1\", \"counter-value\": \"1.500000\", \"unit\": \"\", \"event\": \""
		  EV "\", \"event-runtime\": 2, \"pcnt-running\": 66.67 }\n"
		  "{ \"cpu\": \"2\", \"counter-value\": \"<not counted>\", \"unit\": \"\", \"event\": \""
		  EV "\", \"event-runtime\": 0, \"pcnt-running\": 100.00 }\n",
		  "");
	now[1] = (struct stat_count){ 5, 10, 10, false };
	print_one(NULL, 1, 0, NULL, -1,
		  "{ \"cpu\": \"1\", \"counter-value\": \"<not supported>\", \"unit\": \"\", \"event\": \""
		  EV "\", \"event-runtime\": 10, \"pcnt-running\": 100.00 }\n"
		  "{ \"cpu\": \"2\", \"counter-value\": \"<not supported>\", \"unit\": \"\", \"event\": \""
		  EV "\", \"event-runtime\": 0, \"pcnt-running\": 100.00 }\n",
		  "");
}

static void test_json_interval(void **state)
{
	(void)state;
	now[1] = (struct stat_count){ 3000, 6000, 3000, false };
	then[1] = (struct stat_count){ 1000, 2000, 1000, false };
	now[2] = (struct stat_count){ 40, 50, 50, false };
	then[2] = (struct stat_count){ 10, 20, 20, false };
	print_one(NULL, 1, 1, then, 1.25,
		  "{ \"interval\": 1.250000000, \"cpu\": \"1\", \"counter-value\": \"4000.000000\", \"unit\": \"\", "
		  "\"event\": \"" EV "\", \"event-runtime\": 2000, \"pcnt-running\": 50.00 }\n"
		  "{ \"interval\": 1.250000000, \"cpu\": \"2\", \"counter-value\": \"30.000000\", \"unit\": \"\", "
		  "\"event\": \"" EV "\", \"event-runtime\": 30, \"pcnt-running\": 100.00 }\n",
		  "");
}

/* Machine formats have no table heading or wall time line. */
static void test_machine_formats_have_no_table_lines(void **state)
{
	(void)state;
	for (int json = 0; json <= 1; json++) {
		struct printed p;
		struct stat_format f = fmt(&p, json ? NULL : ",", json, 1000000000);
		stat_print_head(&f, "x.elf", "1");
		stat_print_interval_head(&f);
		stat_print_tail(&f, 1.0);
		done(&f);
		check(&p, "", "");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_scale_exact_when_always_on_a_counter, setup),
		cmocka_unit_test_setup(test_shared_counts_are_marked, setup),
		cmocka_unit_test_setup(test_scale_multiplexed, setup),
		cmocka_unit_test_setup(test_scale_running_zero, setup),
		cmocka_unit_test_setup(test_group_digits, setup),
		cmocka_unit_test_setup(test_sum_and_total, setup),
		cmocka_unit_test_setup(test_table_sums_the_cpus, setup),
		cmocka_unit_test_setup(test_table_multiplexed_is_scaled_with_its_share, setup),
		cmocka_unit_test_setup(test_table_rounds_to_nearest, setup),
		cmocka_unit_test_setup(test_table_not_counted_and_not_supported, setup),
		cmocka_unit_test_setup(test_table_interval, setup),
		cmocka_unit_test_setup(test_table_head_and_tail, setup),
		cmocka_unit_test_setup(test_csv, setup),
		cmocka_unit_test_setup(test_csv_multiplexed_and_tsc_rate, setup),
		cmocka_unit_test_setup(test_csv_not_counted_and_not_supported, setup),
		cmocka_unit_test_setup(test_csv_interval, setup),
		cmocka_unit_test_setup(test_per_cpu_lines, setup),
		cmocka_unit_test_setup(test_per_core_lines, setup),
		cmocka_unit_test_setup(test_per_thread_lines, setup),
		cmocka_unit_test_setup(test_repeat_shows_perfs_spread, setup),
		cmocka_unit_test_setup(test_json_one_object_per_cpu, setup),
		cmocka_unit_test_setup(test_json_unrounded_and_not_supported, setup),
		cmocka_unit_test_setup(test_json_interval, setup),
		cmocka_unit_test_setup(test_machine_formats_have_no_table_lines, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
