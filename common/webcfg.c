/*
 * The web configuration file (see webcfg.h): schema check over the positioned YAML DOM,
 * loading of the certificate files, and bcrypt basic authentication with a success cache.
 */
#include "webcfg.h"

#include <crypt.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "util.h"
#include "ydom.h"

#define WEBCFG_FILE_MAX     (1024 * 1024) /* config, certificate and key files */
#define BCRYPT_MAX_PASSWORD 72            /* bcrypt ignores what follows; refuse instead */

struct ctx {
    const char *path;
    char first[512];
    size_t nerrors;
};

static void err_at(struct ctx *c, const struct ydom_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void err_at(struct ctx *c, const struct ydom_node *n, const char *fmt, ...)
{
    if (c->nerrors++ > 0)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(c->first, sizeof(c->first), "%s:%d:%d: %s", c->path, n ? n->line : 1, n ? n->col : 1,
             msg);
}

/* A key or scalar quoted for a message. */
static const char *q(const struct ydom_node *n, char buf[64])
{
    return ydom_printable(n->str, n->len, buf, 64);
}

static bool is_null(const struct ydom_node *v)
{
    return v->kind == YDOM_KIND_SCALAR && ydom_scalar_type(v) == YDOM_T_NULL;
}

/* A string value: any non-null scalar without NUL bytes (YAML `123` is the text "123"). */
static char *get_string(struct ctx *c, const struct ydom_node *k, const struct ydom_node *v)
{
    char b[64];
    if (v->kind != YDOM_KIND_SCALAR || is_null(v)) {
        err_at(c, v, "'%s' must be a string, not %s", q(k, b), ydom_type_name(v));
        return NULL;
    }
    if (strlen(v->str) != v->len) {
        err_at(c, v, "'%s' must not contain a NUL character", q(k, b));
        return NULL;
    }
    return xstrndup(v->str, v->len);
}

static int get_bool(struct ctx *c, const struct ydom_node *k, const struct ydom_node *v, bool *out)
{
    char b[64];
    if (v->kind != YDOM_KIND_SCALAR || ydom_scalar_bool(v, out) < 0) {
        err_at(c, v, "'%s' must be true or false, not %s", q(k, b), ydom_type_name(v));
        return -1;
    }
    return 0;
}

/* Relative paths are relative to the configuration file's directory, as in the toolkit. */
static char *resolve(const char *cfg_path, char *file)
{
    if (!file || file[0] == '/' || file[0] == '\0')
        return file;
    const char *slash = strrchr(cfg_path, '/');
    if (!slash)
        return file;
    char *r = xasprintf("%.*s/%s", (int)(slash - cfg_path), cfg_path, file);
    free(file);
    return r;
}

static const char *const client_auth_names[] = {
    [WEBCFG_NO_CLIENT_CERT] = "NoClientCert",
    [WEBCFG_REQUEST_CLIENT_CERT] = "RequestClientCert",
    [WEBCFG_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
    [WEBCFG_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
    [WEBCFG_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

static int parse_version(struct ctx *c, const struct ydom_node *k, const struct ydom_node *v)
{
    static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
    char *s = get_string(c, k, v);
    if (!s)
        return 0;
    int ver = 0;
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (strcmp(s, names[i]) == 0)
            ver = (int)i + 1;
    char b[64], b2[64];
    if (!ver)
        err_at(c, v, "unknown TLS version '%s' for '%s': want TLS10, TLS11, TLS12 or TLS13",
               ydom_printable(s, strlen(s), b, sizeof(b)), q(k, b2));
    free(s);
    return ver;
}

static void parse_tls(struct ctx *c, const struct ydom_node *map, struct webcfg *w)
{
    char b[64];
    bool any = false;
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *v = map->pairs[i].value;
        const char *name = k->str;
        char **dst = NULL;
        if (strcmp(name, "cert") == 0)
            dst = &w->cert;
        else if (strcmp(name, "key") == 0)
            dst = &w->key;
        else if (strcmp(name, "client_ca") == 0)
            dst = &w->client_ca;
        else if (strcmp(name, "cert_file") == 0)
            dst = &w->cert_file;
        else if (strcmp(name, "key_file") == 0)
            dst = &w->key_file;
        else if (strcmp(name, "client_ca_file") == 0)
            dst = &w->client_ca_file;
        if (dst) {
            if (is_null(v))
                continue;
            free(*dst);
            *dst = get_string(c, k, v);
            if (*dst && (*dst)[0] == '\0') { /* "" is unset in the toolkit */
                free(*dst);
                *dst = NULL;
            }
            any |= *dst != NULL;
        } else if (strcmp(name, "client_auth_type") == 0) {
            char *s = get_string(c, k, v);
            if (!s)
                continue;
            int found = -1;
            for (size_t j = 0; j < ARRAY_LEN(client_auth_names); j++)
                if (strcmp(s, client_auth_names[j]) == 0)
                    found = (int)j;
            if (strcmp(s, "RequireClientCert") == 0) /* the toolkit's older name */
                found = WEBCFG_REQUIRE_ANY_CLIENT_CERT;
            if (found < 0)
                err_at(c, v,
                       "unknown client_auth_type '%s': want NoClientCert, RequestClientCert, "
                       "RequireAnyClientCert, VerifyClientCertIfGiven or "
                       "RequireAndVerifyClientCert",
                       ydom_printable(s, strlen(s), b, sizeof(b)));
            else
                w->client_auth = (enum webcfg_client_auth)found;
            any = true;
            free(s);
        } else if (strcmp(name, "min_version") == 0) {
            w->min_version = parse_version(c, k, v);
        } else if (strcmp(name, "max_version") == 0) {
            w->max_version = parse_version(c, k, v);
        } else if (strcmp(name, "prefer_server_cipher_suites") == 0) {
            get_bool(c, k, v, &w->prefer_server_cipher_suites);
        } else if (strcmp(name, "cipher_suites") == 0 || strcmp(name, "curve_preferences") == 0 ||
                   strcmp(name, "client_allowed_sans") == 0) {
            err_at(c, k,
                   "'%s' in 'tls_server_config' is not supported by gpureclaim (GnuTLS chooses "
                   "ciphers and curves); remove it",
                   name);
        } else {
            err_at(c, k, "unknown key '%s' in 'tls_server_config'", q(k, b));
        }
    }
    w->tls = any;
    if (!any)
        return;
    /* Checks of the whole section, reported at its position. */
    if (w->cert && w->cert_file)
        err_at(c, map, "'tls_server_config' has both 'cert' and 'cert_file'");
    else if (!w->cert && !w->cert_file)
        err_at(c, map, "'tls_server_config' needs 'cert_file' (or 'cert')");
    if (w->key && w->key_file)
        err_at(c, map, "'tls_server_config' has both 'key' and 'key_file'");
    else if (!w->key && !w->key_file)
        err_at(c, map, "'tls_server_config' needs 'key_file' (or 'key')");
    bool has_ca = w->client_ca || w->client_ca_file;
    if (w->client_ca && w->client_ca_file)
        err_at(c, map, "'tls_server_config' has both 'client_ca' and 'client_ca_file'");
    if (has_ca && w->client_auth == WEBCFG_NO_CLIENT_CERT)
        err_at(c, map,
               "'client_ca_file' is set but 'client_auth_type' is NoClientCert: set "
               "'client_auth_type: RequireAndVerifyClientCert'");
    /*
     * libmicrohttpd asks clients for a certificate only when it has a trust list, so every
     * client_auth_type that asks for one needs the CA (the toolkit lets the weaker ones go
     * without; their documentation calls them insecure).
     */
    if (!has_ca && w->client_auth != WEBCFG_NO_CLIENT_CERT)
        err_at(c, map, "'client_auth_type: %s' needs 'client_ca_file'",
               client_auth_names[w->client_auth]);
    if (w->min_version && w->max_version && w->min_version > w->max_version)
        err_at(c, map, "'min_version' is above 'max_version'");
}

/*
 * http_server_config.headers: the toolkit's list of headers an operator may add, with the
 * values it allows for two of them (web/handler.go in prometheus/exporter-toolkit).
 */
static const struct {
    const char *name;
    const char *allowed[3];
} allowed_headers[] = {
    {"Strict-Transport-Security", {NULL}},
    {"X-Content-Type-Options", {"nosniff", NULL}},
    {"X-Frame-Options", {"deny", "sameorigin", NULL}},
    {"X-XSS-Protection", {NULL}},
    {"Content-Security-Policy", {NULL}},
};

static void parse_headers(struct ctx *c, const struct ydom_node *map, struct webcfg *w)
{
    char b[64], b2[64];
    w->headers = xcalloc(map->npairs ? map->npairs : 1, sizeof(*w->headers));
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *v = map->pairs[i].value;
        int found = -1;
        for (size_t j = 0; j < ARRAY_LEN(allowed_headers); j++)
            if (strcmp(k->str, allowed_headers[j].name) == 0)
                found = (int)j;
        if (found < 0) {
            err_at(c, k, "HTTP header '%s' cannot be configured", q(k, b));
            continue;
        }
        char *val = get_string(c, k, v);
        if (!val)
            continue;
        if (strpbrk(val, "\r\n")) {
            err_at(c, v, "the value of HTTP header '%s' must be one line", q(k, b));
            free(val);
            continue;
        }
        const char *const *ok = allowed_headers[found].allowed;
        bool good = !ok[0];
        for (size_t j = 0; ok[j]; j++)
            good |= strcmp(val, ok[j]) == 0;
        if (!good) {
            err_at(c, v, "invalid value '%s' for HTTP header '%s': want %s%s%s",
                   ydom_printable(val, strlen(val), b2, sizeof(b2)), q(k, b), ok[0],
                   ok[1] ? " or " : "", ok[1] ? ok[1] : "");
            free(val);
            continue;
        }
        if (val[0] == '\0') { /* blank: unset */
            free(val);
            continue;
        }
        w->headers[w->nheaders].name = xstrdup(k->str);
        w->headers[w->nheaders++].value = val;
    }
}

static void parse_http(struct ctx *c, const struct ydom_node *map, struct webcfg *w)
{
    char b[64];
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *v = map->pairs[i].value;
        if (strcmp(k->str, "headers") == 0) {
            if (is_null(v))
                continue;
            if (v->kind != YDOM_KIND_MAPPING) {
                err_at(c, v, "'headers' must be a mapping, not %s", ydom_type_name(v));
                continue;
            }
            parse_headers(c, v, w);
        } else if (strcmp(k->str, "http2") == 0) {
            bool ignored; /* HTTP/2 is not served: libmicrohttpd speaks HTTP/1.1 */
            get_bool(c, k, v, &ignored);
        } else {
            err_at(c, k, "unknown key '%s' in 'http_server_config'", q(k, b));
        }
    }
}

/* "$2a$", "$2b$" or "$2y$", a two-digit cost 04-31, "$", then 53 characters of bcrypt's base64. */
static bool is_bcrypt(const char *h)
{
    if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
        h[6] != '$' || h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9')
        return false;
    int cost = (h[4] - '0') * 10 + (h[5] - '0');
    if (cost < 4 || cost > 31)
        return false;
    for (const char *p = h + 7; *p; p++)
        if (!(*p == '.' || *p == '/' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

static void parse_users(struct ctx *c, const struct ydom_node *map, struct webcfg *w)
{
    char b[64];
    w->users = xcalloc(map->npairs ? map->npairs : 1, sizeof(*w->users));
    for (size_t i = 0; i < map->npairs; i++) {
        const struct ydom_node *k = map->pairs[i].key, *v = map->pairs[i].value;
        if (strlen(k->str) != k->len || strchr(k->str, ':')) {
            err_at(c, k, "user name '%s' must not contain ':' or a NUL character", q(k, b));
            continue;
        }
        char *hash = get_string(c, k, v);
        if (!hash)
            continue;
        if (!is_bcrypt(hash)) {
            /* Never quote the value: it may be a password written where a hash belongs. */
            err_at(c, v,
                   "the password of user '%s' is not a bcrypt hash ($2a$, $2b$ or $2y$, cost "
                   "4-31; make one with 'htpasswd -nBC 10 \"\" | tr -d :')",
                   q(k, b));
            secret_free(hash);
            continue;
        }
        w->users[w->nusers].name = xstrdup(k->str);
        w->users[w->nusers++].hash = hash;
    }
}

int webcfg_parse(const char *buf, size_t len, const char *path, struct webcfg *out, char *err,
                 size_t errlen)
{
    memset(out, 0, sizeof(*out));
    struct ctx c = {.path = path};
    struct ydom_doc doc;
    char b[64];
    if (ydom_load(buf, len, &doc) < 0) {
        const struct ydom_error *e = &doc.errors[0];
        c.nerrors = doc.nerrors;
        snprintf(c.first, sizeof(c.first), "%s:%d:%d: %s", path, e->line, e->col, e->msg);
    }
    const struct ydom_node *root = doc.root;
    if (root && !is_null(root) && root->kind != YDOM_KIND_MAPPING)
        err_at(&c, root, "the web configuration must be a mapping, not %s", ydom_type_name(root));
    for (size_t i = 0; root && root->kind == YDOM_KIND_MAPPING && i < root->npairs; i++) {
        const struct ydom_node *k = root->pairs[i].key, *v = root->pairs[i].value;
        bool known = strcmp(k->str, "tls_server_config") == 0 ||
                     strcmp(k->str, "http_server_config") == 0 ||
                     strcmp(k->str, "basic_auth_users") == 0;
        if (strcmp(k->str, "rate_limit") == 0) {
            err_at(&c, k, "'rate_limit' is not supported by gpureclaim; remove it");
            continue;
        }
        if (!known) {
            err_at(&c, k, "unknown key '%s'", q(k, b));
            continue;
        }
        if (is_null(v))
            continue;
        if (v->kind != YDOM_KIND_MAPPING) {
            err_at(&c, v, "'%s' must be a mapping, not %s", q(k, b), ydom_type_name(v));
            continue;
        }
        if (strcmp(k->str, "tls_server_config") == 0)
            parse_tls(&c, v, out);
        else if (strcmp(k->str, "http_server_config") == 0)
            parse_http(&c, v, out);
        else
            parse_users(&c, v, out);
    }
    ydom_doc_free(&doc);
    out->cert_file = resolve(path, out->cert_file);
    out->key_file = resolve(path, out->key_file);
    out->client_ca_file = resolve(path, out->client_ca_file);
    if (c.nerrors == 0)
        return 0;
    if (c.nerrors > 1)
        snprintf(err, errlen, "%s (and %zu more problems)", c.first, c.nerrors - 1);
    else
        snprintf(err, errlen, "%s", c.first);
    return -1;
}

/* Whole file, at most WEBCFG_FILE_MAX bytes, NUL-terminated. */
static char *read_all(const char *path, const char *what, size_t *lenp, char *err, size_t errlen)
{
    char why[128];
    char *buf = file_read(path, WEBCFG_FILE_MAX, lenp, why, sizeof(why));
    if (!buf)
        snprintf(err, errlen, "cannot read %s '%s': %s", what, path, why);
    return buf;
}

/* Load the key pair and CA into a GnuTLS credential to report what libmicrohttpd would not. */
static int check_tls(const struct webcfg *w, char *err, size_t errlen)
{
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) < 0) {
        snprintf(err, errlen, "cannot allocate TLS credentials");
        return -1;
    }
    gnutls_datum_t cert = {(unsigned char *)w->cert, (unsigned)strlen(w->cert)};
    gnutls_datum_t key = {(unsigned char *)w->key, (unsigned)strlen(w->key)};
    int rc = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        snprintf(err, errlen, "cannot use certificate '%s' with key '%s': %s",
                 w->cert_file ? w->cert_file : "(inline)", w->key_file ? w->key_file : "(inline)",
                 gnutls_strerror(rc));
        gnutls_certificate_free_credentials(cred);
        return -1;
    }
    if (w->client_ca) {
        gnutls_datum_t ca = {(unsigned char *)w->client_ca, (unsigned)strlen(w->client_ca)};
        rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
        if (rc <= 0) {
            snprintf(err, errlen, "cannot use client CA '%s': %s",
                     w->client_ca_file ? w->client_ca_file : "(inline)",
                     rc < 0 ? gnutls_strerror(rc) : "no certificate in it");
            gnutls_certificate_free_credentials(cred);
            return -1;
        }
    }
    gnutls_certificate_free_credentials(cred);
    return 0;
}

int webcfg_load(const char *path, struct webcfg *out, char *err, size_t errlen)
{
    size_t len;
    char *buf = read_all(path, "web config file", &len, err, errlen);
    if (!buf) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    int rc = webcfg_parse(buf, len, path, out, err, errlen);
    free(buf);
    if (rc < 0 || !out->tls)
        return rc;
    struct {
        const char *file, *what;
        char **dst;
    } files[] = {
        {out->cert_file, "cert_file", &out->cert},
        {out->key_file, "key_file", &out->key},
        {out->client_ca_file, "client_ca_file", &out->client_ca},
    };
    for (size_t i = 0; i < ARRAY_LEN(files); i++) {
        if (!files[i].file)
            continue;
        *files[i].dst = read_all(files[i].file, files[i].what, NULL, err, errlen);
        if (!*files[i].dst)
            return -1;
    }
    return check_tls(out, err, errlen);
}

void webcfg_free(struct webcfg *c)
{
    if (!c)
        return;
    free(c->cert_file);
    free(c->key_file);
    free(c->client_ca_file);
    free(c->cert);
    secret_free(c->key);
    free(c->client_ca);
    for (size_t i = 0; i < c->nusers; i++) {
        free(c->users[i].name);
        secret_free(c->users[i].hash);
    }
    free(c->users);
    for (size_t i = 0; i < c->nheaders; i++) {
        free(c->headers[i].name);
        free(c->headers[i].value);
    }
    free(c->headers);
    memset(c, 0, sizeof(*c));
}

static bool str_eq_null(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool webcfg_same_tls(const struct webcfg *a, const struct webcfg *b)
{
    return a->tls == b->tls && str_eq_null(a->cert, b->cert) && str_eq_null(a->key, b->key) &&
           str_eq_null(a->client_ca, b->client_ca) && a->client_auth == b->client_auth &&
           a->min_version == b->min_version && a->max_version == b->max_version &&
           a->prefer_server_cipher_suites == b->prefer_server_cipher_suites;
}

void webcfg_priorities(const struct webcfg *c, char *buf, size_t len)
{
    static const char *const vers[] = {"", "TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3"};
    int lo = c->min_version ? c->min_version : WEBCFG_TLS12;
    int hi = c->max_version ? c->max_version : WEBCFG_TLS13;
    struct sbuf b = {0};
    sbuf_puts(&b, "NORMAL:-VERS-ALL");
    for (int v = lo; v <= hi; v++)
        sbuf_printf(&b, ":+VERS-%s", vers[v]);
    if (c->prefer_server_cipher_suites)
        sbuf_puts(&b, ":%SERVER_PRECEDENCE");
    str_copy(buf, len, b.buf);
    sbuf_free(&b);
}

/* Equal in time that depends on the lengths only, not on where the strings differ. */
static bool ct_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t n = alen > blen ? alen : blen;
    unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < alen ? (unsigned char)a[i] : 0;
        unsigned char y = i < blen ? (unsigned char)b[i] : 0;
        diff |= x ^ y;
    }
    return diff == 0;
}

/*
 * The cache's secret: an HMAC key drawn once per process. With a plain hash, anyone who can
 * read the process's memory (a core dump, a debugger) could test password guesses against
 * the cached entries at SHA-256 speed instead of bcrypt's; keyed, the entries are useless
 * outside the process.
 */
static unsigned char cache_secret[32];
static pthread_once_t cache_secret_once = PTHREAD_ONCE_INIT;

static void cache_secret_init(void)
{
    if (gnutls_rnd(GNUTLS_RND_KEY, cache_secret, sizeof(cache_secret)) < 0)
        abort(); /* no randomness: refuse to run rather than cache under a known key */
}

static void cache_key(const char *user, const char *pass, const char *hash, unsigned char out[32])
{
    pthread_once(&cache_secret_once, cache_secret_init);
    struct sbuf b = {0};
    /* Lengths first, so that no two (user, password, hash) triples give the same text. */
    sbuf_printf(&b, "%zu:%zu:%s:%s:%s", strlen(user), strlen(pass), user, pass, hash);
    gnutls_hmac_fast(GNUTLS_MAC_SHA256, cache_secret, sizeof(cache_secret), b.buf, b.len, out);
    explicit_bzero(b.buf, b.len);
    sbuf_free(&b);
}

bool webcfg_auth(const struct webcfg *c, struct webcfg_auth_cache *cache, const char *user,
                 const char *pass)
{
    if (c->nusers == 0 || !user || !pass)
        return false;
    size_t ulen = strlen(user);
    /* Look at every user so that the time does not depend on which one matched. */
    size_t idx = 0;
    bool found = false;
    for (size_t i = 0; i < c->nusers; i++) {
        bool eq = ct_equal(user, ulen, c->users[i].name, strlen(c->users[i].name));
        idx = eq ? i : idx;
        found |= eq;
    }
    /* An unknown user is checked against the first hash: same cost, always refused. */
    const char *hash = c->users[idx].hash;
    if (strlen(pass) > BCRYPT_MAX_PASSWORD)
        return false;
    unsigned char key[32];
    cache_key(user, pass, hash, key);
    if (found && cache) {
        pthread_mutex_lock(&cache->mu);
        bool hit = false;
        for (size_t i = 0; i < WEBCFG_AUTH_CACHE_SIZE && !hit; i++)
            hit = cache->used[i] && memcmp(cache->keys[i], key, sizeof(key)) == 0;
        pthread_mutex_unlock(&cache->mu);
        if (hit)
            return true;
    }
    struct crypt_data *cd = xcalloc(1, sizeof(*cd));
    const char *got = crypt_rn(pass, hash, cd, (int)sizeof(*cd));
    bool ok = got && ct_equal(got, strlen(got), hash, strlen(hash)) && found;
    explicit_bzero(cd, sizeof(*cd));
    free(cd);
    if (ok && cache) {
        pthread_mutex_lock(&cache->mu);
        memcpy(cache->keys[cache->next], key, sizeof(key));
        cache->used[cache->next] = true;
        cache->next = (cache->next + 1) % WEBCFG_AUTH_CACHE_SIZE;
        pthread_mutex_unlock(&cache->mu);
    }
    return ok;
}
