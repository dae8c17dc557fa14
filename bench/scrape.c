/*
 * Scrape-latency client for the benchmarks: N sequential GET requests over fresh loopback
 * connections (as Prometheus makes them), each timed from connect to the last byte, then
 * the median and p99 in milliseconds. Raw sockets keep client overhead out of the numbers.
 *
 * usage: scrape PORT PATH COUNT
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static long scrape_once(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    char req[256];
    int n = snprintf(req, sizeof(req),
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     "Accept: text/plain\r\n\r\n",
                     path);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    char buf[65536];
    long total = 0;
    ssize_t r;
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        total += r;
    close(fd);
    return total;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: scrape PORT PATH COUNT\n");
        return 2;
    }
    int port = atoi(argv[1]);
    int count = atoi(argv[3]);
    double *lat = malloc(sizeof(double) * (size_t)count);
    long bytes = 0;
    for (int i = 0; i < count; i++) {
        double t0 = now();
        long b = scrape_once(port, argv[2]);
        lat[i] = (now() - t0) * 1e3;
        if (b <= 0) {
            fprintf(stderr, "scrape %d failed\n", i);
            return 1;
        }
        bytes = b;
    }
    qsort(lat, (size_t)count, sizeof(double), cmp);
    printf("%.3f %.3f %ld\n", lat[count / 2], lat[(int)(count * 0.99)], bytes);
    free(lat);
    return 0;
}
