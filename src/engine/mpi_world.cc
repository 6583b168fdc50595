// The OpenMPI world behind engine::Collective (engine/collective.h): MPI_COMM_WORLD, blocking
// collectives only (MPI_Gather/MPI_Gatherv of bytes, MPI_Bcast, MPI_Barrier), point-to-point
// round trips for the clock offsets. Initialised once, finalised when the Collective goes.
#include <fmt/format.h>
#include <mpi.h>

#include <limits>

#include "core/clock.h"
#include "engine/collective.h"

namespace knee::engine {

using core::Status;

namespace {

Status mpi_error(const char* what, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Status::internal(
      fmt::format("MPI {}: {}", what, std::string(text, static_cast<size_t>(length))));
}

class MpiWorld final : public Collective {
 public:
  MpiWorld(int rank, int size, std::string host)
      : rank_(rank), size_(size), host_(std::move(host)) {}
  ~MpiWorld() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string host() const override { return host_; }

  core::Result<std::string> agree(const std::string& failure) override {
    auto all =
        gather(failure.empty() ? "" : fmt::format("rank {} on host {}: {}", rank_, host_, failure));
    if (!all) return all.status();
    std::string first;
    for (const std::string& f : *all) {
      if (!f.empty()) {
        first = f;
        break;
      }
    }
    // Rank 0's verdict to every rank.
    auto length = static_cast<int>(first.size());
    if (int rc = MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD); rc != MPI_SUCCESS) {
      return mpi_error("broadcast", rc);
    }
    first.resize(static_cast<size_t>(length));
    if (length > 0) {
      if (int rc = MPI_Bcast(first.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
          rc != MPI_SUCCESS) {
        return mpi_error("broadcast", rc);
      }
    }
    if (int rc = MPI_Barrier(MPI_COMM_WORLD); rc != MPI_SUCCESS) return mpi_error("barrier", rc);
    return first;
  }

  core::Result<std::vector<std::string>> gather(const std::string& mine) override {
    if (mine.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      // The other ranks are already in the gather: end the job rather than leave them waiting.
      fmt::print(stderr, "knee: rank {}: more than 2 GiB to gather; ending the job\n", rank_);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(rank_ == 0 ? static_cast<size_t>(size_) : 0);
    if (int rc = MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_error("gather", rc);
    }
    std::vector<int> offsets(lengths.size());
    int64_t total = 0;
    for (size_t i = 0; i < lengths.size(); ++i) {
      offsets[i] = static_cast<int>(total);
      total += lengths[i];
    }
    if (total > std::numeric_limits<int>::max()) {
      fmt::print(stderr, "knee: more than 2 GiB to gather at rank 0; ending the job\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::string all(static_cast<size_t>(total), '\0');
    if (int rc = MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                             offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_error("gather", rc);
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < lengths.size(); ++i) {
      out.push_back(all.substr(static_cast<size_t>(offsets[i]), static_cast<size_t>(lengths[i])));
    }
    return out;
  }

  core::Result<int64_t> min_all(int64_t mine) override {
    int64_t least = mine;
    if (int rc = MPI_Allreduce(&mine, &least, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_error("allreduce", rc);
    }
    return least;
  }

  core::Result<std::vector<ClockOffset>> clock_offsets() override {
    constexpr int kRounds = 8;
    constexpr int kTag = 4242;
    std::vector<ClockOffset> out;
    if (rank_ == 0) out.resize(static_cast<size_t>(size_));
    for (int r = 1; r < size_; ++r) {
      ClockOffset best{0, std::numeric_limits<double>::infinity()};
      for (int k = 0; k < kRounds; ++k) {
        if (rank_ == 0) {
          const double t0 = core::wall_clock_s();
          if (int rc = MPI_Send(&t0, 1, MPI_DOUBLE, r, kTag, MPI_COMM_WORLD); rc != MPI_SUCCESS) {
            return mpi_error("send", rc);
          }
          double t1 = 0;
          if (int rc = MPI_Recv(&t1, 1, MPI_DOUBLE, r, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
              rc != MPI_SUCCESS) {
            return mpi_error("receive", rc);
          }
          const double t2 = core::wall_clock_s();
          if (t2 - t0 < best.round_trip_s) best = {t1 - (t0 + t2) / 2, t2 - t0};
        } else if (rank_ == r) {
          double t0 = 0;
          if (int rc = MPI_Recv(&t0, 1, MPI_DOUBLE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
              rc != MPI_SUCCESS) {
            return mpi_error("receive", rc);
          }
          const double t1 = core::wall_clock_s();
          if (int rc = MPI_Send(&t1, 1, MPI_DOUBLE, 0, kTag, MPI_COMM_WORLD); rc != MPI_SUCCESS) {
            return mpi_error("send", rc);
          }
        }
      }
      if (rank_ == 0) out[static_cast<size_t>(r)] = best;
    }
    return out;
  }

 private:
  int rank_;
  int size_;
  std::string host_;
};

}  // namespace

core::Result<std::unique_ptr<Collective>> make_mpi_world() {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised == 0) {
    // knee's worker threads never call MPI; the thread that runs the plan does (FUNNELED).
    int provided = 0;
    if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        rc != MPI_SUCCESS) {
      return mpi_error("init", rc);
    }
  }
  // Errors come back as codes (and become Statuses), not aborts.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1, length = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(name, &length);
  return std::unique_ptr<Collective>(
      std::make_unique<MpiWorld>(rank, size, std::string(name, static_cast<size_t>(length))));
}

}  // namespace knee::engine
