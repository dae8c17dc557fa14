/*
 * The enforcer's data model for Prometheus results: label sets, time series and matrices, and
 * the key of the workload a label set belongs to.
 *
 * Range results (matrix) and instant results (vector, stored as series of one point) share
 * one type so the decision function sees one shape. Label sets are kept sorted by name with
 * unique names, so equality and formatting are deterministic.
 */
#ifndef GPURECLAIM_SERIES_H
#define GPURECLAIM_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct label {
    char *name;
    char *value;
};

struct labels {
    struct label *v; /* sorted by name, names unique; one block with the strings (series.c) */
    size_t n;
    /*
     * 0, or a number no label set of other content ever has (labels_stamp): two sets with the
     * same id are equal without a look at their strings. Copies keep it; a set built or
     * changed has 0. The replay stamps the series it holds, so the backtest's look-ups by
     * position (btdue_memo), which compare every series of every cycle, cost no strcmp.
     */
    uint64_t id;
};

struct point {
    double t; /* Unix seconds */
    double v; /* may be NaN or +-Inf as Prometheus sent it */
};

struct series {
    struct labels labels;
    struct point *p; /* ascending t */
    size_t n;
};

struct matrix {
    struct series *s;
    size_t n;
};

struct sbuf;

/* Value of `name`, or NULL when absent. */
const char *labels_get(const struct labels *ls, const char *name);
/* Insert or replace (copies both strings). */
void labels_set(struct labels *ls, const char *name, const char *value);
void labels_copy(struct labels *dst, const struct labels *src);
/* Give `ls` an id of its own (labels.id); its content must not change while it has it. */
void labels_stamp(struct labels *ls);
/* A new set of the `n` labels at v, already sorted by name and unique (copies the strings). */
void labels_from(struct labels *dst, const struct label *v, size_t n);
/* a's labels and those of b whose names a lacks: labels_copy of a, then labels_set of each
   such label of b, in one block. */
void labels_union(struct labels *dst, const struct labels *a, const struct labels *b);
/* Copy only the labels named in `names` (absent ones are skipped). */
void labels_project(struct labels *dst, const struct labels *src, char *const *names, size_t n);
/*
 * Append to b the key of the workload whose identity labels `names` are in src: each value's
 * length (a size_t, as raw bytes) then its bytes, so that two keys are equal exactly when the
 * values are. False when a value is absent or empty (decide.c ignores such a series); b then
 * holds a part of a key. The one identity key of the backtest's caches (btdue.c, recfast.c).
 */
bool labels_key(struct sbuf *b, const struct labels *src, char *const *names, size_t n);
bool labels_equal(const struct labels *a, const struct labels *b);
int labels_compare(const struct labels *a, const struct labels *b);
void labels_free(struct labels *ls);
/*
 * "{a=\"x\",b=\"y\"}" (PromQL syntax, values escaped; a name that is not a legacy identifier
 * quoted as Prometheus 3 requires: {\"k8s.pod.name\"=\"x\"}); caller frees.
 */
char *labels_format(const struct labels *ls);
/*
 * Parse `a="x",b="y"` (braces optional) into `out`. Returns 0, or -1 with a message in err.
 * Used for --workload on the command line.
 */
int labels_parse(const char *s, struct labels *out, char *err, size_t errlen);

/* True when `name` is a legacy label name [a-zA-Z_][a-zA-Z0-9_]*, which PromQL takes unquoted. */
bool labels_name_legacy(const char *name);
/* Append `name` as PromQL writes a label name: as is when legacy, else "quoted" (Prometheus 3). */
void labels_put_name(struct sbuf *b, const char *name);

/* Prometheus' staleness marker (prometheus/prometheus model/value/value.go, StaleNaN): the
   value a series takes when it disappears; not a number to judge, the end of the series. */
#define SERIES_STALE_NAN_BITS UINT64_C(0x7ff0000000000002)

/* True when v has exactly the bits of a staleness marker. */
bool series_is_stale(double v);

void series_free(struct series *s);
void matrix_free(struct matrix *m);
/* matrix_free of a matrix whose series' labels are lent (someone else's to free). */
void matrix_free_lent(struct matrix *m);
/* Append a series (takes ownership of its contents) and return a pointer to it. */
struct series *matrix_push(struct matrix *m);

#endif
