/*
 * host/regions.c: the region lines of user/regions.c as pmuctl stat reads
 * them (every field, "sampling", a name with ": ", lines that are not
 * regions), their totals over ranks and the table with event names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "host/regions.h"

static int parse(const char *line, struct region_total *r)
{
	return region_parse(line, strlen(line), r);
}

static void test_parse_counts(void **state)
{
	struct region_total r;
	(void)state;
	assert_int_equal(parse("region loop: calls 3, counter0 800027, counter1 100227\n", &r), 1);
	assert_string_equal(r.name, "loop");
	assert_int_equal(r.calls, 3);
	assert_int_equal(r.count[0], 800027);
	assert_int_equal(r.count[1], 100227);
	assert_int_equal(r.sampling[0] | r.sampling[1] | r.open, 0);
	assert_int_equal(parse("region a: b: calls 1, counter0 sampling, counter1 7 (still open)\n", &r), 1);
	assert_string_equal(r.name, "a: b");
	assert_int_equal(r.sampling[0], 1);
	assert_int_equal(r.sampling[1], 0);
	assert_int_equal(r.count[1], 7);
	assert_int_equal(r.open, 1);
	/* Counters named by their events (SYS_PMU_EVENT_NAMES), as the program prints them with events set. */
	assert_int_equal(parse("region loop: calls 2, INSTRUCTIONS_EXECUTED:u 800027, DATA_READ_MISS:c=2 sampling\n", &r), 1);
	assert_string_equal(r.name, "loop");
	assert_int_equal(r.calls, 2);
	assert_int_equal(r.count[0], 800027);
	assert_int_equal(r.sampling[0], 0);
	assert_int_equal(r.sampling[1], 1);
	assert_int_equal(r.open, 0);
	/* A PMU's fixed counters after them (user/regions.c on KNL), named; never sampling. */
	assert_int_equal(parse("region w: calls 1, A:u 5, B:u 6, fixed INST_RETIRED.ANY:u 9, fixed X 10, tsc 7\n", &r), 1);
	assert_int_equal(r.nfixed, 2);
	assert_string_equal(r.fixed_name[0], "INST_RETIRED.ANY:u");
	assert_int_equal(r.fixed[0], 9);
	assert_string_equal(r.fixed_name[1], "X");
	assert_int_equal(r.fixed[1], 10);
	assert_int_equal(r.ticks, 7);
	assert_int_equal(parse("region w: calls 1, A 5, B 6, fixed F sampling\n", &r), 0);
	assert_int_equal(parse("region w: calls 1, A 5, B 6, fixed F 1, fixed G 2, fixed H 3, fixed I 4\n", &r), 0);
}

static void test_parse_refuses_other_lines(void **state)
{
	struct region_total r;
	(void)state;
	assert_int_equal(parse("regions: done (5)\n", &r), 0);
	assert_int_equal(parse("region : calls 1, counter0 1, counter1 2\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, counter0 -1, counter1 2\n", &r), 0);
	assert_int_equal(parse("region x: calls one, counter0 1, counter1 2\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, counter1 2\n", &r), 0);
	assert_int_equal(parse("hello region x: calls 1, counter0 1, counter1 2\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, counter0 1, counter1 2 and more\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, counter0 1, 2\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, counter0 1, counter1 2, counter2 3\n", &r), 0);
}

static void test_table_adds_ranks_and_names_events(void **state)
{
	(void)state;
	const char *l = "region loop: calls 2, counter0 100, counter1 40\n";
	assert_int_equal(regions_take_line(l, strlen(l), 1), 1);
	assert_int_equal(regions_take_line(l, strlen(l), 1), 1); /* a second rank */
	assert_int_equal(regions_take_line("hello\n", 6, 1), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct stat_format f = { .out = out, .table = out, .tsc_hz = 1000 };
	const char *names[] = { "CPU_CLK_UNHALTED", "INSTRUCTIONS_EXECUTED" };
	const struct metric_group *g[] = { metric_group_find("CPI") };
	int on[2] = { 1, 0 }; /* counter 0 holds event 1 */
	regions_print(&f, names, 2, on, NULL, NULL, g, 1, false);
	fclose(out);
	assert_non_null(strstr(buf, " Region 'loop': 4 calls\n"));
	assert_non_null(strstr(buf, "                 200      INSTRUCTIONS_EXECUTED\n"));
	assert_non_null(strstr(buf, "                  80      CPU_CLK_UNHALTED\n"));
	assert_non_null(strstr(buf, "                 0.4      CPI "));
	free(buf);
	out = open_memstream(&buf, &len);
	f = (struct stat_format){ .out = out, .table = out, .sep = ",", .tsc_hz = 1000 };
	regions_print(&f, names, 2, on, NULL, "2 events take turns", g, 0, false);
	fclose(out);
	assert_string_equal(buf, "loop,4,,calls\nloop,<not counted>,,CPU_CLK_UNHALTED\n"
				 "loop,<not counted>,,INSTRUCTIONS_EXECUTED\n");
	free(buf);
	/* Counts that include other threads' (MBOX_COUNT_SHARED) say so on each count's line, in each format. */
	out = open_memstream(&buf, &len);
	f = (struct stat_format){ .out = out, .table = out, .tsc_hz = 1000 };
	regions_print(&f, names, 2, on, NULL, NULL, g, 1, true);
	f.sep = ",";
	regions_print(&f, names, 2, on, NULL, NULL, NULL, 0, true);
	fclose(out);
	assert_non_null(strstr(buf, "                 200      INSTRUCTIONS_EXECUTED (" STAT_SHARED_NOTE ")\n"));
	assert_non_null(strstr(buf, "                  80      CPU_CLK_UNHALTED (" STAT_SHARED_NOTE ")\n"));
	assert_non_null(strstr(buf, "loop,200,,INSTRUCTIONS_EXECUTED," STAT_SHARED_NOTE "\n"));
	free(buf);
}

/* --json through json-c (a name with a quote stays one string) and -r's mean: totals over the runs / runs. */
static void test_json_and_mean_of_runs(void **state)
{
	(void)state;
	const char *l = "region say \"hi\": calls 2, counter0 101, counter1 40\n";
	assert_int_equal(regions_take_line(l, strlen(l), 1), 1);
	assert_int_equal(regions_take_line(l, strlen(l), 1), 1); /* a second run */
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct stat_format f = { .out = out, .table = out, .json = 1, .runs = 2, .tsc_hz = 1000 };
	const char *names[] = { "CPU_CLK_UNHALTED", "INSTRUCTIONS_EXECUTED" };
	const struct metric_group *g[] = { metric_group_find("CPI") };
	int on[2] = { 1, 0 };
	regions_print(&f, names, 2, on, NULL, NULL, g, 1, false);
	fclose(out);
	const char *say = strstr(buf, "{ \"region\": \"say \\\"hi\\\"\"");
	assert_non_null(say);
	assert_non_null(strstr(say, "\"calls\": 2, \"events\": { \"INSTRUCTIONS_EXECUTED\": \"101\", "
				    "\"CPU_CLK_UNHALTED\": \"40\" }, \"metrics\": [ { \"metric-value\": \"0.39604\", "
				    "\"metric-unit\": \"cycles/instruction CPI\", \"metric-group\": \"CPI\" }"));
	assert_null(strstr(buf, "\"event\""));
	free(buf);
}

/* The taking-turns line: every event's V/R, the enabled time, "(still open)"; malformed ones refused. */
static void test_parse_turns(void **state)
{
	struct region_total r;
	(void)state;
	assert_int_equal(parse("region a: b: calls 2, enabled 1000, events 300/500 0/0 7/1000 (still open)\n", &r), 1);
	assert_string_equal(r.name, "a: b");
	assert_int_equal(r.calls, 2);
	assert_int_equal(r.enabled, 1000);
	assert_int_equal(r.nev, 3);
	assert_int_equal(r.value[0], 300);
	assert_int_equal(r.running[0], 500);
	assert_int_equal(r.value[1] | r.running[1], 0);
	assert_int_equal(r.value[2], 7);
	assert_int_equal(r.running[2], 1000);
	assert_int_equal(r.open, 1);
	assert_int_equal(parse("region x: calls 1, enabled 5, events 1/2", &r), 1);
	assert_int_equal(r.open, 0);
	assert_int_equal(parse("region x: calls 1, enabled 5, events\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, enabled 5, events 1/\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, enabled 5, events 1/2 junk\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, enabled -5, events 1/2\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, events 1/2\n", &r), 0);
	assert_int_equal(parse("region x: calls 1, enabled 9, events 1/1 1/1 1/1 1/1 1/1 1/1 1/1 1/1 1/1\n", &r), 0);
}

/* A taking-turns region scaled by enabled / running, marked with its share as stat marks it; never on a counter: not counted. */
static void test_turns_are_scaled_and_marked(void **state)
{
	(void)state;
	const char *l = "region turns: calls 1, enabled 1000, events 300/500 0/0\n";
	assert_int_equal(regions_take_line(l, strlen(l), 1), 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct stat_format f = { .out = out, .table = out, .tsc_hz = 1000 };
	const char *names[] = { "CPU_CLK_UNHALTED", "INSTRUCTIONS_EXECUTED" };
	int on[2] = { 0, 1 };
	regions_print(&f, names, 2, on, NULL, "2 events take turns", NULL, 0, false);
	fclose(out);
	const char *t = strstr(buf, " Region 'turns': 1 call\n");
	assert_non_null(t);
	assert_non_null(strstr(t, "                 600      CPU_CLK_UNHALTED                 (50.00%)\n"));
	assert_non_null(strstr(t, "       <not counted>      INSTRUCTIONS_EXECUTED\n"));
	assert_null(strstr(t, "take turns"));
	free(buf);
	out = open_memstream(&buf, &len);
	f = (struct stat_format){ .out = out, .table = out, .sep = ",", .tsc_hz = 1000 };
	regions_print(&f, names, 2, on, NULL, "2 events take turns", NULL, 0, false);
	fclose(out);
	assert_non_null(strstr(buf, "turns,1,,calls\nturns,600,,CPU_CLK_UNHALTED,50.00\n"
				    "turns,<not counted>,,INSTRUCTIONS_EXECUTED,0.00\n"));
	free(buf);
}

/* A stretch of the memory stream's text: from the first `from` to the next `to` (or the end). */
static char *between(const char *buf, const char *from, const char *to)
{
	const char *a = strstr(buf, from), *b = a ? strstr(a + strlen(from), to) : NULL;

	return a ? strndup(a, b ? (size_t)(b - a) : strlen(a)) : strdup("");
}

/*
 * The calls' TSC ticks (", tsc D") as seconds at the card's rate, and with
 * -A a table per CPU that ran the region besides the CPUs' total, in the
 * table, -x and --json; --metric-only leaves the counts out of a region too.
 */
static void test_time_per_cpu_and_metric_only(void **state)
{
	struct region_total r;
	(void)state;
	assert_int_equal(parse("region w: calls 1, counter0 5, counter1 6, tsc 3000 (still open)\n", &r), 1);
	assert_int_equal(r.ticks, 3000);
	assert_int_equal(r.open, 1);
	assert_int_equal(parse("region w: calls 1, enabled 5, events 1/2, tsc 77\n", &r), 1);
	assert_int_equal(r.ticks, 77);
	assert_int_equal(parse("region w: calls 1, counter0 5, counter1 6, tsc x\n", &r), 0);
	assert_int_equal(parse("region w: calls 1, counter0 5, counter1 6, tsc 5 junk\n", &r), 0);
	const char *one = "region work: calls 2, counter0 100, counter1 40, tsc 3000\n";
	const char *two = "region work: calls 1, counter0 50, counter1 20, tsc 1000\n";
	assert_int_equal(regions_take_line(one, strlen(one), 1), 1);
	assert_int_equal(regions_take_line(two, strlen(two), 2), 1);
	const char *names[] = { "CPU_CLK_UNHALTED", "INSTRUCTIONS_EXECUTED" };
	const struct metric_group *g[] = { metric_group_find("CPI") };
	int on[2] = { 1, 0 };
	char *buf = NULL, *part;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct stat_format f = { .out = out, .table = out, .tsc_hz = 1000, .per_cpu = 1 };
	regions_print(&f, names, 2, on, NULL, NULL, g, 1, false);
	fclose(out);
	assert_non_null(strstr(buf, " Region 'work': 3 calls, 4.000000000 s\n"));
	part = between(buf, " Region 'work' on CPU 1: 2 calls, 3.000000000 s\n", " Region");
	assert_non_null(strstr(part, "                 100      INSTRUCTIONS_EXECUTED\n"));
	assert_non_null(strstr(part, "                 0.4      CPI "));
	free(part);
	part = between(buf, " Region 'work' on CPU 2: 1 call, 1.000000000 s\n", " Region");
	assert_non_null(strstr(part, "                  50      INSTRUCTIONS_EXECUTED\n"));
	assert_null(strstr(part, "100"));
	free(part);
	free(buf);
	out = open_memstream(&buf, &len);
	f = (struct stat_format){ .out = out, .table = out, .sep = ",", .tsc_hz = 1000, .per_cpu = 1 };
	regions_print(&f, names, 2, on, NULL, NULL, NULL, 0, false);
	fclose(out);
	assert_non_null(strstr(buf, "\nwork,3,,calls\nwork,4.000000000,s,time\nwork,150,,INSTRUCTIONS_EXECUTED\n"));
	assert_non_null(strstr(buf, "\nCPU2,work,1,,calls\nCPU2,work,1.000000000,s,time\nCPU2,work,50,,INSTRUCTIONS_EXECUTED\n"
				    "CPU2,work,20,,CPU_CLK_UNHALTED\n"));
	free(buf);
	out = open_memstream(&buf, &len);
	f = (struct stat_format){ .out = out, .table = out, .json = 1, .tsc_hz = 1000, .per_cpu = 1 };
	regions_print(&f, names, 2, on, NULL, NULL, g, 1, false);
	fclose(out);
	assert_non_null(strstr(buf, "{ \"region\": \"work\", \"cpu\": \"1\", \"calls\": 2, \"seconds\": 3.000000000, "));
	free(buf);
	out = open_memstream(&buf, &len);
	f = (struct stat_format){ .out = out, .table = out, .tsc_hz = 1000, .metric_only = 1 };
	regions_print(&f, names, 2, on, NULL, NULL, g, 1, false);
	fclose(out);
	part = between(buf, " Region 'work': 3 calls, 4.000000000 s\n", " Region");
	assert_null(strstr(part, "INSTRUCTIONS_EXECUTED"));
	assert_non_null(strstr(part, "cycles/instruction CPI"));
	assert_non_null(strstr(part, "0.4"));
	assert_null(strstr(buf, "on CPU"));
	free(part);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_counts),
		cmocka_unit_test(test_parse_refuses_other_lines),
		cmocka_unit_test(test_table_adds_ranks_and_names_events),
		cmocka_unit_test(test_json_and_mean_of_runs),
		cmocka_unit_test(test_parse_turns),
		cmocka_unit_test(test_turns_are_scaled_and_marked),
		cmocka_unit_test(test_time_per_cpu_and_metric_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
