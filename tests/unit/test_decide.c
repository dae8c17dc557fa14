/*
 * Tests for decide.c: one table of cases, each a rule (as differences from a default rule),
 * a few series written as compact value strings, a time and the decision expected for every
 * workload, run as one test each; then the pieces that do not fit the table (statistics,
 * ordering across rules, determinism, lookback, time windows, names).
 *
 * Value strings: space-separated tokens, one per step of 60 s starting at `t0` seconds
 * from now: a number, `N` (NaN), `I` / `-I` (+-Inf), `_` (no point: a gap), and `x*n` to
 * repeat a token n times. ACT series are the step grid itself, and their raw samples are
 * taken to be at the grid points; RAW series are raw samples every `every` seconds, from
 * which the grid is computed as Prometheus 2.x does (sim_grid). Either way the raw-coverage
 * series decide() pairs with each activity series is computed from the raw sample times as
 * the coverage query of fetch.c does (sim_coverage), so the tests exercise the same
 * arithmetic as a real Prometheus answer. Instant series (allocation, pending, priority) have one
 * value at now. The default rule: Always, threshold 10 %, idle timer 600 s, step 60 s, tolerated
 * gap 120 s, at most 10 terminations, identity (namespace, pod), resource label "resource".
 */
#include "decide.c"

#include "test.h"

#define NOW  1767225600.0 /* 2026-01-01T00:00:00Z, a Thursday */
#define STEP 60.0

enum skind { S_NONE = 0, S_ACT, S_ALLOC, S_PEND, S_PRIO, S_RAW };

struct sspec {
    enum skind kind;
    const char *labels; /* "namespace=a,pod=p" */
    double t0;          /* first point, seconds relative to now */
    const char *values;
    double every; /* S_RAW: seconds between raw samples */
};

struct xspec {
    const char *id; /* identity label values joined by '/' */
    enum decision dec;
    enum reason reason;
    const char *since;  /* NULL: not checked; "nan"; or seconds relative to now */
    const char *detail; /* NULL, or a substring the detail must contain */
};

struct rspec {
    bool pressure, disabled, dry_run;
    double threshold, idle, gap; /* 0: default */
    unsigned max_term;           /* 0: default 10 */
    const char *identity;        /* comma list; NULL: "namespace,pod" */
    const char *namespaces;      /* comma list */
    const char *scope;           /* ';'-separated matchers */
    const char *exempt;          /* matchers of one exemption */
    const char *exempt_reason;
    const char *ov_match; /* matchers of one override */
    double ov_thr, ov_idle;
    bool ov_disable;
    struct rule_window win[3]; /* used while days != 0 */
    bool grid_only;            /* activity is an expression: no raw coverage fetched */
};

struct tcase {
    const char *name;
    struct rspec r;
    struct sspec s[10];
    double now_off; /* added to NOW */
    int error, pending_error;
    struct xspec x[6];
};

#define ALLDAYS 0x7fu
#define THU     (1u << 4)
#define WED     (1u << 3)
#define FRI     (1u << 5)

#define ACT(l, t0, v)                                                                              \
    {                                                                                              \
        S_ACT, l, t0, v, 0                                                                         \
    }
#define RAW(l, t0, every, v)                                                                       \
    {                                                                                              \
        S_RAW, l, t0, v, every                                                                     \
    }
#define ALLOC(l, v)                                                                                \
    {                                                                                              \
        S_ALLOC, l, 0, v, 0                                                                        \
    }
#define PEND(l, v)                                                                                 \
    {                                                                                              \
        S_PEND, l, 0, v, 0                                                                         \
    }
#define PRIO(l, v)                                                                                 \
    {                                                                                              \
        S_PRIO, l, 0, v, 0                                                                         \
    }
#define RECLAIM(id, s)                                                                             \
    {                                                                                              \
        id, DECISION_RECLAIM, REASON_IDLE, s, NULL                                                 \
    }
#define KEEP(id, r)                                                                                \
    {                                                                                              \
        id, DECISION_KEEP, r, NULL, NULL                                                           \
    }
#define KEEPS(id, r, s)                                                                            \
    {                                                                                              \
        id, DECISION_KEEP, r, s, NULL                                                              \
    }
#define KEEPD(id, r, d)                                                                            \
    {                                                                                              \
        id, DECISION_KEEP, r, NULL, d                                                              \
    }

/* Idle for the 20 minutes before now; idle since -1200. */
#define IDLE20 "0*21"
/* Active until 11 minutes ago: idle for exactly the window, since -600. */
#define IDLE10 "0.5*10 0*11"
/* Idle since -900. */
#define IDLE15 "0.5*5 0*16"

static const struct tcase cases[] = {
    /* ---- the window check ---- */
    {"idle_for_exactly_the_window",
     {0},
     {ACT("namespace=a,pod=p", -1200, IDLE10)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-600")}},
    {"burst_at_window_start",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0.5*11 0*10")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_ACTIVE, "nan")}},
    {"burst_in_the_middle",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*15 0.5 0*5")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_ACTIVE, "nan")}},
    {"burst_at_now",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*20 0.5")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_ACTIVE)}},
    {"value_at_threshold_is_active",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*20 0.1")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_ACTIVE)}},
    {"value_just_below_threshold",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0.0999*21")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"burst_before_window_ignored",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*9 1 0*11")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-600")}},
    {"too_young",
     {0},
     {ACT("namespace=a,pod=p", -540, "0*10")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_TOO_YOUNG, "nan")}},
    /* Its first step's sub-points before the first sample are uncovered: one more cycle. */
    {"first_point_at_window_start_is_not_yet_proven",
     {0},
     {ACT("namespace=a,pod=p", -600, "0*11")},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_TOO_YOUNG, "the raw samples of that step are not proven")}},
    {"first_point_one_step_before_window_start",
     {0},
     {ACT("namespace=a,pod=p", -660, "0*12")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-660")}},
    {"gap_of_tolerated_gap_is_fine",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*10 _ 0*10")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"gap_of_one_step_more_is_not",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*13 _ _ 0*6")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_GAP, "nan")}},
    {"gap_before_window_bounds_idle_since",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*3 _ _ 0*16")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-900")}},
    {"gap_spanning_window_start",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*9 _ _ 0*10")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_GAP)}},
    {"stale_series",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*18")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_STALE, "nan")}},
    {"last_point_one_step_ago",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*20 _")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"nan_in_window",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*15 N 0*5")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_NOT_A_NUMBER, "nan")}},
    {"inf_in_window",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*20 I")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_NOT_A_NUMBER)}},
    {"minus_inf_in_window",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*12 -I 0*8")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_NOT_A_NUMBER)}},
    {"nan_before_window_ignored",
     {0},
     {ACT("namespace=a,pod=p", -1200, "N 0*20")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1140")}},
    {"no_activity_but_allocated",
     {0},
     {ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_NO_DATA, "nan")}},
    {"query_error",
     {0},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     1,
     0,
     {KEEPD("a/p", REASON_QUERY_ERROR, "query failed: cannot reach 'http://127.0.0.1:9/'")}},
    {"precedence_active_over_gap_and_nan",
     {0},
     {ACT("namespace=a,pod=p", -1200, "0*12 _ _ N 0.5 0*4")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_ACTIVE)}},
    {"precedence_stale_over_young",
     {0},
     {ACT("namespace=a,pod=p", -300, "0*2")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_STALE)}},
    {"series_without_identity_ignored",
     {0},
     {ACT("namespace=a", -1200, IDLE20), ACT("namespace=a,pod=", -1200, IDLE20)},
     0,
     0,
     0,
     {{0}}},

    /* ---- merging and identity ---- */
    {"two_series_one_identity_max_merge",
     {0},
     {ACT("gpu=0,namespace=a,pod=p", -1200, IDLE20),
      ACT("gpu=1,namespace=a,pod=p", -1200, "0*15 0.5 0*5"),
      ACT("gpu=0,namespace=a,pod=q", -1200, IDLE20)},
     0,
     0,
     0,
     {KEEP("a/p", REASON_ACTIVE), RECLAIM("a/q", "-1200")}},
    {"merge_busy_beats_nan",
     {0},
     {ACT("gpu=0,namespace=a,pod=p", -1200, "0*16 N 0*4"),
      ACT("gpu=1,namespace=a,pod=p", -1200, "0*16 0.5 0*4"),
      ACT("gpu=0,namespace=a,pod=q", -1200, "0*16 N 0*4"),
      ACT("gpu=1,namespace=a,pod=q", -1200, IDLE20)},
     0,
     0,
     0,
     {KEEP("a/p", REASON_ACTIVE), KEEP("a/q", REASON_NOT_A_NUMBER)}},
    /* Each series is judged before merging: a neighbour's points do not fill a gap. */
    {"two_series_do_not_fill_each_others_gaps",
     {0},
     {ACT("gpu=0,namespace=a,pod=p", -1200, "0*10 _ _ 0*9"),
      ACT("gpu=1,namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_GAP, "{gpu=\"0\",namespace=\"a\",pod=\"p\"}: no data from")}},
    {"custom_identity_merges_pods",
     {.identity = "namespace,job"},
     {ACT("job=j,namespace=a,pod=p1", -1200, IDLE20),
      ACT("job=j,namespace=a,pod=p2", -1200, "0*20 0.3"),
      ACT("job=k,namespace=a,pod=p3", -1200, IDLE20)},
     0,
     0,
     0,
     {KEEP("a/j", REASON_ACTIVE), RECLAIM("a/k", "-1200")}},

    /* ---- judged per series, on raw sample times (RAW: samples every 15 s) ---- */
    /* GPU0 at 90 % went silent 15 minutes ago; its idle neighbour must not hide that. */
    {"silent_device_next_to_idle_one",
     {0},
     {RAW("gpu=0,namespace=a,pod=p", -1800, 15, "0.9*61"),
      RAW("gpu=1,namespace=a,pod=p", -1800, 15, "0.01*121")},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_STALE, "{gpu=\"0\",namespace=\"a\",pod=\"p\"}: last point at")}},
    {"device_silent_inside_window_next_to_idle_one",
     {0},
     {RAW("gpu=0,namespace=a,pod=p", -1800, 15, "0.01*90 _*20 0.01*11"),
      RAW("gpu=1,namespace=a,pod=p", -1800, 15, "0.01*121")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_GAP)}},
    /* The grid's last point (-120) covers a sample 180 s old: stale by the raw times. */
    {"last_raw_sample_3_minutes_old",
     {0},
     {RAW("namespace=a,pod=p", -1800, 15, "0.01*109")},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_STALE, "no raw sample within the tolerated gap 2m")}},
    {"last_raw_sample_90_seconds_old",
     {0},
     {RAW("namespace=a,pod=p", -1800, 15, "0.01*115")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    /* Samples at -510 and -360: a 150 s hole the 60 s grid shows as one missing point. */
    {"raw_gap_hidden_by_the_grid",
     {0},
     {RAW("namespace=a,pod=p", -1800, 15, "0.01*87 _*9 0.01*25")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_GAP)}},
    /* A 90 s hole is within toleratedGap - resolution (105 s): still idle. */
    {"raw_gap_within_tolerated_gap",
     {0},
     {RAW("namespace=a,pod=p", -1800, 15, "0.01*87 _*5 0.01*29")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"raw_samples_between_grid_points",
     {0},
     {RAW("namespace=a,pod=p", -1793, 15, "0.01*120")},
     0,
     0,
     0,
     {RECLAIM("a/p", NULL)}},
    /*
     * R = 12.5 s (toleratedGap 50 s / 4): the first sample (-481) comes after the last
     * sub-point (-487.5) of its step, whose coverage is therefore absent: young, not a gap.
     */
    {"series_starting_after_the_last_sub_point_of_a_step",
     {.gap = 50},
     {RAW("namespace=a,pod=p", -481, 15, "0.01*33")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_TOO_YOUNG)}},
    /* An expression: raw times unknown, so any step without a point is a gap. */
    {"expression_missing_step_is_a_gap",
     {.grid_only = true},
     {ACT("namespace=a,pod=p", -1200, "0*10 _ 0*10")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_GAP)}},
    {"expression_missing_last_step_is_stale",
     {.grid_only = true},
     {ACT("namespace=a,pod=p", -1200, "0*20 _")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_STALE)}},
    {"expression_complete_grid_is_idle",
     {.grid_only = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},

    /* ---- scope, exemptions, overrides ---- */
    {"scope_by_namespace",
     {.namespaces = "a,c"},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ACT("namespace=b,pod=p", -1200, IDLE20),
      ALLOC("namespace=b,pod=q,resource=amd.com/gpu", "1")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"scope_by_matchers",
     {.scope = "team='ml';pod!~'sys-.*'"},
     {ACT("namespace=a,pod=p,team=ml", -1200, IDLE20),
      ACT("namespace=a,pod=q,team=web", -1200, IDLE20),
      ACT("namespace=a,pod=sys-1,team=ml", -1200, IDLE20)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"scope_label_from_allocation",
     {.scope = "resource='amd.com/gpu'"},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      ACT("namespace=a,pod=q", -1200, IDLE20)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"exemption",
     {.exempt = "pod=~'keep-.*'", .exempt_reason = "interactive"},
     {ACT("namespace=a,pod=keep-1", -1200, IDLE20), ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {{"a/keep-1", DECISION_KEEP, REASON_EXEMPT, "-1200", "exempt: interactive"},
      RECLAIM("a/p", "-1200")}},
    {"exemption_over_active",
     {.exempt = "namespace='a'"},
     {ACT("namespace=a,pod=p", -1200, "0.9*21")},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_EXEMPT, "matches exemption 1")}},
    {"override_threshold",
     {.ov_match = "namespace='b'", .ov_thr = 60},
     {ACT("namespace=a,pod=p", -1200, "0.5*21"), ACT("namespace=b,pod=p", -1200, "0.5*21")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_ACTIVE), RECLAIM("b/p", "-1200")}},
    {"override_longer_idle_timer",
     {.ov_match = "namespace='b'", .ov_idle = 1200},
     {ACT("namespace=a,pod=p", -1200, IDLE15), ACT("namespace=b,pod=p", -1200, IDLE15)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-900"), KEEP("b/p", REASON_ACTIVE)}},
    {"override_shorter_idle_timer",
     {.ov_match = "namespace='b'", .ov_idle = 300},
     {ACT("namespace=a,pod=p", -1200, "0.5*14 0*7"), ACT("namespace=b,pod=p", -1200, "0.5*14 0*7")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_ACTIVE), RECLAIM("b/p", "-360")}},
    {"override_enabled_false",
     {.ov_match = "pod='p'", .ov_disable = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ACT("namespace=a,pod=q", -1200, IDLE20)},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_EXEMPT, "override 1 has enabled: false"), RECLAIM("a/q", "-1200")}},
    {"rule_disabled",
     {.disabled = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_RULE_DISABLED, "rule 'test' is disabled")}},
    {"query_error_over_exemption",
     {.exempt = "namespace='a'"},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     1,
     0,
     {KEEP("a/p", REASON_QUERY_ERROR)}},

    /* ---- active time windows (NOW is Thursday 00:00 UTC) ---- */
    {"window_inside",
     {.win = {{ALLDAYS, 0, 60, 0}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"window_outside",
     {.win = {{ALLDAYS, 8 * 60, 18 * 60, 0}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ACT("namespace=a,pod=q", -1200, "0*20 1")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_OUTSIDE_WINDOW, "-1200"), KEEP("a/q", REASON_ACTIVE)}},
    {"window_wrap_from_wednesday",
     {.win = {{WED, 22 * 60, 6 * 60, 0}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"window_wrap_belongs_to_start_day",
     {.win = {{THU, 22 * 60, 6 * 60, 0}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {KEEP("a/p", REASON_OUTSIDE_WINDOW)}},
    {"window_utc_offset",
     {.win = {{THU, 9 * 60, 10 * 60, 9 * 60}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"window_negative_utc_offset",
     {.win = {{WED, 19 * 60, 20 * 60, -5 * 60}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"window_other_weekday",
     {.win = {{FRI, 0, 24 * 60, 0}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {KEEP("a/p", REASON_OUTSIDE_WINDOW)}},
    {"window_second_of_two",
     {.win = {{FRI, 0, 24 * 60, 0}, {THU, 0, 30, 0}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20)},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},

    /* ---- policy Always and the cycle cap ---- */
    {"always_several_idle",
     {0},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ACT("namespace=a,pod=q", -1200, IDLE10),
      ACT("namespace=b,pod=r", -1200, IDLE15), ACT("namespace=b,pod=s", -1200, "0*20 1")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200"), RECLAIM("a/q", "-600"), RECLAIM("b/r", "-900"),
      KEEP("b/s", REASON_ACTIVE)}},
    {"cycle_cap_longest_idle_first",
     {.max_term = 2},
     {ACT("namespace=a,pod=p", -1200, IDLE10), ACT("namespace=a,pod=q", -1200, IDLE20),
      ACT("namespace=a,pod=r", -1200, IDLE15), ACT("namespace=a,pod=s", -1200, IDLE10)},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_CYCLE_CAP, "-600"), RECLAIM("a/q", "-1200"), RECLAIM("a/r", "-900"),
      KEEP("a/s", REASON_CYCLE_CAP)}},
    {"cycle_cap_priority_first",
     {.max_term = 1},
     {ACT("namespace=a,pod=p", -1200, IDLE10), ACT("namespace=a,pod=q", -1200, IDLE20),
      PRIO("namespace=a,pod=p", "-5"), PRIO("namespace=a,pod=q", "100")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-600"), KEEP("a/q", REASON_CYCLE_CAP)}},

    /* ---- policy DuringGPUPressure ---- */
    {"pressure_no_demand",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20),
      ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1")},
     0,
     0,
     0,
     {KEEPS("a/p", REASON_NO_PRESSURE, "-1200")}},
    {"pressure_demand_sanitised_names",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      PEND("resource=amd_com_gpu", "1")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    {"pressure_sanitised_other_way",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd_com_gpu", "1"),
      PEND("resource=amd.com/gpu", "1")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-1200")}},
    /* Two raw names that read alike once sanitised: which one is pending is unknown. */
    {"pressure_sanitised_collision_pending",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      PEND("namespace=x,pod=w1,resource=amd_com/gpu", "1")},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_PRESSURE_UNKNOWN,
            "'amd.com/gpu' and 'amd_com/gpu' are one resource once sanitised ('amd_com_gpu')")}},
    {"pressure_sanitised_collision_candidates",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      ACT("namespace=a,pod=q", -1200, IDLE20), ALLOC("namespace=a,pod=q,resource=amd.com_gpu", "1"),
      PEND("resource=amd_com_gpu", "2")},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_PRESSURE_UNKNOWN, "which one is pending is unknown"),
      KEEP("a/q", REASON_PRESSURE_UNKNOWN)}},
    {"pressure_demand_for_other_resource",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      PEND("resource=nvidia_com_gpu", "2"), PEND("resource=amd_com_gpu", "0")},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_NO_PRESSURE, "nothing is pending for 'amd.com/gpu'")}},
    {"pressure_active_not_a_candidate",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, "0*20 1"),
      ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"), PEND("resource=amd_com_gpu", "1")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_ACTIVE)}},
    {"fit_check_fails_all_or_nothing",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      ACT("namespace=a,pod=q", -1200, IDLE20), ALLOC("namespace=a,pod=q,resource=amd.com/gpu", "2"),
      PEND("namespace=x,pod=w1,resource=amd_com_gpu", "2"),
      PEND("namespace=x,pod=w2,resource=amd_com_gpu", "2")},
     0,
     0,
     0,
     {KEEPD("a/p", REASON_FIT_CHECK, "hold 3 'amd_com_gpu', less than the 4 pending"),
      KEEP("a/q", REASON_FIT_CHECK)}},
    {"fit_check_longest_idle_first",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE15), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      ACT("namespace=a,pod=q", -1200, IDLE10), ALLOC("namespace=a,pod=q,resource=amd.com/gpu", "2"),
      ACT("namespace=a,pod=r", -1200, IDLE20), ALLOC("namespace=a,pod=r,resource=amd.com/gpu", "1"),
      PEND("resource=amd_com_gpu", "2")},
     0,
     0,
     0,
     {RECLAIM("a/p", "-900"), KEEPS("a/q", REASON_NOT_NEEDED, "-600"), RECLAIM("a/r", "-1200")}},
    {"fit_check_stops_when_covered",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE10), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      ACT("namespace=a,pod=q", -1200, IDLE20), ALLOC("namespace=a,pod=q,resource=amd.com/gpu", "4"),
      PEND("resource=amd_com_gpu", "3")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_NOT_NEEDED), RECLAIM("a/q", "-1200")}},
    {"priority_before_idle_time",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      PRIO("namespace=a,pod=p", "1000"), ACT("namespace=a,pod=q", -1200, IDLE10),
      ALLOC("namespace=a,pod=q,resource=amd.com/gpu", "1"), PRIO("namespace=a,pod=q", "10"),
      PEND("resource=amd_com_gpu", "1")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_NOT_NEEDED), RECLAIM("a/q", "-600")}},
    {"pressure_per_resource",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      ACT("namespace=a,pod=q", -1200, IDLE20),
      ALLOC("namespace=a,pod=q,resource=amd.com/cpx_nps4", "1"),
      PEND("resource=amd_com_cpx_nps4", "1")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_NO_PRESSURE), RECLAIM("a/q", "-1200")}},
    {"pending_query_error",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      PEND("resource=amd_com_gpu", "1"), ACT("namespace=a,pod=q", -1200, "0*20 1")},
     0,
     0,
     1,
     {KEEP("a/p", REASON_PRESSURE_UNKNOWN), KEEP("a/q", REASON_ACTIVE)}},
    {"pressure_unknown_allocation",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=q,resource=amd.com/gpu", "1"),
      ACT("namespace=a,pod=q", -1200, IDLE20), PEND("resource=amd_com_gpu", "1")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_NO_ALLOCATION), RECLAIM("a/q", "-1200")}},
    {"pressure_allocation_nan_is_unknown",
     {.pressure = true},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "N"),
      PEND("resource=amd_com_gpu", "1")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_NO_ALLOCATION)}},
    {"pressure_then_cycle_cap",
     {.pressure = true, .max_term = 1},
     {ACT("namespace=a,pod=p", -1200, IDLE10), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      ACT("namespace=a,pod=q", -1200, IDLE20), ALLOC("namespace=a,pod=q,resource=amd.com/gpu", "1"),
      PEND("resource=amd_com_gpu", "2")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_CYCLE_CAP), RECLAIM("a/q", "-1200")}},
    {"pressure_outside_window",
     {.pressure = true, .win = {{FRI, 0, 60, 0}}},
     {ACT("namespace=a,pod=p", -1200, IDLE20), ALLOC("namespace=a,pod=p,resource=amd.com/gpu", "1"),
      PEND("resource=amd_com_gpu", "1")},
     0,
     0,
     0,
     {KEEP("a/p", REASON_OUTSIDE_WINDOW)}},
};

/* ---- builders ---- */

static char **split(const char *s, char sep, size_t *n)
{
    char **v = NULL;
    *n = 0;
    if (!s || !*s)
        return NULL;
    const char *p = s;
    for (;;) {
        const char *e = strchr(p, sep);
        size_t len = e ? (size_t)(e - p) : strlen(p);
        v = xrealloc(v, (*n + 1) * sizeof(*v));
        v[(*n)++] = xstrndup(p, len);
        if (!e)
            break;
        p = e + 1;
    }
    return v;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void parse_matchers(const char *s, struct matcher_set *out)
{
    size_t n;
    char **v = split(s, ';', &n);
    out->m = n ? xcalloc(n, sizeof(*out->m)) : NULL;
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        char err[160];
        int rc = match_parse(v[i], &out->m[i], err, sizeof(err));
        if (rc != 0)
            fprintf(stderr, "bad matcher in test: %s\n", err);
        TEST_CHECK(rc == 0);
    }
    free_strv(v, n);
}

static void free_matchers(struct matcher_set *ms)
{
    for (size_t i = 0; i < ms->n; i++)
        match_free(&ms->m[i]);
    free(ms->m);
}

static void build_rule(const struct rspec *sp, struct rule *r)
{
    memset(r, 0, sizeof(*r));
    r->name = "test";
    r->enabled = !sp->disabled;
    r->policy = sp->pressure ? POLICY_DURING_PRESSURE : POLICY_ALWAYS;
    r->threshold = sp->threshold ? sp->threshold : 10;
    r->idle_timer = sp->idle ? sp->idle : 600;
    r->step = STEP;
    r->tolerated_gap = sp->gap ? sp->gap : 2 * STEP;
    r->max_terminations = sp->max_term ? sp->max_term : 10;
    r->dry_run = sp->dry_run;
    r->resource_label = "resource";
    r->identity = split(sp->identity ? sp->identity : "namespace,pod", ',', &r->nidentity);
    r->namespaces = split(sp->namespaces, ',', &r->nnamespaces);
    parse_matchers(sp->scope, &r->scope);
    if (sp->exempt) {
        r->exemptions = xcalloc(1, sizeof(*r->exemptions));
        r->nexemptions = 1;
        parse_matchers(sp->exempt, &r->exemptions[0].match);
        r->exemptions[0].reason = (char *)sp->exempt_reason;
    }
    if (sp->ov_match) {
        struct rule_override *o = r->overrides = xcalloc(1, sizeof(*o));
        r->noverrides = 1;
        parse_matchers(sp->ov_match, &o->match);
        o->has_threshold = sp->ov_thr > 0;
        o->threshold = sp->ov_thr;
        o->has_idle_timer = sp->ov_idle > 0;
        o->idle_timer = sp->ov_idle;
        o->has_enabled = sp->ov_disable;
        o->enabled = !sp->ov_disable;
    }
    size_t nw = 0;
    while (nw < ARRAY_LEN(sp->win) && sp->win[nw].days)
        nw++;
    if (nw) {
        r->windows = xmalloc(nw * sizeof(*r->windows));
        memcpy(r->windows, sp->win, nw * sizeof(*r->windows));
        r->nwindows = nw;
    }
}

static void free_rule(struct rule *r)
{
    free_strv(r->identity, r->nidentity);
    free_strv(r->namespaces, r->nnamespaces);
    free_matchers(&r->scope);
    for (size_t i = 0; i < r->nexemptions; i++)
        free_matchers(&r->exemptions[i].match);
    free(r->exemptions);
    for (size_t i = 0; i < r->noverrides; i++)
        free_matchers(&r->overrides[i].match);
    free(r->overrides);
    free(r->windows);
}

/* "a=x,b=y" (an empty value is kept, to test series without identity). */
static void parse_labels(const char *s, struct labels *ls)
{
    size_t n;
    char **v = split(s, ',', &n);
    ls->v = NULL;
    ls->n = 0;
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(v[i], '=');
        TEST_CHECK(eq != NULL);
        if (!eq)
            continue;
        *eq = '\0';
        labels_set(ls, v[i], eq + 1);
    }
    free_strv(v, n);
}

static double parse_value(const char *tok)
{
    if (strcmp(tok, "N") == 0)
        return NAN;
    if (strcmp(tok, "I") == 0)
        return INFINITY;
    if (strcmp(tok, "-I") == 0)
        return -INFINITY;
    double v = 0;
    TEST_CHECK(parse_double(tok, &v) == 0);
    return v;
}

static void add_series_every(struct matrix *m, const char *labels, double t0, const char *values,
                             double every)
{
    struct series *s = matrix_push(m);
    parse_labels(labels, &s->labels);
    size_t ntok;
    char **tok = split(values, ' ', &ntok);
    double t = NOW + t0;
    for (size_t i = 0; i < ntok; i++) {
        char *star = strchr(tok[i], '*');
        long rep = 1;
        if (star) {
            *star = '\0';
            rep = strtol(star + 1, NULL, 10);
        }
        for (long k = 0; k < rep; k++, t += every) {
            if (strcmp(tok[i], "_") == 0)
                continue;
            s->p = xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
            s->p[s->n++] = (struct point){t, parse_value(tok[i])};
        }
    }
    free_strv(tok, ntok);
}

static void add_series(struct matrix *m, const char *labels, double t0, const char *values)
{
    add_series_every(m, labels, t0, values, STEP);
}

/* The resolution of the coverage subquery, as fetch.c chooses it. */
static double sim_resolution(const struct rule *r)
{
    double res = r->step < 15 ? r->step : 15;
    return r->tolerated_gap / 4 < res ? r->tolerated_gap / 4 : res;
}

/* True when `raw` has a sample in the closed interval [from, to]. */
static bool sim_any(const struct series *raw, double from, double to)
{
    for (size_t i = 0; i < raw->n; i++)
        if (raw->p[i].t >= from - 1e-9 && raw->p[i].t <= to + 1e-9)
            return true;
    return false;
}

/*
 * What Prometheus 2.x answers for fetch.c's activity query over raw samples `raw`:
 * `max_over_time(x[S]) + 0 * sum_over_time(x[S])` at start, start + S, ... <= end, each over
 * the closed interval [t - S, t]: the largest value, NaN when any sample is not finite.
 */
static void sim_grid(const struct series *raw, double start, double end, struct series *out)
{
    labels_copy(&out->labels, &raw->labels);
    for (double t = start; t <= end + 1e-9; t += STEP) {
        bool any = false, bad = false;
        double max = 0;
        for (size_t i = 0; i < raw->n; i++) {
            if (raw->p[i].t < t - STEP - 1e-9 || raw->p[i].t > t + 1e-9)
                continue;
            if (!isfinite(raw->p[i].v))
                bad = true;
            else if (!any || raw->p[i].v > max)
                max = raw->p[i].v;
            any = true;
        }
        if (!any)
            continue;
        out->p = xrealloc(out->p, (out->n + 1) * sizeof(*out->p));
        out->p[out->n++] = (struct point){t, bad ? NAN : max};
    }
}

/*
 * And for the coverage queries, `count_over_time(present_over_time(x[G-R])[S:R])` divided by
 * `count_over_time(vector(1)[S:R])`: the share of the sub-points (multiples of R in the
 * closed [t - S, t]) with a raw sample within G - R before them; absent when none has one.
 */
static void sim_coverage(const struct rule *r, const struct series *raw, double start, double end,
                         struct series *out)
{
    double res = sim_resolution(r), g = r->tolerated_gap;
    labels_copy(&out->labels, &raw->labels);
    for (double t = start; t <= end + 1e-9; t += STEP) {
        double covered = 0, all = 0;
        for (double u = ceil((t - STEP) / res - 1e-9) * res; u <= t + 1e-9; u += res) {
            all++;
            covered += sim_any(raw, u - (g - res), u);
        }
        if (covered == 0)
            continue;
        out->p = xrealloc(out->p, (out->n + 1) * sizeof(*out->p));
        out->p[out->n++] = (struct point){t, covered / all};
    }
}

static void build_data(const struct tcase *c, const struct rule *r, struct rule_data *d)
{
    memset(d, 0, sizeof(*d));
    d->rule = r;
    d->error = c->error;
    if (c->error)
        snprintf(d->errmsg, sizeof(d->errmsg), "cannot reach 'http://127.0.0.1:9/'");
    d->pending_error = c->pending_error;
    d->start = NOW + c->now_off - decide_lookback(r);
    d->end = NOW + c->now_off;
    d->raw_coverage = !c->r.grid_only;
    for (size_t i = 0; i < ARRAY_LEN(c->s) && c->s[i].kind; i++) {
        const struct sspec *s = &c->s[i];
        if (s->kind == S_RAW || s->kind == S_ACT) {
            struct matrix raw = {0};
            add_series_every(&raw, s->labels, s->t0 + c->now_off, s->values,
                             s->kind == S_RAW ? s->every : STEP);
            if (s->kind == S_RAW)
                sim_grid(&raw.s[0], d->start, d->end, matrix_push(&d->activity));
            else
                add_series(&d->activity, s->labels, s->t0 + c->now_off, s->values);
            if (d->raw_coverage)
                sim_coverage(r, &raw.s[0], d->start, d->end, matrix_push(&d->coverage));
            matrix_free(&raw);
            continue;
        }
        struct matrix *m = s->kind == S_ACT     ? &d->activity
                           : s->kind == S_ALLOC ? &d->allocation
                           : s->kind == S_PEND  ? &d->pending
                                                : &d->priority;
        add_series(m, s->labels, s->t0 + c->now_off, s->values);
    }
}

static void free_data(struct rule_data *d)
{
    matrix_free(&d->activity);
    matrix_free(&d->coverage);
    matrix_free(&d->allocation);
    matrix_free(&d->pending);
    matrix_free(&d->priority);
}

/* Identity values in the rule's identity order, joined by '/'. */
static void id_string(const struct decision_rec *d, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < d->rule->nidentity; i++) {
        const char *v = labels_get(&d->identity, d->rule->identity[i]);
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? "/" : "", v ? v : "?");
    }
}

/* ---- the table ---- */

static const struct tcase *current;

static void run_case(void)
{
    const struct tcase *c = current;
    struct rule r;
    struct rule_data d;
    struct decisions out;
    build_rule(&c->r, &r);
    build_data(c, &r, &d);
    double now = NOW + c->now_off;
    decide(&d, 1, now, &out);

    size_t nx = 0;
    while (nx < ARRAY_LEN(c->x) && c->x[nx].id)
        nx++;
    TEST_CHECK_INT(out.n, nx);
    for (size_t i = 0; i < out.n && i < nx; i++) {
        const struct decision_rec *g = &out.v[i];
        const struct xspec *x = &c->x[i];
        char id[128];
        id_string(g, id, sizeof(id));
        bool ok = strcmp(id, x->id) == 0 && g->decision == x->dec && g->reason == x->reason;
        if (x->since) {
            double want = strcmp(x->since, "nan") == 0 ? NAN : now + atof(x->since);
            ok = ok && (isnan(want) ? isnan(g->idle_since) : fabs(g->idle_since - want) < 1e-6);
        }
        if (!ok) {
            fprintf(stderr,
                    "%s: decision %zu: got %s %s %s idle_since %+g (%s), want %s %s %s since %s\n",
                    c->name, i, id, decide_decision_name(g->decision),
                    decide_reason_name(g->reason), g->idle_since - now, g->detail, x->id,
                    decide_decision_name(x->dec), decide_reason_name(x->reason),
                    x->since ? x->since : "-");
        }
        TEST_CHECK(ok);
        TEST_CHECK(g->detail[0] != '\0');
        if (x->detail)
            TEST_CHECK_CONTAINS(g->detail, x->detail);
        TEST_CHECK(g->rule == &r);
    }
    decisions_free(&out);
    free_data(&d);
    free_rule(&r);
}

/* ---- beyond the table ---- */

static const struct tcase stats_case = {
    "stats",
    {.pressure = true, .dry_run = true, .ov_match = "pod='p'", .ov_thr = 50, .ov_idle = 300},
    {ACT("gpu=0,namespace=a,pod=p", -600, "0.2*5 0.1 0.3 0.2 0.4 _ 0.1"),
     ALLOC("container=c1,namespace=a,pod=p,resource=amd.com/gpu", "2"),
     ALLOC("container=c2,namespace=a,pod=p,resource=amd.com/gpu", "1"),
     ALLOC("container=c3,namespace=a,pod=p,resource=amd.com/cpx", "2"),
     PRIO("namespace=a,pod=p", "7"), PEND("resource=amd_com_gpu", "3")},
    0,
    0,
    0,
    {{0}},
};

TEST(test_stats)
{
    struct rule r;
    struct rule_data d;
    struct decisions out;
    build_rule(&stats_case.r, &r);
    build_data(&stats_case, &r, &d);
    decide(&d, 1, NOW, &out);
    TEST_CHECK_INT(out.n, 1);
    if (out.n == 1) {
        const struct decision_rec *g = &out.v[0];
        TEST_CHECK_INT(g->decision, DECISION_RECLAIM);
        TEST_CHECK_INT(g->reason, REASON_IDLE);
        TEST_CHECK(g->dry_run);
        TEST_CHECK_DBL(g->threshold, 50, 1e-9);
        TEST_CHECK_DBL(g->idle_timer, 300, 1e-9);
        TEST_CHECK_DBL(g->window_start, NOW - 300, 1e-9);
        TEST_CHECK_DBL(g->window_end, NOW, 1e-9);
        /* Points at -300 .. 0 step 60 with -60 missing: 0.1 0.3 0.2 0.4 _ 0.1. */
        TEST_CHECK_INT(g->samples, 5);
        TEST_CHECK_DBL(g->max, 0.4, 1e-12);
        TEST_CHECK_DBL(g->mean, (0.1 + 0.3 + 0.2 + 0.4 + 0.1) / 5, 1e-12);
        TEST_CHECK_DBL(g->last, 0.1, 1e-12);
        TEST_CHECK_DBL(g->idle_since, NOW - 600, 1e-9);
        /* Same-resource series add up (2 + 1) and beat the other resource (2). */
        TEST_CHECK_DBL(g->allocated, 3, 1e-12);
        TEST_CHECK_STR(g->resource, "amd.com/gpu");
        TEST_CHECK_DBL(g->priority, 7, 1e-12);
        TEST_CHECK_STR(labels_get(&g->all, "gpu"), "0");
        TEST_CHECK_STR(labels_get(&g->all, "resource"), "amd.com/gpu");
        TEST_CHECK_INT(g->identity.n, 2);
        TEST_CHECK_CONTAINS(g->detail, "3 pending 'amd_com_gpu'");
    }
    decisions_free(&out);
    free_data(&d);
    free_rule(&r);
}

static const struct tcase detail_case = {
    "details",
    {0},
    {ACT("namespace=a,pod=active", -1200, "0*16 0.42 0*4"),
     ACT("namespace=a,pod=gap", -1200, "0*13 _ _ _ 0*5"), ACT("namespace=a,pod=nodata", -1200, ""),
     ACT("namespace=a,pod=stale", -1200, "0*16"), ACT("namespace=a,pod=young", -300, "0*6")},
    0,
    0,
    0,
    {{0}},
};

TEST(test_details)
{
    struct rule r;
    struct rule_data d;
    struct decisions out;
    build_rule(&detail_case.r, &r);
    build_data(&detail_case, &r, &d);
    decide(&d, 1, NOW, &out);
    TEST_CHECK_INT(out.n, 5);
    if (out.n == 5) {
        TEST_CHECK_INT(out.v[0].reason, REASON_ACTIVE);
        TEST_CHECK_STR(out.v[0].detail, "activity 42% at 2025-12-31T23:56:00Z >= threshold 10%");
        TEST_CHECK_INT(out.v[1].reason, REASON_GAP);
        TEST_CHECK_CONTAINS(out.v[1].detail, "from 2025-12-31T23:52:00Z to 2025-12-31T23:56:00Z");
        TEST_CHECK_INT(out.v[2].reason, REASON_NO_DATA);
        TEST_CHECK_INT(out.v[2].samples, 0);
        TEST_CHECK(isnan(out.v[2].max) && isnan(out.v[2].mean) && isnan(out.v[2].last));
        TEST_CHECK_INT(out.v[3].reason, REASON_STALE);
        TEST_CHECK_CONTAINS(out.v[3].detail,
                            "last point at 2025-12-31T23:55:00Z; no raw sample within the "
                            "tolerated gap 2m before now");
        TEST_CHECK_INT(out.v[4].reason, REASON_TOO_YOUNG);
        TEST_CHECK_CONTAINS(out.v[4].detail, "after window start 2025-12-31T23:50:00Z");
    }
    decisions_free(&out);
    free_data(&d);
    free_rule(&r);
}

/* Two rules: output in rule order, each sorted by identity, whatever the input order. */
TEST(test_rule_order_and_sorting)
{
    static const struct tcase c1 = {"r1",
                                    {0},
                                    {ACT("namespace=z,pod=p", -1200, IDLE20),
                                     ACT("namespace=a,pod=q", -1200, IDLE20),
                                     ACT("namespace=a,pod=p", -1200, IDLE20)},
                                    0,
                                    0,
                                    0,
                                    {{0}}};
    static const struct tcase c2 = {
        "r2", {.threshold = 1}, {ACT("namespace=b,pod=p", -1200, IDLE20)}, 0, 0, 0, {{0}}};
    struct rule r[2];
    struct rule_data d[2];
    struct decisions out;
    build_rule(&c1.r, &r[0]);
    build_rule(&c2.r, &r[1]);
    build_data(&c1, &r[0], &d[0]);
    build_data(&c2, &r[1], &d[1]);
    decide(d, 2, NOW, &out);
    static const char *const want[] = {"a/p", "a/q", "z/p", "b/p"};
    TEST_CHECK_INT(out.n, 4);
    for (size_t i = 0; i < out.n && i < 4; i++) {
        char id[64];
        id_string(&out.v[i], id, sizeof(id));
        TEST_CHECK_STR(id, want[i]);
        TEST_CHECK(out.v[i].rule == &r[i < 3 ? 0 : 1]);
    }
    decisions_free(&out);
    for (int i = 0; i < 2; i++) {
        free_data(&d[i]);
        free_rule(&r[i]);
    }
}

static bool same_rec(const struct decision_rec *a, const struct decision_rec *b)
{
    return labels_equal(&a->identity, &b->identity) && labels_equal(&a->all, &b->all) &&
           a->decision == b->decision && a->reason == b->reason &&
           strcmp(a->detail, b->detail) == 0 && strcmp(a->resource, b->resource) == 0 &&
           a->samples == b->samples &&
           memcmp(&a->idle_since, &b->idle_since, sizeof(double)) == 0 &&
           memcmp(&a->max, &b->max, sizeof(double)) == 0 &&
           memcmp(&a->mean, &b->mean, sizeof(double)) == 0 &&
           memcmp(&a->allocated, &b->allocated, sizeof(double)) == 0 && a->priority == b->priority;
}

static void reverse_matrix(struct matrix *m)
{
    for (size_t i = 0; i < m->n / 2; i++) {
        struct series t = m->s[i];
        m->s[i] = m->s[m->n - 1 - i];
        m->s[m->n - 1 - i] = t;
    }
}

/* Same input twice, and the same series in reverse order: identical decisions. */
TEST(test_determinism)
{
    for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
        const struct tcase *c = &cases[k];
        struct rule r;
        struct rule_data d;
        struct decisions a, b, rev;
        build_rule(&c->r, &r);
        build_data(c, &r, &d);
        decide(&d, 1, NOW + c->now_off, &a);
        decide(&d, 1, NOW + c->now_off, &b);
        reverse_matrix(&d.activity);
        reverse_matrix(&d.allocation);
        reverse_matrix(&d.pending);
        reverse_matrix(&d.priority);
        decide(&d, 1, NOW + c->now_off, &rev);
        TEST_CHECK_INT(a.n, b.n);
        TEST_CHECK_INT(a.n, rev.n);
        for (size_t i = 0; i < a.n && i < b.n && i < rev.n; i++) {
            bool ok = same_rec(&a.v[i], &b.v[i]) && same_rec(&a.v[i], &rev.v[i]);
            if (!ok)
                fprintf(stderr, "%s: decision %zu differs between runs\n", c->name, i);
            TEST_CHECK(ok);
        }
        decisions_free(&a);
        decisions_free(&b);
        decisions_free(&rev);
        free_data(&d);
        free_rule(&r);
    }
}

/* A deterministic generator, so that a failure can be replayed. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static unsigned rng(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

/*
 * The window check written the plain way, on the raw samples of one series: 0 when the
 * workload must be kept, 1 when it must be reclaimed, 2 when either is right. Raw gaps (and
 * the time since the last sample) over the tolerated gap must be a keep; up to the tolerated
 * gap less the coverage resolution they must not be; in between the estimate may over-state.
 */
static int oracle_idle(const struct series *s, double now, double win, double gap, double res,
                       double thr)
{
    double ws = now - win;
    if (s->n == 0 || s->p[0].t > ws)
        return 0;
    double worst = now - s->p[s->n - 1].t;
    for (size_t i = 0; i < s->n; i++) {
        if (s->p[i].t >= ws && !(isfinite(s->p[i].v) && s->p[i].v * 100 < thr))
            return 0;
        if (i > 0 && s->p[i].t > ws && s->p[i].t - s->p[i - 1].t > worst)
            worst = s->p[i].t - s->p[i - 1].t;
    }
    if (worst > gap + 1e-9)
        return 0;
    /* A first sample in the step of the window start leaves that step unproven. */
    if (s->p[0].t > ws - STEP + 1e-9)
        return 2;
    return worst <= gap - res + 1e-9 ? 1 : 2;
}

/*
 * Random workloads (mostly idle-looking, with random gaps, NaNs, bursts and starts): the
 * activity verdict agrees with the oracle, idle_since is set exactly for idle workloads and
 * reaches back to the window start, the output is sorted, and the cap and the fit check hold.
 */
TEST(test_random_invariants)
{
    static const char *const res[] = {"amd.com/gpu", "amd_com_gpu", "amd.com/cpx"};
    size_t seen[REASON__COUNT] = {0};
    for (int iter = 0; iter < 400; iter++) {
        struct rspec sp = {.pressure = rng(2), .max_term = 1 + rng(4), .threshold = 1 + rng(30)};
        struct rule r;
        struct rule_data d;
        build_rule(&sp, &r);
        memset(&d, 0, sizeof(d));
        d.rule = &r;
        d.start = NOW - decide_lookback(&r);
        d.end = NOW;
        d.raw_coverage = true;
        d.pending_error = rng(10) == 0;
        unsigned nw = 1 + rng(8);
        for (unsigned w = 0; w < nw; w++) {
            char l[96];
            snprintf(l, sizeof(l), "namespace=n%u,pod=p%u", rng(2), w);
            struct series *s = matrix_push(&d.activity);
            parse_labels(l, &s->labels);
            double t = NOW - 1200 + 60.0 * rng(14);
            double end = rng(8) ? NOW : NOW - 60.0 * (1 + rng(5));
            for (; t <= end; t += 60) {
                unsigned k = rng(100);
                if (k < 4)
                    continue; /* a missing point */
                double v = k < 6 ? NAN : k < 10 ? (double)rng(100) / 100 : (double)rng(5) / 1000;
                s->p = xrealloc(s->p, (s->n + 1) * sizeof(*s->p));
                s->p[s->n++] = (struct point){t, v};
            }
            /* Raw samples at the grid points: the coverage Prometheus would answer. */
            sim_coverage(&r, s, d.start, d.end, matrix_push(&d.coverage));
            if (rng(5)) {
                snprintf(l, sizeof(l), "namespace=n%u,pod=p%u,resource=%s", rng(2), w, res[rng(3)]);
                add_series(&d.allocation, l, 0, rng(2) ? "1" : "2");
            }
        }
        char pl[64];
        snprintf(pl, sizeof(pl), "resource=%s", res[rng(3)]);
        add_series(&d.pending, pl, 0, rng(2) ? "1" : "3");

        struct decisions out;
        decide(&d, 1, NOW, &out);
        size_t nreclaim = 0;
        for (size_t i = 0; i < out.n; i++) {
            const struct decision_rec *g = &out.v[i];
            if (i > 0)
                TEST_CHECK(labels_compare(&out.v[i - 1].identity, &g->identity) < 0);
            nreclaim += g->decision == DECISION_RECLAIM;
            seen[g->reason]++;
            /* Find the workload's activity series (identity == namespace, pod). */
            const struct series *s = NULL;
            for (size_t k = 0; k < d.activity.n && !s; k++) {
                struct labels id;
                labels_project(&id, &d.activity.s[k].labels, r.identity, r.nidentity);
                if (labels_equal(&id, &g->identity))
                    s = &d.activity.s[k];
                labels_free(&id);
            }
            if (!s) {
                TEST_CHECK_INT(g->reason, REASON_NO_DATA);
                continue;
            }
            int want =
                oracle_idle(s, NOW, r.idle_timer, r.tolerated_gap, sim_resolution(&r), r.threshold);
            bool verdict_keep = g->reason == REASON_ACTIVE || g->reason == REASON_NOT_A_NUMBER ||
                                g->reason == REASON_STALE || g->reason == REASON_GAP ||
                                g->reason == REASON_TOO_YOUNG;
            bool idle = !verdict_keep;
            if (want != 2 && want != idle)
                fprintf(stderr, "iteration %d: oracle says idle=%d, got %s (%s)\n", iter, want,
                        decide_reason_name(g->reason), g->detail);
            TEST_CHECK(want == 2 || want == idle);
            TEST_CHECK(idle == !isnan(g->idle_since));
            /* A tolerated gap may sit at the window start, after a busy point before it. */
            if (idle)
                TEST_CHECK(g->idle_since <= g->window_start + r.tolerated_gap + 1e-6);
            if (g->decision == DECISION_RECLAIM && r.policy == POLICY_DURING_PRESSURE)
                TEST_CHECK(!d.pending_error && g->allocated > 0);
        }
        TEST_CHECK(nreclaim <= r.max_terminations);
        decisions_free(&out);
        free_data(&d);
        free_rule(&r);
    }
    /* The generator must reach every verdict, or the checks above prove little. */
    for (int i = 0; i < REASON__COUNT; i++) {
        if (i == REASON_QUERY_ERROR || i == REASON_EXEMPT || i == REASON_RULE_DISABLED ||
            i == REASON_OUTSIDE_WINDOW)
            continue;
        if (!seen[i])
            fprintf(stderr, "random workloads never gave '%s'\n", decide_reason_name(i));
        TEST_CHECK(seen[i] > 0);
    }
}

TEST(test_empty_input)
{
    struct decisions out = {(struct decision_rec *)1, 99};
    decide(NULL, 0, NOW, &out);
    TEST_CHECK(out.n == 0 && out.v == NULL);
    decisions_free(&out);

    /* A query error with no series has no workload to report on. */
    static const struct tcase c = {"err", {0}, {{0}}, 0, 1, 0, {{0}}};
    struct rule r;
    struct rule_data d;
    build_rule(&c.r, &r);
    build_data(&c, &r, &d);
    decide(&d, 1, NOW, &out);
    TEST_CHECK_INT(out.n, 0);
    decisions_free(&out);
    free_data(&d);
    free_rule(&r);
}

TEST(test_lookback)
{
    static const struct {
        double idle, step, ov_idle, want;
    } t[] = {
        {600, 60, 0, 1200},
        {600, 60, 3600, 7200},
        {3600, 60, 600, 7200},
        {600, 7, 0, 1204},              /* rounded up to whole steps */
        {30 * 86400, 60, 0, 660000},    /* capped at 11000 points */
        {30 * 86400, 3600, 0, 5184000}, /* not capped: 1440 points */
        {600, 0, 0, 1200},              /* unset step counts as 60 s */
    };
    for (size_t i = 0; i < ARRAY_LEN(t); i++) {
        struct rspec sp = {.idle = t[i].idle, .ov_match = "pod='x'", .ov_idle = t[i].ov_idle};
        struct rule r;
        build_rule(&sp, &r);
        r.step = t[i].step;
        double lb = decide_lookback(&r);
        if (fabs(lb - t[i].want) > 1e-9)
            fprintf(stderr, "lookback case %zu: got %g want %g\n", i, lb, t[i].want);
        TEST_CHECK_DBL(lb, t[i].want, 1e-9);
        TEST_CHECK(r.step <= 0 || lb / r.step <= DECIDE_MAX_POINTS);
        free_rule(&r);
    }
}

TEST(test_rule_active)
{
    static const struct {
        struct {
            unsigned days;
            int start_min, end_min, utc_offset_min;
        } w;
        double now;
        bool want;
    } t[] = {
        /* NOW = Thursday 00:00 UTC. */
        {{ALLDAYS, 0, 60, 0}, NOW, true},
        {{ALLDAYS, 0, 60, 0}, NOW + 3600, false}, /* end exclusive */
        {{ALLDAYS, 0, 60, 0}, NOW + 3599, true},
        {{THU, 60, 120, 0}, NOW + 59 * 60, false}, /* start inclusive */
        {{THU, 60, 120, 0}, NOW + 60 * 60, true},
        {{WED, 22 * 60, 6 * 60, 0}, NOW - 3600, true}, /* Wed 23:00 */
        {{WED, 22 * 60, 6 * 60, 0}, NOW + 5 * 3600, true},
        {{WED, 22 * 60, 6 * 60, 0}, NOW + 6 * 3600, false},
        {{WED, 22 * 60, 6 * 60, 0}, NOW + 22 * 3600, false}, /* Thu 22:00, Thursday not set */
        {{THU, 22 * 60, 6 * 60, 0}, NOW + 22 * 3600, true},
        {{THU, 8 * 60, 8 * 60, 0}, NOW + 20 * 3600, true}, /* start == end: a full day */
        {{THU, 8 * 60, 8 * 60, 0}, NOW + 7 * 3600, false},
        {{FRI, 0, 60, 120}, NOW + 22 * 3600 + 1800, true}, /* Thu 22:30 UTC = Fri 00:30 +02:00 */
        {{THU, 0, 60, 120}, NOW + 1800, false},            /* Thu 02:30 local */
        {{WED, 23 * 60, 24 * 60, -60}, NOW, true},         /* Wed 23:00 at UTC-1 */
        {{1u << 0, 0, 24 * 60, 0}, NOW + 3 * 86400, true}, /* Sunday */
        {{1u << 6, 0, 24 * 60, 0}, NOW + 3 * 86400, false},
        {{THU, 0, 60, 0}, NOW - 7 * 86400, true}, /* a week earlier */
        {{THU, 0, 60, 0}, 0, true},               /* 1970-01-01 was a Thursday */
        {{WED, 0, 60, 0}, -86400, true},          /* and 1969-12-31 a Wednesday */
    };
    for (size_t i = 0; i < ARRAY_LEN(t); i++) {
        struct rule r = {0};
        struct rule_window w = {.days = t[i].w.days,
                                .start_min = t[i].w.start_min,
                                .end_min = t[i].w.end_min,
                                .utc_offset_min = t[i].w.utc_offset_min};
        r.windows = &w;
        r.nwindows = 1;
        bool got = decide_rule_active(&r, t[i].now);
        if (got != t[i].want)
            fprintf(stderr, "window case %zu: got %d\n", i, got);
        TEST_CHECK(got == t[i].want);
    }
    struct rule none = {0};
    TEST_CHECK(decide_rule_active(&none, NOW));
}

/* sort_entries (merging the runs the lists come in) gives qsort's order: entries in a few
   runs, in many (qsort's way), with equal identities of several kinds and indexes. */
TEST(test_sort_entries_as_qsort)
{
    unsigned long x = 99;
    static const char *const pods[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    struct series ser[4];
    memset(ser, 0, sizeof(ser));
    for (int k = 0; k < 4; k++)
        labels_set(&ser[k].labels, "gpu", pods[k]);
    for (int round = 0; round < 300; round++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        size_t n = (size_t)(x >> 33) % 200, runs = 1 + (size_t)(x >> 50) % (round % 2 ? 4 : 90);
        struct entry *a = xcalloc(n ? n : 1, sizeof(*a)), *b = xcalloc(n ? n : 1, sizeof(*b));
        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005ul + 1442695040888963407ul;
            /* ascending within each of `runs` stretches, as the lists come */
            size_t r = i * runs / (n ? n : 1), v = (i * 7 + r * 3) % 64;
            if (runs > 8)
                v = (size_t)(x >> 40) % 64;
            labels_set(&a[i].id, "namespace", pods[(v / 8) % 8]);
            labels_set(&a[i].id, "pod", pods[v % 8]);
            a[i].kind = (enum entry_kind)((x >> 20) % 3);
            a[i].s = &ser[(x >> 24) % 4];
            a[i].idx = i;
            b[i] = a[i];
        }
        sort_entries(a, n);
        if (n > 1)
            qsort(b, n, sizeof(*b), cmp_entry);
        bool same = true;
        for (size_t i = 0; i < n; i++)
            same &= a[i].idx == b[i].idx;
        TEST_CHECK(same);
        for (size_t i = 0; i < n; i++)
            labels_free(&a[i].id);
        free(a);
        free(b);
        if (!same)
            break;
    }
    for (int k = 0; k < 4; k++)
        labels_free(&ser[k].labels);
}

TEST(test_names)
{
    static const char *const want[REASON__COUNT] = {
        "idle",           "active",        "no_data",          "too_young", "gap",
        "stale",          "not_a_number",  "query_error",      "exempt",    "rule_disabled",
        "outside_window", "no_pressure",   "pressure_unknown", "fit_check", "not_needed",
        "cycle_cap",      "no_allocation",
    };
    for (int i = 0; i < REASON__COUNT; i++)
        TEST_CHECK_STR(decide_reason_name((enum reason)i), want[i]);
    TEST_CHECK_STR(decide_reason_name(REASON__COUNT), "unknown");
    TEST_CHECK_STR(decide_decision_name(DECISION_RECLAIM), "reclaim");
    TEST_CHECK_STR(decide_decision_name(DECISION_KEEP), "keep");
}

int main(void)
{
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        current = &cases[i];
        test_run_(__FILE__, cases[i].name, run_case);
    }
    RUN(test_stats);
    RUN(test_details);
    RUN(test_rule_order_and_sorting);
    RUN(test_determinism);
    RUN(test_random_invariants);
    RUN(test_empty_input);
    RUN(test_lookback);
    RUN(test_rule_active);
    RUN(test_sort_entries_as_qsort);
    RUN(test_names);
    return test_done();
}
