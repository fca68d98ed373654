/* Program lookup: built-in programs and loader modules; see kernel/programs.h. */
#include "kernel/programs.h"
#include "kernel/boot.h"
#include "lib/lib.h"

static struct user_program modules[BOOT_INFO_MODULES];
static char module_names[BOOT_INFO_MODULES][BOOT_INFO_MODNAME];
static uint32_t nmodules;

/* "prog.elf arg" -> "prog". */
static void module_name(const char *base, char *out, size_t len)
{
	size_t n = 0;
	while (base[n] && base[n] != ' ')
		n++;
	if (n > 4 && memcmp(base + n - 4, ".elf", 4) == 0)
		n -= 4;
	n = MIN(n, len - 1);
	memcpy(out, base, n);
	out[n] = 0;
}

static void load_modules(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	for (uint32_t i = 0; i < boot_info.module_count; i++) {
		module_name(boot_info.modules[i].name, module_names[nmodules], BOOT_INFO_MODNAME);
		modules[nmodules].name = module_names[nmodules];
		modules[nmodules].start = (const uint8_t *)boot_info.modules[i].base;
		modules[nmodules].end = modules[nmodules].start + boot_info.modules[i].size;
		nmodules++;
	}
}

void program_for_each(void (*fn)(const struct user_program *p, void *arg), void *arg)
{
	load_modules();
	for (uint64_t i = 0; i < user_program_count; i++)
		fn(&user_programs[i], arg);
	for (uint32_t i = 0; i < nmodules; i++)
		fn(&modules[i], arg);
}

const struct user_program *program_find(const char *name)
{
	load_modules();
	for (uint32_t i = 0; i < nmodules; i++) /* a loaded file overrides a built-in one */
		if (strcmp(modules[i].name, name) == 0)
			return &modules[i];
	for (uint64_t i = 0; i < user_program_count; i++)
		if (strcmp(user_programs[i].name, name) == 0)
			return &user_programs[i];
	return NULL;
}
