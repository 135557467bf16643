// tls_load.c: the TLS client of the proxy benchmark's TLS configurations (bench.py). One thread,
// epoll, non-blocking sockets, OpenSSL (the same libssl the proxies use). Why not wrk, s_time or
// h2load: wrk over https:// with `Connection: close` reconnects with SSL_clear, which keeps the
// SSL_SESSION, so every connection after a slot's first resumes (checked with nginx's
// $ssl_session_reused: 764 of 768 resumed) and it cannot do full handshakes; h2load --h1 does
// the same (396 of 400 resumed); `openssl s_time -new` does full handshakes but one connection
// at a time (latency-bound, not proxy-bound), sends HTTP/1.0 without Host and offers X25519,
// not the P-256 of the crypto floor. This client does either on purpose, many at once, offers
// P-256 only (so the handshake's ECDH is the one `openssl speed ecdhp256` times) and counts
// SSL_session_reused() so the bench can check that what it calls full or resumed was so.
//
//   tls_load --port P --mode full|resume|idle [--connections N] [--duration S] [--requests N]
//            [--host H] [--sni NAME] [--path P] [--groups LIST] [--concurrency N]
//
//   full    N connections in flight; each: TCP connect, full TLS 1.3 handshake (no session
//           offered), one GET with `Connection: close`, the whole response read, close; again
//           until --duration seconds or --requests responses. Tickets the server sends are read
//           and dropped.
//   resume  the same, but each slot offers the session (ticket) its previous connection got;
//           the first connection of each slot is full.
//   idle    opens N connections (--concurrency at a time), each one keep-alive request, then
//           holds them open; prints "ready N" once all are idle and waits for EOF on stdin
//           (--duration bounds the opening).
//
// Prints one line of key=value: requests (responses 200), full and resumed handshakes, errors,
// non2xx, seconds, rps, p50_ms and p99_ms (connect to last response byte), and the version,
// cipher and group of the last handshake.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { S_CONNECT, S_HANDSHAKE, S_WRITE, S_READ, S_IDLE };
enum { M_FULL, M_RESUME, M_IDLE };

typedef struct {
  int fd;
  SSL* ssl;
  SSL_SESSION* session;  // resume: the previous connection's
  int state;
  unsigned events;
  double started;
  size_t sent;
  char head[8192];
  size_t head_len;
  long body_left;  // -1: unknown (read to EOF)
  int status;
  int header_done;
  int in_use;
} conn_t;

static SSL_CTX* ctx;
static int ep, port = 0, mode = M_FULL, slots = 50, concurrency = 50;
static double duration = 5;
static unsigned long cap = 0;  // stop after this many responses (0: no cap)
static const char *host = "bench.example.com", *sni = NULL, *path = "/", *groups = "P-256";
static char request[1024];
static size_t request_len;
static unsigned long requests, full_hs, resumed_hs, errors, non2xx, started_conns, idle_ready;
static unsigned long err_connect, err_handshake, err_io, idle_closed;
static double* lat;
static size_t lat_len, lat_cap;
static char last_version[32] = "-", last_cipher[64] = "-", last_group[32] = "-";
static int running = 1;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void want(conn_t* c, unsigned events) {
  if (c->events == events) return;
  struct epoll_event ev = {.events = events, .data.ptr = c};
  epoll_ctl(ep, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev);
  c->events = events;
}

static void drop(conn_t* c) {
  if (c->ssl) SSL_free(c->ssl);
  c->ssl = NULL;
  if (c->fd >= 0) close(c->fd);  // epoll forgets it
  c->fd = -1;
  c->events = 0;
  c->in_use = 0;
}

static int start(conn_t* c) {
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (c->fd < 0) {
    err_connect++;
    return -1;
  }
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(0x7f000001);
  c->started = now();
  c->in_use = 1;
  c->events = 0;
  started_conns++;
  if (connect(c->fd, (struct sockaddr*)&a, sizeof(a)) != 0 && errno != EINPROGRESS) {
    err_connect++;
    drop(c);
    return -1;
  }
  c->ssl = SSL_new(ctx);
  SSL_set_fd(c->ssl, c->fd);
  SSL_set_tlsext_host_name(c->ssl, sni);
  if (mode == M_RESUME && c->session) SSL_set_session(c->ssl, c->session);
  c->state = S_CONNECT;
  c->sent = c->head_len = 0;
  c->header_done = 0;
  c->status = 0;
  c->body_left = -1;
  want(c, EPOLLOUT);
  return 0;
}

static void record(double seconds) {
  if (lat_len == lat_cap) {
    lat_cap = lat_cap ? lat_cap * 2 : 65536;
    lat = realloc(lat, lat_cap * sizeof(double));
  }
  lat[lat_len++] = seconds;
}

static int more(void) { return running && (cap == 0 || requests < cap); }

static void finished(conn_t* c) {
  if (c->status == 200) {
    requests++;
    record(now() - c->started);
  } else {
    non2xx++;
  }
  if (mode == M_IDLE) {
    c->state = S_IDLE;
    idle_ready++;
    want(c, EPOLLIN);  // only to see it closed
    return;
  }
  // A clean end for OpenSSL (no close_notify sent): SSL_free of a connection that did not shut
  // down marks its session not resumable (ssl_clear_bad_session).
  SSL_set_shutdown(c->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  if (mode == M_RESUME) {
    SSL_SESSION* s = SSL_get1_session(c->ssl);
    if (s && SSL_SESSION_is_resumable(s)) {
      if (c->session) SSL_SESSION_free(c->session);
      c->session = s;
    } else if (s) {
      SSL_SESSION_free(s);
    }
  }
  drop(c);
  if (more()) start(c);
}

static void failed(conn_t* c, unsigned long* counter) {
  (*counter)++;
  errors++;
  ERR_clear_error();
  if (c->state == S_IDLE) idle_ready--;
  drop(c);
  if (mode != M_IDLE && more()) start(c);
}

// parse: the status line and Content-Length once the head is complete; body bytes counted.
static int parse(conn_t* c, const char* data, size_t n) {
  if (c->header_done) {
    if (c->body_left >= 0) c->body_left -= (long)n;
    return c->body_left == 0;
  }
  size_t room = sizeof(c->head) - 1 - c->head_len;
  if (n > room) n = room;
  memcpy(c->head + c->head_len, data, n);
  c->head_len += n;
  c->head[c->head_len] = 0;
  char* end = strstr(c->head, "\r\n\r\n");
  if (!end) return 0;
  c->header_done = 1;
  if (strncmp(c->head, "HTTP/1.", 7) == 0 && c->head_len > 12) c->status = atoi(c->head + 9);
  for (char* line = strstr(c->head, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
    if (strncasecmp(line + 2, "content-length:", 15) == 0) c->body_left = atol(line + 17);
  }
  if (c->body_left >= 0) {
    c->body_left -= (long)(c->head_len - (size_t)(end + 4 - c->head));
    return c->body_left <= 0;
  }
  return 0;
}

static void remember(conn_t* c) {
  snprintf(last_version, sizeof(last_version), "%s", SSL_get_version(c->ssl));
  snprintf(last_cipher, sizeof(last_cipher), "%s", SSL_get_cipher_name(c->ssl));
  int nid = SSL_get_negotiated_group(c->ssl);
  const char* g = nid ? OBJ_nid2sn(nid & ~TLSEXT_nid_unknown) : NULL;
  snprintf(last_group, sizeof(last_group), "%s", g ? g : "-");
}

static void step(conn_t* c) {
  for (;;) {
    int r, e;
    switch (c->state) {
      case S_CONNECT: {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err) return failed(c, &err_connect);
        c->state = S_HANDSHAKE;
        continue;
      }
      case S_HANDSHAKE:
        r = SSL_connect(c->ssl);
        if (r == 1) {
          remember(c);
          if (SSL_session_reused(c->ssl)) {
            resumed_hs++;
          } else {
            full_hs++;
          }
          c->state = S_WRITE;
          continue;
        }
        e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ) return want(c, EPOLLIN);
        if (e == SSL_ERROR_WANT_WRITE) return want(c, EPOLLOUT);
        return failed(c, &err_handshake);
      case S_WRITE: {
        size_t n = 0;
        if (SSL_write_ex(c->ssl, request + c->sent, request_len - c->sent, &n) == 1) {
          c->sent += n;
          if (c->sent == request_len) c->state = S_READ;
          continue;
        }
        e = SSL_get_error(c->ssl, 0);
        if (e == SSL_ERROR_WANT_READ) return want(c, EPOLLIN);
        if (e == SSL_ERROR_WANT_WRITE) return want(c, EPOLLOUT);
        return failed(c, &err_io);
      }
      case S_READ: {
        char buf[16384];
        size_t n = 0;
        if (SSL_read_ex(c->ssl, buf, sizeof(buf), &n) == 1) {
          if (parse(c, buf, n)) return finished(c);
          continue;
        }
        e = SSL_get_error(c->ssl, 0);
        if (e == SSL_ERROR_WANT_READ) return want(c, EPOLLIN);
        if (e == SSL_ERROR_WANT_WRITE) return want(c, EPOLLOUT);
        if ((e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL) && c->header_done &&
            c->body_left < 0) {
          return finished(c);  // no Content-Length: the body ends at EOF
        }
        return failed(c, &err_io);
      }
      case S_IDLE: {
        char buf[4096];
        size_t n = 0;
        if (SSL_read_ex(c->ssl, buf, sizeof(buf), &n) == 1) continue;  // tickets, nothing else
        e = SSL_get_error(c->ssl, 0);
        if (e == SSL_ERROR_WANT_READ) return;
        idle_closed++;
        return failed(c, &err_io);
      }
    }
  }
}

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double pct(double p) {
  if (lat_len == 0) return -1;
  size_t i = (size_t)(p * (lat_len - 1) + 0.5);
  return lat[i] * 1e3;
}

static void on_signal(int sig) {
  (void)sig;
  running = 0;
}

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--port"))
      port = atoi(v);
    else if (!strcmp(k, "--mode"))
      mode = !strcmp(v, "resume") ? M_RESUME : !strcmp(v, "idle") ? M_IDLE : M_FULL;
    else if (!strcmp(k, "--connections"))
      slots = atoi(v);
    else if (!strcmp(k, "--concurrency"))
      concurrency = atoi(v);
    else if (!strcmp(k, "--duration"))
      duration = atof(v);
    else if (!strcmp(k, "--requests"))
      cap = strtoul(v, NULL, 10);
    else if (!strcmp(k, "--host"))
      host = v;
    else if (!strcmp(k, "--sni"))
      sni = v;
    else if (!strcmp(k, "--path"))
      path = v;
    else if (!strcmp(k, "--groups"))
      groups = v;
    else {
      fprintf(stderr, "tls_load: unknown option %s\n", k);
      return 2;
    }
  }
  if (port <= 0 || slots <= 0) {
    fprintf(stderr, "tls_load: --port and --connections > 0 needed\n");
    return 2;
  }
  if (!sni) sni = host;
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE,
                     NULL);  // the CertificateVerify signature is still checked
  if (SSL_CTX_set1_groups_list(ctx, groups) != 1) {
    fprintf(stderr, "tls_load: groups %s refused\n", groups);
    return 2;
  }
  // Sessions are kept by hand (resume); the client cache would only add work.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  request_len = (size_t)snprintf(request, sizeof(request), "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n",
                                 path, host, mode == M_IDLE ? "" : "Connection: close\r\n");
  ep = epoll_create1(0);
  int total = slots;
  int inflight = mode == M_IDLE ? (concurrency < slots ? concurrency : slots) : slots;
  conn_t* conns = calloc((size_t)total, sizeof(conn_t));
  for (int i = 0; i < total; i++) conns[i].fd = -1;
  int next = 0;
  double t0 = now(), deadline = t0 + duration;
  for (; next < inflight; next++) start(&conns[next]);
  struct epoll_event events[256];
  int stdin_watched = 0;
  while (running) {
    double left = deadline - now();
    if (mode != M_IDLE || idle_ready < (unsigned long)total) {
      if (left <= 0) break;
    }
    if (mode != M_IDLE && !more()) break;
    int n =
        epoll_wait(ep, events, 256, mode == M_IDLE && stdin_watched ? -1 : (int)(left * 1000) + 1);
    if (n < 0 && errno == EINTR) continue;
    for (int i = 0; i < n; i++) {
      if (events[i].data.ptr == NULL) {  // stdin: EOF (or anything) ends the idle hold
        running = 0;
        break;
      }
      conn_t* c = events[i].data.ptr;
      if (!c->in_use) continue;
      step(c);
    }
    if (mode == M_IDLE && running) {
      // Keep --concurrency connections opening until all are open and idle.
      unsigned long opening = 0;
      for (int i = 0; i < next; i++) {
        if (conns[i].in_use && conns[i].state != S_IDLE) opening++;
      }
      while (next < total && opening < (unsigned long)concurrency) {
        start(&conns[next++]);
        opening++;
      }
      if (errors > (unsigned long)total) break;
      if (!stdin_watched && idle_ready == (unsigned long)total) {
        printf("ready %lu\n", idle_ready);
        fflush(stdout);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLHUP, .data.ptr = NULL};
        epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
        stdin_watched = 1;
      }
    }
    if (requests == 0 && errors > 1000) break;  // nothing works: say so rather than spin
  }
  double elapsed = now() - t0;
  if (mode != M_IDLE && elapsed > duration) elapsed = duration;
  qsort(lat, lat_len, sizeof(double), compare);
  printf(
      "requests=%lu full=%lu resumed=%lu errors=%lu non2xx=%lu connect_errors=%lu "
      "handshake_errors=%lu io_errors=%lu idle=%lu idle_closed=%lu seconds=%.3f rps=%.1f "
      "p50_ms=%.3f p99_ms=%.3f version=%s cipher=%s group=%s\n",
      requests, full_hs, resumed_hs, errors, non2xx, err_connect, err_handshake, err_io, idle_ready,
      idle_closed, elapsed, requests / (elapsed > 0 ? elapsed : 1), pct(0.5), pct(0.99),
      last_version, last_cipher, last_group);
  fflush(stdout);
  for (int i = 0; i < total; i++) {
    if (conns[i].in_use) drop(&conns[i]);
    if (conns[i].session) SSL_SESSION_free(conns[i].session);
  }
  return requests > 0 ? 0 : 1;
}
