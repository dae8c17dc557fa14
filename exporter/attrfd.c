/*
 * Kept descriptors of sysfs attributes (see attrfd.h).
 *
 * Why a kept descriptor reads the same as a fresh open: sysfs builds a text attribute's
 * content anew on every read from offset 0 and calls a binary attribute's read handler on
 * every read, so pread() at 0 returns what a new open() and read() would (the kernel's sysfs
 * documentation gives seeking to 0 and reading again as the way to refresh an attribute).
 * What a kept descriptor can miss is the file being replaced, so every read checks it:
 *   - a device that is unbound or removed makes reads of its attributes fail (ENODEV);
 *   - a file that was renamed over or unlinked has no links left: only a root that is not
 *     sysfs (fixture trees in tests) can see that, so only there is it checked, with fstat();
 * either way the descriptor is dropped and the path opened again, once, and that result is
 * the answer. A topology change (a new GPU discovery) drops every descriptor.
 *
 * Concurrency: entries are reference counted; a flush or a replacement unlinks an entry and
 * the last reader closes it, so no descriptor is closed while another scrape preads it.
 */
#include "attrfd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "fdio.h"
#include "util.h"

#define NBUCKETS 1024u /* a power of two; a node keeps a few hundred attributes */

struct entry {
    struct entry *next;
    uint64_t hash;
    int fd;
    int users;
    bool dead; /* unlinked from the table; the last user closes it */
    char path[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The root as given and as resolved: discovery stores some device directories resolved
 * (partition devices are found through symlinks). */
static char *top, *real_top;
static size_t top_len, real_top_len;
static bool top_is_sysfs; /* attributes cannot be renamed over: no fstat() per read */
static size_t max_kept;
static size_t kept;
static unsigned long hits;
static struct entry *table[NBUCKETS];
static _Thread_local bool suspended;

void attrfd_suspend(void)
{
    suspended = true;
}

void attrfd_resume(void)
{
    suspended = false;
}

static void release_locked(struct entry *e)
{
    if (--e->users == 0 && e->dead) {
        close(e->fd);
        free(e);
    }
}

static void unlink_locked(struct entry *e)
{
    struct entry **pp = &table[e->hash & (NBUCKETS - 1)];
    while (*pp && *pp != e)
        pp = &(*pp)->next;
    if (!*pp)
        return; /* already unlinked by a flush or another reader */
    *pp = e->next;
    e->dead = true;
    kept--;
}

void attrfd_flush(void)
{
    pthread_mutex_lock(&lock);
    for (size_t b = 0; b < NBUCKETS; b++) {
        while (table[b]) {
            struct entry *e = table[b];
            e->users++; /* so that release_locked() frees it when nobody else holds it */
            unlink_locked(e);
            release_locked(e);
        }
    }
    pthread_mutex_unlock(&lock);
}

void attrfd_init(const char *r, size_t max)
{
    attrfd_flush();
    pthread_mutex_lock(&lock);
    free(top);
    free(real_top);
    top = r && *r && max ? xstrdup(r) : NULL;
    real_top = top ? realpath(top, NULL) : NULL;
    top_len = top ? strlen(top) : 0;
    while (top_len > 1 && top[top_len - 1] == '/')
        top_len--;
    real_top_len = real_top ? strlen(real_top) : 0;
    struct statfs fs;
    top_is_sysfs = top && statfs(top, &fs) == 0 && fs.f_type == SYSFS_MAGIC;
    max_kept = top ? max : 0;
    pthread_mutex_unlock(&lock);
}

size_t attrfd_kept(void)
{
    pthread_mutex_lock(&lock);
    size_t n = kept;
    pthread_mutex_unlock(&lock);
    return n;
}

unsigned long attrfd_hits(void)
{
    pthread_mutex_lock(&lock);
    unsigned long n = hits;
    pthread_mutex_unlock(&lock);
    return n;
}

/* The descriptor's file is no longer at its path (renamed over or unlinked). */
static bool orphaned(int fd)
{
    struct stat st;
    return fstat(fd, &st) < 0 || st.st_nlink == 0;
}

static bool has_dir_prefix(const char *path, const char *dir, size_t len)
{
    return len && strncmp(path, dir, len) == 0 && (path[len] == '/' || dir[len - 1] == '/');
}

static bool under_top(const char *path)
{
    return has_dir_prefix(path, top, top_len) || has_dir_prefix(path, real_top, real_top_len);
}

ssize_t attrfd_read(const char *path, void *buf, size_t cap, bool until_eof)
{
    pthread_mutex_lock(&lock);
    if (suspended || !under_top(path)) {
        pthread_mutex_unlock(&lock);
        return fdio_read_at(AT_FDCWD, path, buf, cap, until_eof);
    }
    uint64_t h = fnv1a64(path, strlen(path));
    struct entry *e = table[h & (NBUCKETS - 1)];
    while (e && (e->hash != h || strcmp(e->path, path) != 0))
        e = e->next;
    if (e)
        e->users++;
    pthread_mutex_unlock(&lock);

    if (e) {
        ssize_t n = fdio_read_from(e->fd, buf, cap, until_eof, 0);
        bool good = n >= 0 && (top_is_sysfs || !orphaned(e->fd));
        pthread_mutex_lock(&lock);
        if (good)
            hits++;
        else
            unlink_locked(e); /* stale: open the path again below */
        release_locked(e);
        pthread_mutex_unlock(&lock);
        if (good)
            return n;
    }

    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = fdio_read_from(fd, buf, cap, until_eof, 0);
    if (n < 0) {
        fdio_close_keep_errno(fd);
        return -1;
    }
    size_t len = strlen(path);
    struct entry *ne = NULL;
    pthread_mutex_lock(&lock);
    if (kept < max_kept && under_top(path)) {
        struct entry *o = table[h & (NBUCKETS - 1)];
        while (o && (o->hash != h || strcmp(o->path, path) != 0))
            o = o->next;
        if (!o) { /* a concurrent scrape may have kept it first */
            ne = xmalloc(sizeof(*ne) + len + 1);
            memcpy(ne->path, path, len + 1);
            ne->hash = h;
            ne->fd = fd;
            ne->users = 0;
            ne->dead = false;
            ne->next = table[h & (NBUCKETS - 1)];
            table[h & (NBUCKETS - 1)] = ne;
            kept++;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!ne)
        close(fd);
    return n;
}
