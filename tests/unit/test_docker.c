/*
 * Tests of the Docker/Podman client: the pure parsers and version negotiation on canned
 * answers, then every call against a real, private Podman API service (tests/podman.sh):
 * ping, list by label, inspect labels and devices, stop (204, exited with 137), stop again
 * (304 -> DOCKER_ALREADY), unknown containers (404 -> DOCKER_GONE) and a dead socket.
 * Only if podman cannot run at all is its part reported as one FAIL line with the reason.
 */
#include "docker.c"

#include <stdarg.h>
#include <unistd.h>

#include "test.h"

static const char inspect_ok[] =
    "{\"Id\":\"15deb06148fb999c4454ff686a18fe26b4633b695d1e5baafa4f5e154582d64d\","
    "\"Name\":\"/t1\",\"Image\":\"sha256:a729\",\"Created\":\"2026-11-24T06:15:50.123456789Z\","
    "\"State\":{\"Status\":\"exited\",\"Running\":false,\"Pid\":0,\"ExitCode\":137},"
    "\"Config\":{\"Image\":\"localhost/bb:1\",\"Labels\":{\"a\":\"b\",\"gpureclaim.io/"
    "workload\":\"w1\"}},"
    "\"HostConfig\":{\"Devices\":[{\"PathOnHost\":\"/dev/kfd\",\"PathInContainer\":\"/dev/kfd\"},"
    "{\"PathOnHost\":\"/dev/dri/renderD128\"}]}}\n";

TEST(parse_inspect_fields)
{
    struct docker_container c;
    char err[256] = "";
    TEST_CHECK_INT(docker_parse_inspect(inspect_ok, strlen(inspect_ok), &c, err, sizeof(err)), 0);
    TEST_CHECK_STR(c.id, "15deb06148fb999c4454ff686a18fe26b4633b695d1e5baafa4f5e154582d64d");
    TEST_CHECK_STR(c.name, "t1");
    TEST_CHECK_STR(c.created, "2026-11-24T06:15:50.123456789Z");
    TEST_CHECK_STR(c.status, "exited");
    TEST_CHECK(!c.running);
    TEST_CHECK_INT(c.exit_code, 137);
    TEST_CHECK_STR(c.image, "localhost/bb:1");
    TEST_CHECK_INT(c.nlabels, 2);
    TEST_CHECK_STR(docker_label(&c, "gpureclaim.io/workload"), "w1");
    TEST_CHECK(docker_label(&c, "missing") == NULL);
    TEST_CHECK_INT(c.ndevices, 2);
    if (c.ndevices == 2) {
        TEST_CHECK_STR(c.devices[0], "/dev/kfd");
        TEST_CHECK_STR(c.devices[1], "/dev/dri/renderD128");
    }
    docker_container_free(&c);
    TEST_CHECK_INT(c.nlabels, 0);
}

TEST(parse_inspect_rejects)
{
    static const struct {
        const char *json;
        const char *msg;
    } bad[] = {
        {"", "empty"},
        {"{\"Id\":\"ab\"", "truncated"},
        {"[1]", "not a JSON object"},
        {"{\"Id\":\"ab\",\"State\":{\"Running\":true}} x", "trailing data"},
        {"{\"State\":{\"Running\":true}}", "without 'Id'"},
        {"{\"Id\":\"../x\",\"State\":{\"Running\":true}}", "not hexadecimal"},
        {"{\"Id\":\"ab\"}", "no 'State'"},
        {"{\"Id\":\"ab\",\"Created\":5,\"State\":{\"Running\":true}}", "'Created' is not a string"},
        {"{\"Id\":\"ab\",\"State\":{\"Running\":1}}", "boolean 'State.Running'"},
        {"{\"Id\":\"ab\",\"State\":{\"Running\":true,\"Pid\":\"1\"}}", "'Pid' is not an integer"},
        {"{\"Id\":\"ab\",\"State\":{\"Running\":true},\"Config\":{\"Labels\":{\"a\":1}}}",
         "label 'a' is not a string"},
        {"{\"Id\":\"ab\",\"State\":{\"Running\":true},\"HostConfig\":{\"Devices\":{}}}",
         "not an array"},
        {"{\"Id\":\"ab\",\"State\":{\"Running\":true},\"HostConfig\":{\"Devices\":[{}]}}",
         "no string 'PathOnHost'"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        struct docker_container c;
        char err[256] = "";
        TEST_CHECK_INT(docker_parse_inspect(bad[i].json, strlen(bad[i].json), &c, err, sizeof(err)),
                       -1);
        TEST_CHECK_CONTAINS(err, bad[i].msg);
        TEST_CHECK_INT(c.nlabels + c.ndevices, 0);
    }
}

TEST(parse_list)
{
    static const char json[] =
        "[{\"Id\":\"aa\",\"Names\":[\"/one\"],\"Image\":\"bb\",\"State\":\"running\","
        "\"Labels\":{\"k\":\"v\"}},"
        "{\"Id\":\"bb\",\"Names\":[],\"State\":\"exited\",\"Labels\":null}]";
    struct docker_container *v;
    size_t n;
    char err[256] = "";
    TEST_CHECK_INT(docker_parse_list(json, strlen(json), &v, &n, err, sizeof(err)), 0);
    TEST_CHECK_INT(n, 2);
    if (n == 2) {
        TEST_CHECK_STR(v[0].name, "one");
        TEST_CHECK(v[0].running);
        TEST_CHECK_STR(docker_label(&v[0], "k"), "v");
        TEST_CHECK(!v[1].running);
        TEST_CHECK_STR(v[1].name, "");
        TEST_CHECK_INT(v[1].nlabels, 0);
    }
    docker_containers_free(v, n);

    static const char *const bad[] = {"{}", "[1]", "[{\"Id\":\"aa\",\"Names\":\"x\"}]",
                                      "[{\"Id\":\"aa\",\"Labels\":[]}]"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        TEST_CHECK_INT(docker_parse_list(bad[i], strlen(bad[i]), &v, &n, err, sizeof(err)), -1);
        TEST_CHECK(v == NULL && n == 0);
    }
}

TEST(version_negotiation)
{
    static const struct {
        const char *api;
        int rc;
        const char *want;
    } tab[] = {
        {"1.41", 0, "1.41"},                      /* Podman 4.3, Docker 20.10 */
        {"1.40", 0, "1.40"}, {"1.52", 0, "1.44"}, /* Docker 29: its max is above ours, its min
                                                     is 1.44 */
        {"2.0", 0, "1.44"},  {NULL, 0, ""},       {"abc", -1, ""},
        {"1.", -1, ""},      {"1.41x", -1, ""},
    };
    for (size_t i = 0; i < ARRAY_LEN(tab); i++) {
        char out[16] = "";
        TEST_CHECK_INT(docker_negotiate(tab[i].api, out, sizeof(out)), tab[i].rc);
        if (tab[i].rc == 0)
            TEST_CHECK_STR(out, tab[i].want);
    }
    char out[16] = "";
    TEST_CHECK_INT(docker_min_from_message("client version 1.41 is too old. Minimum supported API "
                                           "version is 1.44, please upgrade your client",
                                           out, sizeof(out)),
                   0);
    TEST_CHECK_STR(out, "1.44");
    TEST_CHECK_INT(
        docker_min_from_message("Minimum supported API version is 1.45.", out, sizeof(out)), 0);
    TEST_CHECK_STR(out, "1.45");
    TEST_CHECK_INT(docker_min_from_message("no such container", out, sizeof(out)), -1);
}

TEST(dead_socket)
{
    struct docker_cfg cfg = {.socket = "/nonexistent/gpureclaim-test.sock", .timeout = 2};
    struct docker *d = docker_new(&cfg);
    char err[256] = "";
    struct docker_container c;
    TEST_CHECK_INT(docker_ping(d, err, sizeof(err)), -1);
    TEST_CHECK(err[0] != '\0');
    TEST_CHECK_INT(docker_inspect(d, "x", &c, err, sizeof(err)), DOCKER_ERROR);
    TEST_CHECK_INT(docker_stop(d, "x", 1, err, sizeof(err)), DOCKER_ERROR);
    docker_free(d);
}

/* ---- against a real podman -------------------------------------------------------------- */

static char pm_dir[256];
static char pm_sock[300];
static bool pm_up;
static char pm_err[512];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = NULL;
    int n = vasprintf(&cmd, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    int rc = system(cmd);
    free(cmd);
    return rc;
}

static void podman_up(void)
{
    snprintf(pm_dir, sizeof(pm_dir), "%s/gpureclaim-test-docker.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(pm_dir)) {
        snprintf(pm_err, sizeof(pm_err), "cannot create a temporary directory");
        return;
    }
    if (sh("sh tests/podman.sh start '%s' >'%s/start.out' 2>&1", pm_dir, pm_dir) != 0) {
        char path[300];
        snprintf(path, sizeof(path), "%s/start.out", pm_dir);
        char *out = test_read_file(path, NULL);
        snprintf(pm_err, sizeof(pm_err), "podman cannot run: %s",
                 out ? str_rtrim(out) : "no output");
        free(out);
        return;
    }
    snprintf(pm_sock, sizeof(pm_sock), "%s/podman.sock", pm_dir);
    pm_up = true;
}

static void podman_down(void)
{
    if (pm_dir[0]) {
        sh("sh tests/podman.sh stop '%s' >/dev/null 2>&1", pm_dir);
        sh("rm -rf '%s'", pm_dir);
    }
}

/* POST a JSON body to the compat API; returns the HTTP status, the body in *out if wanted. */
static long pm_post(const char *path, const char *body, char **out)
{
    char *url = xasprintf("http://localhost/v1.41%s", path);
    static const char *const hdr[] = {"Content-Type: application/json"};
    struct httpc_req req = {.method = "POST",
                            .url = url,
                            .unix_socket = pm_sock,
                            .headers = hdr,
                            .nheaders = body ? 1 : 0,
                            .body = body ? body : "",
                            .body_len = body ? strlen(body) : 0,
                            .timeout = 30};
    struct httpc_resp resp = {0};
    char err[256];
    long status = httpc_do(&req, &resp, err, sizeof(err)) < 0 ? -1 : resp.status;
    if (out)
        *out = xstrdup(resp.body.buf ? resp.body.buf : "");
    httpc_resp_free(&resp);
    free(url);
    return status;
}

static long pm_run(const char *name, const char *labels_json, const char *devices_json)
{
    char *body = xasprintf("{\"Image\":\"localhost/bb:1\",\"Cmd\":[\"sleep\",\"100000\"],"
                           "\"Labels\":%s,\"HostConfig\":{\"NetworkMode\":\"none\"%s%s}}",
                           labels_json, devices_json ? ",\"Devices\":" : "",
                           devices_json ? devices_json : "");
    char *path = xasprintf("/containers/create?name=%s", name);
    long st = pm_post(path, body, NULL);
    free(path);
    free(body);
    if (st != 201)
        return st;
    path = xasprintf("/containers/%s/start", name);
    st = pm_post(path, NULL, NULL);
    free(path);
    return st;
}

static bool has_name(const struct docker_container *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return true;
    return false;
}

TEST(podman_api)
{
    if (!pm_up) {
        fprintf(stderr, "%s\n", pm_err);
        TEST_CHECK(pm_up);
        return;
    }
    struct docker_cfg cfg = {.socket = pm_sock, .timeout = 10};
    struct docker *d = docker_new(&cfg);
    char err[512] = "";

    TEST_CHECK_INT(docker_ping(d, err, sizeof(err)), 0);
    TEST_CHECK_STR(docker_api_version(d), "1.41");
    TEST_CHECK(docker_is_podman(d));

    TEST_CHECK_INT(pm_run("dt-a", "{\"gpureclaim.test/workload\":\"a\"}", NULL), 204);
    TEST_CHECK_INT(pm_run("dt-b", "{\"gpureclaim.test/workload\":\"b\",\"x\":\"y z\"}",
                          "[{\"PathOnHost\":\"/dev/null\",\"PathInContainer\":\"/dev/gpu0\","
                          "\"CgroupPermissions\":\"rwm\"}]"),
                   204);
    TEST_CHECK_INT(pm_run("dt-c", "{}", NULL), 204);

    struct docker_container *v = NULL;
    size_t n = 0;
    TEST_CHECK_INT(docker_list(d, "gpureclaim.test/workload=a", false, &v, &n, err, sizeof(err)),
                   DOCKER_OK);
    TEST_CHECK_INT(n, 1);
    TEST_CHECK(has_name(v, n, "dt-a"));
    if (n == 1) {
        TEST_CHECK(v[0].running);
        TEST_CHECK_STR(docker_label(&v[0], "gpureclaim.test/workload"), "a");
        TEST_CHECK_INT(strlen(v[0].id), 64);
    }
    docker_containers_free(v, n);

    TEST_CHECK_INT(docker_list(d, "gpureclaim.test/workload", false, &v, &n, err, sizeof(err)),
                   DOCKER_OK);
    TEST_CHECK_INT(n, 2);
    TEST_CHECK(has_name(v, n, "dt-a") && has_name(v, n, "dt-b") && !has_name(v, n, "dt-c"));
    docker_containers_free(v, n);

    TEST_CHECK_INT(docker_list(d, "x=y z", false, &v, &n, err, sizeof(err)), DOCKER_OK);
    TEST_CHECK_INT(n, 1);
    TEST_CHECK(has_name(v, n, "dt-b"));
    docker_containers_free(v, n);

    struct docker_container c;
    TEST_CHECK_INT(docker_inspect(d, "dt-b", &c, err, sizeof(err)), DOCKER_OK);
    TEST_CHECK_STR(c.name, "dt-b");
    TEST_CHECK(c.running);
    TEST_CHECK_STR(c.status, "running");
    TEST_CHECK(c.pid > 0);
    TEST_CHECK_STR(c.image, "localhost/bb:1");
    /* Podman's Created, RFC 3339 with nanoseconds: the container's age for too_young */
    TEST_CHECK(strlen(c.created) >= 20 && c.created[4] == '-' && c.created[10] == 'T');
    TEST_CHECK_STR(docker_label(&c, "x"), "y z");
    TEST_CHECK_INT(c.ndevices, 1);
    if (c.ndevices == 1)
        TEST_CHECK_STR(c.devices[0], "/dev/null");
    char id_b[65];
    str_copy(id_b, sizeof(id_b), c.id);
    docker_container_free(&c);

    /* by id works as well as by name */
    TEST_CHECK_INT(docker_inspect(d, id_b, &c, err, sizeof(err)), DOCKER_OK);
    TEST_CHECK_STR(c.name, "dt-b");
    docker_container_free(&c);

    /* sleep as PID 1 ignores SIGTERM: the daemon kills it after the timeout (exit 137) */
    double t0 = mono_now();
    TEST_CHECK_INT(docker_stop(d, "dt-a", 1, err, sizeof(err)), DOCKER_OK);
    TEST_CHECK(mono_now() - t0 >= 0.9);
    TEST_CHECK_INT(docker_inspect(d, "dt-a", &c, err, sizeof(err)), DOCKER_OK);
    TEST_CHECK(!c.running);
    TEST_CHECK_STR(c.status, "exited");
    TEST_CHECK_INT(c.exit_code, 137);
    TEST_CHECK_INT(c.pid, 0);
    docker_container_free(&c);

    err[0] = '\0';
    TEST_CHECK_INT(docker_stop(d, "dt-a", 1, err, sizeof(err)), DOCKER_ALREADY);
    TEST_CHECK_CONTAINS(err, "'dt-a'");

    TEST_CHECK_INT(docker_list(d, "gpureclaim.test/workload", false, &v, &n, err, sizeof(err)),
                   DOCKER_OK);
    TEST_CHECK(n == 1 && has_name(v, n, "dt-b"));
    docker_containers_free(v, n);
    TEST_CHECK_INT(docker_list(d, "gpureclaim.test/workload", true, &v, &n, err, sizeof(err)),
                   DOCKER_OK);
    TEST_CHECK(n == 2 && has_name(v, n, "dt-a"));
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, "dt-a") == 0)
            TEST_CHECK(!v[i].running);
    docker_containers_free(v, n);

    TEST_CHECK_INT(docker_stop(d, "nope", 1, err, sizeof(err)), DOCKER_GONE);
    TEST_CHECK_CONTAINS(err, "'nope'");
    TEST_CHECK_INT(docker_inspect(d, "nope", &c, err, sizeof(err)), DOCKER_GONE);
    /* a name that would escape the path is encoded, so it is just an unknown container */
    TEST_CHECK_INT(docker_inspect(d, "../../_ping", &c, err, sizeof(err)), DOCKER_GONE);

    /* lazy negotiation: a fresh client pings on its first call */
    struct docker *d2 = docker_new(&cfg);
    TEST_CHECK_INT(docker_stop(d2, "dt-b", 0, err, sizeof(err)), DOCKER_OK);
    TEST_CHECK_STR(docker_api_version(d2), "1.41");
    docker_free(d2);

    docker_free(d);
}

int main(void)
{
    RUN(parse_inspect_fields);
    RUN(parse_inspect_rejects);
    RUN(parse_list);
    RUN(version_negotiation);
    RUN(dead_socket);
    podman_up();
    RUN(podman_api);
    podman_down();
    return test_done();
}
