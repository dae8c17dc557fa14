/*
 * Read-only string slices: a pointer and a length into a buffer that is not NUL-terminated
 * where the slice ends. The text parsers (cgroup paths, DRM fdinfo) cut their input into
 * components and compare them with literals without copying; these helpers are the common
 * vocabulary for that. They are static inline so that a unit test or fuzz target that
 * #includes a parser's .c needs nothing more to link.
 */
#ifndef GPURECLAIM_SLICE_H
#define GPURECLAIM_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct slice {
    const char *p;
    size_t n;
};

/* True when `s` is exactly the NUL-terminated `lit`. */
static inline bool slice_eq(struct slice s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* If `s` starts with `prefix`, store the remainder in `rest` and return true. */
static inline bool slice_cut_prefix(struct slice s, const char *prefix, struct slice *rest)
{
    size_t n = strlen(prefix);
    if (s.n < n || memcmp(s.p, prefix, n) != 0)
        return false;
    rest->p = s.p + n;
    rest->n = s.n - n;
    return true;
}

/* If `s` ends with `suffix`, store what comes before it in `rest` and return true. */
static inline bool slice_cut_suffix(struct slice s, const char *suffix, struct slice *rest)
{
    size_t n = strlen(suffix);
    if (s.n < n || memcmp(s.p + s.n - n, suffix, n) != 0)
        return false;
    rest->p = s.p;
    rest->n = s.n - n;
    return true;
}

#endif
