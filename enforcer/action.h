/*
 * The actions a rule can take on a workload decided `reclaim`, as one enum that the rules
 * loader (rules.h, which parses and names them) and the table of workload kinds (kinds.h,
 * whose rows say how each kind carries each one out) both use without including each other.
 */
#ifndef GPURECLAIM_ACTION_H
#define GPURECLAIM_ACTION_H

/* What to do with a workload decided `reclaim` (issue: enforcer actions). */
enum rule_action {
    ACTION_REPORT = 0, /* only report the decision */
    ACTION_SCALE_TO_ZERO,
    ACTION_SUSPEND,
    ACTION_EVICT,
    ACTION_DELETE,
    ACTION_STOP /* container runtime: stop the container */
};

#endif
