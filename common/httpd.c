/*
 * libmicrohttpd endpoint shared by the exporter and the enforcer (see httpd.h).
 *
 * MHD runs a small pool of threads with its own polling (epoll), so a slow scrape never
 * blocks /healthz, and a connection timeout bounds how long an idle client holds a slot. The
 * response body is rendered per request into a private buffer and handed to MHD with
 * MHD_RESPMEM_MUST_FREE, so nothing is shared between concurrent requests.
 *
 * Hostile clients. MHD stops accepting when its connection limit is reached, so 256 clients
 * that never finish a request used to leave every scrape waiting in the listen backlog. Now:
 *  - every connection is tracked (MHD_OPTION_NOTIFY_CONNECTION) and the accept policy
 *    callback refuses a client address (IPv6: its /64) that already holds
 *    --web.max-connections-per-ip connections;
 *  - a connection must deliver a complete request header within --web.read-header-timeout
 *    of its start (and the next one within the idle timeout of the previous answer). MHD's
 *    timeout is an idle timeout that a client sending a byte every few seconds never reaches,
 *    so a housekeeping thread shuts such sockets down; MHD then sees the end of the stream
 *    and closes the connection itself. The socket is still MHD's at that moment because MHD
 *    reports a connection closed before it closes the descriptor, and both happen under
 *    h->mu here;
 *  - the connection limit is 1024 (capped by the file descriptor limit), so many slow hosts
 *    cannot fill it either;
 *  - MHD's own messages go through the project's logger, rate-limited (a client could
 *    otherwise write the log by sending garbage).
 *
 * Web configuration. TLS parameters are fixed when an MHD daemon starts, so a changed
 * certificate, key, CA or version range starts a second daemon on a duplicate of the same
 * listening socket, then quiesces the old one (it stops accepting, its open connections
 * finish) and stops it a few seconds later: new connections see the new certificate and no
 * connection attempt is refused in between. A file that does not load, or a daemon that
 * does not start, keeps the previous configuration, is logged and shows in
 * gpureclaim_web_config_reload_success. User and header changes take effect at once.
 */
#include "httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expo.h"
#include "log.h"
#include "webcfg.h"

/* libmicrohttpd 0.9.71 changed the callback return type (collectd's shim). */
#if MHD_VERSION >= 0x00097002
#define MHD_RESULT enum MHD_Result
#else
#define MHD_RESULT int
#endif

#define CONNECTION_LIMIT 1024
#define RETIRE_AFTER     5.0 /* seconds a quiesced daemon keeps serving its open connections */
#define TICK_NS          200000000L

enum refusal { REFUSED_PER_IP, REFUSED_HEADER_TIMEOUT, REFUSED_CLIENT_CERT, NREFUSALS };
static const char *const refusal_names[NREFUSALS] = {"per_ip_limit", "header_timeout",
                                                     "client_certificate"};

/* One open connection. */
struct conn {
    struct conn *prev, *next;
    unsigned char key[16]; /* client address: IPv4 as v4-mapped IPv6, IPv6 cut to /64 */
    int fd;
    double deadline; /* monotonic time by which a complete request header is due; 0: none */
};

/* A loaded web configuration, shared by the requests that use it. */
struct webref {
    struct webcfg c;
    unsigned refs;
};

/* What a reload compares: identity and change time of the config file and what it names. */
#define NWATCH 4
struct watch {
    char *path[NWATCH];
    struct stat st[NWATCH];
    bool ok[NWATCH];
};

struct httpd {
    struct httpd_cfg cfg;
    char *metrics_path;
    char *title;
    char *config_file;
    unsigned per_ip;
    double header_timeout;
    unsigned conn_limit;
    int port;

    /* Owned by the housekeeping thread after start (and by httpd_stop after it ended). */
    struct MHD_Daemon *daemon, *retired;
    struct webref *daemon_web, *retired_web; /* the configuration each daemon started with */
    double retire_at;
    int lfd; /* our duplicate of the listening socket, for the next daemon */
    struct watch watch;
    pthread_t keeper;
    bool keeper_started;

    pthread_mutex_t mu; /* guards everything below */
    pthread_cond_t wake;
    bool stopping;
    struct conn *conns;
    struct webref *web; /* current configuration, NULL without --web.config.file */
    uint64_t refused[NREFUSALS];
    bool reload_ok;
    double reload_ok_time; /* Unix time of the last successful load */

    struct webcfg_auth_cache auth_cache;
    struct log_limit mhd_log_limit;
};

static double now_mono(void)
{
    return mono_now();
}

/* ---- configuration references --------------------------------------------------------- */

static struct webref *web_get(struct httpd *h)
{
    pthread_mutex_lock(&h->mu);
    struct webref *w = h->web;
    if (w)
        w->refs++;
    pthread_mutex_unlock(&h->mu);
    return w;
}

static void web_put(struct httpd *h, struct webref *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&h->mu);
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&h->mu);
    if (last) {
        webcfg_free(&w->c);
        free(w);
    }
}

/* ---- libmicrohttpd callbacks ---------------------------------------------------------- */

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct httpd *h = cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    str_rtrim(msg);
    log_limited(&h->mhd_log_limit, LOG_WARN, 10, "libmicrohttpd: %s", msg);
}

static void addr_key(const struct sockaddr *sa, unsigned char key[16])
{
    memset(key, 0, 16);
    if (sa->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const unsigned char *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(a, mapped, 12) == 0)
            memcpy(key, a, 16); /* an IPv4 client of a dual-stack socket */
        else
            memcpy(key, a, 8); /* one host usually has a whole /64 */
    }
}

static MHD_RESULT accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct httpd *h = cls;
    if (!addr || addrlen < sizeof(struct sockaddr_in) || h->per_ip == 0)
        return MHD_YES;
    unsigned char key[16];
    addr_key(addr, key);
    unsigned n = 0;
    pthread_mutex_lock(&h->mu);
    for (struct conn *c = h->conns; c; c = c->next)
        n += memcmp(c->key, key, sizeof(key)) == 0;
    bool refuse = n >= h->per_ip;
    if (refuse)
        h->refused[REFUSED_PER_IP]++;
    pthread_mutex_unlock(&h->mu);
    return refuse ? MHD_NO : MHD_YES;
}

static void notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
    struct httpd *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        struct conn *c = xcalloc(1, sizeof(*c));
        const union MHD_ConnectionInfo *fi =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        c->fd = fi ? fi->connect_fd : -1;
        if (ai && ai->client_addr)
            addr_key(ai->client_addr, c->key);
        c->deadline = now_mono() + h->header_timeout;
        pthread_mutex_lock(&h->mu);
        c->next = h->conns;
        if (h->conns)
            h->conns->prev = c;
        h->conns = c;
        pthread_mutex_unlock(&h->mu);
        *socket_context = c;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct conn *c = *socket_context;
        if (!c)
            return;
        pthread_mutex_lock(&h->mu);
        if (c->prev)
            c->prev->next = c->next;
        else
            h->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        pthread_mutex_unlock(&h->mu);
        free(c);
        *socket_context = NULL;
    }
}

static struct conn *conn_of(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i ? i->socket_context : NULL;
}

static void set_deadline(struct httpd *h, struct MHD_Connection *connection, double deadline)
{
    struct conn *c = conn_of(connection);
    if (!c)
        return;
    pthread_mutex_lock(&h->mu);
    c->deadline = deadline;
    pthread_mutex_unlock(&h->mu);
}

/* The answer has gone out: the next request on this connection is due within the timeout. */
static void notify_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                             enum MHD_RequestTerminationCode toe)
{
    struct httpd *h = cls;
    set_deadline(h, connection, now_mono() + (h->cfg.timeout ? h->cfg.timeout : 30));
}

/* ---- requests ------------------------------------------------------------------------- */

static void add_headers(struct MHD_Response *r, const struct webref *w)
{
    for (size_t i = 0; w && i < w->c.nheaders; i++)
        MHD_add_response_header(r, w->c.headers[i].name, w->c.headers[i].value);
}

static MHD_RESULT reply(struct MHD_Connection *conn, const struct webref *w, unsigned status,
                        const char *type, char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    add_headers(r, w);
    MHD_RESULT ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static MHD_RESULT reply_text(struct MHD_Connection *conn, const struct webref *w, unsigned status,
                             const char *text)
{
    return reply(conn, w, status, "text/plain; charset=utf-8", xstrdup(text), strlen(text));
}

static MHD_RESULT reply_unauthorized(struct MHD_Connection *conn, const struct webref *w)
{
    static const char text[] = "Unauthorized\n";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
    add_headers(r, w);
    MHD_RESULT ret = MHD_queue_basic_auth_fail_response(conn, "gpureclaim", r);
    MHD_destroy_response(r);
    return ret;
}

/* 1: a valid client certificate, 0: none, -1: one that does not verify against the CA. */
static int client_cert(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!i || !i->tls_session)
        return 0;
    gnutls_session_t s = i->tls_session;
    unsigned n = 0;
    if (!gnutls_certificate_get_peers(s, &n) || n == 0)
        return 0;
    /* Chain, validity period and the client-authentication key purpose, as Go checks. */
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
    unsigned status = 0;
    if (gnutls_certificate_verify_peers(s, &purpose, 1, &status) < 0 || status != 0)
        return -1;
    return 1;
}

static bool client_cert_ok(const struct webcfg *c, struct MHD_Connection *conn)
{
    if (!c->tls)
        return true;
    switch (c->client_auth) {
    case WEBCFG_NO_CLIENT_CERT:
    case WEBCFG_REQUEST_CLIENT_CERT:
        return true;
    case WEBCFG_REQUIRE_ANY_CLIENT_CERT:
        return client_cert(conn) != 0;
    case WEBCFG_VERIFY_CLIENT_CERT_IF_GIVEN:
        return client_cert(conn) >= 0;
    case WEBCFG_REQUIRE_AND_VERIFY_CLIENT_CERT:
        return client_cert(conn) == 1;
    }
    return false;
}

static bool authorized(struct httpd *h, const struct webcfg *c, struct MHD_Connection *conn)
{
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(conn, &pass);
    bool ok = webcfg_auth(c, &h->auth_cache, user, pass);
    if (pass) {
        explicit_bzero(pass, strlen(pass));
        MHD_free(pass);
    }
    if (user)
        MHD_free(user);
    return ok;
}

/* The server's own families, published by both programs (see httpd.h). */
const struct expo_family httpd_family[HX_COUNT] = {
    [HX_HTTP_CONNECTIONS_REFUSED_TOTAL] =
        {"gpureclaim_http_connections_refused_total", EXPO_COUNTER,
         "Connections the HTTP server closed before answering: per_ip_limit (the "
         "client held --web.max-connections-per-ip), header_timeout (no complete "
         "request in time), client_certificate (rejected by client_auth_type)."},
    [HX_WEB_CONFIG_RELOAD_SUCCESS] =
        {"gpureclaim_web_config_reload_success", EXPO_GAUGE,
         "1 when the last load of --web.config.file (and the files it names) succeeded."},
    [HX_WEB_CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS] =
        {"gpureclaim_web_config_last_reload_success_timestamp_seconds", EXPO_GAUGE,
         "Unix time of the last successful load of --web.config.file."},
};

/* The server's own series, appended to the metrics body of both programs. */
static void own_metrics(struct httpd *h, struct sbuf *out)
{
    struct expo *e = expo_new();
    pthread_mutex_lock(&h->mu);
    for (int i = 0; i < NREFUSALS; i++)
        expo_put(e, HX(HTTP_CONNECTIONS_REFUSED_TOTAL), (double)h->refused[i], "reason",
                 refusal_names[i], NULL);
    if (h->config_file) {
        expo_put(e, HX(WEB_CONFIG_RELOAD_SUCCESS), h->reload_ok ? 1 : 0, NULL);
        expo_put(e, HX(WEB_CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP_SECONDS), h->reload_ok_time, NULL);
    }
    pthread_mutex_unlock(&h->mu);
    expo_render(e, out);
    expo_free(e);
}

static MHD_RESULT serve(struct httpd *h, const struct webref *w, struct MHD_Connection *conn,
                        const char *url, const char *method)
{
    if (w && !client_cert_ok(&w->c, conn)) {
        /* As a TLS server that requires a certificate would: no answer at all. */
        pthread_mutex_lock(&h->mu);
        h->refused[REFUSED_CLIENT_CERT]++;
        pthread_mutex_unlock(&h->mu);
        return MHD_NO;
    }
    /* /healthz answers without credentials so that liveness probes need none. */
    if (w && w->c.nusers > 0 && strcmp(url, "/healthz") != 0 && !authorized(h, &w->c, conn))
        return reply_unauthorized(conn, w);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply_text(conn, w, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (strcmp(url, h->metrics_path) == 0) {
        struct sbuf out = {0};
        if (h->cfg.metrics(h->cfg.arg, &out) < 0) {
            size_t len = out.len;
            return reply(conn, w, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                         sbuf_take(&out), len);
        }
        own_metrics(h, &out);
        size_t len = out.len;
        return reply(conn, w, MHD_HTTP_OK, EXPO_CONTENT_TYPE, sbuf_take(&out), len);
    }
    if (strcmp(url, "/healthz") == 0)
        return reply_text(conn, w, MHD_HTTP_OK, "ok\n");
    if (strcmp(url, "/") == 0) {
        struct sbuf b = {0};
        sbuf_printf(&b,
                    "<!DOCTYPE html>\n<html><head><title>%s</title></head><body>\n"
                    "<h1>%s</h1>\n<p>Version %s</p>\n<ul>\n"
                    "<li><a href=\"%s\">Metrics</a></li>\n"
                    "<li><a href=\"/healthz\">Health</a></li>\n</ul>\n</body></html>\n",
                    h->title, h->title, GPURECLAIM_VERSION, h->metrics_path);
        size_t len = b.len;
        return reply(conn, w, MHD_HTTP_OK, "text/html; charset=utf-8", sbuf_take(&b), len);
    }
    return reply_text(conn, w, MHD_HTTP_NOT_FOUND, "not found\n");
}

static MHD_RESULT handle(void *cls, struct MHD_Connection *conn, const char *url,
                         const char *method, const char *version, const char *upload_data,
                         size_t *upload_size, void **state)
{
    struct httpd *h = cls;
    set_deadline(h, conn, 0); /* the header is complete; MHD's idle timeout takes over */
    struct webref *w = web_get(h);
    MHD_RESULT r = serve(h, w, conn, url, method);
    web_put(h, w);
    return r;
}

/* ---- daemons -------------------------------------------------------------------------- */

/* Start a daemon on `lfd` (a listening socket it will own) or, when lfd < 0, on `addr`. */
static struct MHD_Daemon *start_daemon(struct httpd *h, const struct webcfg *w,
                                       const struct sockaddr *addr, unsigned ipflags, int lfd)
{
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC | ipflags;
    char prio[160];
    struct MHD_OptionItem o[16];
    size_t n = 0;
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, h};
    if (lfd >= 0)
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, lfd, NULL};
    else
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, (void *)addr};
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE,
                                     h->cfg.threads ? h->cfg.threads : 2, NULL};
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
                                     h->cfg.timeout ? h->cfg.timeout : 30, NULL};
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, h->conn_limit, NULL};
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify_connection, h};
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)notify_completed, h};
    if (w && w->tls) {
        flags |= MHD_USE_TLS;
        webcfg_priorities(w, prio, sizeof(prio));
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, w->key};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, w->cert};
        if (w->client_ca)
            o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, w->client_ca};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, prio};
    }
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(flags, 0, accept_policy, h, handle, h, MHD_OPTION_ARRAY, o,
                            MHD_OPTION_END);
}

static void watch_free(struct watch *wt)
{
    for (int i = 0; i < NWATCH; i++)
        free(wt->path[i]);
    memset(wt, 0, sizeof(*wt));
}

static bool str_eq_null(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/*
 * Watch the config file and the files `c` names. When that list changed, the new files are
 * stat'ed now; files already watched keep what the caller saw before loading, so a change
 * made while loading is still seen next time.
 */
static void watch_paths(struct httpd *h, const struct webcfg *c)
{
    const char *p[NWATCH] = {h->config_file, c->cert_file, c->key_file, c->client_ca_file};
    for (int i = 0; i < NWATCH; i++) {
        if (str_eq_null(h->watch.path[i], p[i]))
            continue;
        free(h->watch.path[i]);
        h->watch.path[i] = p[i] ? xstrdup(p[i]) : NULL;
        memset(&h->watch.st[i], 0, sizeof(h->watch.st[i]));
        h->watch.ok[i] = p[i] && stat(p[i], &h->watch.st[i]) == 0;
    }
}

static void watch_stat(struct watch *wt, struct stat st[NWATCH], bool ok[NWATCH])
{
    for (int i = 0; i < NWATCH; i++) {
        memset(&st[i], 0, sizeof(st[i]));
        ok[i] = wt->path[i] && stat(wt->path[i], &st[i]) == 0;
    }
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void reload_failed(struct httpd *h, const char *why)
{
    log_error("web config '%s' not reloaded, keeping the previous one: %s", h->config_file, why);
    pthread_mutex_lock(&h->mu);
    h->reload_ok = false;
    pthread_mutex_unlock(&h->mu);
}

/* Re-read the configuration when a watched file changed (housekeeping thread). */
static void maybe_reload(struct httpd *h)
{
    struct stat st[NWATCH];
    bool ok[NWATCH];
    watch_stat(&h->watch, st, ok);
    bool changed = false;
    for (int i = 0; i < NWATCH; i++)
        changed |= ok[i] != h->watch.ok[i] || (ok[i] && !same_stat(&st[i], &h->watch.st[i]));
    if (!changed)
        return;
    /* Remember what this attempt saw, so a broken file is reported once, not every tick. */
    memcpy(h->watch.st, st, sizeof(st));
    memcpy(h->watch.ok, ok, sizeof(ok));

    struct webref *nw = xcalloc(1, sizeof(*nw));
    nw->refs = 1;
    char err[600];
    if (webcfg_load(h->config_file, &nw->c, err, sizeof(err)) < 0) {
        /* Follow the files a parsable config names, e.g. a key file that appears later. */
        if (nw->c.cert_file || nw->c.key_file || nw->c.client_ca_file)
            watch_paths(h, &nw->c);
        webcfg_free(&nw->c);
        free(nw);
        reload_failed(h, err);
        return;
    }
    watch_paths(h, &nw->c);

    if (!webcfg_same_tls(&nw->c, &h->daemon_web->c)) {
        int fd = dup(h->lfd);
        struct MHD_Daemon *d = fd >= 0 ? start_daemon(h, &nw->c, NULL, 0, fd) : NULL;
        if (!d) {
            if (fd >= 0)
                close(fd);
            webcfg_free(&nw->c);
            free(nw);
            reload_failed(h, "the HTTP server did not start with it");
            return;
        }
        /* At most one retired daemon: stop an older one now. */
        if (h->retired) {
            MHD_stop_daemon(h->retired);
            web_put(h, h->retired_web);
        }
        int old_fd = MHD_quiesce_daemon(h->daemon);
        if (old_fd >= 0)
            close(old_fd);
        h->retired = h->daemon;
        h->retired_web = h->daemon_web;
        h->retire_at = now_mono() + RETIRE_AFTER;
        h->daemon = d;
        nw->refs++;
        h->daemon_web = nw;
    }
    pthread_mutex_lock(&h->mu);
    struct webref *old = h->web;
    h->web = nw;
    h->reload_ok = true;
    h->reload_ok_time = (double)time(NULL);
    pthread_mutex_unlock(&h->mu);
    web_put(h, old);
    log_info("web config '%s' reloaded (TLS %s, %zu basic auth users)", h->config_file,
             nw->c.tls ? "on" : "off", nw->c.nusers);
}

/* Close connections whose request header is overdue. */
static void cut_slow_headers(struct httpd *h)
{
    double t = now_mono();
    unsigned cut = 0;
    pthread_mutex_lock(&h->mu);
    for (struct conn *c = h->conns; c; c = c->next) {
        if (c->deadline > 0 && t > c->deadline && c->fd >= 0) {
            shutdown(c->fd, SHUT_RDWR);
            c->deadline = 0;
            cut++;
        }
    }
    h->refused[REFUSED_HEADER_TIMEOUT] += cut;
    pthread_mutex_unlock(&h->mu);
    if (cut)
        log_debug("closed %u connections without a complete request header in %.0f s", cut,
                  h->header_timeout);
}

static void *keeper_main(void *arg)
{
    struct httpd *h = arg;
    double check_every = h->cfg.web.reload_check > 0 ? h->cfg.web.reload_check : 1;
    double next_check = now_mono() + check_every;
    pthread_mutex_lock(&h->mu);
    while (!h->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += TICK_NS;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&h->wake, &h->mu, &ts);
        if (h->stopping)
            break;
        pthread_mutex_unlock(&h->mu);
        cut_slow_headers(h);
        double t = now_mono();
        if (h->retired && t >= h->retire_at) {
            MHD_stop_daemon(h->retired);
            web_put(h, h->retired_web);
            h->retired = NULL;
            h->retired_web = NULL;
        }
        if (h->config_file && t >= next_check) {
            maybe_reload(h);
            next_check = t + check_every;
        }
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* ---- start and stop ------------------------------------------------------------------- */

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

/*
 * The connection limit, below the soft descriptor limit with room for the program's own
 * files and sockets. The limit is not raised here: the systemd units forbid setrlimit
 * (@resources) and set LimitNOFILE instead; containers usually start with a high one.
 */
static unsigned connection_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 256;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > CONNECTION_LIMIT + 128)
        return CONNECTION_LIMIT;
    return rl.rlim_cur > 192 ? (unsigned)(rl.rlim_cur - 128) : 64;
}

static void httpd_free(struct httpd *h)
{
    if (h->web)
        web_put(h, h->web);
    if (h->daemon_web)
        web_put(h, h->daemon_web);
    watch_free(&h->watch);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->wake);
    free(h->metrics_path);
    free(h->title);
    free(h->config_file);
    free(h);
}

struct httpd *httpd_start(const struct httpd_cfg *cfg, char *err, size_t errlen)
{
    char host[256], port[32];
    if (split_listen(cfg->listen, host, sizeof(host), port, sizeof(port)) < 0) {
        snprintf(err, errlen, "invalid listen address '%s': want host:port or :port", cfg->listen);
        return NULL;
    }
    struct httpd *h = xcalloc(1, sizeof(*h));
    h->cfg = *cfg;
    h->metrics_path = xstrdup(cfg->metrics_path);
    h->title = xstrdup(cfg->title);
    h->per_ip = cfg->web.max_conn_per_ip ? cfg->web.max_conn_per_ip : HTTPD_DEFAULT_MAX_CONN_PER_IP;
    h->header_timeout =
        cfg->web.header_timeout > 0 ? cfg->web.header_timeout : HTTPD_DEFAULT_HEADER_TIMEOUT;
    h->lfd = -1;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->wake, NULL);
    h->auth_cache = (struct webcfg_auth_cache)WEBCFG_AUTH_CACHE_INIT;
    h->mhd_log_limit = (struct log_limit)LOG_LIMIT_INIT;
    h->conn_limit = connection_limit();

    /* An empty configuration stands for "no file": plain HTTP, no authentication. */
    struct webref *w = xcalloc(1, sizeof(*w));
    w->refs = 1;
    if (cfg->web.config_file && cfg->web.config_file[0]) {
        h->config_file = xstrdup(cfg->web.config_file);
        watch_paths(h, &w->c);
        char werr[600];
        if (webcfg_load(h->config_file, &w->c, werr, sizeof(werr)) < 0) {
            snprintf(err, errlen, "invalid --web.config.file: %s", werr);
            webcfg_free(&w->c);
            free(w);
            httpd_free(h);
            return NULL;
        }
        watch_paths(h, &w->c);
        h->reload_ok = true;
        h->reload_ok_time = (double)time(NULL);
        w->refs++;
        h->web = w;
    }
    h->daemon_web = w;

    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    hints.ai_family = host[0] ? AF_UNSPEC : AF_INET6;
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve listen address '%s': %s", cfg->listen,
                 gai_strerror(rc));
        httpd_free(h);
        return NULL;
    }
    unsigned ipflags = 0;
    if (ai->ai_family == AF_INET6)
        ipflags |= host[0] ? MHD_USE_IPv6 : MHD_USE_DUAL_STACK;
    errno = 0; /* so that the message below cannot show an older errno */
    h->daemon = start_daemon(h, &w->c, ai->ai_addr, ipflags, -1);
    freeaddrinfo(ai);
    if (!h->daemon) {
        snprintf(err, errlen, "cannot listen on '%s': %s", cfg->listen,
                 errno ? strerror(errno) : "libmicrohttpd failed to start");
        httpd_free(h);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : atoi(port);
    info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_LISTEN_FD);
    if (h->config_file && info)
        h->lfd = dup(info->listen_fd);
    if (pthread_create(&h->keeper, NULL, keeper_main, h) == 0)
        h->keeper_started = true;
    else
        log_error("cannot start the HTTP housekeeping thread: header timeouts and web config "
                  "reloads are off");
    if (h->config_file)
        log_info("web config '%s' loaded (TLS %s, %zu basic auth users)", h->config_file,
                 w->c.tls ? "on" : "off", w->c.nusers);
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
    if (h->keeper_started) {
        pthread_mutex_lock(&h->mu);
        h->stopping = true;
        pthread_cond_signal(&h->wake);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->keeper, NULL);
    }
    if (h->retired) {
        MHD_stop_daemon(h->retired);
        web_put(h, h->retired_web);
    }
    MHD_stop_daemon(h->daemon);
    if (h->lfd >= 0)
        close(h->lfd);
    httpd_free(h);
}
