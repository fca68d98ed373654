/* A Xeon Phi (KNC) card: the platform's ops (knc.c; platform/platform.h). */
#ifndef PLATFORM_KNC_KNC_H
#define PLATFORM_KNC_KNC_H

#include "platform/platform.h"

extern const struct platform platform_knc;

#endif
