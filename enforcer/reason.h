/*
 * Why a workload is kept or reclaimed: the reasons decide() gives, in one small header so
 * that the modules that judge a part of a workload (exprcov.h: an expression's raw samples)
 * can answer in decide()'s terms without including decide.h, which includes them. Names
 * (decide_reason_name) and the order in which they win are decide.h's.
 */
#ifndef GPURECLAIM_REASON_H
#define GPURECLAIM_REASON_H

enum reason {
    REASON_IDLE = 0,         /* reclaim: idle for the whole idle timer */
    REASON_ACTIVE,           /* a point at or above the threshold */
    REASON_NO_DATA,          /* allocated, but no activity series at all; for an expression, no
                                raw series of its selectors, or a device missing (exprcov.h) */
    REASON_TOO_YOUNG,        /* activity does not reach back to the window start */
    REASON_GAP,              /* a gap longer than the tolerated gap inside the window */
    REASON_STALE,            /* no recent point: stopped reporting before now */
    REASON_NOT_A_NUMBER,     /* NaN or Inf in the window */
    REASON_QUERY_ERROR,      /* a Prometheus error for this rule's data */
    REASON_EXEMPT,           /* matched an exemption or an override with enabled: false */
    REASON_RULE_DISABLED,    /* rule has enabled: false */
    REASON_OUTSIDE_WINDOW,   /* now is outside the rule's activeWindows */
    REASON_NO_PRESSURE,      /* DuringGPUPressure and no pending demand for its resource */
    REASON_PRESSURE_UNKNOWN, /* DuringGPUPressure and the pending query failed */
    REASON_FIT_CHECK,        /* idle candidates together cannot cover the demand */
    REASON_NOT_NEEDED,       /* demand already covered by candidates ranked before it */
    REASON_CYCLE_CAP,        /* maxTerminationsPerCycle reached */
    REASON_NO_ALLOCATION,    /* allocation unknown, so it cannot count against demand */
    REASON__COUNT
};

#endif
