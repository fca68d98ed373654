/*
 * The man page pmuctl(1) and the bash completion, both from the command
 * table they are given (host/pmuctl.c's); see host/cli.h. The build runs
 * `pmuctl help --man` and `pmuctl help --bash-completion` (host/host.mk).
 */
#include "host/cli.h"

/* Text for troff: a backslash doubled, a leading '.' or '\'' escaped, '-' as \-. */
static void roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

static void man_opts(FILE *f, const struct cli_opt *o)
{
	for (; o->name; o++) {
		fputs(".TP\n", f);
		if (o->key < 256)
			fprintf(f, "\\fB\\-%c\\fR, ", o->key);
		fputs("\\fB\\-\\-", f);
		roff(f, o->name);
		fputs("\\fR", f);
		if (o->arg) {
			fputs("=\\fI", f);
			roff(f, o->arg);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		roff(f, o->help);
		if (o->hi)
			fprintf(f, " (%llu to %llu)", (unsigned long long)o->lo, (unsigned long long)o->hi);
		fputs(".\n", f);
	}
}

void cli_man(FILE *f, const struct cli_cmd *cmds, const struct cli_opt *globals, const char *version)
{
	fprintf(f, ".TH PMUCTL 1 \"\" \"pmuos %s\" \"pmuos\"\n.SH NAME\npmuctl \\- drive a pmuos card "
		   "(Intel Xeon Phi x100 PMU instrument) from the host\n.SH SYNOPSIS\n"
		   ".B pmuctl\n[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n.SH DESCRIPTION\n"
		   "pmuctl reaches a card running pmuos through its shared-memory mailbox: it counts and samples "
		   "the KNC core PMU's events while a program runs on the card, with perf's command line and "
		   "output formats. Event names are libpfm4's knc PMU's.\n.SH OPTIONS\n", version);
	man_opts(f, globals);
	fputs(".SH COMMANDS\n", f);
	for (const struct cli_cmd *c = cmds; c->name; c++) {
		fprintf(f, ".SS \"%s", c->name);
		if (c->opts[0].name)
			fputs(" [OPTIONS]", f);
		if (*c->args) {
			fputc(' ', f);
			roff(f, c->args);
		}
		fputs("\"\n", f);
		roff(f, c->help);
		fputs(c->card == CLI_NO_CARD ? " (no card needed).\n" : ".\n", f);
		if (c->more) {
			fputs(".PP\n", f);
			roff(f, c->more);
			fputc('\n', f);
		}
		man_opts(f, c->opts);
	}
	fputs(".SH ENVIRONMENT\n.TP\n.B PMUOS_CARD\nthe card when there is no \\fB\\-\\-card\\fR.\n"
	      ".TP\n.B PMUOS_SYSFS\nwhere sysfs is for \\fB\\-\\-card pci:\\fR\\fIBDF\\fR (default /sys): a directory "
	      "laid out as sysfs lays out the device.\n"
	      ".SH EXIT STATUS\n0 on success; 1 when the card or a file failed (the cause on stderr); 2 for bad "
	      "arguments; the program's own status for \\fBrun\\fR, \\fBstat\\fR and \\fBrecord\\fR, "
	      "128 + N when signal N ended pmuctl.\n"
	      ".SH FILES\n.TP\n.I /dev/shm/pmuos\\-NAME\nthe mailbox of card NAME.\n.TP\n.I pmuos.data\n"
	      "the recording of \\fBrecord\\fR and \\fBreport\\fR.\n", f);
}

static void words(FILE *f, const struct cli_opt *o)
{
	for (; o->name; o++) {
		if (o->key < 256)
			fprintf(f, " -%c", o->key);
		fprintf(f, " --%s", o->name);
	}
}

void cli_bash_completion(FILE *f, const struct cli_cmd *cmds, const struct cli_opt *globals)
{
	fputs("# bash completion for pmuctl, made by `pmuctl help --bash-completion` from its command table.\n"
	      "_pmuctl()\n{\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tcase ${COMP_WORDS[i]} in --card) ((i++));; -*) ;; *) cmd=${COMP_WORDS[i]}; break;; esac\n"
	      "\tdone\n\tlocal words\n\tcase $cmd in\n\t'')\n\t\tif [[ $cur == -* ]]; then words='", f);
	words(f, globals);
	fputs("'; else words='", f);
	for (const struct cli_cmd *c = cmds; c->name; c++)
		fprintf(f, " %s", c->name);
	fputs("'; fi;;\n", f);
	for (const struct cli_cmd *c = cmds; c->name; c++) {
		fprintf(f, "\t%s) words='", c->name);
		words(f, c->opts);
		fputs(" -h --help';;\n", f);
	}
	fputs("\tesac\n\tif [[ $cur == -* || -z $cmd ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
	      "\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\ncomplete -F _pmuctl pmuctl\n", f);
}
