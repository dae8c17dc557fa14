/*
 * Versioned reclaim rules: the in-memory form of a rules file and its strict loader.
 *
 * A rules file (apiVersion gpureclaim/v1, kind ReclaimRules) is parsed with libyaml into a
 * DOM that keeps file:line:column (yaml.h), then validated strictly: unknown keys, duplicate
 * keys, wrong types, out-of-range values and missing required keys are all errors naming
 * file:line:col and the key, and every error in a file is reported, not just the first.
 * An unknown apiVersion is refused with the list of versions this build understands.
 * The schema, every key with its default, is documented in rules/README.md, whose key tables
 * are generated from the loader's key specification (rules_schema_markdown).
 */
#ifndef GPURECLAIM_RULES_H
#define GPURECLAIM_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "action.h"
#include "match.h"
#include "tz.h"

#define RULES_API_VERSION "gpureclaim/v1"
#define RULES_KIND        "ReclaimRules"

enum rule_policy { POLICY_DURING_PRESSURE = 0, POLICY_ALWAYS };

/* A set of matchers that must all match (AND). */
struct matcher_set {
    struct matcher *m;
    size_t n;
};

struct rule_exemption {
    struct matcher_set match;
    char *reason; /* may be NULL */
};

/* Per-workload override: the first override whose matchers all match applies. */
struct rule_override {
    struct matcher_set match;
    bool has_threshold, has_idle_timer, has_enabled;
    double threshold;  /* percent */
    double idle_timer; /* seconds */
    bool enabled;      /* false: never reclaim matching workloads */
};

/* A weekly time window in which the rule is active. */
struct rule_window {
    unsigned days;       /* bit d set = active on weekday d (0 = Sunday ... 6 = Saturday) */
    int start_min;       /* minutes after midnight, inclusive */
    int end_min;         /* minutes after midnight, exclusive; end <= start wraps past midnight */
    int utc_offset_min;  /* local time = UTC + offset, when zone.name is NULL */
    struct tz_zone zone; /* `timeZone`: loaded zone (zone.name set), exclusive with utcOffset */
};

/*
 * Webhook notices of a rule (`notify:`, delivered by notify.c). url_file NULL: none. The URL
 * is a secret, so only the path of the file holding it is kept; it is read at send time.
 */
enum rule_notify_format { NOTIFY_FORMAT_JSON = 0, NOTIFY_FORMAT_SLACK };
#define RULE_NOTIFY_NOTICE 1u /* a notice was posted */
#define RULE_NOTIFY_ACTION 2u /* the action succeeded */
#define RULE_NOTIFY_SPARE  4u /* a pending notice was withdrawn: the workload is active again */
struct rule_notify {
    char *url_file;
    enum rule_notify_format format; /* default json (the audit record) */
    unsigned events;                /* RULE_NOTIFY_* bits; default all three */
};

struct rule {
    char *name;
    char *file; /* position of the rule in its file, for messages */
    int line, col;

    bool enabled;              /* default true */
    enum rule_policy policy;   /* default DuringGPUPressure */
    double threshold;          /* percent of allocated compute, 0 < t <= 100; required */
    double idle_timer;         /* seconds; required */
    double step;               /* seconds, resolution of the range query; default 60 */
    double tolerated_gap;      /* seconds; default 2 x step */
    double notice_period;      /* seconds between notice and action; default 0 */
    double max_keep_until;     /* seconds after the notice an owner's keep-until may reach;
                                  default 0: the annotation is not honoured */
    unsigned max_terminations; /* per cycle, >= 1; default 1 */
    bool dry_run;              /* default false */
    enum rule_action action;   /* default report */

    /* Sources (PromQL). `activity` is a ratio 0..1 of what the workload was allocated. */
    char *q_activity;   /* default "gpureclaim:workload_busy:ratio" */
    char *q_allocation; /* default "gpureclaim:workload_devices:count" */
    char *q_pending;    /* default: pending pods requesting amd.com GPUs (kube-state-metrics) */
    char *q_priority;   /* optional, NULL when unset */
    char **identity;    /* identity labels of a workload; default [namespace, pod] */
    size_t nidentity;
    char *resource_label; /* label naming the GPU resource; default "resource" */

    /* Position of the `activity` value in its file (0 when it is the default). */
    int activity_line, activity_col;

    char **namespaces; /* scope: empty = every namespace */
    size_t nnamespaces;
    struct matcher_set scope; /* scope matchers, all must match */
    struct rule_exemption *exemptions;
    size_t nexemptions;
    struct rule_override *overrides;
    size_t noverrides;
    struct rule_window *windows; /* empty = always active */
    size_t nwindows;
    struct rule_notify notify;
};

struct kinds; /* kinds.h */

struct ruleset {
    char *file;
    char *api_version;
    char hash[17]; /* FNV-1a 64 of the file content, hex */
    struct rule *rules;
    size_t n;
    /* The workload kinds the Kubernetes backend acts on (kinds.h): the built-in rows plus the
       file's `kinds:` section. Never NULL after a successful load. */
    struct kinds *kinds;
    /* Notes from loading that are not errors, "file:line:col: note: ..." (a user kind row
       replacing a built-in one); `check` prints them, `run` may log them. */
    char **notes;
    size_t nnotes;
};

/* Error list: each entry is "file:line:col: message" (git style, no final full stop). */
struct rules_errors {
    char **msg;
    size_t n;
};

/*
 * Largest rules file accepted. Kubernetes keeps a ConfigMap under 1 MiB, and rules files
 * written by hand are a few KB; loading costs about 30 bytes of memory per byte of YAML (the
 * positioned DOM plus the rules: 124 MiB peak for 3.9 MB and 62,000 rules), so 4 MiB bounds
 * a load near 125 MiB and a few seconds while leaving generated files four times the size
 * of a ConfigMap.
 */
#define RULES_MAX_FILE_BYTES (4u << 20)

/*
 * Total size of the compiled regular expressions of one file, in RE2 instructions. Each
 * pattern is bounded on its own (MATCH_RE_MAX_MEM), but 4 MiB of 40-byte matchers such as
 * `p=~"[\x{0}-\x{10FFFF}]{1000}"` (7,004 instructions each) would still need gigabytes;
 * real matchers compile to 10-100 instructions, so a million leaves room for 10,000 of them.
 */
#define RULES_MAX_RE_INSTS 1000000

/* Load and validate a file. Returns 0, or -1 with every problem appended to errs. */
int rules_load_file(const char *path, struct ruleset *out, struct rules_errors *errs);
/* Same from a buffer; `name` is used in messages and as ruleset.file. */
int rules_load_buffer(const char *name, const char *buf, size_t len, struct ruleset *out,
                      struct rules_errors *errs);
void rules_free(struct ruleset *rs);
void rules_errors_free(struct rules_errors *errs);

/* `check FILE...`: print every error to `out`, a summary per file; return the error count. */
int rules_check_files(char *const *paths, size_t n, void *out_file);

const char *rules_policy_name(enum rule_policy p);
const char *rules_action_name(enum rule_action a);

/*
 * Print a key table of rules/README.md, generated from the loader's key specification:
 * `table` is "rule-keys" or "queries". Returns 0, or -1 for an unknown table name.
 */
int rules_schema_markdown(const char *table, void *out_file);

#endif
