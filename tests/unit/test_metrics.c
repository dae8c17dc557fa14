/*
 * Unit tests of the exporter's table of metric families (exporter/metrics.c): every id is
 * declared, no name is declared twice (nor in the HTTP server's table, common/httpd.h), names and
 * types follow the naming rules, no exporter source adds a sample by a raw name, and a scrape of
 * every fixture tree publishes only declared families, each with exactly its declared HELP and TYPE
 * and no disagreement.
 */
#include "metrics.c"

#include "collector.h"
#include "flags.h"
#include "httpd.h"
#include "test.h"

#include "families.h"

/* The exporter's table, and the HTTP server's whose series follow it on /metrics. */
static const struct expo_family *fams[MX_COUNT + HX_COUNT];

static void fams_init(void)
{
    for (int i = 0; i < MX_COUNT; i++)
        fams[i] = &mx_family[i];
    for (int i = 0; i < HX_COUNT; i++)
        fams[MX_COUNT + i] = &httpd_family[i];
}

TEST(every_id_is_declared_and_well_named)
{
    fam_check_declared(fams, MX_COUNT + HX_COUNT, "gpureclaim_");
}

TEST(no_name_is_declared_twice)
{
    fam_check_unique(fams, MX_COUNT + HX_COUNT);
}

/* A sample added by a raw name would bypass the table: the exporter uses expo_put only. */
TEST(exporter_sources_add_only_declared_families)
{
    TEST_CHECK(fam_scan_sources("exporter/*.c") > 10);
}

TEST(scrapes_publish_declared_families_as_declared)
{
    static const char *const trees[] = {
        "procfs-drm", "mi300x-cpx",  "mi300x-cpx-v19", "mi300x-spx",      "mi300x-dpx",
        "broken",     "node-no-drm", "node-empty-drm", "node-nvidia-drm", "node-amd-unserved",
    };
    char err[256];
    /* As --no-collector.ownership: its background refresher needs a kubelet and a procfs. */
    struct flags_def rows[16];
    size_t nrows = coll_flag_rows(rows, ARRAY_LEN(rows));
    TEST_CHECK(nrows > 1);
    bool found = false;
    for (size_t i = 0; i < nrows; i++) {
        rows[i].set = strcmp(rows[i].name, "collector.ownership") == 0;
        rows[i].num = 0;
        found |= rows[i].set;
    }
    TEST_CHECK(found);
    coll_flags_apply(rows);
    int seen = 0;
    for (size_t t = 0; t < ARRAY_LEN(trees); t++) {
        char sys[256], proc[256], dev[256];
        snprintf(sys, sizeof(sys), "tests/fixtures/%s/sys", trees[t]);
        snprintf(proc, sizeof(proc), "tests/fixtures/%s/proc", trees[t]);
        snprintf(dev, sizeof(dev), "tests/fixtures/%s/dev", trees[t]);
        struct coll_cfg cfg = {.sysfs = sys,
                               .procfs = proc,
                               .devfs = dev,
                               .refresh_interval = 5,
                               .rediscover_interval = 0};
        TEST_CHECK_INT(coll_init(&cfg, err, sizeof(err)), 0);
        struct expo *e = expo_new();
        coll_scrape(&cfg, e);
        TEST_CHECK_INT(expo_conflicts(e), 0);
        TEST_CHECK_INT(expo_duplicates(e), 0);
        struct sbuf b = {0};
        expo_render(e, &b);
        char *out = sbuf_take(&b);
        int n = fam_check_output(fams, MX_COUNT, trees[t], out, NULL);
        TEST_CHECK(n >= 4);
        seen += n;
        free(out);
        expo_free(e);
        coll_fini();
    }
    /* The CPX trees alone publish dozens of families: the walk above did look at them. */
    TEST_CHECK(seen > 100);
}

int main(void)
{
    fams_init();
    RUN(every_id_is_declared_and_well_named);
    RUN(no_name_is_declared_twice);
    RUN(exporter_sources_add_only_declared_families);
    RUN(scrapes_publish_declared_families_as_declared);
    return test_done();
}
