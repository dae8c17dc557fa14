/*
 * The series selectors inside a PromQL expression, for proving the raw coverage of a rule
 * whose `activity` is an expression (docs/promql-plan.md §5.8).
 *
 * A pure parser of the PromQL grammar of Prometheus 2.x (operators with their precedence and
 * modifiers, aggregations, function calls, range selectors, subqueries, offset and @): it
 * evaluates nothing and knows no server. For each selector it reports the text to read its
 * raw samples with, and how far before an evaluation time those samples can matter (its
 * range, offset and the ranges of the subqueries around it). A construct whose samples
 * cannot be placed in time or whose output no raw sample backs makes the whole expression
 * "cannot extract safely", with a message; the caller then keeps every workload of the rule.
 */
#ifndef GPURECLAIM_PROMSEL_H
#define GPURECLAIM_PROMSEL_H

#include <stdbool.h>
#include <stddef.h>

struct promsel_sel {
    char *text;   /* `name{label="v",...}` (or `{...}`): the selector without range or modifiers,
                     matchers in their written order with their written quoting */
    double reach; /* seconds before an evaluation time at which its samples can still matter:
                     its range, its offset and every enclosing subquery's range, added up; the
                     largest where the same selector appears several times */
    bool gate;    /* only ever on the right-hand side of `unless`: it only removes series from
                     the result, so its absence for a workload is the normal case */
};

struct promsel {
    struct promsel_sel *sel; /* distinct selectors, in order of first appearance */
    size_t nsel;
    /* Label names the expression writes into its result: the destination of label_replace and
       label_join, and the labels group_left / group_right copy from the other side. A series'
       own labels then no longer say which output series it feeds. */
    char **written;
    size_t nwritten;
    /* Label names the expression groups or matches on: by (...), on (...) and the
       group_left / group_right lists. Distinct values of these are distinct parts (devices). */
    char **grouping;
    size_t ngrouping;
};

/*
 * Parse `expr` and list its selectors into *out (free with promsel_free; after a failure
 * it lists nothing). Returns 0, or -1 with a message in err when the expression is not PromQL this
 * parser knows or holds a construct that cannot be extracted safely: the @ modifier, a
 * negative offset, an offset or @ on a subquery, absent() / absent_over_time() (their result
 * stands for series that do not exist), count_values() (it turns values into labels), an
 * unknown function, or no selector at all.
 */
int promsel_extract(const char *expr, struct promsel *out, char *err, size_t errlen);
void promsel_free(struct promsel *p);

/* True when `name` is one of the names p->written lists. */
bool promsel_writes(const struct promsel *p, const char *name);

#endif
