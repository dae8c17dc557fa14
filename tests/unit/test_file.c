/*
 * Unit tests of whole-file reading with a cap (common/file.c), which replaced six readers
 * with caps of their own (or none: rules.c read up to a chunk past its cap).
 */
#include "file.c"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

static char root[PATH_MAX];

static const char *at(const char *rel)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    return path;
}

static void put(const char *rel, size_t n)
{
    FILE *f = fopen(at(rel), "w");
    TEST_CHECK(f != NULL);
    if (!f)
        return;
    for (size_t i = 0; i < n; i++)
        fputc('a' + (int)(i % 26), f);
    fclose(f);
}

TEST(sizes_around_the_cap)
{
    static const struct {
        size_t size, max;
        int err; /* 0: read */
        const char *why;
    } cases[] = {
        {0, 10, 0, NULL},
        {1, 10, 0, NULL},
        {10, 10, 0, NULL}, /* at the cap */
        {11, 10, EFBIG, "file too large (at most 10 bytes)"},
        {5000, 4096, EFBIG, "file too large (at most 4 KiB)"},
        {4096, 4096, 0, NULL},
        {(1 << 20) + 1, 1 << 20, EFBIG, "file too large (at most 1 MiB)"},
        {100000, 1 << 20, 0, NULL}, /* grows past the first guess */
        {0, 0, 0, NULL},
        {1, 0, EFBIG, "file too large (at most 0 bytes)"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        put("f", cases[i].size);
        char why[128] = "";
        size_t len = 12345;
        errno = 0;
        char *buf = file_read(at("f"), cases[i].max, &len, why, sizeof(why));
        if (cases[i].err) {
            TEST_CHECK(buf == NULL);
            TEST_CHECK_INT(errno, cases[i].err);
            TEST_CHECK_STR(why, cases[i].why);
        } else {
            TEST_CHECK(buf != NULL);
            TEST_CHECK_INT(len, cases[i].size);
            if (buf) {
                TEST_CHECK_INT(buf[len], '\0');
                TEST_CHECK(len == 0 ||
                           (buf[0] == 'a' && buf[len - 1] == (char)('a' + (len - 1) % 26)));
            }
        }
        free(buf);
    }
}

TEST(errors_keep_errno_and_say_why)
{
    char why[128];
    errno = 0;
    TEST_CHECK(file_read(at("missing"), 100, NULL, why, sizeof(why)) == NULL);
    TEST_CHECK_INT(errno, ENOENT);
    TEST_CHECK_STR(why, "No such file or directory");
    /* A directory opens; reading it fails. */
    TEST_CHECK(file_read(root, 100, NULL, why, sizeof(why)) == NULL);
    TEST_CHECK_INT(errno, EISDIR);
    TEST_CHECK_STR(why, "Is a directory");
    /* NULL why is fine. */
    TEST_CHECK(file_read(at("missing"), 100, NULL, NULL, 0) == NULL);
    TEST_CHECK_INT(errno, ENOENT);
}

/* Not a regular file, no size to go by: /dev/zero is endless and must stop at the cap. */
TEST(endless_file_stops_at_the_cap)
{
    char why[128];
    size_t len = 0;
    TEST_CHECK(file_read("/dev/zero", 100000, &len, why, sizeof(why)) == NULL);
    TEST_CHECK_INT(errno, EFBIG);
    char *buf = file_read("/dev/null", 10, &len, why, sizeof(why));
    TEST_CHECK(buf != NULL && len == 0);
    free(buf);
}

/* len may be NULL; a file exactly at the cap is read whole. */
TEST(length_without_len_pointer)
{
    put("g", 3);
    char *buf = file_read(at("g"), 3, NULL, NULL, 0);
    TEST_CHECK_STR(buf, "abc");
    free(buf);
}

/* A secret loses the newline echo and projected tokens end with; a missing one says what it is. */
TEST(secret_read_trims_and_names_the_file)
{
    FILE *f = fopen(at("s"), "w");
    TEST_CHECK(f != NULL);
    if (!f)
        return;
    fputs("t0ken \n\n", f);
    fclose(f);
    char err[256] = "";
    char *s = secret_read(at("s"), "token", err, sizeof(err));
    TEST_CHECK_STR(s, "t0ken");
    secret_free(s);
    secret_free(NULL);
    TEST_CHECK(secret_read(at("missing"), "token", err, sizeof(err)) == NULL);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof(want), "cannot read token file '%s': No such file or directory",
             at("missing"));
    TEST_CHECK_STR(err, want);
    unlink(at("s"));
}

int main(void)
{
    snprintf(root, sizeof(root), "/tmp/test_file.XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(sizes_around_the_cap);
    RUN(errors_keep_errno_and_say_why);
    RUN(endless_file_stops_at_the_cap);
    RUN(length_without_len_pointer);
    RUN(secret_read_trims_and_names_the_file);
    unlink(at("f"));
    unlink(at("g"));
    rmdir(root);
    return test_done();
}
