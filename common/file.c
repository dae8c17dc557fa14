/* Whole-file reading with a cap (file.h). */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static void file_why(char *why, size_t whylen, int err, size_t max)
{
    if (!why || whylen == 0)
        return;
    if (err != EFBIG)
        snprintf(why, whylen, "%s", strerror(err));
    else if (max >= 1 << 20 && max % (1 << 20) == 0)
        snprintf(why, whylen, "file too large (at most %zu MiB)", max >> 20);
    else if (max >= 1 << 10 && max % (1 << 10) == 0)
        snprintf(why, whylen, "file too large (at most %zu KiB)", max >> 10);
    else
        snprintf(why, whylen, "file too large (at most %zu bytes)", max);
}

/* A larger buffer holding the first n bytes of buf; the old one is zeroed and freed. */
static char *file_grow(char *buf, size_t n, size_t cap)
{
    char *nb = xmalloc(cap);
    memcpy(nb, buf, n);
    explicit_bzero(buf, n);
    free(buf);
    return nb;
}

char *file_read(const char *path, size_t max, size_t *len, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        file_why(why, whylen, e, max);
        errno = e;
        return NULL;
    }
    /* Room for max + 1 bytes tells a file at the cap from a larger one. */
    size_t cap = 4096;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0)
        cap = (size_t)st.st_size < max ? (size_t)st.st_size + 2 : max + 2;
    if (cap > max + 2)
        cap = max + 2;
    char *buf = xmalloc(cap);
    size_t n = 0;
    int e = 0;
    for (;;) {
        if (n == cap - 1) {
            size_t ncap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
            buf = file_grow(buf, n, ncap);
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            e = errno;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > max) {
            e = EFBIG;
            break;
        }
    }
    close(fd);
    if (e) {
        explicit_bzero(buf, n);
        free(buf);
        file_why(why, whylen, e, max);
        errno = e;
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *secret_read(const char *path, const char *what, char *err, size_t errlen)
{
    char why[128];
    char *buf = file_read(path, SECRET_MAX, NULL, why, sizeof(why));
    if (!buf) {
        snprintf(err, errlen, "cannot read %s file '%s': %s", what, path, why);
        return NULL;
    }
    str_rtrim(buf);
    return buf;
}

void secret_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}
