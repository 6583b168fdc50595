// ServerWorker's shipment-service routes (GET /tracking/{no}, POST /events, POST /billing/run),
// the store threads' replies, and /metrics. The loop and the protocols are in server_worker.cc.
#include <algorithm>
#include <cctype>

#include "lab/connection.h"
#include "lab/server_worker.h"

namespace knee::lab {

using core::Clock;

void ServerWorker::respond_error(Connection& c, int status, std::string_view reason,
                                 ConnectionMode mode) {
  body_ = R"({"error":)";
  append_json_string(body_, reason);
  body_.push_back('}');
  respond(c, status, mode, false);
}

void ServerWorker::park_for_store(Connection& c, const http::RequestHead& head, bool is_head) {
  c.pending = Pending::kStore;
  c.pending_head = is_head;
  c.pending_keep_alive = head.keep_alive;
  c.pending_minor = head.minor_version;
  c.state = ConnState::kWaiting;
}

void ServerWorker::handle_shipment(Connection& c, const http::RequestHead& head,
                                   std::string_view no, ConnectionMode mode, bool is_head) {
  body_.clear();
  if (shared_.service->read_cached(no, body_)) {
    respond(c, 200, mode, is_head);
    return;
  }
  park_for_store(c, head, is_head);
  shared_.service->read(replies_, net::EventTag{c.slot, c.generation}, std::string(no));
}

void ServerWorker::handle_event(Connection& c, const http::RequestHead& head, std::string_view body,
                                ConnectionMode mode) {
  if (head.method != "POST") {
    respond_fixed(c, events_method_, mode, head.method == "HEAD");
    return;
  }
  if (c.parent != kNoParent) {
    respond_fixed(c, h2_post_, mode, false);
    return;
  }
  if (head.content_length > kMaxEventBody) {
    // Closed rather than the body read and dropped, which could be any size (RFC 9110 15.5.14).
    respond_fixed(c, body_too_large_, ConnectionMode::kClose, false);
    return;
  }
  auto bad = [&](std::string_view reason) { respond_error(c, 400, reason, mode); };
  const std::optional<std::string_view> type = head.field("content-type");
  // "application/json" with any parameters (RFC 9110 §8.3.1: the media type is case-insensitive).
  const std::string_view media = type ? type->substr(0, type->find(';')) : std::string_view();
  auto lower_equal = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == y;
           });
  };
  std::string_view trimmed = media;
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) {
    trimmed.remove_suffix(1);
  }
  if (!lower_equal(trimmed, "application/json")) {
    bad(type ? "Content-Type must be application/json" : "no Content-Type: send application/json");
    return;
  }
  auto event = parse_event(body);
  if (!event) {
    bad(event.status().message());
    return;
  }
  park_for_store(c, head, false);
  shared_.service->write(replies_, net::EventTag{c.slot, c.generation}, std::move(event).value());
}

void ServerWorker::handle_billing(Connection& c, const http::RequestHead& head,
                                  std::string_view query, ConnectionMode mode) {
  if (head.method != "POST") {
    respond_fixed(c, events_method_, mode, head.method == "HEAD");
    return;
  }
  auto bad = [&](std::string_view reason) { respond_error(c, 400, reason, mode); };
  std::string date, method;
  if (!find_query_param(query, "date", date) || date.empty()) {
    bad("give the bill date: /billing/run?date=YYYY-MM-DD");
    return;
  }
  if (auto window = store::billing_window(date); !window) {
    bad(window.status().message());
    return;
  }
  if (!find_query_param(query, "method", method) || method.empty()) method = "set";
  if (method != "row" && method != "set") {
    bad("method is row (a loop over records) or set (one INSERT ... SELECT)");
    return;
  }
  park_for_store(c, head, false);
  shared_.service->bill(
      replies_, net::EventTag{c.slot, c.generation}, std::move(date),
      method == "row" ? store::BillingMethod::kRowAtATime : store::BillingMethod::kSetBased);
}

void ServerWorker::take_replies() {
  replies_.take(reply_batch_);
  for (StoreReply& r : reply_batch_) {
    if (r.tag.slot >= slots_.size()) continue;
    Connection& c = *slots_[r.tag.slot];
    // Gone since (closed, or a reset stream): the answer has nobody to go to.
    if (c.generation != r.tag.generation || c.state != ConnState::kWaiting ||
        c.pending != Pending::kStore) {
      continue;
    }
    c.state = ConnState::kActive;
    c.pending = Pending::kNone;
    body_.swap(r.body);
    respond(c, r.status, mode_for(c.pending_keep_alive, c.pending_minor), c.pending_head);
    add_in_flight(-1);
    drive(c);
  }
}

void ServerWorker::observe(Connection& c, int status) {
  if (!c.timed) return;  // a protocol error before any request was routed
  c.timed = false;
  metrics_.observe(c.route, status, Clock::now() - c.started);
}

void ServerWorker::respond_metrics(Connection& c, ConnectionMode mode, bool head_only) {
  int64_t in_flight = 0;
  for (size_t i = 0; i < static_cast<size_t>(shared_.workers); ++i) {
    in_flight += shared_.counters[i].in_flight.load(std::memory_order_relaxed);
  }
  body_.clear();
  append_request_metrics(body_, shared_.metrics.get(), static_cast<size_t>(shared_.workers),
                         in_flight);
  if (shared_.service != nullptr) shared_.service->append_metrics(body_);
  observe(c, 200);
  append_response(c.out, 200, "text/plain; version=0.0.4; charset=utf-8", body_, date_.value(),
                  mode, head_only);
  if (mode == ConnectionMode::kClose) c.close_after_write = true;
}

}  // namespace knee::lab
