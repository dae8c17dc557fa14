/*
 * Label sets, series and matrices for Prometheus results (see series.h). Label sets stay
 * sorted by name so that equality, ordering and formatting are plain walks.
 */
#include "series.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *labels_get(const struct labels *ls, const char *name)
{
    size_t lo = 0, hi = ls->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(ls->v[mid].name, name);
        if (c == 0)
            return ls->v[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/*
 * A label set is one allocation: the label array, then every name and value it points to.
 * With 100,000 workloads a cycle holds some 400,000 label sets (activity and allocation
 * series, each decision's identity and labels); one block each instead of one per string
 * saved a fifth of the peak memory in malloc's per-chunk overhead alone.
 */
static void labels_build(struct labels *dst, const struct label *src, size_t n)
{
    dst->n = n;
    dst->v = NULL;
    dst->id = 0;
    if (!n)
        return;
    size_t bytes = n * sizeof(*dst->v);
    for (size_t i = 0; i < n; i++)
        bytes += strlen(src[i].name) + strlen(src[i].value) + 2;
    dst->v = xmalloc(bytes);
    char *p = (char *)(dst->v + n);
    for (size_t i = 0; i < n; i++) {
        size_t a = strlen(src[i].name) + 1, b = strlen(src[i].value) + 1;
        dst->v[i].name = memcpy(p, src[i].name, a);
        p += a;
        dst->v[i].value = memcpy(p, src[i].value, b);
        p += b;
    }
}

void labels_from(struct labels *dst, const struct label *v, size_t n)
{
    labels_build(dst, v, n);
}

void labels_set(struct labels *ls, const char *name, const char *value)
{
    size_t i = 0;
    while (i < ls->n && strcmp(ls->v[i].name, name) < 0)
        i++;
    bool replace = i < ls->n && strcmp(ls->v[i].name, name) == 0;
    size_t n = ls->n + !replace;
    struct label small[16], *tmp = n <= 16 ? small : xmalloc(n * sizeof(*tmp));
    if (ls->n) {
        memcpy(tmp, ls->v, i * sizeof(*tmp));
        memcpy(tmp + i + 1, ls->v + i + replace, (ls->n - i - replace) * sizeof(*tmp));
    }
    tmp[i] = (struct label){(char *)name, (char *)value};
    struct labels out;
    labels_build(&out, tmp, n);
    if (tmp != small)
        free(tmp);
    free(ls->v);
    *ls = out;
}

void labels_copy(struct labels *dst, const struct labels *src)
{
    labels_build(dst, src->v, src->n);
    dst->id = src->id;
}

void labels_stamp(struct labels *ls)
{
    /* Atomic: label sets are stamped by whichever thread reads a series; never 0 (wraps
       after 2^64 stamps, not in a process's life). */
    static uint64_t next;
    ls->id = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
}

void labels_union(struct labels *dst, const struct labels *a, const struct labels *b)
{
    /* Both sorted by name with unique names: a merge, a's label where both have the name. */
    size_t n = a->n + b->n, i = 0, j = 0, k = 0;
    struct label small[16], *v = n <= 16 ? small : xmalloc(n * sizeof(*v));
    while (i < a->n || j < b->n) {
        int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->v[i].name, b->v[j].name);
        if (c <= 0) {
            v[k++] = a->v[i++];
            j += c == 0;
        } else {
            v[k++] = b->v[j++];
        }
    }
    labels_build(dst, v, k);
    if (v != small)
        free(v);
}

void labels_project(struct labels *dst, const struct labels *src, char *const *names, size_t n)
{
    /* One block, as labels_set of each name in turn would leave it (sorted by name, a name
       named twice once): decide() projects every workload's identity at every cycle. */
    struct label small[8], *v = n <= 8 ? small : xmalloc(n * sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *val = labels_get(src, names[i]);
        if (!val)
            continue;
        size_t at = k;
        while (at > 0 && strcmp(v[at - 1].name, names[i]) > 0)
            at--;
        if (at > 0 && strcmp(v[at - 1].name, names[i]) == 0) {
            v[at - 1].value = (char *)val;
            continue;
        }
        memmove(v + at + 1, v + at, (k - at) * sizeof(*v));
        v[at] = (struct label){names[i], (char *)val};
        k++;
    }
    labels_build(dst, v, k);
    if (v != small)
        free(v);
}

bool labels_key(struct sbuf *b, const struct labels *src, char *const *names, size_t n)
{
    /* Each value's length as raw bytes, not printed: this runs for every series and record
       of every cycle of a backtest. */
    for (size_t k = 0; k < n; k++) {
        const char *v = labels_get(src, names[k]);
        if (!v || !*v)
            return false;
        size_t len = strlen(v);
        sbuf_add(b, (const char *)&len, sizeof(len));
        sbuf_add(b, v, len);
    }
    return true;
}

int labels_compare(const struct labels *a, const struct labels *b)
{
    if (a->id && a->id == b->id)
        return 0; /* the same content (labels.id) */
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        int c = strcmp(a->v[i].name, b->v[i].name);
        if (c)
            return c;
        c = strcmp(a->v[i].value, b->v[i].value);
        if (c)
            return c;
    }
    return a->n < b->n ? -1 : a->n > b->n;
}

bool labels_equal(const struct labels *a, const struct labels *b)
{
    return labels_compare(a, b) == 0;
}

void labels_free(struct labels *ls)
{
    free(ls->v);
    ls->v = NULL;
    ls->n = 0;
    ls->id = 0;
}

bool labels_name_legacy(const char *name)
{
    if (!(isalpha((unsigned char)*name) || *name == '_'))
        return false;
    for (const char *p = name + 1; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return true;
}

/* `s` as the inside of a PromQL "..." string: '"', '\\' and newline escaped (lex.go). */
static void labels_put_escaped(struct sbuf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            sbuf_putc(b, '\\');
        if (*p == '\n') {
            sbuf_puts(b, "\\n");
            continue;
        }
        sbuf_putc(b, *p);
    }
}

void labels_put_name(struct sbuf *b, const char *name)
{
    if (labels_name_legacy(name)) {
        sbuf_puts(b, name);
        return;
    }
    sbuf_putc(b, '"');
    labels_put_escaped(b, name);
    sbuf_putc(b, '"');
}

char *labels_format(const struct labels *ls)
{
    struct sbuf b = {0};
    sbuf_putc(&b, '{');
    for (size_t i = 0; i < ls->n; i++) {
        if (i)
            sbuf_putc(&b, ',');
        labels_put_name(&b, ls->v[i].name);
        sbuf_puts(&b, "=\"");
        labels_put_escaped(&b, ls->v[i].value);
        sbuf_putc(&b, '"');
    }
    sbuf_putc(&b, '}');
    return sbuf_take(&b);
}

static bool is_name_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

int labels_parse(const char *s, struct labels *out, char *err, size_t errlen)
{
    *out = (struct labels){0};
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    bool braces = *p == '{';
    if (braces)
        p++;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (*p == '\0' || (braces && *p == '}'))
            break;
        char *key;
        if (*p == '"') {
            /* A Prometheus 3 quoted name, as labels_format writes one: "k8s.pod.name". */
            struct sbuf nb = {0};
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1]) {
                    p++;
                    sbuf_putc(&nb, *p == 'n' ? '\n' : *p);
                } else {
                    sbuf_putc(&nb, *p);
                }
            }
            if (*p != '"' || nb.len == 0) {
                snprintf(err, errlen, "invalid quoted label name at '%s'", s);
                sbuf_free(&nb);
                goto fail;
            }
            p++;
            key = sbuf_take(&nb);
        } else if (is_name_start(*p)) {
            const char *name = p;
            while (is_name_char(*p))
                p++;
            key = xstrndup(name, (size_t)(p - name));
        } else {
            snprintf(err, errlen, "invalid label name at '%s'", p);
            goto fail;
        }
        while (isspace((unsigned char)*p))
            p++;
        if (*p != '=' || p[1] != '"') {
            snprintf(err, errlen, "expected '=\"' after label '%s'", key);
            free(key);
            goto fail;
        }
        p += 2;
        struct sbuf val = {0};
        while (*p && *p != '"') {
            if (*p == '\\' && p[1]) {
                p++;
                sbuf_putc(&val, *p == 'n' ? '\n' : *p);
            } else {
                sbuf_putc(&val, *p);
            }
            p++;
        }
        if (*p != '"') {
            snprintf(err, errlen, "unterminated value of label '%s'", key);
            free(key);
            sbuf_free(&val);
            goto fail;
        }
        p++;
        char *v = sbuf_take(&val);
        labels_set(out, key, v);
        free(key);
        free(v);
    }
    if (braces && *p != '}') {
        snprintf(err, errlen, "missing closing '}'");
        goto fail;
    }
    return 0;
fail:
    labels_free(out);
    return -1;
}

bool series_is_stale(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    return bits == SERIES_STALE_NAN_BITS;
}

void series_free(struct series *s)
{
    labels_free(&s->labels);
    free(s->p);
    s->p = NULL;
    s->n = 0;
}

void matrix_free(struct matrix *m)
{
    for (size_t i = 0; i < m->n; i++)
        series_free(&m->s[i]);
    free(m->s);
    m->s = NULL;
    m->n = 0;
}

void matrix_free_lent(struct matrix *m)
{
    for (size_t i = 0; i < m->n; i++)
        m->s[i].labels = (struct labels){0};
    matrix_free(m);
}

struct series *matrix_push(struct matrix *m)
{
    m->s = xrealloc(m->s, (m->n + 1) * sizeof(*m->s));
    struct series *s = &m->s[m->n++];
    memset(s, 0, sizeof(*s));
    return s;
}
