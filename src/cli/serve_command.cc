// `knee serve`: runs the lab server until SIGTERM or SIGINT, then drains and exits.
//
// The first stdout line is exactly "listening on HOST:PORT" (flushed at once), which scripts and
// `knee sweep` read to learn an ephemeral port. With --tls a second line names the certificate
// and its SHA-256 fingerprint.
#include <fmt/core.h>

#include <cstdio>
#include <string>
#include <tuple>

#include "cli/command.h"
#include "cli/server_limits.h"
#include "core/units.h"
#include "lab/lab_server.h"
#include "lab/state_folder.h"
#include "net/tls.h"

namespace knee::cli {
namespace {

class ServeCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app_ = &app;
    app.add_option("--host", host_, "Address or host name to listen on")->capture_default_str();
    app.add_option("--port", port_, "TCP port; 0 picks a free one (see the first output line)")
        ->capture_default_str()
        ->check(CLI::Range(0, 65535));
    app.add_option("-t,--threads", threads_,
                   "Event-loop threads, each with its own listener on the port (SO_REUSEPORT)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    app.add_option("--instance", instance_, "Instance name that /fast, /slow-* and /health report")
        ->capture_default_str();
    app.add_option("--wait", wait_,
                   "/tracking's wait per request, on a timer (the loop stays free): 3ms, 0")
        ->capture_default_str();
    app.add_option("--cpu", cpu_, "/tracking's CPU share per request, in thread CPU time: 200us")
        ->capture_default_str();
    app.add_option("--extra-cpu", extra_cpu_,
                   "CPU burnt before answering every request but /health and /metrics (a slow "
                   "replica for knee lab up --replica-cost), 0 for none")
        ->capture_default_str();
    app.add_flag("--share-port", share_port_,
                 "With a fixed --port: join the listeners another knee serve has on it "
                 "(SO_REUSEPORT), as a rolling deploy's new replica does (knee lab deploy)");
    app.add_option("--drain-timeout", drain_timeout_,
                   "On SIGTERM/SIGINT, how long requests in flight may take to finish")
        ->capture_default_str();
    app.add_option("--drain-idle", drain_idle_,
                   "On SIGTERM/SIGINT, how long idle keep-alive connections stay open for a last "
                   "request (answered with Connection: close), so a balancer's request on one "
                   "does not meet the close; 0 closes them at once")
        ->capture_default_str();
    limits_.add_to(app);
    app.add_flag("--tls", tls_,
                 "Speak TLS (then HTTP/1.1): a self-signed certificate for localhost, 127.0.0.1 "
                 "and ::1 made at start, its fingerprint printed; or --cert and --key");
    app.add_option("--cert", cert_, "With --tls: the certificate chain to serve (PEM)")
        ->type_name("FILE");
    app.add_option("--key", key_, "With --tls: its private key (PEM, unencrypted)")
        ->type_name("FILE");
    app.add_option("--io", io_,
                   "How responses are written: epoll (a send per response) or uring (those of "
                   "one loop iteration in one io_uring system call; plain TCP only)")
        ->capture_default_str()
        ->check(CLI::IsMember({"epoll", "uring"}));
    app.add_option("--state", state_,
                   "Serve the shipment service (GET /tracking/{no}, POST /events) on the data "
                   "set in this state folder's shipments.db (made by knee lab data --state DIR)")
        ->type_name("DIR");
    app.add_option("--db", db_,
                   "Serve the shipment service from PostgreSQL instead: the data set knee lab "
                   "data --db URL loaded, at this postgresql://USER@HOST:PORT/DB URL");
    app.add_option("--store-threads", service_.readers,
                   "With --state: store threads for reads, each with its own connection")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    app.add_option("--cache", service_.cache_url,
                   "With --state/--db: cache tracking reads in Redis at redis://HOST:PORT[/DB] "
                   "instead of in process (write-through on events; a Redis away costs misses)");
    app.add_option("--cache-entries", cache_entries_,
                   "With --state: tracking reads cached in process (LRU), 0 for none; k/M allowed")
        ->capture_default_str();
    app.add_option("--cache-ttl", cache_ttl_, "With --state: how long a cached state stays fresh")
        ->capture_default_str();
    app.add_option("--commit-batch", service_.commit_batch,
                   "With --state: events committed together at most (group commit, one fsync "
                   "each); 1 commits every event alone")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
    app.add_option("--commit-delay", commit_delay_,
                   "With --state: how long a commit waits for its batch to fill (0: it takes what "
                   "is queued at once)")
        ->capture_default_str();
  }

  int run() override {
    lab::ServerOptions options;
    options.host = host_;
    options.port = port_;
    options.threads = threads_;
    options.instance = instance_;
    options.share_port = share_port_;
    struct Duration {
      const char* flag;
      const std::string& text;
      core::Nanos& out;
    };
    for (const Duration& d :
         {Duration{"--wait", wait_, options.wait}, Duration{"--cpu", cpu_, options.cpu},
          Duration{"--extra-cpu", extra_cpu_, options.extra_cpu},
          Duration{"--drain-timeout", drain_timeout_, options.drain_timeout},
          Duration{"--drain-idle", drain_idle_, options.drain_idle}}) {
      auto parsed = core::parse_duration(d.text);
      if (!parsed) return fail(parsed.status().with_context(d.flag));
      d.out = *parsed;
    }

    if (core::Status s = limits_.apply(options); !s) return fail(s);
    if (core::Status s = service_options(options); !s) return fail(s);
    if (!tls_ && (!cert_.empty() || !key_.empty())) {
      return fail(core::Status::invalid_argument("--cert/--key: only with --tls"));
    }
    if (io_ == "uring") {
      if (tls_) {
        return fail(core::Status::invalid_argument(
            "--io uring: plain TCP only (TLS writes through OpenSSL); drop --tls or --io"));
      }
      options.io = net::IoPath::kUring;
    }
    if (tls_) {
      auto context = net::TlsContext::create_server({cert_, key_}, {"h2", "http/1.1"});
      if (!context) return fail(context.status());  // its fields: cert, key
      options.tls = std::move(context).value();
    }
    auto clean = lab::serve_until_signalled(options, [&](const net::SocketAddress& address) {
      fmt::print("listening on {}\n", address.to_string());
      if (options.tls) {
        fmt::print("TLS: {}, SHA-256 fingerprint {}\n",
                   options.tls->self_signed()
                       ? "a self-signed certificate made at start for localhost, 127.0.0.1 and "
                         "::1 (clients: -k, or compare the fingerprint)"
                       : "certificate " + cert_,
                   options.tls->fingerprint());
      }
      std::fflush(stdout);
    });
    if (!clean && clean.status().field() == "io") return fail(clean.status());  // no io_uring
    if (!clean) return fail(ServerLimitFlags::named(clean.status()));
    if (!*clean) {
      fmt::print(stderr, "knee serve: drain timed out after {}: requests in flight were cut off\n",
                 drain_timeout_);
      return kExitRunFailed;
    }
    return kExitOk;
  }

 private:
  // "knee serve: [flag: ]message" on stderr; 2 for bad input, else 1.
  static int fail(const core::Status& status) { return report_failure(status, "serve"); }

  // The shipment service's options into `options.service`, when --state or --db is given.
  // Errors: kInvalidArgument naming the flag.
  core::Status service_options(lab::ServerOptions& options) {
    const char* service_flags[] = {"--store-threads", "--cache",        "--cache-entries",
                                   "--cache-ttl",     "--commit-batch", "--commit-delay"};
    if (state_.empty() && db_.empty()) {
      for (const char* flag : service_flags) {
        if (app_->count(flag) > 0) {
          return core::Status::invalid_argument(
              fmt::format("{}: only with --state DIR or --db URL (the shipment service)", flag));
        }
      }
      return core::Status::success();
    }
    auto location = lab::store_location(state_, db_);
    if (!location) return location.status();
    auto entries = core::parse_count(cache_entries_);
    if (!entries) return entries.status().with_context("--cache-entries");
    service_.cache_entries = static_cast<size_t>(*entries);
    for (auto [flag, text, out] :
         {std::tuple{"--cache-ttl", &cache_ttl_, &service_.cache_ttl},
          std::tuple{"--commit-delay", &commit_delay_, &service_.commit_delay}}) {
      auto d = core::parse_duration(*text);
      if (!d) return d.status().with_context(flag);
      *out = *d;
    }
    service_.database = *location;
    options.service = service_;
    return core::Status::success();
  }

  CLI::App* app_ = nullptr;
  std::string state_;
  std::string db_;
  lab::ServiceOptions service_;
  std::string cache_entries_ = "100k";
  std::string cache_ttl_ = "5s";
  std::string commit_delay_ = "0";
  std::string host_ = "127.0.0.1";
  int port_ = 8080;
  int threads_ = 1;
  std::string instance_ = "app1";
  std::string wait_ = "3ms";
  std::string cpu_ = "200us";
  std::string extra_cpu_ = "0";
  bool share_port_ = false;
  std::string drain_timeout_ = "5s";
  std::string drain_idle_ = "500ms";
  bool tls_ = false;
  std::string cert_, key_;
  std::string io_ = "epoll";
  ServerLimitFlags limits_;
};

}  // namespace

std::unique_ptr<Subcommand> make_serve_command() { return std::make_unique<ServeCommand>(); }

}  // namespace knee::cli
