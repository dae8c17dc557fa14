/*
 * The raw-sample read of a plain series selector (docs/promql-plan.md §5.7): which path a
 * server is read through (Prometheus remote read, VictoriaMetrics' /api/v1/export, or none,
 * meaning the PromQL plan), and one read of a selector's raw samples over [start, end],
 * handed over series by series or as a whole matrix. The per-cycle fetch (fetch.c) and the
 * replay readers (replay.c, replay_live.c) all read through it, so a server is read the same way
 * by `plan`, `run` and `backtest`.
 *
 * The forced path is set on the Prometheus client (promq_cfg.read_path, from
 * --prometheus.read-path), not in a global: two clients may read two servers two ways, and
 * what was learned of a server (VictoriaMetrics or not, remote read offered or not) stays on
 * its client (promq.h).
 */
#ifndef GPURECLAIM_RAWREAD_H
#define GPURECLAIM_RAWREAD_H

#include <stdbool.h>
#include <stddef.h>

#include "promq.h"
#include "series.h"

/*
 * The flag value ("auto", "remote-read", "export", "promql") as a read path: 0, or -1 for any
 * other name.
 */
int rawread_path_parse(const char *name, enum promq_read_path *out);

/* "remote_read", "export" or "promql": the path as rule_data.read_path and logs name it. */
const char *rawread_path_label(enum promq_read_path p);

/*
 * Which path a selector is read through on the server of `q`: the client's forced path, else
 * VictoriaMetrics' export on VictoriaMetrics, else remote read unless it is known to be
 * absent, else PromQL (PROMQ_READ_PROMQL: the caller uses the PromQL plan). *probe is set
 * when remote read has not been tried on this server yet. -1 with a message when the server
 * could not be asked (the rule then fails, as its queries would).
 */
int rawread_choose(struct promq *q, enum promq_read_path *path, bool *probe, char *err,
                   size_t errlen);

/* What a raw read found: samples, or a server that does not offer remote read. */
enum rawread_rc { RAWREAD_OK, RAWREAD_ABSENT, RAWREAD_ERROR };

/*
 * A series handed over complete (labels sorted, `__name__` kept, points strictly ascending,
 * t = ms / 1000.0, v bit-exact with staleness markers): lent for the call only. 0, or -1 with
 * a message, which fails the whole read.
 */
typedef int (*rawread_series_fn)(void *arg, const struct series *s, char *err, size_t errlen);

/*
 * One raw read of `sel` over [start, end] (seconds, both inclusive, read at millisecond
 * resolution) through `path` (RAWREAD_REMOTE_READ or RAWREAD_EXPORT as chosen by
 * rawread_choose; `probe` as it set it). RAWREAD_OK with the samples; RAWREAD_ABSENT when
 * remote read was being tried on this server (`probe`) and it does not offer it (the client
 * then remembers that, and the caller uses the PromQL plan); else RAWREAD_ERROR with a
 * message, counted as a failed request on the client.
 * With `fn`, every series goes to fn as soon as it is complete (a remote read holds the raw
 * samples of one series at a time; an export answer is parsed whole first, since its lines
 * of one series need not be consecutive) and *out stays empty; without, *out receives them
 * all. Whatever the answer, a caller that built something from the series it was handed must
 * drop it unless RAWREAD_OK: a failed read is never a shorter series.
 * *samples and *bytes (may be NULL) get the samples handed over and the answer's bytes.
 */
enum rawread_rc rawread_read(struct promq *q, enum promq_read_path path, bool probe,
                             const char *sel, double start, double end, rawread_series_fn fn,
                             void *arg, struct matrix *out, size_t *samples, size_t *bytes,
                             char *err, size_t errlen);

#endif
