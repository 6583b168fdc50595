#include "harness/distributed.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/merge.h"

namespace knee::harness {

using core::Status;

Status Distributed::join(const engine::LoadSpec& load, const OutputPaths& outputs) {
  auto group = engine::join_mpi_world();
  if (!group) return group.status();
  group_ = std::move(group).value();
  outputs_ = outputs;
  outputs_.inputs = load.input_files();
  if (!group_) {
    if (outputs.json_parts.empty()) return Status::success();
    return Status::invalid_argument(
        "--json-parts: only under mpirun; alone, --json is this process's whole result");
  }
  if (!load.part.empty()) {
    return Status::invalid_argument(
        "--part: not under mpirun, where each rank drives part RANK of the ranks; leave it out");
  }
  if (!outputs.hlog.empty()) {
    return Status::invalid_argument(
        "--hlog: not under mpirun yet (each rank's intervals are its own); use --json, whose "
        "merged result holds the whole load's histograms");
  }
  return Status::success();
}

Status Distributed::ready(Status local) {
  if (!group_) return local;
  if (local && group_->rank() == 0 && !outputs_.json_parts.empty()) {
    for (int r = 0; r < group_->size() && local; ++r) {
      part_paths_.push_back(fmt::format("{}.{}.json", outputs_.json_parts, r));
      FileOrStdout check;
      local = check.open("--json-parts", part_paths_.back(), outputs_.inputs);
    }
  }
  // Every rank learns of any rank's failure here, so none is left waiting for the others.
  auto agreed = group_->agree(local ? "" : local.what());
  if (!local) return local;
  if (!agreed) return agreed.status();
  if (!agreed->empty()) return Status::invalid_argument(*agreed);
  auto offsets = group_->clock_offsets();
  if (!offsets) return offsets.status();
  offsets_ = std::move(offsets).value();
  return Status::success();
}

Status Distributed::prepare(const engine::LoadSpec& load, engine::Plan& plan, bool shared_target,
                            double now_epoch_s, ResultFiles& files) {
  Status setup = take_part(load, plan, shared_target, now_epoch_s);
  if (setup) setup = files.open(root() ? outputs_ : OutputPaths{});
  if (Status s = ready(setup); !s) return s;
  if (active()) files.discard();  // opened again on rank 0 once merged
  return Status::success();
}

Status Distributed::take_part(const engine::LoadSpec& load, engine::Plan& plan, bool shared_target,
                              double now_epoch_s) const {
  if ((!load.part.empty() || active()) && !shared_target) {
    return Status::invalid_argument(fmt::format(
        "{}: give the URL of the target the parts share; without one each process would start "
        "and measure its own lab server",
        active() ? "mpirun" : "--part"));
  }
  if (group_) {
    if (Status s = engine::split_plan(plan, group_->rank(), group_->size()); !s) {
      return Status::invalid_argument(
          fmt::format("mpirun -np {}: {}", group_->size(), s.message()));
    }
  }
  return load.part_options(plan, now_epoch_s);
}

engine::PlanResult Distributed::run(const engine::Plan& plan, const engine::PlanControl& control) {
  if (!group_) return engine::run_plan(plan, control);
  return engine::run_plan_together(plan, control, *group_);
}

core::Result<std::optional<report::Document>> Distributed::merge(const report::Document& mine) {
  if (!group_) return std::optional<report::Document>(mine);
  auto all = group_->gather(json_text(mine));
  if (!all) return all.status();
  if (group_->rank() != 0) return std::optional<report::Document>();
  std::vector<report::MergePart> parts;
  size_t levels = SIZE_MAX;
  for (size_t r = 0; r < all->size(); ++r) {
    const std::string source = fmt::format("rank {}", r);
    auto doc = report::parse_document((*all)[r], source);
    if (!doc) return doc.status();
    if (r < part_paths_.size()) {
      FileOrStdout file;
      if (Status s = file.open("--json-parts", part_paths_[r], outputs_.inputs); !s) return s;
      if (Status s = file.write((*all)[r]); !s) return s;
    }
    if (auto* s = std::get_if<report::SweepDocument>(&*doc))
      levels = std::min(levels, s->levels.size());
    report::MergePart part{source, std::move(doc).value(), std::nullopt};
    if (r < offsets_.size()) part.clock_offset_s = offsets_[r].offset_s;
    parts.push_back(std::move(part));
  }
  if (parts.size() == 1) return std::optional<report::Document>(std::move(parts.front().doc));
  for (report::MergePart& p : parts) {
    if (auto* s = std::get_if<report::SweepDocument>(&p.doc); s && s->levels.size() > levels) {
      s->levels.resize(levels);
    }
  }
  auto merged = report::merge_documents(parts);
  if (!merged) return merged.status();
  return std::optional<report::Document>(std::move(merged).value());
}

}  // namespace knee::harness
