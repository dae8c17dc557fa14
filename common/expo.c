/*
 * Text exposition renderer (see expo.h).
 *
 * Samples are stored with their label set already rendered, so sorting is a string compare
 * and rendering is a copy. Families are found through a small open-addressing hash table:
 * a scrape of an 8-GPU CPX node adds a few thousand samples to about a hundred families.
 */
#include "expo.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sample {
    /* "" or "{a=\"x\",b=\"y\"}" in the expo's label arena: an offset, since the arena
     * moves as it grows, and the pointer expo_render() derives from it. */
    size_t off, len;
    const char *labels;
    double value;
    size_t seq; /* insertion order, so that the first of two duplicates wins */
};

struct family {
    char *name;
    char *help;
    const char *help_seen; /* the caller's HELP pointer last found equal: compared once */
    enum expo_type type;
    struct sample *samples;
    size_t n, cap;
};

/* Collectors pass metric names as string literals, so the address a name was last seen at
 * usually finds its family without hashing it (the name is still compared). */
#define NAME_CACHE 64

struct expo {
    struct family *fam;
    size_t nfam, capfam;
    struct {
        const char *name;
        size_t fam; /* index + 1, 0 = empty */
    } recent[NAME_CACHE];
    size_t *slots; /* hash slots holding family index + 1, 0 = empty */
    size_t nslots;
    size_t nsamples, ndup, nconflict;
    struct sbuf scratch;
    struct sbuf arena; /* every sample's rendered labels, NUL-separated: one allocation
                        * instead of one per sample */
};

struct expo *expo_new(void)
{
    struct expo *e = xcalloc(1, sizeof(*e));
    e->nslots = 256;
    e->slots = xcalloc(e->nslots, sizeof(size_t));
    return e;
}

void expo_free(struct expo *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nfam; i++) {
        struct family *f = &e->fam[i];
        free(f->samples);
        free(f->name);
        free(f->help);
    }
    free(e->fam);
    free(e->slots);
    sbuf_free(&e->scratch);
    sbuf_free(&e->arena);
    free(e);
}

static size_t hash_name(const char *s)
{
    return (size_t)fnv1a64(s, strlen(s));
}

static void rehash(struct expo *e)
{
    free(e->slots);
    e->nslots *= 2;
    e->slots = xcalloc(e->nslots, sizeof(size_t));
    for (size_t i = 0; i < e->nfam; i++) {
        size_t h = hash_name(e->fam[i].name) & (e->nslots - 1);
        while (e->slots[h])
            h = (h + 1) & (e->nslots - 1);
        e->slots[h] = i + 1;
    }
}

/*
 * A family already present met again: the first TYPE and HELP are kept (the output must have
 * one of each), and a sample that disagrees is counted in expo_conflicts() rather than lost
 * silently: two places that describe one family differently are a bug for a test to find.
 */
static struct family *family_check(struct expo *e, struct family *f, enum expo_type type,
                                   const char *help)
{
    if (f->help_seen == help && f->type == type)
        return f;
    if (f->type != type || strcmp(f->help, help ? help : "") != 0)
        e->nconflict++;
    else
        f->help_seen = help;
    return f;
}

static struct family *family_get(struct expo *e, const char *name, enum expo_type type,
                                 const char *help)
{
    size_t r = ((uintptr_t)name >> 3) & (NAME_CACHE - 1);
    if (e->recent[r].name == name && e->recent[r].fam &&
        strcmp(e->fam[e->recent[r].fam - 1].name, name) == 0)
        return family_check(e, &e->fam[e->recent[r].fam - 1], type, help);
    size_t h = hash_name(name) & (e->nslots - 1);
    while (e->slots[h]) {
        struct family *f = &e->fam[e->slots[h] - 1];
        if (strcmp(f->name, name) == 0) {
            e->recent[r].name = name;
            e->recent[r].fam = e->slots[h];
            return family_check(e, f, type, help);
        }
        h = (h + 1) & (e->nslots - 1);
    }
    if (e->nfam == e->capfam) {
        e->capfam = e->capfam ? e->capfam * 2 : 32;
        e->fam = xrealloc(e->fam, e->capfam * sizeof(*e->fam));
    }
    struct family *f = &e->fam[e->nfam++];
    memset(f, 0, sizeof(*f));
    f->name = xstrdup(name);
    f->help = xstrdup(help ? help : "");
    f->help_seen = help;
    f->type = type;
    e->slots[h] = e->nfam;
    e->recent[r].name = name;
    e->recent[r].fam = e->nfam;
    if (e->nfam * 2 > e->nslots)
        rehash(e);
    return f;
}

void expo_escape_label(struct sbuf *out, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        const char *esc = NULL;
        if (*s == '\\')
            esc = "\\\\";
        else if (*s == '"')
            esc = "\\\"";
        else if (*s == '\n')
            esc = "\\n";
        if (esc) {
            sbuf_add(out, run, (size_t)(s - run));
            sbuf_puts(out, esc);
            run = s + 1;
        }
    }
    sbuf_add(out, run, (size_t)(s - run));
}

static void escape_help(struct sbuf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            sbuf_puts(out, "\\\\");
        else if (*s == '\n')
            sbuf_puts(out, "\\n");
        else
            sbuf_putc(out, *s);
    }
}

void expo_format_value(double v, char buf[40])
{
    if (isnan(v)) {
        strcpy(buf, "NaN");
    } else if (isinf(v)) {
        strcpy(buf, v > 0 ? "+Inf" : "-Inf");
    } else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        /* What "%.0f" prints, without printf's arbitrary-precision path: most samples of
         * a scrape are integers (bytes, counters, states) and this was a tenth of it. */
        char tmp[24];
        size_t n = 0;
        uint64_t u = (uint64_t)fabs(v);
        do {
            tmp[n++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        size_t k = 0;
        if (signbit(v))
            buf[k++] = '-';
        while (n)
            buf[k++] = tmp[--n];
        buf[k] = '\0';
    } else {
        snprintf(buf, 40, "%.15g", v);
        if (strtod(buf, NULL) != v)
            snprintf(buf, 40, "%.17g", v);
    }
}

void expo_addv(struct expo *e, const char *name, enum expo_type type, const char *help,
               double value, const char *const *labels, size_t nlabels)
{
    struct family *f = family_get(e, name, type, help);
    struct sbuf *b = &e->scratch;
    sbuf_reset(b);
    bool any = false;
    for (size_t i = 0; i < nlabels; i++) {
        const char *k = labels[2 * i], *v = labels[2 * i + 1];
        if (!v)
            continue;
        sbuf_putc(b, any ? ',' : '{');
        sbuf_puts(b, k);
        sbuf_puts(b, "=\"");
        expo_escape_label(b, v);
        sbuf_putc(b, '"');
        any = true;
    }
    if (any)
        sbuf_putc(b, '}');
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 8;
        f->samples = xrealloc(f->samples, f->cap * sizeof(*f->samples));
    }
    f->samples[f->n].off = e->arena.len;
    f->samples[f->n].len = b->len;
    sbuf_add(&e->arena, b->buf ? b->buf : "", b->len);
    sbuf_putc(&e->arena, '\0');
    f->samples[f->n].value = value;
    f->samples[f->n].seq = e->nsamples;
    f->n++;
    e->nsamples++;
}

/* Collect the NULL-ended name/value pairs of a variadic call (at most 32 pairs). */
static size_t collect_labels(const char **labels, va_list ap)
{
    size_t n = 0;
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k)
            break;
        const char *v = va_arg(ap, const char *);
        if (n < 32) {
            labels[2 * n] = k;
            labels[2 * n + 1] = v;
            n++;
        }
    }
    return n;
}

void expo_add(struct expo *e, const char *name, enum expo_type type, const char *help, double value,
              ...)
{
    const char *labels[64];
    va_list ap;
    va_start(ap, value);
    size_t n = collect_labels(labels, ap);
    va_end(ap);
    expo_addv(e, name, type, help, value, labels, n);
}

void expo_put(struct expo *e, const struct expo_family *f, double value, ...)
{
    const char *labels[64];
    va_list ap;
    va_start(ap, value);
    size_t n = collect_labels(labels, ap);
    va_end(ap);
    expo_addv(e, f->name, f->type, f->help, value, labels, n);
}

void expo_putv(struct expo *e, const struct expo_family *f, double value, const char *const *labels,
               size_t nlabels)
{
    expo_addv(e, f->name, f->type, f->help, value, labels, nlabels);
}

static int cmp_family(const void *a, const void *b)
{
    return strcmp(((const struct family *)a)->name, ((const struct family *)b)->name);
}

static int cmp_sample(const void *a, const void *b)
{
    const struct sample *x = a, *y = b;
    int c = strcmp(x->labels, y->labels);
    if (c)
        return c;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const char *type_name(enum expo_type t)
{
    switch (t) {
    case EXPO_GAUGE:
        return "gauge";
    case EXPO_COUNTER:
        return "counter";
    default:
        return "untyped";
    }
}

void expo_render(struct expo *e, struct sbuf *out)
{
    /* An empty expo has no arrays yet: qsort and memset of NULL are undefined, even for 0. */
    if (e->nfam == 0)
        return;
    /* Sorting invalidates the hash slots: rebuild them so the expo stays usable. */
    qsort(e->fam, e->nfam, sizeof(*e->fam), cmp_family);
    memset(e->slots, 0, e->nslots * sizeof(size_t));
    memset(e->recent, 0, sizeof(e->recent));
    for (size_t i = 0; i < e->nfam; i++) {
        size_t h = hash_name(e->fam[i].name) & (e->nslots - 1);
        while (e->slots[h])
            h = (h + 1) & (e->nslots - 1);
        e->slots[h] = i + 1;
    }
    char num[40];
    for (size_t i = 0; i < e->nfam; i++) {
        struct family *f = &e->fam[i];
        if (f->n == 0)
            continue;
        bool sorted = true;
        for (size_t j = 0; j < f->n; j++) {
            f->samples[j].labels = e->arena.buf + f->samples[j].off;
            if (j > 0 && sorted && cmp_sample(&f->samples[j - 1], &f->samples[j]) > 0)
                sorted = false;
        }
        /* Collectors mostly add a family's samples in order already. */
        if (!sorted)
            qsort(f->samples, f->n, sizeof(*f->samples), cmp_sample);
        sbuf_printf(out, "# HELP %s ", f->name);
        escape_help(out, f->help);
        sbuf_printf(out, "\n# TYPE %s %s\n", f->name, type_name(f->type));
        for (size_t j = 0; j < f->n; j++) {
            if (j > 0 && strcmp(f->samples[j].labels, f->samples[j - 1].labels) == 0) {
                e->ndup++;
                continue;
            }
            expo_format_value(f->samples[j].value, num);
            sbuf_puts(out, f->name);
            sbuf_add(out, f->samples[j].labels, f->samples[j].len);
            sbuf_putc(out, ' ');
            sbuf_puts(out, num);
            sbuf_putc(out, '\n');
        }
    }
}

size_t expo_samples(const struct expo *e)
{
    return e->nsamples;
}

size_t expo_conflicts(const struct expo *e)
{
    return e->nconflict;
}

size_t expo_duplicates(const struct expo *e)
{
    return e->ndup;
}
