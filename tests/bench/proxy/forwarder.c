/* forwarder.c: the ceiling of a user-space proxy in the proxy benchmark (bench.py's
 * "forwarder-1route" configuration). Not a proxy: it parses nothing, routes nothing and logs
 * nothing. Each accepted connection gets its own upstream connection (connected once, kept for
 * the client connection's life) and bytes are copied both ways with read/write from one epoll
 * loop, which busy-polls for 50 us after the last event like portico-gateway's default
 * (--busy-poll-us 50). Whatever RPS it reaches on CPU 0 is what the layout leaves to any proxy
 * that copies bytes through user space; the report sets portico and the others against it.
 *
 *   forwarder LISTEN_PORT UPSTREAM_PORT      (both on 127.0.0.1; runs until killed)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { kMaxFd = 65536, kBusyPollUs = 50 };

static int peer_of[kMaxFd];

static long NowUs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static struct sockaddr_in Loopback(int port) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

static void CloseBoth(int fd) {
  int peer = peer_of[fd];
  peer_of[fd] = peer_of[peer] = -1; /* later events of this batch for either are skipped */
  close(peer);
  close(fd);
}

/* Writes all of buf to fd, waiting for writability when the socket buffer is full. */
static int WriteAll(int fd, const char* buf, ssize_t n) {
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w > 0) {
      buf += w;
      n -= w;
    } else if (w < 0 && errno == EAGAIN) {
      struct pollfd p = {.fd = fd, .events = POLLOUT};
      poll(&p, 1, -1);
    } else if (w < 0 && errno != EINTR) {
      return -1;
    }
  }
  return 0;
}

static void Accept(int listener, int ep, const struct sockaddr_in* upstream) {
  int one = 1;
  for (;;) {
    int client = accept4(listener, NULL, NULL, SOCK_NONBLOCK);
    if (client < 0) return;
    int up = socket(AF_INET, SOCK_STREAM, 0);
    if (client >= kMaxFd || up < 0 || up >= kMaxFd ||
        connect(up, (const struct sockaddr*)upstream, sizeof *upstream) != 0) {
      close(client);
      if (up >= 0) close(up);
      continue;
    }
    setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* Connected blocking (instant on loopback), then non-blocking like the client side. */
    if (fcntl(up, F_SETFL, O_NONBLOCK) != 0) {
      close(client);
      close(up);
      continue;
    }
    peer_of[client] = up;
    peer_of[up] = client;
    struct epoll_event e = {.events = EPOLLIN, .data.fd = client};
    epoll_ctl(ep, EPOLL_CTL_ADD, client, &e);
    e.data.fd = up;
    epoll_ctl(ep, EPOLL_CTL_ADD, up, &e);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s LISTEN_PORT UPSTREAM_PORT\n", argv[0]);
    return 2;
  }
  struct sockaddr_in listen_addr = Loopback(atoi(argv[1]));
  struct sockaddr_in upstream = Loopback(atoi(argv[2]));
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(listener, (struct sockaddr*)&listen_addr, sizeof listen_addr) != 0 ||
      listen(listener, 1024) != 0) {
    perror("forwarder: bind/listen");
    return 1;
  }
  int ep = epoll_create1(0);
  struct epoll_event le = {.events = EPOLLIN, .data.fd = listener};
  epoll_ctl(ep, EPOLL_CTL_ADD, listener, &le);
  struct epoll_event events[64];
  static char buf[65536];
  long last_event = 0;
  for (;;) {
    int n = epoll_wait(ep, events, 64, 0);
    if (n == 0) {
      if (NowUs() - last_event < kBusyPollUs) {
        __builtin_ia32_pause();
        continue;
      }
      n = epoll_wait(ep, events, 64, -1);
    }
    if (n < 0) continue;
    last_event = NowUs();
    for (int i = 0; i < n; i++) {
      int fd = events[i].data.fd;
      if (fd == listener) {
        Accept(listener, ep, &upstream);
        continue;
      }
      if (peer_of[fd] < 0) continue;
      ssize_t r = read(fd, buf, sizeof buf);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r <= 0 || WriteAll(peer_of[fd], buf, r) != 0) CloseBoth(fd);
    }
  }
}
