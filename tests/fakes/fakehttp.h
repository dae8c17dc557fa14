/*
 * The libmicrohttpd plumbing the fake servers in tests/fakes share, so that each fake is only
 * its own answers: serving on 127.0.0.1 (port 0 = a free port picked by the kernel) and
 * printing "listening on PORT" on stdout once bound, which is the line tests/unit/fake.h and
 * tests/lib.sh wait for; collecting a request body across the handler's calls; the query
 * string as one "k=v&k=v" text; replies; a sleep that a stop signal cuts short; and stopping
 * cleanly on SIGTERM or SIGINT.
 *
 * A fake includes this once; everything is static inline so a fake that does not use a
 * helper gets no unused-function warning.
 */
#ifndef GPURECLAIM_FAKEHTTP_H
#define GPURECLAIM_FAKEHTTP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "util.h"

/* libmicrohttpd 0.9.71 changed the callbacks' return type from int to enum MHD_Result. */
#if MHD_VERSION >= 0x00097002
#define MHD_RESULT enum MHD_Result
#else
#define MHD_RESULT int
#endif

/*
 * A fake's request handler: called once per request, after the whole body has arrived. `body`
 * holds it NUL-terminated (buf is never NULL); the handler may append to it. It queues the
 * answer (fakehttp_reply) and returns what MHD_queue_response returned.
 */
typedef MHD_RESULT (*fakehttp_fn)(struct MHD_Connection *conn, const char *url, const char *method,
                                  struct sbuf *body);

/* Set once a stop signal arrived: long waits inside a handler end early. */
static volatile sig_atomic_t fakehttp_stopping;

/* Queue `body` with `status` and the NULL-terminated name, value, ... list `headers`. */
static inline MHD_RESULT fakehttp_reply_headers(struct MHD_Connection *conn, unsigned status,
                                                const char *body, const char *const *headers)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    for (size_t i = 0; headers && headers[i] && headers[i + 1]; i += 2)
        MHD_add_response_header(r, headers[i], headers[i + 1]);
    MHD_RESULT ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

/* Queue `body` with `status` and Content-Type `ctype`. */
static inline MHD_RESULT fakehttp_reply(struct MHD_Connection *conn, unsigned status,
                                        const char *ctype, const char *body)
{
    const char *const headers[] = {"Content-Type", ctype, NULL};
    return fakehttp_reply_headers(conn, status, body, headers);
}

static inline MHD_RESULT fakehttp_collect_arg_(void *cls, enum MHD_ValueKind kind, const char *key,
                                               const char *value)
{
    (void)kind;
    struct sbuf *b = cls;
    if (b->len)
        sbuf_putc(b, '&');
    sbuf_printf(b, "%s=%s", key, value ? value : "");
    return MHD_YES;
}

/*
 * Append the request's query arguments to `out` as "k=v&k=v", decoded, in the order they
 * were sent (for request logs; an argument without a value is "k=").
 */
static inline void fakehttp_query(struct MHD_Connection *conn, struct sbuf *out)
{
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, fakehttp_collect_arg_, out);
}

/* Sleep `seconds` in 20 ms steps, returning early once the fake is stopping. */
static inline void fakehttp_sleep(double seconds)
{
    double end = mono_now() + seconds;
    while (!fakehttp_stopping && mono_now() < end) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/*
 * libmicrohttpd calls the handler first with only the headers, then once per chunk of the
 * body, then once more with none left: only that last call answers.
 */
static inline MHD_RESULT fakehttp_handler_(void *cls, struct MHD_Connection *conn, const char *url,
                                           const char *method, const char *version,
                                           const char *upload_data, size_t *upload_data_size,
                                           void **con_cls)
{
    (void)version;
    struct sbuf *body = *con_cls;
    if (!body) {
        *con_cls = xcalloc(1, sizeof(struct sbuf));
        return MHD_YES;
    }
    if (*upload_data_size) {
        sbuf_add(body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    sbuf_add(body, "", 0);
    fakehttp_fn fn = *(fakehttp_fn *)cls;
    return fn(conn, url, method, body);
}

static inline void fakehttp_completed_(void *cls, struct MHD_Connection *conn, void **con_cls,
                                       enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct sbuf *body = *con_cls;
    if (body) {
        sbuf_free(body);
        free(body);
        *con_cls = NULL;
    }
}

/*
 * Serve `fn` on 127.0.0.1:port until SIGTERM or SIGINT, printing "listening on PORT" (the
 * bound port) on stdout first. `name` prefixes the error when the port cannot be bound.
 * 0 after a clean stop, 1 if it could not listen.
 */
static inline int fakehttp_serve(const char *name, uint16_t port, fakehttp_fn fn)
{
    /* Block the stop signals before MHD starts its threads, so only sigwait sees them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    static fakehttp_fn handler;
    handler = fn;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* A thread per connection so that a slow answer never delays another request. */
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, port, NULL, NULL,
        fakehttp_handler_, &handler, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, fakehttp_completed_, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "%s: cannot listen on 127.0.0.1:%u\n", name, (unsigned)port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("listening on %u\n", info ? (unsigned)info->port : (unsigned)port);
    fflush(stdout);

    int sig;
    sigwait(&set, &sig);
    fakehttp_stopping = 1;
    MHD_stop_daemon(d);
    return 0;
}

#endif
