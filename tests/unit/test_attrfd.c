/*
 * Unit tests of the kept sysfs descriptors: a kept descriptor reads what a fresh open would,
 * including after the file is rewritten in place, renamed over or removed; only paths under
 * the root are kept, within the cap, and never while discovery has suspended keeping.
 */
#include "attrfd.c"

#include <stdio.h>

#include "test.h"
#include "tmptree.h"

static char dir[256];

static const char *path_of(const char *rel)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/sys/%s", dir, rel);
    return p;
}

static const char *read_text(const char *rel)
{
    static char buf[64];
    ssize_t n = attrfd_read(path_of(rel), buf, sizeof(buf) - 1, false);
    if (n < 0)
        return strerror(errno);
    buf[n] = '\0';
    return buf;
}

static void init_root(size_t max)
{
    char tree[300];
    snprintf(tree, sizeof(tree), "%s/sys", dir);
    attrfd_init(tree, max);
}

TEST(second_read_uses_the_kept_descriptor_and_sees_new_content)
{
    TEST_CHECK_INT(tmptree_put(dir, "sys/a", "1\n"), 0);
    init_root(8);
    unsigned long h0 = attrfd_hits();
    TEST_CHECK_STR(read_text("a"), "1\n");
    TEST_CHECK_INT(attrfd_kept(), 1);
    TEST_CHECK_INT(attrfd_hits() - h0, 0);
    /* Rewritten in place (what sysfs does on every read): the kept descriptor sees it. */
    TEST_CHECK_INT(tmptree_put(dir, "sys/a", "22\n"), 0);
    TEST_CHECK_STR(read_text("a"), "22\n");
    TEST_CHECK_INT(attrfd_hits() - h0, 1);
    TEST_CHECK_INT(attrfd_kept(), 1);
}

TEST(renamed_over_or_removed_is_never_read_stale)
{
    init_root(8);
    TEST_CHECK_INT(tmptree_put(dir, "sys/b", "old\n"), 0);
    TEST_CHECK_STR(read_text("b"), "old\n");
    TEST_CHECK_INT(tmptree_put(dir, "sys/b.new", "new\n"), 0);
    char from[512];
    snprintf(from, sizeof(from), "%s", path_of("b.new"));
    TEST_CHECK_INT(rename(from, path_of("b")), 0);
    TEST_CHECK_STR(read_text("b"), "new\n");
    TEST_CHECK_STR(read_text("b"), "new\n");
    TEST_CHECK_INT(unlink(path_of("b")), 0);
    TEST_CHECK_STR(read_text("b"), strerror(ENOENT));
    TEST_CHECK_INT(attrfd_kept(), 0);
}

TEST(only_paths_under_the_root_are_kept_within_the_cap)
{
    init_root(2);
    TEST_CHECK_INT(tmptree_put(dir, "other/x", "x\n"), 0);
    char p[512];
    snprintf(p, sizeof(p), "%s/other/x", dir);
    char buf[16];
    TEST_CHECK_INT(attrfd_read(p, buf, sizeof(buf), false), 2);
    TEST_CHECK_INT(attrfd_kept(), 0);
    /* "<root>x/..." shares the root's characters but is not under it. */
    TEST_CHECK_INT(tmptree_put(dir, "sysx/y", "y\n"), 0);
    snprintf(p, sizeof(p), "%s/sysx/y", dir);
    TEST_CHECK_INT(attrfd_read(p, buf, sizeof(buf), false), 2);
    TEST_CHECK_INT(attrfd_kept(), 0);
    for (int i = 0; i < 4; i++) {
        char rel[32];
        snprintf(rel, sizeof(rel), "sys/c%d", i);
        TEST_CHECK_INT(tmptree_put(dir, rel, "7\n"), 0);
        TEST_CHECK_STR(read_text(rel + 4), "7\n");
    }
    TEST_CHECK_INT(attrfd_kept(), 2);
    /* Past the cap a file is still read, only not kept. */
    TEST_CHECK_STR(read_text("c3"), "7\n");
    attrfd_flush();
    TEST_CHECK_INT(attrfd_kept(), 0);
}

TEST(suspended_reads_keep_nothing)
{
    init_root(8);
    TEST_CHECK_INT(tmptree_put(dir, "sys/d", "4\n"), 0);
    attrfd_suspend();
    TEST_CHECK_STR(read_text("d"), "4\n");
    TEST_CHECK_INT(attrfd_kept(), 0);
    attrfd_resume();
    TEST_CHECK_STR(read_text("d"), "4\n");
    TEST_CHECK_INT(attrfd_kept(), 1);
}

TEST(binary_read_to_eof_through_a_kept_descriptor)
{
    init_root(8);
    unsigned char big[9000];
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (unsigned char)(i * 7);
    TEST_CHECK_INT(tmptree_write(dir, "sys/bin", big, sizeof(big)), 0);
    unsigned char got[16384];
    for (int round = 0; round < 2; round++) {
        memset(got, 0, sizeof(got));
        TEST_CHECK_INT(attrfd_read(path_of("bin"), got, sizeof(got), true), (ssize_t)sizeof(big));
        TEST_CHECK(memcmp(got, big, sizeof(big)) == 0);
    }
    /* Shrunk in place: the kept descriptor reads the new, shorter content. */
    TEST_CHECK_INT(tmptree_write(dir, "sys/bin", big, 100), 0);
    TEST_CHECK_INT(attrfd_read(path_of("bin"), got, sizeof(got), true), 100);
}

int main(void)
{
    TEST_CHECK_INT(tmptree_make(dir, sizeof(dir), "attrfd"), 0);
    RUN(second_read_uses_the_kept_descriptor_and_sees_new_content);
    RUN(renamed_over_or_removed_is_never_read_stale);
    RUN(only_paths_under_the_root_are_kept_within_the_cap);
    RUN(suspended_reads_keep_nothing);
    RUN(binary_read_to_eof_through_a_kept_descriptor);
    attrfd_init(NULL, 0);
    tmptree_finish(dir);
    return test_done();
}
