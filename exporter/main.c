/*
 * gpureclaim-exporter: flags, start-up order, the HTTP endpoint, and shutdown.
 *
 * Start-up errors (bad flags, a port in use) are fatal with a message; after that nothing
 * the exporter reads can stop it: collectors report problems in metrics and logs.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "attrfd.h"
#include "collector.h"
#include "expo.h"
#include "httpd.h"
#include "log.h"
#include "util.h"

#define DEFAULT_LISTEN ":9841"

static struct coll_cfg cfg = {
    .sysfs = "/sys",
    .procfs = "/proc",
    .devfs = "/dev",
    .pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock",
    .runtime_socket = NULL,
    .refresh_interval = 10,
    .rediscover_interval = 60,
};

static const char *listen_addr = DEFAULT_LISTEN;
static const char *telemetry_path = "/metrics";
static struct httpd_web web;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gpureclaim-exporter [flags]\n\n"
            "Prometheus exporter of AMD GPU and partition activity, memory and ownership.\n\n"
            "Flags:\n"
            "  --web.listen-address=ADDR     Address to listen on (default %s)\n"
            "  --web.telemetry-path=PATH     Path of the metrics (default /metrics)\n"
            "  --web.config.file=FILE        TLS, basic auth and headers (exporter-toolkit\n"
            "                                format; re-read when it changes)\n"
            "  --web.max-connections-per-ip=N\n"
            "                                Connections one client address may hold\n"
            "                                (IPv6: one /64; default %d)\n"
            "  --web.read-header-timeout=SECONDS\n"
            "                                Time a client has to send a complete request\n"
            "                                header (default %.0f)\n"
            "  --path.sysfs=DIR              sysfs mount point (default /sys)\n"
            "  --path.procfs=DIR             procfs mount point (default /proc)\n"
            "  --path.devfs=DIR              devfs mount point (default /dev)\n"
            "  --kubelet.pod-resources-socket=PATH\n"
            "                                kubelet pod-resources socket (default\n"
            "                                /var/lib/kubelet/pod-resources/kubelet.sock)\n"
            "  --runtime.socket=PATH         Docker/Podman API socket for container names\n"
            "  --gpu.rediscover-interval=SECONDS\n"
            "                                Reuse the GPU/partition discovery this long; a\n"
            "                                KFD topology change ends it early (default 60)\n"
            "  --collector.ownership.refresh-interval=SECONDS\n"
            "                                Refresh owner data in the background this often\n"
            "                                (default 10)\n"
            "  --collector.ownership.per-process\n"
            "                                Also export gpureclaim_process_* series with a pid\n"
            "                                label (one series per process: high cardinality)\n"
            "  --log.level=LEVEL             debug, info, warn, error (default info)\n"
            "  --log.format=FORMAT           logfmt or json (default logfmt)\n"
            "  --version                     Print the version and exit\n"
            "  --help                        Print this help and exit\n\n"
            "Collectors:\n",
            DEFAULT_LISTEN, HTTPD_DEFAULT_MAX_CONN_PER_IP, HTTPD_DEFAULT_HEADER_TIMEOUT);
    coll_help(out);
}

/* Accept --flag=value and --flag value. Returns the value or NULL if `arg` is not `name`. */
static const char *flag_value(const char *name, int argc, char **argv, int *i)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == '\0') {
        if (*i + 1 >= argc) {
            fprintf(stderr, "gpureclaim-exporter: flag '%s' needs a value\n", name);
            exit(2);
        }
        return argv[++*i];
    }
    return NULL;
}

/*
 * How many sysfs descriptors to keep open across scrapes (attrfd.h). The soft descriptor
 * limit is raised to the hard one first, as Go programs such as node_exporter do at start;
 * a quarter of it at most is kept, leaving the rest to connections and /proc walks. An
 * 8-GPU CPX node reads about 170 attributes per scrape.
 */
static size_t kept_descriptors(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t want = rl.rlim_max;
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 4 > 1024)
        return 1024;
    return (size_t)(rl.rlim_cur / 4);
}

static int render_metrics(void *arg, struct sbuf *out)
{
    struct expo *e = expo_new();
    coll_scrape(&cfg, e);
    expo_render(e, out);
    if (expo_duplicates(e)) {
        /* A bug, not a state: said once (never cleared), each scrape's count at debug. */
        log_cond("duplicate samples", LOG_WARN,
                 "duplicate samples dropped from a scrape (a collector bug)");
        log_debug("%zu duplicate samples dropped from this scrape", expo_duplicates(e));
    }
    if (expo_conflicts(e))
        log_cond("family conflicts", LOG_WARN,
                 "samples whose HELP or TYPE disagree with their family's (a collector bug)");
    expo_free(e);
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        char err[256];
        int rc;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("gpureclaim-exporter %s\n", GPURECLAIM_VERSION);
            return 0;
        } else if ((v = flag_value("--web.listen-address", argc, argv, &i))) {
            listen_addr = v;
        } else if ((v = flag_value("--web.telemetry-path", argc, argv, &i))) {
            telemetry_path = v;
        } else if ((v = flag_value("--web.config.file", argc, argv, &i))) {
            web.config_file = v;
        } else if ((v = flag_value("--web.max-connections-per-ip", argc, argv, &i))) {
            uint64_t n;
            if (parse_u64(v, &n) < 0 || n < 1 || n > 100000) {
                fprintf(stderr, "gpureclaim-exporter: invalid --web.max-connections-per-ip '%s'\n",
                        v);
                return 2;
            }
            web.max_conn_per_ip = (unsigned)n;
        } else if ((v = flag_value("--web.read-header-timeout", argc, argv, &i))) {
            if (parse_double(v, &web.header_timeout) < 0 || !(web.header_timeout >= 0.1) ||
                web.header_timeout > 3600) {
                fprintf(stderr, "gpureclaim-exporter: invalid --web.read-header-timeout '%s'\n", v);
                return 2;
            }
        } else if ((v = flag_value("--path.sysfs", argc, argv, &i))) {
            cfg.sysfs = v;
        } else if ((v = flag_value("--path.procfs", argc, argv, &i))) {
            cfg.procfs = v;
        } else if ((v = flag_value("--path.devfs", argc, argv, &i))) {
            cfg.devfs = v;
        } else if ((v = flag_value("--kubelet.pod-resources-socket", argc, argv, &i))) {
            cfg.pod_resources_socket = v;
        } else if ((v = flag_value("--runtime.socket", argc, argv, &i))) {
            cfg.runtime_socket = v;
        } else if ((v = flag_value("--gpu.rediscover-interval", argc, argv, &i))) {
            if (parse_double(v, &cfg.rediscover_interval) < 0 || cfg.rediscover_interval < 0 ||
                cfg.rediscover_interval > 86400) {
                fprintf(stderr, "gpureclaim-exporter: invalid --gpu.rediscover-interval '%s'\n", v);
                return 2;
            }
        } else if ((v = flag_value("--collector.ownership.refresh-interval", argc, argv, &i))) {
            if (parse_double(v, &cfg.refresh_interval) < 0 || !(cfg.refresh_interval > 0) ||
                cfg.refresh_interval > 86400) {
                fprintf(stderr,
                        "gpureclaim-exporter: invalid --collector.ownership.refresh-interval "
                        "'%s'\n",
                        v);
                return 2;
            }
        } else if (strcmp(argv[i], "--collector.ownership.per-process") == 0) {
            cfg.per_process = true;
        } else if ((v = flag_value("--log.level", argc, argv, &i))) {
            if (log_set_level(v) < 0) {
                fprintf(stderr, "gpureclaim-exporter: unknown log level '%s'\n", v);
                return 2;
            }
        } else if ((v = flag_value("--log.format", argc, argv, &i))) {
            if (log_set_format(v) < 0) {
                fprintf(stderr, "gpureclaim-exporter: unknown log format '%s'\n", v);
                return 2;
            }
        } else if ((rc = coll_flag(argv[i], err, sizeof(err))) != 0) {
            if (rc < 0) {
                fprintf(stderr, "gpureclaim-exporter: %s\n", err);
                return 2;
            }
        } else {
            fprintf(stderr, "gpureclaim-exporter: unknown flag '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (telemetry_path[0] != '/') {
        fprintf(stderr, "gpureclaim-exporter: --web.telemetry-path must start with '/'\n");
        return 2;
    }

    /* Block the stop signals before any thread starts, then wait for them here. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    /*
     * libcurl (>= 7.84, CURL_VERSION_THREADSAFE) initialises itself on first use, so the TLS
     * libraries are only loaded on nodes where a socket is actually queried.
     */
    if (!(curl_version_info(CURLVERSION_NOW)->features & CURL_VERSION_THREADSAFE))
        curl_global_init(CURL_GLOBAL_DEFAULT);
    attrfd_init(cfg.sysfs, kept_descriptors());
    char err[512];
    if (coll_init(&cfg, err, sizeof(err)) < 0) {
        log_error("cannot start collectors: %s", err);
        return 1;
    }
    struct httpd_cfg hc = {
        .listen = listen_addr,
        .metrics_path = telemetry_path,
        .title = "gpureclaim exporter",
        .metrics = render_metrics,
        .threads = 4,
        .timeout = 30,
        .web = web,
    };
    struct httpd *h = httpd_start(&hc, err, sizeof(err));
    if (!h) {
        log_error("%s", err);
        coll_fini();
        return 1;
    }
    log_info("gpureclaim-exporter %s listening on port %d (sysfs '%s', procfs '%s')",
             GPURECLAIM_VERSION, httpd_port(h), cfg.sysfs, cfg.procfs);
    int sig;
    sigwait(&stop, &sig);
    log_info("received signal %d, shutting down", sig);
    httpd_stop(h);
    coll_fini();
    attrfd_init(NULL, 0);
    return 0;
}
