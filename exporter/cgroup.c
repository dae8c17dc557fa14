/*
 * /proc/<pid>/cgroup parser (see cgroup.h). It owns the naming conventions of kubelet and
 * the container runtimes, so that the rest of the exporter deals only in pod UIDs and
 * container ids.
 *
 * A cgroup path is read one component at a time, outermost first; an inner match
 * overrides an outer one, which is what nested setups need (kind: a kubepods tree inside a
 * docker container that is the node). Conventions handled:
 *   kubelet cgroupfs driver: /kubepods[/burstable|/besteffort]/pod<uuid>/<container>
 *   kubelet systemd driver:  kubepods[-<qos>]-pod<uuid with '_'>.slice, one slice per level
 *   containerd (CRI):        cri-containerd-<id>.scope, or "<slice>:cri-containerd:<id>" as
 *                            the systemd driver shows it in cgroup v1 hierarchies
 *   CRI-O:                   crio-<id>[.scope], crio-conmon-<id>[.scope] (the monitor)
 *   docker:                  docker-<id>.scope (systemd), /docker/<id> (cgroupfs)
 *   podman:                  libpod-<id>[.scope], libpod-conmon-<id>.scope,
 *                            /libpod_parent/conmon (cgroupfs monitor), libpod-payload-<id>
 *                            (--cgroups=split, used by quadlet)
 * Sources of each shape are cited next to the test table in tests/unit/test_cgroup.c.
 */
#include "cgroup.h"

#include <string.h>

#include "slice.h"
#include "util.h"

static bool is_lower_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_container_id(struct slice s)
{
    if (s.n != 64)
        return false;
    for (size_t i = 0; i < 64; i++)
        if (!is_lower_hex(s.p[i]))
            return false;
    return true;
}

/*
 * Pod UIDs: a UUID whose separators are '-' (cgroupfs) or '_' (systemd slice names, where
 * '-' means nesting), normalised to the dashed lower-case form; or the 32-hex-digit hash
 * kubelet gives static pods (pkg/kubelet/config: the UID is a hex-encoded config hash),
 * which has no dashes to restore and is kept as it is.
 */
static bool parse_pod_uid(struct slice s, char out[37])
{
    if (s.n == 32) {
        for (size_t i = 0; i < 32; i++) {
            if (hex_value((unsigned char)s.p[i]) < 0)
                return false;
            out[i] = (char)(s.p[i] | 0x20);
        }
        out[32] = '\0';
        return true;
    }
    if (s.n != 36)
        return false;
    for (size_t i = 0; i < 36; i++) {
        char c = s.p[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-' && c != '_')
                return false;
            out[i] = '-';
        } else {
            if (hex_value((unsigned char)c) < 0)
                return false;
            out[i] = (char)(c | 0x20);
        }
    }
    out[36] = '\0';
    return true;
}

enum kube_level { KL_NONE, KL_KUBEPODS, KL_BURSTABLE, KL_BESTEFFORT, KL_POD };

struct walk {
    struct cgroup_owner o;
    enum kube_level level;
    struct slice prev; /* previous path component */
};

static void set_container(struct walk *w, struct slice id, enum cgroup_runtime rt)
{
    memcpy(w->o.container_id, id.p, 64);
    w->o.container_id[64] = '\0';
    w->o.has_container_id = true;
    w->o.runtime = rt;
    w->o.conmon = false;
}

static void set_conmon(struct walk *w)
{
    w->o.has_container_id = false;
    w->o.container_id[0] = '\0';
    w->o.runtime = CGROUP_RUNTIME_NONE;
    w->o.conmon = true;
}

/* One token of kubelet's hierarchy: "kubepods", a QoS level, or "pod<uid>". */
static void kube_token(struct walk *w, struct slice tok)
{
    struct slice rest;
    char uid[37];

    if (slice_eq(tok, "kubepods")) {
        /* Everything outside a kubepods tree is the node (kind, or a nested runtime). */
        if (w->level == KL_NONE || w->level == KL_POD) {
            w->o.has_container_id = false;
            w->o.container_id[0] = '\0';
            w->o.runtime = CGROUP_RUNTIME_NONE;
            w->o.conmon = false;
            w->o.has_pod_uid = false;
            w->o.pod_uid[0] = '\0';
            w->o.qos = CGROUP_QOS_UNKNOWN;
        }
        /* systemd repeats the parents in each slice name: keep a QoS level already read */
        if (w->level != KL_BURSTABLE && w->level != KL_BESTEFFORT)
            w->level = KL_KUBEPODS;
        return;
    }
    if (w->level == KL_NONE)
        return;
    if (slice_eq(tok, "burstable") && w->level == KL_KUBEPODS) {
        w->level = KL_BURSTABLE;
        return;
    }
    if (slice_eq(tok, "besteffort") && w->level == KL_KUBEPODS) {
        w->level = KL_BESTEFFORT;
        return;
    }
    if (slice_cut_prefix(tok, "pod", &rest) && w->level != KL_POD && parse_pod_uid(rest, uid)) {
        memcpy(w->o.pod_uid, uid, sizeof(uid));
        w->o.has_pod_uid = true;
        w->o.qos = w->level == KL_BURSTABLE    ? CGROUP_QOS_BURSTABLE
                   : w->level == KL_BESTEFFORT ? CGROUP_QOS_BESTEFFORT
                                               : CGROUP_QOS_GUARANTEED;
        w->level = KL_POD;
    }
}

/* A systemd slice name: '-' separates the names of the parent slices. */
static void systemd_slice(struct walk *w, struct slice name)
{
    const char *p = name.p, *end = name.p + name.n;
    while (p < end) {
        const char *dash = memchr(p, '-', (size_t)(end - p));
        const char *tok_end = dash ? dash : end;
        kube_token(w, (struct slice){p, (size_t)(tok_end - p)});
        p = dash ? dash + 1 : end;
    }
}

static const struct {
    const char *prefix;
    enum cgroup_runtime rt;
    bool conmon;
} scope_prefixes[] = {
    /* the conmon prefixes first: they extend the container prefixes */
    {"crio-conmon-", CGROUP_RUNTIME_NONE, true},
    {"libpod-conmon-", CGROUP_RUNTIME_NONE, true},
    {"cri-containerd-", CGROUP_RUNTIME_CONTAINERD, false},
    {"crio-", CGROUP_RUNTIME_CRIO, false},
    {"docker-", CGROUP_RUNTIME_DOCKER, false},
    {"libpod-payload-", CGROUP_RUNTIME_PODMAN, false},
    {"libpod-", CGROUP_RUNTIME_PODMAN, false},
    {"nerdctl-", CGROUP_RUNTIME_CONTAINERD, false},
};

/* "<prefix><64 hex>", with or without ".scope"; true when it named a container or conmon. */
static bool runtime_unit(struct walk *w, struct slice name)
{
    struct slice id;
    for (size_t i = 0; i < sizeof(scope_prefixes) / sizeof(scope_prefixes[0]); i++) {
        if (slice_cut_prefix(name, scope_prefixes[i].prefix, &id) && is_container_id(id)) {
            if (scope_prefixes[i].conmon)
                set_conmon(w);
            else
                set_container(w, id, scope_prefixes[i].rt);
            return true;
        }
    }
    return false;
}

/*
 * "<slice>:<runtime prefix>:<id>": the cgroupsPath syntax of runc's systemd driver, which
 * appears literally in cgroup v1 hierarchies that systemd does not manage
 * (e.g. "/system.slice/containerd.service/kubepods-burstable-pod<uid>.slice:cri-containerd:<id>").
 */
static void colon_component(struct walk *w, struct slice c)
{
    const char *c1 = memchr(c.p, ':', c.n);
    const char *c2 = memchr(c1 + 1, ':', c.n - (size_t)(c1 + 1 - c.p));
    if (!c2)
        return;
    struct slice slice_part = {c.p, (size_t)(c1 - c.p)}, name;
    struct slice prefix = {c1 + 1, (size_t)(c2 - c1 - 1)};
    struct slice id = {c2 + 1, c.n - (size_t)(c2 + 1 - c.p)};
    if (slice_cut_suffix(slice_part, ".slice", &name))
        systemd_slice(w, name);
    if (!is_container_id(id))
        return;
    if (slice_eq(prefix, "cri-containerd"))
        set_container(w, id, CGROUP_RUNTIME_CONTAINERD);
    else if (slice_eq(prefix, "crio"))
        set_container(w, id, CGROUP_RUNTIME_CRIO);
    else if (slice_eq(prefix, "docker"))
        set_container(w, id, CGROUP_RUNTIME_DOCKER);
    else if (slice_eq(prefix, "libpod"))
        set_container(w, id, CGROUP_RUNTIME_PODMAN);
    else
        set_container(w, id, CGROUP_RUNTIME_UNKNOWN);
}

static void component(struct walk *w, struct slice c)
{
    struct slice name;
    if (c.n == 0 || slice_eq(c, ".") || slice_eq(c, ".."))
        return;
    if (memchr(c.p, ':', c.n)) {
        colon_component(w, c);
        return;
    }
    if (slice_cut_suffix(c, ".slice", &name)) {
        systemd_slice(w, name);
        return;
    }
    if (slice_cut_suffix(c, ".scope", &name)) {
        runtime_unit(w, name);
        return;
    }
    if (runtime_unit(w, c))
        return;
    if (is_container_id(c)) {
        /* cgroupfs: docker names the parent "docker"; kubelet's cgroupfs tree does not say */
        set_container(w, c,
                      slice_eq(w->prev, "docker")          ? CGROUP_RUNTIME_DOCKER
                      : slice_eq(w->prev, "libpod_parent") ? CGROUP_RUNTIME_PODMAN
                                                           : CGROUP_RUNTIME_UNKNOWN);
        return;
    }
    if (slice_eq(c, "conmon") && slice_eq(w->prev, "libpod_parent")) {
        set_conmon(w);
        return;
    }
    kube_token(w, c);
}

static void walk_path(struct walk *w, struct slice path)
{
    const char *p = path.p, *end = path.p + path.n;
    while (p < end) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *c_end = slash ? slash : end;
        struct slice c = {p, (size_t)(c_end - p)};
        component(w, c);
        if (c.n)
            w->prev = c;
        p = slash ? slash + 1 : end;
    }
}

static int score(const struct cgroup_owner *o)
{
    return (o->has_container_id ? 4 : 0) + (o->has_pod_uid ? 2 : 0) + (o->conmon ? 1 : 0);
}

int cgroup_parse(const char *text, size_t len, struct cgroup_owner *out)
{
    struct cgroup_owner best;
    int best_score = -1;
    bool best_v2 = false;
    unsigned layout = 0, malformed = 0;

    memset(out, 0, sizeof(*out));
    memset(&best, 0, sizeof(best));
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *line = p;
        p = nl ? nl + 1 : end;
        if (le == line)
            continue;

        /* "hierarchy-id:controllers:path"; the path itself may contain ':' */
        const char *c1 = memchr(line, ':', (size_t)(le - line));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
        bool digits = c1 && c1 > line;
        for (const char *q = line; digits && q < c1; q++)
            digits = *q >= '0' && *q <= '9';
        if (!digits || !c2 || c2 + 1 >= le || c2[1] != '/') {
            malformed++;
            continue;
        }
        bool v2 = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
        layout |= v2 ? CGROUP_LAYOUT_V2 : CGROUP_LAYOUT_V1;

        struct walk w;
        memset(&w, 0, sizeof(w));
        walk_path(&w, (struct slice){c2 + 1, (size_t)(le - c2 - 1)});
        w.o.in_kubernetes = w.o.has_pod_uid;
        int s = score(&w.o);
        if (s > best_score || (s == best_score && v2 && !best_v2)) {
            best = w.o;
            best_score = s;
            best_v2 = v2;
        }
    }
    if (best_score >= 0)
        *out = best;
    out->layout = layout;
    out->malformed = malformed;
    return best_score >= 0 ? 0 : -1;
}

const char *cgroup_runtime_name(enum cgroup_runtime rt)
{
    switch (rt) {
    case CGROUP_RUNTIME_NONE:
        return "none";
    case CGROUP_RUNTIME_UNKNOWN:
        return "unknown";
    case CGROUP_RUNTIME_CONTAINERD:
        return "containerd";
    case CGROUP_RUNTIME_CRIO:
        return "cri-o";
    case CGROUP_RUNTIME_DOCKER:
        return "docker";
    case CGROUP_RUNTIME_PODMAN:
        return "podman";
    }
    return "unknown";
}

const char *cgroup_qos_name(enum cgroup_qos qos)
{
    switch (qos) {
    case CGROUP_QOS_GUARANTEED:
        return "Guaranteed";
    case CGROUP_QOS_BURSTABLE:
        return "Burstable";
    case CGROUP_QOS_BESTEFFORT:
        return "BestEffort";
    case CGROUP_QOS_UNKNOWN:
        break;
    }
    return "unknown";
}
