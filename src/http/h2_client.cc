#include "http/h2_client.h"

#include <fmt/format.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>

namespace knee::http {

using core::Result;
using core::Status;

namespace {

constexpr std::string_view kConn = "{conn}";
constexpr std::string_view kSeq = "{seq}";
constexpr std::string_view kShipment = "{shipment}";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool holds_placeholder(std::string_view s) {
  return s.find(kConn) != std::string_view::npos || s.find(kSeq) != std::string_view::npos ||
         s.find(kShipment) != std::string_view::npos;
}

void expand(std::string_view in, const std::string& conn, const std::string& seq, uint64_t shipment,
            std::string& out) {
  out.clear();
  size_t at = 0;
  while (at < in.size()) {
    const size_t brace = in.find('{', at);
    if (brace == std::string_view::npos) break;
    out.append(in.substr(at, brace - at));
    if (in.substr(brace, kConn.size()) == kConn) {
      out += conn;
      at = brace + kConn.size();
    } else if (in.substr(brace, kSeq.size()) == kSeq) {
      out += seq;
      at = brace + kSeq.size();
    } else if (in.substr(brace, kShipment.size()) == kShipment) {
      append_tracking_number(out, shipment);
      at = brace + kShipment.size();
    } else {
      out += '{';
      at = brace + 1;
    }
  }
  out.append(in.substr(std::min(at, in.size())));
}

// Fields HTTP/2 forbids or carries elsewhere (RFC 9113 §8.2.2, §8.3.1).
bool dropped_field(const std::string& name) {
  return name == "connection" || name == "keep-alive" || name == "proxy-connection" ||
         name == "transfer-encoding" || name == "upgrade" || name == "host" ||
         name == "content-length";
}

}  // namespace

struct H2Client::Stream {
  int32_t id = 0;
  uint32_t lane = 0;
  int status = 0;
  uint64_t body_bytes = 0;
  uint64_t frame_bytes = 0;
  const std::string* body = nullptr;  // request body to send
  size_t body_sent = 0;
  bool ended = false;      // the server's END_STREAM arrived: the response is whole
  bool cancelled = false;  // by cancel(): no Listener call
};

struct H2Client::NvList {
  const H2Request* of = nullptr;
  std::vector<nghttp2_nv> nv;
};

Result<H2Request> H2Request::compile(const RequestSpec& spec) {
  // The HTTP/1.1 template's checks (method token, field names and values, Content-Length
  // against the body) hold for HTTP/2 too.
  auto checked = RequestTemplate::compile(spec);
  if (!checked) return checked.status();
  H2Request r;
  r.is_head = spec.method == "HEAD";
  std::string authority = spec.url.authority();
  bool user_agent = false;
  for (const auto& [name, value] : spec.headers) {
    if (lower(name) == "host") authority = value;
  }
  r.fields.emplace_back(":method", spec.method);
  r.fields.emplace_back(":scheme", spec.url.scheme);
  r.fields.emplace_back(":authority", authority);
  r.fields.emplace_back(":path", spec.url.target);
  for (const auto& [name, value] : spec.headers) {
    std::string n = lower(name);
    if (dropped_field(n)) continue;
    if (n == "user-agent") user_agent = true;
    r.fields.emplace_back(std::move(n), value);
  }
  if (!user_agent) r.fields.emplace_back("user-agent", "knee/0.1");
  r.body = spec.body;
  r.has_placeholders = holds_placeholder(r.body);
  for (const auto& [name, value] : r.fields) r.has_placeholders |= holds_placeholder(value);
  r.uses_shipment = checked->uses_shipment();
  if (!r.body.empty() && !holds_placeholder(r.body)) {
    r.fields.emplace_back("content-length", std::to_string(r.body.size()));
  }
  return r;
}

void H2Request::render(uint64_t conn, uint64_t seq, H2Request& out, uint64_t shipment) const {
  const std::string c = std::to_string(conn);
  const std::string s = std::to_string(seq);
  out.fields.resize(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    out.fields[i].first = fields[i].first;
    expand(fields[i].second, c, s, shipment, out.fields[i].second);
  }
  expand(body, c, s, shipment, out.body);
  out.has_placeholders = false;
  out.is_head = is_head;
  out.rendered = true;
  // A body with placeholders gets its length once expanded.
  if (!out.body.empty() && holds_placeholder(body)) {
    out.fields.emplace_back("content-length", std::to_string(out.body.size()));
  }
}

// nghttp2's C callbacks, forwarding to the session object.
struct H2Callbacks {
  static H2Client& self(void* user_data) { return *static_cast<H2Client*>(user_data); }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                       void* user_data) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    H2Client::Stream* s = self(user_data).find(frame->hd.stream_id);
    if (s == nullptr) return 0;
    const std::string_view n(reinterpret_cast<const char*>(name), namelen);
    if (n == ":status" && s->status == 0) {
      int code = 0;
      for (size_t i = 0; i < valuelen; ++i) {
        if (value[i] < '0' || value[i] > '9') return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        code = code * 10 + (value[i] - '0');
      }
      // An informational (1xx) HEADERS block is followed by the final one (RFC 9113 §8.1).
      if (code >= 200) s->status = code;
    }
    return 0;
  }

  static int on_data_chunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t*, size_t len,
                           void* user_data) {
    if (H2Client::Stream* s = self(user_data).find(stream_id)) s->body_bytes += len;
    return 0;
  }

  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    uint32_t error_code = 0;
    int32_t last_stream_id = 0;
    if (frame->hd.type == NGHTTP2_RST_STREAM) error_code = frame->rst_stream.error_code;
    if (frame->hd.type == NGHTTP2_GOAWAY) {
      error_code = frame->goaway.error_code;
      last_stream_id = frame->goaway.last_stream_id;
    }
    if (frame->hd.type == NGHTTP2_SETTINGS && (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0) {
      return 0;
    }
    self(user_data).on_frame(frame->hd.stream_id, frame->hd.type, frame->hd.flags, frame->hd.length,
                             error_code, last_stream_id);
    return 0;
  }

  static int on_stream_close(nghttp2_session* session, int32_t stream_id, uint32_t error_code,
                             void* user_data) {
    H2Client& c = self(user_data);
    auto* s =
        static_cast<H2Client::Stream*>(nghttp2_session_get_stream_user_data(session, stream_id));
    if (s == nullptr) return 0;
    nghttp2_session_set_stream_user_data(session, stream_id, nullptr);
    const H2Client::Stream done = *s;
    c.give_back(s);
    if (done.cancelled) return 0;  // given up by knee
    const bool after_goaway = c.goaway_received_ && stream_id > c.goaway_last_stream_;
    // A response is whole only with the server's END_STREAM: a RST_STREAM(NO_ERROR) in the
    // middle of the body is a reset, not an answer.
    if (error_code == NGHTTP2_NO_ERROR && done.status != 0 && done.ended) {
      c.listener_.on_response(done.lane, done.status, done.body_bytes, done.frame_bytes);
    } else {
      uint32_t code =
          error_code != NGHTTP2_NO_ERROR ? error_code : uint32_t{NGHTTP2_INTERNAL_ERROR};
      if (after_goaway) code = NGHTTP2_REFUSED_STREAM;
      c.listener_.on_reset(done.lane, code, after_goaway, done.frame_bytes);
    }
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, int32_t stream_id, uint8_t* buf, size_t length,
                           uint32_t* data_flags, nghttp2_data_source*, void* user_data) {
    H2Client::Stream* s = self(user_data).find(stream_id);
    if (s == nullptr || s->body == nullptr) {
      *data_flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    const size_t n = std::min(length, s->body->size() - s->body_sent);
    std::memcpy(buf, s->body->data() + s->body_sent, n);
    s->body_sent += n;
    if (s->body_sent == s->body->size()) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

Result<std::unique_ptr<H2Client>> H2Client::create(Listener& listener) {
  std::unique_ptr<H2Client> c(new H2Client(listener));
  nghttp2_session_callbacks* cb = nullptr;
  if (nghttp2_session_callbacks_new(&cb) != 0) {
    return Status::io_error("HTTP/2: cannot allocate the session's callbacks");
  }
  nghttp2_session_callbacks_set_on_header_callback(cb, H2Callbacks::on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, H2Callbacks::on_data_chunk);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, H2Callbacks::on_frame_recv);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, H2Callbacks::on_stream_close);
  const int rv = nghttp2_session_client_new(&c->session_, cb, c.get());
  nghttp2_session_callbacks_del(cb);
  if (rv != 0) return Status::io_error(fmt::format("HTTP/2: {}", nghttp2_strerror(rv)));
  const std::array<nghttp2_settings_entry, 2> settings{{
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(kWindowBytes)},
  }};
  if (nghttp2_submit_settings(c->session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size()) !=
          0 ||
      nghttp2_session_set_local_window_size(c->session_, NGHTTP2_FLAG_NONE, 0, kWindowBytes) != 0) {
    return Status::io_error("HTTP/2: cannot queue the session's SETTINGS");
  }
  return c;
}

H2Client::H2Client(Listener& listener) : listener_(listener) {}

H2Client::~H2Client() { nghttp2_session_del(session_); }

H2Client::Stream* H2Client::find(int32_t stream_id) {
  auto* s = static_cast<Stream*>(nghttp2_session_get_stream_user_data(session_, stream_id));
  return s == nullptr || s->cancelled ? nullptr : s;
}

H2Client::Stream* H2Client::take_stream() {
  if (free_.empty()) {
    owned_.push_back(std::make_unique<Stream>());
    return owned_.back().get();
  }
  Stream* s = free_.back();
  free_.pop_back();
  *s = Stream();
  return s;
}

void H2Client::give_back(Stream* s) { free_.push_back(s); }

void H2Client::on_frame(int32_t stream_id, uint8_t type, uint8_t flags, size_t length,
                        uint32_t error_code, int32_t last_stream_id) {
  switch (type) {
    case NGHTTP2_SETTINGS:
      settings_seen_ = true;
      server_max_streams_ =
          nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
      if (server_max_streams_ >= (1U << 31) - 1) server_max_streams_ = 0;  // none set
      break;
    case NGHTTP2_GOAWAY:
      goaway_received_ = true;
      goaway_error_ = error_code;
      goaway_last_stream_ = last_stream_id;
      break;
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA:
      if (Stream* s = find(stream_id)) {
        s->frame_bytes += length + 9;
        if ((flags & NGHTTP2_FLAG_END_STREAM) != 0) s->ended = true;
      }
      break;
    default:
      break;
  }
}

Result<H2Client::Stream*> H2Client::submit(uint32_t lane, const H2Request& request) {
  if (goaway_received_) return Status::unavailable("HTTP/2: the server sent GOAWAY");
  // A template's fields stay as they are for the whole run: nghttp2 gets pointers to them, built
  // once. A rendered request's strings change with each rendering, so its list is rebuilt.
  if (!nva_) nva_ = std::make_unique<NvList>();
  if (nva_->of != &request || request.rendered) {
    nva_->nv.clear();
    for (const auto& [name, value] : request.fields) {
      nva_->nv.push_back(nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
                                    name.size(), value.size(),
                                    NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE});
    }
    nva_->of = request.rendered ? nullptr : &request;
  }
  Stream* stream = take_stream();
  stream->lane = lane;
  nghttp2_data_provider body{};
  const nghttp2_data_provider* provider = nullptr;
  if (!request.body.empty()) {
    stream->body = &request.body;
    body.read_callback = H2Callbacks::read_body;
    provider = &body;
  }
  const int32_t id =
      nghttp2_submit_request(session_, nullptr, nva_->nv.data(), nva_->nv.size(), provider, stream);
  if (id < 0) {
    give_back(stream);
    return Status::io_error(fmt::format("HTTP/2: {}", nghttp2_strerror(id)));
  }
  stream->id = id;
  return stream;
}

int32_t H2Client::id_of(const Stream* stream) { return stream == nullptr ? 0 : stream->id; }

void H2Client::cancel(Stream* stream) {
  if (stream == nullptr || stream->cancelled) return;
  stream->cancelled = true;  // back to the pool when nghttp2 closes the stream
  stream->body = nullptr;    // the request's body may be rendered anew meanwhile
  // Also for a stream still queued behind the server's limit: nghttp2 drops its HEADERS and
  // closes it through on_stream_close.
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream->id, NGHTTP2_CANCEL);
}

Status H2Client::receive(std::string_view bytes) {
  const ssize_t n = nghttp2_session_mem_recv(
      session_, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (n < 0) {
    return Status::io_error(fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(n))));
  }
  return Status();
}

Status H2Client::pull(std::string& out) {
  while (true) {
    const uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) {
      return Status::io_error(fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(n))));
    }
    if (n == 0) return Status();
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
}

bool H2Client::finished() const {
  return nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0;
}

std::string H2Client::error_name(uint32_t error_code) {
  static constexpr std::array<std::string_view, 14> kNames = {"NO_ERROR",
                                                              "PROTOCOL_ERROR",
                                                              "INTERNAL_ERROR",
                                                              "FLOW_CONTROL_ERROR",
                                                              "SETTINGS_TIMEOUT",
                                                              "STREAM_CLOSED",
                                                              "FRAME_SIZE_ERROR",
                                                              "REFUSED_STREAM",
                                                              "CANCEL",
                                                              "COMPRESSION_ERROR",
                                                              "CONNECT_ERROR",
                                                              "ENHANCE_YOUR_CALM",
                                                              "INADEQUATE_SECURITY",
                                                              "HTTP_1_1_REQUIRED"};
  if (error_code < kNames.size()) return std::string(kNames[error_code]);
  return fmt::format("0x{:x}", error_code);
}

}  // namespace knee::http
