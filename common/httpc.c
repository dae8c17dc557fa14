/*
 * libcurl wrapper: one blocking request per call on a fresh easy handle.
 *
 * A fresh handle per request keeps the module free of shared state (the enforcer makes a
 * few dozen requests per cycle, so connection reuse is not worth a lock). CURLOPT_NOSIGNAL
 * keeps curl from using SIGALRM for DNS timeouts, which is not thread-safe. Messages name
 * the URL with any user:password part hidden, because they end up in logs.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "file.h"
#include "httpc.h"

/* The Makefile defines it; the fuzz build compiles this file without it. */
#ifndef GPURECLAIM_VERSION
#define GPURECLAIM_VERSION "unknown"
#endif

static pthread_once_t httpc_once = PTHREAD_ONCE_INIT;
static CURLcode httpc_init_rc;
static atomic_ulong httpc_nreq, httpc_nfail;

static void httpc_global_init(void)
{
    httpc_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct httpc_xfer {
    const struct httpc_req *req;
    struct httpc_resp *resp;
    size_t max_body;
    bool too_big;
    bool stopped; /* the sink asked to stop */
};

static size_t httpc_write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
    struct httpc_xfer *x = arg;
    size_t n = size * nmemb;
    if (x->req->sink) {
        if (x->req->sink(x->req->sink_arg, data, n) != 0) {
            x->stopped = true;
            return 0; /* makes curl fail with CURLE_WRITE_ERROR */
        }
        return n;
    }
    if (x->resp->body.len + n > x->max_body) {
        x->too_big = true;
        return 0; /* makes curl fail with CURLE_WRITE_ERROR */
    }
    sbuf_add(&x->resp->body, data, n);
    return n;
}

/* CURLOPT_XFERINFOFUNCTION: a non-zero return aborts the transfer (req->cancel). */
static int httpc_progress_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                             curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const struct httpc_req *req = arg;
    return atomic_load(req->cancel) ? 1 : 0;
}

static void httpc_clear_headers(struct httpc_resp *resp)
{
    for (size_t i = 0; i < resp->nheaders; i++) {
        free(resp->headers[i].name);
        free(resp->headers[i].value);
    }
    free(resp->headers);
    resp->headers = NULL;
    resp->nheaders = 0;
}

static size_t httpc_header_cb(char *data, size_t size, size_t nmemb, void *arg)
{
    struct httpc_xfer *x = arg;
    size_t n = size * nmemb;

    /* A new status line starts a new response (after 100 Continue): forget the old one. */
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        httpc_clear_headers(x->resp);
        return n;
    }
    const char *colon = memchr(data, ':', n);
    if (!colon)
        return n;
    size_t name_len = (size_t)(colon - data);
    for (size_t i = 0; i < x->req->nwant_headers; i++) {
        const char *want = x->req->want_headers[i];
        if (strlen(want) != name_len || strncasecmp(want, data, name_len) != 0)
            continue;
        const char *v = colon + 1, *end = data + n;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        while (end > v && isspace((unsigned char)end[-1]))
            end--;
        struct httpc_resp *r = x->resp;
        r->headers = xrealloc(r->headers, (r->nheaders + 1) * sizeof(*r->headers));
        r->headers[r->nheaders].name = xstrdup(want);
        r->headers[r->nheaders].value = xstrndup(v, (size_t)(end - v));
        r->nheaders++;
        break;
    }
    return n;
}

/* The URL for messages, with "user:pass@" after the scheme replaced by "***@". */
static char *httpc_redact(const char *url)
{
    const char *scheme = strstr(url, "://");
    if (!scheme)
        return xstrdup(url);
    const char *host = scheme + 3;
    const char *slash = strchr(host, '/');
    const char *at = strchr(host, '@');
    if (!at || (slash && at > slash))
        return xstrdup(url);
    return xasprintf("%.*s***%s", (int)(host - url), url, at);
}

static void httpc_error(CURL *h, CURLcode rc, const struct httpc_req *req,
                        const struct httpc_xfer *x, double timeout, double connect_timeout,
                        const char *curl_err, char *err, size_t errlen)
{
    char *url = httpc_redact(req->url);
    const char *what = curl_err[0] ? curl_err : curl_easy_strerror(rc);
    long os_errno = 0;
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    const char *target = req->unix_socket ? req->unix_socket : url;

    if (x->too_big) {
        snprintf(err, errlen, "response from '%s' exceeds %zu bytes", url, x->max_body);
    } else if (rc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(err, errlen, "request to '%s' cancelled", url);
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        double connect_time = 0;
        curl_easy_getinfo(h, CURLINFO_CONNECT_TIME, &connect_time);
        if (connect_time <= 0)
            snprintf(err, errlen, "timeout after %.1f s connecting to '%s'", connect_timeout,
                     target);
        else
            snprintf(err, errlen, "timeout after %.1f s requesting '%s'", timeout, url);
    } else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) {
        snprintf(err, errlen, "cannot connect to '%s': %s", target,
                 os_errno ? strerror((int)os_errno) : what);
    } else {
        snprintf(err, errlen, "cannot request '%s': %s", url, what);
    }
    free(url);
}

int httpc_do(const struct httpc_req *req, struct httpc_resp *resp, char *err, size_t errlen)
{
    httpc_resp_free(resp);
    atomic_fetch_add(&httpc_nreq, 1);

    pthread_once(&httpc_once, httpc_global_init);
    if (httpc_init_rc != CURLE_OK) {
        snprintf(err, errlen, "cannot initialise libcurl: %s", curl_easy_strerror(httpc_init_rc));
        atomic_fetch_add(&httpc_nfail, 1);
        return -1;
    }
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(err, errlen, "cannot create a libcurl handle");
        atomic_fetch_add(&httpc_nfail, 1);
        return -1;
    }

    double timeout = req->timeout > 0 ? req->timeout : 30.0;
    double connect_timeout =
        req->connect_timeout > 0 ? req->connect_timeout : (timeout < 10.0 ? timeout : 10.0);
    struct httpc_xfer x = {
        .req = req,
        .resp = resp,
        .max_body = req->max_body ? req->max_body : HTTPC_DEFAULT_MAX_BODY,
    };
    char curl_err[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    char *auth = NULL;

    curl_easy_setopt(h, CURLOPT_URL, req->url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000.0 + 0.5));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_timeout * 1000.0 + 0.5));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, httpc_write_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, httpc_header_cb);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "gpureclaim/" GPURECLAIM_VERSION);
    if (req->cancel) {
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, httpc_progress_cb);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)req);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    if (req->unix_socket)
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, req->unix_socket);
    if (req->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, req->ca_file);
    if (req->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (req->basic_user) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(h, CURLOPT_USERNAME, req->basic_user);
        curl_easy_setopt(h, CURLOPT_PASSWORD, req->basic_pass ? req->basic_pass : "");
    }

    const char *method = req->method ? req->method : "GET";
    if (req->body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    }
    if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (strcmp(method, "POST") == 0) {
        /* Without POSTFIELDS libcurl sends a GET; an empty body keeps it a POST. */
        if (!req->body) {
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
        }
    } else {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }

    for (size_t i = 0; i < req->nheaders; i++)
        hdrs = curl_slist_append(hdrs, req->headers[i]);
    if (req->bearer_token) {
        auth = xasprintf("Authorization: Bearer %s", req->bearer_token);
        hdrs = curl_slist_append(hdrs, auth);
    }
    /* Without this curl waits up to a second for "100 Continue" on bodies over 1 KiB. */
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);

    double t0 = mono_now();
    CURLcode rc = curl_easy_perform(h);
    resp->elapsed = mono_now() - t0;
    int ret = 0;
    if (rc == CURLE_WRITE_ERROR && x.stopped) {
        /* The caller's reader has seen enough (a final error of its own); not a failure here. */
        resp->stopped = true;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    } else if (rc != CURLE_OK) {
        httpc_error(h, rc, req, &x, timeout, connect_timeout, curl_err, err, errlen);
        atomic_fetch_add(&httpc_nfail, 1);
        ret = -1;
    } else {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
    }
    /* Callers always get a NUL-terminated body, even an empty one. */
    sbuf_add(&resp->body, "", 0);

    /* The token must not linger in freed heap memory, in our copy or in libcurl's list. */
    for (struct curl_slist *s = hdrs; s; s = s->next)
        if (str_has_prefix(s->data, "Authorization:"))
            explicit_bzero(s->data, strlen(s->data));
    curl_slist_free_all(hdrs);
    secret_free(auth);
    curl_easy_cleanup(h);
    return ret;
}

void httpc_resp_free(struct httpc_resp *resp)
{
    httpc_clear_headers(resp);
    sbuf_free(&resp->body);
    resp->status = 0;
    resp->elapsed = 0;
    resp->stopped = false;
}

const char *httpc_resp_header(const struct httpc_resp *resp, const char *name)
{
    for (size_t i = 0; i < resp->nheaders; i++)
        if (strcasecmp(resp->headers[i].name, name) == 0)
            return resp->headers[i].value;
    return NULL;
}

unsigned long httpc_requests(void)
{
    return atomic_load(&httpc_nreq);
}

unsigned long httpc_failures(void)
{
    return atomic_load(&httpc_nfail);
}

void httpc_urlencode(struct sbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            sbuf_putc(b, (char)*p);
        } else {
            sbuf_putc(b, '%');
            sbuf_putc(b, hex[*p >> 4]);
            sbuf_putc(b, hex[*p & 15]);
        }
    }
}
