/*
 * Child processes for unit tests that talk to a server: the fakes in tests/fakes
 * (fake_prom, fake_kube) and real tools such as prometheus. A fake prints
 * "listening on PORT" on stdout once its socket is bound (port 0 lets the kernel pick a
 * free one), so a test starts it, reads that line, talks to 127.0.0.1:PORT and stops it by
 * its PID; stderr, where fake_prom logs one "request ..." line per request, goes to a file
 * the test can count lines in afterwards.
 *
 * Static inline so that every test can include this without unused-function warnings.
 */
#ifndef GPURECLAIM_FAKE_H
#define GPURECLAIM_FAKE_H

#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

#define FAKE_MAX_ARGS 32

struct fake {
    pid_t pid; /* 0 when not running */
    int port;
    char log[4200]; /* the child's stderr */
};

/*
 * fork/exec argv (argv[0] a path, or a name looked up in PATH). Its stderr goes to `log`
 * (created or truncated), and so does its stdout unless `out_fd` is given: then stdout is a
 * pipe whose read end is stored in *out_fd. The child's PID, or -1.
 */
static inline pid_t fake_spawn(char *const argv[], const char *log, int *out_fd)
{
    int pfd[2];
    if (pipe(pfd) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out_fd ? pfd[1] : fd, 1);
        dup2(fd, 2);
        close(pfd[0]);
        close(pfd[1]);
        close(fd);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pfd[1]);
    if (out_fd)
        *out_fd = pfd[0];
    else
        close(pfd[0]);
    return pid;
}

/* SIGTERM, up to 20 s to exit, then SIGKILL; always reaps. Safe on a fake not running. */
static inline void fake_stop(struct fake *f)
{
    if (f->pid <= 0)
        return;
    kill(f->pid, SIGTERM);
    for (int i = 0; i < 2000; i++) {
        if (waitpid(f->pid, NULL, WNOHANG) == f->pid) {
            f->pid = 0;
            return;
        }
        usleep(10000);
    }
    kill(f->pid, SIGKILL);
    waitpid(f->pid, NULL, 0);
    f->pid = 0;
}

/*
 * Start argv (NULL-terminated) with stderr into `log` and wait up to 60 s (a loaded machine,
 * or one running valgrind beside, starts a process slowly; the bound only guards a hang) for
 * "listening on PORT" on its stdout. 0 with f->pid and f->port set, or -1 with the child
 * stopped and the line it printed instead shown on stderr.
 */
static inline int fake_start_argv(struct fake *f, char *const argv[], const char *log)
{
    snprintf(f->log, sizeof(f->log), "%s", log);
    f->port = 0;
    int fd;
    f->pid = fake_spawn(argv, f->log, &fd);
    if (f->pid < 0) {
        f->pid = 0;
        return -1;
    }
    char line[64];
    size_t len = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (len < sizeof(line) - 1 && poll(&p, 1, 60000) > 0) {
        if (read(fd, &line[len], 1) != 1 || line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    close(fd);
    if (sscanf(line, "listening on %d", &f->port) != 1) {
        fprintf(stderr, "'%s' did not start: '%s'\n", argv[0], line);
        fake_stop(f);
        return -1;
    }
    return 0;
}

/*
 * fake_start_argv() of the arguments in `pre` (NULL-terminated, pre[0] the program) followed
 * by those in `ap` (char *, NULL-terminated), at most FAKE_MAX_ARGS - 1 in all; for helpers
 * that take a test's extra arguments as `...` after fixed ones of their own.
 */
static inline int fake_start_va(struct fake *f, char *const pre[], va_list ap, const char *log)
{
    char *argv[FAKE_MAX_ARGS];
    int n = 0;
    for (; pre[n] && n < FAKE_MAX_ARGS - 1; n++)
        argv[n] = pre[n];
    char *a;
    while (n < FAKE_MAX_ARGS - 1 && (a = va_arg(ap, char *)))
        argv[n++] = a;
    argv[n] = NULL;
    return fake_start_argv(f, argv, log);
}

/*
 * fake_start_argv() of `bin` with the arguments that follow (NULL-terminated, at most
 * FAKE_MAX_ARGS - 2), logging to <dir>/fake<N>.log, N counting the fakes this test started.
 */
static inline int fake_start(struct fake *f, const char *bin, const char *dir, ...)
{
    static int nlog;
    char log[4200];
    snprintf(log, sizeof(log), "%s/fake%d.log", dir, ++nlog);
    char *const pre[] = {(char *)bin, NULL};
    va_list ap;
    va_start(ap, dir);
    int r = fake_start_va(f, pre, ap, log);
    va_end(ap);
    return r;
}

/* The number of lines of the file at `path` that start with `prefix` (0 if unreadable). */
static inline int fake_log_count(const char *path, const char *prefix)
{
    char *s = test_read_file(path, NULL);
    int n = 0;
    size_t plen = strlen(prefix);
    for (char *p = s; p && *p;) {
        if (strncmp(p, prefix, plen) == 0)
            n++;
        char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
    }
    free(s);
    return n;
}

/*
 * The path of the fake `name` built next to the running test: build/tests/test_x ->
 * build/fakes/<name> (build/san/... under sanitizers).
 */
static inline void fake_bin_path(char *out, size_t cap, const char *argv0, const char *name)
{
    char self[4096];
    snprintf(self, sizeof(self), "%s", argv0);
    snprintf(out, cap, "%s/../fakes/%s", dirname(self), name);
}

/*
 * The source-tree directory `rel` ("tests/e2e/data/kube") the fakes serve: $env_var when set,
 * else `rel` from the current directory, else found by walking up from the running test.
 */
static inline void fake_data_dir(char *out, size_t cap, const char *argv0, const char *env_var,
                                 const char *rel)
{
    char self[4096];
    snprintf(self, sizeof(self), "%s", argv0);
    const char *dir = dirname(self), *env = getenv(env_var);
    snprintf(out, cap, "%s", env ? env : rel);
    for (int up = 0; up < 4 && access(out, R_OK) != 0; up++) {
        struct sbuf b = {0};
        sbuf_puts(&b, dir);
        for (int i = 0; i <= up; i++)
            sbuf_puts(&b, "/..");
        sbuf_printf(&b, "/%s", rel);
        snprintf(out, cap, "%s", b.buf);
        sbuf_free(&b);
    }
}

#endif
