/*
 * Prometheus text exposition (format 0.0.4) built afresh for every scrape.
 *
 * Collectors add samples to a per-scrape `struct expo`; rendering groups samples by family,
 * sorts families by name and samples by label set (so golden files are stable), escapes
 * label values and HELP text exactly as the format requires (\\, \", \n and nothing else,
 * since promtool rejects \t), and prints floats so that they round-trip without noise.
 * There is no registry and no global state: two concurrent scrapes use two `struct expo`.
 */
#ifndef GPURECLAIM_EXPO_H
#define GPURECLAIM_EXPO_H

#include <stddef.h>

#include "util.h"

#define EXPO_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

enum expo_type { EXPO_GAUGE, EXPO_COUNTER, EXPO_UNTYPED };

struct expo;

struct expo *expo_new(void);
void expo_free(struct expo *e);

/*
 * A metric family declared once, so that its name, TYPE and HELP are written in one place
 * (the exporter's are all in exporter/metrics.c) and every sample refers to it.
 */
struct expo_family {
    const char *name;
    enum expo_type type;
    const char *help;
};

/* Add one sample of family `f`; labels as for expo_add. */
void expo_put(struct expo *e, const struct expo_family *f, double value, ...)
    __attribute__((sentinel));
void expo_putv(struct expo *e, const struct expo_family *f, double value, const char *const *labels,
               size_t nlabels);

/*
 * Add one sample. The variadic arguments are label name/value pairs ending with NULL; a
 * pair whose value is NULL is skipped. The first sample of a family fixes its HELP and
 * TYPE; a later sample of that name with another HELP or TYPE is counted in expo_conflicts(). A
 * repeated (name, labels) pair keeps the first value: duplicates are a collector bug and are
 * counted in expo_duplicates() rather than corrupting the output.
 */
void expo_add(struct expo *e, const char *name, enum expo_type type, const char *help, double value,
              ...) __attribute__((sentinel));

/* Same with `nlabels` name/value pairs in `labels` (labels[2*i] = name, labels[2*i+1] = value). */
void expo_addv(struct expo *e, const char *name, enum expo_type type, const char *help,
               double value, const char *const *labels, size_t nlabels);

/* Render everything added so far into `out` (appended). */
void expo_render(struct expo *e, struct sbuf *out);

size_t expo_samples(const struct expo *e);
size_t expo_duplicates(const struct expo *e);
/* Samples whose HELP or TYPE disagreed with the first of their family (a bug: see expo_add). */
size_t expo_conflicts(const struct expo *e);

/* Print v as the exposition format wants it (+Inf, -Inf, NaN, shortest round-trip). */
void expo_format_value(double v, char buf[40]);

/* Append `s` as an escaped label value (without quotes). */
void expo_escape_label(struct sbuf *out, const char *s);

#endif
