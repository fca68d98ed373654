/*
 * libgomp's configuration for card programs (user/gomp.mk), in place of
 * what its configure would write (libgomp/config.h.in names each macro):
 * what newlib 3.3, user/pthread.c and clang give a card program.
 */
#define HAVE_ATTRIBUTE_ALIAS 1
#define HAVE_ATTRIBUTE_VISIBILITY 1
/* newlib 3.3 has no semaphore.h: libgomp's config/posix/sem.h then builds its own on a mutex and a condition */
#define HAVE_BROKEN_POSIX_SEMAPHORES 1
#define HAVE_CC_TLS 1
#define HAVE_TLS 1 /* __thread: user/pthread.c gives each thread its TLS block */
#define HAVE_INTTYPES_H 1
#define HAVE_PTHREAD_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRTOULL 1
#define HAVE_SYNC_BUILTINS 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define LIBGOMP_USE_PTHREADS 1
#define SIZEOF_VOID_P 8
#define STDC_HEADERS 1
#define PACKAGE "libgomp"
#define PACKAGE_NAME "GNU Offloading and Multi Processing Runtime Library"
#define VERSION "12"
/* Not defined: no clock_gettime (omp_get_wtime reads gettimeofday), no offloading plugins (PLUGIN_SUPPORT), no
 * dlopen, no getloadavg, no pthread affinity (a thread's CPU is fixed at its creation), no uname/gethostname. */
