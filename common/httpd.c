/*
 * libmicrohttpd endpoint shared by the exporter and the enforcer (see httpd.h).
 *
 * MHD runs a small pool of threads with its own polling, so a slow scrape never blocks
 * /healthz, and a connection timeout bounds how long a stuck client holds a thread. The
 * response body is rendered per request into a private buffer and handed to MHD with
 * MHD_RESPMEM_MUST_FREE, so nothing is shared between concurrent requests.
 */
#include "httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "expo.h"
#include "log.h"

/* libmicrohttpd 0.9.71 changed the callback return type (collectd's shim). */
#if MHD_VERSION >= 0x00097002
#define MHD_RESULT enum MHD_Result
#else
#define MHD_RESULT int
#endif

struct httpd {
    struct MHD_Daemon *daemon;
    struct httpd_cfg cfg;
    char *metrics_path;
    char *title;
    int port;
};

static MHD_RESULT reply(struct MHD_Connection *conn, unsigned status, const char *type, char *body,
                        size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_RESULT ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static MHD_RESULT reply_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
    return reply(conn, status, "text/plain; charset=utf-8", xstrdup(text), strlen(text));
}

static MHD_RESULT handle(void *cls, struct MHD_Connection *conn, const char *url,
                         const char *method, const char *version, const char *upload_data,
                         size_t *upload_size, void **state)
{
    struct httpd *h = cls;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (strcmp(url, h->metrics_path) == 0) {
        struct sbuf out = {0};
        if (h->cfg.metrics(h->cfg.arg, &out) < 0) {
            size_t len = out.len;
            return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                         sbuf_take(&out), len);
        }
        size_t len = out.len;
        return reply(conn, MHD_HTTP_OK, EXPO_CONTENT_TYPE, sbuf_take(&out), len);
    }
    if (strcmp(url, "/healthz") == 0)
        return reply_text(conn, MHD_HTTP_OK, "ok\n");
    if (strcmp(url, "/") == 0) {
        struct sbuf b = {0};
        sbuf_printf(&b,
                    "<!DOCTYPE html>\n<html><head><title>%s</title></head><body>\n"
                    "<h1>%s</h1>\n<p>Version %s</p>\n<ul>\n"
                    "<li><a href=\"%s\">Metrics</a></li>\n"
                    "<li><a href=\"/healthz\">Health</a></li>\n</ul>\n</body></html>\n",
                    h->title, h->title, GPURECLAIM_VERSION, h->metrics_path);
        size_t len = b.len;
        return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", sbuf_take(&b), len);
    }
    return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* Split "host:port", ":port" or "[v6]:port". */
static int split_listen(const char *listen, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *colon;
    if (listen[0] == '[') {
        const char *end = strchr(listen, ']');
        if (!end || end[1] != ':')
            return -1;
        snprintf(host, hostlen, "%.*s", (int)(end - listen - 1), listen + 1);
        colon = end + 1;
    } else {
        colon = strrchr(listen, ':');
        if (!colon)
            return -1;
        snprintf(host, hostlen, "%.*s", (int)(colon - listen), listen);
    }
    snprintf(port, portlen, "%s", colon + 1);
    return port[0] ? 0 : -1;
}

struct httpd *httpd_start(const struct httpd_cfg *cfg, char *err, size_t errlen)
{
    char host[256], port[32];
    if (split_listen(cfg->listen, host, sizeof(host), port, sizeof(port)) < 0) {
        snprintf(err, errlen, "invalid listen address '%s': want host:port or :port", cfg->listen);
        return NULL;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    hints.ai_family = host[0] ? AF_UNSPEC : AF_INET6;
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve listen address '%s': %s", cfg->listen,
                 gai_strerror(rc));
        return NULL;
    }
    struct httpd *h = xcalloc(1, sizeof(*h));
    h->cfg = *cfg;
    h->metrics_path = xstrdup(cfg->metrics_path);
    h->title = xstrdup(cfg->title);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (ai->ai_family == AF_INET6)
        flags |= host[0] ? MHD_USE_IPv6 : MHD_USE_DUAL_STACK;
    errno = 0; /* so that the message below cannot show an older errno */
    h->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)(cfg->threads ? cfg->threads : 2),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(cfg->timeout ? cfg->timeout : 30),
        MHD_OPTION_CONNECTION_LIMIT, 256u, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!h->daemon) {
        snprintf(err, errlen, "cannot listen on '%s': %s", cfg->listen,
                 errno ? strerror(errno) : "libmicrohttpd failed to start");
        free(h->metrics_path);
        free(h->title);
        free(h);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : atoi(port);
    return h;
}

int httpd_port(const struct httpd *h)
{
    return h->port;
}

void httpd_stop(struct httpd *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->daemon);
    free(h->metrics_path);
    free(h->title);
    free(h);
}
