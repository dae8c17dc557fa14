/*
 * The HTTP endpoint both programs serve with libmicrohttpd: the metrics path, a small
 * landing page at /, and /healthz.
 *
 * Each request runs in a pool thread and renders into its own buffer, so concurrent
 * scrapes never share state; connections time out so a stuck client cannot hold a
 * thread forever. The metrics callback must be reentrant.
 */
#ifndef GPURECLAIM_HTTPD_H
#define GPURECLAIM_HTTPD_H

#include <stddef.h>

#include "util.h"

/* Render the metrics body into `out`. Return 0, or -1 to answer 500 with `out` as text. */
typedef int (*httpd_metrics_fn)(void *arg, struct sbuf *out);

struct httpd_cfg {
    const char *listen;       /* "host:port", ":port" or "[::1]:port"; port 0 picks a free one */
    const char *metrics_path; /* e.g. "/metrics" */
    const char *title;        /* landing page title, e.g. "gpureclaim exporter" */
    httpd_metrics_fn metrics;
    void *arg;
    unsigned threads; /* pool size, >= 1 */
    unsigned timeout; /* connection timeout in seconds */
};

struct httpd;

struct httpd *httpd_start(const struct httpd_cfg *cfg, char *err, size_t errlen);
/* The port actually bound (useful with port 0). */
int httpd_port(const struct httpd *h);
void httpd_stop(struct httpd *h);

#endif
