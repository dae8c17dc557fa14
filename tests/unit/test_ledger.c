/*
 * Tests of the ledger: save and reload keep every field, the write is atomic (no temporary
 * file left behind, a failed write keeps the old file), expiry of open and closed entries
 * and of the action times, and a corrupt, truncated, unreadable or foreign-version file is
 * refused with a message rather than read as empty. The index behind ledger_find and
 * ledger_each finds what a scan of the ledger finds, through adds, removals and expiry.
 * ledger_drop_superseded drops exactly the acted entries a newer restarted one of the same
 * rule, workload and root answers for, and keeps the others in their order.
 */
#include "ledger.c"

#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static char dir[128];

static char *path_in(const char *name)
{
    return xasprintf("%s/%s", dir, name);
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(s, f);
        fclose(f);
    }
}

TEST(save_and_reload)
{
    char *p = path_in("state.json");
    char err[512] = "";
    struct ledger l;
    TEST_CHECK_INT(ledger_load(&l, p, err, sizeof(err)), 0); /* missing: empty */
    TEST_CHECK_INT(l.n, 0);
    struct ledger_entry *e =
        ledger_add(&l, "r1", "{pod=\"a\"}", "uid-1", "Deployment ml/a", LEDGER_PENDING);
    e->noticed = 1000;
    e->act_after = 1300.5;
    ledger_set(&e->root_kind, "Deployment");
    ledger_set(&e->root_uid, "root-1");
    e = ledger_add(&l, "r1", "{pod=\"b\"}", "uid-2", "t", LEDGER_ACTED);
    e->updated = 2000;
    e->attempts = 3;
    e->restarted = 2500; /* seen running again after the action */
    ledger_set(&e->result, "ok");
    ledger_note_action(&l, 1990);
    ledger_note_action(&l, 2000);
    TEST_CHECK_INT(ledger_save(&l, err, sizeof(err)), 0);
    ledger_free(&l);

    /* nothing but the state file in the directory: the temporary file was renamed */
    char *tmp = xasprintf("%s.tmp.%ld", p, (long)getpid());
    TEST_CHECK(access(tmp, F_OK) != 0);
    free(tmp);

    TEST_CHECK_INT(ledger_load(&l, p, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n, 2);
    struct ledger_entry *a = ledger_find(&l, "r1", "{pod=\"a\"}", NULL, LEDGER_PENDING);
    TEST_CHECK(a != NULL);
    if (a) {
        TEST_CHECK_DBL(a->act_after, 1300.5, 1e-9);
        TEST_CHECK(isnan(a->updated));
        TEST_CHECK_STR(a->root_kind, "Deployment");
        TEST_CHECK_STR(a->root_uid, "root-1");
        TEST_CHECK_STR(a->target, "Deployment ml/a");
        TEST_CHECK(isnan(a->restarted)); /* absent from the file: not restarted */
    }
    struct ledger_entry *b = ledger_find(&l, "r1", "{pod=\"b\"}", "uid-2", LEDGER_ACTED);
    TEST_CHECK(b != NULL);
    if (b) {
        TEST_CHECK_INT(b->attempts, 3);
        TEST_CHECK_STR(b->result, "ok");
        TEST_CHECK_DBL(b->restarted, 2500, 0);
    }
    TEST_CHECK(ledger_find(&l, "r1", "{pod=\"b\"}", "uid-3", -1) == NULL);
    TEST_CHECK(ledger_find(&l, "r2", "{pod=\"b\"}", NULL, -1) == NULL);
    TEST_CHECK_INT(ledger_actions_last_hour(&l, 2000), 2);
    TEST_CHECK_INT(ledger_actions_last_hour(&l, 5590), 1);

    /* a failed write (directory gone read-only is hard as root: a missing directory) keeps
       the old content and says why */
    free(l.path);
    l.path = path_in("missing/state.json");
    TEST_CHECK_INT(ledger_save(&l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "cannot create");
    ledger_free(&l);
    TEST_CHECK_INT(ledger_load(&l, p, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n, 2);
    ledger_free(&l);
    free(p);
}

TEST(expiry)
{
    struct ledger l;
    char err[256];
    TEST_CHECK_INT(ledger_load(&l, NULL, err, sizeof(err)), 0);
    struct ledger_entry *e = ledger_add(&l, "r", "w1", "u1", "t", LEDGER_PENDING);
    e->act_after = 1000;
    e = ledger_add(&l, "r", "w2", "u2", "t", LEDGER_ACTED);
    e->updated = 1000;
    e = ledger_add(&l, "r", "w3", "u3", "t", LEDGER_DRY_RUN);
    e->act_after = 5000;
    ledger_note_action(&l, 900);
    ledger_note_action(&l, 4000);
    ledger_expire(&l, 4601, 3600, 7 * 86400, NULL, NULL);
    TEST_CHECK_INT(l.n, 2); /* w1 expired (act_after + 3600 < 4601) */
    TEST_CHECK(ledger_find(&l, "r", "w1", NULL, -1) == NULL);
    TEST_CHECK_INT(l.nactions, 1);
    ledger_expire(&l, 1000 + 7 * 86400 + 1, 1e12, 7 * 86400, NULL, NULL);
    TEST_CHECK(ledger_find(&l, "r", "w2", NULL, -1) == NULL);
    TEST_CHECK(ledger_find(&l, "r", "w3", NULL, -1) != NULL);
    ledger_remove(&l, ledger_find(&l, "r", "w3", NULL, -1));
    TEST_CHECK_INT(l.n, 0);
    ledger_free(&l);
}

static struct ledger_entry *acted(struct ledger *l, const char *rule, const char *w,
                                  const char *uid, const char *root, double updated,
                                  double restarted)
{
    struct ledger_entry *e = ledger_add(l, rule, w, uid, "t", LEDGER_ACTED);
    ledger_set(&e->root_uid, root);
    e->updated = updated;
    e->restarted = restarted;
    return e;
}

TEST(drop_superseded)
{
    struct ledger l = {0};
    acted(&l, "r", "w1", "a", "root1", 100, 200); /* 0: superseded by 2 */
    acted(&l, "r", "w2", "b", "root2", 100, 200); /* 1: another workload, alone: kept */
    acted(&l, "r", "w1", "c", "root1", 300, 400); /* 2: the newest restarted of w1: kept */
    acted(&l, "r", "w1", "d", "root1", 500, NAN); /* 3: not restarted: kept */
    acted(&l, "q", "w1", "e", "root1", 50, 60);   /* 4: another rule: kept */
    acted(&l, "r", "w1", "f", "other", 60, 70);   /* 5: another root: kept */
    acted(&l, "r", "w3", "g", "root3", 100, 200); /* 6: a tie with 7: the later kept */
    acted(&l, "r", "w3", "h", "root3", 100, 200); /* 7 */
    acted(&l, "r", "w4", "i", "root4", 100, 900); /* 8: restarted later than 9: kept */
    acted(&l, "r", "w4", "j", "root4", 300, 400); /* 9: updated later than 8: kept */
    struct ledger_entry *p = ledger_add(&l, "r", "w1", "k", "t", LEDGER_PENDING); /* 10 */
    ledger_set(&p->root_uid, "root1");
    struct ledger_entry *d = ledger_add(&l, "r", "w1", "l", "t", LEDGER_DONE); /* 11 */
    ledger_set(&d->root_uid, "root1");
    d->updated = 10;
    TEST_CHECK(ledger_find(&l, "r", "w1", "a", LEDGER_ACTED) != NULL); /* indexed before */
    TEST_CHECK_INT(ledger_drop_superseded(&l), 2);
    static const char *const kept[] = {"b", "c", "d", "e", "f", "h", "i", "j", "k", "l"};
    TEST_CHECK_INT(l.n, ARRAY_LEN(kept));
    for (size_t i = 0; i < l.n && i < ARRAY_LEN(kept); i++)
        TEST_CHECK_STR(l.v[i].uid, kept[i]);
    TEST_CHECK(ledger_find(&l, "r", "w1", "a", LEDGER_ACTED) == NULL); /* the index follows */
    TEST_CHECK(ledger_find(&l, "r", "w1", "c", LEDGER_ACTED) == &l.v[1]);
    TEST_CHECK(ledger_find(&l, "r", "w1", NULL, LEDGER_PENDING) == &l.v[8]);
    TEST_CHECK_INT(ledger_drop_superseded(&l), 0); /* nothing more */
    ledger_free(&l);
}

/* What ledger_find returned before its index: the first entry of a scan. */
static struct ledger_entry *scan_find(struct ledger *l, const char *rule, const char *workload,
                                      const char *uid, int state)
{
    for (size_t i = 0; i < l->n; i++) {
        struct ledger_entry *e = &l->v[i];
        if (strcmp(e->rule, rule) == 0 && strcmp(e->workload, workload) == 0 &&
            (!uid || strcmp(e->uid, uid) == 0) && (state < 0 || (int)e->state == state))
            return e;
    }
    return NULL;
}

static void count_each(void *arg, struct ledger_entry *e)
{
    (void)e;
    (*(size_t *)arg)++;
}

struct root_seen {
    const struct ledger_entry *v[4096];
    size_t n;
};

static bool root_each(void *arg, struct ledger_entry *e)
{
    struct root_seen *r = arg;
    if (r->n < ARRAY_LEN(r->v))
        r->v[r->n++] = e;
    return false;
}

TEST(index_finds_what_a_scan_finds)
{
    struct ledger l = {0};
    unsigned seed = 7;
    char rule[8], wl[16], uid[8], root[8];
    size_t mismatches = 0, found = 0, rooted = 0;
    for (int step = 0; step < 20000; step++) {
        seed = seed * 1103515245u + 12345u;
        unsigned x = seed >> 8;
        snprintf(rule, sizeof(rule), "r%u", x % 3);
        snprintf(wl, sizeof(wl), "{pod=\"w%u\"}", (x / 3) % 40);
        snprintf(uid, sizeof(uid), "u%u", (x / 120) % 4);
        int state = (int)((x / 480) % 5) - 1;
        switch ((x / 2400) % 8) {
        case 0:
        case 1:
        case 2:
            ledger_add(&l, rule, wl, uid, "t", (enum ledger_state)(state < 0 ? 0 : state));
            l.v[l.n - 1].act_after = step;
            l.v[l.n - 1].updated = step;
            /* Most given a root as the engine does, right after the add; some none; and
               now and then an older entry's root replaced. */
            snprintf(root, sizeof(root), "o%u", (x / 7) % 6);
            if (x % 5)
                ledger_set_root_uid(&l, &l.v[l.n - 1], root);
            if (x % 11 == 0 && l.n > 1)
                ledger_set_root_uid(&l, &l.v[(x / 13) % (l.n - 1)], root);
            break;
        case 3: {
            struct ledger_entry *e = ledger_find(&l, rule, wl, NULL, -1);
            if (e)
                ledger_remove(&l, e);
            break;
        }
        case 4:
            if (step % 50 == 0)
                ledger_expire(&l, step, 300, 300, NULL, NULL);
            break;
        default: {
            const char *u = x % 2 ? uid : NULL;
            struct ledger_entry *a = ledger_find(&l, rule, wl, u, state);
            struct ledger_entry *b = scan_find(&l, rule, wl, u, state);
            mismatches += a != b;
            found += b != NULL;
            size_t n = 0, want = 0;
            ledger_each(&l, rule, wl, count_each, &n);
            for (size_t i = 0; i < l.n; i++)
                want += strcmp(l.v[i].rule, rule) == 0 && strcmp(l.v[i].workload, wl) == 0;
            mismatches += n != want;
            /* By root: the entries of a scan, in its order (the first an early stop names). */
            snprintf(root, sizeof(root), "o%u", (x / 7) % 6);
            struct root_seen rs = {.n = 0};
            ledger_each_root(&l, root, root_each, &rs);
            size_t k = 0;
            for (size_t i = 0; i < l.n; i++)
                if (strcmp(l.v[i].root_uid, root) == 0)
                    mismatches += k >= rs.n || rs.v[k++] != &l.v[i];
            mismatches += k != rs.n;
            rooted += k;
        }
        }
    }
    TEST_CHECK_INT(mismatches, 0);
    TEST_CHECK(found > 100); /* the lookups met entries, not only empty chains */
    TEST_CHECK(rooted > 1000);
    TEST_CHECK(ledger_each_root(&l, "", root_each, &(struct root_seen){.n = 0}) == NULL);
    ledger_free(&l);
}

/*
 * A removal keeps the index (the engine removes a notice per workload that turned busy, amid
 * a lookup per candidate): heads, middles and tails of a workload's chain and of a root's,
 * and the last entry of each, removed with the index in use, and every lookup after each
 * removal the scan's.
 */
TEST(remove_keeps_the_index)
{
    struct ledger l = {0};
    for (int i = 0; i < 30; i++) {
        char wl[16], root[8], uid[8];
        snprintf(wl, sizeof(wl), "w%d", i % 4);
        snprintf(root, sizeof(root), "o%d", i % 3);
        snprintf(uid, sizeof(uid), "u%d", i);
        ledger_add(&l, "r", wl, uid, "t", LEDGER_PENDING);
        if (i % 5)
            ledger_set_root_uid(&l, &l.v[l.n - 1], root);
    }
    TEST_CHECK(ledger_find(&l, "r", "w0", NULL, -1) == &l.v[0]);
    TEST_CHECK(l.indexed);
    static const size_t order[] = {0, 5, 27, 13, 1, 0, 3, 20, 2, 7, 4, 0};
    size_t mismatches = 0;
    for (size_t k = 0; k < ARRAY_LEN(order); k++) {
        ledger_remove(&l, &l.v[order[k] < l.n ? order[k] : 0]);
        TEST_CHECK(l.indexed); /* followed, not dropped for a rebuild */
        for (int w = 0; w < 5; w++) {
            char wl[16], root[8];
            snprintf(wl, sizeof(wl), "w%d", w);
            mismatches += ledger_find(&l, "r", wl, NULL, -1) != scan_find(&l, "r", wl, NULL, -1);
            for (int u = 0; u < 30; u++) {
                char uid[8];
                snprintf(uid, sizeof(uid), "u%d", u);
                mismatches += ledger_find(&l, "r", wl, uid, -1) != scan_find(&l, "r", wl, uid, -1);
            }
            snprintf(root, sizeof(root), "o%d", w);
            struct root_seen rs = {.n = 0};
            ledger_each_root(&l, root, root_each, &rs);
            size_t m = 0;
            for (size_t i = 0; i < l.n; i++)
                if (strcmp(l.v[i].root_uid, root) == 0)
                    mismatches += m >= rs.n || rs.v[m++] != &l.v[i];
            mismatches += m != rs.n;
        }
    }
    TEST_CHECK_INT(mismatches, 0);
    while (l.n) /* to empty: every key out of both indexes */
        ledger_remove(&l, &l.v[l.n / 2]);
    TEST_CHECK_INT(l.index.n, 0);
    TEST_CHECK_INT(l.rindex.n, 0);
    TEST_CHECK(ledger_find(&l, "r", "w1", NULL, -1) == NULL);
    ledger_free(&l);
}

TEST(corrupt_refused)
{
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"", "empty"},
        {"{\"version\":1,\"entries\":[", "truncated JSON"},
        {"{\"version\":2,\"entries\":[],\"actions\":[]}", "version 2 is not 1"},
        {"{\"entries\":[],\"actions\":[]}", "no 'version'"},
        {"{\"version\":1,\"entries\":{},\"actions\":[]}", "no 'entries'"},
        {"{\"version\":1,\"entries\":[],\"actions\":[\"x\"]}", "not a number"},
        {"{\"version\":1,\"entries\":[{\"rule\":\"r\"}],\"actions\":[]}", "without string"},
        {"{\"version\":1,\"entries\":[],\"actions\":[]} trailing", "trailing data"},
        {"{\"version\":1,\"entries\":[{\"rule\":\"r\",\"workload\":\"w\",\"uid\":\"u\","
         "\"target\":\"t\",\"root_api\":\"\",\"root_kind\":\"\",\"root_ns\":\"\","
         "\"root_name\":\"\",\"root_uid\":\"\",\"result\":\"\",\"state\":\"weird\","
         "\"noticed\":null,\"act_after\":1,\"updated\":null,\"attempts\":0}],\"actions\":[]}",
         "unknown state 'weird'"},
        {"{\"version\":1,\"entries\":[{\"rule\":\"r\",\"workload\":\"w\",\"uid\":\"u\","
         "\"target\":\"t\",\"root_api\":\"\",\"root_kind\":\"\",\"root_ns\":\"\","
         "\"root_name\":\"\",\"root_uid\":\"\",\"result\":\"\",\"state\":\"pending\","
         "\"noticed\":null,\"act_after\":null,\"updated\":null,\"attempts\":0}],\"actions\":[]}",
         "without its time"},
    };
    char *p = path_in("bad.json");
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        write_file(p, bad[i].text);
        struct ledger l;
        char err[512] = "";
        TEST_CHECK_INT(ledger_load(&l, p, err, sizeof(err)), -1);
        TEST_CHECK_CONTAINS(err, bad[i].msg);
        TEST_CHECK_CONTAINS(err, "bad.json");
        TEST_CHECK_INT(l.n, 0);
    }
    /* a directory where the file should be: unreadable */
    char *d = path_in("adir");
    mkdir(d, 0700);
    struct ledger l;
    char err[512] = "";
    TEST_CHECK_INT(ledger_load(&l, d, err, sizeof(err)), -1);
    TEST_CHECK(err[0] != '\0');
    rmdir(d);
    free(d);
    free(p);
}

static int fsync_fails(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

/*
 * A failed fsync of the directory after the rename is an error: the rename may not survive a
 * crash, so the write-ahead record is not durable (it was ignored before). The idle proof of
 * an open entry survives the round trip, and a file without it (older builds) still loads.
 */
TEST(dir_fsync_failure_is_an_error)
{
    char *p = path_in("sync.json");
    char err[512] = "";
    struct ledger l;
    TEST_CHECK_INT(ledger_load(&l, p, err, sizeof(err)), 0);
    struct ledger_entry *e = ledger_add(&l, "r", "w", "u", "t", LEDGER_PENDING);
    e->noticed = 1000;
    e->act_after = 1300;
    e->idle_proven = 1240;
    TEST_CHECK_INT(ledger_save(&l, err, sizeof(err)), 0);
    ledger_dir_fsync = fsync_fails;
    e->idle_proven = 1300;
    TEST_CHECK_INT(ledger_save(&l, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "cannot sync directory");
    TEST_CHECK_CONTAINS(err, "sync.json");
    TEST_CHECK_CONTAINS(err, "Input/output error");
    ledger_dir_fsync = fsync;
    ledger_free(&l);
    TEST_CHECK_INT(ledger_load(&l, p, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n, 1);
    /* renamed but not known to be durable: in place until a crash, and reported as failed */
    if (l.n == 1)
        TEST_CHECK_DBL(l.v[0].idle_proven, 1300, 1e-9);
    ledger_free(&l);
    write_file(p, "{\"version\":1,\"entries\":[{\"rule\":\"r\",\"workload\":\"w\",\"uid\":"
                  "\"u\",\"target\":\"t\",\"root_api\":\"\",\"root_kind\":\"\",\"root_ns\":"
                  "\"\",\"root_name\":\"\",\"root_uid\":\"\",\"result\":\"\",\"state\":"
                  "\"pending\",\"noticed\":5,\"act_after\":6,\"updated\":null,\"attempts\":0}],"
                  "\"actions\":[]}");
    TEST_CHECK_INT(ledger_load(&l, p, err, sizeof(err)), 0);
    TEST_CHECK_INT(l.n, 1);
    if (l.n == 1)
        TEST_CHECK(isnan(l.v[0].idle_proven));
    ledger_free(&l);
    free(p);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/gpureclaim-test-ledger.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(save_and_reload);
    RUN(expiry);
    RUN(index_finds_what_a_scan_finds);
    RUN(remove_keeps_the_index);
    RUN(drop_superseded);
    RUN(corrupt_refused);
    RUN(dir_fsync_failure_is_an_error);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove '%s'\n", dir);
    free(cmd);
    return test_done();
}
