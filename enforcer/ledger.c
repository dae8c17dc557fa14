/*
 * The persistent state of the action engine (ledger.h): load, atomic save, lookup, expiry.
 *
 * Loading is strict on purpose. Forgetting a notice would let a workload be acted on without
 * its notice period; forgetting an action would let it be acted on twice or break the hourly
 * cap. So every field is type-checked and a file that is not exactly what save() writes is
 * refused, and the operator decides (fix or delete the file) rather than the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "jsonparse.h"
#include "ledger.h"
#include "file.h"
#include "util.h"

#define LEDGER_HOUR      3600.0
#define LEDGER_MAX_BYTES (64u << 20)

static const char *const ledger_state_names[] = {
    [LEDGER_PENDING] = "pending",
    [LEDGER_DRY_RUN] = "dry_run",
    [LEDGER_ACTED] = "acted",
    [LEDGER_DONE] = "done",
};

const char *ledger_state_name(enum ledger_state s)
{
    if ((int)s < 0 || (size_t)s >= ARRAY_LEN(ledger_state_names))
        return "unknown";
    return ledger_state_names[s];
}

void ledger_set(char **field, const char *value)
{
    char *copy = xstrdup(value ? value : "");
    free(*field);
    *field = copy;
}

static void ledger_entry_free(struct ledger_entry *e)
{
    free(e->rule);
    free(e->workload);
    free(e->uid);
    free(e->target);
    free(e->root_api);
    free(e->root_kind);
    free(e->root_ns);
    free(e->root_name);
    free(e->root_uid);
    free(e->result);
    memset(e, 0, sizeof(*e));
}

void ledger_free(struct ledger *l)
{
    for (size_t i = 0; i < l->n; i++)
        ledger_entry_free(&l->v[i]);
    free(l->v);
    free(l->actions);
    free(l->path);
    strset_free(&l->index);
    free(l->next);
    free(l->tail);
    strset_free(&l->rindex);
    free(l->rnext);
    free(l->rtail);
    memset(l, 0, sizeof(*l));
}

/*
 * The index: a lookup by (rule, workload) is made for every reclaim decision of every cycle,
 * and a ledger holds an entry per notice and action of the last days, so a scan of the whole
 * ledger per lookup made a cycle quadratic in the workloads (a backtest of 1,000 workloads
 * spent a quarter of its time there). Entries are keyed by their workload string (stable
 * while the entry lives) and chained in ledger order, so ledger_find returns the entry a scan
 * would. A removal moves the entries after it, and the index with them (ledger_remove); an
 * expiry or a drop of many at once has the index rebuilt at the next lookup.
 * The engine also asks, for every candidate, which entries share its root owner (act.c:
 * act_note_restart, act_same_target), a scan of the whole ledger each that took a third of
 * a 1,000-workload `recommend`: a second index the same way, by root uid.
 */
static void ledger_chain(struct strset *ix, size_t *next, size_t *tail, const char *key, size_t i)
{
    const void *got = strset_put(ix, key, strlen(key), (const void *)(uintptr_t)(i + 1));
    next[i] = 0;
    if (!got) {
        tail[i] = i;
        return;
    }
    size_t h = (size_t)(uintptr_t)got - 1;
    next[tail[h]] = i + 1;
    tail[h] = i;
}

static void ledger_link(struct ledger *l, size_t i)
{
    ledger_chain(&l->index, l->next, l->tail, l->v[i].workload, i);
    l->rnext[i] = 0;
    if (l->v[i].root_uid[0])
        ledger_chain(&l->rindex, l->rnext, l->rtail, l->v[i].root_uid, i);
}

static void ledger_reindex(struct ledger *l)
{
    if (l->indexed)
        return;
    strset_free(&l->index);
    l->index = (struct strset){0};
    strset_free(&l->rindex);
    l->rindex = (struct strset){0};
    free(l->next);
    free(l->tail);
    free(l->rnext);
    free(l->rtail);
    l->next = xcalloc(l->cap ? l->cap : 1, sizeof(*l->next));
    l->tail = xcalloc(l->cap ? l->cap : 1, sizeof(*l->tail));
    l->rnext = xcalloc(l->cap ? l->cap : 1, sizeof(*l->rnext));
    l->rtail = xcalloc(l->cap ? l->cap : 1, sizeof(*l->rtail));
    for (size_t i = 0; i < l->n; i++)
        ledger_link(l, i);
    l->indexed = true;
}

struct ledger_entry *ledger_add(struct ledger *l, const char *rule, const char *workload,
                                const char *uid, const char *target, enum ledger_state state)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
        l->indexed = false; /* the chain arrays are as long as the ledger's capacity */
    }
    struct ledger_entry *e = &l->v[l->n++];
    memset(e, 0, sizeof(*e));
    ledger_set(&e->rule, rule);
    ledger_set(&e->workload, workload);
    ledger_set(&e->uid, uid);
    ledger_set(&e->target, target);
    ledger_set(&e->root_api, NULL);
    ledger_set(&e->root_kind, NULL);
    ledger_set(&e->root_ns, NULL);
    ledger_set(&e->root_name, NULL);
    ledger_set(&e->root_uid, NULL);
    ledger_set(&e->result, NULL);
    e->state = state;
    e->noticed = e->act_after = e->updated = e->idle_proven = e->restarted = NAN;
    e->allocated = e->returned = e->accounted = NAN;
    if (l->indexed)
        ledger_link(l, l->n - 1);
    return e;
}

void ledger_set_root_uid(struct ledger *l, struct ledger_entry *e, const char *uid)
{
    size_t i = (size_t)(e - l->v);
    bool was_empty = !e->root_uid || !e->root_uid[0];
    ledger_set(&e->root_uid, uid);
    if (!l->indexed || i >= l->n)
        return;
    /* The last entry given its root (a notice, just added): the end of its root's chain,
       where a rebuild would put it. Anything else is rebuilt at the next lookup. */
    if (was_empty && i + 1 == l->n) {
        if (e->root_uid[0])
            ledger_chain(&l->rindex, l->rnext, l->rtail, e->root_uid, i);
    } else {
        l->indexed = false;
    }
}

struct ledger_entry *ledger_each_root(struct ledger *l, const char *root,
                                      bool (*fn)(void *arg, struct ledger_entry *e), void *arg)
{
    if (!root || !*root)
        return NULL;
    ledger_reindex(l);
    const void *got = strset_get(&l->rindex, root, strlen(root));
    for (size_t i = got ? (size_t)(uintptr_t)got - 1 : SIZE_MAX; i != SIZE_MAX; i = l->rnext[i] - 1)
        if (fn(arg, &l->v[i]))
            return &l->v[i];
    return NULL;
}

/*
 * Take entry i out of its chain in `ix` (key: its string that chain is keyed by, which may be
 * the slot's). The head's slot then names the next entry, whose string (the same bytes)
 * stays when entry i's is freed; the last entry of a chain takes the key out.
 */
static void ledger_unchain(struct strset *ix, size_t *next, size_t *tail, const char *key, size_t i,
                           const char *next_key)
{
    struct strset_slot *slot = strset_slot(ix, key, strlen(key));
    if (!slot)
        return;
    size_t h = (size_t)(uintptr_t)slot->val - 1;
    if (h == i) {
        if (!next[i]) {
            strset_remove(ix, slot);
            return;
        }
        size_t j = next[i] - 1;
        tail[j] = tail[i];
        slot->s = next_key;
        slot->val = (const void *)(uintptr_t)(j + 1);
        return;
    }
    size_t p = h;
    while (next[p] && next[p] - 1 != i)
        p = next[p] - 1;
    if (!next[p])
        return; /* not in this chain (a root set without ledger_set_root_uid) */
    next[p] = next[i];
    if (tail[h] == i)
        tail[h] = p;
}

/* After entry i left the array: every position past it is one less, in the chains too. */
static void ledger_shift(struct strset *ix, size_t *next, size_t *tail, size_t i, size_t n)
{
    memmove(&next[i], &next[i + 1], (n - i) * sizeof(*next));
    memmove(&tail[i], &tail[i + 1], (n - i) * sizeof(*tail));
    for (size_t k = 0; k < n; k++) {
        next[k] -= next[k] > i + 1;
        tail[k] -= tail[k] > i; /* read at heads only; elsewhere harmless */
    }
    for (size_t k = 0; k < ix->cap; k++)
        if (ix->slots[k].s && (uintptr_t)ix->slots[k].val > i + 1)
            ix->slots[k].val = (const void *)((uintptr_t)ix->slots[k].val - 1);
}

/*
 * The engine removes a notice when its workload turns busy, a few per cycle amid lookups for
 * every candidate: a rebuild of the index at each next lookup, hashing every entry's
 * workload, was a tenth of a capped backtest. The index follows the removal instead, in a
 * pass over integers as long as the move of the entries after it.
 */
void ledger_remove(struct ledger *l, struct ledger_entry *e)
{
    size_t i = (size_t)(e - l->v);
    if (i >= l->n)
        return;
    if (l->indexed) {
        size_t nx = l->next[i] ? l->next[i] - 1 : i, rnx = l->rnext[i] ? l->rnext[i] - 1 : i;
        ledger_unchain(&l->index, l->next, l->tail, e->workload, i, l->v[nx].workload);
        if (e->root_uid[0])
            ledger_unchain(&l->rindex, l->rnext, l->rtail, e->root_uid, i, l->v[rnx].root_uid);
    }
    ledger_entry_free(e);
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
    l->n--;
    if (l->indexed) {
        ledger_shift(&l->index, l->next, l->tail, i, l->n);
        ledger_shift(&l->rindex, l->rnext, l->rtail, i, l->n);
    }
}

/* The first entry of `workload` (any rule), or SIZE_MAX; then l->next[i] - 1 after i. */
static size_t ledger_first(struct ledger *l, const char *workload)
{
    ledger_reindex(l);
    const void *got = strset_get(&l->index, workload, strlen(workload));
    return got ? (size_t)(uintptr_t)got - 1 : SIZE_MAX;
}

void ledger_each(struct ledger *l, const char *rule, const char *workload,
                 void (*fn)(void *arg, struct ledger_entry *e), void *arg)
{
    for (size_t i = ledger_first(l, workload); i != SIZE_MAX; i = l->next[i] - 1)
        if (strcmp(l->v[i].rule, rule) == 0)
            fn(arg, &l->v[i]);
}

struct ledger_entry *ledger_find(struct ledger *l, const char *rule, const char *workload,
                                 const char *uid, int state)
{
    for (size_t i = ledger_first(l, workload); i != SIZE_MAX; i = l->next[i] - 1) {
        struct ledger_entry *e = &l->v[i];
        if (strcmp(e->rule, rule) != 0)
            continue;
        if (uid && strcmp(e->uid, uid) != 0)
            continue;
        if (state >= 0 && (int)e->state != state)
            continue;
        return e;
    }
    return NULL;
}

/* Whether acted entry o (at i_o) supersedes acted entry e (at i_e): ledger_drop_superseded. */
static bool ledger_supersedes(const struct ledger_entry *o, size_t i_o,
                              const struct ledger_entry *e, size_t i_e)
{
    if (o->state != LEDGER_ACTED || isnan(o->restarted) || strcmp(o->rule, e->rule) != 0 ||
        strcmp(o->root_uid, e->root_uid) != 0 || strcmp(o->uid, e->uid) == 0)
        return false;
    if (!(o->restarted >= e->restarted) || !(o->updated >= e->updated))
        return false;
    return o->restarted > e->restarted || o->updated > e->updated || i_o > i_e;
}

size_t ledger_drop_superseded(struct ledger *l)
{
    if (!l->n)
        return 0;
    bool *drop = xcalloc(l->n, sizeof(*drop));
    size_t dropped = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct ledger_entry *e = &l->v[i];
        if (e->state != LEDGER_ACTED || isnan(e->restarted))
            continue;
        /* The strict order above has a maximum among each workload's entries, never dropped,
           that supersedes (directly or through others) every entry it drops. */
        for (size_t j = ledger_first(l, e->workload); j != SIZE_MAX; j = l->next[j] - 1)
            if (j != i && ledger_supersedes(&l->v[j], j, e, i)) {
                drop[i] = true;
                dropped++;
                break;
            }
    }
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (drop[i]) {
            ledger_entry_free(&l->v[i]);
            continue;
        }
        l->v[k++] = l->v[i];
    }
    if (k != l->n)
        l->indexed = false;
    l->n = k;
    free(drop);
    return dropped;
}

void ledger_note_action(struct ledger *l, double now)
{
    if (l->nactions == l->capactions) {
        l->capactions = l->capactions ? 2 * l->capactions : 16;
        l->actions = xrealloc(l->actions, l->capactions * sizeof(*l->actions));
    }
    l->actions[l->nactions++] = now;
}

size_t ledger_actions_last_hour(const struct ledger *l, double now)
{
    size_t n = 0;
    for (size_t i = 0; i < l->nactions; i++)
        if (l->actions[i] > now - LEDGER_HOUR && l->actions[i] <= now)
            n++;
    return n;
}

void ledger_expire(struct ledger *l, double now, double pending_ttl, double done_ttl,
                   void (*cb)(void *arg, const struct ledger_entry *e), void *arg)
{
    size_t j = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct ledger_entry *e = &l->v[i];
        bool open = e->state == LEDGER_PENDING || e->state == LEDGER_DRY_RUN;
        bool drop = open ? now - e->act_after > pending_ttl : now - e->updated > done_ttl;
        if (drop) {
            if (cb && e->state == LEDGER_PENDING)
                cb(arg, e);
            ledger_entry_free(e);
            continue;
        }
        if (j != i) /* a cycle's expiry drops few: most entries stay where they are */
            l->v[j] = *e;
        j++;
    }
    if (l->n != j)
        l->indexed = false;
    l->n = j;
    j = 0;
    for (size_t i = 0; i < l->nactions; i++)
        if (l->actions[i] > now - LEDGER_HOUR)
            l->actions[j++] = l->actions[i];
    l->nactions = j;
}

/* ---- JSON ------------------------------------------------------------------------------- */

/* NaN is not JSON: unknown times are written as null. */
static json_object *ledger_time(double t)
{
    return isnan(t) ? NULL : json_object_new_double(t);
}

static json_object *ledger_entry_json(const struct ledger_entry *e)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "rule", json_object_new_string(e->rule));
    json_object_object_add(o, "workload", json_object_new_string(e->workload));
    json_object_object_add(o, "uid", json_object_new_string(e->uid));
    json_object_object_add(o, "target", json_object_new_string(e->target));
    json_object_object_add(o, "root_api", json_object_new_string(e->root_api));
    json_object_object_add(o, "root_kind", json_object_new_string(e->root_kind));
    json_object_object_add(o, "root_ns", json_object_new_string(e->root_ns));
    json_object_object_add(o, "root_name", json_object_new_string(e->root_name));
    json_object_object_add(o, "root_uid", json_object_new_string(e->root_uid));
    json_object_object_add(o, "state", json_object_new_string(ledger_state_name(e->state)));
    json_object_object_add(o, "noticed", ledger_time(e->noticed));
    json_object_object_add(o, "act_after", ledger_time(e->act_after));
    json_object_object_add(o, "updated", ledger_time(e->updated));
    json_object_object_add(o, "idle_proven", ledger_time(e->idle_proven));
    if (!isnan(e->restarted))
        json_object_object_add(o, "restarted", ledger_time(e->restarted));
    if (!isnan(e->allocated))
        json_object_object_add(o, "allocated", json_object_new_double(e->allocated));
    if (!isnan(e->returned))
        json_object_object_add(o, "returned", ledger_time(e->returned));
    json_object_object_add(o, "attempts", json_object_new_int64(e->attempts));
    json_object_object_add(o, "result", json_object_new_string(e->result));
    return o;
}

/* fsync of the state directory; a test replaces it to inject a failure. */
static int (*ledger_dir_fsync)(int fd) = fsync;

static int ledger_write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int ledger_save(const struct ledger *l, char *err, size_t errlen)
{
    if (!l->path)
        return 0;
    json_object *root = json_object_new_object();
    json_object_object_add(root, "version", json_object_new_int(LEDGER_VERSION));
    json_object *entries = json_object_new_array();
    for (size_t i = 0; i < l->n; i++)
        json_object_array_add(entries, ledger_entry_json(&l->v[i]));
    json_object_object_add(root, "entries", entries);
    json_object *actions = json_object_new_array();
    for (size_t i = 0; i < l->nactions; i++)
        json_object_array_add(actions, json_object_new_double(l->actions[i]));
    json_object_object_add(root, "actions", actions);
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);

    char *tmp = xasprintf("%s.tmp.%ld", l->path, (long)getpid());
    int ret = -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
        goto out;
    }
    if (ledger_write_all(fd, text, strlen(text)) < 0 || ledger_write_all(fd, "\n", 1) < 0 ||
        fsync(fd) < 0) {
        snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    if (close(fd) < 0) {
        snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
        unlink(tmp);
        goto out;
    }
    if (rename(tmp, l->path) < 0) {
        snprintf(err, errlen, "cannot rename '%s' to '%s': %s", tmp, l->path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    /* The rename is durable only once the directory entry is on disk: until then a crash
       may bring the previous file back, and with it a call made without its record. */
    char *dircopy = xstrdup(l->path);
    const char *dir = dirname(dircopy);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || ledger_dir_fsync(dfd) < 0) {
        snprintf(err, errlen, "cannot sync directory '%s' after writing '%s': %s", dir, l->path,
                 strerror(errno));
        if (dfd >= 0)
            close(dfd);
        free(dircopy);
        goto out;
    }
    close(dfd);
    free(dircopy);
    ret = 0;
out:
    free(tmp);
    json_object_put(root);
    return ret;
}

static int ledger_str(json_object *o, const char *key, char **out, char *err, size_t errlen)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string)) {
        snprintf(err, errlen, "entry without string '%s'", key);
        return -1;
    }
    ledger_set(out, json_object_get_string(v));
    return 0;
}

static int ledger_num(json_object *o, const char *key, double *out, bool nullable, char *err,
                      size_t errlen)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v)) {
        snprintf(err, errlen, "entry without '%s'", key);
        return -1;
    }
    if (!v && nullable) {
        *out = NAN;
        return 0;
    }
    if (!v ||
        !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))) {
        snprintf(err, errlen, "'%s' is not a number", key);
        return -1;
    }
    *out = json_object_get_double(v);
    if (!isfinite(*out)) {
        snprintf(err, errlen, "'%s' is not finite", key);
        return -1;
    }
    return 0;
}

/* A time added after version 1 was first written: absent (older files) or null is NaN. */
static int ledger_opt_num(json_object *o, const char *key, double *out, char *err, size_t errlen)
{
    if (!json_object_object_get_ex(o, key, NULL)) {
        *out = NAN;
        return 0;
    }
    return ledger_num(o, key, out, true, err, errlen);
}

static int ledger_parse_entry(struct ledger *l, json_object *o, char *err, size_t errlen)
{
    if (!json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "entry is not an object");
        return -1;
    }
    struct ledger_entry *e = ledger_add(l, NULL, NULL, NULL, NULL, LEDGER_PENDING);
    char *state = NULL;
    double attempts = 0;
    int ret = -1;
    if (ledger_str(o, "rule", &e->rule, err, errlen) < 0 ||
        ledger_str(o, "workload", &e->workload, err, errlen) < 0 ||
        ledger_str(o, "uid", &e->uid, err, errlen) < 0 ||
        ledger_str(o, "target", &e->target, err, errlen) < 0 ||
        ledger_str(o, "root_api", &e->root_api, err, errlen) < 0 ||
        ledger_str(o, "root_kind", &e->root_kind, err, errlen) < 0 ||
        ledger_str(o, "root_ns", &e->root_ns, err, errlen) < 0 ||
        ledger_str(o, "root_name", &e->root_name, err, errlen) < 0 ||
        ledger_str(o, "root_uid", &e->root_uid, err, errlen) < 0 ||
        ledger_str(o, "result", &e->result, err, errlen) < 0 ||
        ledger_str(o, "state", &state, err, errlen) < 0 ||
        ledger_num(o, "noticed", &e->noticed, true, err, errlen) < 0 ||
        ledger_num(o, "act_after", &e->act_after, true, err, errlen) < 0 ||
        ledger_num(o, "updated", &e->updated, true, err, errlen) < 0 ||
        ledger_opt_num(o, "idle_proven", &e->idle_proven, err, errlen) < 0 ||
        ledger_opt_num(o, "restarted", &e->restarted, err, errlen) < 0 ||
        ledger_opt_num(o, "allocated", &e->allocated, err, errlen) < 0 ||
        ledger_opt_num(o, "returned", &e->returned, err, errlen) < 0 ||
        ledger_num(o, "attempts", &attempts, false, err, errlen) < 0)
        goto out;
    if (attempts < 0 || attempts > 1e9 || attempts != floor(attempts)) {
        snprintf(err, errlen, "bad 'attempts'");
        goto out;
    }
    e->attempts = (unsigned)attempts;
    size_t s;
    for (s = 0; s < ARRAY_LEN(ledger_state_names); s++)
        if (strcmp(state, ledger_state_names[s]) == 0)
            break;
    if (s == ARRAY_LEN(ledger_state_names)) {
        snprintf(err, errlen, "unknown state '%s'", state);
        goto out;
    }
    e->state = (enum ledger_state)s;
    bool open = e->state == LEDGER_PENDING || e->state == LEDGER_DRY_RUN;
    if ((open && isnan(e->act_after)) || (!open && isnan(e->updated))) {
        snprintf(err, errlen, "%s entry for '%s' without its time", state, e->workload);
        goto out;
    }
    ret = 0;
out:
    free(state);
    return ret;
}

static int ledger_parse(struct ledger *l, const char *text, size_t len, char *err, size_t errlen)
{
    int ret = -1;
    json_object *root = jsonparse_strict(text, len, 16, "state file", err, errlen);
    if (!root)
        goto out;
    json_object *v, *entries, *actions;
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "version", &v) || !json_object_is_type(v, json_type_int)) {
        snprintf(err, errlen, "no 'version'");
        goto out;
    }
    if (json_object_get_int64(v) != LEDGER_VERSION) {
        snprintf(err, errlen, "version %lld is not %d", (long long)json_object_get_int64(v),
                 LEDGER_VERSION);
        goto out;
    }
    if (!json_object_object_get_ex(root, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array) ||
        !json_object_object_get_ex(root, "actions", &actions) ||
        !json_object_is_type(actions, json_type_array)) {
        snprintf(err, errlen, "no 'entries' or 'actions' array");
        goto out;
    }
    for (size_t i = 0; i < json_object_array_length(entries); i++)
        if (ledger_parse_entry(l, json_object_array_get_idx(entries, i), err, errlen) < 0)
            goto out;
    for (size_t i = 0; i < json_object_array_length(actions); i++) {
        json_object *t = json_object_array_get_idx(actions, i);
        if (!t ||
            !(json_object_is_type(t, json_type_double) || json_object_is_type(t, json_type_int)) ||
            !isfinite(json_object_get_double(t))) {
            snprintf(err, errlen, "action time %zu is not a number", i);
            goto out;
        }
        ledger_note_action(l, json_object_get_double(t));
    }
    ret = 0;
out:
    json_object_put(root);
    return ret;
}

int ledger_load(struct ledger *l, const char *path, char *err, size_t errlen)
{
    memset(l, 0, sizeof(*l));
    if (!path)
        return 0;
    char why[256] = "";
    size_t len;
    char *text = file_read(path, LEDGER_MAX_BYTES, &len, why, sizeof(why));
    if (!text) {
        if (errno == ENOENT) {
            l->path = xstrdup(path);
            return 0;
        }
        snprintf(err, errlen, "cannot read state file '%s': %s", path, why);
        return -1;
    }
    int ret = -1;
    if (len == 0)
        snprintf(err, errlen, "state file '%s' is corrupt: empty", path);
    else if (ledger_parse(l, text, len, why, sizeof(why)) < 0)
        snprintf(err, errlen, "state file '%s' is corrupt: %s", path, why);
    else
        ret = 0;
    free(text);
    if (ret < 0) {
        ledger_free(l);
        return -1;
    }
    l->path = xstrdup(path);
    return 0;
}
