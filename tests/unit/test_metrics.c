/*
 * Unit tests of the exporter's table of metric families (exporter/metrics.c): every id is
 * declared, no name is declared twice, names and types follow the naming rules, no exporter
 * source adds a sample by a raw name, and a scrape of every fixture tree publishes only
 * declared families, each with exactly its declared HELP and TYPE and no disagreement.
 */
#include "metrics.c"

#include <ctype.h>
#include <glob.h>

#include "collector.h"
#include "flags.h"
#include "test.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

TEST(every_id_is_declared_and_well_named)
{
    for (int i = 0; i < MX_COUNT; i++) {
        const struct expo_family *f = &mx_family[i];
        if (!f->name || !f->help || !f->help[0]) {
            fprintf(stderr, "metric id %d is used but not declared\n", i);
            TEST_CHECK(false);
            continue;
        }
        TEST_CHECK(strncmp(f->name, "gpureclaim_", 11) == 0);
        for (const char *p = f->name; *p; p++)
            TEST_CHECK(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_');
        /* Counters and only counters end in _total (Prometheus naming conventions). */
        TEST_CHECK((f->type == EXPO_COUNTER) == ends_with(f->name, "_total"));
        /* The renderer escapes \ and newline in HELP; the table needs neither, so the HELP
         * line of the output is the declaration verbatim (compared below). */
        TEST_CHECK(!strchr(f->help, '\\') && !strchr(f->help, '\n'));
    }
}

TEST(no_name_is_declared_twice)
{
    for (int i = 0; i < MX_COUNT; i++)
        for (int j = i + 1; j < MX_COUNT; j++)
            if (mx_family[i].name && mx_family[j].name &&
                strcmp(mx_family[i].name, mx_family[j].name) == 0) {
                fprintf(stderr, "'%s' is declared twice (ids %d and %d)\n", mx_family[i].name, i,
                        j);
                TEST_CHECK(false);
            }
}

/* A sample added by a raw name would bypass the table: the exporter uses expo_put only. */
TEST(exporter_sources_add_only_declared_families)
{
    glob_t g;
    TEST_CHECK_INT(glob("exporter/*.c", 0, NULL, &g), 0);
    TEST_CHECK(g.gl_pathc > 10);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen(g.gl_pathv[i], "r");
        TEST_CHECK(f != NULL);
        if (!f)
            continue;
        char line[1024];
        for (int n = 1; fgets(line, sizeof(line), f); n++)
            if (strstr(line, "expo_add(") || strstr(line, "expo_addv(")) {
                fprintf(stderr, "%s:%d: a sample added by raw name: %s", g.gl_pathv[i], n, line);
                TEST_CHECK(false);
            }
        fclose(f);
    }
    globfree(&g);
}

static const struct expo_family *declared(const char *name)
{
    for (int i = 0; i < MX_COUNT; i++)
        if (mx_family[i].name && strcmp(mx_family[i].name, name) == 0)
            return &mx_family[i];
    return NULL;
}

static const char *type_name(enum expo_type t)
{
    return t == EXPO_COUNTER ? "counter" : t == EXPO_GAUGE ? "gauge" : "untyped";
}

/* Check the HELP and TYPE lines of a rendered scrape against the table; count families. */
static int check_output(const char *tree, char *out)
{
    int families = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        bool help = strncmp(line, "# HELP ", 7) == 0, type = strncmp(line, "# TYPE ", 7) == 0;
        if (!help && !type)
            continue;
        char *name = line + 7, *sp = strchr(name, ' ');
        if (!sp)
            continue;
        *sp = '\0';
        const struct expo_family *f = declared(name);
        if (!f) {
            fprintf(stderr, "%s: '%s' is published but not declared\n", tree, name);
            TEST_CHECK(false);
            continue;
        }
        if (help) {
            families++;
            TEST_CHECK_STR(sp + 1, f->help);
        } else {
            TEST_CHECK_STR(sp + 1, type_name(f->type));
        }
    }
    return families;
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
        int n = check_output(trees[t], out);
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
    RUN(every_id_is_declared_and_well_named);
    RUN(no_name_is_declared_twice);
    RUN(exporter_sources_add_only_declared_families);
    RUN(scrapes_publish_declared_families_as_declared);
    return test_done();
}
