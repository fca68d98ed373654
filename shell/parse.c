/* Splitting a shell line and finding its command; see shell/shell.h. Pure: fuzzed on the host. */
#include "shell/shell.h"
#include "lib/lib.h"

const struct shell_cmd *shell_find(const struct shell_cmd *first, const struct shell_cmd *end, const char *name)
{
	for (const struct shell_cmd *c = first; c < end; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

enum shell_parse_result shell_parse(char *line, const struct shell_cmd *first, const struct shell_cmd *end,
				    char *argv[SHELL_MAX_ARGS + 1], int *argc, const struct shell_cmd **cmd)
{
	int n = 0;

	for (char *p = line; *p;) {
		while (*p == ' ' || *p == '\t')
			*p++ = 0;
		if (!*p)
			break;
		if (n == SHELL_MAX_ARGS + 1) {
			*argc = n;
			return SHELL_TOO_MANY_WORDS;
		}
		argv[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	*argc = n;
	if (n == 0)
		return SHELL_EMPTY;
	const struct shell_cmd *c = shell_find(first, end, argv[0]);
	if (!c)
		return SHELL_UNKNOWN;
	*cmd = c;
	if (n - 1 < c->min_args)
		return SHELL_TOO_FEW_ARGS;
	if (n - 1 > c->max_args)
		return SHELL_TOO_MANY_ARGS;
	return SHELL_RUN;
}
