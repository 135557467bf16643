// counter.c: an LD_PRELOAD library counting, per process, the libc calls that enter the kernel
// for a proxy's I/O (read/write/recv/send/... epoll_wait, accept4, close, ...) and the heap
// allocations (malloc, calloc, realloc, memalign family; free counted apart). Used by
// tests/bench/proxy.sh; built there with `cc -O2 -shared -fPIC counter.c -o counter.so -ldl`.
//
// Counts go to a file $PROXYBENCH_COUNTER_DIR/counts.<pid> mapped MAP_SHARED: its first 4096
// bytes are the counter names, one a line; then one uint64_t per name (relaxed atomic adds), so
// the benchmark reads them at any time without signalling the process. A forked child (the
// nginx worker) gets its own file, zeroed. Calls libc makes to itself (fwrite -> write, futex
// inside pthread) are not interposed: the benchmark cross-checks the total with
// `perf stat -e raw_syscalls:sys_enter` when perf is usable.
//
// Thread-safety: counters are atomic; the mapping is created in the constructor (and in the
// child after fork) before other threads of the process exist.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

// clang-format off
#define SYSCALLS(X)                                                                          \
  X(read) X(write) X(readv) X(writev) X(pread64) X(pwrite64) X(recv) X(send) X(recvfrom)     \
  X(sendto) X(recvmsg) X(sendmsg) X(recvmmsg) X(sendmmsg) X(epoll_wait) X(epoll_pwait)       \
  X(epoll_ctl) X(accept) X(accept4) X(connect) X(close) X(shutdown) X(socket) X(setsockopt)  \
  X(getsockopt) X(getsockname) X(getpeername) X(splice) X(poll) X(sendfile64)
// clang-format on

enum {
#define ENUM(name) k_##name,
  SYSCALLS(ENUM)
#undef ENUM
      k_malloc,
  k_calloc,
  k_realloc,
  k_memalign,
  k_free,
  k_count
};

static const char kNames[] =
#define NAME(name) #name "\n"
    SYSCALLS(NAME)
#undef NAME
        "malloc\ncalloc\nrealloc\nmemalign\nfree\n";

#define HEADER 4096
static uint64_t scratch[k_count];  // before the mapping exists
static uint64_t* counts = scratch;

static void Map(void) {
  const char* dir = getenv("PROXYBENCH_COUNTER_DIR");
  if (dir == NULL) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/counts.%d", dir, (int)getpid());
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  size_t size = HEADER + sizeof(uint64_t) * k_count;
  if (ftruncate(fd, (off_t)size) != 0) {
    close(fd);
    return;
  }
  char* base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return;
  memcpy(base, kNames, sizeof kNames - 1);
  counts = (uint64_t*)(base + HEADER);
}

static void AfterFork(void) { Map(); }

__attribute__((constructor)) static void Init(void) {
  Map();
  pthread_atfork(NULL, NULL, AfterFork);
}

static inline void Count(int k) { __atomic_fetch_add(&counts[k], 1, __ATOMIC_RELAXED); }

#define REAL(name)                      \
  static __typeof__(name)* real_##name; \
  if (real_##name == NULL) real_##name = (__typeof__(name)*)dlsym(RTLD_NEXT, #name)

ssize_t read(int fd, void* buf, size_t n) {
  REAL(read);
  Count(k_read);
  return real_read(fd, buf, n);
}
ssize_t write(int fd, const void* buf, size_t n) {
  REAL(write);
  Count(k_write);
  return real_write(fd, buf, n);
}
ssize_t readv(int fd, const struct iovec* v, int n) {
  REAL(readv);
  Count(k_readv);
  return real_readv(fd, v, n);
}
ssize_t writev(int fd, const struct iovec* v, int n) {
  REAL(writev);
  Count(k_writev);
  return real_writev(fd, v, n);
}
ssize_t pread64(int fd, void* buf, size_t n, off_t o) {
  REAL(pread64);
  Count(k_pread64);
  return real_pread64(fd, buf, n, o);
}
ssize_t pwrite64(int fd, const void* buf, size_t n, off_t o) {
  REAL(pwrite64);
  Count(k_pwrite64);
  return real_pwrite64(fd, buf, n, o);
}
ssize_t recv(int fd, void* buf, size_t n, int f) {
  REAL(recv);
  Count(k_recv);
  return real_recv(fd, buf, n, f);
}
ssize_t send(int fd, const void* buf, size_t n, int f) {
  REAL(send);
  Count(k_send);
  return real_send(fd, buf, n, f);
}
ssize_t recvfrom(int fd, void* buf, size_t n, int f, struct sockaddr* a, socklen_t* l) {
  REAL(recvfrom);
  Count(k_recvfrom);
  return real_recvfrom(fd, buf, n, f, a, l);
}
ssize_t sendto(int fd, const void* buf, size_t n, int f, const struct sockaddr* a, socklen_t l) {
  REAL(sendto);
  Count(k_sendto);
  return real_sendto(fd, buf, n, f, a, l);
}
ssize_t recvmsg(int fd, struct msghdr* m, int f) {
  REAL(recvmsg);
  Count(k_recvmsg);
  return real_recvmsg(fd, m, f);
}
ssize_t sendmsg(int fd, const struct msghdr* m, int f) {
  REAL(sendmsg);
  Count(k_sendmsg);
  return real_sendmsg(fd, m, f);
}
int recvmmsg(int fd, struct mmsghdr* m, unsigned int n, int f, struct timespec* t) {
  REAL(recvmmsg);
  Count(k_recvmmsg);
  return real_recvmmsg(fd, m, n, f, t);
}
int sendmmsg(int fd, struct mmsghdr* m, unsigned int n, int f) {
  REAL(sendmmsg);
  Count(k_sendmmsg);
  return real_sendmmsg(fd, m, n, f);
}
int epoll_wait(int e, struct epoll_event* ev, int n, int t) {
  REAL(epoll_wait);
  Count(k_epoll_wait);
  return real_epoll_wait(e, ev, n, t);
}
int epoll_pwait(int e, struct epoll_event* ev, int n, int t, const sigset_t* s) {
  REAL(epoll_pwait);
  Count(k_epoll_pwait);
  return real_epoll_pwait(e, ev, n, t, s);
}
int epoll_ctl(int e, int op, int fd, struct epoll_event* ev) {
  REAL(epoll_ctl);
  Count(k_epoll_ctl);
  return real_epoll_ctl(e, op, fd, ev);
}
int accept(int fd, struct sockaddr* a, socklen_t* l) {
  REAL(accept);
  Count(k_accept);
  return real_accept(fd, a, l);
}
int accept4(int fd, struct sockaddr* a, socklen_t* l, int f) {
  REAL(accept4);
  Count(k_accept4);
  return real_accept4(fd, a, l, f);
}
int connect(int fd, const struct sockaddr* a, socklen_t l) {
  REAL(connect);
  Count(k_connect);
  return real_connect(fd, a, l);
}
int close(int fd) {
  REAL(close);
  Count(k_close);
  return real_close(fd);
}
int shutdown(int fd, int how) {
  REAL(shutdown);
  Count(k_shutdown);
  return real_shutdown(fd, how);
}
int socket(int d, int t, int p) {
  REAL(socket);
  Count(k_socket);
  return real_socket(d, t, p);
}
int setsockopt(int fd, int l, int o, const void* v, socklen_t n) {
  REAL(setsockopt);
  Count(k_setsockopt);
  return real_setsockopt(fd, l, o, v, n);
}
int getsockopt(int fd, int l, int o, void* v, socklen_t* n) {
  REAL(getsockopt);
  Count(k_getsockopt);
  return real_getsockopt(fd, l, o, v, n);
}
int getsockname(int fd, struct sockaddr* a, socklen_t* l) {
  REAL(getsockname);
  Count(k_getsockname);
  return real_getsockname(fd, a, l);
}
int getpeername(int fd, struct sockaddr* a, socklen_t* l) {
  REAL(getpeername);
  Count(k_getpeername);
  return real_getpeername(fd, a, l);
}
ssize_t splice(int i, loff_t* oi, int o, loff_t* oo, size_t n, unsigned int f) {
  REAL(splice);
  Count(k_splice);
  return real_splice(i, oi, o, oo, n, f);
}
int poll(struct pollfd* p, nfds_t n, int t) {
  REAL(poll);
  Count(k_poll);
  return real_poll(p, n, t);
}
ssize_t sendfile64(int o, int i, off_t* off, size_t n) {
  REAL(sendfile64);
  Count(k_sendfile64);
  return real_sendfile64(o, i, off, n);
}

// The heap: glibc's own entry points, so no dlsym (which allocates) is needed.
extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);
extern void __libc_free(void*);

void* malloc(size_t n) {
  Count(k_malloc);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  Count(k_calloc);
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  Count(k_realloc);
  return __libc_realloc(p, n);
}
void free(void* p) {
  if (p != NULL) Count(k_free);
  __libc_free(p);
}
void* memalign(size_t a, size_t n) {
  Count(k_memalign);
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  Count(k_memalign);
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  Count(k_memalign);
  void* p = __libc_memalign(a, n);
  if (p == NULL) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* valloc(size_t n) {
  Count(k_memalign);
  return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n);
}
