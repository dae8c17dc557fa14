/*
 * Docker Engine / Podman compatible API client over a unix socket (docs/backend-apis.md §7),
 * shared by the exporter (container names, labels and devices for workload ownership on
 * hosts without Kubernetes) and the enforcer (inspect and stop idle containers).
 *
 * The API version is negotiated once with /_ping: the lower of the version this client
 * speaks and the daemon's Api-Version header, so both old Podman (1.40/1.41) and Docker
 * Engine 29 (minimum 1.44) are served. A Libpod-Api-Version header marks Podman.
 */
#ifndef GPURECLAIM_DOCKER_H
#define GPURECLAIM_DOCKER_H

#include <stdbool.h>
#include <stddef.h>

/* Outcomes that callers act on; everything else is DOCKER_ERROR with a message. */
enum docker_result {
    DOCKER_OK = 0,
    DOCKER_ALREADY = 1, /* 304: the container was already stopped */
    DOCKER_GONE = 2,    /* 404: no such container */
    DOCKER_ERROR = -1,  /* transport error, timeout, 5xx, malformed answer */
};

struct docker_cfg {
    const char *socket; /* path of the API unix socket */
    double timeout;     /* seconds per request */
};

struct docker_label {
    char *key;
    char *value;
};

struct docker_container {
    char id[65];
    char name[256]; /* without the leading '/' */
    bool running;
    char status[32]; /* State.Status: running, exited, ... */
    int exit_code;
    int pid; /* State.Pid, 0 when not running */
    char image[256];
    char created[64]; /* inspect: Created, RFC 3339 with nanoseconds ("" when absent) */
    struct docker_label *labels;
    size_t nlabels;
    char **devices; /* HostConfig.Devices[].PathOnHost, e.g. /dev/dri/renderD131 */
    size_t ndevices;
};

struct docker;

struct docker *docker_new(const struct docker_cfg *cfg);
void docker_free(struct docker *d);

/* Negotiate the API version (done lazily by the other calls if not called). */
int docker_ping(struct docker *d, char *err, size_t errlen);
/* "1.41" after a successful ping; true when the daemon is Podman. */
const char *docker_api_version(const struct docker *d);
bool docker_is_podman(const struct docker *d);

/*
 * List containers (running only unless `all`), optionally filtered by one label
 * ("key" or "key=value"). Devices are not filled by the list call: use docker_inspect.
 * On success *out is an array of *n containers (free with docker_containers_free).
 */
int docker_list(struct docker *d, const char *label_filter, bool all, struct docker_container **out,
                size_t *n, char *err, size_t errlen);
/* Inspect one container by id or name: DOCKER_OK, DOCKER_GONE or DOCKER_ERROR. */
int docker_inspect(struct docker *d, const char *id_or_name, struct docker_container *out,
                   char *err, size_t errlen);
/*
 * Stop a container: SIGTERM, then SIGKILL after `timeout_s` seconds (the daemon does this).
 * DOCKER_OK (204), DOCKER_ALREADY (304), DOCKER_GONE (404) or DOCKER_ERROR.
 */
int docker_stop(struct docker *d, const char *id_or_name, int timeout_s, char *err, size_t errlen);

const char *docker_label(const struct docker_container *c, const char *key);
void docker_container_free(struct docker_container *c);
void docker_containers_free(struct docker_container *v, size_t n);

/* Pure parsers (exposed for tests and fuzzing). */
int docker_parse_inspect(const char *json, size_t len, struct docker_container *out, char *err,
                         size_t errlen);
int docker_parse_list(const char *json, size_t len, struct docker_container **out, size_t *n,
                      char *err, size_t errlen);

#endif
