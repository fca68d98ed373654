/*
 * The system-call layer newlib needs (its configuration for x86_64-elf calls
 * write, read, sbrk, ... by these names), on pmuos's SYSCALL interface
 * (include/pmuos/syscall.h). Standard input is empty; there are no files.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>
#include <unistd.h>
#include <pmuos/syscall.h>
#include <pmuos/pmu.h>
#include "sys.h"

#undef errno
extern int errno;


/* A negative result is -errno. */
static long ret(long r)
{
	if (r < 0 && r > -4096) {
		errno = -r;
		return -1;
	}
	return r;
}

int write(int fd, const void *buf, unsigned long len) { return ret(sys3(SYS_WRITE, fd, (long)buf, len)); }
int read(int fd __attribute__((unused)), void *buf __attribute__((unused)),
	 unsigned long len __attribute__((unused)))
{
	return 0;
}

int close(int fd __attribute__((unused))) { return 0; }
int isatty(int fd) { return fd >= 0 && fd <= 2; }
int getpid(void) { return 1 + pmuos_rank(); }

off_t lseek(int fd __attribute__((unused)), off_t off __attribute__((unused)),
	    int whence __attribute__((unused)))
{
	errno = ESPIPE;
	return -1;
}

int kill(int pid __attribute__((unused)), int sig __attribute__((unused)))
{
	errno = EINVAL;
	return -1;
}

int fstat(int fd __attribute__((unused)), struct stat *st)
{
	st->st_mode = S_IFCHR; /* a terminal: newlib line-buffers stdout */
	return 0;
}

void *sbrk(long incr)
{
	long r = sys3(SYS_SBRK, incr, 0, 0);
	if (r < 0) {
		errno = ENOMEM;
		return (void *)-1;
	}
	return (void *)r;
}

void _exit(int status)
{
	for (;;)
		sys3(SYS_EXIT, status, 0, 0);
}

/*
 * The CPUs online are those the process's threads may use (libgomp's
 * default team size, omp_get_num_procs); pages are 4 KiB. Anything else:
 * EINVAL, as POSIX has it for a name the system does not know.
 */
long sysconf(int name)
{
	if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF)
		return (uint64_t)sys3(SYS_THREAD_SELF, 0, 0, 0) >> 32;
	if (name == _SC_PAGESIZE)
		return 4096;
	errno = EINVAL;
	return -1;
}

int pmuos_getcpu(void) { return sys3(SYS_GETCPU, 0, 0, 0); }
int pmuos_rank(void) { return (uint32_t)sys3(SYS_RANK, 0, 0, 0); }
int pmuos_nranks(void) { return (uint64_t)sys3(SYS_RANK, 0, 0, 0) >> 32; }
uint64_t pmuos_tsc_hz(void) { return sys3(SYS_TSC_HZ, 0, 0, 0); }
int pmuos_pmu_counts(struct pmuos_counts *c) { return sys3(SYS_PMU_COUNTS, (long)c, 0, 0); }
int pmuos_pmu_events(struct pmuos_events *e) { return sys3(SYS_PMU_EVENT_NAMES, (long)e, 0, 0); }

/* The clock: the TSC since the card started (RDTSC works in Ring 3). */
int gettimeofday(struct timeval *tv, void *tz __attribute__((unused)))
{
	uint64_t t = pmu_rdtsc(), hz = pmuos_tsc_hz();

	tv->tv_sec = t / hz;
	tv->tv_usec = t % hz * 1000000 / hz;
	return 0;
}

/* clock() reads this: all of a task's time counts as its user time, in CLOCKS_PER_SEC. */
clock_t times(struct tms *t)
{
	uint64_t hz = pmuos_tsc_hz(), tsc = pmu_rdtsc();
	clock_t c = tsc / hz * CLOCKS_PER_SEC + tsc % hz * CLOCKS_PER_SEC / hz;

	t->tms_utime = c;
	t->tms_stime = t->tms_cutime = t->tms_cstime = 0;
	return c;
}
