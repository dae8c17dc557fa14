/*
 * DRM fdinfo parser (see fdinfo.h). It owns the knowledge of the drm-usage-stats text
 * format and of amdgpu's keys across kernel eras, and nothing else: which fds to read, how
 * to dedupe clients and how to turn fields into metrics belong to procscan.c and the
 * collector.
 *
 * The rules follow Linux Documentation/gpu/drm-usage-stats.rst: one "key: value" per line,
 * split at the first ':', whitespace after the ':' ignored. amdgpu prints a TAB after most
 * keys but "drm-memory-gtt: \t" and "drm-memory-cpu: \t" (SPACE then TAB) in the kernels
 * between v6.4 and the drm_print_memory_stats conversion, so both SPACE and TAB are
 * skipped. Units are compared exactly: a value of "12 ms" or "12KiB" is not guessed at.
 */
#include "fdinfo.h"

#include <stdio.h>
#include <string.h>

#include "slice.h"

/*
 * An unsigned decimal followed by a unit suffix. At least one digit, no sign, no overflow;
 * the bytes after the digits are returned in `unit` for the caller to compare exactly.
 */
static bool parse_number(struct slice v, uint64_t *out, struct slice *unit)
{
    uint64_t x = 0;
    size_t i = 0;
    while (i < v.n && v.p[i] >= '0' && v.p[i] <= '9') {
        unsigned d = (unsigned)(v.p[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
        i++;
    }
    if (i == 0)
        return false;
    *out = x;
    unit->p = v.p + i;
    unit->n = v.n - i;
    return true;
}

static bool parse_plain(struct slice v, uint64_t *out)
{
    struct slice unit;
    return parse_number(v, out, &unit) && unit.n == 0;
}

/*
 * A size: bytes with no unit, " KiB" or " MiB" (drm_fdinfo_print_size() picks the largest
 * unit that divides the value, and prints 0 without a unit). The v5.14-v5.18 amdgpu keys
 * used " kB" for value/1024, so `legacy_kb` admits that spelling for those keys only.
 */
static bool parse_size(struct slice v, bool legacy_kb, uint64_t *out)
{
    uint64_t x;
    struct slice unit;
    unsigned shift;
    if (!parse_number(v, &x, &unit))
        return false;
    if (unit.n == 0)
        shift = 0;
    else if (slice_eq(unit, " KiB") || (legacy_kb && slice_eq(unit, " kB")))
        shift = 10;
    else if (slice_eq(unit, " MiB"))
        shift = 20;
    else
        return false;
    if (shift && x > (UINT64_MAX >> shift))
        return false;
    *out = x << shift;
    return true;
}

/* Engine and region names: short, and only characters the kernel uses in them. */
static bool valid_name(struct slice s)
{
    if (s.n == 0 || s.n >= FDINFO_NAME_MAX)
        return false;
    for (size_t i = 0; i < s.n; i++) {
        char c = s.p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return false;
    }
    return true;
}

/* drm-driver and drm-pdev: printable, no blanks, must fit. */
static bool copy_token(struct slice v, char *dst, size_t cap)
{
    if (v.n == 0 || v.n >= cap)
        return false;
    for (size_t i = 0; i < v.n; i++)
        if ((unsigned char)v.p[i] <= ' ' || (unsigned char)v.p[i] >= 0x7f)
            return false;
    memcpy(dst, v.p, v.n);
    dst[v.n] = '\0';
    return true;
}

static struct fdinfo_engine *find_engine(struct fdinfo *fi, struct slice name)
{
    for (unsigned i = 0; i < fi->n_engines; i++)
        if (slice_eq(name, fi->engines[i].name))
            return &fi->engines[i];
    if (fi->n_engines == FDINFO_MAX_ENGINES) {
        fi->dropped++;
        return NULL;
    }
    struct fdinfo_engine *e = &fi->engines[fi->n_engines++];
    memcpy(e->name, name.p, name.n);
    e->name[name.n] = '\0';
    return e;
}

static struct fdinfo_region *find_region(struct fdinfo *fi, struct slice name)
{
    for (unsigned i = 0; i < fi->n_regions; i++)
        if (slice_eq(name, fi->regions[i].name))
            return &fi->regions[i];
    if (fi->n_regions == FDINFO_MAX_REGIONS) {
        fi->dropped++;
        return NULL;
    }
    struct fdinfo_region *r = &fi->regions[fi->n_regions++];
    memcpy(r->name, name.p, name.n);
    r->name[name.n] = '\0';
    return r;
}

static const struct {
    const char *prefix;
    enum fdinfo_mem_kind kind;
} mem_prefixes[] = {
    {"drm-total-", FDINFO_MEM_TOTAL},       {"drm-shared-", FDINFO_MEM_SHARED},
    {"drm-resident-", FDINFO_MEM_RESIDENT}, {"drm-purgeable-", FDINFO_MEM_PURGEABLE},
    {"drm-active-", FDINFO_MEM_ACTIVE},     {"drm-memory-", FDINFO_MEM_LEGACY},
};

/* v5.14-v5.18 amdgpu: "vram mem:\t%llu kB" and friends, the only sizes of that era. */
static const struct {
    const char *key;
    const char *region;
} legacy_mem_keys[] = {
    {"vram mem", "vram"},
    {"gtt mem", "gtt"},
    {"cpu mem", "cpu"},
};

static const char *const amd_keys[FDINFO_AMD_KEYS] = {
    [FDINFO_AMD_VISIBLE_VRAM] = "amd-memory-visible-vram",
    [FDINFO_AMD_EVICTED_VRAM] = "amd-evicted-vram",
    [FDINFO_AMD_EVICTED_VISIBLE_VRAM] = "amd-evicted-visible-vram",
    [FDINFO_AMD_REQUESTED_VRAM] = "amd-requested-vram",
    [FDINFO_AMD_REQUESTED_VISIBLE_VRAM] = "amd-requested-visible-vram",
    [FDINFO_AMD_REQUESTED_GTT] = "amd-requested-gtt",
};

/* Store a memory figure; false (malformed) on a bad name, bad value or duplicate key. */
static bool set_mem(struct fdinfo *fi, struct slice region, enum fdinfo_mem_kind kind,
                    struct slice v, bool legacy_kb)
{
    uint64_t bytes;
    if (!valid_name(region) || !parse_size(v, legacy_kb, &bytes))
        return false;
    struct fdinfo_region *r = find_region(fi, region);
    if (!r)
        return true; /* well-formed, only over capacity: counted in `dropped` */
    if (r->has & (1u << kind))
        return false;
    r->bytes[kind] = bytes;
    r->has |= 1u << kind;
    return true;
}

/* Handle one key we know; false when its value breaks the rules. Unknown keys pass. */
static bool parse_kv(struct fdinfo *fi, struct slice key, struct slice v)
{
    struct slice rest;
    uint64_t x;

    if (slice_eq(key, "drm-driver")) {
        if (fi->has_driver || !copy_token(v, fi->driver, sizeof(fi->driver)))
            return false;
        fi->has_driver = true;
        return true;
    }
    if (slice_eq(key, "drm-pdev") || slice_eq(key, "pdev")) {
        if (fi->has_pdev || !copy_token(v, fi->pdev, sizeof(fi->pdev)))
            return false;
        fi->has_pdev = true;
        if (key.n == 4)
            fi->legacy_format = true;
        return true;
    }
    if (slice_eq(key, "drm-client-id")) {
        if (fi->has_client_id || !parse_plain(v, &x))
            return false;
        fi->client_id = x;
        fi->has_client_id = true;
        return true;
    }
    if (slice_eq(key, "pasid")) {
        if (fi->has_pasid || !parse_plain(v, &x))
            return false;
        fi->pasid = x;
        fi->has_pasid = true;
        return true;
    }
    /* capacity before the engine prefix, which it shares */
    if (slice_cut_prefix(key, "drm-engine-capacity-", &rest)) {
        if (!valid_name(rest) || !parse_plain(v, &x))
            return false;
        struct fdinfo_engine *e = find_engine(fi, rest);
        if (!e)
            return true;
        if (e->has_capacity)
            return false;
        e->capacity = x;
        e->has_capacity = true;
        return true;
    }
    if (slice_cut_prefix(key, "drm-engine-", &rest)) {
        struct slice unit;
        if (!valid_name(rest) || !parse_number(v, &x, &unit) || !slice_eq(unit, " ns"))
            return false;
        struct fdinfo_engine *e = find_engine(fi, rest);
        if (!e)
            return true;
        if (e->has_busy)
            return false;
        e->busy_ns = x;
        e->has_busy = true;
        return true;
    }
    for (size_t i = 0; i < sizeof(mem_prefixes) / sizeof(mem_prefixes[0]); i++)
        if (slice_cut_prefix(key, mem_prefixes[i].prefix, &rest))
            return set_mem(fi, rest, mem_prefixes[i].kind, v, false);
    for (size_t i = 0; i < sizeof(legacy_mem_keys) / sizeof(legacy_mem_keys[0]); i++) {
        if (slice_eq(key, legacy_mem_keys[i].key)) {
            struct slice region = {legacy_mem_keys[i].region, strlen(legacy_mem_keys[i].region)};
            fi->legacy_format = true;
            return set_mem(fi, region, FDINFO_MEM_LEGACY, v, true);
        }
    }
    for (int i = 0; i < FDINFO_AMD_KEYS; i++) {
        if (slice_eq(key, amd_keys[i])) {
            if ((fi->amd_has & (1u << i)) || !parse_size(v, false, &x))
                return false;
            fi->amd[i] = x;
            fi->amd_has |= 1u << i;
            return true;
        }
    }
    return true;
}

static void parse_line(struct fdinfo *fi, const char *line, size_t n)
{
    if (n == 0)
        return;
    const char *colon = memchr(line, ':', n);
    if (!colon || colon == line) {
        fi->malformed++;
        return;
    }
    struct slice key = {line, (size_t)(colon - line)};
    const char *v = colon + 1, *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    struct slice val = {v, (size_t)(end - v)};
    if (!parse_kv(fi, key, val))
        fi->malformed++;
}

int fdinfo_parse(const char *text, size_t len, struct fdinfo *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        parse_line(out, p, (size_t)(line_end - p));
        p = nl ? nl + 1 : end;
    }
    if (!out->has_driver && !out->legacy_format) {
        if (err && errlen)
            snprintf(err, errlen, "no 'drm-driver' key");
        return -1;
    }
    return 0;
}

bool fdinfo_engine_ns(const struct fdinfo *fi, const char *name, uint64_t *ns)
{
    for (unsigned i = 0; i < fi->n_engines; i++) {
        if (fi->engines[i].has_busy && strcmp(fi->engines[i].name, name) == 0) {
            *ns = fi->engines[i].busy_ns;
            return true;
        }
    }
    return false;
}

bool fdinfo_mem_bytes(const struct fdinfo *fi, const char *region, enum fdinfo_mem_kind kind,
                      uint64_t *bytes)
{
    if ((unsigned)kind >= FDINFO_MEM_KINDS)
        return false;
    for (unsigned i = 0; i < fi->n_regions; i++) {
        const struct fdinfo_region *r = &fi->regions[i];
        if (strcmp(r->name, region) == 0 && (r->has & (1u << kind))) {
            *bytes = r->bytes[kind];
            return true;
        }
    }
    return false;
}

bool fdinfo_resident_bytes(const struct fdinfo *fi, const char *region, uint64_t *bytes)
{
    return fdinfo_mem_bytes(fi, region, FDINFO_MEM_RESIDENT, bytes) ||
           fdinfo_mem_bytes(fi, region, FDINFO_MEM_LEGACY, bytes);
}
