/*
 * Throw-away directory trees for unit tests: a mkdtemp root, files and symlinks created
 * under it by relative path (parents made on the way, like mkdir -p), and removal of the
 * whole tree without a shell. Tests of the sysfs, procfs and KFD walkers build their
 * fixtures with these when a committed fixture cannot express the case (vanished files,
 * dangling fd links, thousands of processes).
 *
 * Every helper returns 0, or -1 with errno; the test decides what a failure means (usually
 * TEST_CHECK_INT(..., 0)). Paths longer than PATH_MAX are refused with ENAMETOOLONG.
 */
#ifndef GPURECLAIM_TMPTREE_H
#define GPURECLAIM_TMPTREE_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Join root and rel into path (PATH_MAX bytes); -1 with ENAMETOOLONG when it does not fit. */
static inline int tmptree_path_(char *path, const char *root, const char *rel)
{
    int n = snprintf(path, PATH_MAX, "%s/%s", root, rel);
    if (n < 0 || n >= PATH_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Create a fresh directory /tmp/<name>.XXXXXX and store its path in root (cap bytes). */
static inline int tmptree_make(char *root, size_t cap, const char *name)
{
    int n = snprintf(root, cap, "/tmp/%s.XXXXXX", name);
    if (n < 0 || (size_t)n >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(root) ? 0 : -1;
}

/* mkdir -p root/rel (mode 0755); directories that exist already are fine. */
static inline int tmptree_mkdirs(const char *root, const char *rel)
{
    char path[PATH_MAX];
    if (tmptree_path_(path, root, rel) < 0)
        return -1;
    for (char *p = path + strlen(root) + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc < 0 && errno != EEXIST)
            return -1;
    }
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* Make the parent directories of root/rel. */
static inline int tmptree_mkparents_(const char *root, const char *rel)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof(dir), "%s", rel) >= (int)sizeof(dir)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return tmptree_mkdirs(root, dir);
}

/* Write `len` bytes verbatim to root/rel (created or truncated), making its parents. */
static inline int tmptree_write(const char *root, const char *rel, const void *data, size_t len)
{
    char path[PATH_MAX];
    if (tmptree_mkparents_(root, rel) < 0 || tmptree_path_(path, root, rel) < 0)
        return -1;
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || w != len)
        return -1;
    return 0;
}

/* Write the string `content` verbatim (no newline added) to root/rel. */
static inline int tmptree_put(const char *root, const char *rel, const char *content)
{
    return tmptree_write(root, rel, content, strlen(content));
}

/* Make root/rel a symlink to `target` (which need not exist), making its parents. */
static inline int tmptree_symlink(const char *root, const char *rel, const char *target)
{
    char path[PATH_MAX];
    if (tmptree_mkparents_(root, rel) < 0 || tmptree_path_(path, root, rel) < 0)
        return -1;
    return symlink(target, path);
}

static inline int tmptree_rm_entry_(const char *path, const struct stat *st, int flag,
                                    struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* rm -rf root: depth first, never following a symlink out of the tree. */
static inline int tmptree_remove(const char *root)
{
    return nftw(root, tmptree_rm_entry_, 16, FTW_DEPTH | FTW_PHYS);
}

/* At the end of a test program: remove root, or keep it (and say where) if KEEP_TMP is set. */
static inline void tmptree_finish(const char *root)
{
    if (getenv("KEEP_TMP"))
        fprintf(stderr, "kept %s\n", root);
    else
        tmptree_remove(root);
}

#endif
