// The loopback TCP rungs of the latency ladder: a ping-pong round trip and a connection set-up, on
// 127.0.0.1 with plain blocking sockets (no event loop: one operation at a time is the point).
#include <fmt/format.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <thread>

#include "net/socket.h"
#include "net/transport.h"
#include "probes/ladder.h"

namespace knee::probes {
namespace {

using core::Result;
using core::Status;

constexpr size_t kMessageBytes = 16;
constexpr auto kSocketTimeout = std::chrono::seconds(2);  // nothing here can hang

// A blocking listening socket on 127.0.0.1, ephemeral port; `addr` receives its address.
Result<net::Fd> listen_loopback(net::SocketAddress& addr) {
  auto fd = net::listen_tcp(net::loopback_v4(0), /*reuse_port=*/false, 128, net::Blocking::kYes);
  if (!fd) return fd.status();
  net::set_io_timeouts(fd->get(), kSocketTimeout);
  auto bound = net::local_address(fd->get());
  if (!bound) return bound.status();
  addr = *bound;
  return fd;
}

Result<net::TcpTransport> connect_to(const net::SocketAddress& addr) {
  auto fd = net::connect_tcp(addr, net::Blocking::kYes);
  if (!fd) return fd.status();
  net::set_io_timeouts(fd->get(), kSocketTimeout);
  return net::TcpTransport(std::move(fd).value());
}

Result<net::TcpTransport> accept_from(int listener, const net::SocketAddress& addr) {
  auto fd = net::accept_tcp(listener, net::Blocking::kYes);
  if (!fd) return Status::from_errno("accept " + addr.to_string(), fd.status().os_error());
  net::set_io_timeouts(fd->get(), kSocketTimeout);
  net::set_nodelay(fd->get());
  return net::TcpTransport(std::move(fd).value());
}

std::string batch_words(int64_t batch) {
  return batch == 1 ? "each timed alone"
                    : fmt::format("timed in batches of {}, per-operation time = batch time / {}",
                                  batch, batch);
}

Result<Rung> round_trip(const TimingLimits& limits) {
  net::SocketAddress addr;
  Result<net::Fd> listener = listen_loopback(addr);
  if (!listener) return listener.status();
  Result<net::TcpTransport> client = connect_to(addr);
  if (!client) return client.status();
  Result<net::TcpTransport> server = accept_from(listener->get(), addr);
  if (!server) return server.status();
  // The echo side: reads a message, writes it back, until the client closes.
  std::thread echo([&server] {
    std::array<char, kMessageBytes> buf{};
    while (net::recv_exactly(*server, buf, "echo read") &&
           net::send_all(*server, std::string_view(buf.data(), buf.size()), "echo write")) {
    }
  });
  std::array<char, kMessageBytes> out{};
  std::array<char, kMessageBytes> in{};
  std::memset(out.data(), 'p', out.size());
  const std::string what = "ping-pong on " + addr.to_string();
  Status failure;
  const Samples s = measure(limits, [&](uint64_t) {
    if (!failure.is_ok()) return;
    failure = net::send_all(*client, std::string_view(out.data(), out.size()), what);
    if (failure.is_ok()) failure = net::recv_exactly(*client, in, what);
    keep(in);
  });
  ::shutdown(client->fd(), SHUT_RDWR);
  echo.join();
  if (!failure.is_ok()) return failure;
  Rung r = summarise(s, limits.repeats);
  r.group = "loopback";
  r.id = "tcp_round_trip";
  r.name = "TCP round trip on loopback (16 bytes each way)";
  r.method = fmt::format(
      "write 16 bytes on a connected 127.0.0.1 TCP socket (TCP_NODELAY) and read 16 bytes back "
      "from an echo thread; two thread wake-ups and four system calls per round trip; {}",
      batch_words(r.batch));
  return r;
}

Result<Rung> connect_accept(const TimingLimits& limits) {
  net::SocketAddress addr;
  Result<net::Fd> listener = listen_loopback(addr);
  if (!listener) return listener.status();
  Status failure;
  const Samples s = measure(limits, [&](uint64_t) {
    if (!failure.is_ok()) return;
    Result<net::TcpTransport> client = connect_to(addr);
    if (!client) {
      failure = client.status();
      return;
    }
    Result<net::TcpTransport> accepted = accept_from(listener->get(), addr);
    if (!accepted) {
      failure = accepted.status();
      return;
    }
    // A reset instead of a FIN: no TIME_WAIT left behind, however many connections are timed.
    net::set_linger_reset(client->fd());
    keep(accepted->fd());
  });
  if (!failure.is_ok()) return failure;
  Rung r = summarise(s, limits.repeats);
  r.group = "loopback";
  r.id = "tcp_connect_accept";
  r.name = "TCP connect + accept on loopback";
  r.method = fmt::format(
      "socket(), blocking connect() to a 127.0.0.1 listener (the three-way handshake), accept() "
      "on the same thread, then close() of both ends (the client with SO_LINGER 0: a reset, no "
      "TIME_WAIT); all inside the timer; {}",
      batch_words(r.batch));
  return r;
}

}  // namespace

Result<std::vector<Rung>> run_loopback(const LadderOptions& options) {
  Result<Rung> rtt = round_trip(options.timing);
  if (!rtt) return rtt.status();
  Result<Rung> setup = connect_accept(options.timing);
  if (!setup) return setup.status();
  return std::vector<Rung>{std::move(*rtt), std::move(*setup)};
}

}  // namespace knee::probes
