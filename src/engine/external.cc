#include "engine/external.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

namespace knee::engine {
namespace {

using core::ExternalFigures;
using core::ExternalMeasurement;
using core::kUnknown;
using core::Result;
using core::Status;
using nlohmann::json;

constexpr double kNsPerMs = 1e6;

double number_or(const json& j, const char* key, double fallback = kUnknown) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {  // fio's "job options" are strings: "iodepth": "16"
    const std::string& s = it->get_ref<const std::string&>();
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) return v;
  }
  return fallback;
}

std::string string_or(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The words of a command line, split on blanks (no shell quoting: enough for -c 8 -P 16).
std::vector<std::string> words_of(std::string_view command) {
  std::vector<std::string> words;
  std::istringstream in{std::string(command)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The number after `flag` ("-c 8" or "-c8"); fallback when absent or not a number.
double flag_value(std::string_view command, std::string_view flag, double fallback) {
  const std::vector<std::string> words = words_of(command);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string_view value;
    if (words[i] == flag && i + 1 < words.size()) {
      value = words[i + 1];
    } else if (words[i].size() > flag.size() && words[i].starts_with(flag)) {
      value = std::string_view(words[i]).substr(flag.size());
    } else {
      continue;
    }
    double v = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc() && p == value.data() + value.size()) return v;
  }
  return fallback;
}

// fio percentile keys are "99.000000": the value at percentile p, NaN when absent.
double fio_percentile(const json& clat, double p) {
  const auto it = clat.find("percentile");
  if (it == clat.end() || !it->is_object()) return kUnknown;
  for (const auto& [key, value] : it->items()) {
    if (std::abs(std::strtod(key.c_str(), nullptr) - p) < 1e-9 && value.is_number()) {
      return value.get<double>();
    }
  }
  return kUnknown;
}

// max over the known of a and b.
double max_known(double a, double b) {
  if (!core::is_known(a)) return b;
  if (!core::is_known(b)) return a;
  return std::max(a, b);
}

// The total of several jobs: rates add, mean latency is weighted by throughput, percentiles and
// the max are the highest job's, in flight adds, CPU is the busiest job's.
ExternalFigures total_of(const std::vector<ExternalFigures>& jobs) {
  ExternalFigures t;
  double weighted = 0, weight = 0;
  for (const ExternalFigures& j : jobs) {
    if (core::is_known(j.throughput))
      t.throughput = (core::is_known(t.throughput) ? t.throughput : 0) + j.throughput;
    if (core::is_known(j.bandwidth_bytes_per_s)) {
      t.bandwidth_bytes_per_s =
          (core::is_known(t.bandwidth_bytes_per_s) ? t.bandwidth_bytes_per_s : 0) +
          j.bandwidth_bytes_per_s;
    }
    if (core::is_known(j.latency_mean_ns) && core::is_known(j.throughput) && j.throughput > 0) {
      weighted += j.latency_mean_ns * j.throughput;
      weight += j.throughput;
    }
    t.latency_p50_ns = max_known(t.latency_p50_ns, j.latency_p50_ns);
    t.latency_p90_ns = max_known(t.latency_p90_ns, j.latency_p90_ns);
    t.latency_p99_ns = max_known(t.latency_p99_ns, j.latency_p99_ns);
    t.latency_p999_ns = max_known(t.latency_p999_ns, j.latency_p999_ns);
    t.latency_max_ns = max_known(t.latency_max_ns, j.latency_max_ns);
    if (core::is_known(j.in_flight))
      t.in_flight = (core::is_known(t.in_flight) ? t.in_flight : 0) + j.in_flight;
    t.cpu_pct = max_known(t.cpu_pct, j.cpu_pct);
    t.errors += j.errors;
  }
  if (weight > 0) t.latency_mean_ns = weighted / weight;
  return t;
}

// The JSON document in fio's output: fio may print warnings before it ("fio: ..."), so the
// document starts at the first line that opens an object.
std::string_view fio_document(std::string_view out) {
  for (size_t at = 0; at < out.size();) {
    if (out[at] == '{') return out.substr(at);
    const size_t nl = out.find('\n', at);
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return {};
}

}  // namespace

std::string_view to_text(Adapter a) {
  switch (a) {
    case Adapter::kFio:
      return "fio";
    case Adapter::kPgbench:
      return "pgbench";
    case Adapter::kRedisBenchmark:
      return "redis-benchmark";
    case Adapter::kJson:
      return "json";
  }
  return "json";
}

std::optional<Adapter> adapter_named(std::string_view name) {
  for (Adapter a : {Adapter::kFio, Adapter::kPgbench, Adapter::kRedisBenchmark, Adapter::kJson}) {
    if (name == to_text(a)) return a;
  }
  return std::nullopt;
}

Adapter adapter_for(std::string_view command) {
  const std::vector<std::string> words = words_of(command);
  if (words.empty()) return Adapter::kJson;
  std::string_view first = words.front();
  if (const size_t slash = first.rfind('/'); slash != std::string_view::npos) {
    first = first.substr(slash + 1);
  }
  if (first == "fio") return Adapter::kFio;
  if (first == "pgbench") return Adapter::kPgbench;
  if (first == "redis-benchmark") return Adapter::kRedisBenchmark;
  return Adapter::kJson;
}

Result<ExternalMeasurement> parse_fio_json(std::string_view out) {
  const std::string_view doc = fio_document(out);
  const json j = json::parse(doc.begin(), doc.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::parse_error("fio output: no JSON document (run fio with --output-format=json)");
  }
  const auto jobs = j.find("jobs");
  if (jobs == j.end() || !jobs->is_array() || jobs->empty()) {
    return Status::parse_error("fio output: no jobs");
  }
  const json global = j.value("global options", json::object());
  ExternalMeasurement m;
  m.unit = "IOPS";
  bool sync_with_depth = false;
  double runtime_ms = 0;
  for (const json& job : *jobs) {
    const json options = job.value("job options", json::object());
    auto option = [&](const char* key, double fallback) {
      return number_or(options, key, number_or(global, key, fallback));
    };
    ExternalFigures f;
    f.name = string_or(job, "jobname");
    double iops = 0, bytes = 0, weighted_lat = 0, ops = 0;
    bool any = false;
    for (const char* dir : {"read", "write", "trim"}) {
      const auto d = job.find(dir);
      if (d == job.end() || !d->is_object()) continue;
      const double dir_iops = number_or(*d, "iops", 0);
      const double dir_ios = number_or(*d, "total_ios", 0);
      if (dir_ios <= 0 && dir_iops <= 0) continue;
      any = true;
      iops += dir_iops;
      bytes += number_or(*d, "bw_bytes", 0);
      const json lat = d->value("lat_ns", json::object());
      const double mean = number_or(lat, "mean");
      if (core::is_known(mean)) {
        weighted_lat += mean * dir_ios;
        ops += dir_ios;
      }
      f.latency_max_ns = max_known(f.latency_max_ns, number_or(lat, "max"));
      // Percentiles of the whole latency when fio has them (--lat_percentiles=1), else of the
      // completion latency, which is what fio prints by default.
      json clat = lat.contains("percentile") ? lat : d->value("clat_ns", json::object());
      f.latency_p50_ns = max_known(f.latency_p50_ns, fio_percentile(clat, 50));
      f.latency_p90_ns = max_known(f.latency_p90_ns, fio_percentile(clat, 90));
      f.latency_p99_ns = max_known(f.latency_p99_ns, fio_percentile(clat, 99));
      f.latency_p999_ns = max_known(f.latency_p999_ns, fio_percentile(clat, 99.9));
      runtime_ms = std::max(runtime_ms, number_or(*d, "runtime", 0));
    }
    if (!any) continue;
    f.throughput = iops;
    f.bandwidth_bytes_per_s = bytes;
    if (ops > 0) f.latency_mean_ns = weighted_lat / ops;
    const double usr = number_or(job, "usr_cpu"), sys = number_or(job, "sys_cpu");
    if (core::is_known(usr) && core::is_known(sys)) f.cpu_pct = usr + sys;
    f.errors = static_cast<uint64_t>(std::max(0.0, number_or(job, "error", 0)));
    const double depth = option("iodepth", 1);
    // One entry for several jobs: --group_reporting folded numjobs of them into it.
    const double numjobs = jobs->size() == 1 ? option("numjobs", 1) : 1;
    std::string engine = string_or(options, "ioengine");
    if (engine.empty()) engine = string_or(global, "ioengine");
    const bool sync = engine.empty() || engine == "psync" || engine == "sync" ||
                      engine == "pvsync" || engine == "pvsync2" || engine == "vsync";
    if (sync && depth > 1) sync_with_depth = true;
    // A synchronous engine has one I/O in flight per job whatever iodepth says.
    f.in_flight = (sync ? 1 : depth) * numjobs;
    m.threads += static_cast<int>(numjobs);
    std::string file = string_or(options, "filename");
    if (file.empty()) file = string_or(global, "filename");
    if (!file.empty() && std::find(m.files.begin(), m.files.end(), file) == m.files.end()) {
      m.files.push_back(file);
    }
    m.jobs.push_back(std::move(f));
  }
  if (m.jobs.empty()) return Status::parse_error("fio output: no job did any I/O");
  m.total = total_of(m.jobs);
  if (m.jobs.size() == 1) m.jobs.clear();  // the total says it all
  if (runtime_ms > 0) m.runtime_s = runtime_ms / 1000;
  if (sync_with_depth) {
    m.notes.push_back(
        "fio's ioengine is synchronous (psync by default): iodepth above 1 keeps only one I/O in "
        "flight per job; use --ioengine=libaio or io_uring for a queue depth sweep");
  }
  return m;
}

Result<ExternalMeasurement> parse_pgbench(std::string_view out) {
  ExternalMeasurement m;
  m.unit = "tps";
  ExternalFigures& t = m.total;
  std::istringstream in{std::string(out)};
  bool tps_seen = false;
  for (std::string line; std::getline(in, line);) {
    auto after = [&](std::string_view prefix) -> std::optional<double> {
      if (!line.starts_with(prefix)) return std::nullopt;
      const char* begin = line.data() + prefix.size();
      double v = 0;
      const auto [p, ec] = std::from_chars(begin, line.data() + line.size(), v);
      if (ec != std::errc()) return std::nullopt;
      return v;
    };
    if (auto v = after("tps = ")) {
      // pgbench 14+ prints one tps line; older ones print "including" and "excluding
      // connections establishing": the excluding one, printed last, wins.
      t.throughput = *v;
      tps_seen = true;
    } else if (auto lat = after("latency average = ")) {
      t.latency_mean_ns = *lat * kNsPerMs;
    } else if (auto c = after("number of clients: ")) {
      t.in_flight = *c;
    } else if (auto j = after("number of threads: ")) {
      m.threads = static_cast<int>(*j);
    } else if (auto f = after("number of failed transactions: ")) {
      t.errors = static_cast<uint64_t>(*f);
    } else if (auto d = after("duration: ")) {
      m.runtime_s = *d;
    }
  }
  if (!tps_seen) {
    return Status::parse_error("pgbench output: no 'tps = ' line (did the run finish?)");
  }
  return m;
}

Result<ExternalMeasurement> parse_redis_benchmark_csv(std::string_view out,
                                                      std::string_view command) {
  ExternalMeasurement m;
  m.unit = "ops/s";
  std::istringstream in{std::string(out)};
  std::vector<std::string> header;
  const double in_flight = flag_value(command, "-c", 50) * flag_value(command, "-P", 1);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') {
        quoted = !quoted;
      } else if (ch == ',' && !quoted) {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += ch;
      }
    }
    cells.push_back(cell);
    if (header.empty()) {
      if (!cells.empty() && cells[0] == "test") header = cells;
      continue;
    }
    auto column = [&](std::string_view name) {
      for (size_t i = 0; i < header.size() && i < cells.size(); ++i) {
        if (header[i] == name) {
          double v = 0;
          const std::string& c = cells[i];
          const auto [p, ec] = std::from_chars(c.data(), c.data() + c.size(), v);
          if (ec == std::errc()) return v;
        }
      }
      return kUnknown;
    };
    ExternalFigures f;
    f.name = cells[0];
    f.throughput = column("rps");
    if (!core::is_known(f.throughput)) continue;
    f.latency_mean_ns = column("avg_latency_ms") * kNsPerMs;
    f.latency_p50_ns = column("p50_latency_ms") * kNsPerMs;
    f.latency_p99_ns = column("p99_latency_ms") * kNsPerMs;
    f.latency_max_ns = column("max_latency_ms") * kNsPerMs;
    f.in_flight = in_flight;
    m.jobs.push_back(std::move(f));
  }
  if (header.empty()) {
    return Status::parse_error(
        "redis-benchmark output: no CSV header (run redis-benchmark with --csv)");
  }
  if (m.jobs.empty()) return Status::parse_error("redis-benchmark output: no test rows");
  m.total = total_of(m.jobs);
  // The tests ran one after another with the same clients, not side by side.
  m.total.in_flight = in_flight;
  if (m.jobs.size() == 1) {
    m.total.name = m.jobs.front().name;
    m.jobs.clear();
  } else {
    // Rates of tests run one after another do not add: the total is the operations over the
    // time they took together (the harmonic combination of the rates, equal operations each).
    double seconds_per_op = 0;
    for (const ExternalFigures& f : m.jobs) seconds_per_op += 1.0 / f.throughput;
    m.total.throughput = static_cast<double>(m.jobs.size()) / seconds_per_op;
  }
  m.threads = static_cast<int>(flag_value(command, "--threads", 1));
  return m;
}

Result<ExternalMeasurement> parse_json_line(std::string_view out) {
  json j;
  bool found = false;
  size_t end = out.size();
  while (end > 0 && !found) {
    size_t start = out.rfind('\n', end - 1);
    start = start == std::string_view::npos ? 0 : start + 1;
    const std::string_view line = out.substr(start, end - start);
    if (line.find('{') != std::string_view::npos) {
      j = json::parse(line.begin(), line.end(), nullptr, false);
      found = !j.is_discarded() && j.is_object();
    }
    end = start > 0 ? start - 1 : 0;
  }
  if (!found) {
    return Status::parse_error(
        "json output: no line is a JSON object (print one, with \"throughput\", on stdout)");
  }
  ExternalMeasurement m;
  ExternalFigures& t = m.total;
  t.throughput = number_or(j, "throughput");
  if (!core::is_known(t.throughput) || t.throughput < 0) {
    return Status::parse_error(
        "json output: no number \"throughput\" >= 0 (operations per second) in its last JSON "
        "line");
  }
  m.unit = string_or(j, "unit");
  if (m.unit.empty()) m.unit = "ops/s";
  t.latency_mean_ns = number_or(j, "latency_mean_ms") * kNsPerMs;
  t.latency_p50_ns = number_or(j, "latency_p50_ms") * kNsPerMs;
  t.latency_p90_ns = number_or(j, "latency_p90_ms") * kNsPerMs;
  t.latency_p99_ns = number_or(j, "latency_p99_ms") * kNsPerMs;
  t.latency_p999_ns = number_or(j, "latency_p999_ms") * kNsPerMs;
  t.latency_max_ns = number_or(j, "latency_max_ms") * kNsPerMs;
  t.in_flight = number_or(j, "concurrency");
  t.errors = static_cast<uint64_t>(std::max(0.0, number_or(j, "errors", 0)));
  // A negative figure is a mistake of the command's, not a measurement.
  for (const auto& [key, value] :
       {std::pair{"latency_mean_ms", t.latency_mean_ns},
        std::pair{"latency_p50_ms", t.latency_p50_ns},
        std::pair{"latency_p90_ms", t.latency_p90_ns},
        std::pair{"latency_p99_ms", t.latency_p99_ns},
        std::pair{"latency_p999_ms", t.latency_p999_ns},
        std::pair{"latency_max_ms", t.latency_max_ns}, std::pair{"concurrency", t.in_flight}}) {
    if (core::is_known(value) &&
        (value < 0 || (value == 0 && std::string_view(key) == "concurrency"))) {
      return Status::parse_error(
          fmt::format("json output: \"{}\" is {:g}; latencies are >= 0 ms and concurrency > 0", key,
                      std::string_view(key) == "concurrency" ? value : value / kNsPerMs));
    }
  }
  if (core::is_known(t.latency_p50_ns) && core::is_known(t.latency_p99_ns) &&
      t.latency_p50_ns > t.latency_p99_ns) {
    return Status::parse_error("json output: \"latency_p50_ms\" is above \"latency_p99_ms\"");
  }
  return m;
}

Result<ExternalMeasurement> parse_external(Adapter a, std::string_view out,
                                           std::string_view command) {
  switch (a) {
    case Adapter::kFio:
      return parse_fio_json(out);
    case Adapter::kPgbench:
      return parse_pgbench(out);
    case Adapter::kRedisBenchmark:
      return parse_redis_benchmark_csv(out, command);
    case Adapter::kJson:
      return parse_json_line(out);
  }
  return parse_json_line(out);
}

std::string expand_level(std::string_view command_template, int level) {
  std::string out;
  const std::string n = std::to_string(level);
  for (size_t at = 0; at < command_template.size();) {
    if (command_template.substr(at, 3) == "{N}") {
      out += n;
      at += 3;
    } else {
      out += command_template[at++];
    }
  }
  return out;
}

Status check_template(std::string_view command_template) {
  if (command_template.find("{N}") == std::string_view::npos) {
    return Status::invalid_argument(fmt::format(
        "no {{N}} in '{}': put {{N}} where the level goes, e.g. 'fio ... --iodepth={{N}}'",
        command_template));
  }
  return Status::success();
}

Result<CommandResult> run_command(const std::string& command, core::Nanos timeout,
                                  const std::atomic<bool>* interrupt) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Status::from_errno("pipe", errno);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int err = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Status::from_errno("pipe", err);
  }
  const core::TimePoint started = core::Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return Status::from_errno("fork", err);
  }
  if (pid == 0) {
    setpgid(0, 0);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before a kill (either call may win)
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandResult r;
  std::string err;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  core::TimePoint kill_at{};  // SIGKILL after SIGTERM
  bool terminated = false;
  // Past the timeout or on interrupt: SIGTERM to the group, SIGKILL 2 s later.
  auto stop_when_due = [&] {
    const core::TimePoint now = core::Clock::now();
    const bool interrupted = interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
    if (!terminated && (now - started >= timeout || interrupted)) {
      r.timed_out = !interrupted;
      r.interrupted = interrupted;
      kill(-pid, SIGTERM);
      terminated = true;
      kill_at = now + std::chrono::seconds(2);
    } else if (terminated && now >= kill_at) {
      kill(-pid, SIGKILL);
      kill_at = now + std::chrono::hours(1);
    }
  };
  char buf[65536];
  int status = 0;
  rusage usage{};
  bool reaped = false;
  core::TimePoint exited_at{};
  // Reads until both pipes close. Once the command itself has exited, whatever it left holding
  // them (a daemon it started) gets kDrainAfterExit to finish writing, then is no longer waited
  // for.
  constexpr auto kDrainAfterExit = std::chrono::milliseconds(500);
  while (open_fds > 0) {
    stop_when_due();
    if (!reaped) {
      const pid_t w = wait4(pid, &status, WNOHANG, &usage);
      if (w == pid) {
        reaped = true;
        exited_at = core::Clock::now();
      }
    } else if (core::Clock::now() - exited_at >= kDrainAfterExit) {
      break;
    }
    const int ready = poll(fds, 2, 50);
    if (ready < 0 && errno != EINTR) break;
    for (pollfd& p : fds) {
      if (p.fd < 0 || (p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(p.fd, buf, sizeof buf);
      if (n > 0) {
        std::string& to = p.fd == out_pipe[0] ? r.out : err;
        to.append(buf, static_cast<size_t>(n));
        // Keep the tails: the adapters read the end of stdout, the error shows stderr's end.
        const size_t cap = p.fd == out_pipe[0] ? kMaxOutputBytes : 4 * kStderrTailBytes;
        if (to.size() > cap) to.erase(0, to.size() - cap);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(p.fd);
        p.fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  // The pipes closed with the command still running (it closed them itself): reap it, still
  // bounded by the timeout.
  while (!reaped) {
    const pid_t w = wait4(pid, &status, WNOHANG, &usage);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    stop_when_due();
    usleep(10'000);
  }
  // What the command left running in its process group is its own; stop it. (A process that
  // left the group with setsid is beyond reach.)
  if (open_fds > 0) kill(-pid, SIGTERM);
  if (terminated) kill(-pid, SIGKILL);  // anything of the group still alive
  r.wall_s = std::chrono::duration<double>(core::Clock::now() - started).count();
  r.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  r.err_tail = err.size() > kStderrTailBytes ? err.substr(err.size() - kStderrTailBytes) : err;
  return r;
}

namespace {

// "; its stderr ended: ..." with the last lines of stderr, or "" when it was empty.
std::string stderr_words(const std::string& tail) {
  std::string t = tail;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  if (t.empty()) return "; it printed nothing on stderr";
  // The last 5 lines at most, on one line each separated by " | ".
  std::vector<std::string> lines;
  std::istringstream in(t);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  const size_t from = lines.size() > 5 ? lines.size() - 5 : 0;
  std::string joined;
  for (size_t i = from; i < lines.size(); ++i) joined += (joined.empty() ? "" : " | ") + lines[i];
  return "; its stderr ended: " + joined;
}

}  // namespace

Result<core::ExternalRun> run_external_level(const ExternalSweepSpec& spec, int level,
                                             const ExternalSweepControl& control) {
  core::ExternalRun run;
  run.level = level;
  run.command = expand_level(spec.command_template, level);
  if (control.observer != nullptr) control.observer->start();
  auto result = run_command(run.command, spec.timeout, control.interrupt);
  core::ResourceUse use;
  if (control.observer != nullptr) use = control.observer->stop();
  if (!result) {
    return Status::io_error(fmt::format("level {}: `{}` could not be started: {}", level,
                                        run.command, result.status().message()));
  }
  const CommandResult& r = *result;
  if (r.interrupted) return Status::internal(fmt::format("level {}: interrupted", level));
  if (r.timed_out) {
    return Status::io_error(fmt::format(
        "level {}: `{}` ran past the timeout of {:g} s and was stopped{}", level, run.command,
        std::chrono::duration<double>(spec.timeout).count(), stderr_words(r.err_tail)));
  }
  if (r.signal != 0) {
    return Status::io_error(fmt::format("level {}: `{}` was killed by signal {} ({}){}", level,
                                        run.command, r.signal, strsignal(r.signal),
                                        stderr_words(r.err_tail)));
  }
  if (r.exit_code != 0) {
    return Status::io_error(fmt::format("level {}: `{}` exited with status {}{}", level,
                                        run.command, r.exit_code, stderr_words(r.err_tail)));
  }
  auto measured = parse_external(spec.adapter, r.out, run.command);
  if (!measured) {
    return Status::parse_error(fmt::format("level {}: `{}`: {}{}", level, run.command,
                                           measured.status().message(), stderr_words(r.err_tail)));
  }
  run.measured = std::move(*measured);
  run.wall_s = r.wall_s;
  if (r.cpu_s >= 0 && r.wall_s > 0) run.tool_cpu_cores = r.cpu_s / r.wall_s;
  if (control.observer != nullptr) run.use = std::move(use);
  return run;
}

ExternalSweepResult run_external_sweep(const ExternalSweepSpec& spec,
                                       const ExternalSweepControl& control) {
  ExternalSweepResult out;
  for (int level : spec.levels) {
    std::vector<core::ExternalRun> runs;
    for (int k = 0; k < spec.repeats; ++k) {
      if (control.interrupt != nullptr && control.interrupt->load()) {
        out.interrupted = true;
        return out;
      }
      if (control.on_run_start)
        control.on_run_start(level, k, expand_level(spec.command_template, level));
      auto run = run_external_level(spec, level, control);
      if (!run) {
        if (control.interrupt != nullptr && control.interrupt->load()) {
          out.interrupted = true;
        } else {
          out.error = run.status();
        }
        return out;
      }
      if (control.on_run_done) control.on_run_done(*run);
      runs.push_back(std::move(*run));
    }
    out.levels.push_back(std::move(runs));
  }
  return out;
}

}  // namespace knee::engine
