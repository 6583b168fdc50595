// Fuzz target: the lab server's handling of a whole connection's bytes (ServerWorker: the
// request parser in its read buffer, pipelining, bodies skipped or read for /events, the h2c
// preface, the limits), over a real socket to one LabServer started for the whole run.
//
// Input: the bytes a client sends on one connection, followed by its FIN. Inputs naming
// /slow-async, /slow-sync or /stall are skipped: they wait or burn CPU for as long as they ask
// (up to 60 s), which is their job, not a hang. Checks (abort on failure):
//   - the server closes the connection within 5 s of the client's FIN (no connection hangs);
//   - what it sends on an HTTP/1.1 connection without HEAD requests is a sequence of complete,
//     valid HTTP/1.1 responses (ResponseParser);
//   - the server survives: it answers /health on a fresh connection every 256 inputs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "http/response_parser.h"
#include "lab/lab_server.h"

namespace {

using namespace std::chrono_literals;

void check(bool ok, const char* what = "") {
  if (ok) return;
  std::fprintf(stderr, "lab_connection_fuzz: %s (errno %d: %s)\n", what, errno,
               std::strerror(errno));
  std::abort();
}

const knee::lab::LabServer& server() {
  static const std::unique_ptr<knee::lab::LabServer> s = [] {
    knee::lab::ServerOptions o;
    o.wait = 0ms;  // /tracking answers at once
    o.cpu = 0ms;
    o.header_timeout = 2s;
    o.max_body_bytes = 64 * 1024;
    auto started = knee::lab::LabServer::start(o);
    check(started.has_value());
    return std::move(started).value();
  }();
  return *s;
}

// Sends `bytes` and a FIN on a new connection; returns what the server sent until it closed.
std::string exchange(std::string_view bytes) {
  const knee::net::SocketAddress& addr = server().address();
  const int fd = ::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  check(fd >= 0, "socket");
  check(::connect(fd, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) == 0,
        "connect");
  // The input (at most libFuzzer's -max_len, 4096 by default) fits the socket buffer.
  (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  std::string got;
  char buf[16384];
  while (true) {
    pollfd p{fd, POLLIN, 0};
    check(::poll(&p, 1, 5000) == 1, "no close within 5 s");  // the server must close
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;  // closed (a reset after unread bytes counts as closed)
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return got;
}

void check_responses(std::string_view out) {
  knee::http::ResponseParser parser;
  size_t pos = 0;
  while (pos < out.size()) {
    parser.reset();
    pos += parser.feed(out.data() + pos, out.size() - pos);
    check(parser.state() == knee::http::ResponseParser::State::kComplete);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static uint64_t inputs = 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (std::string_view waits : {"/slow-async", "/slow-sync", "/stall"}) {
    if (bytes.find(waits) != std::string_view::npos) return 0;
  }
  // libFuzzer's timeout alarm (SIGALRM) would interrupt connect, poll and recv (EINTR): it waits
  // until the exchange is over, which the 5 s bound of exchange() keeps short.
  sigset_t alarm, before;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alarm, &before);
  const std::string out = exchange(bytes);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  // HTTP/2 answers are not HTTP/1.1; a HEAD's answer has a length but no body, which the parser
  // can only be told per request.
  if (!bytes.starts_with("PRI ") && bytes.find("HEAD") == std::string_view::npos) {
    check_responses(out);
  }
  if (++inputs % 256 == 0) {
    pthread_sigmask(SIG_BLOCK, &alarm, nullptr);
    const std::string health = exchange("GET /health HTTP/1.1\r\nHost: f\r\n\r\n");
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    check(health.starts_with("HTTP/1.1 200 "));
  }
  return 0;
}
