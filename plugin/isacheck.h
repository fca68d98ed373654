/*
 * The plugin's report of instructions a KNC core lacks that QEMU runs
 * anyway (plugin/decode.c knc_missing), for the strict CPU (scripts/qemu.sh
 * CPU=knc passes knc=pc or knc=on). Each instruction is flagged when its
 * block is translated; a flagged one gets a callback that counts its
 * executions and, the first time, writes one line to stderr and to the
 * knc_log file: what the system tests read (tests/system/conftest.py).
 * Code that is not pmuos's (knc_ignore) is not reported.
 */
#ifndef PLUGIN_ISACHECK_H
#define PLUGIN_ISACHECK_H

#include <stdbool.h>
#include <stdint.h>

enum knc_mode {
	KNC_OFF, /* no report (QEMU's full CPU) */
	KNC_PC,  /* all but port I/O: a PC's devices (UART, PIT, ACPI) are I/O ports, a card's are not */
	KNC_ON,  /* all of them (platform=knc) */
};
extern enum knc_mode knc_mode;

/* One instruction (address and mnemonic) found in translated code; CPL from its address (is_user). */
struct knc_site {
	uint64_t vaddr;
	const char *mnemonic;
	uint64_t count;   /* executions */
	bool user;
};
/*
 * Sites kept, each with its own line and count: pmuos's code has none, a
 * PC's firmware a few dozen. A guest that keeps making new code with such
 * instructions (rewriting its own) would otherwise grow them, and QEMU's
 * memory, without bound; past the ceiling every new site shares one, whose
 * line says so. So sites hold KNC_SITES_MAX + 1 entries (128 KiB) at most,
 * whatever the guest does.
 */
#define KNC_SITES_MAX 4096

/*
 * Code at [lo, hi) is not reported: code that is not pmuos's (a PC's
 * firmware, the simulated card's bootstrap stand-in; scripts/qemu.sh says
 * which). range is "LO-HI" (C numbers); false if malformed or if there are
 * KNC_IGNORE_MAX already.
 */
#define KNC_IGNORE_MAX 8
bool knc_ignore(const char *range);
/* Whether an instruction decoded so (plugin/decode.h) at vaddr is reported in this mode. */
bool knc_reported(const char *mnemonic, bool port_io, uint64_t vaddr);
/* The site of the instruction at vaddr (made the first time; past KNC_SITES_MAX, the shared one): never NULL. */
struct knc_site *knc_site(uint64_t vaddr, const char *mnemonic, bool user);
/* Opens (truncates) the log file; false, said why, if it cannot. */
bool knc_open_log(const char *path);
/* QEMU's exec callback of a flagged instruction: udata is its struct knc_site. */
void on_knc(unsigned int vcpu, void *udata);
/* At QEMU's exit: one line with the totals, to stderr and the log. */
void knc_summary(void);

#endif
