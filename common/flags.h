/*
 * Command-line flags of both programs, from one table per program: parsing, typed values,
 * defaults and --help come from the same rows, so they cannot drift apart, and a flag the
 * two programs share (--web.*, --log.*) parses the same way in both because the same code
 * reads it.
 *
 * Conventions are node_exporter's (kingpin): long dotted names, `--flag=value` or
 * `--flag value`, booleans as `--flag`, `--flag=true|false` or `--no-flag`, --help and
 * --version. A value is checked when it is parsed, against the row's type and range, so a
 * typo stops the start with a message naming the flag instead of surfacing later (or never,
 * for a flag the command does not read).
 *
 * Durations are Prometheus durations (dur.h: "10s", "1m30s", "500ms"). A bare number
 * ("10", "0.5") is still read as seconds, with one warning: the exporter took bare seconds
 * before both programs shared this parser, and an upgraded systemd unit or DaemonSet that
 * passes `--web.read-header-timeout=10` must keep starting, with the same meaning.
 *
 * Exit status, both programs: 0 success; 1 the program could not do what it was asked
 * because of its input or environment: a usage error (unknown flag, bad value), a bad
 * configuration or rules file, a start-up failure. Codes from 2 are command-specific and
 * documented by the program (the enforcer's `explain` and `plan`). 1 for usage errors is
 * what node_exporter (kingpin) exits with, and the enforcer's 2 was taken by `explain`.
 */
#ifndef GPURECLAIM_FLAGS_H
#define GPURECLAIM_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FLAGS_EXIT_USAGE 1

enum flags_type {
    FLAGS_STRING,   /* any text; "" is unset */
    FLAGS_BOOL,     /* --x, --x=true|false, --no-x */
    FLAGS_SWITCH,   /* --help, --version: no value and no --no- form */
    FLAGS_DURATION, /* dur_parse syntax, or a bare number of seconds (warned); see min/max */
    FLAGS_COUNT,    /* a whole decimal number; see min/max */
    FLAGS_CHOICE,   /* one of `choices` */
    FLAGS_URL_PATH, /* an HTTP path: starts with '/' */
};

/*
 * One flag. A program's table is an array of rows, written as
 *   {"name", FLAGS_TYPE, "default", "help"}
 * with `.min`, `.max` or `.choices` added where the type takes them; the rest is filled by
 * flags_parse.
 */
struct flags_def {
    const char *name; /* without the leading "--" */
    enum flags_type type;
    const char *def; /* the default, written as on the command line ("" for none) */
    const char *help;
    /*
     * DURATION (seconds) and COUNT: the inclusive range when max > 0. Without one a duration
     * must be positive and a count is any number up to 2^53 (exact in a double).
     */
    double min, max;
    const char *choices; /* CHOICE: the values, comma-separated: "logfmt,json" */
    /* The program's own: the enforcer's flag group (enforcer/cmd.h). flags_parse ignores it. */
    unsigned group;

    /* Filled by flags_parse. */
    const char *value; /* as given (pointing into argv), or def */
    bool set;          /* given on the command line */
    double num;        /* BOOL/SWITCH 0 or 1, DURATION seconds, COUNT the number */
    bool bare_seconds; /* a DURATION given as a number without a unit */
};

/*
 * Parse argv[1..argc-1] into the n rows (resetting what an earlier call filled). Arguments
 * that are not flags, and all after "--", go to pos (room for argc entries) in order, *npos
 * their count; with pos NULL a positional argument is a usage error. "-h" is --help, and one
 * leading dash works as two. A flag given twice takes the last value. Returns 0, or -1 with
 * the first error in err ("unknown flag '--x'", "invalid value 'x' for '--y': want ...").
 */
int flags_parse(struct flags_def *rows, size_t n, int argc, char **argv, char **pos, size_t *npos,
                char *err, size_t errlen);

/* The row named `name` (without "--"), or NULL. */
struct flags_def *flags_find(struct flags_def *rows, size_t n, const char *name);

/*
 * Log, once each, what the parse accepted but the user should change: a duration given as a
 * bare number of seconds. Call it after --log.level and --log.format are applied.
 */
void flags_log_warnings(const struct flags_def *rows, size_t n);

/* Print the rows, one flag per entry with its default, for --help. */
void flags_help(FILE *out, const struct flags_def *rows, size_t n);

/*
 * Print a usage error the way both programs do: "error: <err>" and a pointer to --help, on
 * stderr. Returns FLAGS_EXIT_USAGE, for `return flags_usage_error(...)` in main.
 */
int flags_usage_error(const char *prog, const char *err);

#endif
