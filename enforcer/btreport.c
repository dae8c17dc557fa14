/*
 * The output of `backtest` (btreport.h): tables, JSON and CSV from a bt_result.
 *
 * GPU-hours are printed with two decimals and shares as whole percents; every number comes
 * from the result, none is recomputed here but the sums of the comparison and of --by, so
 * the three formats always agree.
 */
#include "btreport.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dur.h"
#include "report.h"
#include "rfc3339.h"

/* Per-file totals, and the same for one --by value. */
struct btr_sum {
    size_t workloads, reclaims, returns_within, notices, spared;
    double gpu_seconds;
};

static void btr_total(const struct bt_result *r, struct btr_sum *s)
{
    *s = (struct btr_sum){0};
    for (size_t i = 0; i < r->nrules; i++) {
        s->workloads += r->rule[i].workloads;
        s->reclaims += r->rule[i].reclaims;
        s->returns_within += r->rule[i].returns_within;
        s->notices += r->rule[i].notices;
        s->spared += r->rule[i].spared;
        s->gpu_seconds += r->rule[i].gpu_seconds;
    }
}

static const char *btr_time(char *buf, size_t len, double t)
{
    if (!isfinite(t))
        return "-";
    return rfc3339_format(buf, len, t, RFC3339_SEC);
}

static const char *btr_dur(char *buf, size_t len, double s)
{
    if (!isfinite(s))
        return "-";
    return dur_format(buf, len, round(s));
}

static double btr_share(size_t part, size_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : NAN;
}

/* The reasons of a rule's kept cycles, most frequent first (at most `max`). */
static size_t btr_top_reasons(const struct bt_rule_stats *st, enum reason *out, size_t max)
{
    size_t n = 0;
    for (int r = 0; r < REASON__COUNT; r++) {
        if (!st->kept[r])
            continue;
        size_t at = n < max ? n : max;
        while (at > 0 && st->kept[out[at - 1]] < st->kept[r]) {
            if (at < max)
                out[at] = out[at - 1];
            at--;
        }
        if (at < max) {
            out[at] = (enum reason)r;
            if (n < max)
                n++;
        }
    }
    return n;
}

void btreport_failures(const struct bt_result *res, size_t rule, struct sbuf *out)
{
    const struct bt_rule_stats *st = &res->rule[rule];
    for (size_t i = 0; i < st->nfail; i++) {
        char a[RFC3339_LEN], b[RFC3339_LEN];
        sbuf_printf(out, "%s%s .. %s (%zu cycle%s: %s)", i ? "; " : "",
                    btr_time(a, sizeof(a), st->fail[i].from),
                    btr_time(b, sizeof(b), st->fail[i].to), st->fail[i].cycles,
                    st->fail[i].cycles == 1 ? "" : "s", st->fail[i].msg);
    }
}

/* ---- the lists -------------------------------------------------------------------------- */

static const struct bt_result *btr_sort_res;

static int btr_by_gpu(const void *a, const void *b)
{
    const struct bt_workload *x = &btr_sort_res->wl[*(const size_t *)a];
    const struct bt_workload *y = &btr_sort_res->wl[*(const size_t *)b];
    if (x->gpu_seconds != y->gpu_seconds)
        return x->gpu_seconds < y->gpu_seconds ? 1 : -1;
    return strcmp(x->key, y->key);
}

static int btr_by_return(const void *a, const void *b)
{
    const struct bt_reclaim *x = &btr_sort_res->rc[*(const size_t *)a];
    const struct bt_reclaim *y = &btr_sort_res->rc[*(const size_t *)b];
    double dx = x->end - x->at, dy = y->end - y->at;
    if (dx != dy)
        return dx < dy ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* Indexes of the workloads with GPU-hours freed, most first; *n gets how many (<= top). */
static size_t *btr_top_gpu(const struct bt_result *r, size_t top, size_t *n)
{
    size_t *ix = xcalloc(r->nwl ? r->nwl : 1, sizeof(*ix)), m = 0;
    for (size_t i = 0; i < r->nwl; i++)
        if (r->wl[i].gpu_seconds > 0)
            ix[m++] = i;
    btr_sort_res = r;
    qsort(ix, m, sizeof(*ix), btr_by_gpu);
    *n = m < top ? m : top;
    return ix;
}

/* Indexes of the reclaims that ended in a return, soonest first. */
static size_t *btr_top_soonest(const struct bt_result *r, size_t top, size_t *n)
{
    size_t *ix = xcalloc(r->nrc ? r->nrc : 1, sizeof(*ix)), m = 0;
    for (size_t i = 0; i < r->nrc; i++)
        if (r->rc[i].how == BT_END_RETURN)
            ix[m++] = i;
    btr_sort_res = r;
    qsort(ix, m, sizeof(*ix), btr_by_return);
    *n = m < top ? m : top;
    return ix;
}

/* Reclaims of `a` that `b` does not make: same workload (identity) and cycle. */
static size_t btr_only(const struct bt_result *a, const struct bt_result *b, size_t *first,
                       size_t max, size_t *nfirst)
{
    struct strset set = {0};
    char **keys = xcalloc(b->nrc ? b->nrc : 1, sizeof(*keys));
    for (size_t i = 0; i < b->nrc; i++) {
        keys[i] = xasprintf("%s@%.3f", b->wl[b->rc[i].wl].key, b->rc[i].at);
        strset_put(&set, keys[i], strlen(keys[i]), (void *)1);
    }
    size_t only = 0;
    *nfirst = 0;
    /* A key not in the set is added by the look-up and must live as long as the set. */
    char **added = xcalloc(a->nrc ? a->nrc : 1, sizeof(*added));
    for (size_t i = 0; i < a->nrc; i++) {
        char *k = xasprintf("%s@%.3f", a->wl[a->rc[i].wl].key, a->rc[i].at);
        if (strset_put(&set, k, strlen(k), (void *)2)) {
            free(k);
            continue;
        }
        added[only++] = k;
        if (*nfirst < max)
            first[(*nfirst)++] = i;
    }
    for (size_t i = 0; i < only; i++)
        free(added[i]);
    free(added);
    strset_free(&set);
    for (size_t i = 0; i < b->nrc; i++)
        free(keys[i]);
    free(keys);
    return only;
}

/* ---- table ------------------------------------------------------------------------------ */

static void btr_table_rules(const struct bt_result *r, struct sbuf *out)
{
    char buf[DUR_LEN];
    sbuf_printf(out, "%-24s %9s %8s %8s %6s %10s %10s %6s %10s\n", "RULE", "WORKLOADS", "NOTICES",
                "RECLAIMS", "SPARED", "GPU-HOURS", "RETURNS<=", "SHARE", "MEDIAN");
    for (size_t i = 0; i < r->nrules; i++) {
        const struct bt_rule_stats *st = &r->rule[i];
        double share = btr_share(st->returns_within, st->reclaims);
        char sh[16];
        if (isnan(share))
            snprintf(sh, sizeof(sh), "-");
        else
            snprintf(sh, sizeof(sh), "%.0f%%", share);
        sbuf_printf(out, "%-24s %9zu %8zu %8zu %6zu %10.2f %10zu %6s %10s\n", st->name,
                    st->workloads, st->notices, st->reclaims, st->spared, st->gpu_seconds / 3600,
                    st->returns_within, sh, btr_dur(buf, sizeof(buf), st->median_return));
    }
}

static void btr_table_header(const struct bt_result *r, const char *tag, struct sbuf *out)
{
    char a[RFC3339_LEN], b[RFC3339_LEN], iv[DUR_LEN], rw[DUR_LEN];
    sbuf_printf(out, "%s%s: %s .. %s, every %s, %zu cycles; returns within %s\n", tag,
                r->rules_file ? r->rules_file : "", btr_time(a, sizeof(a), r->cfg.from),
                btr_time(b, sizeof(b), r->cfg.to), btr_dur(iv, sizeof(iv), r->cfg.interval),
                r->cycles, btr_dur(rw, sizeof(rw), r->cfg.return_within));
}

static void btr_table_kept(const struct bt_result *r, const char *tag, struct sbuf *out)
{
    sbuf_printf(out, "%skept (workload-cycles), top reasons:\n", tag);
    for (size_t i = 0; i < r->nrules; i++) {
        const struct bt_rule_stats *st = &r->rule[i];
        enum reason top[4];
        size_t n = btr_top_reasons(st, top, 4);
        sbuf_printf(out, "  %s: %lu kept, %lu reclaim decisions", st->name, st->keep_decisions,
                    st->reclaim_decisions);
        for (size_t j = 0; j < n; j++)
            sbuf_printf(out, "%s %s %lu (%.0f%%)", j ? "," : ";", decide_reason_name(top[j]),
                        st->kept[top[j]],
                        100.0 * (double)st->kept[top[j]] / (double)st->keep_decisions);
        sbuf_putc(out, '\n');
    }
}

/* One --by group: the workloads of one rule with one value of the label. */
struct btr_group {
    size_t rule;
    const char *value; /* the workloads' (bt_workload.by) */
    struct btr_sum s;
};

/* The --by groups of `r` in the order first seen; *n gets their number (0 without --by). */
static struct btr_group *btr_groups(const struct bt_result *r, size_t *n)
{
    *n = 0;
    if (!r->cfg.by)
        return NULL;
    struct btr_group *g = NULL;
    struct strset index = {0};
    char **keys = xcalloc(r->nwl ? r->nwl : 1, sizeof(*keys));
    size_t *of = xcalloc(r->nwl ? r->nwl : 1, sizeof(*of)); /* workload -> group */
    for (size_t i = 0; i < r->nwl; i++) {
        const struct bt_workload *w = &r->wl[i];
        keys[i] = xasprintf("%zu\x1f%s", w->rule, w->by ? w->by : "");
        const void *v = strset_put(&index, keys[i], strlen(keys[i]), (void *)(uintptr_t)(*n + 1));
        if (!v) {
            g = xgrow(g, *n, sizeof(*g));
            g[*n] = (struct btr_group){.rule = w->rule, .value = w->by ? w->by : ""};
            v = (void *)(uintptr_t)++ * n;
        }
        of[i] = (size_t)(uintptr_t)v - 1;
        g[of[i]].s.workloads++;
        g[of[i]].s.reclaims += w->reclaims;
        g[of[i]].s.gpu_seconds += w->gpu_seconds;
    }
    for (size_t k = 0; k < r->nrc; k++)
        g[of[r->rc[k].wl]].s.returns_within +=
            r->rc[k].how == BT_END_RETURN && r->rc[k].end - r->rc[k].at <= r->cfg.return_within;
    strset_free(&index);
    for (size_t i = 0; i < r->nwl; i++)
        free(keys[i]);
    free(keys);
    free(of);
    return g;
}

static void btr_table_by(const struct bt_result *r, const char *tag, struct sbuf *out)
{
    size_t n;
    struct btr_group *g = btr_groups(r, &n);
    if (!r->cfg.by)
        return;
    sbuf_printf(out, "%sby %s:\n", tag, r->cfg.by);
    sbuf_printf(out, "  %-24s %-24s %9s %8s %10s %10s\n", "RULE", r->cfg.by, "WORKLOADS",
                "RECLAIMS", "GPU-HOURS", "RETURNS<=");
    for (size_t i = 0; i < n; i++)
        sbuf_printf(out, "  %-24s %-24s %9zu %8zu %10.2f %10zu\n", r->rule[g[i].rule].name,
                    g[i].value[0] ? g[i].value : "(none)", g[i].s.workloads, g[i].s.reclaims,
                    g[i].s.gpu_seconds / 3600, g[i].s.returns_within);
    free(g);
}

static void btr_table_top(const struct bt_result *r, const char *tag, size_t top, struct sbuf *out)
{
    if (!top)
        return;
    size_t n, *ix = btr_top_gpu(r, top, &n);
    sbuf_printf(out, "%stop %zu by GPU-hours freed:\n", tag, top);
    for (size_t i = 0; i < n; i++) {
        const struct bt_workload *w = &r->wl[ix[i]];
        sbuf_printf(out, "  %-24s %s %.2f GPU-hours, %zu reclaim%s\n", r->rule[w->rule].name,
                    w->key, w->gpu_seconds / 3600, w->reclaims, w->reclaims == 1 ? "" : "s");
    }
    if (!n)
        sbuf_puts(out, "  (none)\n");
    free(ix);
    ix = btr_top_soonest(r, top, &n);
    sbuf_printf(out, "%stop %zu interrupted soonest (reclaimed, then back):\n", tag, top);
    for (size_t i = 0; i < n; i++) {
        const struct bt_reclaim *rc = &r->rc[ix[i]];
        const struct bt_workload *w = &r->wl[rc->wl];
        char at[RFC3339_LEN], d[DUR_LEN];
        sbuf_printf(out, "  %-24s %s reclaimed %s, back after %s\n", r->rule[w->rule].name, w->key,
                    btr_time(at, sizeof(at), rc->at), btr_dur(d, sizeof(d), rc->end - rc->at));
    }
    if (!n)
        sbuf_puts(out, "  (none)\n");
    free(ix);
}

static void btr_table_notes(const struct bt_result *r, struct sbuf *out)
{
    for (size_t i = 0; i < r->nrules; i++) {
        const struct bt_rule_stats *st = &r->rule[i];
        if (st->simulated_as && st->simulated_as[0])
            sbuf_printf(out, "note: rule '%s': %s\n", st->name, st->simulated_as);
        if (st->unknown_devices)
            sbuf_printf(out,
                        "note: rule '%s': %zu reclaim%s without a known allocation count no "
                        "GPU-hours\n",
                        st->name, st->unknown_devices, st->unknown_devices == 1 ? "" : "s");
        if (st->nfail) {
            sbuf_printf(out,
                        "error: rule '%s' could not be evaluated over part of the range, "
                        "those cycles kept as query_error: ",
                        st->name);
            btreport_failures(r, i, out);
            sbuf_putc(out, '\n');
        }
    }
    if (r->cycles_before_data) {
        char at[RFC3339_LEN];
        sbuf_printf(out,
                    "note: the data starts at %s, after --from: the %zu cycle%s before it "
                    "have no data (no_data, never idle)\n",
                    btr_time(at, sizeof(at), r->data_start), r->cycles_before_data,
                    r->cycles_before_data == 1 ? "" : "s");
    } else if (isnan(r->data_start)) {
        sbuf_puts(out, "note: no activity sample in the range: nothing can be proven idle\n");
    }
}

static void btr_audit_table(const struct bt_audit_cmp *c, struct sbuf *out)
{
    size_t all = c->matched + c->only_sim + c->only_audit;
    sbuf_printf(out,
                "audit agreement: %zu matched, %zu only simulated, %zu only in the audit "
                "(%.0f%% agree; %s, same workload and cycle)\n",
                c->matched, c->only_sim, c->only_audit,
                all ? 100.0 * (double)c->matched / (double)all : 100.0,
                c->dry_run ? "notices only: the audit is a dry run's, which takes no action"
                           : "notices and actions");
    if (c->diff && c->diff->len)
        sbuf_puts(out, c->diff->buf);
}

static void btr_table(const struct bt_result *a, const struct bt_result *b, size_t top,
                      const struct bt_audit_cmp *cmp, struct sbuf *out)
{
    btr_table_header(a, b ? "A " : "", out);
    btr_table_rules(a, out);
    if (b) {
        btr_table_header(b, "B ", out);
        btr_table_rules(b, out);
        struct btr_sum sa, sb;
        btr_total(a, &sa);
        btr_total(b, &sb);
        size_t fa[10], fb[10], nfa, nfb;
        size_t only_a = btr_only(a, b, fa, top ? top : 5, &nfa);
        size_t only_b = btr_only(b, a, fb, top ? top : 5, &nfb);
        sbuf_puts(out, "\n");
        sbuf_printf(out, "%-22s %12s %12s %12s\n", "", "A", "B", "B - A");
        sbuf_printf(out, "%-22s %12zu %12zu %+12ld\n", "reclaims", sa.reclaims, sb.reclaims,
                    (long)sb.reclaims - (long)sa.reclaims);
        sbuf_printf(out, "%-22s %12.2f %12.2f %+12.2f\n", "GPU-hours freed", sa.gpu_seconds / 3600,
                    sb.gpu_seconds / 3600, (sb.gpu_seconds - sa.gpu_seconds) / 3600);
        sbuf_printf(out, "%-22s %12zu %12zu %+12ld\n", "returns within", sa.returns_within,
                    sb.returns_within, (long)sb.returns_within - (long)sa.returns_within);
        double ra = btr_share(sa.returns_within, sa.reclaims);
        double rb = btr_share(sb.returns_within, sb.reclaims);
        sbuf_printf(out, "%-22s %11.0f%% %11.0f%%\n", "share returned", isnan(ra) ? 0 : ra,
                    isnan(rb) ? 0 : rb);
        sbuf_printf(out, "%-22s %12zu %12zu\n", "reclaims only in", only_a, only_b);
        for (size_t i = 0; i < nfa; i++) {
            char at[RFC3339_LEN];
            const struct bt_reclaim *rc = &a->rc[fa[i]];
            sbuf_printf(out, "  only A: %s %s at %s\n", a->rule[a->wl[rc->wl].rule].name,
                        a->wl[rc->wl].key, btr_time(at, sizeof(at), rc->at));
        }
        for (size_t i = 0; i < nfb; i++) {
            char at[RFC3339_LEN];
            const struct bt_reclaim *rc = &b->rc[fb[i]];
            sbuf_printf(out, "  only B: %s %s at %s\n", b->rule[b->wl[rc->wl].rule].name,
                        b->wl[rc->wl].key, btr_time(at, sizeof(at), rc->at));
        }
    }
    sbuf_puts(out, "\n");
    const char *ta = b ? "A " : "";
    btr_table_kept(a, ta, out);
    if (b)
        btr_table_kept(b, "B ", out);
    btr_table_by(a, ta, out);
    if (b)
        btr_table_by(b, "B ", out);
    btr_table_top(a, ta, top, out);
    if (b)
        btr_table_top(b, "B ", top, out);
    if (cmp)
        btr_audit_table(cmp, out);
    btr_table_notes(a, out);
    if (b)
        btr_table_notes(b, out);
    sbuf_printf(out, "%s\n", bt_not_simulated);
    bt_lookup_note(a, ta, out);
    if (b)
        bt_lookup_note(b, "B ", out);
}

/* ---- JSON ------------------------------------------------------------------------------- */

static struct json_object *btr_labels(const struct labels *l)
{
    struct json_object *o = json_object_new_object();
    for (size_t i = 0; i < l->n; i++)
        json_object_object_add(o, l->v[i].name, json_object_new_string(l->v[i].value));
    return o;
}

static const char *const btr_end_names[] = {[BT_END_OPEN] = "open",
                                            [BT_END_RETURN] = "return",
                                            [BT_END_GONE] = "allocation_end",
                                            [BT_END_RANGE] = "range_end"};

/* Reclaim i of r as its element of "reclaims". */
static struct json_object *btr_json_reclaim(const struct bt_result *r, size_t i)
{
    const struct bt_reclaim *rc = &r->rc[i];
    const struct bt_workload *w = &r->wl[rc->wl];
    struct json_object *x = json_object_new_object();
    json_object_object_add(x, "rule", json_object_new_string(r->rule[w->rule].name));
    json_object_object_add(x, "workload", btr_labels(&w->identity));
    if (r->cfg.by)
        json_object_object_add(x, "by", json_object_new_string(w->by ? w->by : ""));
    json_object_object_add(x, "noticed", report_json_time(rc->noticed));
    json_object_object_add(x, "reclaimed", report_json_time(rc->at));
    json_object_object_add(x, "end", report_json_time(rc->end));
    json_object_object_add(x, "endedBy", json_object_new_string(btr_end_names[rc->how]));
    json_object_object_add(x, "devices", report_json_number(rc->devices));
    json_object_object_add(
        x, "gpuHours",
        report_json_number(rc->devices > 0 ? rc->devices * (rc->end - rc->at) / 3600 : 0));
    return x;
}

/* What the look-up checked, and the workloads it left out and could not check. */
static struct json_object *btr_json_lookup(const struct bt_result *r)
{
    struct json_object *o = json_object_new_object();
    struct sbuf b = {0};
    bt_lookup_checked(r, &b);
    json_object_object_add(o, "checked", json_object_new_string(b.len ? b.buf : ""));
    sbuf_free(&b);
    struct json_object *lists[2] = {json_object_new_array(), json_object_new_array()};
    for (size_t i = 0; i < r->nwl; i++) {
        const struct bt_workload *w = &r->wl[i];
        if (!w->lookup || w->lookup->state == BTL_COUNTED)
            continue;
        struct json_object *x = json_object_new_object();
        json_object_object_add(x, "rule", json_object_new_string(r->rule[w->rule].name));
        json_object_object_add(x, "workload", btr_labels(&w->identity));
        json_object_object_add(x, "reason", json_object_new_string(w->lookup->why));
        json_object_array_add(lists[w->lookup->state == BTL_UNCHECKED], x);
    }
    json_object_object_add(o, "leftOut", lists[0]);
    json_object_object_add(o, "notChecked", lists[1]);
    return o;
}

static struct json_object *btr_json_result(const struct bt_result *r, size_t top, const char *place)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "rulesFile",
                           json_object_new_string(r->rules_file ? r->rules_file : ""));
    json_object_object_add(o, "from", report_json_time(r->cfg.from));
    json_object_object_add(o, "to", report_json_time(r->cfg.to));
    json_object_object_add(o, "intervalSeconds", report_json_number(r->cfg.interval));
    json_object_object_add(o, "returnWithinSeconds", report_json_number(r->cfg.return_within));
    json_object_object_add(o, "cycles", json_object_new_int64((int64_t)r->cycles));
    json_object_object_add(o, "dataStart", report_json_time(r->data_start));
    json_object_object_add(o, "cyclesBeforeData",
                           json_object_new_int64((int64_t)r->cycles_before_data));
    struct json_object *rules = json_object_new_array();
    for (size_t i = 0; i < r->nrules; i++) {
        const struct bt_rule_stats *st = &r->rule[i];
        struct json_object *x = json_object_new_object();
        json_object_object_add(x, "rule", json_object_new_string(st->name));
        if (st->simulated_as && st->simulated_as[0])
            json_object_object_add(x, "simulatedAs", json_object_new_string(st->simulated_as));
        json_object_object_add(x, "workloads", json_object_new_int64((int64_t)st->workloads));
        json_object_object_add(x, "notices", json_object_new_int64((int64_t)st->notices));
        json_object_object_add(x, "spared", json_object_new_int64((int64_t)st->spared));
        json_object_object_add(x, "reclaims", json_object_new_int64((int64_t)st->reclaims));
        json_object_object_add(x, "gpuHoursFreed", report_json_number(st->gpu_seconds / 3600));
        json_object_object_add(x, "returnsWithin",
                               json_object_new_int64((int64_t)st->returns_within));
        json_object_object_add(
            x, "returnShare",
            report_json_number(btr_share(st->returns_within, st->reclaims) / 100));
        json_object_object_add(x, "medianReturnSeconds", report_json_number(st->median_return));
        json_object_object_add(x, "returns", json_object_new_int64((int64_t)st->returns));
        json_object_object_add(x, "reclaimsWithoutAllocation",
                               json_object_new_int64((int64_t)st->unknown_devices));
        json_object_object_add(x, "reclaimDecisions",
                               json_object_new_int64((int64_t)st->reclaim_decisions));
        struct json_object *kept = json_object_new_object();
        for (int k = 0; k < REASON__COUNT; k++)
            if (st->kept[k])
                json_object_object_add(kept, decide_reason_name((enum reason)k),
                                       json_object_new_int64((int64_t)st->kept[k]));
        json_object_object_add(x, "keptByReason", kept);
        json_object_object_add(x, "errorCycles", json_object_new_int64((int64_t)st->error_cycles));
        struct json_object *fails = json_object_new_array();
        for (size_t k = 0; k < st->nfail; k++) {
            struct json_object *f = json_object_new_object();
            json_object_object_add(f, "from", report_json_time(st->fail[k].from));
            json_object_object_add(f, "to", report_json_time(st->fail[k].to));
            json_object_object_add(f, "cycles", json_object_new_int64((int64_t)st->fail[k].cycles));
            json_object_object_add(f, "message", json_object_new_string(st->fail[k].msg));
            json_object_array_add(fails, f);
        }
        json_object_object_add(x, "errors", fails);
        json_object_array_add(rules, x);
    }
    json_object_object_add(o, "rules", rules);
    /* The list of reclaims is rendered apart, one at a time (btr_json): a week of 10,000
       workloads without an hourly cap makes some 200,000, whose tree was most of the
       command's peak memory. Here it only holds its place. */
    json_object_object_add(o, "reclaims",
                           r->nrc ? json_object_new_string(place) : json_object_new_array());
    size_t ng;
    struct btr_group *g = btr_groups(r, &ng);
    if (r->cfg.by) {
        struct json_object *by = json_object_new_array();
        for (size_t i = 0; i < ng; i++) {
            struct json_object *x = json_object_new_object();
            json_object_object_add(x, "rule", json_object_new_string(r->rule[g[i].rule].name));
            json_object_object_add(x, r->cfg.by, json_object_new_string(g[i].value));
            json_object_object_add(x, "workloads",
                                   json_object_new_int64((int64_t)g[i].s.workloads));
            json_object_object_add(x, "reclaims", json_object_new_int64((int64_t)g[i].s.reclaims));
            json_object_object_add(x, "gpuHoursFreed",
                                   report_json_number(g[i].s.gpu_seconds / 3600));
            json_object_object_add(x, "returnsWithin",
                                   json_object_new_int64((int64_t)g[i].s.returns_within));
            json_object_array_add(by, x);
        }
        json_object_object_add(o, "by", by);
    }
    free(g);
    if (top) {
        size_t n, *ix = btr_top_gpu(r, top, &n);
        struct json_object *t = json_object_new_array();
        for (size_t i = 0; i < n; i++) {
            const struct bt_workload *w = &r->wl[ix[i]];
            struct json_object *x = json_object_new_object();
            json_object_object_add(x, "rule", json_object_new_string(r->rule[w->rule].name));
            json_object_object_add(x, "workload", btr_labels(&w->identity));
            json_object_object_add(x, "gpuHoursFreed", report_json_number(w->gpu_seconds / 3600));
            json_object_object_add(x, "reclaims", json_object_new_int64((int64_t)w->reclaims));
            json_object_array_add(t, x);
        }
        free(ix);
        json_object_object_add(o, "topGpuHours", t);
        ix = btr_top_soonest(r, top, &n);
        t = json_object_new_array();
        for (size_t i = 0; i < n; i++) {
            const struct bt_reclaim *rc = &r->rc[ix[i]];
            const struct bt_workload *w = &r->wl[rc->wl];
            struct json_object *x = json_object_new_object();
            json_object_object_add(x, "rule", json_object_new_string(r->rule[w->rule].name));
            json_object_object_add(x, "workload", btr_labels(&w->identity));
            json_object_object_add(x, "reclaimed", report_json_time(rc->at));
            json_object_object_add(x, "backAfterSeconds", report_json_number(rc->end - rc->at));
            json_object_array_add(t, x);
        }
        free(ix);
        json_object_object_add(o, "topSoonest", t);
    }
    json_object_object_add(o, "notSimulated", json_object_new_string(bt_not_simulated));
    json_object_object_add(o, "lookup", btr_json_lookup(r));
    return o;
}

#define BTR_JSON_FLAGS                                                                             \
    (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Where the JSON goes: `out`, handed to `sink` (when set) whenever it holds a megabyte. */
struct btr_out {
    struct sbuf *out;
    btreport_sink sink;
    void *arg;
};

static void btr_drain(struct btr_out *k, bool all)
{
    if (k->sink && k->out->len && (all || k->out->len >= (1u << 20))) {
        k->sink(k->arg, k->out->buf, k->out->len);
        sbuf_reset(k->out);
    }
}

/*
 * r's reclaims as the array json-c would print in place of the placeholder that stands on a
 * line indented by `indent`: each element printed alone and indented to its depth, which is
 * how json-c's pretty printer lays out a nested value (tests/unit/test_backtest.c compares
 * the two byte for byte).
 */
static void btr_json_reclaims(const struct bt_result *r, size_t indent, struct btr_out *k)
{
    sbuf_puts(k->out, "[\n");
    for (size_t i = 0; i < r->nrc; i++) {
        struct json_object *x = btr_json_reclaim(r, i);
        sbuf_printf(k->out, "%*s", (int)indent + 2, "");
        for (const char *p = json_object_to_json_string_ext(x, BTR_JSON_FLAGS); *p; p++) {
            sbuf_putc(k->out, *p);
            if (*p == '\n')
                sbuf_printf(k->out, "%*s", (int)indent + 2, "");
        }
        json_object_put(x);
        sbuf_puts(k->out, i + 1 < r->nrc ? ",\n" : "\n");
        btr_drain(k, false);
    }
    sbuf_printf(k->out, "%*s]", (int)indent, "");
}

/* The placeholders of the reclaims of a and b, and how json-c prints them with their key:
   inside a string json-c escapes every quote, so no string of the result prints as that. */
static const char *const btr_place[2] = {"\001gpureclaim-reclaims-a\001",
                                         "\001gpureclaim-reclaims-b\001"};
static const char *const btr_place_text[2] = {
    "\"reclaims\": \"\\u0001gpureclaim-reclaims-a\\u0001\"",
    "\"reclaims\": \"\\u0001gpureclaim-reclaims-b\\u0001\""};
#define BTR_KEY_LEN (sizeof("\"reclaims\": ") - 1)

static void btr_json(const struct bt_result *a, const struct bt_result *b, size_t top,
                     const struct bt_audit_cmp *cmp, struct btr_out *k)
{
    struct json_object *o = btr_json_result(a, top, btr_place[0]);
    if (cmp) {
        struct json_object *c = json_object_new_object();
        json_object_object_add(c, "matched", json_object_new_int64((int64_t)cmp->matched));
        json_object_object_add(c, "onlySimulated", json_object_new_int64((int64_t)cmp->only_sim));
        json_object_object_add(c, "onlyInAudit", json_object_new_int64((int64_t)cmp->only_audit));
        json_object_object_add(c, "noticesOnly", json_object_new_boolean(cmp->dry_run));
        json_object_object_add(o, "audit", c);
    }
    if (b) {
        struct json_object *top_o = json_object_new_object();
        json_object_object_add(top_o, "a", o);
        json_object_object_add(top_o, "b", btr_json_result(b, top, btr_place[1]));
        struct btr_sum sa, sb;
        btr_total(a, &sa);
        btr_total(b, &sb);
        size_t f[1], nf;
        struct json_object *d = json_object_new_object();
        json_object_object_add(d, "reclaims",
                               json_object_new_int64((int64_t)sb.reclaims - (int64_t)sa.reclaims));
        json_object_object_add(d, "gpuHoursFreed",
                               report_json_number((sb.gpu_seconds - sa.gpu_seconds) / 3600));
        json_object_object_add(
            d, "returnsWithin",
            json_object_new_int64((int64_t)sb.returns_within - (int64_t)sa.returns_within));
        json_object_object_add(d, "reclaimsOnlyInA",
                               json_object_new_int64((int64_t)btr_only(a, b, f, 0, &nf)));
        json_object_object_add(d, "reclaimsOnlyInB",
                               json_object_new_int64((int64_t)btr_only(b, a, f, 0, &nf)));
        json_object_object_add(top_o, "difference", d);
        o = top_o;
    }
    const char *text = json_object_to_json_string_ext(o, BTR_JSON_FLAGS);
    const struct bt_result *res[2] = {a, b};
    for (int which = 0; which < 2; which++) {
        const char *at = res[which] && res[which]->nrc ? strstr(text, btr_place_text[which]) : NULL;
        if (!at)
            continue;
        const char *line = at;
        while (line > text && line[-1] != '\n')
            line--;
        size_t indent = strspn(line, " ");
        sbuf_add(k->out, text, (size_t)(at - text) + BTR_KEY_LEN);
        btr_json_reclaims(res[which], indent, k);
        text = at + strlen(btr_place_text[which]);
    }
    sbuf_puts(k->out, text);
    sbuf_putc(k->out, '\n');
    btr_drain(k, true);
    json_object_put(o);
}

/* ---- CSV -------------------------------------------------------------------------------- */

/* A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. */
static void btr_csv_field(struct sbuf *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        sbuf_puts(out, s);
        return;
    }
    sbuf_putc(out, '"');
    for (; *s; s++) {
        if (*s == '"')
            sbuf_putc(out, '"');
        sbuf_putc(out, *s);
    }
    sbuf_putc(out, '"');
}

static void btr_csv_rows(const struct bt_result *r, struct sbuf *out)
{
    for (size_t i = 0; i < r->nrules; i++) {
        const struct bt_rule_stats *st = &r->rule[i];
        char sh[32] = "", med[32] = "";
        if (st->reclaims)
            snprintf(sh, sizeof(sh), "%.4f", (double)st->returns_within / (double)st->reclaims);
        if (isfinite(st->median_return))
            snprintf(med, sizeof(med), "%.0f", st->median_return);
        btr_csv_field(out, r->rules_file ? r->rules_file : "");
        sbuf_putc(out, ',');
        btr_csv_field(out, st->name);
        sbuf_printf(out, ",%zu,%zu,%zu,%zu,%.4f,%zu,%s,%s,%lu,%lu,%zu\n", st->workloads,
                    st->notices, st->reclaims, st->spared, st->gpu_seconds / 3600,
                    st->returns_within, sh, med, st->reclaim_decisions, st->keep_decisions,
                    st->error_cycles);
    }
}

/* --by: one row per group, after a blank line, with its own header. */
static void btr_csv_by(const struct bt_result *r, bool header, struct sbuf *out)
{
    size_t n;
    struct btr_group *g = btr_groups(r, &n);
    if (header) {
        sbuf_puts(out, "\nrules_file,rule,");
        btr_csv_field(out, r->cfg.by);
        sbuf_puts(out, ",workloads,reclaims,gpu_hours_freed,returns_within\n");
    }
    for (size_t i = 0; i < n; i++) {
        btr_csv_field(out, r->rules_file ? r->rules_file : "");
        sbuf_putc(out, ',');
        btr_csv_field(out, r->rule[g[i].rule].name);
        sbuf_putc(out, ',');
        btr_csv_field(out, g[i].value);
        sbuf_printf(out, ",%zu,%zu,%.4f,%zu\n", g[i].s.workloads, g[i].s.reclaims,
                    g[i].s.gpu_seconds / 3600, g[i].s.returns_within);
    }
    free(g);
}

static void btr_csv(const struct bt_result *a, const struct bt_result *b, struct sbuf *out)
{
    sbuf_puts(out, "rules_file,rule,workloads,notices,reclaims,spared,gpu_hours_freed,"
                   "returns_within,return_share,median_return_seconds,reclaim_decisions,"
                   "keep_decisions,error_cycles\n");
    btr_csv_rows(a, out);
    if (b)
        btr_csv_rows(b, out);
    if (a->cfg.by) {
        btr_csv_by(a, true, out);
        if (b)
            btr_csv_by(b, false, out);
    }
}

void btreport_render(const struct bt_result *a, const struct bt_result *b, size_t top,
                     const struct bt_audit_cmp *cmp, enum btreport_format fmt, struct sbuf *out)
{
    btreport_render_to(a, b, top, cmp, fmt, out, NULL, NULL);
}

void btreport_render_to(const struct bt_result *a, const struct bt_result *b, size_t top,
                        const struct bt_audit_cmp *cmp, enum btreport_format fmt, struct sbuf *out,
                        btreport_sink sink, void *arg)
{
    struct btr_out k = {out, sink, arg};
    switch (fmt) {
    case BTREPORT_JSON:
        btr_json(a, b, top, cmp, &k);
        return;
    case BTREPORT_CSV:
        btr_csv(a, b, out);
        break;
    default:
        btr_table(a, b, top, cmp, out);
    }
}
