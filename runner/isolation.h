/* SPDX-License-Identifier: MIT */
/* Running a function so that its exceptions, overruns and skips end only that function. */
#ifndef RUNNER_ISOLATION_H
#define RUNNER_ISOLATION_H

#include "runner/test.h"

/* Register the unexpected-exception handler and the timer hook that enforce isolation. */
void isolation_init(void);

#endif
