// no_watchdog.c: an LD_PRELOAD library for haproxy under callgrind only (tests/bench/proxy.sh).
// haproxy's watchdog (a per-thread CPU-time timer from timer_create) aborts the process when one
// loop iteration runs for about 2 s of CPU, which callgrind's slowdown causes with 10,000 regex
// rules. haproxy disables its lockup detection, with a warning, when timer_create fails; nothing
// else of haproxy's request path uses it.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <time.h>

int timer_create(clockid_t clock, struct sigevent* event, timer_t* timer) {
  (void)clock;
  (void)event;
  (void)timer;
  errno = ENOTSUP;
  return -1;
}
