// fuzz_check.h: FUZZ_CHECK, the assertion of the fuzz targets (tests/fuzz): it prints what
// broke and aborts, which libFuzzer reports as a crash and saves as a reproducer, and which the
// replay test (fuzz_replay_main.cc) reports as a failed input.
//
// Thread-safety: the targets are single-threaded.
#ifndef PORTICO_TESTS_FUZZ_FUZZ_CHECK_H_
#define PORTICO_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, ...)                                                            \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                 \
      std::fprintf(stderr, "\n");                                                        \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

#endif  // PORTICO_TESTS_FUZZ_FUZZ_CHECK_H_
