/*
 * LD_PRELOAD shim for the system tests: the simulated card's two files
 * (/dev/shm/pmuos-NAME-ram and -mmio) take mmap only, as a PCI memory BAR's
 * sysfs resource file does: read and write on it fail with EIO (Linux
 * drivers/pci/pci-sysfs.c pci_create_attr sets no .read/.write for a memory
 * BAR; fs/sysfs/file.c sysfs_kf_bin_read/_write return -EIO without them).
 * open, fstat and mmap pass through, as on sysfs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* Whether fd is one of the simulated card's BAR files. */
static int is_bar(int fd)
{
	char link[64], path[256];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	n = (ssize_t)strlen(path);
	return !strncmp(path, "/dev/shm/pmuos-", 15) &&
	       ((n > 4 && !strcmp(path + n - 4, "-ram")) || (n > 5 && !strcmp(path + n - 5, "-mmio")));
}

#define REFUSE(fd) do { if (is_bar(fd)) { errno = EIO; return -1; } } while (0)

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	REFUSE(fd);
	if (!real)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	return real(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t at)
{
	static ssize_t (*real)(int, void *, size_t, off_t);
	REFUSE(fd);
	if (!real)
		real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
	return real(fd, buf, n, at);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t at) __attribute__((alias("pread")));

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	REFUSE(fd);
	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t at)
{
	static ssize_t (*real)(int, const void *, size_t, off_t);
	REFUSE(fd);
	if (!real)
		real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
	return real(fd, buf, n, at);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t at) __attribute__((alias("pwrite")));

ssize_t readv(int fd, const struct iovec *v, int n)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	REFUSE(fd);
	if (!real)
		real = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "readv");
	return real(fd, v, n);
}

ssize_t preadv(int fd, const struct iovec *v, int n, off_t at)
{
	static ssize_t (*real)(int, const struct iovec *, int, off_t);
	REFUSE(fd);
	if (!real)
		real = (ssize_t (*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "preadv");
	return real(fd, v, n, at);
}
