/*
 * File-descriptor helpers shared by the sysfs, KFD and procfs walkers: a read loop that
 * survives EINTR, a "read this file under that directory" built on it, and a directory
 * stream that leaves its directory fd free for openat(). They keep errno intact across the
 * close() that follows a failure, so callers can tell a vanished process (ENOENT, ESRCH)
 * from unreadable content. Static inline so that a unit test or fuzz target that #includes
 * one walker's .c links without the others.
 */
#ifndef GPURECLAIM_FDIO_H
#define GPURECLAIM_FDIO_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * Read up to `cap` bytes from `fd` into `buf`. Bytes read (less than `cap` only at EOF, or
 * after a short read when !until_eof), or -1 with errno. A sysfs text attribute arrives
 * whole in its first read, so !until_eof saves the read(2) that would only see EOF; binary
 * attributes and procfs files may come in chunks and want `until_eof`. With `at` >= 0 the
 * reads are pread()s from that offset and the file position is left alone (a kept
 * descriptor re-read from 0, see attrfd.h); with -1, read()s from the current position.
 */
static inline ssize_t fdio_read_from(int fd, void *buf, size_t cap, bool until_eof, off_t at)
{
    size_t n = 0;
    while (n < cap) {
        ssize_t r = at >= 0 ? pread(fd, (char *)buf + n, cap - n, at + (off_t)n)
                            : read(fd, (char *)buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (!until_eof && (size_t)r < cap - (n - (size_t)r))
            break;
    }
    return (ssize_t)n;
}

static inline ssize_t fdio_read(int fd, void *buf, size_t cap, bool until_eof)
{
    return fdio_read_from(fd, buf, cap, until_eof, -1);
}

/* Close `fd` keeping the errno of the failure being reported. */
static inline void fdio_close_keep_errno(int fd)
{
    int e = errno;
    close(fd);
    errno = e;
}

/*
 * fdio_read() of the file `rel` under `dirfd` (AT_FDCWD for a path). Bytes read, or -1 with
 * the errno of openat() or read().
 */
static inline ssize_t fdio_read_at(int dirfd, const char *rel, void *buf, size_t cap,
                                   bool until_eof)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = fdio_read(fd, buf, cap, until_eof);
    if (n < 0)
        fdio_close_keep_errno(fd);
    else
        close(fd);
    return n;
}

/*
 * A directory stream over a duplicate of `dirfd`, so that `dirfd` stays the caller's to
 * openat() entries with and to close. NULL with errno on failure (nothing to clean up).
 */
static inline DIR *fdio_opendir_dup(int dirfd)
{
    int fd = dup(dirfd);
    if (fd < 0)
        return NULL;
    DIR *d = fdopendir(fd);
    if (!d)
        fdio_close_keep_errno(fd);
    return d;
}

#endif
