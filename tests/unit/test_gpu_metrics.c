/*
 * Tests of the gpu_metrics / xcp_metrics parser against the real MangoHud blobs
 * (tests/fixtures/gpu_metrics/real) and the synthetic ones written by
 * tests/gen/gpu_metrics_blob.py (tests/fixtures/gpu_metrics/generated). The expected values
 * of the synthetic blobs repeat the generator's _SAMPLES in base units: change both together.
 * Every rejected input must also leave every value NaN, so that a caller that ignores the
 * return code still cannot report a wrong number. Run from the repository root.
 */
#include "gpu_metrics.c"

#include "test.h"

#define REAL "tests/fixtures/gpu_metrics/real/"
#define GEN  "tests/fixtures/gpu_metrics/generated/"
#define EPS  1e-9

struct blob {
    unsigned char *data;
    size_t len;
};

static struct blob load(const char *path)
{
    struct blob b = {NULL, 0};
    b.data = (unsigned char *)test_read_file(path, &b.len);
    if (!b.data)
        fprintf(stderr, "cannot read '%s' (run from the repository root)\n", path);
    return b;
}

/* An accumulator is `want`, or absent when want is NaN. */
static int acc_is(struct gpum_acc a, double want)
{
    return isnan(want) ? a.bits == 0 : a.bits != 0 && (double)a.v == want;
}

#define TEST_CHECK_ACC(a, want)                                                                    \
    do {                                                                                           \
        if (!acc_is((a), (want)))                                                                  \
            fprintf(stderr, "  %s: bits %u value %llu, want %g\n", #a, (unsigned)(a).bits,         \
                    (unsigned long long)(a).v, (double)(want));                                    \
        TEST_CHECK(acc_is((a), (want)));                                                           \
    } while (0)

/* Every double of the struct is NaN, every accumulator absent and num_partition is -1. */
static int metrics_all_nan(const struct gpu_metrics *m)
{
    const double scalars[] = {
        m->temp_edge,  m->temp_hotspot, m->temp_mem,        m->temp_vrgfx,     m->temp_vrsoc,
        m->temp_vrmem, m->gfx_activity, m->umc_activity,    m->mm_activity,    m->socket_power,
        m->energy,     m->uclk,         m->pcie_link_width, m->pcie_link_speed};
    int ok = m->num_partition == -1;
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
        ok &= isnan(scalars[i]) != 0;
    for (size_t i = 0; i < GPUM_NUM_HBM; i++)
        ok &= isnan(m->temp_hbm[i]) != 0;
    for (size_t i = 0; i < GPUM_MAX_GFXCLK; i++)
        ok &= isnan(m->gfxclk[i]) != 0;
    for (size_t i = 0; i < GPUM_MAX_CLK; i++)
        ok &= isnan(m->socclk[i]) && isnan(m->vclk0[i]) && isnan(m->dclk0[i]);
    for (size_t x = 0; x < GPUM_MAX_XCP; x++)
        for (size_t c = 0; c < GPUM_MAX_XCC; c++)
            ok &= isnan(m->xcp[x].gfx_busy[c]) && m->xcp[x].gfx_busy_acc[c].bits == 0;
    for (size_t c = 0; c < GPUM_MAX_XCC; c++)
        ok &= isnan(m->xcc_busy[c]) && m->xcc_busy_acc[c].bits == 0;
    ok &= m->accumulation_counter.bits == 0 && m->gfx_activity_acc.bits == 0;
    for (size_t r = 0; r < GPUM_RES_N; r++)
        ok &= m->residency[r].bits == 0;
    return ok;
}

static int partition_all_nan(const struct gpu_partition_metrics *p)
{
    int ok = isnan(p->uclk) != 0;
    for (size_t i = 0; i < GPUM_MAX_XCC; i++)
        ok &= isnan(p->gfxclk[i]) && isnan(p->gfx_busy[i]) && p->gfx_busy_acc[i].bits == 0;
    return ok && p->accumulation_counter.bits == 0;
}

/* MHz list from the generator, 0 = not set (expected NaN), converted to Hz. */
static double mhz(int v)
{
    return v ? v * 1e6 : NAN;
}

TEST(real_v1_3_decodes_like_mangohud)
{
    struct blob b = load(REAL "gpu_metrics");
    struct gpu_metrics m;
    char err[128] = "";

    TEST_CHECK_INT(b.len, 120);
    TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, err, sizeof(err)), 0);
    TEST_CHECK_STR(err, "");
    TEST_CHECK_STR(m.layout, "v1_3");
    TEST_CHECK_INT(m.structure_size, 120);
    TEST_CHECK_INT(m.format_revision, 1);
    TEST_CHECK_INT(m.content_revision, 3);
    TEST_CHECK_DBL(m.gfx_activity, 0.64, EPS);
    TEST_CHECK_DBL(m.umc_activity, 0.06, EPS);
    TEST_CHECK_DBL(m.socket_power, 33, EPS);
    TEST_CHECK_DBL(m.gfxclk[0], 2.165e9, EPS);
    TEST_CHECK_DBL(m.uclk, 1e9, EPS);
    TEST_CHECK_DBL(m.temp_edge, 36, EPS);
    TEST_CHECK_DBL(m.temp_hotspot, 49, EPS);
    TEST_CHECK_DBL(m.temp_mem, 36, EPS);
    TEST_CHECK_DBL(m.pcie_link_width, 8, EPS);
    TEST_CHECK_DBL(m.pcie_link_speed, 8.0, EPS);
    /* temperature_hbm[] is all-ones in this capture; v1_3 has a single gfxclk. */
    for (size_t i = 0; i < GPUM_NUM_HBM; i++)
        TEST_CHECK(isnan(m.temp_hbm[i]));
    for (size_t i = 1; i < GPUM_MAX_GFXCLK; i++)
        TEST_CHECK(isnan(m.gfxclk[i]));
    TEST_CHECK_INT(m.num_partition, -1);
    free(b.data);
}

/* gfx_activity_acc / mem_activity_acc are all-ones in the capture: check the raw bytes too. */
TEST(real_v1_3_sentinels)
{
    struct blob b = load(REAL "gpu_metrics");
    struct gpum_v1_3 raw;

    TEST_CHECK(b.len == sizeof(raw));
    if (b.len != sizeof(raw)) {
        free(b.data);
        return;
    }
    memcpy(&raw, b.data, sizeof(raw));
    TEST_CHECK(isnan(u32v(raw.gfx_activity_acc)));
    TEST_CHECK(isnan(u32v(raw.mem_activity_acc)));
    TEST_CHECK(raw.firmware_timestamp == UINT64_MAX);
    TEST_CHECK(raw.energy_accumulator != UINT64_MAX && raw.energy_accumulator != 0);
    free(b.data);
}

struct expect {
    const char *file, *layout;
    double edge, hotspot, mem, vrgfx, vrsoc, vrmem;
    double gfx, umc, mm, power, energy;
    int gfxclk[GPUM_MAX_GFXCLK], socclk[GPUM_MAX_CLK], vclk0[GPUM_MAX_CLK], dclk0[GPUM_MAX_CLK];
    double uclk_mhz, pcie_width, pcie_speed;
    int num_partition;
};

static const struct expect expects[] = {
    {"v1_3.bin", "v1_3", 41,     52,     43,    44,    45,   46, 0.37, 0.12, 0.03,
     187,        3.5,    {2100}, {1200}, {900}, {800}, 1000, 16, 16.0, -1},
    {"v1_4.bin",   "v1_4", NAN,    71,   72,  NAN,  73,
     NAN,          0.55,   0.21,   NAN,  401, 1000, {1700, 1701, 1702, 1703},
     {1100, 1101}, {1300}, {1400}, 1600, 16,  32.0, -1},
    {"v1_5.bin",
     "v1_5",
     NAN,
     74,
     75,
     NAN,
     76,
     NAN,
     0.0,
     0.01,
     NAN,
     550,
     16777216.0,
     {2100, 2100, 2100, 2100, 2100, 2100, 2100, 2100},
     {1200, 1201, 1202, 1203},
     {1300, 1301},
     {1400, 1401},
     1300,
     8,
     25.0,
     -1},
    {"v1_6_mainline.bin",
     "v1_6_mainline",
     NAN,
     77,
     78,
     NAN,
     79,
     NAN,
     0.99,
     0.02,
     NAN,
     610,
     123456789.0 / 65536.0,
     {2000, 2001},
     {1000},
     {900},
     {950},
     1250,
     4,
     8.0,
     -1},
    {"v1_6_rocm.bin",
     "v1_6_rocm",
     NAN,
     81,
     82,
     NAN,
     83,
     NAN,
     1.0,
     0.30,
     NAN,
     650,
     2,
     {2100, 2099, 2098, 2097},
     {1100},
     {1300},
     {1400},
     1300,
     16,
     32.0,
     1},
    {"v1_7.bin",
     "v1_7",
     NAN,
     84,
     85,
     NAN,
     86,
     NAN,
     0.50,
     0.40,
     NAN,
     700,
     5,
     {1900, 1900, 1900, 1900, 1900, 1900, 1900, 1900},
     {1100, 1100, 1100, 1100},
     {1300, 1300, 1300, 1300},
     {1400, 1400, 1400, 1400},
     1300,
     16,
     32.0,
     2},
    {"v1_8.bin",
     "v1_8",
     NAN,
     87,
     88,
     NAN,
     89,
     NAN,
     0.25,
     0.05,
     NAN,
     750,
     7.25,
     {2100, 2099, 2098, 2097, 2096, 2095, 2094, 2093},
     {1100, 1101, 1102, 1103},
     {1300, 1301, 1302, 1303},
     {1400, 1401, 1402, 1403},
     1300,
     16,
     32.0,
     8},
};

#define N_EXPECTS (sizeof(expects) / sizeof(expects[0]))

static int parse_file(const char *name, struct gpu_metrics *m, char *err, size_t errlen)
{
    char path[256];
    snprintf(path, sizeof(path), GEN "%s", name);
    struct blob b = load(path);
    int rc = b.data ? gpum_parse(b.data, b.len, m, err, errlen) : -2;
    free(b.data);
    return rc;
}

TEST(generated_layouts_decode)
{
    for (size_t i = 0; i < N_EXPECTS; i++) {
        const struct expect *e = &expects[i];
        struct gpu_metrics m;
        char err[128] = "";

        TEST_CHECK_INT(parse_file(e->file, &m, err, sizeof(err)), 0);
        TEST_CHECK_STR(err, "");
        TEST_CHECK_STR(m.layout, e->layout);
        TEST_CHECK_DBL(m.temp_edge, e->edge, EPS);
        TEST_CHECK_DBL(m.temp_hotspot, e->hotspot, EPS);
        TEST_CHECK_DBL(m.temp_mem, e->mem, EPS);
        TEST_CHECK_DBL(m.temp_vrgfx, e->vrgfx, EPS);
        TEST_CHECK_DBL(m.temp_vrsoc, e->vrsoc, EPS);
        TEST_CHECK_DBL(m.temp_vrmem, e->vrmem, EPS);
        TEST_CHECK_DBL(m.gfx_activity, e->gfx, EPS);
        TEST_CHECK_DBL(m.umc_activity, e->umc, EPS);
        TEST_CHECK_DBL(m.mm_activity, e->mm, EPS);
        TEST_CHECK_DBL(m.socket_power, e->power, EPS);
        TEST_CHECK_DBL(m.energy, e->energy, EPS);
        for (size_t k = 0; k < GPUM_MAX_GFXCLK; k++)
            TEST_CHECK_DBL(m.gfxclk[k], mhz(e->gfxclk[k]), EPS);
        for (size_t k = 0; k < GPUM_MAX_CLK; k++) {
            TEST_CHECK_DBL(m.socclk[k], mhz(e->socclk[k]), EPS);
            TEST_CHECK_DBL(m.vclk0[k], mhz(e->vclk0[k]), EPS);
            TEST_CHECK_DBL(m.dclk0[k], mhz(e->dclk0[k]), EPS);
        }
        TEST_CHECK_DBL(m.uclk, e->uclk_mhz * 1e6, EPS);
        TEST_CHECK_DBL(m.pcie_link_width, e->pcie_width, EPS);
        TEST_CHECK_DBL(m.pcie_link_speed, e->pcie_speed, EPS);
        TEST_CHECK_INT(m.num_partition, e->num_partition);
        /* Only v1_3 has temperature_hbm. */
        for (size_t k = 0; k < GPUM_NUM_HBM; k++)
            TEST_CHECK_DBL(m.temp_hbm[k], i == 0 && k < 4 ? 61.0 + (double)k : NAN, EPS);
        if (err[0])
            fprintf(stderr, "%s: %s\n", e->file, err);
    }
}

/* Layouts without xcp_stats leave every XCP NaN. */
TEST(no_xcp_stats_before_v1_6_rocm)
{
    const char *files[] = {"v1_3.bin", "v1_4.bin", "v1_5.bin", "v1_6_mainline.bin"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        struct gpu_metrics m;
        TEST_CHECK_INT(parse_file(files[i], &m, NULL, 0), 0);
        TEST_CHECK_INT(m.num_partition, -1);
        for (size_t x = 0; x < GPUM_MAX_XCP; x++)
            for (size_t c = 0; c < GPUM_MAX_XCC; c++)
                TEST_CHECK(isnan(m.xcp[x].gfx_busy[c]) && m.xcp[x].gfx_busy_acc[c].bits == 0);
    }
}

TEST(xcp_busy_spx_v1_6_rocm)
{
    struct gpu_metrics m;
    TEST_CHECK_INT(parse_file("v1_6_rocm.bin", &m, NULL, 0), 0);
    TEST_CHECK_INT(m.num_partition, 1);
    for (size_t c = 0; c < GPUM_MAX_XCC; c++) {
        TEST_CHECK_DBL(m.xcp[0].gfx_busy[c], (double)(c + 1) * 10 / 100, EPS);
        TEST_CHECK_ACC(m.xcp[0].gfx_busy_acc[c], (double)(c + 1) * 1000);
    }
    for (size_t x = 1; x < GPUM_MAX_XCP; x++)
        for (size_t c = 0; c < GPUM_MAX_XCC; c++)
            TEST_CHECK(isnan(m.xcp[x].gfx_busy[c]) && m.xcp[x].gfx_busy_acc[c].bits == 0);
}

/* DPX: xcp_stats[2] holds data beyond num_partition that must not come out. */
TEST(xcp_busy_dpx_v1_7)
{
    struct gpu_metrics m;
    TEST_CHECK_INT(parse_file("v1_7.bin", &m, NULL, 0), 0);
    TEST_CHECK_INT(m.num_partition, 2);
    for (size_t x = 0; x < 2; x++) {
        for (size_t c = 0; c < GPUM_MAX_XCC; c++) {
            double busy = c < 4 ? (double)(10 * (x + 1) + 1 + c) / 100 : NAN;
            double acc = c < 4 ? (double)(100 * (x + 1) + 10 * (c + 1)) : NAN;
            TEST_CHECK_DBL(m.xcp[x].gfx_busy[c], busy, EPS);
            TEST_CHECK_ACC(m.xcp[x].gfx_busy_acc[c], acc);
        }
    }
    for (size_t x = 2; x < GPUM_MAX_XCP; x++)
        for (size_t c = 0; c < GPUM_MAX_XCC; c++)
            TEST_CHECK(isnan(m.xcp[x].gfx_busy[c]) && m.xcp[x].gfx_busy_acc[c].bits == 0);
}

/* CPX: one XCC per partition; XCP 3 busy is all-ones. */
TEST(xcp_busy_cpx_v1_8)
{
    struct gpu_metrics m;
    TEST_CHECK_INT(parse_file("v1_8.bin", &m, NULL, 0), 0);
    TEST_CHECK_INT(m.num_partition, 8);
    for (size_t x = 0; x < GPUM_MAX_XCP; x++) {
        TEST_CHECK_DBL(m.xcp[x].gfx_busy[0], x == 3 ? NAN : (double)(5 + 10 * x) / 100, EPS);
        TEST_CHECK_ACC(m.xcp[x].gfx_busy_acc[0], (double)(1000 * (x + 1)));
        for (size_t c = 1; c < GPUM_MAX_XCC; c++)
            TEST_CHECK(isnan(m.xcp[x].gfx_busy[c]) && m.xcp[x].gfx_busy_acc[c].bits == 0);
    }
}

/* num_partition above NUM_XCP or all-ones: no XCP data is trusted. */
TEST(num_partition_out_of_range)
{
    struct blob b = load(GEN "v1_8.bin");
    const uint16_t values[] = {9, 300, UINT16_MAX};
    if (!b.data || b.len != sizeof(struct gpum_v1_8)) {
        TEST_CHECK(0);
        free(b.data);
        return;
    }
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        struct gpu_metrics m;
        memcpy(b.data + offsetof(struct gpum_v1_8, num_partition), &values[i], 2);
        TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, NULL, 0), 0);
        TEST_CHECK_INT(m.num_partition, -1);
        TEST_CHECK(isnan(m.xcp[0].gfx_busy[0]));
        TEST_CHECK_DBL(m.socket_power, 750, EPS);
    }
    free(b.data);
}

TEST(all_sentinel_blobs_are_nan)
{
    const char *files[] = {"sentinel_v1_8.bin", "sentinel_v1_6_rocm.bin"};
    const char *layouts[] = {"v1_8", "v1_6_rocm"};
    for (size_t i = 0; i < 2; i++) {
        struct gpu_metrics m;
        char err[128] = "";
        TEST_CHECK_INT(parse_file(files[i], &m, err, sizeof(err)), 0);
        TEST_CHECK_STR(m.layout, layouts[i]);
        TEST_CHECK(metrics_all_nan(&m));
    }
}

TEST(partition_v1_0_decodes)
{
    struct blob b = load(GEN "partition_v1_0.bin");
    struct gpu_partition_metrics p;
    char err[128] = "";
    const int clk[GPUM_MAX_XCC] = {2100, 2101, 2102, 2103};
    const int busy[GPUM_MAX_XCC] = {33, 44, 55, 66};

    TEST_CHECK_INT(gpum_parse_partition(b.data, b.len, &p, err, sizeof(err)), 0);
    TEST_CHECK_STR(err, "");
    TEST_CHECK_INT(p.structure_size, 488);
    TEST_CHECK_INT(p.format_revision, 1);
    TEST_CHECK_INT(p.content_revision, 0);
    TEST_CHECK_DBL(p.uclk, 1.3e9, EPS);
    for (size_t i = 0; i < GPUM_MAX_XCC; i++) {
        TEST_CHECK_DBL(p.gfxclk[i], mhz(clk[i]), EPS);
        TEST_CHECK_DBL(p.gfx_busy[i], busy[i] ? busy[i] / 100.0 : NAN, EPS);
        TEST_CHECK_ACC(p.gfx_busy_acc[i], busy[i] ? busy[i] * 100.0 : NAN);
    }
    free(b.data);
}

struct broken {
    const char *path;
    int partition; /* 1: gpum_parse_partition, 0: gpum_parse */
    const char *msg;
};

static const struct broken brokens[] = {
    {GEN "broken_truncated_v1_5.bin", 0, "truncated: 200 of 360 bytes"},
    {GEN "broken_truncated_v1_8.bin", 0, "truncated: 3871 of 3872 bytes"},
    {GEN "broken_header_only.bin", 0, "truncated: 4 of 360 bytes"},
    {GEN "broken_size_v1_5.bin", 0, "size 400 does not match v1_5 (360)"},
    {GEN "broken_size_v1_5_120.bin", 0, "size 120 does not match v1_5 (360)"},
    {GEN "broken_size_v1_6.bin", 0, "size 1000 does not match v1_6 (384 or 1664)"},
    {GEN "broken_revision_1_9.bin", 0, "attr_count 4915274 does not fit structure_size 400"},
    {GEN "broken_v1_9_negative_count.bin", 0, "attr_count -1 does not fit structure_size 1150"},
    {GEN "broken_v1_9_count_too_big.bin", 0, "attr_count 1000 does not fit structure_size 1150"},
    {GEN "v1_9_cut8.bin", 0, "no attribute readable (truncated at byte 8 of 8)"},
    {GEN "v1_9_type_ge8.bin", 0,
     "no attribute readable (attribute of unknown type at byte 8 of "
     "1150)"},
    {GEN "broken_revision_4_0.bin", 0, "unsupported gpu_metrics revision 4.0"},
    {GEN "broken_all_ones.bin", 0, "unsupported gpu_metrics revision 255.255"},
    {REAL "gpu_metrics_invalid", 0, "unsupported gpu_metrics revision 0.0"},
    {GEN "broken_partition_size.bin", 1, "size 480 does not match partition_v1_0 (488)"},
    {GEN "broken_partition_revision.bin", 1, "unsupported xcp_metrics revision 1.2"},
    {GEN "v1_9_idle_mi300x.bin", 1, "unsupported xcp_metrics revision 1.9"},
    {GEN "broken_all_ones.bin", 1, "unsupported xcp_metrics revision 255.255"},
    {GEN "v1_8.bin", 1, "unsupported xcp_metrics revision 1.8"},
    {REAL "gpu_metrics", 1, "unsupported xcp_metrics revision 1.3"},
};

TEST(broken_files_rejected)
{
    for (size_t i = 0; i < sizeof(brokens) / sizeof(brokens[0]); i++) {
        const struct broken *t = &brokens[i];
        struct blob b = load(t->path);
        char err[128] = "";
        int rc;

        TEST_CHECK(b.data != NULL);
        if (t->partition) {
            struct gpu_partition_metrics p;
            rc = gpum_parse_partition(b.data, b.len, &p, err, sizeof(err));
            TEST_CHECK(partition_all_nan(&p));
        } else {
            struct gpu_metrics m;
            rc = gpum_parse(b.data, b.len, &m, err, sizeof(err));
            TEST_CHECK(metrics_all_nan(&m));
            TEST_CHECK(m.layout == NULL);
        }
        TEST_CHECK_INT(rc, -1);
        TEST_CHECK_STR(err, t->msg);
        free(b.data);
    }
}

TEST(tiny_inputs_rejected)
{
    static const unsigned char bytes[4] = {0x78, 0x00, 0x01, 0x03};
    const struct {
        const void *buf;
        size_t len;
        const char *msg;
    } cases[] = {
        {bytes, 0, "truncated: 0 of 4 bytes"}, {bytes, 1, "truncated: 1 of 4 bytes"},
        {bytes, 3, "truncated: 3 of 4 bytes"}, {bytes, 4, "truncated: 4 of 120 bytes"},
        {NULL, 0, "truncated: 0 of 4 bytes"},  {NULL, 100, "truncated: 0 of 4 bytes"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct gpu_metrics m;
        struct gpu_partition_metrics p;
        char err[128] = "";

        TEST_CHECK_INT(gpum_parse(cases[i].buf, cases[i].len, &m, err, sizeof(err)), -1);
        TEST_CHECK_STR(err, cases[i].msg);
        TEST_CHECK(metrics_all_nan(&m));
        err[0] = '\0';
        TEST_CHECK_INT(gpum_parse_partition(cases[i].buf, cases[i].len, &p, err, sizeof(err)), -1);
        TEST_CHECK(err[0] != '\0');
        TEST_CHECK(partition_all_nan(&p));
    }
}

/* Every prefix shorter than structure_size of every valid blob is rejected, values all NaN. */
TEST(every_truncation_rejected)
{
    const char *files[] = {REAL "gpu_metrics", GEN "v1_3.bin",          GEN "v1_4.bin",
                           GEN "v1_5.bin",     GEN "v1_6_mainline.bin", GEN "v1_6_rocm.bin",
                           GEN "v1_7.bin",     GEN "v1_8.bin",          GEN "partition_v1_0.bin"};
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        struct blob b = load(files[f]);
        int partition = strstr(files[f], "partition") != NULL;
        size_t bad = 0;

        TEST_CHECK(b.data != NULL && b.len >= 4);
        for (size_t len = 0; b.data && len < b.len; len++) {
            /* A short copy, so that ASan would see any read past len. */
            unsigned char *cut = malloc(len ? len : 1);
            char err[128] = "";
            int rc, nan_ok;

            memcpy(cut, b.data, len);
            if (partition) {
                struct gpu_partition_metrics p;
                rc = gpum_parse_partition(cut, len, &p, err, sizeof(err));
                nan_ok = partition_all_nan(&p);
            } else {
                struct gpu_metrics m;
                rc = gpum_parse(cut, len, &m, err, sizeof(err));
                nan_ok = metrics_all_nan(&m);
            }
            if (rc != -1 || !nan_ok || strncmp(err, "truncated: ", 11) != 0)
                bad++;
            free(cut);
        }
        if (bad)
            fprintf(stderr, "%s: %zu prefixes not rejected as truncated\n", files[f], bad);
        TEST_CHECK_INT(bad, 0);
        free(b.data);
    }
}

/* Extra bytes after structure_size are ignored; an unaligned buffer is fine. */
TEST(trailing_bytes_and_unaligned_buffer)
{
    struct blob b = load(GEN "v1_7.bin");
    unsigned char *buf = malloc(b.len + 16);
    struct gpu_metrics m;

    memset(buf, 0xAB, b.len + 16);
    memcpy(buf + 1, b.data, b.len);
    TEST_CHECK_INT(gpum_parse(buf + 1, b.len + 15, &m, NULL, 0), 0);
    TEST_CHECK_STR(m.layout, "v1_7");
    TEST_CHECK_DBL(m.socket_power, 700, EPS);
    TEST_CHECK_DBL(m.xcp[1].gfx_busy[3], 0.24, EPS);
    free(buf);
    free(b.data);
}

/* A NULL or too small error buffer is allowed and the message is cut, not overrun. */
TEST(error_buffer_handling)
{
    struct gpu_metrics m;
    char small[8];

    TEST_CHECK_INT(gpum_parse("\x00", 1, &m, NULL, 0), -1);
    memset(small, 'x', sizeof(small));
    TEST_CHECK_INT(gpum_parse("\x00", 1, &m, small, sizeof(small)), -1);
    TEST_CHECK_STR(small, "truncat");
    TEST_CHECK_INT(gpum_parse("\x00", 1, &m, small, 0), -1);
    TEST_CHECK_STR(small, "truncat");
}

/* ---- attribute tables (v1_9, partition v1_1) ------------------------------------------------ */

static const int idle_gfxclk[8] = {2098, 2100, 2110, 2105, 2103, 2109, 2105, 2115};

/* The facts GPUDiagnostics.jl's tests assert about the real idle MI300X v1_9 capture. */
TEST(v1_9_idle_mi300x_capture_facts)
{
    struct blob b = load(GEN "v1_9_idle_mi300x.bin");
    struct gpu_metrics m;
    char err[128] = "";
    static const unsigned char head[18] = {0x7E, 0x04, 0x01, 0x09, 0x2F, 0x00, 0x00, 0x00, 0x01,
                                           0x00, 0x20, 0x02, 0x00, 0x00, 0x00, 0x00, 0x2A, 0x00};

    TEST_CHECK_INT(b.len, 1150);
    TEST_CHECK(b.data && memcmp(b.data, head, sizeof(head)) == 0);
    TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, err, sizeof(err)), 0);
    TEST_CHECK_STR(err, "");
    TEST_CHECK_STR(m.layout, "v1_9");
    TEST_CHECK_INT(m.structure_size, 1150);
    TEST_CHECK_INT(m.attr_count, 47);
    TEST_CHECK_INT(m.attrs_parsed, 47);
    TEST_CHECK_INT(m.attrs_unknown, 0);
    TEST_CHECK(m.partial == NULL);
    TEST_CHECK_DBL(m.temp_hotspot, 42, EPS);
    TEST_CHECK_DBL(m.temp_mem, 37, EPS);
    TEST_CHECK_DBL(m.socket_power, 194, EPS);
    TEST_CHECK_DBL(m.gfx_activity, 0, EPS);
    TEST_CHECK_DBL(m.umc_activity, 0, EPS);
    for (int i = 0; i < 8; i++)
        TEST_CHECK_DBL(m.gfxclk[i], idle_gfxclk[i] * 1e6, EPS);
    TEST_CHECK_ACC(m.accumulation_counter, 54536484);
    TEST_CHECK_INT(m.accumulation_counter.bits, 32);
    TEST_CHECK_ACC(m.residency[GPUM_RES_PPT], 633093);
    TEST_CHECK_ACC(m.residency[GPUM_RES_PROCHOT], 0); /* a real 0 is kept */
    TEST_CHECK_ACC(m.residency[GPUM_RES_SOCKET_THM], 0);
    TEST_CHECK_ACC(m.residency[GPUM_RES_VR_THM], 0);
    TEST_CHECK_ACC(m.residency[GPUM_RES_HBM_THM], 0);
    TEST_CHECK_DBL(m.xcc_busy[0], 0.01, EPS);
    for (int i = 1; i < 8; i++)
        TEST_CHECK_DBL(m.xcc_busy[i], 0, EPS);
    TEST_CHECK_ACC(m.gfx_activity_acc, 6544378);
    TEST_CHECK_ACC(m.xcc_busy_acc[0], 654437);
    TEST_CHECK_INT(m.xcc_busy_acc[0].bits, 64);
    TEST_CHECK_DBL(m.pcie_link_width, 16, EPS);
    TEST_CHECK_DBL(m.pcie_link_speed, 32, EPS);
    TEST_CHECK_INT(m.num_partition, -1);
    free(b.data);
}

/* The first 120 bytes: entries 0..8 (hotspot, power) parse, accumulation_counter does not. */
TEST(v1_9_cut_at_120_bytes)
{
    struct blob b = load(GEN "v1_9_cut120.bin");
    struct gpu_metrics m;
    TEST_CHECK_INT(b.len, 120);
    TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, NULL, 0), 0);
    TEST_CHECK_STR(m.partial, "truncated");
    TEST_CHECK_INT(m.attrs_parsed, 9);
    TEST_CHECK_DBL(m.temp_hotspot, 42, EPS);
    TEST_CHECK_DBL(m.socket_power, 194, EPS);
    TEST_CHECK_ACC(m.accumulation_counter, NAN);
    TEST_CHECK(isnan(m.gfxclk[0]));
    free(b.data);
}

/* Entry 0's id set to 1023: an unknown id is skipped and everything after it still parses. */
TEST(v1_9_unknown_id_skipped)
{
    struct blob b = load(GEN "v1_9_id1023.bin");
    struct gpu_metrics m;
    TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, NULL, 0), 0);
    TEST_CHECK_INT(m.attrs_parsed, 47);
    TEST_CHECK_INT(m.attrs_unknown, 1);
    TEST_CHECK(isnan(m.temp_hotspot));
    TEST_CHECK_DBL(m.temp_mem, 37, EPS);
    TEST_CHECK_ACC(m.accumulation_counter, 54536484);
    free(b.data);
}

/* Later kernels: U64 counter, appended temperature arrays, widened counters. */
TEST(v1_9_later_lists)
{
    const struct {
        const char *file;
        size_t len;
        int count, counter_bits, acc_bits;
        double acc, ppt, hbm0;
    } cases[] = {
        {"v1_9_u64_counter.bin", 1154, 47, 64, 32, 6544378, 633093, NAN},
        {"v1_9_temps.bin", 1218, 50, 64, 32, 6544378, 633093, 40},
        {"v1_9_widened.bin", 1258, 50, 64, 64, 1099511627776.0, 8589934592.0, 40},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[256];
        snprintf(path, sizeof(path), GEN "%s", cases[i].file);
        struct blob b = load(path);
        struct gpu_metrics m;
        TEST_CHECK_INT(b.len, cases[i].len);
        TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, NULL, 0), 0);
        TEST_CHECK(m.partial == NULL);
        TEST_CHECK_INT(m.attr_count, cases[i].count);
        TEST_CHECK_DBL(m.temp_hotspot, 42, EPS);
        TEST_CHECK_ACC(m.accumulation_counter, 54536484);
        TEST_CHECK_INT(m.accumulation_counter.bits, cases[i].counter_bits);
        TEST_CHECK_ACC(m.gfx_activity_acc, cases[i].acc);
        TEST_CHECK_INT(m.gfx_activity_acc.bits, cases[i].acc_bits);
        TEST_CHECK_ACC(m.residency[GPUM_RES_PPT], cases[i].ppt);
        TEST_CHECK_DBL(m.temp_hbm[0], cases[i].hbm0, EPS);
        TEST_CHECK_DBL(m.temp_hbm[7], isnan(cases[i].hbm0) ? NAN : 47, EPS);
        for (int k = 0; k < 8; k++)
            TEST_CHECK_DBL(m.gfxclk[k], idle_gfxclk[k] * 1e6, EPS);
        free(b.data);
    }
}

/* Every prefix: never a crash or a read past len (ASan), a field present only when whole. */
TEST(v1_9_every_prefix)
{
    struct blob b = load(GEN "v1_9_idle_mi300x.bin");
    size_t bad = 0;
    for (size_t len = 0; b.data && len <= b.len; len++) {
        unsigned char *cut = malloc(len ? len : 1);
        struct gpu_metrics m;
        memcpy(cut, b.data, len);
        int rc = gpum_parse(cut, len, &m, NULL, 0);
        /* hotspot ends at byte 18, accumulation_counter at 128, the last entry at 1150 */
        bool want_rc = len < 18 ? rc == -1 : rc == 0;
        bool hot = !isnan(m.temp_hotspot) == (len >= 18);
        bool acc = (m.accumulation_counter.bits != 0) == (len >= 128);
        bool part = len >= 18 ? (m.partial == NULL) == (len == b.len) : true;
        if (!want_rc || !hot || !acc || !part)
            bad++;
        free(cut);
    }
    TEST_CHECK_INT(bad, 0);
    free(b.data);
}

TEST(partition_v1_1_decodes)
{
    const struct {
        const char *file;
        size_t len;
        double counter;
    } cases[] = {{GEN "partition_v1_1.bin", 594, NAN},
                 {GEN "partition_v1_1_acc.bin", 626, 54536484}};
    for (size_t i = 0; i < 2; i++) {
        struct blob b = load(cases[i].file);
        struct gpu_partition_metrics p;
        char err[128] = "";
        TEST_CHECK_INT(b.len, cases[i].len);
        TEST_CHECK_INT(gpum_parse_partition(b.data, b.len, &p, err, sizeof(err)), 0);
        TEST_CHECK_STR(err, "");
        TEST_CHECK_STR(p.layout, "partition_v1_1");
        TEST_CHECK_DBL(p.gfxclk[0], 2.1e9, EPS);
        TEST_CHECK(isnan(p.gfxclk[1]));
        TEST_CHECK_DBL(p.uclk, 1.3e9, EPS);
        TEST_CHECK_DBL(p.gfx_busy[0], 0.37, EPS);
        TEST_CHECK(isnan(p.gfx_busy[1]));
        TEST_CHECK_ACC(p.gfx_busy_acc[0], 123456789);
        TEST_CHECK_ACC(p.gfx_busy_acc[1], NAN);
        TEST_CHECK_ACC(p.accumulation_counter, cases[i].counter);
        free(b.data);
    }
}

/* Known layouts that are not decoded: skipped, not errors, values all unknown. */
TEST(apu_and_old_layouts_skipped)
{
    const struct {
        const char *file, *msg;
    } cases[] = {
        {REAL "gpu_metrics_apu", "APU layout 2.2 not decoded"},
        {GEN "partition_v1_0.bin", "discrete layout 1.0 not decoded"},
        {GEN "partition_v1_1.bin", "discrete layout 1.1 not decoded"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct blob b = load(cases[i].file);
        struct gpu_metrics m;
        char err[128] = "";
        TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, err, sizeof(err)), GPUM_SKIPPED);
        TEST_CHECK_STR(err, cases[i].msg);
        TEST_CHECK(metrics_all_nan(&m));
        free(b.data);
    }
}

/* A hand-built table: one entry per call, values little-endian of the encoded width. */
struct tbl {
    unsigned char b[512];
    size_t len;
    int count;
};

static void put(struct tbl *t, unsigned unit, unsigned type, unsigned id, unsigned inst,
                const int64_t *vals)
{
    uint64_t enc = (uint64_t)unit << 24 | (uint64_t)type << 20 | (uint64_t)id << 10 | inst;
    memcpy(t->b + t->len, &enc, 8);
    t->len += 8;
    unsigned w = attr_width[type];
    for (unsigned i = 0; i < inst; i++) {
        memcpy(t->b + t->len, &vals[i], w);
        t->len += w;
    }
    t->count++;
}

static void finish(struct tbl *t, uint8_t crev)
{
    uint16_t size = (uint16_t)t->len;
    memcpy(t->b, &size, 2);
    t->b[2] = 1;
    t->b[3] = crev;
    int32_t c = t->count;
    memcpy(t->b + 4, &c, 4);
}

TEST(v1_9_robustness_rules)
{
    struct tbl t = {.len = 8};
    const int64_t v42[] = {42}, v41[] = {41}, neg[] = {-1}, negc[] = {-5}, zero[] = {0};
    int64_t clk[12];
    for (int i = 0; i < 12; i++)
        clk[i] = 1000 + i;
    const int64_t spd[] = {16};
    put(&t, 2, T_S16, A_TEMP_HOTSPOT, 1, v42); /* signed type: decoded by its encoded type */
    put(&t, 2, T_U16, A_TEMP_HOTSPOT, 1, v41); /* duplicate id: the first wins */
    put(&t, 2, T_S16, A_TEMP_MEM, 1, neg);     /* signed sentinel -1 */
    put(&t, 0, T_S32, A_ACC_COUNTER, 1, negc); /* a negative counter is not a counter */
    put(&t, 0, T_U8, 700, 0, NULL);            /* inst 0: an empty entry */
    put(&t, 1, T_U32, A_GFXCLK, 12, clk);      /* more instances than storage, wider type */
    put(&t, 6, T_U16, A_PCIE_SPEED, 1, spd);   /* SPEED_1: GT/s, not 0.1 GT/s */
    put(&t, 2, T_U16, A_TEMP_VRSOC, 1, zero);  /* 0 C: no sensor */
    put(&t, 0, T_U64, 555, 1, v42);            /* unknown id */
    put(&t, 0, T_U32, A_GFX_ACTIVITY_ACC, 1, zero);
    put(&t, 0, T_U32, A_PROCHOT_RES, 1, zero);
    put(&t, 0, T_U64, A_GFX_BUSY_ACC, 1, zero);
    finish(&t, 9);
    struct gpu_metrics m;
    char err[128] = "";
    TEST_CHECK_INT(gpum_parse(t.b, t.len, &m, err, sizeof(err)), 0);
    TEST_CHECK_STR(err, "");
    TEST_CHECK(m.partial == NULL);
    TEST_CHECK_INT(m.attrs_unknown, 1);
    TEST_CHECK_DBL(m.temp_hotspot, 42, EPS);
    TEST_CHECK(isnan(m.temp_mem));
    TEST_CHECK_ACC(m.accumulation_counter, NAN);
    for (int i = 0; i < 8; i++)
        TEST_CHECK_DBL(m.gfxclk[i], (1000 + i) * 1e6, EPS);
    TEST_CHECK_DBL(m.pcie_link_speed, 16, EPS);
    TEST_CHECK(isnan(m.temp_vrsoc));
    TEST_CHECK_ACC(m.gfx_activity_acc, 0);            /* a busy accumulator at 0: never busy */
    TEST_CHECK_ACC(m.residency[GPUM_RES_PROCHOT], 0); /* a residency at 0: never throttled */
    TEST_CHECK_ACC(m.xcc_busy_acc[0], 0);
    TEST_CHECK_ACC(m.xcc_busy_acc[1], NAN);

    /* The same table as a partition v1_1 file. */
    finish(&t, 1);
    struct gpu_partition_metrics p;
    TEST_CHECK_INT(gpum_parse_partition(t.b, t.len, &p, err, sizeof(err)), 0);
    TEST_CHECK_DBL(p.gfxclk[7], 1007e6, EPS);
    TEST_CHECK_ACC(p.accumulation_counter, NAN);
    TEST_CHECK_ACC(p.gfx_busy_acc[0], 0); /* a partition never busy since the driver loaded */
}

/* A table with no entry, or only entries without values, is an error, never a GPU with
 * every field absent. */
TEST(v1_9_empty_table_rejected)
{
    struct tbl t = {.len = 8};
    finish(&t, 9);
    struct gpu_metrics m;
    struct gpu_partition_metrics p;
    char err[128] = "";
    TEST_CHECK_INT(gpum_parse(t.b, t.len, &m, err, sizeof(err)), -1);
    TEST_CHECK(strstr(err, "no attribute") != NULL);
    finish(&t, 1);
    TEST_CHECK_INT(gpum_parse_partition(t.b, t.len, &p, err, sizeof(err)), -1);
    t = (struct tbl){.len = 8};
    put(&t, 0, T_U32, A_ACC_COUNTER, 0, NULL);
    put(&t, 0, T_U16, A_TEMP_HOTSPOT, 0, NULL);
    finish(&t, 9);
    TEST_CHECK_INT(gpum_parse(t.b, t.len, &m, err, sizeof(err)), -1);
    TEST_CHECK(m.layout == NULL);
}

/* Zeros that real blobs hold where a sensor or counter is missing are omitted (see u16nz). */
TEST(zero_means_missing)
{
    struct blob b = load(REAL "gpu_metrics");
    struct gpu_metrics m;
    TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, NULL, 0), 0);
    TEST_CHECK(isnan(m.vclk0[0]) && isnan(m.dclk0[0])); /* 0 MHz in the RDNA3 capture */
    TEST_CHECK_DBL(m.temp_vrgfx, 35, EPS);
    free(b.data);

    b = load(GEN "v1_8.bin");
    if (!b.data || b.len != sizeof(struct gpum_v1_8)) {
        TEST_CHECK(0);
        free(b.data);
        return;
    }
    const uint64_t z64 = 0;
    const uint32_t z32 = 0, c32 = 1234;
    const uint16_t z16 = 0;
    memcpy(b.data + offsetof(struct gpum_v1_8, energy_accumulator), &z64, 8);
    memcpy(b.data + offsetof(struct gpum_v1_8, temperature_vrsoc), &z16, 2);
    memcpy(b.data + offsetof(struct gpum_v1_8, curr_socket_power), &z16, 2);
    memcpy(b.data + offsetof(struct gpum_v1_8, gfx_activity_acc), &z32, 4);
    memcpy(b.data + offsetof(struct gpum_v1_8, accumulation_counter), &c32, 4);
    memcpy(b.data + offsetof(struct gpum_v1_8, ppt_residency_acc), &z32, 4);
    memcpy(b.data + offsetof(struct gpum_v1_8, xcp_stats[2].gfx_busy_acc[0]), &z64, 8);
    TEST_CHECK_INT(gpum_parse(b.data, b.len, &m, NULL, 0), 0);
    TEST_CHECK(isnan(m.energy));
    TEST_CHECK(isnan(m.temp_vrsoc));
    TEST_CHECK(isnan(m.socket_power));
    TEST_CHECK_DBL(m.gfx_activity, 0.25, EPS);
    TEST_CHECK_ACC(m.gfx_activity_acc, 0); /* SMU 13.0.6 fills unsupported with all-ones */
    TEST_CHECK_ACC(m.accumulation_counter, 1234);
    TEST_CHECK_ACC(m.residency[GPUM_RES_PPT], 0);
    TEST_CHECK_ACC(m.residency[GPUM_RES_PROCHOT], NAN); /* all-ones in the sample */
    TEST_CHECK_ACC(m.xcp[2].gfx_busy_acc[0], 0);        /* a partition never busy: real 0 */
    TEST_CHECK_ACC(m.xcp[1].gfx_busy_acc[0], 2000);
    free(b.data);
}

int main(void)
{
    RUN(real_v1_3_decodes_like_mangohud);
    RUN(real_v1_3_sentinels);
    RUN(generated_layouts_decode);
    RUN(no_xcp_stats_before_v1_6_rocm);
    RUN(xcp_busy_spx_v1_6_rocm);
    RUN(xcp_busy_dpx_v1_7);
    RUN(xcp_busy_cpx_v1_8);
    RUN(num_partition_out_of_range);
    RUN(all_sentinel_blobs_are_nan);
    RUN(partition_v1_0_decodes);
    RUN(broken_files_rejected);
    RUN(tiny_inputs_rejected);
    RUN(every_truncation_rejected);
    RUN(trailing_bytes_and_unaligned_buffer);
    RUN(error_buffer_handling);
    RUN(v1_9_idle_mi300x_capture_facts);
    RUN(v1_9_cut_at_120_bytes);
    RUN(v1_9_unknown_id_skipped);
    RUN(v1_9_later_lists);
    RUN(v1_9_every_prefix);
    RUN(partition_v1_1_decodes);
    RUN(apu_and_old_layouts_skipped);
    RUN(v1_9_robustness_rules);
    RUN(v1_9_empty_table_rejected);
    RUN(zero_means_missing);
    return test_done();
}
