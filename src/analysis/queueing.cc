#include "analysis/queueing.h"

#include <fmt/core.h>

#include <cmath>
#include <limits>

#include "analysis/little.h"

namespace knee::analysis {
namespace {

using core::Result;
using core::Status;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kNsPerSecond = 1e9;

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

Status check_rates(const char* model, double lambda_rps, double mu_rps) {
  if (!finite_positive(mu_rps)) {
    return Status::invalid_argument(
        fmt::format("{}: service rate mu must be a number > 0 (req/s), got {}", model, mu_rps));
  }
  if (!std::isfinite(lambda_rps) || lambda_rps < 0) {
    return Status::invalid_argument(fmt::format(
        "{}: arrival rate lambda must be a number >= 0 (req/s), got {}", model, lambda_rps));
  }
  return Status::success();
}

// Fills Lq and L from Wq and W by Little's law.
void apply_little(QueueModel& m) {
  m.mean_queue_length = little_n(m.lambda_rps, m.mean_wait_ns);
  m.mean_in_system = little_n(m.lambda_rps, m.mean_response_ns);
}

}  // namespace

Result<QueueModel> mm1(double lambda_rps, double mu_rps) {
  if (Status s = check_rates("M/M/1", lambda_rps, mu_rps); !s) return s;
  QueueModel m;
  m.servers = 1;
  m.lambda_rps = lambda_rps;
  m.mu_rps = mu_rps;
  m.offered_load = lambda_rps / mu_rps;
  m.utilisation = m.offered_load;
  if (m.utilisation >= 1) {
    return Status::invalid_argument(fmt::format(
        "M/M/1 is unstable: arrival rate lambda = {:g} req/s is not below the service rate "
        "mu = {:g} req/s (utilisation rho = {:.3f} >= 1); the queue grows without bound and "
        "there is no steady-state response time",
        lambda_rps, mu_rps, m.utilisation));
  }
  m.p_wait = m.utilisation;
  m.mean_response_ns = kNsPerSecond / (mu_rps - lambda_rps);
  m.mean_wait_ns = m.utilisation * m.mean_response_ns;
  apply_little(m);
  return m;
}

double erlang_b(int servers, double offered_load) {
  if (servers < 1 || !(offered_load >= 0) || !std::isfinite(offered_load)) return kNaN;
  double b = 1.0;  // B(0, a)
  for (int k = 1; k <= servers; ++k) {
    b = offered_load * b / (static_cast<double>(k) + offered_load * b);
  }
  return b;
}

double erlang_c(int servers, double offered_load) {
  const double c = static_cast<double>(servers);
  if (servers < 1 || !(offered_load >= 0) || !(offered_load < c)) return kNaN;
  const double b = erlang_b(servers, offered_load);
  return c * b / (c - offered_load * (1 - b));
}

Result<QueueModel> mmc(int servers, double lambda_rps, double mu_rps) {
  if (servers < 1) {
    return Status::invalid_argument(
        fmt::format("M/M/c: the number of servers c must be at least 1, got {}", servers));
  }
  if (Status s = check_rates("M/M/c", lambda_rps, mu_rps); !s) return s;
  const double c = static_cast<double>(servers);
  QueueModel m;
  m.servers = servers;
  m.lambda_rps = lambda_rps;
  m.mu_rps = mu_rps;
  m.offered_load = lambda_rps / mu_rps;
  m.utilisation = m.offered_load / c;
  if (m.utilisation >= 1) {
    return Status::invalid_argument(fmt::format(
        "M/M/c is unstable: arrival rate lambda = {:g} req/s is not below the capacity "
        "c mu = {} x {:g} = {:g} req/s (utilisation rho = {:.3f} >= 1); the queue grows without "
        "bound and there is no steady-state response time",
        lambda_rps, servers, mu_rps, c * mu_rps, m.utilisation));
  }
  m.p_wait = erlang_c(servers, m.offered_load);
  m.mean_wait_ns = m.p_wait / (c * mu_rps - lambda_rps) * kNsPerSecond;
  m.mean_response_ns = m.mean_wait_ns + kNsPerSecond / mu_rps;
  apply_little(m);
  return m;
}

double response_survival(const QueueModel& m, double t_ns) {
  if (!(t_ns > 0)) return 1.0;
  const double t = t_ns / kNsPerSecond;
  const double mu = m.mu_rps;
  const double c = static_cast<double>(m.servers);
  const double theta = c * mu - m.lambda_rps;  // rate of the wait, given one
  const double d = c - 1 - m.offered_load;     // (theta - mu) / mu
  // h = (e^{-mu t} - e^{-theta t}) / d, with the larger exponential factored out so that
  // nothing overflows, and expm1 for accuracy when d is small.
  double h;
  if (d == 0) {
    h = mu * t * std::exp(-mu * t);
  } else if (d > 0) {
    h = std::exp(-mu * t) * -std::expm1(-d * mu * t) / d;
  } else {
    h = std::exp(-theta * t) * std::expm1(d * mu * t) / d;
  }
  return std::exp(-mu * t) + m.p_wait * h;
}

double response_quantile_ns(const QueueModel& m, double q) {
  if (!(q > 0 && q < 1)) return kNaN;
  if (m.servers == 1) return -std::log1p(-q) / (m.mu_rps - m.lambda_rps) * kNsPerSecond;
  const double target = 1 - q;
  // Bracket: grow from the mean response until the survival falls below 1 - q.
  double lo = 0;
  double hi = m.mean_response_ns;
  for (int i = 0; i < 2000 && response_survival(m, hi) > target; ++i) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (response_survival(m, mid) > target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo + (hi - lo) / 2;
}

double wait_quantile_ns(const QueueModel& m, double q) {
  if (!(q > 0 && q < 1)) return kNaN;
  if (q <= 1 - m.p_wait) return 0;
  const double theta = m.servers * m.mu_rps - m.lambda_rps;
  return std::log(m.p_wait / (1 - q)) / theta * kNsPerSecond;
}

Result<std::vector<UtilisationRow>> mm1_utilisation_table(double mu_rps,
                                                          std::span<const double> utilisations) {
  if (!finite_positive(mu_rps)) {
    return Status::invalid_argument(
        fmt::format("M/M/1 table: service rate mu must be a number > 0 (req/s), got {}", mu_rps));
  }
  if (utilisations.empty()) {
    return Status::invalid_argument("M/M/1 table: needs at least one utilisation");
  }
  std::vector<UtilisationRow> rows;
  for (double rho : utilisations) {
    if (!(rho >= 0 && rho < 1)) {
      return Status::invalid_argument(fmt::format(
          "M/M/1 table: utilisation must be in [0, 1) (a fraction, 0.9 for 90%), got {}", rho));
    }
    Result<QueueModel> m = mm1(rho * mu_rps, mu_rps);
    if (!m) return m.status();
    UtilisationRow row{};
    row.utilisation = rho;
    row.arrival_rps = m->lambda_rps;
    row.mean_response_ns = m->mean_response_ns;
    row.p50_ns = response_quantile_ns(*m, 0.50);
    row.p90_ns = response_quantile_ns(*m, 0.90);
    row.p99_ns = response_quantile_ns(*m, 0.99);
    rows.push_back(row);
  }
  for (UtilisationRow& row : rows) {
    row.ratio_to_first = row.mean_response_ns / rows.front().mean_response_ns;
  }
  return rows;
}

Result<PeakHeadroom> peak_headroom(double mu_rps, double peak_rps) {
  if (!finite_positive(mu_rps)) {
    return Status::invalid_argument(
        fmt::format("headroom: service rate mu must be a number > 0 (req/s), got {}", mu_rps));
  }
  if (!finite_positive(peak_rps)) {
    return Status::invalid_argument(
        fmt::format("headroom: peak rate must be a number > 0 (req/s), got {}", peak_rps));
  }
  PeakHeadroom h{};
  h.peak_rps = peak_rps;
  h.mu_rps = mu_rps;
  h.utilisation = peak_rps / mu_rps;
  h.headroom = mu_rps / peak_rps;
  if (peak_rps < mu_rps) h.mean_response_ns = kNsPerSecond / (mu_rps - peak_rps);
  const HeadroomBandInfo* band = &kHeadroomBands.front();
  if (peak_rps < mu_rps) {
    for (const HeadroomBandInfo& b : kHeadroomBands) {
      if (h.headroom >= b.from) band = &b;
    }
  }
  h.band = band->band;
  h.verdict = band->verdict;
  return h;
}

}  // namespace knee::analysis
