/*
 * Unit tests of the sysfs readers and the strict number parsers behind them: a sysfs value
 * is a number only if the whole file is one ("12abc", "", "N/A" are errors, never 0).
 */
#include "sysfs.c"

#include <errno.h>
#include <stdlib.h>

#include "test.h"
#include "tmptree.h"

static char dir[256];

static void put(const char *name, const char *content, size_t len)
{
    TEST_CHECK_INT(tmptree_write(dir, name, content, len), 0);
}

TEST(u64_strict)
{
    static const struct {
        const char *text;
        int rc;
        uint64_t v;
    } cases[] = {
        {"42\n", 0, 42},
        {"0", 0, 0},
        {"  7\n", 0, 7},
        {"18446744073709551615\n", 0, UINT64_MAX},
        {"18446744073709551616\n", -1, 0},
        {"", -1, 0},
        {"\n", -1, 0},
        {"abc\n", -1, 0},
        {"12abc\n", -1, 0},
        {"-1\n", -1, 0},
        {"N/A\n", -1, 0},
        {"4\n\n", -1, 0},
        {"0x10", -1, 0},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        uint64_t v = 12345;
        int rc = parse_u64(cases[i].text, &v);
        TEST_CHECK_INT(rc, cases[i].rc);
        if (rc == 0)
            TEST_CHECK(v == cases[i].v);
        else
            TEST_CHECK(v == 12345); /* untouched on error */
    }
}

TEST(double_and_i64_strict)
{
    double d;
    TEST_CHECK_INT(parse_double("0.25\n", &d), 0);
    TEST_CHECK_DBL(d, 0.25, 0);
    TEST_CHECK_INT(parse_double("1e3", &d), 0);
    TEST_CHECK_DBL(d, 1000, 0);
    TEST_CHECK_INT(parse_double("", &d), -1);
    TEST_CHECK_INT(parse_double("1.5x", &d), -1);
    TEST_CHECK_INT(parse_double("1e999", &d), -1);
    /* Non-finite values are refused: a NaN or infinite interval breaks every comparison. */
    TEST_CHECK_INT(parse_double("inf", &d), -1);
    TEST_CHECK_INT(parse_double("nan\n", &d), -1);
    TEST_CHECK_INT(parse_double("-Infinity", &d), -1);
    int64_t i;
    TEST_CHECK_INT(parse_i64("-40\n", &i), 0);
    TEST_CHECK_INT(i, -40);
    TEST_CHECK_INT(parse_i64("--4", &i), -1);
    TEST_CHECK_INT(parse_i64("9223372036854775808", &i), -1);
}

TEST(read_files)
{
    char buf[64];
    uint64_t v = 0;
    put("busy", "37\n", 3);
    put("empty", "", 0);
    put("garbage", "abc\n", 4);
    put("nul", "1\0002\n", 4);
    put("uevent", "DRIVER=amdgpu\nPCI_ID=1002:74A1\nPCI_SLOT_NAME=0000:05:00.0\n", 58);
    TEST_CHECK_INT(sysfs_read_u64(&v, "%s/busy", dir), 0);
    TEST_CHECK_INT(v, 37);
    errno = 0;
    TEST_CHECK_INT(sysfs_read_u64(&v, "%s/empty", dir), -1);
    TEST_CHECK_INT(errno, EINVAL);
    TEST_CHECK_INT(sysfs_read_u64(&v, "%s/garbage", dir), -1);
    TEST_CHECK_INT(errno, EINVAL);
    TEST_CHECK_INT(sysfs_read_u64(&v, "%s/missing", dir), -1);
    TEST_CHECK_INT(errno, ENOENT);
    TEST_CHECK_INT(sysfs_read_str(buf, sizeof(buf), "%s/nul", dir), -1);
    TEST_CHECK_INT(sysfs_read_str(buf, sizeof(buf), "%s/busy", dir), 2);
    TEST_CHECK_STR(buf, "37");
    TEST_CHECK_INT(sysfs_read_kv(buf, sizeof(buf), "PCI_SLOT_NAME", "%s/uevent", dir), 0);
    TEST_CHECK_STR(buf, "0000:05:00.0");
    TEST_CHECK_INT(sysfs_read_kv(buf, sizeof(buf), "DRIVER", "%s/uevent", dir), 0);
    TEST_CHECK_STR(buf, "amdgpu");
    TEST_CHECK_INT(sysfs_read_kv(buf, sizeof(buf), "PCI", "%s/uevent", dir), -1);
    TEST_CHECK_INT(errno, ENOENT);
}

TEST(binary_read_until_eof)
{
    unsigned char blob[5000], out[8192];
    for (size_t i = 0; i < sizeof(blob); i++)
        blob[i] = (unsigned char)(i * 7);
    put("gpu_metrics", (const char *)blob, sizeof(blob));
    ssize_t n = sysfs_read_bin(out, sizeof(out), "%s/gpu_metrics", dir);
    TEST_CHECK_INT(n, (ssize_t)sizeof(blob));
    TEST_CHECK(memcmp(out, blob, sizeof(blob)) == 0);
    /* A buffer smaller than the file gets exactly its size, never an overflow. */
    n = sysfs_read_bin(out, 100, "%s/gpu_metrics", dir);
    TEST_CHECK_INT(n, 100);
}

TEST(long_path_refused)
{
    char longname[5000];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    uint64_t v;
    TEST_CHECK_INT(sysfs_read_u64(&v, "%s/%s", dir, longname), -1);
    TEST_CHECK_INT(errno, ENAMETOOLONG);
}

int main(void)
{
    if (tmptree_make(dir, sizeof(dir), "gpureclaim-sysfs") < 0)
        return 1;
    RUN(u64_strict);
    RUN(double_and_i64_strict);
    RUN(read_files);
    RUN(binary_read_until_eof);
    RUN(long_path_refused);
    if (tmptree_remove(dir) < 0)
        return 1;
    return test_done();
}
