/*
 * Tests for the KFD per-process reader: name classification and value parsing tables, and
 * kfdproc_read() on trees built under a mkdtemp directory (no public capture of
 * /sys/class/kfd/kfd/proc exists, see docs/kernel-interfaces.md §7).
 */
#include "kfdproc.c"

#include "test.h"
#include "tmptree.h"
#include "util.h"

static char root[256];

/* Write `content` verbatim (no newline added) to root/rel, creating parent directories. */
static void put(const char *rel, const char *content)
{
    TEST_CHECK_INT(tmptree_put(root, rel, content), 0);
}

static const struct {
    const char *name;
    enum kfdproc_file kind;
    uint32_t gpu_id, qid;
} names[] = {
    {"pasid", KFDPROC_PASID, 0, 0},
    {"vram_1234", KFDPROC_VRAM, 1234, 0},
    {"sdma_1234", KFDPROC_SDMA, 1234, 0},
    {"vram_0", KFDPROC_VRAM, 0, 0},
    {"vram_4294967295", KFDPROC_VRAM, 4294967295u, 0},
    {"stats_61731/cu_occupancy", KFDPROC_CU_OCCUPANCY, 61731, 0},
    {"stats_61731/evicted_ms", KFDPROC_EVICTED_MS, 61731, 0},
    {"queues/0/gpuid", KFDPROC_QUEUE_GPUID, 0, 0},
    {"queues/17/gpuid", KFDPROC_QUEUE_GPUID, 0, 17},
    {"vram_4294967296", KFDPROC_UNKNOWN, 0, 0},
    {"vram_01234", KFDPROC_UNKNOWN, 0, 0},
    {"vram_", KFDPROC_UNKNOWN, 0, 0},
    {"vram_-1", KFDPROC_UNKNOWN, 0, 0},
    {"vram_12a", KFDPROC_UNKNOWN, 0, 0},
    {"vram_1/x", KFDPROC_UNKNOWN, 0, 0},
    {"vram", KFDPROC_UNKNOWN, 0, 0},
    {"pasid2", KFDPROC_UNKNOWN, 0, 0},
    {"stats_1", KFDPROC_UNKNOWN, 0, 0},
    {"stats_1/", KFDPROC_UNKNOWN, 0, 0},
    {"stats_1/cu_occupancy/x", KFDPROC_UNKNOWN, 0, 0},
    {"stats_/cu_occupancy", KFDPROC_UNKNOWN, 0, 0},
    {"stats_1/sdma_activity", KFDPROC_UNKNOWN, 0, 0},
    {"counters_1/faults", KFDPROC_UNKNOWN, 0, 0},
    {"queues/1/size", KFDPROC_UNKNOWN, 0, 0},
    {"queues//gpuid", KFDPROC_UNKNOWN, 0, 0},
    {"queues/x/gpuid", KFDPROC_UNKNOWN, 0, 0},
    {"queues/1/gpuid2", KFDPROC_UNKNOWN, 0, 0},
    {"", KFDPROC_UNKNOWN, 0, 0},
};

TEST(classify_table)
{
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        uint32_t gpu_id = 0, qid = 0;
        enum kfdproc_file k = kfdproc_classify(names[i].name, &gpu_id, &qid);
        if (k != names[i].kind || gpu_id != names[i].gpu_id || qid != names[i].qid) {
            fprintf(stderr, "'%s': kind %d gpu_id %u qid %u\n", names[i].name, (int)k, gpu_id, qid);
            TEST_CHECK(0);
        }
    }
    TEST_CHECK_INT(kfdproc_classify("vram_7", NULL, NULL), KFDPROC_VRAM);
}

static const struct {
    const char *text;
    int rc;
    uint64_t value;
} values[] = {
    {"0\n", 0, 0},
    {"1048576\n", 0, 1048576},
    {"1234", 0, 1234}, /* queue files: no newline */
    {"18446744073709551615\n", 0, UINT64_MAX},
    {"18446744073709551616\n", -1, 0},
    {"", -1, 0},
    {"\n", -1, 0},
    {"-1\n", -1, 0},
    {"+1\n", -1, 0},
    {" 1\n", -1, 0},
    {"1 \n", -1, 0},
    {"1\n\n", -1, 0},
    {"12abc\n", -1, 0},
    {"0x10\n", -1, 0},
    {"1.5\n", -1, 0},
};

TEST(value_table)
{
    for (size_t i = 0; i < ARRAY_LEN(values); i++) {
        uint64_t v = 777;
        int rc = kfdproc_parse_value(values[i].text, strlen(values[i].text), &v);
        if (rc != values[i].rc || (rc == 0 && v != values[i].value) || (rc != 0 && v != 777)) {
            fprintf(stderr, "value case %zu: rc %d v %llu\n", i, rc, (unsigned long long)v);
            TEST_CHECK(0);
        }
    }
    /* stops at len */
    uint64_t v;
    TEST_CHECK_INT(kfdproc_parse_value("12x", 2, &v), 0);
    TEST_CHECK_INT(v, 12);
}

TEST(read_tree)
{
    TEST_CHECK_INT(tmptree_make(root, sizeof(root), "test_kfdproc"), 0);
    const char *base = "class/kfd/kfd/proc/";
    char rel[256];
#define P(pid, file, content)                                                                      \
    do {                                                                                           \
        snprintf(rel, sizeof(rel), "%s%s/%s", base, pid, file);                                    \
        put(rel, content);                                                                         \
    } while (0)
    /* a ROCm process on two partitions (gpu_ids 5678 and 1234), with queues on one */
    P("4242", "pasid", "32771\n");
    P("4242", "vram_5678", "0\n");
    P("4242", "vram_1234", "1073741824\n");
    P("4242", "sdma_1234", "250\n");
    P("4242", "stats_1234/cu_occupancy", "12\n");
    P("4242", "stats_1234/evicted_ms", "5\n");
    P("4242", "counters_1234/faults", "3\n");
    P("4242", "queues/0/gpuid", "1234");
    P("4242", "queues/1/gpuid", "1234");
    P("4242", "queues/1/size", "65536");
    /* malformed values: unknown with a bad bit, never 0 */
    P("77", "pasid", "x\n");
    P("77", "vram_1", "12abc\n");
    P("77", "sdma_1", "");
    P("77", "stats_1/cu_occupancy", "-1\n");
    P("77", "queues/3/gpuid", "abc");
    /* opened /dev/kfd only: no per-node files */
    P("90", "pasid", "32790\n");
    /* exited: the directory is empty */
    TEST_CHECK_INT(tmptree_mkdirs(root, "class/kfd/kfd/proc/300"), 0);
    /* not PIDs */
    P("self", "pasid", "1\n");
    P("0400", "pasid", "1\n");

    char sys[300];
    snprintf(sys, sizeof(sys), "%s", root);
    struct kfdproc_list l = {0};
    char err[256] = "";
    TEST_CHECK_INT(kfdproc_read(sys, &l, err, sizeof(err)), 0);
    TEST_CHECK(l.present);
    TEST_CHECK_INT(l.n_procs, 3);
    if (l.n_procs == 3) {
        /* sorted by PID */
        const struct kfdproc_proc *bad = &l.procs[0], *idle = &l.procs[1], *rocm = &l.procs[2];
        TEST_CHECK_INT(bad->pid, 77);
        TEST_CHECK_INT(idle->pid, 90);
        TEST_CHECK_INT(rocm->pid, 4242);

        TEST_CHECK(rocm->has_pasid && rocm->pasid == 32771);
        TEST_CHECK_INT(rocm->n_gpus, 2);
        TEST_CHECK_INT(l.gpus[rocm->first_gpu].gpu_id, 1234); /* sorted by gpu_id */
        const struct kfdproc_gpu *g = kfdproc_find(&l, rocm, 1234);
        TEST_CHECK(g != NULL);
        if (g) {
            TEST_CHECK_INT(g->has, KFDPROC_HAS_VRAM | KFDPROC_HAS_SDMA | KFDPROC_HAS_CU_OCCUPANCY |
                                       KFDPROC_HAS_EVICTED_MS);
            TEST_CHECK_INT(g->bad, 0);
            TEST_CHECK_INT(g->vram_bytes, 1073741824);
            TEST_CHECK_INT(g->sdma_us, 250);
            TEST_CHECK_INT(g->cu_occupancy, 12);
            TEST_CHECK_INT(g->evicted_ms, 5);
            TEST_CHECK_INT(g->queues, 2);
        }
        g = kfdproc_find(&l, rocm, 5678);
        TEST_CHECK(g && g->has == KFDPROC_HAS_VRAM && g->vram_bytes == 0 && g->queues == 0);
        TEST_CHECK(kfdproc_find(&l, rocm, 9999) == NULL);

        TEST_CHECK(!bad->has_pasid && bad->bad_pasid);
        TEST_CHECK_INT(bad->bad_queues, 1);
        g = kfdproc_find(&l, bad, 1);
        TEST_CHECK(g != NULL);
        if (g) {
            TEST_CHECK_INT(g->has, 0);
            TEST_CHECK_INT(g->bad, KFDPROC_HAS_VRAM | KFDPROC_HAS_SDMA | KFDPROC_HAS_CU_OCCUPANCY);
            TEST_CHECK_INT(g->vram_bytes, 0);
        }

        TEST_CHECK(idle->has_pasid && idle->pasid == 32790);
        TEST_CHECK_INT(idle->n_gpus, 0);
    }

    /* a rescan reuses the arrays and gives the same answer */
    struct kfdproc_proc *procs_before = l.procs;
    TEST_CHECK_INT(kfdproc_read(sys, &l, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n_procs, 3);
    TEST_CHECK(l.procs == procs_before);
    kfdproc_list_free(&l);
    TEST_CHECK_INT(tmptree_remove(root), 0);
#undef P
}

TEST(missing_and_unreadable_root)
{
    TEST_CHECK_INT(tmptree_make(root, sizeof(root), "test_kfdproc"), 0);
    struct kfdproc_list l = {0};
    char err[256] = "";
    TEST_CHECK_INT(kfdproc_read(root, &l, err, sizeof(err)), 0);
    TEST_CHECK(!l.present);
    TEST_CHECK_INT(l.n_procs, 0);

    put("class/kfd/kfd/proc", "not a directory\n");
    TEST_CHECK_INT(kfdproc_read(root, &l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "cannot open '");
    TEST_CHECK_CONTAINS(err, "/class/kfd/kfd/proc': Not a directory");
    kfdproc_list_free(&l);
    TEST_CHECK_INT(tmptree_remove(root), 0);
}

int main(void)
{
    RUN(classify_table);
    RUN(value_table);
    RUN(read_tree);
    RUN(missing_and_unreadable_root);
    return test_done();
}
