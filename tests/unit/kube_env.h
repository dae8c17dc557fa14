/*
 * The fake Kubernetes API server for the unit tests of the Kubernetes client and its callers
 * (test_kube.c: kube.c's calls; test_kube_json.c: the pure parsers and request bodies on the
 * same objects; test_act_kube.c: the action backend's choice of target): one fake_kube per
 * test serving tests/e2e/data/kube, a client of it, its JSON request log, and checks of the
 * requests in that log.
 *
 * Each network test starts its own fake_kube (fork/exec, port chosen by the kernel, output in
 * a private temporary directory) so that state changes never leak between tests, and stops
 * it by its PID before the test ends. Static inline, as fake.h, so that each test includes
 * what it uses without unused-function warnings.
 */
#ifndef GPURECLAIM_KUBE_ENV_H
#define GPURECLAIM_KUBE_ENV_H

#include <libgen.h>
#include <signal.h>
#include <unistd.h>

#include <json-c/json.h>

#include "fake.h"
#include "kube.h"
#include "log.h"
#include "test.h"
#include "tmptree.h"
#include "util.h"

static char fake_path[4096];
static char data_dir[4096];
static char tmpdir[256];

#define UID(n) "9b1c0a52-1f0e-4c3b-9a55-0f2a1e" n

/* ---- fake_kube process ------------------------------------------------------------------ */

/*
 * One fake_kube and a client of it. Its files live in their own directory `dir` under tmpdir:
 * out (the fake's stdout and stderr), log (its JSON request log), token (what the client
 * sends), accept (what the fake accepts) and faults (its fault rules, re-read on change);
 * tests rewrite them with tmptree_put(e.dir, "token", ...).
 */
struct env {
    struct fake fake;
    char dir[4200], out[4300], log[4300], token[4300], accept[4300], faults[4300];
    struct kube *k;
    json_object *req[64]; /* request log after env_load_log */
    size_t nreq;
};

static inline void env_stop(struct env *e)
{
    fake_stop(&e->fake);
    kube_free(e->k);
    e->k = NULL;
    for (size_t i = 0; i < e->nreq; i++)
        json_object_put(e->req[i]);
    e->nreq = 0;
}

/*
 * Start fake_kube with extra arguments (NULL-terminated) and a client with `timeout`: 0, or
 * -1 with the test failed, so a test just returns.
 */
static inline int env_start(struct env *e, double timeout, ...)
{
    static int seq;
    memset(e, 0, sizeof(*e));
    char rel[32];
    snprintf(rel, sizeof(rel), "env%d", ++seq);
    snprintf(e->dir, sizeof(e->dir), "%s/%s", tmpdir, rel);
    snprintf(e->out, sizeof(e->out), "%s/out", e->dir);
    snprintf(e->log, sizeof(e->log), "%s/log", e->dir);
    snprintf(e->token, sizeof(e->token), "%s/token", e->dir);
    snprintf(e->accept, sizeof(e->accept), "%s/accept", e->dir);
    snprintf(e->faults, sizeof(e->faults), "%s/faults", e->dir);
    if (tmptree_mkdirs(tmpdir, rel) < 0 || tmptree_put(e->dir, "token", "token-one\n") < 0 ||
        tmptree_put(e->dir, "accept", "token-one\n") < 0 || tmptree_put(e->dir, "faults", "") < 0) {
        TEST_CHECK(!"env files written");
        return -1;
    }

    char *const pre[] = {fake_path, (char *)"--data",
                         data_dir,  (char *)"--log",
                         e->log,    (char *)"--token-file",
                         e->accept, (char *)"--faults-file",
                         e->faults, NULL};
    va_list ap;
    va_start(ap, timeout);
    int r = fake_start_va(&e->fake, pre, ap, e->out);
    va_end(ap);
    if (r < 0) {
        TEST_CHECK(!"fake_kube started");
        return -1;
    }

    char url[64], err[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", e->fake.port);
    struct kube_cfg cfg = {
        .api_url = url,
        .token_file = e->token,
        .timeout = timeout,
        .instance = "enforcer-0",
        .allow_insecure_credentials = true, /* the fake serves plain http */
    };
    e->k = kube_new(&cfg, err, sizeof(err));
    if (!e->k) {
        fprintf(stderr, "kube_new: %s\n", err);
        TEST_CHECK(e->k != NULL);
        env_stop(e);
        return -1;
    }
    return 0;
}

/* Parse the fake's request log into e->req (replacing what was loaded before). */
static inline size_t env_load_log(struct env *e)
{
    for (size_t i = 0; i < e->nreq; i++)
        json_object_put(e->req[i]);
    e->nreq = 0;
    char *s = test_read_file(e->log, NULL);
    for (char *line = s, *save = NULL; s && (line = strtok_r(line == s ? s : NULL, "\n", &save));
         line = NULL) {
        if (e->nreq < ARRAY_LEN(e->req))
            e->req[e->nreq++] = json_tokener_parse(line);
    }
    free(s);
    return e->nreq;
}

/* Does the JSON value at `ptr` (RFC 6901) equal `want` (a string's text, else JSON text)? */
static inline bool jeq(json_object *o, const char *ptr, const char *want)
{
    json_object *v = NULL;
    if (!o || json_pointer_get(o, ptr, &v) < 0)
        return want == NULL;
    if (!want)
        return false;
    if (json_object_is_type(v, json_type_string))
        return strcmp(json_object_get_string(v), want) == 0;
    const char *txt =
        json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (strcmp(txt, want) != 0) {
        fprintf(stderr, "  %s is %s, want %s\n", ptr, txt, want);
        return false;
    }
    return true;
}

static inline const char *jstr(json_object *o, const char *ptr)
{
    json_object *v = NULL;
    if (!o || json_pointer_get(o, ptr, &v) < 0 || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* Check request i is METHOD PATH; print the log entry when it is not. */
#define CHECK_REQ(e, i, method, path)                                                              \
    do {                                                                                           \
        bool ok_ = (i) < (e)->nreq && jeq((e)->req[i], "/method", method) &&                       \
                   jeq((e)->req[i], "/path", path);                                                \
        if (!ok_)                                                                                  \
            fprintf(stderr, "request %d: %s\n", (int)(i),                                          \
                    (i) < (e)->nreq ? json_object_to_json_string((e)->req[i]) : "(none)");         \
        TEST_CHECK(ok_);                                                                           \
    } while (0)

static const char *const merge_ct = "application/merge-patch+json";

/*
 * Before the first test: the fake built next to the running test (build/tests/test_x ->
 * build/fakes/fake_kube, build/san/... under sanitizers), the objects it serves (the source
 * tree's tests/e2e/data/kube, or $KUBE_TEST_DATA), and the temporary directory `name`.
 * 0, or -1 when that directory cannot be made.
 */
static inline int kube_env_setup(const char *argv0, const char *name)
{
    fake_bin_path(fake_path, sizeof(fake_path), argv0, "fake_kube");
    /* The objects live in the source tree; walk up from the binary to find them. */
    char self[4096];
    snprintf(self, sizeof(self), "%s", argv0);
    char *dir = dirname(self);
    const char *env_data = getenv("KUBE_TEST_DATA");
    snprintf(data_dir, sizeof(data_dir), "%s", env_data ? env_data : "tests/e2e/data/kube");
    for (int up = 0; up < 4 && access(data_dir, R_OK) != 0; up++) {
        struct sbuf b = {0};
        sbuf_puts(&b, dir);
        for (int i = 0; i <= up; i++)
            sbuf_puts(&b, "/..");
        sbuf_puts(&b, "/tests/e2e/data/kube");
        snprintf(data_dir, sizeof(data_dir), "%s", b.buf);
        sbuf_free(&b);
    }
    if (tmptree_make(tmpdir, sizeof(tmpdir), name) < 0) {
        perror("mkdtemp");
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    log_threshold = LOG_ERROR;
    return 0;
}

#endif
