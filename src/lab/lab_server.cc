#include "lab/lab_server.h"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "lab/server_worker.h"

namespace knee::lab {

using core::Result;
using core::Status;

namespace {

constexpr int kBacklog = 4096;  // the kernel caps it at net.core.somaxconn
constexpr int kMaxThreads = 1024;

// SO_REUSEPORT would let our listeners silently join another process's listeners on a fixed
// port. A plain bind first (SO_REUSEADDR only, which Linux refuses while anything listens on the
// port) turns that into the EADDRINUSE the user expects.
Status check_port_free(const net::SocketAddress& addr) {
  net::Fd probe(::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) return Status::from_errno("socket", errno);
  int one = 1;
  ::setsockopt(probe.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(probe.get(), reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) != 0) {
    return Status::from_errno("bind " + addr.to_string(), errno);
  }
  return Status::success();
}

Status validate(const ServerOptions& o) {
  if (o.threads < 1 || o.threads > kMaxThreads) {
    return Status::invalid_argument(
        fmt::format("threads must be 1 to {}, got {}", kMaxThreads, o.threads));
  }
  if (o.port < 0 || o.port > 65535) {
    return Status::invalid_argument(fmt::format("port must be 0 to 65535, got {}", o.port));
  }
  if (o.wait < core::Nanos::zero() || o.cpu < core::Nanos::zero() ||
      o.drain_timeout < core::Nanos::zero()) {
    return Status::invalid_argument("wait, cpu and drain_timeout must not be negative");
  }
  if (o.header_timeout <= core::Nanos::zero()) {
    return Status::invalid_field("header_timeout", "must be longer than 0");
  }
  if (o.idle_timeout <= core::Nanos::zero()) {
    return Status::invalid_field("idle_timeout", "must be longer than 0");
  }
  if (o.max_connections < 0) {
    return Status::invalid_field(
        "max_connections",
        fmt::format("must be 0 (the open-file limit) or more, got {}", o.max_connections));
  }
  if (o.max_header_bytes < 256 || o.max_header_bytes > http::kMaxHeaderSectionLimit) {
    return Status::invalid_field("max_header_bytes",
                                 fmt::format("must be 256 to {} bytes, got {}",
                                             http::kMaxHeaderSectionLimit, o.max_header_bytes));
  }
  return Status::success();
}

// Raises the soft open-file limit to the hard one (net::raise_open_file_limit) and derives or
// checks max_connections against it.
// Errors (invalid field "max_connections"): more connections than the limit leaves, naming
// `ulimit -n`.
Result<int> connection_limit(int asked) {
  const int64_t files = net::raise_open_file_limit();
  const int64_t room = std::max<int64_t>(1, files - kReservedFds);
  if (asked == 0) return static_cast<int>(room);
  if (asked > room) {
    return Status::invalid_field(
        "max_connections",
        fmt::format("{} connections need more file descriptors than the open-file limit ({}) "
                    "leaves after {} for the server's own; raise it (ulimit -n) or ask for at "
                    "most {}",
                    asked, files, kReservedFds, room));
  }
  return asked;
}

}  // namespace

core::Nanos limit_check_period(const ServerOptions& options) {
  const core::Nanos shorter = std::min(options.header_timeout, options.idle_timeout) / 10;
  return std::clamp<core::Nanos>(shorter, std::chrono::milliseconds(10), std::chrono::seconds(1));
}

LabServer::LabServer() : shared_(std::make_unique<ServerShared>()) {}

LabServer::~LabServer() {
  if (!joined_) {
    request_stop();
    wait();
  }
}

Result<std::unique_ptr<LabServer>> LabServer::start(const ServerOptions& options) {
  if (Status s = validate(options); !s) return s;
  auto max_connections = connection_limit(options.max_connections);
  if (!max_connections) return max_connections.status();
  auto addr = net::resolve(options.host, options.port);
  if (!addr) return addr.status();
  if (options.port != 0 && !options.share_port) {
    if (Status s = check_port_free(*addr); !s) return s;
  }

  // The first listener picks the port (when 0); the others join it with SO_REUSEPORT, and the
  // kernel spreads new connections across them.
  std::vector<net::Fd> listeners;
  auto first = net::listen_tcp(*addr, /*reuse_port=*/true, kBacklog);
  if (!first) return first.status();
  auto bound = net::local_address(first->get());
  if (!bound) return bound.status();
  listeners.push_back(std::move(first).value());
  for (int i = 1; i < options.threads; ++i) {
    auto more = net::listen_tcp(*bound, /*reuse_port=*/true, kBacklog);
    if (!more) return more.status();
    listeners.push_back(std::move(more).value());
  }

  std::unique_ptr<LabServer> server(new LabServer());
  server->address_ = *bound;
  ServerShared& shared = *server->shared_;
  shared.options = options;
  if (options.service) {
    auto service = ShipmentService::start(*options.service);
    if (!service) {
      server->joined_ = true;
      return service.status();
    }
    server->service_ = std::move(service).value();
    shared.service = server->service_.get();
  }
  shared.started = core::Clock::now();
  shared.workers = options.threads;
  shared.max_connections = *max_connections;
  shared.counters = std::make_unique<WorkerCounters[]>(static_cast<size_t>(options.threads));
  shared.metrics = std::make_unique<WorkerMetrics[]>(static_cast<size_t>(options.threads));
  for (int i = 0; i < options.threads; ++i) {
    auto worker = ServerWorker::create(shared, i, std::move(listeners[static_cast<size_t>(i)]));
    if (!worker) {
      server->joined_ = true;  // no thread started yet
      return worker.status();
    }
    server->workers_.push_back(std::move(worker).value());
  }

  server->clean_.assign(static_cast<size_t>(options.threads), 0);
  for (size_t i = 0; i < server->workers_.size(); ++i) {
    LabServer* s = server.get();
    try {
      server->threads_.emplace_back([s, i] {
        std::string name = fmt::format("knee-lab-{}", i);
        pthread_setname_np(pthread_self(), name.c_str());
        s->clean_[i] = s->workers_[i]->run() ? 1 : 0;
      });
    } catch (const std::system_error& e) {
      server->request_stop();
      server->wait();
      return Status::io_error(fmt::format("start lab server thread: {}", e.what()));
    }
  }
  return server;
}

void LabServer::request_stop() {
  shared_->stop.store(true, std::memory_order_release);
  for (auto& worker : workers_) worker->wake();
}

int LabServer::wait() {
  if (!joined_) {
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    joined_ = true;
    result_ = 0;
    for (size_t i = 0; i < threads_.size(); ++i) {
      if (clean_[i] == 0) result_ = 1;
      if (failure_ && !workers_[i]->failure()) failure_ = workers_[i]->failure();
    }
    if (threads_.size() < workers_.size()) result_ = 1;
    service_.reset();  // the loops are gone; its threads finish what is queued and exit
  }
  return result_;
}

Result<bool> serve_until_signalled(
    const ServerOptions& options,
    const std::function<void(const net::SocketAddress&)>& on_listening) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto server = LabServer::start(options);
  if (!server) return server.status();
  on_listening((*server)->address());
  int signal_number = 0;
  while (sigwait(&stop_signals, &signal_number) != 0) {
  }
  (*server)->request_stop();
  const bool clean = (*server)->wait() == 0;
  if (!(*server)->failure()) return (*server)->failure();  // a loop failed, not the drain
  return clean;
}

}  // namespace knee::lab
