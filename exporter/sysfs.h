/*
 * Readers for small sysfs/procfs files. The caller passes a printf-style path that already
 * starts with the configured root (--path.sysfs, --path.procfs), so nothing here knows a
 * literal /sys or /proc. Text readers strip the trailing newline; numeric readers are strict
 * (see util.h), so "12abc" or an empty file is an error, never a 0.
 */
#ifndef GPURECLAIM_SYSFS_H
#define GPURECLAIM_SYSFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read a text file into buf (NUL-terminated, trailing whitespace removed). Length or -1. */
ssize_t sysfs_read_str(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Read an unsigned decimal. 0, or -1 with errno (ENOENT, EINVAL for garbage, ...). */
int sysfs_read_u64(uint64_t *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sysfs_read_i64(int64_t *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Read a binary attribute with read() until EOF (newer kernels serve gpu_metrics as a binary
 * attribute that must not be read through stdio in one fread). Returns bytes read or -1.
 */
ssize_t sysfs_read_bin(void *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Find `key=` in a uevent-style file and copy its value. 0, or -1 (ENOENT if missing). */
int sysfs_read_kv(char *buf, size_t cap, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
