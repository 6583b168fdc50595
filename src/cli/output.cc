#include "cli/output.h"

#include <fmt/core.h>
#include <signal.h>

#include <cerrno>
#include <ctime>

#include "cli/command.h"
#include "report/hlog.h"
#include "report/html.h"

namespace knee::cli {

using core::Status;

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

report::LoadParams load_params(const engine::LoadOptions& o, const std::string& url_template,
                               int repeats) {
  auto secs = [](core::Nanos d) { return std::chrono::duration<double>(d).count(); };
  report::LoadParams p;
  p.url = url_template;
  p.method = o.request.method;
  p.duration_s = secs(o.duration);
  p.warmup_s = secs(o.warmup);
  p.timeout_s = secs(o.timeout);
  p.grace_s = secs(o.grace_or_default());
  p.threads = o.threads;
  p.repeats = repeats;
  p.arrival = o.arrival == engine::Arrival::kPoisson ? "poisson" : "uniform";
  if (!o.keepalive) p.new_connection_per_request = true;
  if (o.h2) p.protocol = o.request.url.scheme == "https" ? "h2" : "h2c";
  if (o.per_connection > 1) p.per_connection = o.per_connection;
  bool shipments = o.request.url.target.find("{shipment}") != std::string::npos ||
                   o.request.body.find("{shipment}") != std::string::npos;
  if (!o.mix.empty()) {
    std::string text;
    for (const engine::MixEndpoint& e : o.mix) {
      text += fmt::format("{}{}={:g}", text.empty() ? "" : ",", e.name, e.weight);
      shipments = shipments || e.request.url.target.find("{shipment}") != std::string::npos ||
                  e.request.body.find("{shipment}") != std::string::npos;
    }
    p.mix = text;
  }
  if (!o.stages.empty()) {
    std::string text;
    for (const engine::Stage& st : o.stages) {
      text += fmt::format("{}{:g}s:{:g}", text.empty() ? "" : ",",
                          std::chrono::duration<double>(st.duration).count(), st.target_rps);
    }
    p.stages = text;
  }
  if (o.share.count > 1) p.part = report::PartParams{o.share.index, o.share.count};
  if (shipments) {
    p.shipments = o.shipments.count;
    p.zipf = o.shipments.zipf;
  }
  if (o.request.url.scheme == "https") {
    report::TlsParams t;
    t.verify = o.tls.verify;
    t.ca_file = o.tls.ca_file;
    t.client_cert = o.tls.cert_file;
    if (o.tls.version) t.version = *o.tls.version == 12 ? "1.2" : "1.3";
    t.resume = o.tls.resume;
    p.tls = t;
  }
  return p;
}

Status check_server_pid(std::optional<int> pid) {
  if (!pid) return Status::success();
  if (*pid <= 0 || (::kill(*pid, 0) != 0 && errno == ESRCH)) {
    return Status::invalid_argument(fmt::format(
        "--server-pid: no process {} is running; give the pid of the server under test, e.g. "
        "--server-pid $(pgrep -o nginx)",
        *pid));
  }
  return Status::success();
}

void TargetFlags::add_to(CLI::App& app) {
  app.add_option("--server-pid", server_pid,
                 "The server's process id, to report its CPU, threads and memory and name the "
                 "saturated resource");
  app.add_flag("--stack", stack,
               "The target is the stack `knee lab up` started: follow its balancer and every "
               "replica (CPU, threads, memory, requests each answered from its /health), name "
               "which one saturated, and print requests per replica");
  app.add_option("--lab-state", lab_state,
                 "With --stack: the lab's state folder, as given to knee lab up --state "
                 "(default $XDG_STATE_HOME/knee/lab)")
      ->type_name("DIR");
}

core::Result<std::pair<probes::WatchedProcesses, std::optional<lab::Stack>>> TargetFlags::resolve()
    const {
  if (Status s = check_server_pid(server_pid); !s) return s;
  if (!stack) {
    if (!lab_state.empty()) {
      return Status::invalid_argument("--lab-state: only with --stack; add --stack");
    }
    return std::pair{probes::WatchedProcesses::server_only(server_pid),
                     std::optional<lab::Stack>()};
  }
  if (server_pid) {
    return Status::invalid_argument(
        "--server-pid and --stack: give one; --stack follows the stack's balancer and replicas");
  }
  auto up = lab::read_stack((lab_state.empty() ? default_state_dir() : lab_state) + "/stack");
  if (!up) return up.status().with_context("--stack");
  probes::WatchedProcesses w;
  for (const lab::StackPart& p : up->parts) {
    const probes::WatchedProcess process{p.name, static_cast<int>(lab::working_pid(p))};
    // The database is left out: the postmaster forks a process per connection, and its own
    // CPU says nothing of theirs (the host's figures hold them).
    if (p.role == "balancer") {
      w.server = process;
    } else if (p.role != "db") {
      w.backends.push_back(process);
    }
  }
  return std::pair{std::move(w), std::optional<lab::Stack>(std::move(up).value())};
}

HostObserver::HostObserver(probes::WatchedProcesses processes, std::optional<lab::Stack> stack,
                           std::chrono::milliseconds every)
    : processes_(std::move(processes)), sampler_(probes::FsReader("/"), every) {
  if (stack) served_.emplace(std::move(*stack));
}

void HostObserver::start() {
  if (served_) served_->start();
  sampler_.start(processes_);
}

core::ResourceUse HostObserver::stop() {
  core::ResourceUse use = sampler_.stop();
  if (served_) served_->finish(use.backends);
  return use;
}

Status FileOrStdout::open(std::string_view flag, std::string path,
                          const std::vector<std::string>& inputs) {
  to_stdout_ = path == "-";
  return to_stdout_ ? Status::success() : file_.open(flag, std::move(path), inputs);
}

Status FileOrStdout::write(const std::string& text) {
  if (!to_stdout_) return file_.write(text);
  fmt::print("{}", text);
  return Status::success();
}

Status HlogOutput::open(std::string path) {
  if (path == "-") {
    return Status::invalid_argument(
        "--hlog: give a file name; the log is written to it as the run goes, and stdout carries "
        "the text");
  }
  return file_.open("--hlog", std::move(path));
}

void HlogOutput::write(const engine::IntervalRecord& record) {
  if (!error_) return;
  if (!writer_) {
    start_epoch_s_ = record.measure_start_epoch_s;
    writer_.emplace(file_.stream(), start_epoch_s_);
  }
  error_ = writer_->write_interval(
      record.measure_start_epoch_s - start_epoch_s_ + record.summary.start_s,
      record.summary.length_s, record.latency_ns, tag_);
}

Status HlogOutput::finish() {
  if (!error_) return error_.with_context("--hlog");
  if (!writer_) {  // no interval completed: the header alone, timed now
    const double now_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    writer_.emplace(file_.stream(), now_s);
  }
  return file_.commit();
}

Status ResultFiles::open(const OutputFlags& flags) {
  json_to_stdout_ = flags.json == "-";
  const std::pair<const char*, const std::string*> named[] = {
      {"--json", &flags.json}, {"--html", &flags.html}, {"--hlog", &flags.hlog}};
  for (size_t i = 0; i < 3; ++i) {
    for (size_t k = i + 1; k < 3; ++k) {
      const std::string& a = *named[i].second;
      if (!a.empty() && a != "-" && a == *named[k].second) {
        return Status::invalid_argument(
            fmt::format("{} and {}: both name '{}'; give each its own file", named[i].first,
                        named[k].first, a));
      }
    }
  }
  if (Status s = json.open("--json", flags.json); !s) return s;
  if (Status s = html.open("--html", flags.html); !s) return s;
  return hlog.open(flags.hlog);
}

void ResultFiles::connect(engine::PlanControl& control) {
  if (!hlog.wanted()) return;
  control.on_interval = [this](const engine::IntervalRecord& r) { hlog.write(r); };
}

Status ResultFiles::write(const report::Document& doc, const std::string& text) {
  if (hlog.wanted()) {
    if (Status s = hlog.finish(); !s) return s;
  }
  if (!json_to_stdout_) fmt::print("{}", text);
  if (json.wanted()) {
    if (Status s = json.write(json_text(doc)); !s) return s;
  }
  if (html.wanted()) {
    auto page = report::render_html(doc, "--html");
    if (!page) return page.status();
    if (Status s = html.write(*page); !s) return s;
  }
  return Status::success();
}

std::string json_text(const report::Document& doc) { return report::to_json(doc).dump(2) + "\n"; }

}  // namespace knee::cli
