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

/*
 * Read a secret (bearer token, password) from the file at `path`, at most SECRET_MAX bytes,
 * with trailing whitespace removed (files written by echo, and Kubernetes projected tokens,
 * may end in "\n"). Release it with secret_free. NULL on failure, with "cannot read <what>
 * file '<path>': <reason>" in err.
 */
#define SECRET_MAX 16384
char *secret_read(const char *path, const char *what, char *err, size_t errlen);
/* Overwrite a secret from secret_read with zeros and free it; NULL is fine. */
void secret_free(char *s);

#endif
