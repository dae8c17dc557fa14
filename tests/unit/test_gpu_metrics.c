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

/* Every double of the struct is NaN and num_partition is -1. */
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
            ok &= isnan(m->xcp[x].gfx_busy[c]) && isnan(m->xcp[x].gfx_busy_acc[c]);
    return ok;
}

static int partition_all_nan(const struct gpu_partition_metrics *p)
{
    int ok = isnan(p->uclk) != 0;
    for (size_t i = 0; i < GPUM_MAX_XCC; i++)
        ok &= isnan(p->gfxclk[i]) && isnan(p->gfx_busy[i]) && isnan(p->gfx_busy_acc[i]);
    return ok;
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
    TEST_CHECK(isnan(u64v(raw.firmware_timestamp)));
    TEST_CHECK(!isnan(u64v(raw.energy_accumulator)));
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
            TEST_CHECK_DBL(m.temp_hbm[k], i == 0 ? 61.0 + (double)k : NAN, EPS);
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
                TEST_CHECK(isnan(m.xcp[x].gfx_busy[c]) && isnan(m.xcp[x].gfx_busy_acc[c]));
    }
}

TEST(xcp_busy_spx_v1_6_rocm)
{
    struct gpu_metrics m;
    TEST_CHECK_INT(parse_file("v1_6_rocm.bin", &m, NULL, 0), 0);
    TEST_CHECK_INT(m.num_partition, 1);
    for (size_t c = 0; c < GPUM_MAX_XCC; c++) {
        TEST_CHECK_DBL(m.xcp[0].gfx_busy[c], (double)(c + 1) * 10 / 100, EPS);
        TEST_CHECK_DBL(m.xcp[0].gfx_busy_acc[c], (double)(c + 1) * 1000, EPS);
    }
    for (size_t x = 1; x < GPUM_MAX_XCP; x++)
        for (size_t c = 0; c < GPUM_MAX_XCC; c++)
            TEST_CHECK(isnan(m.xcp[x].gfx_busy[c]) && isnan(m.xcp[x].gfx_busy_acc[c]));
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
            TEST_CHECK_DBL(m.xcp[x].gfx_busy_acc[c], acc, EPS);
        }
    }
    for (size_t x = 2; x < GPUM_MAX_XCP; x++)
        for (size_t c = 0; c < GPUM_MAX_XCC; c++)
            TEST_CHECK(isnan(m.xcp[x].gfx_busy[c]) && isnan(m.xcp[x].gfx_busy_acc[c]));
}

/* CPX: one XCC per partition; XCP 3 busy is all-ones. */
TEST(xcp_busy_cpx_v1_8)
{
    struct gpu_metrics m;
    TEST_CHECK_INT(parse_file("v1_8.bin", &m, NULL, 0), 0);
    TEST_CHECK_INT(m.num_partition, 8);
    for (size_t x = 0; x < GPUM_MAX_XCP; x++) {
        TEST_CHECK_DBL(m.xcp[x].gfx_busy[0], x == 3 ? NAN : (double)(5 + 10 * x) / 100, EPS);
        TEST_CHECK_DBL(m.xcp[x].gfx_busy_acc[0], (double)(1000 * (x + 1)), EPS);
        for (size_t c = 1; c < GPUM_MAX_XCC; c++)
            TEST_CHECK(isnan(m.xcp[x].gfx_busy[c]) && isnan(m.xcp[x].gfx_busy_acc[c]));
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
        TEST_CHECK_DBL(p.gfx_busy_acc[i], busy[i] ? busy[i] * 100.0 : NAN, EPS);
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
    {GEN "broken_revision_1_9.bin", 0, "unsupported gpu_metrics revision 1.9"},
    {GEN "broken_revision_4_0.bin", 0, "unsupported gpu_metrics revision 4.0"},
    {GEN "broken_all_ones.bin", 0, "unsupported gpu_metrics revision 255.255"},
    {GEN "partition_v1_0.bin", 0, "unsupported gpu_metrics revision 1.0"},
    {REAL "gpu_metrics_apu", 0, "unsupported gpu_metrics revision 2.2 (APU layout)"},
    {REAL "gpu_metrics_invalid", 0, "unsupported gpu_metrics revision 0.0"},
    {GEN "broken_partition_size.bin", 1, "size 480 does not match partition_v1_0 (488)"},
    {GEN "broken_partition_revision.bin", 1, "unsupported xcp_metrics revision 1.1"},
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
    return test_done();
}
