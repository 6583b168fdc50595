#include "store/data.h"

#include <fmt/core.h>

namespace knee::store {

using core::Status;

namespace {

// SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a well-mixed 64-bit value from any input.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Field numbers keep the fields of one row independent.
enum : uint64_t { kSellerOf = 1, kZone, kWeight, kEvents, kRate, kJitter };

}  // namespace

Status DataSpec::validate() const {
  if (records < 1 || records > kMaxRecords) {
    return Status::invalid_field(
        "records",
        fmt::format("{} shipments; give 1 to {} (e.g. 12M for the seed's)", records, kMaxRecords));
  }
  if (days < 1 || days > 3650) {
    return Status::invalid_field("days", fmt::format("{} days; give 1 to 3650", days));
  }
  if (sellers < 1 || sellers > 1'000'000 || sellers > records) {
    return Status::invalid_field(
        "sellers", fmt::format("{} sellers; give 1 to 1000000, and no more than the {} records",
                               sellers, records));
  }
  return Status::success();
}

std::string tracking_number(int64_t shipment_id) { return fmt::format("KN{:010}", shipment_id); }

uint64_t DataGenerator::hash(int64_t id, uint64_t field) const {
  return mix(spec_.seed * 0x9e3779b97f4a7c15ULL ^ mix(static_cast<uint64_t>(id) << 4 | field));
}

Seller DataGenerator::seller(int64_t id) const {
  return Seller{id, fmt::format("seller-{:06}", id),
                300 + static_cast<int64_t>(hash(id, kRate) % 500)};
}

Shipment DataGenerator::shipment(int64_t id) const {
  Shipment s;
  s.id = id;
  s.tracking_no = tracking_number(id);
  s.seller_id =
      1 + static_cast<int64_t>(hash(id, kSellerOf) % static_cast<uint64_t>(spec_.sellers));
  // Evenly spread over the days in id order, a few seconds of jitter that keeps the order.
  const int64_t span_ms = kMsPerDay * spec_.days;
  const int64_t slot_ms = span_ms / spec_.records;
  const int64_t jitter =
      slot_ms > 1 ? static_cast<int64_t>(hash(id, kJitter) % static_cast<uint64_t>(slot_ms)) : 0;
  // In 128 bits: records x days reaches 3.65e12 and (id - 1) * span_ms would overflow int64.
  // Regression: --records 1G --days 107 wrapped (undefined behaviour).
  s.created_ms = kDataEpochMs +
                 static_cast<int64_t>(static_cast<__int128>(id - 1) * span_ms / spec_.records) +
                 jitter;
  s.zone = fmt::format("{}", 10 + hash(id, kZone) % 50);
  s.weight_g = 100 + static_cast<int64_t>(hash(id, kWeight) % 20000);
  return s;
}

int DataGenerator::event_count(int64_t shipment_id) const {
  return 1 + static_cast<int>(hash(shipment_id, kEvents) % 4);
}

Event DataGenerator::event(const Shipment& shipment, int k) const {
  return Event{shipment.tracking_no, kEventStates[k - 1], shipment.zone, k,
               shipment.created_ms + int64_t{k - 1} * 3'600'000};
}

TrackingState DataGenerator::latest_state(int64_t shipment_id) const {
  const Shipment s = shipment(shipment_id);
  Event e = event(s, event_count(shipment_id));
  return TrackingState{std::move(e.tracking_no), std::move(e.state), std::move(e.zone), e.step,
                       e.at_ms};
}

}  // namespace knee::store
