/*
 * Tests for the web configuration file (common/webcfg.c): every key of the exporter-toolkit
 * format, relative paths, errors at file:line:col for unknown keys, wrong types and values,
 * the toolkit's cross-field rules, unsupported keys refused by name, a password in place of
 * a hash never echoed, the GnuTLS priority string, and bcrypt checks ($2a$/$2b$/$2y$, wrong
 * password, unknown user, the success cache, over-long passwords).
 */
#include "webcfg.c"

#include "test.h"
#include "tmptree.h"

static int parse(const char *text, struct webcfg *w, char *err, size_t errlen)
{
    err[0] = '\0';
    return webcfg_parse(text, strlen(text), "/etc/gpureclaim/web.yml", w, err, errlen);
}

/* Parse `text`, expect failure with `want` in the message. */
static void expect_error(const char *text, const char *want)
{
    struct webcfg w;
    char err[600];
    TEST_CHECK_INT(parse(text, &w, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, want);
    webcfg_free(&w);
}

#define HASH_A "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"

TEST(full_config)
{
    struct webcfg w;
    char err[600];
    int rc = parse("tls_server_config:\n"
                   "  cert_file: tls/server.crt\n"
                   "  key_file: /abs/server.key\n"
                   "  client_auth_type: RequireAndVerifyClientCert\n"
                   "  client_ca_file: ca.crt\n"
                   "  min_version: TLS13\n"
                   "  max_version: TLS13\n"
                   "  prefer_server_cipher_suites: true\n"
                   "http_server_config:\n"
                   "  http2: false\n"
                   "  headers:\n"
                   "    X-Frame-Options: sameorigin\n"
                   "    Strict-Transport-Security: max-age=31536000\n"
                   "    X-XSS-Protection: ''\n"
                   "basic_auth_users:\n"
                   "  alice: " HASH_A "\n"
                   "  bob: '" HASH_A "'\n",
                   &w, err, sizeof(err));
    TEST_CHECK_INT(rc, 0);
    TEST_CHECK_STR(err, "");
    TEST_CHECK(w.tls);
    TEST_CHECK_STR(w.cert_file, "/etc/gpureclaim/tls/server.crt");
    TEST_CHECK_STR(w.key_file, "/abs/server.key");
    TEST_CHECK_STR(w.client_ca_file, "/etc/gpureclaim/ca.crt");
    TEST_CHECK_INT(w.client_auth, WEBCFG_REQUIRE_AND_VERIFY_CLIENT_CERT);
    TEST_CHECK_INT(w.min_version, WEBCFG_TLS13);
    TEST_CHECK_INT(w.max_version, WEBCFG_TLS13);
    TEST_CHECK(w.prefer_server_cipher_suites);
    TEST_CHECK_INT(w.nheaders, 2); /* a blank value unsets */
    TEST_CHECK_STR(w.headers[0].name, "X-Frame-Options");
    TEST_CHECK_STR(w.headers[0].value, "sameorigin");
    TEST_CHECK_INT(w.nusers, 2);
    TEST_CHECK_STR(w.users[1].name, "bob");
    TEST_CHECK_STR(w.users[1].hash, HASH_A);
    char prio[160];
    webcfg_priorities(&w, prio, sizeof(prio));
    TEST_CHECK_STR(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.3:%SERVER_PRECEDENCE");
    webcfg_free(&w);
}

TEST(empty_and_minimal)
{
    struct webcfg w;
    char err[600];
    TEST_CHECK_INT(parse("", &w, err, sizeof(err)), 0);
    TEST_CHECK(!w.tls && w.nusers == 0);
    webcfg_free(&w);
    TEST_CHECK_INT(
        parse("# nothing\ntls_server_config:\nbasic_auth_users: {}\n", &w, err, sizeof(err)), 0);
    TEST_CHECK(!w.tls);
    webcfg_free(&w);
    /* An empty tls_server_config is plain HTTP, as in the toolkit. */
    TEST_CHECK_INT(parse("tls_server_config: {}\n", &w, err, sizeof(err)), 0);
    TEST_CHECK(!w.tls);
    webcfg_free(&w);
    TEST_CHECK_INT(
        parse("tls_server_config:\n  cert: |\n    PEM\n  key: K\n", &w, err, sizeof(err)), 0);
    TEST_CHECK(w.tls && w.cert && !w.cert_file && strcmp(w.key, "K") == 0);
    char prio[160];
    webcfg_priorities(&w, prio, sizeof(prio));
    TEST_CHECK_STR(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3"); /* toolkit defaults */
    webcfg_free(&w);
}

TEST(unknown_keys_with_position)
{
    expect_error("basic_auth_users: {}\nbogus: 1\n",
                 "/etc/gpureclaim/web.yml:2:1: unknown key 'bogus'");
    expect_error("tls_server_config:\n  cert_file: a\n  key_file: b\n  clientauth: x\n",
                 "web.yml:4:3: unknown key 'clientauth' in 'tls_server_config'");
    expect_error("http_server_config:\n  http3: true\n",
                 "web.yml:2:3: unknown key 'http3' in 'http_server_config'");
    expect_error("tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
                 "web.yml:2:3: 'cipher_suites' in 'tls_server_config' is not supported");
    expect_error("rate_limit:\n  burst: 2\n", "web.yml:1:1: 'rate_limit' is not supported");
    /* Several problems: the first is shown with a count of the rest. */
    expect_error("a: 1\nb: 2\nc: 3\n", "web.yml:1:1: unknown key 'a' (and 2 more problems)");
    /* Duplicate keys and syntax errors come from the YAML layer, with positions too. */
    expect_error("basic_auth_users: {}\nbasic_auth_users: {}\n", "web.yml:2:1:");
    expect_error("tls_server_config: [\n", "web.yml:");
}

TEST(wrong_types_and_values)
{
    expect_error("- a\n", "web.yml:1:1: the web configuration must be a mapping, not sequence");
    expect_error("basic_auth_users: [alice]\n",
                 "web.yml:1:19: 'basic_auth_users' must be a mapping");
    expect_error("tls_server_config:\n  cert_file: [a]\n",
                 "web.yml:2:14: 'cert_file' must be a string");
    expect_error("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n",
                 "web.yml:4:16: unknown TLS version 'TLS14'");
    expect_error("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Any\n",
                 "unknown client_auth_type 'Any'");
    expect_error("tls_server_config:\n  cert_file: a\n  key_file: b\n"
                 "  prefer_server_cipher_suites: yes\n",
                 "'prefer_server_cipher_suites' must be true or false");
    expect_error("http_server_config:\n  headers:\n    X-Powered-By: me\n",
                 "web.yml:3:5: HTTP header 'X-Powered-By' cannot be configured");
    expect_error("http_server_config:\n  headers:\n    X-Content-Type-Options: sniff\n",
                 "invalid value 'sniff' for HTTP header 'X-Content-Type-Options': want nosniff");
    expect_error("http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
                 "want deny or sameorigin");
    expect_error("basic_auth_users:\n  'a:b': " HASH_A "\n", "must not contain ':'");
}

TEST(tls_cross_field_rules)
{
    expect_error("tls_server_config:\n  key_file: k\n",
                 "web.yml:2:3: 'tls_server_config' needs 'cert_file'");
    expect_error("tls_server_config:\n  cert_file: c\n", "needs 'key_file'");
    expect_error("tls_server_config:\n  cert_file: c\n  cert: x\n  key_file: k\n",
                 "has both 'cert' and 'cert_file'");
    expect_error("tls_server_config:\n  cert_file: c\n  key_file: k\n  client_ca_file: ca\n",
                 "'client_ca_file' is set but 'client_auth_type' is NoClientCert");
    expect_error("tls_server_config:\n  cert_file: c\n  key_file: k\n"
                 "  client_auth_type: RequireAndVerifyClientCert\n",
                 "'client_auth_type: RequireAndVerifyClientCert' needs 'client_ca_file'");
    expect_error("tls_server_config:\n  cert_file: c\n  key_file: k\n  min_version: TLS13\n"
                 "  max_version: TLS12\n",
                 "'min_version' is above 'max_version'");
    /* The toolkit's older spelling is accepted. */
    struct webcfg w;
    char err[600];
    TEST_CHECK_INT(parse("tls_server_config:\n  cert_file: c\n  key_file: k\n"
                         "  client_auth_type: RequireClientCert\n  client_ca_file: ca\n",
                         &w, err, sizeof(err)),
                   0);
    TEST_CHECK_INT(w.client_auth, WEBCFG_REQUIRE_ANY_CLIENT_CERT);
    webcfg_free(&w);
}

TEST(password_instead_of_hash_not_echoed)
{
    struct webcfg w;
    char err[600];
    TEST_CHECK_INT(parse("basic_auth_users:\n  alice: hunter2\n", &w, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "web.yml:2:10: the password of user 'alice' is not a bcrypt hash");
    TEST_CHECK(!strstr(err, "hunter2"));
    webcfg_free(&w);
    expect_error("basic_auth_users:\n  alice: $1$abc$def\n", "not a bcrypt hash");
    /* Cost 03 is outside bcrypt's range. */
    expect_error("basic_auth_users:\n  alice: "
                 "$2y$03$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze\n",
                 "not a bcrypt hash");
}

/* A bcrypt hash of `pass` at cost 4 (fast), made by libcrypt now. */
static void make_hash(const char *pass, char out[128])
{
    char salt[64];
    TEST_CHECK(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)) != NULL);
    struct crypt_data *cd = xcalloc(1, sizeof(*cd));
    const char *h = crypt_rn(pass, salt, cd, (int)sizeof(*cd));
    TEST_CHECK(h != NULL);
    str_copy(out, 128, h ? h : "");
    free(cd);
}

TEST(bcrypt_auth)
{
    char hb[128], hy[128], ha[128];
    make_hash("s3cret", hb);
    TEST_CHECK(str_has_prefix(hb, "$2b$04$"));
    /* $2y$ (htpasswd, PHP) and $2a$ hashes of an ASCII password are the same computation. */
    snprintf(hy, sizeof(hy), "$2y$%s", hb + 4);
    snprintf(ha, sizeof(ha), "$2a$%s", hb + 4);
    struct webcfg_user users[] = {{"alice", hb}, {"bob", hy}, {"carol", ha}};
    struct webcfg w = {.users = users, .nusers = 3};
    struct webcfg_auth_cache cache = WEBCFG_AUTH_CACHE_INIT;
    TEST_CHECK(webcfg_auth(&w, &cache, "alice", "s3cret"));
    TEST_CHECK(webcfg_auth(&w, &cache, "bob", "s3cret"));
    TEST_CHECK(webcfg_auth(&w, &cache, "carol", "s3cret"));
    TEST_CHECK(!webcfg_auth(&w, &cache, "alice", "s3cret "));
    TEST_CHECK(!webcfg_auth(&w, &cache, "alice", ""));
    TEST_CHECK(!webcfg_auth(&w, &cache, "alic", "s3cret"));
    TEST_CHECK(!webcfg_auth(&w, &cache, "alice2", "s3cret"));
    TEST_CHECK(!webcfg_auth(&w, &cache, "", "s3cret"));
    TEST_CHECK(!webcfg_auth(&w, &cache, NULL, NULL));
    /* Three successes cached; failures never are. */
    int used = 0;
    for (int i = 0; i < WEBCFG_AUTH_CACHE_SIZE; i++)
        used += cache.used[i];
    TEST_CHECK_INT(used, 3);
    /* A cached success is answered from the cache: corrupt the hash, the cache still knows
     * the old (user, password, hash) triple only, so the changed hash is checked afresh. */
    TEST_CHECK(webcfg_auth(&w, &cache, "alice", "s3cret"));
    char changed[128];
    make_hash("other", changed);
    users[0].hash = changed;
    TEST_CHECK(!webcfg_auth(&w, &cache, "alice", "s3cret"));
    TEST_CHECK(webcfg_auth(&w, &cache, "alice", "other"));
    /* bcrypt reads 72 bytes; a longer password is refused rather than cut. */
    char long_pass[80];
    memset(long_pass, 'x', sizeof(long_pass) - 1);
    long_pass[sizeof(long_pass) - 1] = '\0';
    char hl[128];
    make_hash(long_pass, hl);
    users[0].hash = hl;
    TEST_CHECK(!webcfg_auth(&w, &cache, "alice", long_pass));
    /* No users: nothing is authorised. */
    struct webcfg none = {0};
    TEST_CHECK(!webcfg_auth(&none, NULL, "alice", "s3cret"));
}

/* The cache keys are keyed (HMAC): the same triple gives the same key within the process,
 * and the key is not the plain SHA-256 of the text, which a memory dump would let anyone test
 * password guesses against at hash speed. */
TEST(cache_keys_are_keyed)
{
    unsigned char k1[32], k2[32], plain[32];
    cache_key("alice", "s3cret", "$2b$04$abc", k1);
    cache_key("alice", "s3cret", "$2b$04$abc", k2);
    TEST_CHECK(memcmp(k1, k2, 32) == 0);
    const char *text = "5:6:alice:s3cret:$2b$04$abc";
    gnutls_hash_fast(GNUTLS_DIG_SHA256, text, strlen(text), plain);
    TEST_CHECK(memcmp(k1, plain, 32) != 0);
    cache_key("alice", "s3creu", "$2b$04$abc", k2);
    TEST_CHECK(memcmp(k1, k2, 32) != 0);
}

TEST(ct_equal_lengths)
{
    TEST_CHECK(ct_equal("abc", 3, "abc", 3));
    TEST_CHECK(!ct_equal("abc", 3, "abd", 3));
    TEST_CHECK(!ct_equal("abc", 3, "abcd", 4));
    TEST_CHECK(!ct_equal("", 0, "a", 1));
    TEST_CHECK(ct_equal("", 0, "", 0));
}

TEST(load_files)
{
    char root[] = "/tmp/test_webcfg.XXXXXX";
    TEST_CHECK(mkdtemp(root) != NULL);
    char path[PATH_MAX], err[600];
    struct webcfg w;
    snprintf(path, sizeof(path), "%s/web.yml", root);
    TEST_CHECK_INT(webcfg_load(path, &w, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "cannot read web config file");
    webcfg_free(&w);

    TEST_CHECK_INT(
        tmptree_put(root, "web.yml", "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n"),
        0);
    TEST_CHECK_INT(webcfg_load(path, &w, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "cannot read cert_file '");
    TEST_CHECK_CONTAINS(err, "/c.pem'");
    webcfg_free(&w);

    TEST_CHECK_INT(tmptree_put(root, "c.pem", "not a certificate\n"), 0);
    TEST_CHECK_INT(tmptree_put(root, "k.pem", "not a key\n"), 0);
    TEST_CHECK_INT(webcfg_load(path, &w, err, sizeof(err)), -1);
    TEST_CHECK_CONTAINS(err, "cannot use certificate '");
    webcfg_free(&w);

    /* Without TLS no other file is read. */
    TEST_CHECK_INT(tmptree_put(root, "web.yml", "basic_auth_users:\n  a: " HASH_A "\n"), 0);
    TEST_CHECK_INT(webcfg_load(path, &w, err, sizeof(err)), 0);
    TEST_CHECK_INT(w.nusers, 1);
    webcfg_free(&w);
    tmptree_remove(root);
}

int main(void)
{
    RUN(full_config);
    RUN(empty_and_minimal);
    RUN(unknown_keys_with_position);
    RUN(wrong_types_and_values);
    RUN(tls_cross_field_rules);
    RUN(password_instead_of_hash_not_echoed);
    RUN(bcrypt_auth);
    RUN(cache_keys_are_keyed);
    RUN(ct_equal_lengths);
    RUN(load_files);
    return test_done();
}
