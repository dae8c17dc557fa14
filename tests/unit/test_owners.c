/*
 * Unit tests of the ownership snapshot builder (exporter/owners.c) on hand-built inputs:
 * which source owns a partition, to which workload a process's use is summed, shared and
 * unknown owners, container devices and the devices label, the per-process option, and what
 * stays unknown when a source is down.
 */
#include "owners.c"

#include "test.h"

/* Two GPUs: 0000:05:00.0 with 4 partitions (renderD128..131, card0..3), 0000:27:00.0 with 1. */
static struct gpu gpus_v[2];
static struct gpu_list gpus = {.v = gpus_v, .n = 2, .kfd = true};
static const unsigned cus[5] = {38, 38, 38, 38, 304};

static void setup_gpus(void)
{
    memset(gpus_v, 0, sizeof(gpus_v));
    str_copy(gpus_v[0].pci, sizeof(gpus_v[0].pci), "0000:05:00.0");
    gpus_v[0].npart = 4;
    for (int p = 0; p < 4; p++) {
        struct gpu_part *gp = &gpus_v[0].part[p];
        gp->index = p;
        gp->card = p;
        gp->render = 128 + p;
        gp->kfd_node = 2 + p;
        gp->kfd_gpu_id = 1000 + (uint32_t)p;
        if (p == 0)
            str_copy(gp->device_id, sizeof(gp->device_id), "0000:05:00.0");
        else
            snprintf(gp->device_id, sizeof(gp->device_id), "amdgpu_xcp_%d", p - 1);
    }
    str_copy(gpus_v[1].pci, sizeof(gpus_v[1].pci), "0000:27:00.0");
    gpus_v[1].npart = 1;
    gpus_v[1].part[0] = (struct gpu_part){.index = 0,
                                          .card = 8,
                                          .render = 136,
                                          .kfd_node = 10,
                                          .kfd_gpu_id = 2000,
                                          .device_id = "0000:27:00.0"};
}

#define CID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define CID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define CID_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

/* A process in a pod (in_kubernetes), on the host (no container), or in a plain container. */
static struct procscan_proc proc_in(int pid, const char *cid, bool kube)
{
    struct procscan_proc p = {.pid = pid, .has_owner = true};
    p.owner.in_kubernetes = kube;
    if (cid) {
        str_copy(p.owner.container_id, sizeof(p.owner.container_id), cid);
        p.owner.has_container_id = true;
    }
    return p;
}

/* A DRM client of process index `proc` on `minor`, with gfx/compute busy and VRAM. */
static struct procscan_client client(const struct procscan *ps, size_t proc, unsigned minor,
                                     uint64_t gfx_ns, uint64_t vram)
{
    struct procscan_client c = {.proc = proc,
                                .pid = ps->procs[proc].pid,
                                .minor = minor,
                                .render = minor >= 128,
                                .holders = 1,
                                .has_info = true};
    str_copy(c.info.driver, sizeof(c.info.driver), "amdgpu");
    c.info.has_driver = true;
    c.info.n_engines = 1;
    str_copy(c.info.engines[0].name, FDINFO_NAME_MAX, "gfx");
    c.info.engines[0].busy_ns = gfx_ns;
    c.info.engines[0].has_busy = true;
    c.info.n_regions = 1;
    str_copy(c.info.regions[0].name, FDINFO_NAME_MAX, "vram");
    c.info.regions[0].bytes[FDINFO_MEM_RESIDENT] = vram;
    c.info.regions[0].has = 1u << FDINFO_MEM_RESIDENT;
    return c;
}

static const struct owners_owner *find_owner(const struct owners_snap *s, size_t part,
                                             enum owners_source src, const char *pod,
                                             const char *cid)
{
    for (size_t i = 0; i < s->n_owners; i++) {
        const struct owners_owner *o = &s->owners[i];
        if (o->part == part && o->source == src && strcmp(o->who.pod, pod) == 0 &&
            strcmp(o->who.container_id, cid) == 0)
            return o;
    }
    return NULL;
}

static const struct owners_use *find_use(const struct owners_use *v, size_t n, size_t part,
                                         const char *pod, const char *cid, int pid)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].part == part && v[i].pid == pid && strcmp(v[i].who.pod, pod) == 0 &&
            strcmp(v[i].who.container_id, cid) == 0)
            return &v[i];
    return NULL;
}

static size_t count_owners(const struct owners_snap *s, size_t part)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_owners; i++)
        n += s->owners[i].part == part;
    return n;
}

static uint64_t engine_ns(const struct owners_use *u, const char *name)
{
    for (unsigned i = 0; i < u->n_engines; i++)
        if (strcmp(u->engines[i].name, name) == 0)
            return u->engines[i].ns;
    return UINT64_MAX;
}

/* The common scene: pod train/a holds partitions 0 and 1 of GPU 0; partition 2 is shared by
 * pods b1 and b2; partition 3 and GPU 1 are unallocated. */
static struct podres_alloc allocs[] = {
    {"ml", "a", "trainer", "amd.com/cpx_nps4", "0000:05:00.0"},
    {"ml", "a", "trainer", "amd.com/cpx_nps4", "amdgpu_xcp_0"},
    {"ml", "a", "trainer", "amd.com/cpx_nps4", "amdgpu_xcp_0"}, /* listed twice */
    {"ml", "b1", "w", "amd.com/cpx_nps4", "amdgpu_xcp_1"},
    {"ml", "b2", "w", "amd.com/cpx_nps4", "amdgpu_xcp_1"},
    {"ml", "ghost", "w", "amd.com/cpx_nps4", "amdgpu_xcp_99"}, /* not on this node */
};
static struct podres_list pods = {.allocs = allocs, .n_allocs = ARRAY_LEN(allocs)};

TEST(kubelet_owners_and_unused_allocation)
{
    setup_gpus();
    struct procscan ps = {0};
    struct kfdproc_list kfd = {.present = true};
    struct owners_input in = {.gpus = &gpus, .cus = cus, .pods = &pods, .procs = &ps, .kfd = &kfd};
    struct owners_snap s;
    owners_build(&in, &s);
    TEST_CHECK_INT(s.n_parts, 5);
    TEST_CHECK_STR(s.parts[2].device_id, "amdgpu_xcp_1");
    TEST_CHECK_STR(s.parts[4].gpu, "0000:27:00.0");
    TEST_CHECK_INT(s.parts[4].cus, 304);
    TEST_CHECK_INT(s.n_owners, 4); /* duplicate listing dropped, ghost unknown */
    TEST_CHECK_INT(s.unknown_alloc_ids, 1);
    const struct owners_owner *o = find_owner(&s, 1, OWNERS_KUBELET, "a", "");
    TEST_CHECK(o != NULL);
    if (o) {
        TEST_CHECK_STR(o->resource, "amd.com/cpx_nps4");
        TEST_CHECK_STR(o->who.namespace, "ml");
        TEST_CHECK_STR(o->who.container, "trainer");
        TEST_CHECK_STR(o->who.container_name, "");
    }
    TEST_CHECK_INT(count_owners(&s, 2), 2); /* shared: two series */
    TEST_CHECK_INT(count_owners(&s, 3), 0);
    /* Owned but never opened: a workload with zero use, all values known. */
    const struct owners_use *u = find_use(s.uses, s.n_uses, 0, "a", "", 0);
    TEST_CHECK(u != NULL);
    if (u) {
        TEST_CHECK_INT(u->processes, 0);
        TEST_CHECK_INT(u->has, OWNERS_HAS_CU | OWNERS_HAS_VRAM | OWNERS_HAS_SDMA |
                                   OWNERS_HAS_EVICTED | OWNERS_HAS_PROCESSES);
        TEST_CHECK_INT(u->vram_bytes, 0);
    }
    TEST_CHECK_INT(s.n_uses, 4);
    TEST_CHECK_INT(s.n_procs, 0);
    owners_free(&s);
}

TEST(processes_attributed_by_rule)
{
    setup_gpus();
    struct procscan_proc procs[] = {
        proc_in(100, CID_A, true),  /* pod a's container */
        proc_in(200, CID_B, true),  /* one of the pods sharing partition 2 */
        proc_in(300, NULL, false),  /* a host tool on pod a's partition */
        proc_in(400, CID_C, false), /* a plain container on the unallocated partition 3 */
        {.pid = 500},               /* cgroup unreadable, on GPU 1 */
    };
    struct procscan ps = {.procs = procs, .n_procs = ARRAY_LEN(procs)};
    struct procscan_client clients[] = {
        client(&ps, 0, 128, 1000000000, 4096),
        client(&ps, 0, 129, 500000000, 0),
        client(&ps, 0, 1, 250000000, 1024), /* card1: same partition as renderD129 */
        client(&ps, 1, 130, 7, 8),
        client(&ps, 2, 128, 3000000000, 0),
        client(&ps, 3, 131, 9, 0),
        client(&ps, 4, 136, 0, 0),
        client(&ps, 4, 200, 5, 5), /* renderD200: not one of ours (an iGPU) */
    };
    clients[1].shared_owners = true;
    ps.clients = clients;
    ps.n_clients = ARRAY_LEN(clients);
    struct owners_input in = {.gpus = &gpus, .cus = cus, .pods = &pods, .procs = &ps};
    struct owners_snap s;
    owners_build(&in, &s);

    /* Single pod-resources owner: the process counts for the pod, no extra owner. */
    const struct owners_use *u = find_use(s.uses, s.n_uses, 1, "a", "", 0);
    TEST_CHECK(u != NULL);
    if (u) {
        TEST_CHECK_INT(u->processes, 1);
        TEST_CHECK_INT(engine_ns(u, "gfx"), 750000000); /* render and card client summed */
        TEST_CHECK_INT(u->n_regions, 1);
        TEST_CHECK_INT(u->regions[0].bytes, 1024);
        /* KFD source down: its values are unknown, not zero. */
        TEST_CHECK_INT(u->has, OWNERS_HAS_PROCESSES);
    }
    TEST_CHECK_INT(s.shared_clients, 1);
    TEST_CHECK_INT(count_owners(&s, 1), 1);

    /* The host process on partition 0 is not the pod's: its own workload and owner. */
    u = find_use(s.uses, s.n_uses, 0, "a", "", 0);
    TEST_CHECK(u && u->processes == 1 && engine_ns(u, "gfx") == 1000000000);
    u = find_use(s.uses, s.n_uses, 0, "", "", 0);
    TEST_CHECK(u && u->processes == 1 && engine_ns(u, "gfx") == 3000000000u);
    TEST_CHECK(find_owner(&s, 0, OWNERS_PROCESS, "", "") != NULL);

    /* Shared partition: attributed by container id only, shown as a process owner. */
    u = find_use(s.uses, s.n_uses, 2, "", CID_B, 0);
    TEST_CHECK(u && u->processes == 1);
    TEST_CHECK(find_owner(&s, 2, OWNERS_PROCESS, "", CID_B) != NULL);
    TEST_CHECK_INT(count_owners(&s, 2), 3);
    TEST_CHECK(find_use(s.uses, s.n_uses, 2, "b1", "", 0) != NULL); /* zero use */

    /* Unallocated partition opened by a container unknown to any runtime. */
    TEST_CHECK(find_owner(&s, 3, OWNERS_PROCESS, "", CID_C) != NULL);
    /* No cgroup: all labels empty. */
    u = find_use(s.uses, s.n_uses, 4, "", "", 0);
    TEST_CHECK(u && u->processes == 1 && u->n_engines == 1);
    TEST_CHECK_INT(s.n_procs, 0);
    owners_free(&s);
}

TEST(kfd_use_and_cu_ratio)
{
    setup_gpus();
    struct procscan_proc procs[] = {proc_in(100, CID_A, true), proc_in(101, CID_A, true)};
    struct procscan ps = {.procs = procs, .n_procs = 2};
    struct kfdproc_proc kp[] = {
        {.pid = 100, .first_gpu = 0, .n_gpus = 3},
        {.pid = 101, .first_gpu = 3, .n_gpus = 1},
        {.pid = 102, .first_gpu = 4, .n_gpus = 1}, /* not in the procfs scan */
    };
    const unsigned all =
        KFDPROC_HAS_VRAM | KFDPROC_HAS_SDMA | KFDPROC_HAS_CU_OCCUPANCY | KFDPROC_HAS_EVICTED_MS;
    struct kfdproc_gpu kg[] = {
        {.gpu_id = 1000,
         .vram_bytes = 1 << 30,
         .sdma_us = 1500000,
         .cu_occupancy = 19,
         .evicted_ms = 250,
         .has = all},
        {.gpu_id = 1003, .has = all},                  /* opened /dev/kfd only: ignored */
        {.gpu_id = 4242, .vram_bytes = 5, .has = all}, /* no such gpu_id here */
        {.gpu_id = 1000,
         .vram_bytes = 1 << 20,
         .cu_occupancy = 19,
         .queues = 1,
         .has = KFDPROC_HAS_VRAM | KFDPROC_HAS_CU_OCCUPANCY},
        {.gpu_id = 2000, .queues = 2, .has = KFDPROC_HAS_VRAM}, /* no cu_occupancy file */
    };
    struct kfdproc_list kfd = {.procs = kp, .n_procs = 3, .gpus = kg, .n_gpus = 5, .present = true};
    struct owners_input in = {
        .gpus = &gpus, .cus = cus, .pods = &pods, .procs = &ps, .kfd = &kfd, .per_process = true};
    struct owners_snap s;
    owners_build(&in, &s);
    const struct owners_use *u = find_use(s.uses, s.n_uses, 0, "a", "", 0);
    TEST_CHECK(u != NULL);
    if (u) {
        TEST_CHECK_INT(u->processes, 2);
        TEST_CHECK_INT(u->cu_occupancy, 38);
        TEST_CHECK_INT(u->vram_bytes, (1 << 30) + (1 << 20));
        TEST_CHECK_INT(u->sdma_us, 1500000);
        TEST_CHECK_INT(u->evicted_ms, 250);
        TEST_CHECK(u->has & OWNERS_HAS_CU);
        TEST_CHECK_INT(u->n_engines, 0);
    }
    TEST_CHECK(find_use(s.uses, s.n_uses, 3, "", CID_A, 0) == NULL);
    /* A KFD process without cu_occupancy makes its workload's CU figure unknown. */
    u = find_use(s.uses, s.n_uses, 4, "", "", 0);
    TEST_CHECK(u != NULL);
    if (u) {
        TEST_CHECK(!(u->has & OWNERS_HAS_CU));
        TEST_CHECK(u->has & OWNERS_HAS_VRAM);
    }
    /* Per process: one entry per (pid, partition), labelled like its workload. */
    TEST_CHECK_INT(s.n_procs, 3);
    u = find_use(s.procs, s.n_procs, 0, "a", "", 101);
    TEST_CHECK(u && u->vram_bytes == 1 << 20 && u->cu_occupancy == 19 && u->processes == 1);
    TEST_CHECK(find_use(s.procs, s.n_procs, 4, "", "", 102) != NULL);
    owners_free(&s);
}

TEST(runtime_devices_and_label)
{
    setup_gpus();
    char *dev_a[] = {"/dev/dri/renderD129", "/dev/kfd", "/dev/dri/renderD250"};
    struct docker_label lab_b[] = {
        {"other", "x"},
        {OWNERS_DEVICES_LABEL, " amdgpu_xcp_2 ,0000:27:00.0,,nope"},
    };
    char *dev_c[] = {"/dev/dri"};
    struct docker_container ctrs[3] = {
        {.id = CID_A, .name = "train-a", .devices = dev_a, .ndevices = 3},
        {.id = CID_B, .name = "infer-b", .labels = lab_b, .nlabels = 2},
        {.id = CID_C, .name = "all-gpus", .devices = dev_c, .ndevices = 1},
    };
    struct procscan_proc procs[] = {proc_in(10, CID_A, false), proc_in(20, CID_B, false)};
    struct procscan ps = {.procs = procs, .n_procs = 2};
    struct procscan_client clients[] = {client(&ps, 0, 129, 1, 0), client(&ps, 1, 128, 2, 0)};
    ps.clients = clients;
    ps.n_clients = 2;
    struct owners_input in = {.gpus = &gpus, .procs = &ps, .containers = ctrs, .n_containers = 3};
    struct owners_snap s;
    owners_build(&in, &s);
    const struct owners_owner *o = find_owner(&s, 1, OWNERS_RUNTIME, "", CID_A);
    TEST_CHECK(o && strcmp(o->who.container_name, "train-a") == 0 && o->resource[0] == '\0');
    TEST_CHECK(find_owner(&s, 3, OWNERS_RUNTIME, "", CID_B) != NULL);
    TEST_CHECK(find_owner(&s, 4, OWNERS_RUNTIME, "", CID_B) != NULL);
    TEST_CHECK_INT(s.unknown_runtime_ids, 2); /* renderD250 and "nope" */
    for (size_t p = 0; p < 5; p++)            /* /dev/dri: every partition */
        TEST_CHECK(find_owner(&s, p, OWNERS_RUNTIME, "", CID_C) != NULL);
    /* The container's process on its device: the runtime workload, no process owner. */
    const struct owners_use *u = find_use(s.uses, s.n_uses, 1, "", CID_A, 0);
    TEST_CHECK(u && u->processes == 1 && strcmp(u->who.container_name, "train-a") == 0);
    TEST_CHECK(find_owner(&s, 1, OWNERS_PROCESS, "", CID_A) == NULL);
    /* Container B's process on a device it was not given: named, but a process owner. */
    o = find_owner(&s, 0, OWNERS_PROCESS, "", CID_B);
    TEST_CHECK(o && strcmp(o->who.container_name, "infer-b") == 0);
    /* Without pod-resources (not configured) nothing is attributed to a pod. */
    for (size_t i = 0; i < s.n_owners; i++)
        TEST_CHECK(s.owners[i].source != OWNERS_KUBELET);
    owners_free(&s);
}

TEST(dra_claims)
{
    setup_gpus();
    struct podres_claim claims[] = {
        {"ns", "p", "c", "ns", "claim", "gpu.amd.com", "pool", "gpu-2-130"},
        {"ns", "p", "c", "ns", "claim", "gpu.amd.com", "pool", "gpu-2-999"},
        {"ns", "p", "c", "ns", "claim", "gpu.amd.com", "pool", "gpu-x-130"},
        {"ns", "q", "c", "ns", "claim", "other.example.com", "pool", "gpu-2-131"},
    };
    struct podres_list pl = {.claims = claims, .n_claims = 4};
    struct owners_input in = {.gpus = &gpus, .pods = &pl};
    struct owners_snap s;
    owners_build(&in, &s);
    TEST_CHECK_INT(s.n_owners, 1);
    const struct owners_owner *o = find_owner(&s, 2, OWNERS_KUBELET, "p", "");
    TEST_CHECK(o && strcmp(o->resource, "gpu.amd.com") == 0);
    TEST_CHECK_INT(s.unknown_alloc_ids, 2);
    /* procfs and KFD down: the owner's use is unknown, not zero. */
    const struct owners_use *u = find_use(s.uses, s.n_uses, 2, "p", "", 0);
    TEST_CHECK(u && u->has == 0);
    owners_free(&s);
}

TEST(dra_name_parser)
{
    static const struct {
        const char *name;
        long minor;
    } cases[] = {
        {"gpu-56-184", 184}, {"gpu-0-128", 128}, {"gpu--128", -1},
        {"gpu-1-", -1},      {"gpu-1-12x", -1},  {"gpu-1-+3", -1},
        {"gpu-1", -1},       {"card-1-128", -1}, {"gpu-1-99999999", -1},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        if (dra_render_minor(cases[i].name) != cases[i].minor)
            fprintf(stderr, "case '%s'\n", cases[i].name);
        TEST_CHECK_INT(dra_render_minor(cases[i].name), cases[i].minor);
    }
}

TEST(all_sources_down)
{
    setup_gpus();
    struct owners_input in = {.gpus = &gpus};
    struct owners_snap s;
    owners_build(&in, &s);
    TEST_CHECK_INT(s.n_parts, 5);
    TEST_CHECK_INT(s.n_owners, 0);
    TEST_CHECK_INT(s.n_uses, 0);
    owners_free(&s);
    struct gpu_list none = {0};
    in.gpus = &none;
    owners_build(&in, &s);
    TEST_CHECK_INT(s.n_parts, 0);
    owners_free(&s);
    TEST_CHECK_STR(owners_source_name(OWNERS_RUNTIME), "runtime");
    TEST_CHECK_STR(owners_source_name(OWNERS_PROCESS), "process");
}

/* Many processes: the workload table grows past its first size and keeps every sum. */
TEST(many_processes)
{
    setup_gpus();
    enum { N = 3000 };
    struct procscan_proc *procs = xcalloc(N, sizeof(*procs));
    struct procscan_client *clients = xcalloc(N, sizeof(*clients));
    struct procscan ps = {.procs = procs, .n_procs = N, .clients = clients, .n_clients = N};
    for (int i = 0; i < N; i++) {
        char cid[65];
        snprintf(cid, sizeof(cid), "%064x", i % 700);
        procs[i] = proc_in(1000 + i, cid, false);
        clients[i] = client(&ps, (size_t)i, 128 + (unsigned)(i % 4), 1, 0);
    }
    struct owners_input in = {.gpus = &gpus, .procs = &ps, .per_process = true};
    struct owners_snap s;
    owners_build(&in, &s);
    TEST_CHECK_INT(s.n_procs, N);
    TEST_CHECK_INT(s.n_uses, 700); /* i % 700 fixes i % 4 as well (700 is a multiple of 4) */
    unsigned total = 0;
    uint64_t ns = 0;
    for (size_t i = 0; i < s.n_uses; i++) {
        total += s.uses[i].processes;
        ns += engine_ns(&s.uses[i], "gfx");
    }
    TEST_CHECK_INT(total, N);
    TEST_CHECK_INT(ns, N);
    TEST_CHECK_INT(s.n_owners, 700);
    owners_free(&s);
    free(procs);
    free(clients);
}

int main(void)
{
    RUN(kubelet_owners_and_unused_allocation);
    RUN(processes_attributed_by_rule);
    RUN(kfd_use_and_cu_ratio);
    RUN(runtime_devices_and_label);
    RUN(dra_claims);
    RUN(dra_name_parser);
    RUN(all_sources_down);
    RUN(many_processes);
    return test_done();
}
