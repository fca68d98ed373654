/* libgomp's configure writes gstdint.h to reach the C library's <stdint.h>: newlib has one. */
#include <stdint.h>
