/*
 * host/metric_fmt.c: `pmuctl stat -M`'s groups, their events, the metric values
 * (checked against numbers worked out by hand in the comments), "n/a" where
 * a metric has no value, the formulas as text and the three output formats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "host/metric_fmt.h"
#include "pmu/plugin_events.h"

/* What the card counts: the plugin's events and the model's. */
static const char *const counted[] = { PLUGIN_EVENTS(PEV_NAME) MODEL_EVENTS(PEV_NAME) };

static int is_counted(const char *ev)
{
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++)
		if (strcmp(counted[i], ev) == 0)
			return 1;
	return 0;
}

static const struct metric *metric(const char *group, const char *name, const char *unit)
{
	const struct metric_group *g = metric_group_find(group);
	assert_non_null(g);
	for_each_metric(m, g)
		if (strcmp(m->name, name) == 0 && strcmp(m->unit, unit) == 0)
			return m;
	fail_msg("no metric %s (%s) in %s", name, unit, group);
	return NULL;
}

static double value(const struct metric *m, const struct metric_count *c, int n, uint64_t tsc_hz)
{
	double v = -12345;
	assert_int_equal(metric_value(m, c, n, tsc_hz, &v), 0);
	return v;
}

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define NEAR(a, b) assert_true(fabs((a) - (double)(b)) <= 1e-12 * fabs((double)(b)))

/* ------------------------------------------------------------ groups and events */

static void test_find_is_case_insensitive_and_names_every_group(void **state)
{
	(void)state;
	char names[128];

	assert_ptr_equal(metric_group_find("l1"), metric_group_find("L1"));
	assert_string_equal(metric_group_find("cpi")->name, "CPI");
	assert_null(metric_group_find("L3"));
	assert_null(metric_group_find(""));
	metric_group_names(names, sizeof(names));
	assert_string_equal(names, "CPI, L1, L2, TLB, BRANCH, VPU, MEM");
	/* Truncated, still a string. */
	metric_group_names(names, 6);
	assert_string_equal(names, "CPI, ");
}

/* Every group needs at most 8 events (pmuctl's limit), each one the card counts. */
static void test_every_event_is_counted_and_every_group_fits(void **state)
{
	(void)state;
	for (int i = 0; i < METRIC_NGROUPS; i++) {
		const char *names[8];
		int n = metric_group_events(&metric_groups[i], names, 0, 8);
		assert_true(n >= 2);
		for (int k = 0; k < n; k++)
			if (!is_counted(names[k]))
				fail_msg("group %s: %s is not an event the card counts", metric_groups[i].name, names[k]);
		/* Each metric has a value once its events are there. */
		struct metric_count c[8];
		for (int k = 0; k < n; k++)
			c[k] = (struct metric_count){ names[k], 1000 + k, 1 };
		for_each_metric(m, &metric_groups[i]) {
			double v;
			assert_int_equal(metric_value(m, c, n, 1000000000, &v), 0);
		}
	}
}

/*
 * A Knights Landing card's groups: found by name for "knl" only, each
 * naming only events that card counts (the model's INSTRUCTION_RETIRED and
 * UNHALTED_CORE_CYCLES, the plugin's KNL_PLUGIN_EVENTS), each metric with
 * a value once its events are there.
 */
static void test_knl_groups_name_the_events_a_knl_card_counts(void **state)
{
	(void)state;
	static const char *const knl[] = {
#define KNL_NAME(name, pev, how) name,
		KNL_PLUGIN_EVENTS(KNL_NAME)
#undef KNL_NAME
		"INSTRUCTION_RETIRED", "UNHALTED_CORE_CYCLES",
	};
	char names[128];
	int ng;
	const struct metric_group *g = metric_groups_of("knl", &ng);

	assert_int_equal(ng, METRIC_NGROUPS_KNL);
	metric_group_names_of("knl", names, sizeof(names));
	assert_string_equal(names, "CPI, L1, DATA, BRANCH");
	assert_ptr_equal(metric_group_find_of("knl", "data"), &metric_groups_knl[2]);
	assert_null(metric_group_find("DATA")); /* KNC has none of that name */
	assert_ptr_equal(metric_group_find_of("ix86arch", "L2"), metric_group_find("L2"));
	for (int i = 0; i < ng; i++) {
		const char *ev[8];
		int n = metric_group_events(&g[i], ev, 0, 8);
		struct metric_count c[8];
		assert_true(n >= 2);
		for (int k = 0; k < n; k++) {
			size_t j = 0;
			while (j < sizeof(knl) / sizeof(knl[0]) && strcmp(knl[j], ev[k]))
				j++;
			if (j == sizeof(knl) / sizeof(knl[0]))
				fail_msg("KNL group %s: %s is not an event a KNL card counts", g[i].name, ev[k]);
			c[k] = (struct metric_count){ ev[k], 1000 + k, 1 };
		}
		for_each_metric(m, &g[i]) {
			double v;
			assert_int_equal(metric_value(m, c, n, 1000000000, &v), 0);
		}
	}
}

static void test_events_in_order_of_first_use_without_duplicates(void **state)
{
	(void)state;
	const char *names[8] = { "DATA_READ", "INSTRUCTIONS_EXECUTED:u" };

	/* L1: its ratios' pairs side by side; DATA_READ was there already, INSTRUCTIONS_EXECUTED:u is another event. */
	assert_int_equal(metric_group_events(metric_group_find("L1"), names, 2, 8), 7);
	assert_string_equal(names[2], "DATA_READ_OR_WRITE");
	assert_string_equal(names[3], "DATA_READ_MISS_OR_WRITE_MISS");
	assert_string_equal(names[4], "DATA_READ_MISS");
	assert_string_equal(names[5], "DATA_WRITE_MISS");
	assert_string_equal(names[6], "DATA_WRITE");
	/* CPI's two would make 9. */
	assert_int_equal(metric_group_events(metric_group_find("CPI"), names, 7, 8), -1);
	assert_int_equal(metric_group_events(metric_group_find("BRANCH"), names, 0, 8), 3);
	assert_string_equal(names[0], "BRANCHES_MISPREDICTED");
	assert_string_equal(names[1], "BRANCHES");
	assert_string_equal(names[2], "INSTRUCTIONS_EXECUTED");
	assert_int_equal(metric_group_events(metric_group_find("BRANCH"), names, 3, 3), 3);
}

/* ------------------------------------------------------------ values */

static void test_values_by_hand(void **state)
{
	(void)state;
	const struct metric_count c[] = {
		{ "CPU_CLK_UNHALTED", 3000000, 1 }, { "INSTRUCTIONS_EXECUTED", 1200000, 1 },
		{ "DATA_READ_OR_WRITE", 1000, 1 }, { "DATA_READ_MISS_OR_WRITE_MISS", 37, 1 },
		{ "L2_READ_HIT_E", 10, 1 }, { "L2_READ_HIT_M", 20, 1 }, { "L2_READ_HIT_S", 30, 1 },
		{ "L2_READ_MISS", 40, 1 }, { "VPU_ELEMENTS_ACTIVE", 8000, 1 }, { "VPU_INSTRUCTIONS_EXECUTED", 1000, 1 },
		{ "L2_DATA_READ_MISS_MEM_FILL", 1000, 1 }, { "L2_DATA_WRITE_MISS_MEM_FILL", 500, 1 },
		{ "DATA_CACHE_LINES_WRITTEN_BACK", 63, 1 },
	};
	NEAR(value(metric("CPI", "CPI", "cycles/instruction"), c, N(c), 0), 2.5);
	NEAR(value(metric("CPI", "IPC", "instructions/cycle"), c, N(c), 0), 0.4);
	/* (1000 - 37) / 1000 */
	NEAR(value(metric("L1", "L1 hit rate", "%"), c, N(c), 0), 96.3);
	/* 60 of 100 */
	NEAR(value(metric("L2", "L2 hit rate", "%"), c, N(c), 0), 60);
	/* 40 misses in 1.2 M instructions */
	NEAR(value(metric("L2", "L2 misses per 1000 instructions", "misses"), c, N(c), 0), 40.0 / 1200);
	NEAR(value(metric("VPU", "vectorization intensity", "elements/instruction"), c, N(c), 0), 8);
	NEAR(value(metric("VPU", "L1 compute to data access ratio", "elements/access"), c, N(c), 0), 8);
	NEAR(value(metric("VPU", "L2 compute to data access ratio", "elements/miss"), c, N(c), 0), 8000.0 / 37);
	/* 1500 lines of 64 bytes in 3 M cycles; at 1.5 GHz those are 2 ms: 96,000 bytes / 2 ms = 48 MB/s */
	NEAR(value(metric("MEM", "memory read bandwidth", "bytes/cycle"), c, N(c), 0), 0.032);
	NEAR(value(metric("MEM", "memory read bandwidth", "MB/s"), c, N(c), 1500000000), 48);
	/* (37 + 63) lines: 6,400 bytes in 2 ms */
	NEAR(value(metric("MEM", "L1-L2 bandwidth", "MB/s"), c, N(c), 1500000000), 3.2);
}

static void test_not_available(void **state)
{
	(void)state;
	struct metric_count c[] = {
		{ "CPU_CLK_UNHALTED", 3000, 1 }, { "INSTRUCTIONS_EXECUTED", 0, 1 },
		{ "L2_DATA_READ_MISS_MEM_FILL", 5, 1 }, { "L2_DATA_WRITE_MISS_MEM_FILL", 5, 0 },
	};
	double v = 7;

	/* A zero denominator. */
	assert_int_equal(metric_value(metric("CPI", "CPI", "cycles/instruction"), c, N(c), 0, &v), -1);
	/* Zero on top is a value. */
	assert_int_equal(metric_value(metric("CPI", "IPC", "instructions/cycle"), c, N(c), 0, &v), 0);
	assert_true(v == 0);
	/* An event not counted (<not supported> or <not counted>), or not there at all. */
	assert_int_equal(metric_value(metric("MEM", "memory read bandwidth", "bytes/cycle"), c, N(c), 0, &v), -1);
	c[3].ok = 1;
	NEAR(value(metric("MEM", "memory read bandwidth", "bytes/cycle"), c, N(c), 0), 640.0 / 3000);
	assert_int_equal(metric_value(metric("L1", "L1 hit rate", "%"), c, N(c), 0, &v), -1);
	/* Per second without the TSC's frequency. */
	assert_int_equal(metric_value(metric("MEM", "memory read bandwidth", "MB/s"), c, N(c), 0, &v), -1);
}

/* ------------------------------------------------------------ formulas */

static void test_formulas(void **state)
{
	(void)state;
	char f[256];

	metric_formula(metric("CPI", "CPI", "cycles/instruction"), f, sizeof(f));
	assert_string_equal(f, "CPU_CLK_UNHALTED / INSTRUCTIONS_EXECUTED");
	metric_formula(metric("L1", "L1 hit rate", "%"), f, sizeof(f));
	assert_string_equal(f, "100 * (DATA_READ_OR_WRITE - DATA_READ_MISS_OR_WRITE_MISS) / DATA_READ_OR_WRITE");
	metric_formula(metric("MEM", "memory read bandwidth", "MB/s"), f, sizeof(f));
	assert_string_equal(f, "64 * (L2_DATA_READ_MISS_MEM_FILL + L2_DATA_WRITE_MISS_MEM_FILL) / "
			       "(CPU_CLK_UNHALTED / TSC_Hz) / 1000000");
	/* Cut short, still a string. */
	metric_formula(metric("L1", "L1 hit rate", "%"), f, 12);
	assert_string_equal(f, "100 * (DATA");
}

/* ------------------------------------------------------------ output */

struct printed {
	char *out, *table;
	size_t out_len, table_len;
};

/* Prints the CPI and L2 groups' metrics over `c` in one format; checks both streams. */
static void print(const char *sep, int json, double t, const struct metric_count *c, int n, const char *out,
		  const char *table)
{
	struct printed p;
	struct stat_format f = { .sep = sep, .json = json, .tsc_hz = 1000000000 };
	const struct metric_group *g[] = { metric_group_find("CPI"), metric_group_find("L2") };

	f.out = open_memstream(&p.out, &p.out_len);
	f.table = open_memstream(&p.table, &p.table_len);
	metrics_print(&f, g, 2, c, n, t);
	fclose(f.out);
	fclose(f.table);
	assert_string_equal(p.out, out);
	assert_string_equal(p.table, table);
	free(p.out);
	free(p.table);
}

/* CPI 1.5, IPC 0.666667 (6 digits), L2 hit rate n/a (L2_READ_HIT_S not counted), 1000 * 5 / 2e6 */
static const struct metric_count shown[] = {
	{ "INSTRUCTIONS_EXECUTED", 2000000, 1 }, { "CPU_CLK_UNHALTED", 3000000, 1 },
	{ "L2_READ_HIT_E", 1, 1 }, { "L2_READ_HIT_M", 2, 1 }, { "L2_READ_HIT_S", 3, 0 }, { "L2_READ_MISS", 5, 1 },
};

static void test_table(void **state)
{
	(void)state;
	print(NULL, 0, -1, shown, N(shown), "",
	      "\n CPI: cycles per instruction\n\n"
	      "                 1.5      CPI                                cycles/instruction\n"
	      "            0.666667      IPC                                instructions/cycle\n"
	      "\n L2: L2 hits and misses of L1 misses\n\n"
	      "                 n/a      L2 hit rate                        %\n"
	      "              0.0025      L2 misses per 1000 instructions    misses\n");
}

static void test_table_interval_and_large_values(void **state)
{
	(void)state;
	const struct metric_count c[] = {
		{ "INSTRUCTIONS_EXECUTED", 1, 1 }, { "CPU_CLK_UNHALTED", 12345678, 1 },
	};
	/* No headings; whole numbers from a million; the group L2's events are not there at all. */
	print(NULL, 0, 2.5, c, N(c), "",
	      "     2.500000000             12345678      CPI                                cycles/instruction\n"
	      "     2.500000000              8.1e-08      IPC                                instructions/cycle\n"
	      "     2.500000000                  n/a      L2 hit rate                        %\n"
	      "     2.500000000                  n/a      L2 misses per 1000 instructions    misses\n");
}

static void test_csv(void **state)
{
	(void)state;
	/* perf's columns, the count's five empty: metric-value, metric-unit ("UNIT NAME") */
	print(";", 0, -1, shown, N(shown),
	      ";;;;;1.5;cycles/instruction CPI\n"
	      ";;;;;0.666667;instructions/cycle IPC\n"
	      ";;;;;n/a;% L2 hit rate\n"
	      ";;;;;0.0025;misses L2 misses per 1000 instructions\n",
	      "");
	print(",", 0, 0.5, shown, 2,
	      "0.500000000,,,,,,1.5,cycles/instruction CPI\n"
	      "0.500000000,,,,,,0.666667,instructions/cycle IPC\n"
	      "0.500000000,,,,,,n/a,% L2 hit rate\n"
	      "0.500000000,,,,,,n/a,misses L2 misses per 1000 instructions\n",
	      "");
}

static void test_json(void **state)
{
	(void)state;
	print(NULL, 1, -1, shown, 2,
	      "{ \"metric-value\": \"1.5\", \"metric-unit\": \"cycles/instruction CPI\", \"metric-group\": \"CPI\" }\n"
	      "{ \"metric-value\": \"0.666667\", \"metric-unit\": \"instructions/cycle IPC\", \"metric-group\": \"CPI\" }\n"
	      "{ \"metric-value\": \"n/a\", \"metric-unit\": \"% L2 hit rate\", \"metric-group\": \"L2\" }\n"
	      "{ \"metric-value\": \"n/a\", \"metric-unit\": \"misses L2 misses per 1000 instructions\", "
	      "\"metric-group\": \"L2\" }\n",
	      "");
	print(NULL, 1, 1, shown, 1,
	      "{ \"interval\": 1.000000000, \"metric-value\": \"n/a\", \"metric-unit\": \"cycles/instruction CPI\", "
	      "\"metric-group\": \"CPI\" }\n"
	      "{ \"interval\": 1.000000000, \"metric-value\": \"n/a\", \"metric-unit\": \"instructions/cycle IPC\", "
	      "\"metric-group\": \"CPI\" }\n"
	      "{ \"interval\": 1.000000000, \"metric-value\": \"n/a\", \"metric-unit\": \"% L2 hit rate\", "
	      "\"metric-group\": \"L2\" }\n"
	      "{ \"interval\": 1.000000000, \"metric-value\": \"n/a\", \"metric-unit\": \"misses L2 misses per 1000 "
	      "instructions\", \"metric-group\": \"L2\" }\n",
	      "");
}

/* --metric-only: the metrics in columns under their "UNIT NAME" headings. */
static void test_metric_only_columns(void **state)
{
	(void)state;
	const struct metric_group *g[] = { metric_group_find("CPI") };
	for (int form = 0; form < 3; form++) {
		struct printed_cols { char *out, *table; size_t ol, tl; } p;
		struct stat_format f = { .sep = form == 1 ? "," : NULL, .json = form == 2, .tsc_hz = 1000000000,
					 .metric_only = 1 };
		f.out = open_memstream(&p.out, &p.ol);
		f.table = open_memstream(&p.table, &p.tl);
		metrics_print_columns_head(&f, g, 1);
		metrics_print_columns(&f, g, 1, shown, N(shown), -1);
		fclose(f.out);
		fclose(f.table);
		static const char *const out[] = { "", "cycles/instruction CPI,instructions/cycle IPC\n1.5,0.666667\n",
			"{ \"cycles/instruction CPI\": \"1.5\", \"instructions/cycle IPC\": \"0.666667\" }\n" };
		assert_string_equal(p.out, out[form]);
		assert_string_equal(p.table, form ? "" : "cycles/instruction CPI  instructions/cycle IPC\n"
							 "                   1.5                0.666667\n");
		free(p.out);
		free(p.table);
	}
}

static void test_list_shows_every_metric_with_its_formula(void **state)
{
	(void)state;
	char *s;
	size_t len;
	FILE *f = open_memstream(&s, &len);

	metrics_list(f);
	fclose(f);
	assert_non_null(strstr(s, "CPI: cycles per instruction\n"
				  "  CPI                                cycles/instruction           = "
				  "CPU_CLK_UNHALTED / INSTRUCTIONS_EXECUTED\n"));
	assert_non_null(strstr(s, "  L1 TLB misses per L2 TLB miss      misses                       = "
				  "DATA_PAGE_WALK / LONG_DATA_PAGE_WALK\n"));
	int lines = 0;
	for (char *p = s; *p; p++)
		lines += *p == '\n';
	int want = METRIC_NGROUPS;
	for (int i = 0; i < METRIC_NGROUPS; i++)
		for_each_metric(m, &metric_groups[i])
			want++;
	assert_int_equal(lines, want);
	free(s);
}

/*
 * The card's values (pmu metrics: thousandths, no floating point) agree with
 * pmuctl's (double) to the rounding: every metric over pseudo-random counts,
 * some not counted, some zero, as large as 2^44; n/a on the card only where
 * the thousandths (times per_second, as the card divides) would not fit in
 * 64 bits.
 */
static void test_milli_matches_floating_point(void **state)
{
	(void)state;
	uint64_t x = 0x2545f4914f6cdd1dULL;
	int compared = 0, na = 0;

	for (int iter = 0; iter < 2000; iter++) {
		struct metric_count c[sizeof(counted) / sizeof(counted[0])];
		for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			c[i] = (struct metric_count){ counted[i], (x >> 20) % (1ULL << (x % 45)), x % 17 != 0 };
		}
		uint64_t hz = iter % 5 ? 1000000000ULL + iter : 0;
		for (int g = 0; g < METRIC_NGROUPS; g++)
			for_each_metric(m, &metric_groups[g]) {
				double v;
				int64_t milli;
				int a = metric_value(m, c, N(c), hz, &v), b = metric_value_milli(m, c, N(c), hz, &milli);
				if (a == 0 && b) /* thousandths (times per_second, on the way) past 64 bits */
					assert_true(fabs(v) * 1000 > (double)INT64_MAX * 0.999 ||
						    fabs(v) * 1000 * (m->per_second ? m->per_second : 1) > 0x1p64 * 0.999);
				else
					assert_int_equal(a, b);
				if (a || b) {
					na++;
					continue;
				}
				assert_true(fabs(milli / 1000.0 - v) <= 0.0005 + 1e-12 * fabs(v));
				compared++;
			}
	}
	assert_true(compared > 10000 && na > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_is_case_insensitive_and_names_every_group),
		cmocka_unit_test(test_every_event_is_counted_and_every_group_fits),
		cmocka_unit_test(test_knl_groups_name_the_events_a_knl_card_counts),
		cmocka_unit_test(test_events_in_order_of_first_use_without_duplicates),
		cmocka_unit_test(test_values_by_hand),
		cmocka_unit_test(test_not_available),
		cmocka_unit_test(test_formulas),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_interval_and_large_values),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_metric_only_columns),
		cmocka_unit_test(test_list_shows_every_metric_with_its_formula),
		cmocka_unit_test(test_milli_matches_floating_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
