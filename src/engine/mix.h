// A request mix: one load run whose requests go to several endpoints of one target in fixed
// proportions, each with its own figures beside the run's (k6's scenarios, Locust's task weights,
// on one set of connections).
//
// Text (--mix): entries separated by commas,
//   METHOD TARGET[ @BODY_FILE]=WEIGHT[/s]
// e.g. 'GET /tracking/{shipment}=416.67/s,POST /events @event.json=97.22/s'. TARGET is an
// origin-form request target on the run's URL's host ({conn}, {seq} and {shipment} expand as in
// the URL; a comma in it is written %2C); BODY_FILE is read as the entry's body template (the
// same placeholders). Weights are either all ratios (`=5`: 5 parts of the sum) or all rates with
// `/s` (req/s: the run is open loop at their sum, unless -r, a sweep's --rate or --stages sets the
// rate, when they are the proportions).
//
// The worker sends the endpoints in smooth weighted round robin (nginx's upstream algorithm): in
// any run of W requests, W the sum of integer weights, each endpoint gets its share to within one
// request, so the proportions hold in the closed loop too, whatever each endpoint's latency.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace knee::engine {

// The accepted form, quoted in every parse error and in --help.
inline constexpr std::string_view kMixForm =
    "'METHOD /target[ @body-file]=WEIGHT[/s],...' (e.g. 'GET /tracking/{shipment}=416.67/s,POST "
    "/events @event.json=97.22/s')";
inline constexpr size_t kMaxMixEntries = 64;

struct MixText {
  std::string name;  // "METHOD TARGET" as typed: the endpoint's key in reports
  std::string method;
  std::string target;
  std::string body_file;  // empty: no body
  double weight = 1;      // > 0: a ratio, or req/s when rates
};

struct ParsedMix {
  std::vector<MixText> entries;
  bool rates = false;  // the weights carried /s
  double total_weight() const;
};

// Errors (kInvalidArgument, one line quoting --mix, the entry and kMixForm): an empty entry, an
// entry without METHOD, TARGET or =WEIGHT, a target that does not start with '/', a weight that
// is not a finite number > 0, some weights with /s and some without, a name given twice, more
// than kMaxMixEntries entries.
core::Result<ParsedMix> parse_mix(std::string_view text);

// Smooth weighted round robin over weights (at least one, each > 0; asserted): next() gives
// the index of the next endpoint.
// Thread-safety: one owner.
class WeightedRoundRobin {
 public:
  explicit WeightedRoundRobin(std::vector<double> weights);
  size_t next();
  size_t size() const { return weights_.size(); }

 private:
  std::vector<double> weights_;
  std::vector<double> current_;
  double total_ = 0;
};

}  // namespace knee::engine
