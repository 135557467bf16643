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

// WaitForExit blocks until the child of `pidfd` ends or `ms` pass (1 ms without a pidfd).
void WaitForExit(int pidfd, int64_t ms) {
  pollfd p{pidfd, POLLIN, 0};
  poll(&p, pidfd >= 0 ? 1 : 0, static_cast<int>(std::min<int64_t>(pidfd >= 0 ? ms : 1, 1000)));
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
  // The pipe's EOF is not enough to know the child ended: a child another thread forked
  // meanwhile holds a copy of this pipe's write end until it ends. So wait on the child itself
  // (its pidfd, readable when it ends) as well as on the pipe.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  char buffer[4096];
  bool open = true;
  bool ended = false;
  while (open && !ended) {
    int64_t left = RemainingMs(deadline);
    if (left == 0) break;
    pollfd p[2] = {{fds[0], POLLIN, 0}, {pidfd, POLLIN, 0}};
    int ready = poll(p, pidfd >= 0 ? 2 : 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    if (pidfd >= 0 && (p[1].revents & POLLIN) != 0) {
      ended = true;
      fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);  // drain what it wrote
    }
    if (p[0].revents == 0 && !ended) continue;
    while (true) {
      ssize_t n = read(fds[0], buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) open = false;
      if (n <= 0) break;
      out.output.append(buffer, static_cast<size_t>(n));
      if (!ended) break;  // blocking: one read per poll
    }
  }
  close(fds[0]);
  // The child ended, the pipe closed (the child is ending) or the deadline passed: reap it,
  // killing it if need be.
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
    WaitForExit(pidfd, RemainingMs(deadline));
  }
  if (pidfd >= 0) close(pidfd);
  out.scratch.assign(scratch.data(), strnlen(scratch.data(), scratch.size()));
  munmap(shared, limits.scratch_bytes);
  return out;
}

}  // namespace portico::core
