/*
 * Whole-file reading with an explicit size cap, for every file the programs read in one
 * piece (rules, state, web config, certificates, secrets, time zones). The cap is the
 * caller's, because what is a sane size differs by file, but every caller has one: a huge
 * or endless file (a FIFO, /dev/zero given by mistake) is refused after cap + 1 bytes, never
 * slurped. Small attribute files under /sys and /proc have their own readers (sysfs.h,
 * attrfd.h): they want one read() at an offset, not this.
 */
#ifndef GPURECLAIM_FILE_H
#define GPURECLAIM_FILE_H

#include <stddef.h>

/*
 * Read the file at `path`, at most `max` bytes, into a NUL-terminated buffer the caller
 * frees; *len (may be NULL) gets the length without the NUL. On failure NULL, errno set
 * (EFBIG when the file is larger than max) and `why` (may be NULL) filled with the reason
 * alone, for the caller to frame with what the file is: strerror's text, or "file too large
 * (at most 4 MiB)" (the cap in MiB, KiB or bytes, whichever is exact). Every buffer it lets go of
 * is zeroed first, so the contents of a secret do not linger in freed memory.
 */
char *file_read(const char *path, size_t max, size_t *len, char *why, size_t whylen);

#endif
