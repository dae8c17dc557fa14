/*
 * The ownership snapshot builder (see owners.h). Owns the attribution rules: which source
 * says who holds a partition, which processes count as using it, and how their use is summed
 * per workload. No I/O and no clock, so every rule is unit-tested on hand-built inputs.
 *
 * A process "uses" a partition when it holds a DRM client on the partition's render (or
 * card) node, or when KFD shows VRAM, user queues or occupied CUs for it on the partition's
 * gpu_id. A KFD entry alone is not enough: opening /dev/kfd creates entries for every GPU
 * the process can see ("rocm-smi --showpids lists processes that don't actually use the
 * GPU(s)", ROCm/legacy-rocm-build#4411), which would make every ROCm process a user of all
 * 64 partitions of a CPX node.
 */
#include "owners.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Internal bit of owners_use.has while building: a KFD entry lacked cu_occupancy (ASICs
 * without get_cu_occupancy), so the workload's CU figure is not known. */
#define CU_UNKNOWN (1u << 31)

const char *owners_source_name(enum owners_source s)
{
    switch (s) {
    case OWNERS_KUBELET:
        return "kubelet";
    case OWNERS_RUNTIME:
        return "runtime";
    case OWNERS_PROCESS:
        return "process";
    }
    return "unknown";
}

/* ---- lookups built once per run --------------------------------------------------------- */

struct key_part {
    uint32_t key;
    size_t part;
};

struct build {
    const struct owners_input *in;
    struct owners_snap *s;
    size_t *gpu_base;        /* first partition index of each GPU */
    struct key_part *minors; /* render and card minors, sorted */
    size_t n_minors;
    struct key_part *gpu_ids; /* KFD gpu_ids, sorted */
    size_t n_gpu_ids;
    long *single_kube; /* per partition: owner index of its only pod-resources owner, or -1 */
    struct owners_use *pairs; /* (pid, partition) uses */
    size_t n_pairs, cap_pairs;
    size_t *pair_table;
    size_t pair_cap;
};

static int cmp_key(const void *a, const void *b)
{
    const struct key_part *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

static long find_key(const struct key_part *v, size_t n, uint32_t key)
{
    struct key_part k = {.key = key};
    const struct key_part *f = bsearch(&k, v, n, sizeof(*v), cmp_key);
    return f ? (long)f->part : -1;
}

static long part_of(const struct build *b, const struct gpu *g, const struct gpu_part *p)
{
    return (long)(b->gpu_base[g - b->in->gpus->v] + (size_t)(p - g->part));
}

static long part_by_device_id(const struct build *b, const char *id)
{
    const struct gpu *g;
    const struct gpu_part *p;
    if (!gpu_find_device_id(b->in->gpus, id, &g, &p))
        return -1;
    return part_of(b, g, p);
}

static void index_parts(struct build *b)
{
    const struct gpu_list *l = b->in->gpus;
    struct owners_snap *s = b->s;
    size_t n = 0;
    b->gpu_base = xcalloc(l->n + 1, sizeof(*b->gpu_base));
    for (size_t i = 0; i < l->n; i++) {
        b->gpu_base[i] = n;
        n += (size_t)l->v[i].npart;
    }
    s->parts = xcalloc(n + 1, sizeof(*s->parts));
    s->n_parts = n;
    b->minors = xcalloc(2 * n + 1, sizeof(*b->minors));
    b->gpu_ids = xcalloc(n + 1, sizeof(*b->gpu_ids));
    b->single_kube = xcalloc(n + 1, sizeof(*b->single_kube));
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct gpu *g = &l->v[i];
        for (int j = 0; j < g->npart; j++, k++) {
            const struct gpu_part *p = &g->part[j];
            struct owners_part *op = &s->parts[k];
            str_copy(op->gpu, sizeof(op->gpu), g->pci);
            snprintf(op->partition, sizeof(op->partition), "%d", p->index);
            str_copy(op->device_id, sizeof(op->device_id), p->device_id);
            op->kfd_gpu_id = p->kfd_gpu_id;
            op->cus = b->in->cus ? b->in->cus[k] : 0;
            /* Render minors start at 128 and card minors below 128: one key space. */
            if (p->render >= 0)
                b->minors[b->n_minors++] = (struct key_part){(uint32_t)p->render, k};
            if (p->card >= 0)
                b->minors[b->n_minors++] = (struct key_part){(uint32_t)p->card, k};
            if (p->kfd_gpu_id)
                b->gpu_ids[b->n_gpu_ids++] = (struct key_part){p->kfd_gpu_id, k};
            b->single_kube[k] = -1;
        }
    }
    qsort(b->minors, b->n_minors, sizeof(*b->minors), cmp_key);
    qsort(b->gpu_ids, b->n_gpu_ids, sizeof(*b->gpu_ids), cmp_key);
}

/* ---- strings and workloads -------------------------------------------------------------- */

static const char *keep(struct owners_snap *s, const char *v)
{
    if (!v || !*v)
        return "";
    if (s->n_strs == s->cap_strs) {
        s->cap_strs = s->cap_strs ? 2 * s->cap_strs : 64;
        s->strs = xrealloc(s->strs, s->cap_strs * sizeof(*s->strs));
    }
    return s->strs[s->n_strs++] = xstrdup(v);
}

static struct owners_who keep_who(struct owners_snap *s, const struct owners_who *w)
{
    return (struct owners_who){keep(s, w->namespace), keep(s, w->pod), keep(s, w->container),
                               keep(s, w->container_id), keep(s, w->container_name)};
}

static bool same_who(const struct owners_who *a, const struct owners_who *b)
{
    return strcmp(a->namespace, b->namespace) == 0 && strcmp(a->pod, b->pod) == 0 &&
           strcmp(a->container, b->container) == 0 &&
           strcmp(a->container_id, b->container_id) == 0 &&
           strcmp(a->container_name, b->container_name) == 0;
}

static uint64_t who_hash(size_t part, const struct owners_who *w)
{
    const char *v[5] = {w->namespace, w->pod, w->container, w->container_id, w->container_name};
    uint64_t h = fnv1a64(&part, sizeof(part));
    for (size_t i = 0; i < 5; i++)
        h = h * 1099511628211ull ^ fnv1a64(v[i], strlen(v[i]) + 1);
    return h;
}

static void use_table_insert(struct owners_snap *s, size_t idx)
{
    size_t mask = s->table_cap - 1;
    size_t h = (size_t)who_hash(s->uses[idx].part, &s->uses[idx].who) & mask;
    while (s->table[h])
        h = (h + 1) & mask;
    s->table[h] = idx + 1;
}

/* The workload entry of (part, who), created empty (strings copied) if new. */
static struct owners_use *workload(struct owners_snap *s, size_t part, const struct owners_who *w)
{
    if (s->table_cap) {
        size_t mask = s->table_cap - 1;
        for (size_t h = (size_t)who_hash(part, w) & mask; s->table[h]; h = (h + 1) & mask) {
            struct owners_use *u = &s->uses[s->table[h] - 1];
            if (u->part == part && same_who(&u->who, w))
                return u;
        }
    }
    if ((s->n_uses + 1) * 2 > s->table_cap) {
        s->table_cap = s->table_cap ? 2 * s->table_cap : 64;
        free(s->table);
        s->table = xcalloc(s->table_cap, sizeof(*s->table));
        for (size_t i = 0; i < s->n_uses; i++)
            use_table_insert(s, i);
    }
    if (s->n_uses == s->cap_uses) {
        s->cap_uses = s->cap_uses ? 2 * s->cap_uses : 32;
        s->uses = xrealloc(s->uses, s->cap_uses * sizeof(*s->uses));
    }
    struct owners_use *u = &s->uses[s->n_uses];
    memset(u, 0, sizeof(*u));
    u->part = part;
    u->who = keep_who(s, w);
    use_table_insert(s, s->n_uses++);
    return u;
}

/* ---- owners ----------------------------------------------------------------------------- */

static void add_owner(struct owners_snap *s, size_t part, enum owners_source src,
                      const char *resource, const struct owners_who *w)
{
    for (size_t i = 0; i < s->n_owners; i++) {
        const struct owners_owner *o = &s->owners[i];
        if (o->part == part && o->source == src && strcmp(o->resource, resource) == 0 &&
            same_who(&o->who, w))
            return; /* the same device listed twice (two ContainerDevices entries) */
    }
    if (s->n_owners == s->cap_owners) {
        s->cap_owners = s->cap_owners ? 2 * s->cap_owners : 32;
        s->owners = xrealloc(s->owners, s->cap_owners * sizeof(*s->owners));
    }
    s->owners[s->n_owners++] = (struct owners_owner){
        .part = part, .source = src, .resource = keep(s, resource), .who = keep_who(s, w)};
}

/* "gpu-<card>-<render>", the DRA device name matched by AMD's exporter (docs/kernel-interfaces.md
 * §10.4). */
static long dra_render_minor(const char *name)
{
    if (!str_has_prefix(name, "gpu-"))
        return -1;
    const char *p = name + 4;
    const char *dash = strchr(p, '-');
    if (!dash || dash == p)
        return -1;
    for (const char *q = p; q < dash; q++)
        if (*q < '0' || *q > '9')
            return -1;
    uint64_t minor;
    if (dash[1] < '0' || dash[1] > '9' || parse_u64(dash + 1, &minor) < 0 || minor > 1u << 20)
        return -1;
    return (long)minor;
}

static void kubelet_owners(struct build *b)
{
    const struct podres_list *pl = b->in->pods;
    struct owners_snap *s = b->s;
    for (size_t i = 0; i < pl->n_allocs; i++) {
        const struct podres_alloc *a = &pl->allocs[i];
        long part = part_by_device_id(b, a->device_id);
        if (part < 0) {
            s->unknown_alloc_ids++;
            continue;
        }
        struct owners_who w = {a->namespace, a->pod, a->container, "", ""};
        add_owner(s, (size_t)part, OWNERS_KUBELET, a->resource, &w);
    }
    for (size_t i = 0; i < pl->n_claims; i++) {
        const struct podres_claim *c = &pl->claims[i];
        if (!str_has_prefix(c->driver_name, "gpu.amd.com"))
            continue;
        long minor = dra_render_minor(c->device_name);
        long part = minor < 0 ? -1 : find_key(b->minors, b->n_minors, (uint32_t)minor);
        if (part < 0) {
            s->unknown_alloc_ids++;
            continue;
        }
        struct owners_who w = {c->namespace, c->pod, c->container, "", ""};
        add_owner(s, (size_t)part, OWNERS_KUBELET, c->driver_name, &w);
    }
    /* A partition with exactly one pod-resources owner gets that owner's processes. */
    for (size_t i = 0; i < s->n_owners; i++) {
        const struct owners_owner *o = &s->owners[i];
        long *k = &b->single_kube[o->part];
        if (*k == -1)
            *k = (long)i;
        else if (*k >= 0 && !same_who(&s->owners[*k].who, &o->who))
            *k = -2; /* shared */
    }
}

static const char *label_of(const struct docker_container *c, const char *key)
{
    for (size_t i = 0; i < c->nlabels; i++)
        if (c->labels[i].key && strcmp(c->labels[i].key, key) == 0)
            return c->labels[i].value ? c->labels[i].value : "";
    return NULL;
}

/* Partitions named by a HostConfig.Devices PathOnHost; 0 when it names none of ours. */
static size_t runtime_device_parts(const struct build *b, const char *path, long *out, size_t max)
{
    uint64_t minor;
    if (strcmp(path, "/dev/dri") == 0 || strcmp(path, "/dev/dri/") == 0) {
        /* --device /dev/dri hands the container every node. */
        size_t n = 0;
        for (size_t i = 0; i < b->s->n_parts && n < max; i++)
            out[n++] = (long)i;
        return n;
    }
    const char *num = NULL;
    if (str_has_prefix(path, "/dev/dri/renderD"))
        num = path + 16;
    else if (str_has_prefix(path, "/dev/dri/card"))
        num = path + 13;
    if (!num || *num < '0' || *num > '9' || parse_u64(num, &minor) < 0 || minor > 1u << 20)
        return 0;
    long part = find_key(b->minors, b->n_minors, (uint32_t)minor);
    if (part < 0)
        return 0;
    out[0] = part;
    return 1;
}

static void runtime_owners(struct build *b)
{
    struct owners_snap *s = b->s;
    long *parts = xcalloc(s->n_parts + 1, sizeof(*parts));
    for (size_t i = 0; i < b->in->n_containers; i++) {
        const struct docker_container *c = &b->in->containers[i];
        struct owners_who w = {"", "", "", c->id, c->name};
        for (size_t d = 0; d < c->ndevices; d++) {
            if (!c->devices[d])
                continue;
            size_t n = runtime_device_parts(b, c->devices[d], parts, s->n_parts);
            if (n == 0 && (str_has_prefix(c->devices[d], "/dev/dri/renderD") ||
                           str_has_prefix(c->devices[d], "/dev/dri/card")))
                s->unknown_runtime_ids++;
            for (size_t k = 0; k < n; k++)
                add_owner(s, (size_t)parts[k], OWNERS_RUNTIME, "", &w);
        }
        const char *ids = label_of(c, OWNERS_DEVICES_LABEL);
        if (!ids)
            continue;
        char *copy = xstrdup(ids), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            while (*t == ' ' || *t == '\t')
                t++;
            str_rtrim(t);
            if (!*t)
                continue;
            long part = part_by_device_id(b, t);
            if (part < 0)
                s->unknown_runtime_ids++;
            else
                add_owner(s, (size_t)part, OWNERS_RUNTIME, "", &w);
        }
        free(copy);
    }
    free(parts);
}

/* ---- per-process use -------------------------------------------------------------------- */

static size_t pair_hash(int pid, size_t part)
{
    uint64_t x = ((uint64_t)(unsigned)pid << 20) ^ part ^ 0x9e3779b97f4a7c15ull;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static void pair_insert(struct build *b, size_t idx)
{
    size_t mask = b->pair_cap - 1;
    size_t h = pair_hash(b->pairs[idx].pid, b->pairs[idx].part) & mask;
    while (b->pair_table[h])
        h = (h + 1) & mask;
    b->pair_table[h] = idx + 1;
}

static struct owners_use *pair_find(struct build *b, int pid, size_t part, bool create)
{
    if (b->pair_cap) {
        size_t mask = b->pair_cap - 1;
        for (size_t h = pair_hash(pid, part) & mask; b->pair_table[h]; h = (h + 1) & mask) {
            struct owners_use *u = &b->pairs[b->pair_table[h] - 1];
            if (u->pid == pid && u->part == part)
                return u;
        }
    }
    if (!create)
        return NULL;
    if ((b->n_pairs + 1) * 2 > b->pair_cap) {
        b->pair_cap = b->pair_cap ? 2 * b->pair_cap : 256;
        free(b->pair_table);
        b->pair_table = xcalloc(b->pair_cap, sizeof(*b->pair_table));
        for (size_t i = 0; i < b->n_pairs; i++)
            pair_insert(b, i);
    }
    if (b->n_pairs == b->cap_pairs) {
        b->cap_pairs = b->cap_pairs ? 2 * b->cap_pairs : 64;
        b->pairs = xrealloc(b->pairs, b->cap_pairs * sizeof(*b->pairs));
    }
    struct owners_use *u = &b->pairs[b->n_pairs];
    memset(u, 0, sizeof(*u));
    u->pid = pid;
    u->part = part;
    u->processes = 1;
    u->has = OWNERS_HAS_PROCESSES;
    pair_insert(b, b->n_pairs++);
    return u;
}

static void add_engine(struct owners_use *u, const char *name, uint64_t ns)
{
    for (unsigned i = 0; i < u->n_engines; i++) {
        if (strcmp(u->engines[i].name, name) == 0) {
            u->engines[i].ns += ns;
            return;
        }
    }
    if (u->n_engines < FDINFO_MAX_ENGINES) {
        str_copy(u->engines[u->n_engines].name, FDINFO_NAME_MAX, name);
        u->engines[u->n_engines++].ns = ns;
    }
}

static void add_region(struct owners_use *u, const char *name, uint64_t bytes)
{
    for (unsigned i = 0; i < u->n_regions; i++) {
        if (strcmp(u->regions[i].name, name) == 0) {
            u->regions[i].bytes += bytes;
            return;
        }
    }
    if (u->n_regions < FDINFO_MAX_REGIONS) {
        str_copy(u->regions[u->n_regions].name, FDINFO_NAME_MAX, name);
        u->regions[u->n_regions++].bytes = bytes;
    }
}

static void drm_pairs(struct build *b)
{
    const struct procscan *ps = b->in->procs;
    for (size_t i = 0; i < ps->n_clients; i++) {
        const struct procscan_client *c = &ps->clients[i];
        long part = find_key(b->minors, b->n_minors, c->minor);
        if (part < 0)
            continue; /* a DRM device that is not one of our partitions (an iGPU) */
        if (c->shared_owners)
            b->s->shared_clients++;
        struct owners_use *u = pair_find(b, c->pid, (size_t)part, true);
        if (!c->has_info)
            continue;
        for (unsigned e = 0; e < c->info.n_engines; e++)
            if (c->info.engines[e].has_busy)
                add_engine(u, c->info.engines[e].name, c->info.engines[e].busy_ns);
        for (unsigned r = 0; r < c->info.n_regions; r++) {
            uint64_t bytes;
            if (fdinfo_resident_bytes(&c->info, c->info.regions[r].name, &bytes))
                add_region(u, c->info.regions[r].name, bytes);
        }
    }
}

static void kfd_pairs(struct build *b)
{
    const struct kfdproc_list *kl = b->in->kfd;
    for (size_t i = 0; i < kl->n_procs; i++) {
        const struct kfdproc_proc *kp = &kl->procs[i];
        for (size_t j = 0; j < kp->n_gpus; j++) {
            const struct kfdproc_gpu *g = &kl->gpus[kp->first_gpu + j];
            long part = find_key(b->gpu_ids, b->n_gpu_ids, g->gpu_id);
            if (part < 0)
                continue;
            bool active = ((g->has & KFDPROC_HAS_VRAM) && g->vram_bytes > 0) || g->queues > 0 ||
                          ((g->has & KFDPROC_HAS_CU_OCCUPANCY) && g->cu_occupancy > 0);
            struct owners_use *u = pair_find(b, kp->pid, (size_t)part, active);
            if (!u)
                continue;
            if (g->has & KFDPROC_HAS_CU_OCCUPANCY) {
                u->cu_occupancy += g->cu_occupancy;
                u->has |= OWNERS_HAS_CU;
            } else {
                u->has |= CU_UNKNOWN;
            }
            if (g->has & KFDPROC_HAS_VRAM) {
                u->vram_bytes += g->vram_bytes;
                u->has |= OWNERS_HAS_VRAM;
            }
            if (g->has & KFDPROC_HAS_SDMA) {
                u->sdma_us += g->sdma_us;
                u->has |= OWNERS_HAS_SDMA;
            }
            if (g->has & KFDPROC_HAS_EVICTED_MS) {
                u->evicted_ms += g->evicted_ms;
                u->has |= OWNERS_HAS_EVICTED;
            }
        }
    }
}

static const struct docker_container *container_by_id(const struct owners_input *in, const char *id)
{
    for (size_t i = 0; i < in->n_containers; i++)
        if (strcmp(in->containers[i].id, id) == 0)
            return &in->containers[i];
    return NULL;
}

/* The workload of a process on a partition (see owners.h); strings borrowed from inputs. */
static struct owners_who resolve(const struct build *b, const struct owners_use *pair)
{
    const struct procscan_proc *p =
        b->in->procs ? procscan_find_proc(b->in->procs, pair->pid) : NULL;
    bool outside = p && p->has_owner && !p->owner.in_kubernetes;
    long k = b->single_kube[pair->part];
    if (k >= 0 && !outside)
        return b->s->owners[k].who;
    struct owners_who w = {"", "", "", "", ""};
    if (p && p->has_owner && p->owner.has_container_id && !p->owner.conmon) {
        w.container_id = p->owner.container_id;
        const struct docker_container *c = container_by_id(b->in, w.container_id);
        if (c)
            w.container_name = c->name;
    }
    return w;
}

/* What is known about a use once all processes are summed (see the file comment). */
static unsigned final_has(const struct build *b, unsigned has, unsigned processes)
{
    bool cu_unknown = (has & CU_UNKNOWN) && processes > 0;
    has &= ~CU_UNKNOWN;
    /* No KFD entry for the partition means no KFD allocation, queue, SDMA use or wave. */
    if (b->in->kfd && b->in->kfd->present)
        has |= OWNERS_HAS_VRAM | OWNERS_HAS_SDMA | OWNERS_HAS_EVICTED | OWNERS_HAS_CU;
    if (cu_unknown)
        has &= ~OWNERS_HAS_CU;
    if (b->in->procs || processes > 0)
        has |= OWNERS_HAS_PROCESSES;
    return has;
}

static void merge(struct owners_use *w, const struct owners_use *p)
{
    w->processes += p->processes;
    w->cu_occupancy += p->cu_occupancy;
    w->vram_bytes += p->vram_bytes;
    w->sdma_us += p->sdma_us;
    w->evicted_ms += p->evicted_ms;
    w->has |= p->has;
    for (unsigned i = 0; i < p->n_engines; i++)
        add_engine(w, p->engines[i].name, p->engines[i].ns);
    for (unsigned i = 0; i < p->n_regions; i++)
        add_region(w, p->regions[i].name, p->regions[i].bytes);
}

void owners_build(const struct owners_input *in, struct owners_snap *out)
{
    struct build b = {.in = in, .s = out};
    memset(out, 0, sizeof(*out));
    index_parts(&b);
    if (in->pods)
        kubelet_owners(&b);
    runtime_owners(&b);
    size_t n_declared = out->n_owners;

    if (in->procs)
        drm_pairs(&b);
    if (in->kfd)
        kfd_pairs(&b);

    for (size_t i = 0; i < b.n_pairs; i++) {
        struct owners_use *pair = &b.pairs[i];
        struct owners_who w = resolve(&b, pair);
        merge(workload(out, pair->part, &w), pair);
        if (in->per_process) {
            pair->who = keep_who(out, &w);
            pair->has = final_has(&b, pair->has, pair->processes);
        }
    }
    /* Workloads seen only in processes are owners too, when no source declared them. */
    size_t n_used = out->n_uses;
    for (size_t i = 0; i < n_used; i++) {
        const struct owners_use *u = &out->uses[i];
        bool declared = false;
        for (size_t k = 0; k < n_declared && !declared; k++)
            declared = out->owners[k].part == u->part && same_who(&out->owners[k].who, &u->who);
        if (!declared)
            add_owner(out, u->part, OWNERS_PROCESS, "", &u->who);
    }
    /* An allocated partition that nothing opened is still owned, with zero use. */
    for (size_t k = 0; k < n_declared; k++)
        workload(out, out->owners[k].part, &out->owners[k].who);
    for (size_t i = 0; i < out->n_uses; i++)
        out->uses[i].has = final_has(&b, out->uses[i].has, out->uses[i].processes);

    if (in->per_process) {
        out->procs = b.pairs;
        out->n_procs = b.n_pairs;
        out->cap_procs = b.cap_pairs;
    } else {
        free(b.pairs);
    }
    free(b.pair_table);
    free(b.gpu_base);
    free(b.minors);
    free(b.gpu_ids);
    free(b.single_kube);
}

void owners_free(struct owners_snap *s)
{
    for (size_t i = 0; i < s->n_strs; i++)
        free(s->strs[i]);
    free(s->strs);
    free(s->parts);
    free(s->owners);
    free(s->uses);
    free(s->procs);
    free(s->table);
    memset(s, 0, sizeof(*s));
}
