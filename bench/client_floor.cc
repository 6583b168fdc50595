// The least CPU a closed-loop HTTP/1.1 client can spend per request on this host: a bare load
// loop that measures nothing (no clock read per request, no histogram, no parser), one request
// in flight on each of C keep-alive connections, over epoll or over io_uring. bench/client_floor.sh
// runs it beside knee and wrk against the same nginx, so knee's CPU per request can be read
// against the kernel's own share of it.
//
// It only counts whole responses of a fixed length, learned from the first one: the target must
// answer every GET / with the same bytes (../shared/bench/nginx.conf's `return 200 "ok\n"`, whose
// Date header keeps its length). Not a client to use elsewhere.
//
// io_uring (liburing 2.3, kernel >= 6.1): registered files, sends that post no completion on
// success (IOSQE_CQE_SKIP_SUCCESS), each response's send and next receive submitted together, one
// io_uring_enter per batch of completions (IORING_SETUP_DEFER_TASKRUN); the usual ways io_uring
// undercuts epoll's per-request system calls (liburing's io_uring_prep_send(3), io_uring_setup(2)).
//
// usage: client_floor epoll|uring CONNECTIONS SECONDS [PORT]   (target 127.0.0.1:PORT, 18080)
// Prints {"requests": N} (the shape ../shared/bench/peers.sh reads); exit 1 when a system call
// fails (set-up, or a send or receive during the run: the target must not fail), 2 on bad usage.
#include <arpa/inet.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::string_view kRequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
constexpr uint64_t kSendTag = ~uint64_t{0};

struct Connection {
  int fd = -1;
  size_t pending = 0;  // bytes of the response in progress
  std::array<char, 4096> buffer{};
};

[[noreturn]] void die(const char* what, int err) {
  std::fprintf(stderr, "client_floor: %s: %s\n", what, std::strerror(err));
  std::exit(1);
}

int open_connection(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    die("connect to 127.0.0.1", errno);
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// One blocking request on `c` (still a blocking socket): the length every response has.
size_t learn_response_length(Connection& c) {
  if (::send(c.fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL) < 0) die("send", errno);
  ::usleep(100'000);  // the whole response, in one read, from a loopback server
  const ssize_t n = ::recv(c.fd, c.buffer.data(), c.buffer.size(), 0);
  if (n <= 0) die("the first response", n == 0 ? ECONNRESET : errno);
  return static_cast<size_t>(n);
}

// Counts the whole responses `got` more bytes complete on `c`.
long take(Connection& c, size_t got, size_t response_length) {
  c.pending += got;
  long done = 0;
  while (c.pending >= response_length) {
    c.pending -= response_length;
    ++done;
  }
  return done;
}

long run_epoll(std::vector<Connection>& conns, size_t response_length,
               std::chrono::steady_clock::time_point until) {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1", errno);
  for (size_t i = 0; i < conns.size(); ++i) {
    int nonblocking = 1;
    ::ioctl(conns[i].fd, FIONBIO, &nonblocking);
    epoll_event e{};
    e.events = EPOLLIN | EPOLLET;
    e.data.u64 = i;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &e) != 0) die("epoll_ctl", errno);
    ::send(conns[i].fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL);
  }
  long done = 0;
  std::array<epoll_event, 256> events{};
  while (std::chrono::steady_clock::now() < until) {
    const int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    for (int k = 0; k < n; ++k) {
      Connection& c = conns[events[static_cast<size_t>(k)].data.u64];
      const ssize_t got = ::recv(c.fd, c.buffer.data(), c.buffer.size(), 0);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got <= 0) die("recv", got == 0 ? ECONNRESET : errno);  // as the io_uring loop
      const long whole = take(c, static_cast<size_t>(got), response_length);
      done += whole;
      if (whole > 0) ::send(c.fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL);
    }
  }
  ::close(ep);
  return done;
}

long run_uring(std::vector<Connection>& conns, size_t response_length,
               std::chrono::steady_clock::time_point until) {
  io_uring ring{};
  io_uring_params params{};
  params.flags =
      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN;
  const auto entries = static_cast<unsigned>(4 * conns.size() + 64);
  if (const int e = io_uring_queue_init_params(entries, &ring, &params); e < 0) {
    die("io_uring_queue_init_params", -e);
  }
  std::vector<int> fds;
  for (const Connection& c : conns) fds.push_back(c.fd);
  if (const int e = io_uring_register_files(&ring, fds.data(), static_cast<unsigned>(fds.size()));
      e < 0) {
    die("io_uring_register_files", -e);
  }
  auto receive = [&](size_t i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_recv(sqe, static_cast<int>(i), conns[i].buffer.data(), conns[i].buffer.size(), 0);
    sqe->flags |= IOSQE_FIXED_FILE;
    sqe->user_data = i;
  };
  auto request = [&](size_t i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_send(sqe, static_cast<int>(i), kRequest.data(), kRequest.size(), MSG_NOSIGNAL);
    sqe->flags |= IOSQE_FIXED_FILE | IOSQE_CQE_SKIP_SUCCESS;
    sqe->user_data = kSendTag;
    receive(i);
  };
  for (size_t i = 0; i < conns.size(); ++i) request(i);
  long done = 0;
  while (std::chrono::steady_clock::now() < until) {
    __kernel_timespec wait{0, 100'000'000};
    io_uring_cqe* cqe = nullptr;
    io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &wait, nullptr);
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ++seen;
      if (cqe->user_data == kSendTag) die("send", -cqe->res);  // only failures post
      if (cqe->res <= 0) die("recv", cqe->res == 0 ? ECONNRESET : -cqe->res);
      const size_t i = cqe->user_data;
      const long whole = take(conns[i], static_cast<size_t>(cqe->res), response_length);
      done += whole;
      if (whole > 0) {
        request(i);
      } else {
        receive(i);
      }
    }
    io_uring_cq_advance(&ring, seen);
  }
  io_uring_queue_exit(&ring);
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || (std::string(argv[1]) != "epoll" && std::string(argv[1]) != "uring")) {
    std::fprintf(stderr, "usage: client_floor epoll|uring CONNECTIONS SECONDS [PORT]\n");
    return 2;
  }
  const int count = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  const auto port = static_cast<uint16_t>(argc > 4 ? std::atoi(argv[4]) : 18080);
  if (count < 1 || count > 100'000 || seconds <= 0 || seconds > 600) {
    std::fprintf(stderr, "client_floor: give 1..100000 connections and 0..600 seconds\n");
    return 2;
  }
  std::vector<Connection> conns(static_cast<size_t>(count));
  for (Connection& c : conns) c.fd = open_connection(port);
  const size_t response_length = learn_response_length(conns[0]);
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(seconds));
  const long done = std::string(argv[1]) == "epoll" ? run_epoll(conns, response_length, until)
                                                    : run_uring(conns, response_length, until);
  std::printf("{\"requests\": %ld}\n", done);
  for (const Connection& c : conns) ::close(c.fd);
  return 0;
}
