/*
 * Tests for the DRM fdinfo parser: the two real amdgpu samples (tests/fixtures/fdinfo/real),
 * one generated text per kernel era (tests/fixtures/fdinfo/generated, values listed in its
 * GENERATED.md), and tables of malformed lines, units and limits.
 */
#include "fdinfo.c"

#include <stdint.h>

#include "test.h"
#include "util.h"

#define REAL "tests/fixtures/fdinfo/real/"
#define GEN  "tests/fixtures/fdinfo/generated/"

static int parse_file(const char *path, struct fdinfo *fi)
{
    size_t len;
    char *text = test_read_file(path, &len);
    TEST_CHECK(text != NULL);
    if (!text) {
        memset(fi, 0, sizeof(*fi));
        return -2;
    }
    char err[128] = "";
    int rc = fdinfo_parse(text, len, fi, err, sizeof(err));
    free(text);
    return rc;
}

static uint64_t mem(const struct fdinfo *fi, const char *region, enum fdinfo_mem_kind kind)
{
    uint64_t v = UINT64_MAX;
    if (!fdinfo_mem_bytes(fi, region, kind, &v))
        return UINT64_MAX; /* "unknown" sentinel for the checks below */
    return v;
}

static uint64_t engine(const struct fdinfo *fi, const char *name)
{
    uint64_t v;
    return fdinfo_engine_ns(fi, name, &v) ? v : UINT64_MAX;
}

TEST(real_drm_print_memory_stats)
{
    struct fdinfo fi;
    TEST_CHECK_INT(parse_file(REAL "amdgpu-fdinfo-drm_print_memory_stats-example.txt", &fi), 0);
    TEST_CHECK_STR(fi.driver, "amdgpu");
    TEST_CHECK_STR(fi.pdev, "0000:04:00.0");
    TEST_CHECK(fi.has_client_id && fi.client_id == 4);
    TEST_CHECK(fi.has_pasid && fi.pasid == 32771);
    TEST_CHECK(!fi.legacy_format);
    TEST_CHECK_INT(fi.malformed, 0);
    TEST_CHECK_INT(fi.dropped, 0);
    TEST_CHECK_INT(fi.n_regions, 3);
    TEST_CHECK_INT(mem(&fi, "cpu", FDINFO_MEM_TOTAL), 0);
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_TOTAL), 2392 * 1024ull);
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_RESIDENT), 2392 * 1024ull);
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_SHARED), 0);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_TOTAL), 44564 * 1024ull);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_SHARED), 31952 * 1024ull);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_ACTIVE), 0);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_PURGEABLE), 0);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_RESIDENT), 44564 * 1024ull);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_LEGACY), 44564 * 1024ull);
    /* SPACE+TAB separators */
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_LEGACY), 2392 * 1024ull);
    TEST_CHECK_INT(mem(&fi, "cpu", FDINFO_MEM_LEGACY), 0);
    TEST_CHECK_INT(fi.amd_has, (1u << FDINFO_AMD_KEYS) - 1);
    TEST_CHECK_INT(fi.amd[FDINFO_AMD_VISIBLE_VRAM], 44564 * 1024ull);
    TEST_CHECK_INT(fi.amd[FDINFO_AMD_EVICTED_VRAM], 0);
    TEST_CHECK_INT(fi.amd[FDINFO_AMD_REQUESTED_VISIBLE_VRAM], 11952 * 1024ull);
    TEST_CHECK_INT(fi.amd[FDINFO_AMD_REQUESTED_GTT], 2392 * 1024ull);
    TEST_CHECK_INT(fi.n_engines, 1);
    TEST_CHECK_INT(engine(&fi, "compute"), 46464671);
    TEST_CHECK_INT(engine(&fi, "gfx"), UINT64_MAX); /* absent: unknown, not 0 */
}

TEST(real_issue87_legacy_keys)
{
    struct fdinfo fi;
    TEST_CHECK_INT(parse_file(REAL "amdgpu-fdinfo-amdgpu_top-issue87.txt", &fi), 0);
    TEST_CHECK_STR(fi.pdev, "0000:08:00.0");
    TEST_CHECK(fi.has_client_id && fi.client_id == 217);
    TEST_CHECK(fi.has_pasid && fi.pasid == 32784);
    TEST_CHECK_INT(fi.malformed, 0);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_LEGACY), 2068 * 1024ull);
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_LEGACY), 8192 * 1024ull);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_RESIDENT), UINT64_MAX);
    uint64_t v = 0;
    TEST_CHECK(fdinfo_resident_bytes(&fi, "vram", &v) && v == 2068 * 1024ull);
    TEST_CHECK(!fdinfo_resident_bytes(&fi, "doorbell", &v));
    TEST_CHECK_INT(engine(&fi, "gfx"), 107322799);
    TEST_CHECK_INT(fi.amd_has, 0);
}

TEST(gen_v5_14_old_keys)
{
    struct fdinfo fi;
    TEST_CHECK_INT(parse_file(GEN "amdgpu-v5.14.txt", &fi), 0);
    TEST_CHECK(fi.legacy_format);
    TEST_CHECK(!fi.has_driver);
    TEST_CHECK_STR(fi.pdev, "0000:03:00.0");
    TEST_CHECK(fi.has_pasid && fi.pasid == 32770);
    TEST_CHECK(!fi.has_client_id);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_LEGACY), 1073741824ull);
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_LEGACY), 2097152);
    TEST_CHECK_INT(mem(&fi, "cpu", FDINFO_MEM_LEGACY), 0);
    TEST_CHECK_INT(fi.n_engines, 0);
    TEST_CHECK_INT(fi.malformed, 0);
}

TEST(gen_v5_19)
{
    struct fdinfo fi;
    TEST_CHECK_INT(parse_file(GEN "amdgpu-v5.19.txt", &fi), 0);
    TEST_CHECK(fi.has_client_id && fi.client_id == 88);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_LEGACY), 268435456);
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_LEGACY), 4194304);
    TEST_CHECK_INT(engine(&fi, "gfx"), 5000000000ull);
    TEST_CHECK_INT(engine(&fi, "dec"), 12345);
    TEST_CHECK_INT(fi.malformed, 0);
}

TEST(gen_v6_4_space_tab_and_amd_keys)
{
    struct fdinfo fi;
    TEST_CHECK_INT(parse_file(GEN "amdgpu-v6.4.txt", &fi), 0);
    TEST_CHECK(fi.has_client_id && fi.client_id == 1021);
    TEST_CHECK_STR(fi.pdev, "0000:c1:00.0");
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_LEGACY), 8589934592ull);
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_LEGACY), 12582912);
    TEST_CHECK_INT(fi.amd[FDINFO_AMD_EVICTED_VRAM], 1048576);
    TEST_CHECK_INT(fi.amd[FDINFO_AMD_REQUESTED_VISIBLE_VRAM], 67108864);
    TEST_CHECK_INT(fi.amd_has, (1u << FDINFO_AMD_KEYS) - 1);
    TEST_CHECK_INT(engine(&fi, "gfx"), 1000);
    TEST_CHECK_INT(fi.malformed, 0);
}

TEST(gen_v6_12_mi300x)
{
    struct fdinfo fi;
    TEST_CHECK_INT(parse_file(GEN "amdgpu-v6.12-mi300x.txt", &fi), 0);
    TEST_CHECK_INT(fi.malformed, 0);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_TOTAL), 68719476736ull);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_RESIDENT), 68719476736ull);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_ACTIVE), 4097);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_LEGACY), 68719476736ull);
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_RESIDENT), 6291456);
    TEST_CHECK_INT(mem(&fi, "doorbell", FDINFO_MEM_TOTAL), 8192);
    TEST_CHECK_INT(mem(&fi, "doorbell", FDINFO_MEM_SHARED), UINT64_MAX);
    TEST_CHECK_INT(fi.n_engines, 0);
    TEST_CHECK_INT(fi.amd[FDINFO_AMD_REQUESTED_VRAM], 68719476736ull);
    TEST_CHECK(!(fi.amd_has & (1u << FDINFO_AMD_VISIBLE_VRAM)));
    TEST_CHECK(!(fi.amd_has & (1u << FDINFO_AMD_REQUESTED_VISIBLE_VRAM)));
}

/* Read-only lookups: the parser's find_* create what they do not find. */
static bool has_region(const struct fdinfo *fi, const char *name)
{
    for (unsigned i = 0; i < fi->n_regions; i++)
        if (strcmp(fi->regions[i].name, name) == 0)
            return true;
    return false;
}

static const struct fdinfo_engine *engine_named(const struct fdinfo *fi, const char *name)
{
    for (unsigned i = 0; i < fi->n_engines; i++)
        if (strcmp(fi->engines[i].name, name) == 0)
            return &fi->engines[i];
    return NULL;
}

TEST(gen_apu_without_vram_or_final_newline)
{
    struct fdinfo fi;
    TEST_CHECK_INT(parse_file(GEN "amdgpu-v6.12-mi300a-apu-nonl.txt", &fi), 0);
    TEST_CHECK_INT(mem(&fi, "vram", FDINFO_MEM_TOTAL), UINT64_MAX);
    TEST_CHECK(!has_region(&fi, "vram"));
    TEST_CHECK_INT(mem(&fi, "gtt", FDINFO_MEM_RESIDENT), 1048576);
    TEST_CHECK_INT(engine(&fi, "gfx"), 7);
    TEST_CHECK_INT(engine(&fi, "compute"), 9);
    TEST_CHECK_INT(fi.malformed, 0);
}

TEST(gen_i915_capacity)
{
    struct fdinfo fi;
    TEST_CHECK_INT(parse_file(GEN "i915.txt", &fi), 0);
    TEST_CHECK_STR(fi.driver, "i915");
    TEST_CHECK_INT(engine(&fi, "render"), 9288864723ull);
    TEST_CHECK_INT(engine(&fi, "video-enhance"), 0);
    const struct fdinfo_engine *e = engine_named(&fi, "video");
    TEST_CHECK(e && e->has_capacity && e->capacity == 2 && e->has_busy && e->busy_ns == 0);
    TEST_CHECK_INT(fi.malformed, 0);
}

/*
 * One line after "drm-driver: amdgpu": whether it counts as malformed and what gfx engine
 * time / vram legacy size / pasid it leaves (UINT64_MAX = unknown).
 */
static const struct {
    const char *line;
    unsigned malformed;
    uint64_t gfx_ns, vram, pasid;
} line_cases[] = {
    {"drm-engine-gfx:\t12 ns", 0, 12, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx: \t12 ns", 0, 12, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:12 ns", 0, 12, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:  \t \t12 ns", 0, 12, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t18446744073709551615 ns", 0, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t18446744073709551616 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t99999999999999999999999 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t12", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t12 ms", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t12ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t12  ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t12 ns ", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t12 ns\r", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t-12 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t+12 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t0x12 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-:\t12 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-g fx:\t12 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-abcdefghijklmnopqrstuvwxyz:\t12 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-engine-gfx:\t12 ns\ndrm-engine-gfx:\t13 ns", 1, 12, UINT64_MAX, UINT64_MAX},
    {"drm-memory-vram:\t3 KiB", 0, UINT64_MAX, 3072, UINT64_MAX},
    {"drm-memory-vram:\t3 MiB", 0, UINT64_MAX, 3145728, UINT64_MAX},
    {"drm-memory-vram:\t3", 0, UINT64_MAX, 3, UINT64_MAX},
    {"drm-memory-vram:\t0", 0, UINT64_MAX, 0, UINT64_MAX},
    {"drm-memory-vram:\t3 GiB", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-memory-vram:\t3 kB", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-memory-vram:\t3 kib", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-memory-vram:\t3KiB", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-memory-vram:\t3.5 MiB", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-memory-vram:\t17592186044415 MiB", 0, UINT64_MAX, 17592186044415ull << 20, UINT64_MAX},
    {"drm-memory-vram:\t17592186044416 MiB", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-memory-vram:\t18014398509481984 KiB", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"vram mem:\t3 kB", 0, UINT64_MAX, 3072, UINT64_MAX},
    {"vram mem:\t3 KB", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"pasid:\t32771", 0, UINT64_MAX, UINT64_MAX, 32771},
    {"pasid:\t32771 ns", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"pasid:\t", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"no colon here", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {":\t12", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-driver:\tsecond", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-client-id:\t4 2", 1, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-cycles-gfx:\t77", 0, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"drm-client-name:\tany thing: at all", 0, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"gfx0:\t  3.25%", 0, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"", 0, UINT64_MAX, UINT64_MAX, UINT64_MAX},
    {"\n\n", 0, UINT64_MAX, UINT64_MAX, UINT64_MAX},
};

TEST(line_table)
{
    for (size_t i = 0; i < ARRAY_LEN(line_cases); i++) {
        char text[256];
        snprintf(text, sizeof(text), "drm-driver:\tamdgpu\n%s\n", line_cases[i].line);
        struct fdinfo fi;
        TEST_CHECK_INT(fdinfo_parse(text, strlen(text), &fi, NULL, 0), 0);
        uint64_t pasid = fi.has_pasid ? fi.pasid : UINT64_MAX;
        if (fi.malformed != line_cases[i].malformed || engine(&fi, "gfx") != line_cases[i].gfx_ns ||
            mem(&fi, "vram", FDINFO_MEM_LEGACY) != line_cases[i].vram ||
            pasid != line_cases[i].pasid) {
            fprintf(stderr, "case %zu '%s': malformed %u gfx %llu vram %llu pasid %llu\n", i,
                    line_cases[i].line, fi.malformed, (unsigned long long)engine(&fi, "gfx"),
                    (unsigned long long)mem(&fi, "vram", FDINFO_MEM_LEGACY),
                    (unsigned long long)pasid);
            TEST_CHECK(0);
        }
        TEST_CHECK_STR(fi.driver, "amdgpu");
    }
}

TEST(no_driver_key)
{
    char err[64] = "";
    struct fdinfo fi;
    const char *text = "pos:\t0\nflags:\t02\ndrm-engine-gfx:\t5 ns\n";
    TEST_CHECK_INT(fdinfo_parse(text, strlen(text), &fi, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "no 'drm-driver' key");
    TEST_CHECK_INT(engine(&fi, "gfx"), 5); /* filled all the same */
    TEST_CHECK_INT(fdinfo_parse("", 0, &fi, NULL, 0), -1);
    TEST_CHECK_INT(fi.n_engines, 0);
}

TEST(not_nul_terminated_and_embedded_nul)
{
    /* the parser must stop at len: the bytes after it would change the engine value */
    const char text[] = "drm-driver:\tamdgpu\ndrm-engine-gfx:\t12 ns9999";
    struct fdinfo fi;
    TEST_CHECK_INT(fdinfo_parse(text, sizeof(text) - 1 - 4, &fi, NULL, 0), 0);
    TEST_CHECK_INT(engine(&fi, "gfx"), 12);
    const char nul[] = "drm-driver:\tamdgpu\ndrm-engine-gfx:\t1\0 ns\n";
    TEST_CHECK_INT(fdinfo_parse(nul, sizeof(nul) - 1, &fi, NULL, 0), 0);
    TEST_CHECK_INT(engine(&fi, "gfx"), UINT64_MAX);
    TEST_CHECK_INT(fi.malformed, 1);
    const char drv[] = "drm-driver:\tamd\0gpu\n";
    TEST_CHECK_INT(fdinfo_parse(drv, sizeof(drv) - 1, &fi, NULL, 0), -1);
    TEST_CHECK_INT(fi.malformed, 1);
}

TEST(capacity_limits)
{
    struct sbuf b = {0};
    sbuf_puts(&b, "drm-driver:\tx\n");
    for (int i = 0; i < FDINFO_MAX_ENGINES + 3; i++)
        sbuf_printf(&b, "drm-engine-e%d:\t%d ns\n", i, i);
    for (int i = 0; i < FDINFO_MAX_REGIONS + 2; i++)
        sbuf_printf(&b, "drm-total-r%d:\t%d KiB\n", i, i);
    struct fdinfo fi;
    TEST_CHECK_INT(fdinfo_parse(b.buf, b.len, &fi, NULL, 0), 0);
    TEST_CHECK_INT(fi.n_engines, FDINFO_MAX_ENGINES);
    TEST_CHECK_INT(fi.n_regions, FDINFO_MAX_REGIONS);
    TEST_CHECK_INT(fi.dropped, 5);
    TEST_CHECK_INT(fi.malformed, 0);
    TEST_CHECK_INT(engine(&fi, "e15"), 15);
    TEST_CHECK_INT(engine(&fi, "e16"), UINT64_MAX);
    TEST_CHECK_INT(mem(&fi, "r15", FDINFO_MEM_TOTAL), 15 * 1024);
    /* the longest name that fits, and one more */
    char name[FDINFO_NAME_MAX + 1];
    memset(name, 'a', sizeof(name));
    name[FDINFO_NAME_MAX - 1] = '\0';
    sbuf_reset(&b);
    sbuf_printf(&b, "drm-driver:\tx\ndrm-engine-%s:\t1 ns\n", name);
    TEST_CHECK_INT(fdinfo_parse(b.buf, b.len, &fi, NULL, 0), 0);
    TEST_CHECK_INT(engine(&fi, name), 1);
    name[FDINFO_NAME_MAX - 1] = 'a';
    name[FDINFO_NAME_MAX] = '\0';
    sbuf_reset(&b);
    sbuf_printf(&b, "drm-driver:\tx\ndrm-engine-%s:\t1 ns\n", name);
    TEST_CHECK_INT(fdinfo_parse(b.buf, b.len, &fi, NULL, 0), 0);
    TEST_CHECK_INT(fi.n_engines, 0);
    TEST_CHECK_INT(fi.malformed, 1);
    sbuf_free(&b);
}

TEST(overwrites_previous_result)
{
    struct fdinfo fi;
    const char *a = "drm-driver:\tamdgpu\ndrm-client-id:\t9\ndrm-engine-gfx:\t1 ns\n";
    const char *b = "drm-driver:\tamdgpu\n";
    TEST_CHECK_INT(fdinfo_parse(a, strlen(a), &fi, NULL, 0), 0);
    TEST_CHECK_INT(fdinfo_parse(b, strlen(b), &fi, NULL, 0), 0);
    TEST_CHECK(!fi.has_client_id);
    TEST_CHECK_INT(fi.n_engines, 0);
    uint64_t v;
    TEST_CHECK(!fdinfo_mem_bytes(&fi, "vram", FDINFO_MEM_KINDS, &v));
}

int main(void)
{
    RUN(real_drm_print_memory_stats);
    RUN(real_issue87_legacy_keys);
    RUN(gen_v5_14_old_keys);
    RUN(gen_v5_19);
    RUN(gen_v6_4_space_tab_and_amd_keys);
    RUN(gen_v6_12_mi300x);
    RUN(gen_apu_without_vram_or_final_newline);
    RUN(gen_i915_capacity);
    RUN(line_table);
    RUN(no_driver_key);
    RUN(not_nul_terminated_and_embedded_nul);
    RUN(capacity_limits);
    RUN(overwrites_previous_result);
    return test_done();
}
