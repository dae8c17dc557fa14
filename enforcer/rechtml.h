/*
 * `recommend --output html`: one self-contained page from the results of recommend (issue 32,
 * "A picture"). Per group, the grid drawn as an inline SVG chart (GPU-hours freed against the
 * share of returns, one point per grid setting, the frontier joined, the recommended and the
 * current setting marked, the target share a vertical line), and under it the table of the
 * figures and the frontier. No script, font, style sheet or image from anywhere: the page
 * opens from a file on a machine without network, and its Content-Security-Policy forbids any
 * fetch and any script, so a label value that escaped its escaping still could not run.
 * Every text from the history or the rules file (a namespace is user input) is HTML-escaped.
 * Pure: results in, bytes out; the figures are those of --output json, in the same format
 * (tests/e2e/recommend.sh compares them in the DOM Chromium renders).
 */
#ifndef GPURECLAIM_RECHTML_H
#define GPURECLAIM_RECHTML_H

#include <stdbool.h>
#include <stddef.h>

#include "recommend.h"
#include "util.h"

/* One group (a rule of R and a value of --by) as recommend scored it. */
struct rechtml_group {
    const char *rule;  /* R's rule */
    const char *name;  /* its rule in --output yaml */
    const char *value; /* the value of --by ("" when absent) */
    size_t workloads;
    const struct rec_point *cur;  /* R's own rule over the range chosen on, this group's part */
    const struct rec_point *pts;  /* every grid point, npts of them (the page's) */
    long chosen;                  /* index in pts, -1 when none */
    const char *reason;           /* why none (chosen < 0) */
    const struct rec_point *conf; /* the rules file's backtest of the chosen point, or NULL */
    const struct rec_point *held; /* the chosen point over the held-out part, or NULL */
    bool above_target;            /* the held-out share is above the target */
};

struct rechtml_page {
    const char *rules_file;
    const char *by;                      /* the label of --by */
    const char *chosen_from, *chosen_to; /* RFC 3339 */
    const char *held_from, *held_to;     /* NULL without a held-out part */
    double interval, return_within;      /* seconds */
    double max_share;                    /* the target, a fraction */
    size_t npts;                         /* grid points per group */
    const char *note;                    /* what the history cannot show (a paragraph) */
    const struct rechtml_group *g;
    size_t ng;
};

/* The page, appended to out. */
void rechtml_render(const struct rechtml_page *p, struct sbuf *out);

/* s HTML-escaped (& < > " ' and C0 controls) for text and double-quoted attribute values. */
void rechtml_escape(struct sbuf *out, const char *s);

#endif
