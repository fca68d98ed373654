/* The platform in force; see platform/platform.h. */
#include "platform/platform.h"
#include "kernel/power.h"

const struct platform *platform;

void platform_use(const struct platform *p)
{
	platform = p;
}

const char *power_off(void)
{
	return platform->power_off();
}

const char *power_reset(void)
{
	return platform->power_reset();
}
