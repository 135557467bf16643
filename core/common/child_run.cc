#include "core/common/child_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace portico::core {
namespace {

int64_t RemainingMs(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : left.count();
}

void Collect(int status, ChildOutcome& out) {
  if (WIFEXITED(status)) {
    out.exited = true;
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  }
}

// WaitForExit blocks until `pid` ends or `ms` pass: on its pidfd (Linux 5.3), else 1 ms.
void WaitForExit(pid_t pid, int64_t ms) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    pollfd none{-1, 0, 0};
    poll(&none, 0, 1);
    return;
  }
  pollfd p{pidfd, POLLIN, 0};
  poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1000)));
  close(pidfd);
}

}  // namespace

std::string ChildOutcome::Describe() const {
  if (!started) return "could not be started (fork failed)";
  if (timed_out) return "did not finish before the deadline (killed)";
  if (exited) return "exited with status " + std::to_string(exit_code);
  return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

ChildOutcome RunInChild(const std::function<int(int fd, std::span<char> scratch)>& work,
                        const ChildLimits& limits, const ForkHooks& hooks) {
  ChildOutcome out;
  const auto deadline = std::chrono::steady_clock::now() + limits.deadline;
  void* shared = mmap(nullptr, limits.scratch_bytes, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return out;
  std::span<char> scratch(static_cast<char*>(shared), limits.scratch_bytes);
  scratch[0] = '\0';
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    munmap(shared, limits.scratch_bytes);
    return out;
  }
  if (hooks.before_fork) hooks.before_fork();
  pid_t pid = fork();
  if (pid != 0 && hooks.after_fork) hooks.after_fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    munmap(shared, limits.scratch_bytes);
    return out;
  }
  if (pid == 0) {
    close(fds[0]);
    rlimit cpu{static_cast<rlim_t>(limits.cpu_seconds),
               static_cast<rlim_t>(limits.cpu_seconds + 1)};
    setrlimit(RLIMIT_CPU, &cpu);
    int code = 1;
    try {
      code = work(fds[1], scratch);
    } catch (...) {
      code = 1;
    }
    _exit(code);
  }
  out.started = true;
  close(fds[1]);
  char buffer[4096];
  bool open = true;
  while (open) {
    int64_t left = RemainingMs(deadline);
    if (left == 0) break;
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
    } else {
      out.output.append(buffer, static_cast<size_t>(n));
    }
  }
  close(fds[0]);
  // The pipe closed (the child is ending) or the deadline passed: reap it, killing it if need be.
  int status = 0;
  while (true) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      Collect(status, out);
      break;
    }
    if (done < 0 && errno != EINTR) break;
    if (RemainingMs(deadline) == 0) {
      out.timed_out = true;
      kill(pid, SIGKILL);
      if (waitpid(pid, &status, 0) == pid) Collect(status, out);
      break;
    }
    // Exiting children take a moment after closing the pipe: wait on a pidfd (readable when
    // the child ends) rather than sleeping, which would cost every call its slice.
    WaitForExit(pid, RemainingMs(deadline));
  }
  out.scratch.assign(scratch.data(), strnlen(scratch.data(), scratch.size()));
  munmap(shared, limits.scratch_bytes);
  return out;
}

}  // namespace portico::core
