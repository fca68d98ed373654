/* pmuctl events (and list): the KNC events libpfm4 knows and perf's generic names, and which the card counts. */
#define _GNU_SOURCE
#include <getopt.h>
#include <json-c/json.h>
#include <perfmon/pfmlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/pfm.h"
#include "host/pmuctl.h"
#include "pmu/knc/regs.h"

enum { OPT_JSON = 256 };

const struct cli_opt events_opts[] = {
	{ "json", OPT_JSON, NULL, "one JSON object a line: name, code (EvtSel's unit mask and event), description, "
				  "for perf's generic names the KNC event they stand for, and with a card whether it "
				  "counts the event" },
	{ 0 },
};

#define EVENTS_MAX 1024 /* rows: libpfm4's knc events (59) or knl events and unit masks (about 250), the generic names, with room */

struct event_row {
	const char *name, *desc, *alias_of;
	uint32_t code;
	int counted; /* 1 counted by the card, 0 not, -1 no card to ask */
};

/* --json: an event a line. */
static void event_json(const struct event_row *e)
{
	struct json_object *o = json_object_new_object();
	char hex[16];

	snprintf(hex, sizeof(hex), "0x%04x", e->code);
	json_object_object_add(o, "name", json_object_new_string(e->name));
	json_object_object_add(o, "code", json_object_new_string(hex));
	json_object_object_add(o, "description", json_object_new_string(e->desc ? e->desc : ""));
	if (e->alias_of)
		json_object_object_add(o, "alias-of", json_object_new_string(e->alias_of));
	if (e->counted >= 0)
		json_object_object_add(o, "counted", json_object_new_boolean(e->counted));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/*
 * Asks card `c` which rows' events its PMU backend counts (EVENTS_COUNTED,
 * MBOX_COUNTED_MAX at a time), and closes it; without a card (NULL: none
 * named, none running) the rows say nothing, and stderr says why after
 * card_open's reason.
 */
static void ask_counted(struct card *c, struct event_row *rows, int n)
{
	if (!c) {
		fprintf(stderr, "pmuctl events: no card to ask, so no column saying which events it counts "
			"(--card NAME)\n");
		return;
	}
	for (int i = 0; i < n; i += MBOX_COUNTED_MAX) {
		uint32_t sel[MBOX_COUNTED_MAX], k = n - i < MBOX_COUNTED_MAX ? n - i : MBOX_COUNTED_MAX;
		uint64_t bits;
		for (uint32_t j = 0; j < k; j++)
			sel[j] = rows[i + j].code | EVTSEL_USR | EVTSEL_OS;
		int st = call(c, MBOX_OP_EVENTS_COUNTED, NULL, sel, k * sizeof(sel[0]), &resp);
		if (st != MBOX_OK)
			die_status(c, "events", st);
		memcpy(&bits, resp.payload, sizeof(bits));
		for (uint32_t j = 0; j < k; j++)
			rows[i + j].counted = bits >> j & 1;
	}
	card_close(c);
}

/*
 * Event i's unit masks, a row each after its own ("EVENT:UMASK", its code
 * umask << 8 | event), as libpfm4 lists them (Knights Landing's events have
 * them; KNC's codes hold theirs). Returns the rows now in use.
 */
static int umask_rows(int i, const pfm_event_info_t *e, const char *pattern, struct event_row *rows, int n)
{
	for (int a = 0; a < e->nattrs && n < EVENTS_MAX; a++) {
		pfm_event_attr_info_t at = { .size = sizeof(at) };
		char *name;
		if (pfm_get_event_attr_info(i, a, PFM_OS_NONE, &at) != PFM_SUCCESS || at.type != PFM_ATTR_UMASK)
			continue;
		if (asprintf(&name, "%s:%s", e->name, at.name) < 0)
			break;
		if (pattern && !strcasestr(name, pattern)) {
			free(name);
			continue;
		}
		rows[n++] = (struct event_row){ name, at.desc, NULL, EVTSEL_CODE((uint32_t)(at.code << 8) | (uint32_t)e->code) };
	}
	return n;
}

int cmd_events(struct card *c, int argc, char **argv)
{
	static struct event_row rows[EVENTS_MAX];
	const char *pattern = NULL;
	int json = 0, n = 0;
	size_t gi = 0;

	(void)c;
	while (cli_next(argc, argv) != -1)
		json = 1;
	if (optind < argc)
		pattern = argv[optind++];
	if (optind < argc)
		return usage_arg("one pattern at a time; unexpected argument", argv[optind]);
	/* The card first, if there is one: its PMU's names (libpfm4's knc, knl, ...) are the ones listed. */
	struct card card, *have = card_open(&card, card_name) == 0 ? &card : NULL;
	pfm_setup(have ? have->seen.pmu : NULL);
	for (int i = pfm_first_event(); i != -1 && n < EVENTS_MAX; i = pfm_get_event_next(i)) {
		pfm_event_info_t e = { .size = sizeof(e) };
		if (pfm_get_event_info(i, PFM_OS_NONE, &e) != PFM_SUCCESS)
			continue;
		if (!pattern || strcasestr(e.name, pattern))
			rows[n++] = (struct event_row){ e.name, e.desc, NULL, (uint32_t)e.code };
		n = umask_rows(i, &e, pattern, rows, n);
	}
	for (const struct pfm_generic *g; n < EVENTS_MAX && (g = pfm_generic_at(gi)); gi++)
		if (!pattern || strcasestr(g->alias, pattern))
			rows[n++] = (struct event_row){ g->alias, "perf's generic event", g->event, EVTSEL_CODE(encode(g->event)) };
	if (pattern && !n) {
		const char *best[3];
		pfm_closest(pattern, best);
		fprintf(stderr, "pmuctl: events: no event name holds '%s' (matched ignoring case); closest: %s, %s, %s\n",
			pattern, best[0], best[1], best[2]);
		if (have)
			card_close(have);
		return 1;
	}
	for (int i = 0; i < n; i++)
		rows[i].counted = -1;
	if (n)
		ask_counted(have, rows, n);
	else if (have)
		card_close(have);
	for (int i = 0; i < n; i++) {
		const struct event_row *e = &rows[i];
		if (json)
			event_json(e);
		else
			printf("%-34s 0x%04x  %s%s%s%s\n", e->name, e->code,
			       e->counted < 0 ? "" : e->counted ? "counted      " : "not counted  ", e->desc ? e->desc : "",
			       e->alias_of ? ": " : "", e->alias_of ? e->alias_of : "");
	}
	return 0;
}

