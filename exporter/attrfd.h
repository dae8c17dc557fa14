/*
 * Open file descriptors of sysfs attributes, kept from one scrape to the next so that a
 * scrape re-reads each attribute with pread() at offset 0 instead of walking its path again
 * (open() and close() were two fifths of a scrape's CPU on the 8 x MI300X CPX tree).
 *
 * Only paths under the root given to attrfd_init() (--path.sysfs) are kept: procfs files
 * belong to processes that come and go. Everything here is safe to call from concurrent
 * scrapes.
 */
#ifndef GPURECLAIM_ATTRFD_H
#define GPURECLAIM_ATTRFD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Keep up to `max` descriptors of files under `root` (NULL or max 0: keep none). */
void attrfd_init(const char *root, size_t max);

/*
 * Read the file at `path` as fdio_read() would (until EOF or the first short read), through
 * a kept descriptor when the path is under the root. Bytes read, or -1 with errno.
 */
ssize_t attrfd_read(const char *path, void *buf, size_t cap, bool until_eof);

/*
 * Between attrfd_suspend() and attrfd_resume() this thread's reads open their files each time
 * and keep nothing: GPU discovery reads some 500 files once a minute, and they must not take
 * the places of the attributes every scrape reads.
 */
void attrfd_suspend(void);
void attrfd_resume(void);

/* Close every kept descriptor (the GPU topology changed, or at exit). */
void attrfd_flush(void);

/* Descriptors kept now, and reads served by a kept descriptor since start (for tests). */
size_t attrfd_kept(void);
unsigned long attrfd_hits(void);

#endif
