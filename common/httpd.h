/*
 * The HTTP endpoint both programs serve with libmicrohttpd: the metrics path, a small
 * landing page at /, and /healthz.
 *
 * Each request runs in a pool thread and renders into its own buffer, so concurrent
 * scrapes never share state; connections time out so a stuck client cannot hold a
 * thread forever. The metrics callback must be reentrant.
 *
 * Protection (--web.*): an optional web configuration file (webcfg.h: TLS, client
 * certificates, bcrypt basic auth, headers) re-read when it or a file it names changes; a
 * per-client connection limit; and a deadline for a complete request header, since
 * libmicrohttpd's own timeout is an idle timeout that a client trickling a byte every few
 * seconds never reaches. What the server refused is appended to every /metrics answer as
 * gpureclaim_http_connections_refused_total{reason} and gpureclaim_web_config_*.
 */
#ifndef GPURECLAIM_HTTPD_H
#define GPURECLAIM_HTTPD_H

#include <stddef.h>

#include "expo.h"
#include "util.h"

/*
 * The server's own metric families, published by both programs after their own metrics and
 * declared once here like the programs' tables (exporter/metrics.h, enforcer/enfmetrics.h).
 * Names are gpureclaim_<id in lower case>.
 */
enum hx_id {
    HX_HTTP_CONNECTIONS_REFUSED_TOTAL,
    HX_WEB_CONFIG_RELOAD_SUCCESS,
    HX_WEB_CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS,
    HX_COUNT
};
extern const struct expo_family httpd_family[HX_COUNT];
#define HX(id) (&httpd_family[HX_##id])

/* Render the metrics body into `out`. Return 0, or -1 to answer 500 with `out` as text. */
typedef int (*httpd_metrics_fn)(void *arg, struct sbuf *out);

/* The --web.* flags shared by both programs; zero values mean the defaults. */
#define HTTPD_DEFAULT_MAX_CONN_PER_IP 32
#define HTTPD_DEFAULT_HEADER_TIMEOUT  10.0
struct httpd_web {
    const char *config_file;  /* --web.config.file; NULL or "" for plain HTTP, no auth */
    unsigned max_conn_per_ip; /* --web.max-connections-per-ip */
    double header_timeout;    /* --web.read-header-timeout, seconds */
    double reload_check;      /* seconds between checks of the config file (default 1) */
};

struct httpd_cfg {
    const char *listen;       /* "host:port", ":port" or "[::1]:port"; port 0 picks a free one */
    const char *metrics_path; /* e.g. "/metrics" */
    const char *title;        /* landing page title, e.g. "gpureclaim exporter" */
    httpd_metrics_fn metrics;
    void *arg;
    unsigned threads; /* pool size, >= 1 */
    unsigned timeout; /* idle connection timeout in seconds */
    struct httpd_web web;
};

struct httpd;

/* Start serving; a web configuration file that does not load is an error here (only). */
struct httpd *httpd_start(const struct httpd_cfg *cfg, char *err, size_t errlen);
/* The port actually bound (useful with port 0). */
int httpd_port(const struct httpd *h);
void httpd_stop(struct httpd *h);

#endif
