/*
 * Docker Engine / Podman compatible API client (docker.h) over libcurl on a unix socket.
 *
 * Version negotiation. /_ping is unversioned and answers with Api-Version, the daemon's
 * *maximum* version; there is no header for its minimum. This client speaks the API up to
 * DOCKER_CLIENT_MAX (1.44): the calls it makes (list with label filters, inspect State,
 * Config.Labels and HostConfig.Devices, stop with ?t=) have not changed from 1.24 to 1.52,
 * and 1.44 is the minimum Docker Engine 29 accepts (moby PR #51186). Using
 * min(DOCKER_CLIENT_MAX, Api-Version) therefore gives 1.41 with Podman 4.3 and Docker 20.10
 * (whose maximum is 1.41), and 1.44 with Docker 29 (maximum 1.52, minimum 1.44). A daemon
 * whose minimum is raised above that answers 400 "... Minimum supported API version is X.Y
 * ...": the request is then repeated once at X.Y, which is what a client that reads the
 * minimum from /version would do, without the extra round trip on every start. A ping
 * without Api-Version (a proxy in front of an old daemon) leaves the paths unversioned, so
 * the daemon serves its own default.
 *
 * All JSON handling is in the pure docker_parse_* functions so the fuzz target reaches it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "docker.h"
#include "httpc.h"
#include "jsonparse.h"
#include "util.h"

#define DOCKER_CLIENT_MAX_MAJOR 1
#define DOCKER_CLIENT_MAX_MINOR 44
#define DOCKER_JSON_DEPTH       32
#define DOCKER_DEFAULT_TIMEOUT  10.0

struct docker {
    char *socket;
    double timeout;
    bool pinged;
    bool podman;
    char api[16]; /* "1.41", or "" for unversioned paths */
};

struct docker *docker_new(const struct docker_cfg *cfg)
{
    struct docker *d = xcalloc(1, sizeof(*d));
    d->socket = xstrdup(cfg->socket ? cfg->socket : "/var/run/docker.sock");
    d->timeout = cfg->timeout > 0 ? cfg->timeout : DOCKER_DEFAULT_TIMEOUT;
    return d;
}

void docker_free(struct docker *d)
{
    if (!d)
        return;
    free(d->socket);
    free(d);
}

const char *docker_api_version(const struct docker *d)
{
    return d->api;
}

bool docker_is_podman(const struct docker *d)
{
    return d->podman;
}

/* "1.41" -> 1, 41; -1 when it is not MAJOR.MINOR with small numbers. */
static int docker_parse_version(const char *s, int *major, int *minor)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (end == s || *end != '.' || errno || a < 0 || a > 99)
        return -1;
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end != '\0' || errno || b < 0 || b > 999)
        return -1;
    *major = (int)a;
    *minor = (int)b;
    return 0;
}

/* ---- pure JSON parsers ------------------------------------------------------------------ */

/* Member `key` of object `o` if it exists and is not null. */
static json_object *docker_get(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
        return NULL;
    return json_object_is_type(v, json_type_null) ? NULL : v;
}

/* Copy a string member into a fixed buffer; absent is "", too long or not a string is -1. */
static int docker_copy_str(json_object *o, const char *key, char *dst, size_t cap, char *err,
                           size_t errlen)
{
    dst[0] = '\0';
    json_object *v = docker_get(o, key);
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(err, errlen, "'%s' is not a string", key);
        return -1;
    }
    size_t n = (size_t)json_object_get_string_len(v);
    const char *s = json_object_get_string(v);
    if (n >= cap || memchr(s, '\0', n)) {
        snprintf(err, errlen, "'%s' is too long or contains NUL", key);
        return -1;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 0;
}

static int docker_get_int(json_object *o, const char *key, int *out, char *err, size_t errlen)
{
    *out = 0;
    json_object *v = docker_get(o, key);
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_int)) {
        snprintf(err, errlen, "'%s' is not an integer", key);
        return -1;
    }
    int64_t x = json_object_get_int64(v);
    if (x < INT32_MIN || x > INT32_MAX) {
        snprintf(err, errlen, "'%s' is out of range", key);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int docker_parse_labels(json_object *labels, struct docker_container *c, char *err,
                               size_t errlen)
{
    if (!labels)
        return 0;
    if (!json_object_is_type(labels, json_type_object)) {
        snprintf(err, errlen, "'Labels' is not an object");
        return -1;
    }
    size_t n = (size_t)json_object_object_length(labels);
    if (n == 0)
        return 0;
    c->labels = xcalloc(n, sizeof(*c->labels));
    json_object_object_foreach(labels, key, val)
    {
        if (!json_object_is_type(val, json_type_string)) {
            snprintf(err, errlen, "label '%s' is not a string", key);
            return -1;
        }
        c->labels[c->nlabels].key = xstrdup(key);
        c->labels[c->nlabels].value = xstrdup(json_object_get_string(val));
        c->nlabels++;
    }
    return 0;
}

static int docker_parse_devices(json_object *devs, struct docker_container *c, char *err,
                                size_t errlen)
{
    if (!devs)
        return 0;
    if (!json_object_is_type(devs, json_type_array)) {
        snprintf(err, errlen, "'HostConfig.Devices' is not an array");
        return -1;
    }
    size_t n = json_object_array_length(devs);
    if (n == 0)
        return 0;
    c->devices = xcalloc(n, sizeof(*c->devices));
    for (size_t i = 0; i < n; i++) {
        json_object *p = docker_get(json_object_array_get_idx(devs, i), "PathOnHost");
        if (!p || !json_object_is_type(p, json_type_string)) {
            snprintf(err, errlen, "device %zu has no string 'PathOnHost'", i);
            return -1;
        }
        c->devices[c->ndevices++] = xstrdup(json_object_get_string(p));
    }
    return 0;
}

/* Container ids are 64 hex digits; anything else would be unsafe to put in a path later. */
static int docker_check_id(const char *id, char *err, size_t errlen)
{
    size_t n = strlen(id);
    if (n == 0) {
        snprintf(err, errlen, "container without 'Id'");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (hex_value((unsigned char)id[i]) < 0) {
            snprintf(err, errlen, "container id '%.64s' is not hexadecimal", id);
            return -1;
        }
    }
    return 0;
}

static void docker_strip_slash(char *name)
{
    if (name[0] == '/')
        memmove(name, name + 1, strlen(name));
}

static int docker_inspect_obj(json_object *root, struct docker_container *out, char *err,
                              size_t errlen)
{
    if (!json_object_is_type(root, json_type_object)) {
        snprintf(err, errlen, "inspect answer is not a JSON object");
        return -1;
    }
    json_object *state = docker_get(root, "State");
    json_object *config = docker_get(root, "Config");
    json_object *host = docker_get(root, "HostConfig");
    if (docker_copy_str(root, "Id", out->id, sizeof(out->id), err, errlen) < 0 ||
        docker_check_id(out->id, err, errlen) < 0 ||
        docker_copy_str(root, "Name", out->name, sizeof(out->name), err, errlen) < 0 ||
        docker_copy_str(root, "Created", out->created, sizeof(out->created), err, errlen) < 0)
        return -1;
    docker_strip_slash(out->name);
    if (!state || !json_object_is_type(state, json_type_object)) {
        snprintf(err, errlen, "container '%s' has no 'State' object", out->id);
        return -1;
    }
    json_object *running = docker_get(state, "Running");
    if (!running || !json_object_is_type(running, json_type_boolean)) {
        snprintf(err, errlen, "container '%s' has no boolean 'State.Running'", out->id);
        return -1;
    }
    out->running = json_object_get_boolean(running);
    if (docker_copy_str(state, "Status", out->status, sizeof(out->status), err, errlen) < 0 ||
        docker_get_int(state, "ExitCode", &out->exit_code, err, errlen) < 0 ||
        docker_get_int(state, "Pid", &out->pid, err, errlen) < 0)
        return -1;
    /* Config.Image is the name the container was created from; the top-level Image is the
       image id (sha256:...), kept only when the name is missing. */
    if (config && !json_object_is_type(config, json_type_object)) {
        snprintf(err, errlen, "'Config' is not an object");
        return -1;
    }
    if (docker_copy_str(config, "Image", out->image, sizeof(out->image), err, errlen) < 0)
        return -1;
    if (!out->image[0] &&
        docker_copy_str(root, "Image", out->image, sizeof(out->image), err, errlen) < 0)
        return -1;
    if (docker_parse_labels(docker_get(config, "Labels"), out, err, errlen) < 0)
        return -1;
    if (host && !json_object_is_type(host, json_type_object)) {
        snprintf(err, errlen, "'HostConfig' is not an object");
        return -1;
    }
    return docker_parse_devices(docker_get(host, "Devices"), out, err, errlen);
}

int docker_parse_inspect(const char *json, size_t len, struct docker_container *out, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof(*out));
    json_object *root =
        jsonparse_strict(json, len, DOCKER_JSON_DEPTH, "container inspect", err, errlen);
    if (!root)
        return -1;
    int ret = docker_inspect_obj(root, out, err, errlen);
    json_object_put(root);
    if (ret < 0)
        docker_container_free(out);
    return ret;
}

static int docker_list_obj(json_object *o, struct docker_container *c, char *err, size_t errlen)
{
    if (!json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "list entry is not a JSON object");
        return -1;
    }
    if (docker_copy_str(o, "Id", c->id, sizeof(c->id), err, errlen) < 0 ||
        docker_check_id(c->id, err, errlen) < 0 ||
        docker_copy_str(o, "Image", c->image, sizeof(c->image), err, errlen) < 0 ||
        docker_copy_str(o, "State", c->status, sizeof(c->status), err, errlen) < 0)
        return -1;
    c->running = strcmp(c->status, "running") == 0;
    json_object *names = docker_get(o, "Names");
    if (names) {
        if (!json_object_is_type(names, json_type_array)) {
            snprintf(err, errlen, "'Names' of container '%s' is not an array", c->id);
            return -1;
        }
        /* The first name is the container's own; later ones are legacy link aliases. */
        if (json_object_array_length(names) > 0) {
            json_object *first = json_object_array_get_idx(names, 0);
            if (!json_object_is_type(first, json_type_string) ||
                (size_t)json_object_get_string_len(first) >= sizeof(c->name)) {
                snprintf(err, errlen, "bad name of container '%s'", c->id);
                return -1;
            }
            str_copy(c->name, sizeof(c->name), json_object_get_string(first));
            docker_strip_slash(c->name);
        }
    }
    return docker_parse_labels(docker_get(o, "Labels"), c, err, errlen);
}

int docker_parse_list(const char *json, size_t len, struct docker_container **out, size_t *n,
                      char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    json_object *root =
        jsonparse_strict(json, len, DOCKER_JSON_DEPTH, "container list", err, errlen);
    if (!root)
        return -1;
    int ret = -1;
    if (!json_object_is_type(root, json_type_array)) {
        snprintf(err, errlen, "list answer is not a JSON array");
        goto out;
    }
    size_t cnt = json_object_array_length(root);
    struct docker_container *v = cnt ? xcalloc(cnt, sizeof(*v)) : NULL;
    for (size_t i = 0; i < cnt; i++) {
        if (docker_list_obj(json_object_array_get_idx(root, i), &v[i], err, errlen) < 0) {
            docker_containers_free(v, i + 1);
            goto out;
        }
    }
    *out = v;
    *n = cnt;
    ret = 0;
out:
    json_object_put(root);
    return ret;
}

const char *docker_label(const struct docker_container *c, const char *key)
{
    for (size_t i = 0; i < c->nlabels; i++)
        if (strcmp(c->labels[i].key, key) == 0)
            return c->labels[i].value;
    return NULL;
}

void docker_container_free(struct docker_container *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nlabels; i++) {
        free(c->labels[i].key);
        free(c->labels[i].value);
    }
    free(c->labels);
    for (size_t i = 0; i < c->ndevices; i++)
        free(c->devices[i]);
    free(c->devices);
    memset(c, 0, sizeof(*c));
}

void docker_containers_free(struct docker_container *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        docker_container_free(&v[i]);
    free(v);
}

/* ---- requests --------------------------------------------------------------------------- */

/* The daemon's {"message":"..."} (Docker) or {"cause":..,"message":..} (Podman), if any. */
static void docker_error_message(const struct httpc_resp *r, char *buf, size_t cap)
{
    buf[0] = '\0';
    char tmp[16];
    json_object *root = jsonparse_strict(r->body.buf ? r->body.buf : "", r->body.len,
                                         DOCKER_JSON_DEPTH, "error", tmp, sizeof(tmp));
    json_object *m = docker_get(root, "message");
    if (m && json_object_is_type(m, json_type_string))
        str_copy(buf, cap, json_object_get_string(m));
    json_object_put(root);
    if (!buf[0] && r->body.len && r->body.len < 200 && r->body.buf)
        str_copy(buf, cap, str_rtrim(r->body.buf));
}

/*
 * The version to use with a daemon whose /_ping said `api` (NULL: no header): the lower of
 * it and DOCKER_CLIENT_MAX, or "" (unversioned paths) without a header. -1 when malformed.
 */
static int docker_negotiate(const char *api, char *out, size_t cap)
{
    int major, minor;
    if (!api) {
        out[0] = '\0';
        return 0;
    }
    if (docker_parse_version(api, &major, &minor) < 0)
        return -1;
    if (major > DOCKER_CLIENT_MAX_MAJOR ||
        (major == DOCKER_CLIENT_MAX_MAJOR && minor > DOCKER_CLIENT_MAX_MINOR)) {
        major = DOCKER_CLIENT_MAX_MAJOR;
        minor = DOCKER_CLIENT_MAX_MINOR;
    }
    snprintf(out, cap, "%d.%d", major, minor);
    return 0;
}

/*
 * The minimum version named by a 400 answer such as "client version 1.41 is too old.
 * Minimum supported API version is 1.44, please upgrade your client ..." into out; -1 when
 * the message is not that one.
 */
static int docker_min_from_message(const char *msg, char *out, size_t cap)
{
    static const char marker[] = "Minimum supported API version is ";
    const char *p = strstr(msg, marker);
    if (!p)
        return -1;
    p += strlen(marker);
    char ver[16];
    size_t k = 0;
    while (k + 1 < sizeof(ver) && ((p[k] >= '0' && p[k] <= '9') || p[k] == '.')) {
        ver[k] = p[k];
        k++;
    }
    ver[k] = '\0';
    if (k > 0 && ver[k - 1] == '.') /* the sentence's full stop */
        ver[k - 1] = '\0';
    int major, minor;
    if (docker_parse_version(ver, &major, &minor) < 0)
        return -1;
    snprintf(out, cap, "%d.%d", major, minor);
    return 0;
}

int docker_ping(struct docker *d, char *err, size_t errlen)
{
    static const char *const want[] = {"Api-Version", "Libpod-Api-Version"};
    struct httpc_req req = {
        .url = "http://localhost/_ping",
        .unix_socket = d->socket,
        .timeout = d->timeout,
        .want_headers = want,
        .nwant_headers = ARRAY_LEN(want),
    };
    struct httpc_resp resp = {0};
    if (httpc_do(&req, &resp, err, errlen) < 0) {
        httpc_resp_free(&resp);
        return -1;
    }
    int ret = -1;
    if (resp.status != 200) {
        snprintf(err, errlen, "ping of '%s' answered HTTP %ld", d->socket, resp.status);
        goto out;
    }
    const char *api = httpc_resp_header(&resp, "Api-Version");
    if (docker_negotiate(api, d->api, sizeof(d->api)) < 0) {
        snprintf(err, errlen, "bad Api-Version '%.32s' from '%s'", api, d->socket);
        goto out;
    }
    d->podman = httpc_resp_header(&resp, "Libpod-Api-Version") != NULL;
    d->pinged = true;
    ret = 0;
out:
    httpc_resp_free(&resp);
    return ret;
}

/*
 * One versioned request: `path` starts with '/' and is appended to /vX.Y. A 400 naming a
 * higher minimum version is retried once at that version (see the top of the file).
 */
static int docker_request(struct docker *d, const char *method, const char *path,
                          double extra_timeout, struct httpc_resp *resp, char *err, size_t errlen)
{
    if (!d->pinged && docker_ping(d, err, errlen) < 0)
        return -1;
    for (int attempt = 0; attempt < 2; attempt++) {
        char *url = d->api[0] ? xasprintf("http://localhost/v%s%s", d->api, path)
                              : xasprintf("http://localhost%s", path);
        struct httpc_req req = {
            .method = method,
            .url = url,
            .unix_socket = d->socket,
            .timeout = d->timeout + extra_timeout,
        };
        int rc = httpc_do(&req, resp, err, errlen);
        free(url);
        if (rc < 0)
            return -1;
        if (resp->status != 400 || attempt > 0)
            return 0;
        char msg[256];
        docker_error_message(resp, msg, sizeof(msg));
        if (docker_min_from_message(msg, d->api, sizeof(d->api)) < 0)
            return 0;
    }
    return 0;
}

/* Append `s` as one path segment (percent-encoded, so '/' or '?' cannot escape it). */
static char *docker_path(const char *fmt_before, const char *seg, const char *after)
{
    struct sbuf b = {0};
    sbuf_puts(&b, fmt_before);
    httpc_urlencode(&b, seg);
    sbuf_puts(&b, after);
    return sbuf_take(&b);
}

static int docker_fail(const char *what, const char *id, const struct httpc_resp *r, char *err,
                       size_t errlen)
{
    char msg[256];
    docker_error_message(r, msg, sizeof(msg));
    snprintf(err, errlen, "%s of container '%s' failed: HTTP %ld%s%s", what, id, r->status,
             msg[0] ? ": " : "", msg);
    return DOCKER_ERROR;
}

int docker_list(struct docker *d, const char *label_filter, bool all, struct docker_container **out,
                size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    struct sbuf path = {0};
    sbuf_printf(&path, "/containers/json?all=%d", all ? 1 : 0);
    if (label_filter && *label_filter) {
        /* filters={"label":["k=v"]} with the value escaped by json-c, then URL-encoded */
        json_object *f = json_object_new_object();
        json_object *arr = json_object_new_array();
        json_object_array_add(arr, json_object_new_string(label_filter));
        json_object_object_add(f, "label", arr);
        sbuf_puts(&path, "&filters=");
        httpc_urlencode(&path, json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN));
        json_object_put(f);
    }
    struct httpc_resp resp = {0};
    int ret = docker_request(d, "GET", path.buf, 0, &resp, err, errlen);
    sbuf_free(&path);
    if (ret < 0) {
        ret = DOCKER_ERROR;
    } else if (resp.status != 200) {
        ret = docker_fail("list", "*", &resp, err, errlen);
    } else if (docker_parse_list(resp.body.buf, resp.body.len, out, n, err, errlen) < 0) {
        ret = DOCKER_ERROR;
    } else {
        ret = DOCKER_OK;
    }
    httpc_resp_free(&resp);
    return ret;
}

int docker_inspect(struct docker *d, const char *id_or_name, struct docker_container *out,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    char *path = docker_path("/containers/", id_or_name, "/json");
    struct httpc_resp resp = {0};
    int ret = docker_request(d, "GET", path, 0, &resp, err, errlen);
    free(path);
    if (ret < 0) {
        ret = DOCKER_ERROR;
    } else if (resp.status == 404) {
        snprintf(err, errlen, "no such container '%s'", id_or_name);
        ret = DOCKER_GONE;
    } else if (resp.status != 200) {
        ret = docker_fail("inspect", id_or_name, &resp, err, errlen);
    } else if (docker_parse_inspect(resp.body.buf, resp.body.len, out, err, errlen) < 0) {
        ret = DOCKER_ERROR;
    } else {
        ret = DOCKER_OK;
    }
    httpc_resp_free(&resp);
    return ret;
}

int docker_stop(struct docker *d, const char *id_or_name, int timeout_s, char *err, size_t errlen)
{
    if (timeout_s < 0)
        timeout_s = 0;
    char after[32];
    snprintf(after, sizeof(after), "/stop?t=%d", timeout_s);
    char *path = docker_path("/containers/", id_or_name, after);
    struct httpc_resp resp = {0};
    /* The daemon answers only after SIGKILL, up to timeout_s later: wait that much longer. */
    int ret = docker_request(d, "POST", path, (double)timeout_s + 5, &resp, err, errlen);
    free(path);
    if (ret < 0) {
        ret = DOCKER_ERROR;
    } else if (resp.status == 204) {
        ret = DOCKER_OK;
    } else if (resp.status == 304) {
        snprintf(err, errlen, "container '%s' is already stopped", id_or_name);
        ret = DOCKER_ALREADY;
    } else if (resp.status == 404) {
        snprintf(err, errlen, "no such container '%s'", id_or_name);
        ret = DOCKER_GONE;
    } else {
        ret = docker_fail("stop", id_or_name, &resp, err, errlen);
    }
    httpc_resp_free(&resp);
    return ret;
}
