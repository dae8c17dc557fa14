/*
 * Process scan (see procscan.h). Owns the walk over procfs and the DRM client
 * deduplication; the text formats belong to fdinfo.c and cgroup.c.
 *
 * DRM fds are found by readlink rather than by st_rdev major 226: the link name works on
 * fixture trees, and it carries the device minor, which is what attributes a client to a
 * compute partition (every partition's fdinfo names the parent GPU in drm-pdev, because
 * amdgpu_xcp.c points the partition's minor at the primary drm_device). Deduplication uses
 * drm-client-id as drm-usage-stats.rst asks ("userspace should make sure to not double
 * account"), not kcmp(), which works only within one process and not on fixtures.
 *
 * PIDs and fds are visited in ascending order so that a shared client is attributed to the
 * lowest PID and fd, whatever order readdir returns.
 */
#include "procscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "util.h"

struct procscan_fd {
    int fd;
    unsigned minor;
    bool render;
    bool kfd;
};

/* Canonical decimal ("0" or no leading zero) up to `max`. */
static bool parse_dec(const char *s, unsigned long max, unsigned long *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
        return false;
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

/*
 * A readlink target of interest: "/dev/kfd", "/dev/dri/renderD<minor>" or
 * "/dev/dri/card<minor>". Anything else (pipes, sockets, other devices, a " (deleted)"
 * node) is not a GPU fd.
 */
static bool classify_link(const char *t, struct procscan_fd *f)
{
    unsigned long minor;
    if (strcmp(t, "/dev/kfd") == 0) {
        f->kfd = true;
        return true;
    }
    if (str_has_prefix(t, "/dev/dri/renderD") && parse_dec(t + 16, 1u << 20, &minor)) {
        f->render = true;
        f->minor = (unsigned)minor;
        return true;
    }
    if (str_has_prefix(t, "/dev/dri/card") && parse_dec(t + 13, 1u << 20, &minor)) {
        f->minor = (unsigned)minor;
        return true;
    }
    return false;
}

static bool gone(int e)
{
    return e == ENOENT || e == ESRCH;
}

/* Read a whole file relative to `dirfd` into ps->buf; its length, or -1 with errno. */
static ssize_t read_at(struct procscan *ps, int dirfd, const char *rel)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    for (;;) {
        if (ps->buf_cap - n < 1024) {
            ps->buf_cap = ps->buf_cap ? 2 * ps->buf_cap : 8192;
            ps->buf = xrealloc(ps->buf, ps->buf_cap);
        }
        size_t room = ps->buf_cap - n;
        ssize_t r = fdio_read(fd, ps->buf + n, room, true);
        if (r < 0) {
            fdio_close_keep_errno(fd);
            return -1;
        }
        n += (size_t)r;
        if ((size_t)r < room)
            break; /* EOF before the buffer filled */
    }
    close(fd);
    return (ssize_t)n;
}

static size_t key_hash(uint64_t client_id, unsigned minor)
{
    uint64_t x = client_id ^ ((uint64_t)minor << 44) ^ 0x9e3779b97f4a7c15ull;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (size_t)x;
}

static void table_insert(struct procscan *ps, size_t idx)
{
    const struct procscan_client *c = &ps->clients[idx];
    size_t mask = ps->table_cap - 1;
    size_t h = key_hash(c->info.client_id, c->minor) & mask;
    while (ps->table[h])
        h = (h + 1) & mask;
    ps->table[h] = idx + 1;
    ps->table_used++;
}

/* Keep the load factor at or under 1/2 before adding one entry. */
static void table_reserve(struct procscan *ps)
{
    if ((ps->table_used + 1) * 2 <= ps->table_cap)
        return;
    size_t cap = ps->table_cap ? 2 * ps->table_cap : 256;
    while ((ps->table_used + 1) * 2 > cap)
        cap *= 2;
    free(ps->table);
    ps->table = xcalloc(cap, sizeof(*ps->table));
    ps->table_cap = cap;
    ps->table_used = 0;
    for (size_t i = 0; i < ps->n_clients; i++)
        if (ps->clients[i].has_info && ps->clients[i].info.has_client_id)
            table_insert(ps, i);
}

static struct procscan_client *table_find(const struct procscan *ps, uint64_t client_id,
                                          unsigned minor)
{
    if (!ps->table_cap)
        return NULL;
    size_t mask = ps->table_cap - 1;
    for (size_t h = key_hash(client_id, minor) & mask; ps->table[h]; h = (h + 1) & mask) {
        struct procscan_client *c = &ps->clients[ps->table[h] - 1];
        if (c->info.client_id == client_id && c->minor == minor)
            return c;
    }
    return NULL;
}

static bool same_owner(const struct procscan_proc *a, const struct procscan_proc *b)
{
    if (a->has_owner != b->has_owner)
        return false;
    if (!a->has_owner)
        return true;
    const struct cgroup_owner *x = &a->owner, *y = &b->owner;
    return x->has_container_id == y->has_container_id && x->has_pod_uid == y->has_pod_uid &&
           strcmp(x->container_id, y->container_id) == 0 && strcmp(x->pod_uid, y->pod_uid) == 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_fd(const void *a, const void *b)
{
    const struct procscan_fd *x = a, *y = b;
    return (x->fd > y->fd) - (x->fd < y->fd);
}

/* Collect the GPU fds of `pid` into ps->fds; their number, or -1 when unreadable. */
static int collect_fds(struct procscan *ps, int rootfd, int pid)
{
    char rel[32];
    snprintf(rel, sizeof(rel), "%d/fd", pid);
    int dfd = openat(rootfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == EACCES || errno == EPERM)
            ps->denied++;
        else if (gone(errno))
            ps->vanished++;
        return -1;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -1;
    }
    int n = 0;
    struct dirent *de;
    char target[128];
    while ((de = readdir(d)) != NULL) {
        unsigned long fdnum;
        if (!parse_dec(de->d_name, INT_MAX, &fdnum))
            continue;
        ssize_t r = readlinkat(dfd, de->d_name, target, sizeof(target) - 1);
        if (r < 0 || (size_t)r == sizeof(target) - 1)
            continue; /* closed meanwhile, or too long to be a device path */
        target[r] = '\0';
        struct procscan_fd f = {.fd = (int)fdnum};
        if (!classify_link(target, &f))
            continue;
        if ((size_t)n == ps->cap_fds) {
            ps->cap_fds = ps->cap_fds ? 2 * ps->cap_fds : 16;
            ps->fds = xrealloc(ps->fds, ps->cap_fds * sizeof(*ps->fds));
        }
        ps->fds[n++] = f;
    }
    closedir(d);
    if (n > 1)
        qsort(ps->fds, (size_t)n, sizeof(*ps->fds), cmp_fd);
    return n;
}

/* Read one DRM fd's fdinfo into a client, merging it with a client already seen. */
static bool add_client(struct procscan *ps, int rootfd, size_t proc, const struct procscan_fd *f)
{
    char rel[48];
    int pid = ps->procs[proc].pid;
    snprintf(rel, sizeof(rel), "%d/fdinfo/%d", pid, f->fd);
    ssize_t len = read_at(ps, rootfd, rel);
    if (len < 0) {
        ps->vanished++; /* fd closed since readlink, or the process exited */
        return false;
    }
    if (ps->n_clients == ps->cap_clients) {
        ps->cap_clients = ps->cap_clients ? 2 * ps->cap_clients : 64;
        ps->clients = xrealloc(ps->clients, ps->cap_clients * sizeof(*ps->clients));
    }
    /* parse in place into the next free slot; it is committed only if it is new */
    struct procscan_client *c = &ps->clients[ps->n_clients];
    c->has_info = fdinfo_parse(ps->buf, (size_t)len, &c->info, NULL, 0) == 0;
    if (!c->has_info)
        ps->fdinfo_errors++;
    if (c->has_info && c->info.has_client_id) {
        struct procscan_client *seen = table_find(ps, c->info.client_id, f->minor);
        if (seen) {
            seen->holders++;
            if (!same_owner(&ps->procs[seen->proc], &ps->procs[proc]))
                seen->shared_owners = true;
            return true;
        }
    }
    c->proc = proc;
    c->pid = pid;
    c->fd = f->fd;
    c->minor = f->minor;
    c->render = f->render;
    c->holders = 1;
    c->shared_owners = false;
    ps->n_clients++;
    if (c->has_info && c->info.has_client_id) {
        table_reserve(ps);
        table_insert(ps, ps->n_clients - 1);
    }
    return true;
}

static void scan_pid(struct procscan *ps, int rootfd, int pid)
{
    ps->scanned++;
    int n = collect_fds(ps, rootfd, pid);
    if (n <= 0)
        return;

    if (ps->n_procs == ps->cap_procs) {
        ps->cap_procs = ps->cap_procs ? 2 * ps->cap_procs : 32;
        ps->procs = xrealloc(ps->procs, ps->cap_procs * sizeof(*ps->procs));
    }
    size_t proc = ps->n_procs;
    struct procscan_proc *p = &ps->procs[proc];
    memset(p, 0, sizeof(*p));
    p->pid = pid;

    char rel[32];
    snprintf(rel, sizeof(rel), "%d/cgroup", pid);
    ssize_t len = read_at(ps, rootfd, rel);
    if (len < 0 && gone(errno)) {
        /* Gone, unless the fd directory is still there (a tree without cgroup files). */
        snprintf(rel, sizeof(rel), "%d/fd", pid);
        if (faccessat(rootfd, rel, F_OK, 0) != 0) {
            ps->vanished++;
            return;
        }
    }
    if (len >= 0)
        p->has_owner = cgroup_parse(ps->buf, (size_t)len, &p->owner) == 0;
    ps->n_procs++;

    unsigned live = 0;
    for (int i = 0; i < n; i++) {
        const struct procscan_fd *f = &ps->fds[i];
        if (f->kfd) {
            ps->procs[proc].kfd = true;
            live++;
        } else if (add_client(ps, rootfd, proc, f)) {
            ps->procs[proc].drm_fds++;
            live++;
        }
    }
    /* Every fd vanished: the process exited during the scan (and added no client). */
    if (!live)
        ps->n_procs--;
}

int procscan_run(const char *procfs_root, struct procscan *out, char *err, size_t errlen)
{
    double t0 = mono_now();
    out->n_procs = 0;
    out->n_clients = 0;
    out->scanned = out->vanished = out->denied = out->fdinfo_errors = 0;
    if (out->table_cap)
        memset(out->table, 0, out->table_cap * sizeof(*out->table));
    out->table_used = 0;

    int rootfd = open(procfs_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        if (err && errlen)
            snprintf(err, errlen, "cannot open '%s': %s", procfs_root, strerror(errno));
        return -1;
    }
    DIR *d = fdio_opendir_dup(rootfd);
    if (!d) {
        if (err && errlen)
            snprintf(err, errlen, "cannot read '%s': %s", procfs_root, strerror(errno));
        close(rootfd);
        return -1;
    }
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        unsigned long pid;
        if (!parse_dec(de->d_name, INT_MAX, &pid) || pid == 0)
            continue;
        if (n == out->cap_pids) {
            out->cap_pids = out->cap_pids ? 2 * out->cap_pids : 1024;
            out->pids = xrealloc(out->pids, out->cap_pids * sizeof(*out->pids));
        }
        out->pids[n++] = (int)pid;
    }
    closedir(d);
    if (n > 1)
        qsort(out->pids, n, sizeof(*out->pids), cmp_int);
    for (size_t i = 0; i < n; i++)
        scan_pid(out, rootfd, out->pids[i]);
    close(rootfd);
    out->seconds = mono_now() - t0;
    return 0;
}

const struct procscan_proc *procscan_find_proc(const struct procscan *ps, int pid)
{
    size_t lo = 0, hi = ps->n_procs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ps->procs[mid].pid == pid)
            return &ps->procs[mid];
        if (ps->procs[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void procscan_free(struct procscan *ps)
{
    free(ps->procs);
    free(ps->clients);
    free(ps->table);
    free(ps->pids);
    free(ps->fds);
    free(ps->buf);
    memset(ps, 0, sizeof(*ps));
}
