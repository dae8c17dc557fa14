/*
 * Checks of a table of metric families shared by the tests of the exporter's table
 * (test_metrics.c) and the enforcer's (test_enfmetrics.c): each takes the families as
 * an array of pointers, so that two tables (a program's and the HTTP server's) are checked
 * as one. Include after test.h and expo.h.
 */
#ifndef GPURECLAIM_FAMILIES_H
#define GPURECLAIM_FAMILIES_H

#include <ctype.h>
#include <glob.h>
#include <stdbool.h>

static bool fam_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Every entry declared, named `prefix`..., in [a-z0-9_], _total if and only if a counter. */
static void fam_check_declared(const struct expo_family *const *f, int n, const char *prefix)
{
    for (int i = 0; i < n; i++) {
        if (!f[i]->name || !f[i]->help || !f[i]->help[0]) {
            fprintf(stderr, "metric id %d is used but not declared\n", i);
            TEST_CHECK(false);
            continue;
        }
        TEST_CHECK(strncmp(f[i]->name, prefix, strlen(prefix)) == 0);
        for (const char *p = f[i]->name; *p; p++)
            TEST_CHECK(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_');
        /* Counters and only counters end in _total (Prometheus naming conventions). */
        TEST_CHECK((f[i]->type == EXPO_COUNTER) == fam_ends_with(f[i]->name, "_total"));
        /* The renderer escapes \ and newline in HELP; the tables need neither, so the HELP
         * line of the output is the declaration verbatim (compared in fam_check_output). */
        TEST_CHECK(!strchr(f[i]->help, '\\') && !strchr(f[i]->help, '\n'));
    }
}

static void fam_check_unique(const struct expo_family *const *f, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (f[i]->name && f[j]->name && strcmp(f[i]->name, f[j]->name) == 0) {
                fprintf(stderr, "'%s' is declared twice (entries %d and %d)\n", f[i]->name, i, j);
                TEST_CHECK(false);
            }
}

/* A sample added by a raw name would bypass the tables: fail on any in the files of `pattern`. */
static size_t fam_scan_sources(const char *pattern)
{
    glob_t g;
    TEST_CHECK_INT(glob(pattern, 0, NULL, &g), 0);
    size_t scanned = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *f = fopen(g.gl_pathv[i], "r");
        TEST_CHECK(f != NULL);
        if (!f)
            continue;
        scanned++;
        char line[1024];
        for (int n = 1; fgets(line, sizeof(line), f); n++)
            if (strstr(line, "expo_add(") || strstr(line, "expo_addv(")) {
                fprintf(stderr, "%s:%d: a sample added by raw name: %s", g.gl_pathv[i], n, line);
                TEST_CHECK(false);
            }
        fclose(f);
    }
    globfree(&g);
    return scanned;
}

static const char *fam_type_name(enum expo_type t)
{
    return t == EXPO_COUNTER ? "counter" : t == EXPO_GAUGE ? "gauge" : "untyped";
}

/*
 * Check the HELP and TYPE lines of a rendered exposition `out` (cut up) against the table:
 * every family published is declared, exactly as declared. Marks seen[i] (if not NULL) for
 * each entry published; returns the number of HELP lines.
 */
static int fam_check_output(const struct expo_family *const *f, int n, const char *what, char *out,
                            bool *seen)
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
        int k = 0;
        while (k < n && !(f[k]->name && strcmp(f[k]->name, name) == 0))
            k++;
        if (k == n) {
            fprintf(stderr, "%s: '%s' is published but not declared\n", what, name);
            TEST_CHECK(false);
            continue;
        }
        if (seen)
            seen[k] = true;
        if (help) {
            families++;
            TEST_CHECK_STR(sp + 1, f[k]->help);
        } else {
            TEST_CHECK_STR(sp + 1, fam_type_name(f[k]->type));
        }
    }
    return families;
}

#endif
