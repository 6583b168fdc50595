#include "net/transport.h"

#include <sys/socket.h>

#include <cerrno>

namespace knee::net {

IoResult TcpTransport::finish_connect() {
  const int err = connect_error(fd_.get());
  return err == 0 ? IoResult::done(0) : IoResult::failed(err);
}

IoResult TcpTransport::send_some(std::string_view data) {
  while (true) {
    const ssize_t n = ::send(fd_.get(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) return IoResult::done(static_cast<size_t>(n));
    if (n == 0) return IoResult::failed(EPIPE);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return IoResult::would_block();
    return IoResult::failed(errno);
  }
}

IoResult TcpTransport::recv_some(std::span<char> buffer) { return recv_plain(fd_.get(), buffer); }

IoResult recv_plain(int fd, std::span<char> buffer) {
  while (true) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n > 0) return IoResult::done(static_cast<size_t>(n));
    if (n == 0) return IoResult::closed();
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return IoResult::would_block();
    return IoResult::failed(errno);
  }
}

void TcpTransport::shutdown_write() { ::shutdown(fd_.get(), SHUT_WR); }

std::string failure_cause(const Transport& t, int err) {
  std::string text = t.error_text();
  return text.empty() ? core::errno_name(err) : text;
}

core::Status send_all(Transport& t, std::string_view data, std::string_view what) {
  while (!data.empty()) {
    const IoResult r = t.send_some(data);
    if (r.status == IoStatus::kDone) {
      data.remove_prefix(r.bytes);
      continue;
    }
    return core::Status::from_errno(what, r.status == IoStatus::kWouldBlock ? ETIMEDOUT : r.error);
  }
  return core::Status::success();
}

core::Status recv_exactly(Transport& t, std::span<char> buffer, std::string_view what) {
  size_t got = 0;
  while (got < buffer.size()) {
    const IoResult r = t.recv_some(buffer.subspan(got));
    if (r.status == IoStatus::kDone) {
      got += r.bytes;
      continue;
    }
    const int err = r.status == IoStatus::kWouldBlock ? ETIMEDOUT
                    : r.status == IoStatus::kClosed   ? EPIPE
                                                      : r.error;
    return core::Status::from_errno(what, err);
  }
  return core::Status::success();
}

}  // namespace knee::net
