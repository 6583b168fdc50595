// `knee lab`: the course's lab systems on this host.
//   knee lab data     generates the shipment service's data set (store/data.h) into the lab's
//                     state folder, deterministic from --seed, and prints the load rate.
//   knee lab billing  runs the batch flow (store/billing.h) both ways and prints records/s and
//                     whether the seed's 12M records would fit its 4-hour window at that rate.
// The state folder is --state DIR, else the default of lab/state_folder.h; the SQLite database
// in it is shipments.db (what `knee serve --state DIR` reads).
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>

#include "cli/command.h"
#include "cli/interrupt.h"
#include "cli/lab_stack.h"
#include "cli/load_flags.h"
#include "cli/progress.h"
#include "core/units.h"
#include "lab/state_folder.h"
#include "report/billing.h"
#include "store/billing.h"
#include "store/data.h"
#include "store/store.h"

namespace knee::cli {

namespace {

using core::Status;

class LabCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    data_ = app.add_subcommand(
        "data",
        "Generate the shipment service's data set (sellers, shipments over --days, 1-4 carrier "
        "events each), deterministic from --seed, into the state folder's shipments.db");
    data_
        ->add_option("--state", state_,
                     "The lab's state folder (default $XDG_STATE_HOME/knee/lab, else "
                     "~/.local/state/knee/lab); made when missing")
        ->type_name("DIR");
    data_
        ->add_option("--records", records_,
                     "Shipments, with k/M/G allowed: 12M over --days 30 is the seed's billing "
                     "scan")
        ->capture_default_str();
    data_->add_option("--days", spec_.days, "Days the shipments' creation times span")
        ->capture_default_str();
    data_->add_option("--sellers", spec_.sellers, "Sellers the shipments belong to")
        ->capture_default_str();
    data_->add_option("--seed", spec_.seed, "Seed of the generator: the same seed, the same rows")
        ->check(seed_number())
        ->capture_default_str();
    data_->add_option("--db", db_,
                      "Load into PostgreSQL instead, the schema knee of the database this "
                      "postgresql://USER@HOST:PORT/DB URL names (libpq's form)");
    data_->add_flag("--replace", replace_,
                    "Replace a data set already in the state folder (else it is kept, exit 2)");
    add_progress_flags(*data_, progress_flags_);

    billing_ = app.add_subcommand(
        "billing",
        "Run the batch flow, the sellers' end-of-day billing of the 30 days ending with --date, "
        "row at a time and set based, and say whether the seed's 12M records fit 4 hours");
    billing_->add_option("--state", state_, "The lab's state folder (as for knee lab data)")
        ->type_name("DIR");
    billing_->add_option("--db", db_, "The PostgreSQL data set instead (as for knee lab data)");
    billing_->add_option("--date", date_,
                         "The bill date, YYYY-MM-DD (default: the data set's last day)");
    billing_->add_option("--method", method_, "row, set or both")
        ->capture_default_str()
        ->check(CLI::IsMember({"row", "set", "both"}));
    stack_.add_to(app);
  }

  int run() override {
    if (data_->parsed()) return run_data();
    if (billing_->parsed()) return run_billing();
    if (std::optional<int> code = stack_.run()) return *code;
    return report_failure(Status::invalid_argument(
        "lab: name what to do: knee lab data|billing|up|status|down (see knee lab --help)"));
  }

 private:
  // --state '' or --db '' given: an empty value is a mistake, not "the default".
  // Regression: `--state ''` wrote into the default folder.
  Status check_not_empty(const CLI::App& sub) const {
    for (auto [flag, value] : {std::pair{"--state", &state_}, std::pair{"--db", &db_}}) {
      if (sub.count(flag) > 0 && value->empty()) {
        return Status::invalid_argument(
            fmt::format("{}: empty; give a folder or URL, or leave the flag out", flag));
      }
    }
    return Status::success();
  }

  int run_data() {
    if (Status s = check_not_empty(*data_); !s) return report_failure(s);
    auto records = core::parse_count(records_);
    if (!records) return report_failure(records.status().with_context("--records"));
    spec_.records = *records;
    if (Status s = spec_.validate(); !s) return report_failure(s);
    auto location = lab::store_location(state_, db_);
    if (!location) return report_failure(location.status());
    const std::atomic<bool>& interrupt = install_interrupt_handler();
    Progress progress(progress_flags_);
    const core::TimePoint started = core::Clock::now();
    auto stats = store::load_data(
        *location, spec_, replace_,
        [&](int64_t done, int64_t total) {
          progress.show_count("loading", done, total, "rows", started);
        },
        [&] { return interrupt.load(std::memory_order_relaxed); });
    progress.finish();
    if (!stats) {
      if (interrupt.load()) {
        fmt::print(stderr, "knee: interrupted: no data set was made, none was replaced\n");
        return kExitInterrupted;
      }
      return report_failure(stats.status());
    }
    fmt::print(
        "{}: {} shipments over {} days, {} sellers, seed {}: {} rows in {:.2f} s ({:.0f} "
        "rows/s)\n",
        stats->location, spec_.records, spec_.days, spec_.sellers, spec_.seed, stats->rows,
        stats->seconds, static_cast<double>(stats->rows) / stats->seconds);
    return kExitOk;
  }

  int run_billing() {
    if (Status s = check_not_empty(*billing_); !s) return report_failure(s);
    if (billing_->count("--date") > 0 && date_.empty()) {
      return report_failure(
          Status::invalid_argument("--date: empty; give YYYY-MM-DD, or leave it out"));
    }
    if (!date_.empty()) {
      if (auto w = store::billing_window(date_); !w) {
        return report_failure(w.status().with_context("--date"));
      }
    }
    std::error_code ec;
    if (db_.empty() && !state_.empty() && !std::filesystem::is_directory(state_, ec)) {
      return report_failure(Status::invalid_argument(fmt::format(
          "--state: no folder '{}'; make the data set first with knee lab data --state {}", state_,
          state_)));
    }
    auto location = lab::store_location(state_, db_);
    if (!location) return report_failure(location.status());
    auto store = store::open_store(*location);
    if (!store) return report_failure(store.status());
    if (date_.empty()) {
      auto summary = (*store)->summary();
      if (!summary) return report_failure(summary.status());
      date_ = core::format_utc_date(summary->last_created_ms);
    }
    auto window = store::billing_window(date_);
    const report::BillingGoal goal{store::kSeedRecords, store::kBillingWindowHours};
    fmt::print("{}", report::billing_heading(date_, (*store)->location(), window->first,
                                             window->second - 1, goal));
    for (store::BillingMethod m :
         {store::BillingMethod::kRowAtATime, store::BillingMethod::kSetBased}) {
      if (method_ != "both" && method_ != store::billing_method_name(m)) continue;
      auto run = (*store)->run_billing(date_, m);
      if (!run) return report_failure(run.status());
      fmt::print("{}",
                 report::billing_row({std::string(store::billing_method_name(m)), run->records,
                                      run->sellers, run->amount_cents, run->seconds},
                                     goal));
      std::fflush(stdout);
    }
    fmt::print("{}", report::billing_footer());
    return kExitOk;
  }

  CLI::App* data_ = nullptr;
  CLI::App* billing_ = nullptr;
  LabStackCommands stack_;  // up, status, down
  std::string date_;
  std::string method_ = "both";
  std::string state_;
  std::string db_;
  std::string records_ = "100k";
  store::DataSpec spec_;
  bool replace_ = false;
  ProgressFlags progress_flags_;
};

}  // namespace

std::unique_ptr<Subcommand> make_lab_command() { return std::make_unique<LabCommand>(); }

}  // namespace knee::cli
