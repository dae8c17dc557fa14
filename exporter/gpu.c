/*
 * GPU and partition discovery (see gpu.h).
 *
 * Device identity is the resolved path of each DRM node's `device` link: a card and a render
 * node belong together when they resolve to the same device directory. This works whether
 * `device` is a symlink (real sysfs) or a plain directory (some captures), and needs no
 * major/minor numbers. The partition of a KFD node is taken from the function bits of its
 * location_id, as AMD's device plugin does (ROCm/k8s-device-plugin amdgpu.go).
 */
#include "gpu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysfs.h"
#include "util.h"

#include <sys/stat.h>
#include <unistd.h>

struct node {
    int num;       /* card or render number */
    char dev[512]; /* resolved device directory */
};

struct nodes {
    struct node *v;
    size_t n;
};

static void nodes_add(struct nodes *ns, int num, const char *dev)
{
    ns->v = xrealloc(ns->v, (ns->n + 1) * sizeof(*ns->v));
    ns->v[ns->n].num = num;
    snprintf(ns->v[ns->n].dev, sizeof(ns->v[ns->n].dev), "%s", dev);
    ns->n++;
}

static const struct node *nodes_by_dev(const struct nodes *ns, const char *dev)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i].dev, dev) == 0)
            return &ns->v[i];
    return NULL;
}

static const struct node *nodes_by_num(const struct nodes *ns, int num)
{
    for (size_t i = 0; i < ns->n; i++)
        if (ns->v[i].num == num)
            return &ns->v[i];
    return NULL;
}

/* "card12" -> 12 for names that are a prefix followed by digits only (not "card1-DP-1"). */
static int numbered(const char *name, const char *prefix)
{
    size_t pl = strlen(prefix);
    if (strncmp(name, prefix, pl) != 0 || !name[pl])
        return -1;
    for (const char *p = name + pl; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    long v = strtol(name + pl, NULL, 10);
    return v > INT_MAX ? -1 : (int)v;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static bool is_xcp_dev(const char *dev)
{
    return str_has_prefix(base_name(dev), "amdgpu_xcp");
}

static void add_problem(struct gpu_list *l, const char *card, const char *what)
{
    l->problems = xrealloc(l->problems, (l->nproblems + 1) * sizeof(*l->problems));
    snprintf(l->problems[l->nproblems].card, sizeof(l->problems[0].card), "%s", card);
    snprintf(l->problems[l->nproblems].what, sizeof(l->problems[0].what), "%s", what);
    l->nproblems++;
}

static int cmp_gpu(const void *a, const void *b)
{
    return strcmp(((const struct gpu *)a)->pci, ((const struct gpu *)b)->pci);
}

static int cmp_part(const void *a, const void *b)
{
    return ((const struct gpu_part *)a)->index - ((const struct gpu_part *)b)->index;
}

static struct gpu *find_pci(struct gpu_list *l, const char *pci)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcasecmp(l->v[i].pci, pci) == 0)
            return &l->v[i];
    return NULL;
}

struct kfd_node {
    int64_t simd_count, render_minor, domain, location_id, num_xcc;
    int64_t size_in_bytes; /* of a mem_banks/<b>/properties file; -1 if absent */
    bool has_minor, has_location;
};

static void parse_properties(const char *text, struct kfd_node *k)
{
    memset(k, 0, sizeof(*k));
    k->num_xcc = -1;
    k->size_in_bytes = -1;
    char line[256];
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), p);
        p += len + (nl ? 1 : 0);
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        *sp = '\0';
        int64_t v;
        if (parse_i64(sp + 1, &v) < 0)
            continue;
        if (strcmp(line, "simd_count") == 0)
            k->simd_count = v;
        else if (strcmp(line, "drm_render_minor") == 0) {
            k->render_minor = v;
            k->has_minor = true;
        } else if (strcmp(line, "domain") == 0)
            k->domain = v;
        else if (strcmp(line, "location_id") == 0) {
            k->location_id = v;
            k->has_location = true;
        } else if (strcmp(line, "num_xcc") == 0)
            k->num_xcc = v;
        else if (strcmp(line, "size_in_bytes") == 0 && v >= 0)
            k->size_in_bytes = v;
    }
}

/*
 * Memory of a KFD node: the sum of `size_in_bytes` in nodes/<n>/mem_banks/<b>/properties
 * (kfd_topology.c prints one properties file per memory bank). -1 when there is no bank or
 * a bank cannot be read: a partial sum would under-state the memory.
 */
static int64_t kfd_mem_bytes(const char *nodedir)
{
    char dir[4200], text[2048];
    snprintf(dir, sizeof(dir), "%s/mem_banks", nodedir);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int64_t sum = 0;
    int banks = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (numbered(de->d_name, "") < 0)
            continue;
        /* The bank properties file has the same "key value" lines as a node's. */
        struct kfd_node k;
        k.size_in_bytes = -1;
        if (sysfs_read_str(text, sizeof(text), "%s/%s/properties", dir, de->d_name) >= 0)
            parse_properties(text, &k);
        int64_t v = k.size_in_bytes;
        if (v < 0 || sum > INT64_MAX - v) {
            closedir(d);
            return -1;
        }
        sum += v;
        banks++;
    }
    closedir(d);
    return banks ? sum : -1;
}

/* Attach KFD nodes as partitions. */
static void attach_kfd(const char *sysfs, struct gpu_list *l, const struct nodes *cards,
                       const struct nodes *renders)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/class/kfd/kfd/topology/nodes", sysfs);
    DIR *d = opendir(path);
    if (!d)
        return;
    l->kfd = true;
    struct dirent *de;
    char text[8192];
    while ((de = readdir(d))) {
        int num = numbered(de->d_name, "");
        if (num < 0)
            continue;
        if (sysfs_read_str(text, sizeof(text), "%s/%s/properties", path, de->d_name) < 0)
            continue;
        struct kfd_node k;
        parse_properties(text, &k);
        if (k.simd_count <= 0 || !k.has_minor || !k.has_location)
            continue;
        char pci[16];
        snprintf(pci, sizeof(pci), "%04x:%02x:%02x.0", (unsigned)k.domain & 0xffff,
                 (unsigned)(k.location_id >> 8) & 0xff, (unsigned)(k.location_id >> 3) & 0x1f);
        struct gpu *g = find_pci(l, pci);
        if (!g)
            continue;
        int index = (int)(k.location_id & 7);
        bool dup = false;
        for (int i = 0; i < g->npart; i++)
            if (g->part[i].index == index || g->part[i].render == k.render_minor)
                dup = true;
        /* A copied or repeated node (seen in captures) must not become a second partition. */
        if (dup || g->npart >= GPU_MAX_PART)
            continue;
        struct gpu_part *p = &g->part[g->npart++];
        memset(p, 0, sizeof(*p));
        p->index = index;
        p->render = (int)k.render_minor;
        p->kfd_node = num;
        p->num_xcc = (int)k.num_xcc;
        char nodedir[4400];
        snprintf(nodedir, sizeof(nodedir), "%s/%s", path, de->d_name);
        p->mem_bytes = kfd_mem_bytes(nodedir);
        uint64_t gid;
        if (sysfs_read_u64(&gid, "%s/%s/gpu_id", path, de->d_name) == 0)
            p->kfd_gpu_id = (uint32_t)gid;
        const struct node *rn = nodes_by_num(renders, p->render);
        const struct node *cn = rn ? nodes_by_dev(cards, rn->dev) : NULL;
        p->card = cn ? cn->num : -1;
        if (rn)
            snprintf(p->devdir, sizeof(p->devdir), "%s", rn->dev);
        if (index == 0 || !rn || !is_xcp_dev(rn->dev))
            str_copy(p->device_id, sizeof(p->device_id), g->pci);
        else
            snprintf(p->device_id, sizeof(p->device_id), "%s", base_name(rn->dev));
    }
    closedir(d);
}

static int cmp_temp(const void *a, const void *b)
{
    return ((const struct gpu_temp *)a)->index - ((const struct gpu_temp *)b)->index;
}

/* Record the first hwmon directory of the device and the sensors it has. */
static void find_hwmon(struct gpu *g)
{
    char dir[700];
    snprintf(dir, sizeof(dir), "%s/hwmon", g->devdir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    char best[64] = "";
    while ((de = readdir(d)))
        if (numbered(de->d_name, "hwmon") >= 0 && (!best[0] || strcmp(de->d_name, best) < 0))
            str_copy(best, sizeof(best), de->d_name);
    closedir(d);
    if (!best[0])
        return;
    snprintf(g->hwmon, sizeof(g->hwmon), "%s/%s", dir, best);
    d = opendir(g->hwmon);
    if (!d)
        return;
    while ((de = readdir(d))) {
        int idx;
        char tail[32];
        if (sscanf(de->d_name, "temp%d_%31s", &idx, tail) == 2 && strcmp(tail, "input") == 0 &&
            g->ntemp < GPU_MAX_TEMP) {
            struct gpu_temp *t = &g->temp[g->ntemp++];
            t->index = idx;
            char label[64];
            if (sysfs_read_str(label, sizeof(label), "%s/temp%d_label", g->hwmon, idx) > 0) {
                for (char *p = label; *p; p++)
                    *p = (char)tolower((unsigned char)*p);
                str_copy(t->label, sizeof(t->label), label);
            } else {
                snprintf(t->label, sizeof(t->label), "temp%d", idx);
            }
        } else if (strcmp(de->d_name, "power1_input") == 0) {
            g->has_power_input = true;
        } else if (strcmp(de->d_name, "power1_average") == 0) {
            g->has_power_average = true;
        }
    }
    closedir(d);
    qsort(g->temp, (size_t)g->ntemp, sizeof(g->temp[0]), cmp_temp);
}

static void static_facts(struct gpu *g)
{
    if (sysfs_read_str(g->product, sizeof(g->product), "%s/product_name", g->devdir) < 0)
        g->product[0] = '\0';
    if (sysfs_read_str(g->unique_id, sizeof(g->unique_id), "%s/unique_id", g->devdir) < 0)
        g->unique_id[0] = '\0';
    const struct {
        char *dst;
        size_t cap;
        const char *file;
    } modes[] = {
        {g->compute_mode, sizeof(g->compute_mode), "current_compute_partition"},
        {g->memory_mode, sizeof(g->memory_mode), "current_memory_partition"},
        {g->compute_modes, sizeof(g->compute_modes), "available_compute_partition"},
        {g->memory_modes, sizeof(g->memory_modes), "available_memory_partition"},
    };
    for (size_t i = 0; i < ARRAY_LEN(modes); i++)
        if (sysfs_read_str(modes[i].dst, modes[i].cap, "%s/%s", g->devdir, modes[i].file) < 0)
            modes[i].dst[0] = '\0';
    find_hwmon(g);
    for (int j = 0; j < g->npart; j++) {
        char path[700];
        struct stat st;
        snprintf(path, sizeof(path), "%s/xcp/xcp_metrics", g->part[j].devdir);
        g->part[j].has_xcp_metrics = g->part[j].devdir[0] && stat(path, &st) == 0;
    }
}

/* Parse a sysfs "0x1002" file; -1 when absent or not hexadecimal. */
static long read_hex(const char *dir, const char *file)
{
    char buf[32], *end;
    if (sysfs_read_str(buf, sizeof(buf), "%s/%s", dir, file) <= 0)
        return -1;
    errno = 0;
    unsigned long v = strtoul(buf, &end, 16);
    if (errno || *end || end == buf || v > 0xffffffUL)
        return -1;
    return (long)v;
}

/*
 * List bus/pci/devices for AMD GPUs (vendor 0x1002; class 0x03 display or 0x12 processing
 * accelerator, the class of Instinct parts; the HDMI audio function, class 0x0403, is not a
 * GPU). A function whose resolved directory is the device of no DRM card in `claimed` is
 * unserved. A function whose class or vendor cannot be read is not counted: it is not known
 * to be a GPU. Returns -1 when the directory cannot be listed.
 */
static int scan_pci(const char *sysfs, const struct nodes *claimed, struct gpu_list *out)
{
    char dir[4096], path[4400], res[PATH_MAX], link[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/bus/pci/devices", sysfs);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        long vendor = read_hex(path, "vendor"), cls = read_hex(path, "class");
        if (vendor != 0x1002 || cls < 0 || ((cls >> 16) != 0x03 && (cls >> 16) != 0x12))
            continue;
        out->amd_pci++;
        if (realpath(path, res) && nodes_by_dev(claimed, res))
            continue;
        out->unserved = xrealloc(out->unserved, (out->nunserved + 1) * sizeof(*out->unserved));
        struct gpu_unserved *u = &out->unserved[out->nunserved++];
        memset(u, 0, sizeof(*u));
        snprintf(u->pci, sizeof(u->pci), "%.15s", de->d_name);
        long device = read_hex(path, "device");
        if (device >= 0)
            snprintf(u->pci_id, sizeof(u->pci_id), "1002:%04lX", device & 0xffff);
        snprintf(path, sizeof(path), "%s/%s/driver", dir, de->d_name);
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n > 0) {
            link[n] = '\0';
            snprintf(u->driver, sizeof(u->driver), "%s", base_name(link));
        }
    }
    closedir(d);
    return 0;
}

static int cmp_unserved(const void *a, const void *b)
{
    return strcmp(((const struct gpu_unserved *)a)->pci, ((const struct gpu_unserved *)b)->pci);
}

int gpu_discover(const char *sysfs, struct gpu_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    char dir[4096], path[4096], res[PATH_MAX], buf[256];
    snprintf(dir, sizeof(dir), "%s/class/drm", sysfs);
    DIR *d = opendir(dir);
    int drm_errno = errno;
    if (!d && drm_errno != ENOENT) {
        snprintf(err, errlen, "cannot open '%s': %s", dir, strerror(drm_errno));
        return -1;
    }
    out->has_drm = d != NULL;
    /* The devices that DRM cards belong to, whatever their driver: an AMD function with a
     * card of another driver (radeon) is unserved; one whose card cannot be identified is
     * a card problem (reported below), not also an unserved GPU. */
    struct nodes cards = {0}, renders = {0}, claimed = {0};
    struct dirent *de;
    while (d && (de = readdir(d))) {
        int card = numbered(de->d_name, "card");
        int render = numbered(de->d_name, "renderD");
        if (card < 0 && render < 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s/device", dir, de->d_name);
        if (!realpath(path, res))
            continue;
        if (render >= 0) {
            nodes_add(&renders, render, res);
            continue;
        }
        if (sysfs_read_kv(buf, sizeof(buf), "DRIVER", "%s/uevent", path) < 0) {
            nodes_add(&claimed, card, res);
            if (errno == ENOENT && !is_xcp_dev(res)) {
                char what[160];
                snprintf(what, sizeof(what), "cannot read '%s/%s/device/uevent'", dir, de->d_name);
                add_problem(out, de->d_name, what);
            }
            if (is_xcp_dev(res))
                nodes_add(&cards, card, res);
            continue;
        }
        nodes_add(&cards, card, res);
        if (strcmp(buf, "amdgpu") != 0)
            continue;
        nodes_add(&claimed, card, res);
        struct gpu g = {0};
        g.card = card;
        g.render = -1;
        snprintf(g.devdir, sizeof(g.devdir), "%s", path);
        if (sysfs_read_kv(buf, sizeof(buf), "PCI_SLOT_NAME", "%s/uevent", path) == 0)
            snprintf(g.pci, sizeof(g.pci), "%s", buf);
        else
            snprintf(g.pci, sizeof(g.pci), "%.15s", base_name(res));
        for (char *p = g.pci; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (sysfs_read_kv(buf, sizeof(buf), "PCI_ID", "%s/uevent", path) == 0)
            snprintf(g.pci_id, sizeof(g.pci_id), "%s", buf);
        if (find_pci(out, g.pci))
            continue;
        out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
        out->v[out->n++] = g;
    }
    if (d)
        closedir(d);
    out->pci_known = scan_pci(sysfs, &claimed, out) == 0;
    int pci_errno = errno;
    free(claimed.v);
    if (!out->has_drm && !out->pci_known) {
        /* Nothing says whether this node has a GPU: unknown, so an error, never "none". */
        snprintf(err, errlen, "cannot open '%s': %s; nor '%s/bus/pci/devices': %s", dir,
                 strerror(drm_errno), sysfs, strerror(pci_errno));
        free(cards.v);
        free(renders.v);
        gpu_list_free(out);
        return -1;
    }
    if (out->nunserved > 1) /* qsort of a NULL array is undefined even for 0 elements */
        qsort(out->unserved, out->nunserved, sizeof(*out->unserved), cmp_unserved);

    for (size_t i = 0; i < out->n; i++) {
        const struct node *c = nodes_by_num(&cards, out->v[i].card);
        const struct node *r = c ? nodes_by_dev(&renders, c->dev) : NULL;
        out->v[i].render = r ? r->num : -1;
    }
    attach_kfd(sysfs, out, &cards, &renders);
    for (size_t i = 0; i < out->n; i++) {
        struct gpu *g = &out->v[i];
        if (g->npart == 0) {
            struct gpu_part *p = &g->part[g->npart++];
            memset(p, 0, sizeof(*p));
            p->card = g->card;
            p->render = g->render;
            p->kfd_node = -1;
            p->num_xcc = -1;
            p->mem_bytes = -1;
            str_copy(p->device_id, sizeof(p->device_id), g->pci);
            const struct node *c = nodes_by_num(&cards, g->card);
            if (c)
                snprintf(p->devdir, sizeof(p->devdir), "%s", c->dev);
        }
        qsort(g->part, (size_t)g->npart, sizeof(g->part[0]), cmp_part);
        static_facts(g);
    }
    for (size_t i = 0; i < renders.n; i++) {
        if (!is_xcp_dev(renders.v[i].dev))
            continue;
        const struct gpu *g;
        const struct gpu_part *p;
        if (!gpu_find_render(out, renders.v[i].num, &g, &p))
            out->spare_nodes++;
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof(*out->v), cmp_gpu);
    free(cards.v);
    free(renders.v);
    return 0;
}

void gpu_list_free(struct gpu_list *l)
{
    free(l->v);
    free(l->problems);
    free(l->unserved);
    memset(l, 0, sizeof(*l));
}

bool gpu_find_render(const struct gpu_list *l, int minor, const struct gpu **g,
                     const struct gpu_part **p)
{
    for (size_t i = 0; i < l->n; i++)
        for (int j = 0; j < l->v[i].npart; j++)
            if (l->v[i].part[j].render == minor) {
                *g = &l->v[i];
                *p = &l->v[i].part[j];
                return true;
            }
    return false;
}

bool gpu_find_device_id(const struct gpu_list *l, const char *id, const struct gpu **g,
                        const struct gpu_part **p)
{
    for (size_t i = 0; i < l->n; i++)
        for (int j = 0; j < l->v[i].npart; j++)
            if (strcasecmp(l->v[i].part[j].device_id, id) == 0) {
                *g = &l->v[i];
                *p = &l->v[i].part[j];
                return true;
            }
    return false;
}
