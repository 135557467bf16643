// transport.cc: see transport.h.
#include "gateway/net/transport.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace portico::gateway::net {

IoResult PlainTransport::Read(char* data, size_t size) {
  ssize_t n;
  do {
    n = recv(fd_, data, size, 0);
  } while (n < 0 && errno == EINTR);
  if (n > 0) return {IoResult::kDone, static_cast<size_t>(n)};
  if (n == 0) return {IoResult::kEof, 0};
  return {errno == EAGAIN || errno == EWOULDBLOCK ? IoResult::kAgain : IoResult::kError, 0};
}

IoResult PlainTransport::Write(const iovec* pieces, int count) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(pieces);
  msg.msg_iovlen = static_cast<size_t>(count);
  ssize_t n;
  do {
    n = sendmsg(fd_, &msg, MSG_NOSIGNAL);  // no SIGPIPE on a closed peer
  } while (n < 0 && errno == EINTR);
  if (n >= 0) return {n > 0 ? IoResult::kDone : IoResult::kAgain, static_cast<size_t>(n)};
  return {errno == EAGAIN || errno == EWOULDBLOCK ? IoResult::kAgain : IoResult::kError, 0};
}

void PlainTransport::ShutdownWrite() {
  if (fd_ >= 0) shutdown(fd_, SHUT_WR);
}

void PlainTransport::Close() {
  if (fd_ < 0) return;
  close(fd_);
  fd_ = -1;
}

}  // namespace portico::gateway::net
