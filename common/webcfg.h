/*
 * The web configuration file (--web.config.file) of both programs, in the format of the
 * Prometheus exporter-toolkit (docs/web-configuration.md in prometheus/exporter-toolkit), so
 * that a file written for node_exporter works here: TLS (`tls_server_config`), bcrypt basic
 * authentication (`basic_auth_users`) and extra response headers (`http_server_config`).
 *
 * Parsing is a pure function of the bytes (webcfg_parse); webcfg_load also reads the files
 * the configuration names and checks that certificate and key belong together, so a file
 * that loads is one the server can use. Unknown keys, wrong types and values are errors at
 * file:line:col, like the rules loader. Keys of the toolkit that gpureclaim cannot honour
 * (cipher_suites, curve_preferences, client_allowed_sans, rate_limit) are refused with a
 * message saying so, rather than silently weakening what the operator asked for.
 *
 * webcfg_auth checks a user name and password against the bcrypt hashes with the system's
 * libcrypt. bcrypt is slow on purpose (~70 ms at cost 10), so successful checks are
 * remembered in a small cache keyed by a SHA-256 of user, password and hash, as the toolkit
 * does, and scrapes do not pay it every time.
 */
#ifndef GPURECLAIM_WEBCFG_H
#define GPURECLAIM_WEBCFG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* tls_server_config.client_auth_type, as Go's crypto/tls ClientAuthType. */
enum webcfg_client_auth {
    WEBCFG_NO_CLIENT_CERT,
    WEBCFG_REQUEST_CLIENT_CERT,
    WEBCFG_REQUIRE_ANY_CLIENT_CERT,
    WEBCFG_VERIFY_CLIENT_CERT_IF_GIVEN,
    WEBCFG_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

/* TLS protocol versions: 0 means "default" (min TLS 1.2, max TLS 1.3, as the toolkit). */
enum webcfg_tls_version { WEBCFG_TLS10 = 1, WEBCFG_TLS11, WEBCFG_TLS12, WEBCFG_TLS13 };

struct webcfg_user {
    char *name;
    char *hash; /* bcrypt, "$2a$", "$2b$" or "$2y$" */
};

struct webcfg_header {
    char *name;
    char *value;
};

struct webcfg {
    bool tls; /* tls_server_config present */
    /* Paths as resolved against the directory of the configuration file; NULL when inline. */
    char *cert_file, *key_file, *client_ca_file;
    /* PEM text: inline (`cert`, `key`, `client_ca`) or, after webcfg_load, the files' text. */
    char *cert, *key, *client_ca;
    enum webcfg_client_auth client_auth;
    int min_version, max_version; /* enum webcfg_tls_version */
    bool prefer_server_cipher_suites;
    struct webcfg_user *users;
    size_t nusers;
    struct webcfg_header *headers;
    size_t nheaders;
};

/*
 * Parse the configuration text `buf` of the file `path` (used in messages as path:line:col
 * and to resolve relative file names) into `out` (overwritten). Returns 0, or -1 with the
 * first problem in `err` (and how many more there were). No file other than `buf` is read.
 * Free `out` with webcfg_free in both cases.
 */
int webcfg_parse(const char *buf, size_t len, const char *path, struct webcfg *out, char *err,
                 size_t errlen);

/*
 * Read `path`, parse it, read the certificate, key and CA files it names and check with
 * GnuTLS that they are usable (key matches certificate, CA file holds a certificate).
 */
int webcfg_load(const char *path, struct webcfg *out, char *err, size_t errlen);

void webcfg_free(struct webcfg *c);

/* Whether two loaded configurations need the same TLS server (same keys, CA and versions). */
bool webcfg_same_tls(const struct webcfg *a, const struct webcfg *b);

/* GnuTLS priority string for the configured versions, e.g. "NORMAL:-VERS-ALL:+VERS-TLS1.2". */
void webcfg_priorities(const struct webcfg *c, char *buf, size_t len);

/* Successful bcrypt checks remembered; zero-initialise with WEBCFG_AUTH_CACHE_INIT. */
#define WEBCFG_AUTH_CACHE_SIZE 32
struct webcfg_auth_cache {
    pthread_mutex_t mu;
    unsigned char keys[WEBCFG_AUTH_CACHE_SIZE][32];
    bool used[WEBCFG_AUTH_CACHE_SIZE];
    unsigned next;
};
#define WEBCFG_AUTH_CACHE_INIT                                                                     \
    {                                                                                              \
        .mu = PTHREAD_MUTEX_INITIALIZER                                                            \
    }

/*
 * Whether `user`/`pass` match one of c->users. User names are compared in constant time and
 * an unknown user still pays one bcrypt, so timing does not tell which users exist.
 * `cache` may be NULL.
 */
bool webcfg_auth(const struct webcfg *c, struct webcfg_auth_cache *cache, const char *user,
                 const char *pass);

#endif
