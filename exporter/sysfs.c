/*
 * Small-file readers for sysfs and procfs (see sysfs.h). sysfs attributes are at most a
 * page, so one read() of a stack buffer is enough for text; binary attributes are read in a
 * loop until EOF because newer kernels serve gpu_metrics as a bin attribute. Reads under
 * --path.sysfs go through kept descriptors (attrfd.h); other paths are opened each time.
 */
#include "sysfs.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attrfd.h"
#include "util.h"

static int vpath(char *path, size_t cap, const char *fmt, va_list ap)
{
    int n = vsnprintf(path, cap, fmt, ap);
    if (n < 0 || (size_t)n >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

static ssize_t vread_str(char *buf, size_t cap, const char *fmt, va_list ap)
{
    char path[4096];
    if (vpath(path, sizeof(path), fmt, ap) < 0)
        return -1;
    ssize_t n = attrfd_read(path, buf, cap - 1, false);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    if (memchr(buf, '\0', (size_t)n)) {
        errno = EINVAL;
        return -1;
    }
    return (ssize_t)strlen(str_rtrim(buf));
}

ssize_t sysfs_read_str(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ssize_t n = vread_str(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

int sysfs_read_u64(uint64_t *out, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    ssize_t n = vread_str(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    return parse_u64(buf, out);
}

int sysfs_read_i64(int64_t *out, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    ssize_t n = vread_str(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    return parse_i64(buf, out);
}

ssize_t sysfs_read_bin(void *buf, size_t cap, const char *fmt, ...)
{
    char path[4096];
    va_list ap;
    va_start(ap, fmt);
    int rc = vpath(path, sizeof(path), fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    return attrfd_read(path, buf, cap, true);
}

int sysfs_read_kv(char *buf, size_t cap, const char *key, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    ssize_t n = vread_str(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    size_t klen = strlen(key);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
            snprintf(buf, cap, "%s", line + klen + 1);
            return 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    errno = ENOENT;
    return -1;
}
