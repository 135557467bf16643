// child_run.h: RunInChild, run a piece of work in a forked child process under a wall-clock
// deadline and a CPU-time limit, so that whatever it does (crash, hang, abort, exhaust memory)
// only the child pays. `portico-ctl plugin verify` feeds plugins random input this way.
//
// The child reports through a pipe (its write end is passed to the work) and through a shared
// scratch buffer it may overwrite at any time (say, with the input it is about to try), which the
// parent reads after the child is gone, however it ended.
// Thread-safety: fork copies only the calling thread, so the child must not touch a lock another
// thread may hold (the logger's, a store's): call it from a single-threaded process, or take
// those locks in ForkHooks. malloc is safe either way (glibc locks its arenas around fork).
// Ownership: the child _exit()s with the work's return value; no destructor or atexit handler
// of the parent's state runs in it.
#ifndef PORTICO_CORE_COMMON_CHILD_RUN_H_
#define PORTICO_CORE_COMMON_CHILD_RUN_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <span>
#include <string>

namespace portico::core {

// ChildOutcome is how the child ended and what it said.
struct ChildOutcome {
  bool started = false;    // fork succeeded
  bool timed_out = false;  // the deadline passed: the child was killed with SIGKILL
  bool exited = false;     // returned or called _exit/exit
  int exit_code = -1;      // when exited
  int signal = 0;          // the signal that ended it (SIGKILL when timed out)
  std::string output;      // everything written to the pipe
  std::string scratch;     // the scratch buffer's contents up to the first NUL

  bool ok() const { return exited && exit_code == 0; }
  // Describe renders "exited with status 1", "killed by signal 11 (Segmentation fault)" or
  // "still running after 20 s (killed)".
  std::string Describe() const;
};

// ChildLimits bound the child.
struct ChildLimits {
  std::chrono::milliseconds deadline{20000};  // wall clock, from fork
  int cpu_seconds = 60;                       // RLIMIT_CPU (SIGXCPU, then SIGKILL)
  size_t scratch_bytes = 64 * 1024;           // the shared scratch buffer's size
};

// ForkHooks let a multi-threaded caller make fork safe for what the child will touch:
// `before_fork` runs in the parent just before fork() (take the locks the child needs, so no
// other thread holds them in the copy), `after_fork` in the parent right after it (release
// them), also when fork failed. The child inherits whatever `before_fork` took.
struct ForkHooks {
  std::function<void()> before_fork;
  std::function<void()> after_fork;
};

// RunInChild forks; the child runs `work(fd, scratch)` with `fd` the write end of the report
// pipe, and exits with its return value (1 when it throws).
ChildOutcome RunInChild(const std::function<int(int fd, std::span<char> scratch)>& work,
                        const ChildLimits& limits, const ForkHooks& hooks = {});

// WriteAll writes `data` to `fd`, retrying short writes; false on error.
bool WriteAll(int fd, std::string_view data);

}  // namespace portico::core

#endif  // PORTICO_CORE_COMMON_CHILD_RUN_H_
