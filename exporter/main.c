/*
 * gpureclaim-exporter: flags, start-up order, the HTTP endpoint, and shutdown.
 *
 * Start-up errors (bad flags, a port in use) are fatal with a message and exit status 1
 * (flags.h); after that nothing the exporter reads can stop it: collectors report problems
 * in metrics and logs.
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
#include "flags.h"
#include "httpd.h"
#include "log.h"
#include "util.h"

/* Read-only once the collectors start; filled from the flags. */
static struct coll_cfg cfg;

/* Keep in the order --help prints them; the collector rows follow (coll_flag_rows). */
enum {
    F_LISTEN,
    F_TELEMETRY,
    F_WEB_CONFIG,
    F_WEB_PER_IP,
    F_WEB_HEADER_TIMEOUT,
    F_SYSFS,
    F_PROCFS,
    F_DEVFS,
    F_POD_RESOURCES,
    F_RT_SOCKET,
    F_REDISCOVER,
    F_REFRESH,
    F_PER_PROCESS,
    F_LOG_LEVEL,
    F_LOG_FORMAT,
    F_VERSION,
    F_HELP,
    NFLAGS
};

#define MAX_FLAGS (NFLAGS + 16)

static struct flags_def flags[MAX_FLAGS] = {
    [F_LISTEN] = {"web.listen-address", FLAGS_STRING, ":9841", "address to listen on"},
    [F_TELEMETRY] = {"web.telemetry-path", FLAGS_URL_PATH, "/metrics", "path of the metrics"},
    [F_WEB_CONFIG] = {"web.config.file", FLAGS_STRING, "",
                      "TLS, basic auth and headers (exporter-toolkit format; re-read when it "
                      "changes)"},
    [F_WEB_PER_IP] = {"web.max-connections-per-ip", FLAGS_COUNT, "32",
                      "connections one client address (IPv6: one /64) may hold", .min = 1,
                      .max = 100000},
    [F_WEB_HEADER_TIMEOUT] = {"web.read-header-timeout", FLAGS_DURATION, "10s",
                              "time a client has to send a complete request header", .min = 0.1,
                              .max = 3600},
    [F_SYSFS] = {"path.sysfs", FLAGS_STRING, "/sys", "sysfs mount point"},
    [F_PROCFS] = {"path.procfs", FLAGS_STRING, "/proc", "procfs mount point"},
    [F_DEVFS] = {"path.devfs", FLAGS_STRING, "/dev", "devfs mount point"},
    [F_POD_RESOURCES] = {"kubelet.pod-resources-socket", FLAGS_STRING,
                         "/var/lib/kubelet/pod-resources/kubelet.sock",
                         "kubelet pod-resources socket"},
    [F_RT_SOCKET] = {"runtime.socket", FLAGS_STRING, "",
                     "Docker/Podman API socket for container names"},
    [F_REDISCOVER] = {"gpu.rediscover-interval", FLAGS_DURATION, "1m",
                      "reuse the GPU/partition discovery this long; a KFD topology change ends "
                      "it early (0: every scrape)",
                      .min = 0, .max = 86400},
    [F_REFRESH] = {"collector.ownership.refresh-interval", FLAGS_DURATION, "10s",
                   "refresh owner data in the background this often", .min = 0.001, .max = 86400},
    [F_PER_PROCESS] = {"collector.ownership.per-process", FLAGS_BOOL, "false",
                       "also export gpureclaim_process_* series with a pid label (one series "
                       "per process: high cardinality)"},
    [F_LOG_LEVEL] = {"log.level", FLAGS_CHOICE, "info", "debug, info, warn or error",
                     .choices = "debug,info,warn,error"},
    [F_LOG_FORMAT] = {"log.format", FLAGS_CHOICE, "logfmt", "logfmt or json",
                      .choices = "logfmt,json"},
    [F_VERSION] = {"version", FLAGS_SWITCH, "false", "show the version and exit"},
    [F_HELP] = {"help", FLAGS_SWITCH, "false", "show this help and exit"},
};

static void usage(FILE *out, size_t ncoll)
{
    fprintf(out, "usage: gpureclaim-exporter [flags]\n\n"
                 "Prometheus exporter of AMD GPU and partition activity, memory and ownership.\n\n"
                 "flags:\n");
    flags_help(out, flags, NFLAGS);
    fprintf(out, "\ncollectors:\n");
    flags_help(out, flags + NFLAGS, ncoll);
    fprintf(out, "\nexit status: 0 ok, 1 usage or start-up error\n");
}

/*
 * Parse the command line into flags[] and cfg. Returns -1 to go on, or the exit status
 * (after --help, --version or a usage error).
 */
static int parse_flags(int argc, char **argv, struct httpd_web *web)
{
    size_t ncoll = coll_flag_rows(flags + NFLAGS, MAX_FLAGS - NFLAGS);
    char err[512];
    if (ncoll == 0) {
        log_error("no room for the collector flags: raise MAX_FLAGS in exporter/main.c");
        return 1;
    }
    if (flags_parse(flags, NFLAGS + ncoll, argc, argv, NULL, NULL, err, sizeof(err)) != 0)
        return flags_usage_error("gpureclaim-exporter", err);
    log_set_level(flags[F_LOG_LEVEL].value);
    log_set_format(flags[F_LOG_FORMAT].value);
    flags_log_warnings(flags, NFLAGS + ncoll);
    if (flags[F_HELP].num) {
        usage(stdout, ncoll);
        return 0;
    }
    if (flags[F_VERSION].num) {
        printf("gpureclaim-exporter %s\n", GPURECLAIM_VERSION);
        return 0;
    }
    coll_flags_apply(flags + NFLAGS);
    cfg.sysfs = flags[F_SYSFS].value;
    cfg.procfs = flags[F_PROCFS].value;
    cfg.devfs = flags[F_DEVFS].value;
    cfg.pod_resources_socket = flags[F_POD_RESOURCES].value;
    cfg.runtime_socket = flags[F_RT_SOCKET].value[0] ? flags[F_RT_SOCKET].value : NULL;
    cfg.rediscover_interval = flags[F_REDISCOVER].num;
    cfg.refresh_interval = flags[F_REFRESH].num;
    cfg.per_process = flags[F_PER_PROCESS].num != 0;
    web->config_file = flags[F_WEB_CONFIG].value[0] ? flags[F_WEB_CONFIG].value : NULL;
    web->max_conn_per_ip = (unsigned)flags[F_WEB_PER_IP].num;
    web->header_timeout = flags[F_WEB_HEADER_TIMEOUT].num;
    return -1;
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
    struct httpd_web web = {0};
    int status = parse_flags(argc, argv, &web);
    if (status >= 0)
        return status;

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
        .listen = flags[F_LISTEN].value,
        .metrics_path = flags[F_TELEMETRY].value,
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
