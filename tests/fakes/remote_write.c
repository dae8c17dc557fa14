/*
 * A Prometheus remote-write client for the enforcer's tests: loads raw samples, staleness
 * markers included, into a Prometheus started with --web.enable-remote-write-receiver.
 * OpenMetrics (promtool's backfill) cannot carry a staleness marker: a NaN in text is read as
 * an ordinary NaN, not the bit pattern 0x7ff0000000000002 Prometheus writes when a series
 * ends (prometheus/prometheus model/value/value.go); remote write sends the value's bits.
 *
 * usage: remote_write URL < SAMPLES
 *   SAMPLES: one sample per line, `LABELS TIMESTAMP_MS VALUE`, LABELS as `name=value,...`
 *   (no spaces, no quotes; `__name__` included), VALUE a number, NaN, +Inf, -Inf or `stale`.
 *   Lines of one series must be consecutive and in time order. Series are sent in
 *   WriteRequests of at most 5,000 series (prompb WriteRequest: TimeSeries = 1; Label =
 *   1, Sample = 2; Label name = 1, value = 2; Sample value = 1 (double), timestamp = 2).
 * Exit status 0 when every request got a 2xx answer.
 *
 * usage: remote_write URL --bench N FROM TO STEP
 *   the enforcer benchmark's history (bench/incremental.sh) without a text file in between:
 *   N workloads, gpureclaim:workload_busy:ratio{namespace="ns<i % 100>",pod="pod-<i>"} every
 *   STEP seconds over [FROM, TO) (0.5 for i % 10 == 0, 0.01 otherwise) and
 *   gpureclaim:workload_devices:count{...,resource="amd.com/gpu"} 1 every 240 s (within the 5
 * minutes an instant query looks back), written in windows of 10 minutes, every series of a window
 * before the next, so that Prometheus always appends at its head (bench/replay_history.py writes
 * the same order as text).
 */
#include <snappy-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "httpc.h"
#include "pbwire.h"
#include "util.h"

static int rw_send(const char *url, struct sbuf *req)
{
    size_t n = snappy_max_compressed_length(req->len);
    char *z = xmalloc(n);
    if (snappy_compress(req->buf, req->len, z, &n) != SNAPPY_OK) {
        fprintf(stderr, "remote_write: snappy failed\n");
        free(z);
        return -1;
    }
    static const char *const headers[] = {
        "Content-Type: application/x-protobuf",
        "Content-Encoding: snappy",
        "X-Prometheus-Remote-Write-Version: 0.1.0",
    };
    struct httpc_req r = {.method = "POST",
                          .url = url,
                          .headers = headers,
                          .nheaders = 3,
                          .body = z,
                          .body_len = n,
                          .timeout = 60};
    struct httpc_resp resp = {0};
    char err[256];
    int ret = httpc_do(&r, &resp, err, sizeof(err));
    if (ret < 0)
        fprintf(stderr, "remote_write: %s\n", err);
    else if (resp.status / 100 != 2) {
        fprintf(stderr, "remote_write: HTTP %ld: %s\n", resp.status,
                resp.body.buf ? resp.body.buf : "");
        ret = -1;
    }
    httpc_resp_free(&resp);
    free(z);
    sbuf_reset(req);
    return ret;
}

/* One TimeSeries message from its labels text and samples (already encoded). */
static void rw_series(struct sbuf *req, const char *labels, const struct sbuf *samples)
{
    struct sbuf ts = {0}, one = {0};
    char *copy = xstrdup(labels), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = '\0';
        sbuf_reset(&one);
        pb_put_bytes(&one, 1, kv, strlen(kv));
        pb_put_bytes(&one, 2, eq + 1, strlen(eq + 1));
        pb_put_bytes(&ts, 1, one.buf, one.len);
    }
    sbuf_add(&ts, samples->buf, samples->len);
    pb_put_bytes(req, 1, ts.buf, ts.len);
    free(copy);
    sbuf_free(&ts);
    sbuf_free(&one);
}

static void rw_sample(struct sbuf *samples, double v, long long ts)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(bits >> (8 * i));
    struct sbuf one = {0};
    pb_put_key(&one, 1, 1); /* double: fixed64 */
    sbuf_add(&one, (const char *)le, 8);
    pb_put_uint(&one, 2, (uint64_t)ts);
    pb_put_bytes(samples, 2, one.buf, one.len);
    sbuf_free(&one);
}

static int rw_bench(const char *url, long n, long long from, long long to, long long step)
{
    struct sbuf req = {0}, samples = {0};
    size_t nseries = 0;
    int rc = 0;
    char labels[256];
    for (long long w = from; w < to; w += 600) {
        long long we = w + 600 < to ? w + 600 : to;
        for (long i = 0; i < n; i++) {
            for (int kind = 0; kind < 2; kind++) {
                sbuf_reset(&samples);
                long long every = kind ? 240 : step;
                for (long long t = w + (every - (w - from) % every) % every; t < we; t += every)
                    rw_sample(&samples, kind ? 1.0 : i % 10 == 0 ? 0.5 : 0.01, t * 1000);
                if (!samples.len)
                    continue;
                if (kind)
                    snprintf(labels, sizeof(labels),
                             "__name__=gpureclaim:workload_devices:count,namespace=ns%ld,"
                             "pod=pod-%05ld,resource=amd.com/gpu",
                             i % 100, i);
                else
                    snprintf(
                        labels, sizeof(labels),
                        "__name__=gpureclaim:workload_busy:ratio,namespace=ns%ld,pod=pod-%05ld",
                        i % 100, i);
                rw_series(&req, labels, &samples);
                if (++nseries % 5000 == 0 && rw_send(url, &req) < 0)
                    rc = 1;
            }
        }
    }
    if (req.len && rw_send(url, &req) < 0)
        rc = 1;
    sbuf_free(&req);
    sbuf_free(&samples);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[2], "--bench") == 0) {
        char *url = xasprintf("%s/api/v1/write", argv[1]);
        int rc = rw_bench(url, atol(argv[3]), atoll(argv[4]), atoll(argv[5]), atoll(argv[6]));
        free(url);
        return rc;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: remote_write URL < SAMPLES\n");
        return 2;
    }
    char *url = xasprintf("%s/api/v1/write", argv[1]);
    struct sbuf req = {0}, samples = {0}, one = {0};
    char line[4096], cur[2048] = "";
    size_t nseries = 0;
    int rc = 0;
    while (fgets(line, sizeof(line), stdin)) {
        char labels[2048], val[64];
        long long ts;
        if (sscanf(line, "%2047s %lld %63s", labels, &ts, val) != 3)
            continue;
        if (strcmp(labels, cur) != 0) {
            if (cur[0]) {
                rw_series(&req, cur, &samples);
                if (++nseries % 5000 == 0 && rw_send(url, &req) < 0)
                    rc = 1;
            }
            sbuf_reset(&samples);
            snprintf(cur, sizeof(cur), "%s", labels);
        }
        double v;
        if (strcmp(val, "stale") == 0) {
            uint64_t bits = UINT64_C(0x7ff0000000000002);
            memcpy(&v, &bits, sizeof(v));
        } else {
            v = strtod(val, NULL);
        }
        uint64_t bits;
        memcpy(&bits, &v, sizeof(bits));
        unsigned char le[8];
        for (int i = 0; i < 8; i++)
            le[i] = (unsigned char)(bits >> (8 * i));
        sbuf_reset(&one);
        pb_put_key(&one, 1, 1); /* double: fixed64 */
        sbuf_add(&one, (const char *)le, 8);
        pb_put_uint(&one, 2, (uint64_t)ts);
        pb_put_bytes(&samples, 2, one.buf, one.len);
    }
    if (cur[0])
        rw_series(&req, cur, &samples);
    if (req.len && rw_send(url, &req) < 0)
        rc = 1;
    sbuf_free(&req);
    sbuf_free(&samples);
    sbuf_free(&one);
    free(url);
    return rc;
}
