/*
 * newlib 3.3 has no <semaphore.h>, and libgomp's config/posix/sem.h and
 * omp-lock.h include it whatever HAVE_BROKEN_POSIX_SEMAPHORES says; with it
 * (config.h) they use nothing of it. For libgomp's build only.
 */
