/*
 * Tests for the process scan on procfs-like trees built under a mkdtemp directory:
 * fd symlinks to /dev/dri/renderD130 and friends (readlink works on a dangling link, so no
 * device nodes are needed), fdinfo and cgroup files. Covers deduplication of dup()ed and
 * passed fds by (drm-client-id, minor), vanished PIDs and fds, non-DRM fds, old kernels
 * without drm-client-id, and a timed scan of 1,000 processes of which 200 hold render nodes.
 */
#include "procscan.c"

#include "test.h"
#include "tmptree.h"
#include "util.h"

static char root[256];

/* Write `content` verbatim (no newline added) to root/rel, creating parent directories. */
static void put(const char *rel, const char *content)
{
    TEST_CHECK_INT(tmptree_put(root, rel, content), 0);
}

/* root/<pid>/fd/<fd> -> target */
static void link_fd(int pid, int fd, const char *target)
{
    char rel[64];
    snprintf(rel, sizeof(rel), "%d/fd/%d", pid, fd);
    TEST_CHECK_INT(tmptree_symlink(root, rel, target), 0);
}

static void put_fdinfo(int pid, int fd, const char *text)
{
    char rel[64];
    snprintf(rel, sizeof(rel), "%d/fdinfo/%d", pid, fd);
    put(rel, text);
}

static void put_cgroup(int pid, const char *text)
{
    char rel[64];
    snprintf(rel, sizeof(rel), "%d/cgroup", pid);
    put(rel, text);
}

#define CID_A "b4cc4867d9fc1c8455f0ed62a35752997b4e9624968df8953d40f7f847719c81"
#define CID_B "e288465587f13f319ff25fc17b094d52dae48844cc00a8423a71839084db235c"
#define POD_A "40934a46-d409-4f4a-bb8b-1ec0b0436320"
#define POD_B "31dd0274-bb43-4975-bdbc-7e10047a23f8"
#define CG_A                                                                                       \
    "0::/kubepods.slice/kubepods-burstable.slice/"                                                 \
    "kubepods-burstable-pod40934a46_d409_4f4a_bb8b_1ec0b0436320.slice/cri-containerd-" CID_A       \
    ".scope\n"
#define CG_B "0::/kubepods/besteffort/pod" POD_B "/" CID_B "\n"

static const char *fdinfo_text(uint64_t client_id, uint64_t gfx_ns)
{
    static char buf[256];
    snprintf(buf, sizeof(buf),
             "pos:\t0\nflags:\t02100002\ndrm-driver:\tamdgpu\ndrm-client-id:\t%llu\n"
             "drm-pdev:\t0000:04:00.0\ndrm-resident-vram:\t1024 KiB\ndrm-engine-gfx:\t%llu ns\n",
             (unsigned long long)client_id, (unsigned long long)gfx_ns);
    return buf;
}

static const struct procscan_client *find_client(const struct procscan *ps, uint64_t id,
                                                 unsigned minor)
{
    for (size_t i = 0; i < ps->n_clients; i++)
        if (ps->clients[i].has_info && ps->clients[i].info.has_client_id &&
            ps->clients[i].info.client_id == id && ps->clients[i].minor == minor)
            return &ps->clients[i];
    return NULL;
}

TEST(scan_small_tree)
{
    TEST_CHECK_INT(tmptree_make(root, sizeof(root), "test_procscan"), 0);
    /* 100: render node through two dup()ed fds, plus /dev/kfd and non-DRM fds */
    link_fd(100, 0, "/dev/null");
    link_fd(100, 1, "pipe:[12345]");
    link_fd(100, 2, "socket:[999]");
    link_fd(100, 3, "/dev/dri/renderD130");
    link_fd(100, 4, "/dev/dri/renderD130");
    link_fd(100, 5, "/dev/kfd");
    put_fdinfo(100, 3, fdinfo_text(10, 500));
    put_fdinfo(100, 4, fdinfo_text(10, 500));
    put_cgroup(100, CG_A);
    /* 200: the same client passed over a socket (other pod), a partition node with the same
     * client id (another device: a different client), and a primary node */
    link_fd(200, 7, "/dev/dri/renderD130");
    link_fd(200, 8, "/dev/dri/renderD131");
    link_fd(200, 9, "/dev/dri/card1");
    put_fdinfo(200, 7, fdinfo_text(10, 500));
    put_fdinfo(200, 8, fdinfo_text(10, 7));
    put_fdinfo(200, 9, fdinfo_text(11, 0));
    put_cgroup(200, CG_B);
    /* 300: its fd closed between readlink and reading fdinfo: the process is dropped */
    link_fd(300, 3, "/dev/dri/renderD128");
    put_cgroup(300, CG_A);
    /* 400: exited: no fd directory left */
    put_cgroup(400, CG_A);
    /* 500: nothing of interest, including look-alikes */
    link_fd(500, 3, "/dev/dri/by-path/pci-0000:04:00.0-render");
    link_fd(500, 4, "/dev/dri/renderD12x");
    link_fd(500, 5, "/dev/dri/renderD0128");
    link_fd(500, 6, "/dev/kfd2");
    link_fd(500, 7, "/dev/dri/renderD128 (deleted)");
    link_fd(500, 8, "anon_inode:[eventfd]");
    /* 600: fdinfo without a driver key (pre-5.14 kernel): kept, but without info */
    link_fd(600, 3, "/dev/dri/renderD128");
    put_fdinfo(600, 3, "pos:\t0\nflags:\t02\nmnt_id:\t24\n");
    put_cgroup(600, CG_B);
    /* 700: v5.14-v5.18 keys, no drm-client-id: the two fds cannot be deduplicated */
    link_fd(700, 3, "/dev/dri/renderD129");
    link_fd(700, 4, "/dev/dri/renderD129");
    put_fdinfo(700, 3, "pdev:\t0000:03:00.0\npasid:\t5\nvram mem:\t4 kB\n");
    put_fdinfo(700, 4, "pdev:\t0000:03:00.0\npasid:\t5\nvram mem:\t4 kB\n");
    put_cgroup(700, "0::/user.slice/user-1000.slice/session-3.scope\n");
    /* 800: /dev/kfd only, cgroup file unreadable (missing) */
    link_fd(800, 9, "/dev/kfd");
    /* not PIDs */
    TEST_CHECK_INT(tmptree_mkdirs(root, "self/fd"), 0);
    TEST_CHECK_INT(tmptree_mkdirs(root, "0/fd"), 0);
    put("uptime", "1.0 2.0\n");

    struct procscan ps = {0};
    char err[256] = "";
    TEST_CHECK_INT(procscan_run(root, &ps, err, sizeof(err)), 0);
    TEST_CHECK_INT(ps.scanned, 8);
    TEST_CHECK_INT(ps.n_procs, 5);
    TEST_CHECK_INT(ps.n_clients, 6);
    TEST_CHECK_INT(ps.vanished, 2); /* 300's fd and 400's fd directory */
    TEST_CHECK_INT(ps.fdinfo_errors, 1);
    TEST_CHECK(ps.seconds >= 0);

    const struct procscan_proc *p = procscan_find_proc(&ps, 100);
    TEST_CHECK(p && p->kfd && p->drm_fds == 2 && p->has_owner);
    if (p) {
        TEST_CHECK_STR(p->owner.pod_uid, POD_A);
        TEST_CHECK_STR(p->owner.container_id, CID_A);
    }
    TEST_CHECK(procscan_find_proc(&ps, 300) == NULL);
    TEST_CHECK(procscan_find_proc(&ps, 400) == NULL);
    TEST_CHECK(procscan_find_proc(&ps, 500) == NULL);
    p = procscan_find_proc(&ps, 800);
    TEST_CHECK(p && p->kfd && p->drm_fds == 0 && !p->has_owner);

    const struct procscan_client *c = find_client(&ps, 10, 130);
    TEST_CHECK(c != NULL);
    if (c) {
        TEST_CHECK_INT(c->pid, 100);
        TEST_CHECK_INT(c->fd, 3);
        TEST_CHECK_INT(c->holders, 3);
        TEST_CHECK(c->shared_owners);
        TEST_CHECK(c->render);
        TEST_CHECK_INT(ps.procs[c->proc].pid, 100);
        uint64_t ns = 0;
        TEST_CHECK(fdinfo_engine_ns(&c->info, "gfx", &ns) && ns == 500);
    }
    c = find_client(&ps, 10, 131);
    TEST_CHECK(c && c->pid == 200 && c->holders == 1 && !c->shared_owners);
    c = find_client(&ps, 11, 1);
    TEST_CHECK(c && c->pid == 200 && !c->render && c->fd == 9);

    unsigned no_info = 0, legacy = 0;
    for (size_t i = 0; i < ps.n_clients; i++) {
        if (!ps.clients[i].has_info) {
            no_info++;
            TEST_CHECK_INT(ps.clients[i].pid, 600);
            TEST_CHECK_INT(ps.clients[i].minor, 128);
        } else if (ps.clients[i].info.legacy_format) {
            legacy++;
            TEST_CHECK_INT(ps.clients[i].pid, 700);
        }
    }
    TEST_CHECK_INT(no_info, 1);
    TEST_CHECK_INT(legacy, 2);

    /* A second run on a changed tree: reuses memory, forgets what is gone. */
    char path[512];
    snprintf(path, sizeof(path), "%s/200/fd/7", root);
    TEST_CHECK(unlink(path) == 0);
    struct procscan_client *clients_before = ps.clients;
    TEST_CHECK_INT(procscan_run(root, &ps, err, sizeof(err)), 0);
    TEST_CHECK(ps.clients == clients_before);
    TEST_CHECK_INT(ps.n_clients, 6);
    c = find_client(&ps, 10, 130);
    TEST_CHECK(c && c->holders == 2 && !c->shared_owners);

    procscan_free(&ps);
    TEST_CHECK_INT(tmptree_remove(root), 0);
}

TEST(missing_root)
{
    struct procscan ps = {0};
    char err[256] = "";
    TEST_CHECK_INT(procscan_run("/nonexistent/gpureclaim-proc", &ps, err, sizeof(err)), -1);
    TEST_CHECK_STR(err, "cannot open '/nonexistent/gpureclaim-proc': No such file or directory");
    procscan_free(&ps);
}

TEST(scan_1000_processes)
{
    TEST_CHECK_INT(tmptree_make(root, sizeof(root), "test_procscan"), 0);
    char rel[64], target[64];
    const char *common[] = {"/dev/null",
                            "pipe:[1]",
                            "pipe:[2]",
                            "socket:[3]",
                            "/usr/lib/x86_64-linux-gnu/libc.so.6",
                            "anon_inode:[eventpoll]"};
    for (int pid = 1000; pid < 2000; pid++) {
        for (int fd = 0; fd < 6; fd++)
            link_fd(pid, fd, common[fd]);
        if (pid % 5 == 0) { /* 200 of the 1000 */
            snprintf(target, sizeof(target), "/dev/dri/renderD%d", 128 + pid % 8);
            link_fd(pid, 6, target);
            link_fd(pid, 7, "/dev/kfd");
            put_fdinfo(pid, 6, fdinfo_text((uint64_t)pid, (uint64_t)pid * 1000));
            put_cgroup(pid, pid % 10 ? CG_A : CG_B);
        } else {
            snprintf(rel, sizeof(rel), "%d/cgroup", pid);
            put(rel, "0::/system.slice/cron.service\n");
        }
    }
    struct procscan ps = {0};
    char err[256] = "";
    double best = 1e9;
    for (int run = 0; run < 5; run++) {
        TEST_CHECK_INT(procscan_run(root, &ps, err, sizeof(err)), 0);
        if (ps.seconds < best)
            best = ps.seconds;
    }
    TEST_CHECK_INT(ps.scanned, 1000);
    TEST_CHECK_INT(ps.n_procs, 200);
    TEST_CHECK_INT(ps.n_clients, 200);
    TEST_CHECK_INT(ps.vanished, 0);
    fprintf(stderr, "procscan: 1000 processes (200 with render nodes), best of 5: %.2f ms\n",
            best * 1e3);
    /* No bound on the time here: the figure is printed for the reader, and speed is measured
     * in `make bench` (the scrape latency includes this scan). A bound of 1 s failed under
     * valgrind on a loaded machine (1.66 s) with nothing wrong. What a regression to a
     * quadratic dedupe would break is checked: every client found once, in the hash. */
    TEST_CHECK(ps.table_used == ps.n_clients);
    procscan_free(&ps);
    TEST_CHECK_INT(tmptree_remove(root), 0);
}

int main(void)
{
    RUN(scan_small_tree);
    RUN(missing_root);
    RUN(scan_1000_processes);
    return test_done();
}
