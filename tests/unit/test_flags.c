/*
 * Unit tests of the flag table parser (common/flags.c) that both programs use: every type,
 * both value forms, --no-, ranges, bare seconds, positional arguments, the messages, and the
 * generated help. tests/e2e/flags.sh runs the two binaries with the flags they share.
 */
#include "flags.c"

#include "test.h"

enum { T_STR, T_BOOL, T_TIMEOUT, T_INTERVAL, T_COUNT, T_ANY, T_LEVEL, T_PATH, T_HELP, T_N };

static struct flags_def rows[T_N] = {
    [T_STR] = {"web.listen-address", FLAGS_STRING, ":9841", "address"},
    [T_BOOL] = {"dry-run", FLAGS_BOOL, "true", "report only"},
    [T_TIMEOUT] = {"web.read-header-timeout", FLAGS_DURATION, "10s", "header time", .min = 0.1,
                   .max = 3600},
    [T_INTERVAL] = {"enforce.interval", FLAGS_DURATION, "1m", "between evaluations"},
    [T_COUNT] = {"web.max-connections-per-ip", FLAGS_COUNT, "32", "per client", .min = 1,
                 .max = 100000},
    [T_ANY] = {"notify.queue-size", FLAGS_COUNT, "1000", "held at most"},
    [T_LEVEL] = {"log.level", FLAGS_CHOICE, "info", "level", .choices = "debug,info,warn,error"},
    [T_PATH] = {"web.telemetry-path", FLAGS_URL_PATH, "/metrics", "path"},
    [T_HELP] = {"help", FLAGS_SWITCH, "false", "show this help"},
};

/* Parse a NULL-terminated list of arguments after the program name. */
static int parse(char **pos, size_t *npos, char *err, size_t errlen, ...)
{
    char *argv[16] = {"prog"};
    int argc = 1;
    va_list ap;
    va_start(ap, errlen);
    for (char *a; argc < 15 && (a = va_arg(ap, char *));)
        argv[argc++] = a;
    va_end(ap);
    err[0] = '\0';
    return flags_parse(rows, T_N, argc, argv, pos, npos, err, errlen);
}

TEST(defaults_when_not_given)
{
    char err[256];
    TEST_CHECK_INT(parse(NULL, NULL, err, sizeof(err), NULL), 0);
    TEST_CHECK_STR(rows[T_STR].value, ":9841");
    TEST_CHECK_DBL(rows[T_BOOL].num, 1, 0);
    TEST_CHECK_DBL(rows[T_TIMEOUT].num, 10, 0);
    TEST_CHECK_DBL(rows[T_INTERVAL].num, 60, 0);
    TEST_CHECK_DBL(rows[T_COUNT].num, 32, 0);
    TEST_CHECK_STR(rows[T_LEVEL].value, "info");
    TEST_CHECK(!rows[T_STR].set && !rows[T_TIMEOUT].set && !rows[T_TIMEOUT].bare_seconds);
}

/* Each accepted form and what it sets; the last of a repeated flag wins. */
TEST(values_accepted)
{
    static const struct {
        const char *a, *b; /* b: a second argument or NULL */
        int row;
        const char *value;
        double num;
        bool bare;
    } cases[] = {
        {"--web.listen-address=127.0.0.1:1", NULL, T_STR, "127.0.0.1:1", 0, false},
        {"--web.listen-address", "[::1]:2", T_STR, "[::1]:2", 0, false},
        {"-web.listen-address=:3", NULL, T_STR, ":3", 0, false}, /* one dash works too */
        {"--web.listen-address=", NULL, T_STR, "", 0, false},
        {"--dry-run", NULL, T_BOOL, "true", 1, false},
        {"--no-dry-run", NULL, T_BOOL, "false", 0, false},
        {"--dry-run=false", NULL, T_BOOL, "false", 0, false},
        {"--dry-run=true", NULL, T_BOOL, "true", 1, false},
        {"--web.read-header-timeout=2s", NULL, T_TIMEOUT, "2s", 2, false},
        {"--web.read-header-timeout", "1m30s", T_TIMEOUT, "1m30s", 90, false},
        {"--web.read-header-timeout=100ms", NULL, T_TIMEOUT, "100ms", 0.1, false},
        {"--web.read-header-timeout=1h", NULL, T_TIMEOUT, "1h", 3600, false},
        /* bare numbers are seconds, as the exporter read them before */
        {"--web.read-header-timeout=10", NULL, T_TIMEOUT, "10", 10, true},
        {"--web.read-header-timeout=0.5", NULL, T_TIMEOUT, "0.5", 0.5, true},
        {"--web.read-header-timeout", "3600", T_TIMEOUT, "3600", 3600, true},
        {"--enforce.interval=1d", NULL, T_INTERVAL, "1d", 86400, false},
        {"--enforce.interval=1ms", NULL, T_INTERVAL, "1ms", 0.001, false},
        {"--web.max-connections-per-ip=1", NULL, T_COUNT, "1", 1, false},
        {"--web.max-connections-per-ip", "100000", T_COUNT, "100000", 100000, false},
        {"--notify.queue-size=0", NULL, T_ANY, "0", 0, false},
        {"--log.level=debug", NULL, T_LEVEL, "debug", 0, false},
        {"--log.level", "error", T_LEVEL, "error", 0, false},
        {"--web.telemetry-path=/m", NULL, T_PATH, "/m", 0, false},
        {"--help", NULL, T_HELP, "true", 1, false},
        {"-h", NULL, T_HELP, "true", 1, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char err[256];
        int rc = parse(NULL, NULL, err, sizeof(err), cases[i].a, cases[i].b, NULL);
        if (rc != 0)
            fprintf(stderr, "case %zu '%s': %s\n", i, cases[i].a, err);
        TEST_CHECK_INT(rc, 0);
        const struct flags_def *f = &rows[cases[i].row];
        TEST_CHECK(f->set);
        TEST_CHECK_STR(f->value, cases[i].value);
        if (f->type != FLAGS_STRING && f->type != FLAGS_CHOICE && f->type != FLAGS_URL_PATH)
            TEST_CHECK_DBL(f->num, cases[i].num, 1e-12);
        TEST_CHECK_INT(f->bare_seconds, cases[i].bare);
    }
    char err[256];
    TEST_CHECK_INT(parse(NULL, NULL, err, sizeof(err), "--web.read-header-timeout=10",
                         "--web.read-header-timeout=20s", NULL),
                   0);
    TEST_CHECK_DBL(rows[T_TIMEOUT].num, 20, 0);
    TEST_CHECK(!rows[T_TIMEOUT].bare_seconds);
    /* A new parse starts from the defaults. */
    TEST_CHECK_INT(parse(NULL, NULL, err, sizeof(err), NULL), 0);
    TEST_CHECK(!rows[T_TIMEOUT].set);
    TEST_CHECK_DBL(rows[T_TIMEOUT].num, 10, 0);
}

/* Every refusal says what is wrong with which flag, in the words both programs print. */
TEST(values_refused)
{
    static const struct {
        const char *a, *b;
        const char *err;
    } cases[] = {
        {"--bogus", NULL, "unknown flag '--bogus'"},
        {"-bogus=1", NULL, "unknown flag '-bogus'"},
        {"--no-web.listen-address", NULL, "unknown flag '--no-web.listen-address'"},
        {"--no-help", NULL, "unknown flag '--no-help'"},
        {"--web.listen-address", NULL, "flag '--web.listen-address' needs a value"},
        {"--no-dry-run=true", NULL, "flag '--no-dry-run' takes no value"},
        {"--help=true", NULL, "flag '--help' takes no value"},
        {"--dry-run=yes", NULL, "invalid value 'yes' for '--dry-run': want true or false"},
        {"--web.read-header-timeout=abc", NULL,
         "invalid value 'abc' for '--web.read-header-timeout': want a duration from 100ms to 1h, "
         "e.g. '10s'"},
        {"--web.read-header-timeout=50ms", NULL,
         "invalid value '50ms' for '--web.read-header-timeout': want a duration from 100ms to 1h, "
         "e.g. '10s'"},
        {"--web.read-header-timeout=0.05", NULL,
         "invalid value '0.05' for '--web.read-header-timeout': want a duration from 100ms to 1h, "
         "e.g. '10s'"},
        {"--web.read-header-timeout=2h", NULL,
         "invalid value '2h' for '--web.read-header-timeout': want a duration from 100ms to 1h, "
         "e.g. '10s'"},
        {"--web.read-header-timeout=-5", NULL,
         "invalid value '-5' for '--web.read-header-timeout': want a duration from 100ms to 1h, "
         "e.g. '10s'"},
        {"--enforce.interval=0", NULL,
         "invalid value '0' for '--enforce.interval': want a positive duration, e.g. '1m'"},
        {"--enforce.interval=0s", NULL,
         "invalid value '0s' for '--enforce.interval': want a positive duration, e.g. '1m'"},
        {"--enforce.interval", "",
         "invalid value '' for '--enforce.interval': want a positive "
         "duration, e.g. '1m'"},
        {"--enforce.interval=1e3", NULL,
         "invalid value '1e3' for '--enforce.interval': want a positive duration, e.g. '1m'"},
        {"--enforce.interval=inf", NULL,
         "invalid value 'inf' for '--enforce.interval': want a positive duration, e.g. '1m'"},
        {"--enforce.interval=.5", NULL,
         "invalid value '.5' for '--enforce.interval': want a positive duration, e.g. '1m'"},
        {"--enforce.interval=5.", NULL,
         "invalid value '5.' for '--enforce.interval': want a positive duration, e.g. '1m'"},
        {"--enforce.interval=1.5m", NULL,
         "invalid value '1.5m' for '--enforce.interval': want a positive duration, e.g. '1m'"},
        {"--web.max-connections-per-ip=0", NULL,
         "invalid value '0' for '--web.max-connections-per-ip': want a whole number from 1 to "
         "100000"},
        {"--web.max-connections-per-ip=100001", NULL,
         "invalid value '100001' for '--web.max-connections-per-ip': want a whole number from 1 "
         "to 100000"},
        {"--web.max-connections-per-ip= 5", NULL,
         "invalid value ' 5' for '--web.max-connections-per-ip': want a whole number from 1 to "
         "100000"},
        {"--notify.queue-size=-1", NULL,
         "invalid value '-1' for '--notify.queue-size': want a whole number"},
        {"--notify.queue-size=1.0", NULL,
         "invalid value '1.0' for '--notify.queue-size': want a whole number"},
        {"--notify.queue-size=99999999999999999999", NULL,
         "invalid value '99999999999999999999' for '--notify.queue-size': want a whole number"},
        {"--log.level=trace", NULL,
         "invalid value 'trace' for '--log.level': want debug, info, warn or error"},
        {"--log.level=inf", NULL,
         "invalid value 'inf' for '--log.level': want debug, info, warn or error"},
        {"--web.telemetry-path=metrics", NULL,
         "invalid value 'metrics' for '--web.telemetry-path': want a path starting with '/'"},
        {"stray", NULL, "unexpected argument 'stray'"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char err[256];
        TEST_CHECK_INT(parse(NULL, NULL, err, sizeof(err), cases[i].a, cases[i].b, NULL), -1);
        TEST_CHECK_STR(err, cases[i].err);
    }
}

TEST(positional_arguments)
{
    char *pos[16], err[256];
    size_t npos = 99;
    TEST_CHECK_INT(parse(pos, &npos, err, sizeof(err), "plan", "--dry-run", "x", "-", "--",
                         "--no-dry-run", NULL),
                   0);
    TEST_CHECK_INT(npos, 4);
    if (npos == 4) {
        TEST_CHECK_STR(pos[0], "plan");
        TEST_CHECK_STR(pos[1], "x");
        TEST_CHECK_STR(pos[2], "-");
        TEST_CHECK_STR(pos[3], "--no-dry-run"); /* after "--": an argument, not a flag */
    }
    TEST_CHECK_DBL(rows[T_BOOL].num, 1, 0);
}

/* A default the type refuses is a table bug: the parse fails instead of running with it. */
TEST(bad_default_is_refused)
{
    struct flags_def bad[] = {[0] = {"x.timeout", FLAGS_DURATION, "soon", "h"}};
    char *argv[] = {"prog"}, err[256];
    TEST_CHECK_INT(flags_parse(bad, 1, 1, argv, NULL, NULL, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "invalid value 'soon' for '--x.timeout': want a positive duration, e.g. "
                        "'soon'");
}

/* Help is generated from the rows: every flag, its default, booleans as --[no-]. */
TEST(help_lists_every_row)
{
    char *buf = NULL, *buf2 = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    flags_help(f, rows, T_N);
    fclose(f);
    TEST_CHECK(strstr(buf, "  --web.listen-address=\":9841\"            address\n") != NULL);
    TEST_CHECK(strstr(buf, "  --[no-]dry-run") != NULL);
    TEST_CHECK(strstr(buf, "report only (default true)\n") != NULL);
    TEST_CHECK(strstr(buf, "  --help  ") != NULL);
    /* a flag too long for the column gets a line of its own */
    struct flags_def long_row[] = {
        [0] = {"collector.ownership.refresh-interval", FLAGS_DURATION, "10s", "refresh"}};
    f = open_memstream(&buf2, &len);
    flags_help(f, long_row, 1);
    fclose(f);
    TEST_CHECK_STR(buf2, "  --collector.ownership.refresh-interval=\"10s\"\n"
                         "                                          refresh\n");
    TEST_CHECK(strstr(buf, "  --web.read-header-timeout=\"10s\"  ") != NULL);
    /* long help wraps at a word, under 100 columns, continuing in the help column */
    struct flags_def wordy[] = {[0] = {"x", FLAGS_STRING, "",
                                       "word word word word word word word "
                                       "word word word word word word word "
                                       "word word word word word end"}};
    char *buf3 = NULL;
    f = open_memstream(&buf3, &len);
    flags_help(f, wordy, 1);
    fclose(f);
    TEST_CHECK_STR(buf3, "  --x=\"\"                                  word word word word word "
                         "word word word word word word\n"
                         "                                          word word word word word word "
                         "word word end\n");
    free(buf3);
    size_t lines = 0;
    for (char *p = buf; *p; p++)
        lines += *p == '\n';
    TEST_CHECK_INT(lines, T_N);
    free(buf);
    free(buf2);
}

TEST(find_and_usage_error)
{
    TEST_CHECK(flags_find(rows, T_N, "log.level") == &rows[T_LEVEL]);
    TEST_CHECK(flags_find(rows, T_N, "log") == NULL);
    TEST_CHECK_INT(flags_usage_error("prog", "unknown flag '--x'"), 1);
}

int main(void)
{
    RUN(defaults_when_not_given);
    RUN(values_accepted);
    RUN(values_refused);
    RUN(positional_arguments);
    RUN(bad_default_is_refused);
    RUN(help_lists_every_row);
    RUN(find_and_usage_error);
    return test_done();
}
