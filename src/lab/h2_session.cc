#include "lab/h2_session.h"

#include <fmt/format.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <vector>

namespace knee::lab {

using core::Result;
using core::Status;

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

struct H2ServerSession::Callbacks {
  static H2ServerSession& self(void* user_data) {
    return *static_cast<H2ServerSession*>(user_data);
  }

  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
      H2ServerSession& s = self(user_data);
      s.streams_[frame->hd.stream_id].begun = s.now_;
    }
    return 0;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                       void* user_data) {
    auto& streams = self(user_data).streams_;
    auto it = streams.find(frame->hd.stream_id);
    if (it == streams.end()) return 0;
    const std::string_view n(reinterpret_cast<const char*>(name), namelen);
    const std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    if (n == ":method") it->second.method = v;
    if (n == ":path") it->second.path = v;
    if (n == "content-length") {  // nghttp2 has checked it is a number
      uint64_t length = 0;
      std::from_chars(v.data(), v.data() + v.size(), length);
      it->second.content_length = length;
    }
    it->second.field_bytes += namelen + valuelen + 32;
    return 0;
  }

  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
    H2ServerSession& s = self(user_data);
    auto it = s.streams_.find(frame->hd.stream_id);
    if (it == s.streams_.end()) return 0;
    const bool ended = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (ended) it->second.client_done = true;
    // A declared body over the limit is answered at its HEADERS, as HTTP/1.1 at its head.
    if (ended || it->second.content_length > s.max_body_bytes_) s.deliver(frame->hd.stream_id);
    return 0;
  }

  static int on_data_chunk_recv(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t*,
                                size_t len, void* user_data) {
    H2ServerSession& s = self(user_data);
    auto it = s.streams_.find(stream_id);
    if (it == s.streams_.end()) return 0;
    it->second.request_body_bytes += len;
    if (it->second.request_body_bytes > s.max_body_bytes_) s.deliver(stream_id);
    return 0;
  }

  // An answer sent whole before its request ended: the client may stop sending (RFC 9113 §8.1).
  static int on_frame_send(nghttp2_session* session, const nghttp2_frame* frame, void* user_data) {
    if ((frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) ||
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) {
      return 0;
    }
    H2ServerSession& s = self(user_data);
    auto it = s.streams_.find(frame->hd.stream_id);
    if (it != s.streams_.end() && !it->second.client_done) {
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
    }
    return 0;
  }

  static int on_stream_close(nghttp2_session*, int32_t stream_id, uint32_t, void* user_data) {
    H2ServerSession& s = self(user_data);
    if (s.streams_.erase(stream_id) > 0) s.handler_.on_stream_closed(stream_id);
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, int32_t stream_id, uint8_t* buf, size_t length,
                           uint32_t* data_flags, nghttp2_data_source*, void* user_data) {
    auto& streams = self(user_data).streams_;
    auto it = streams.find(stream_id);
    if (it == streams.end()) {
      *data_flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    Stream& st = it->second;
    const size_t n = std::min(length, st.body.size() - st.body_sent);
    std::memcpy(buf, st.body.data() + st.body_sent, n);
    st.body_sent += n;
    if (st.body_sent == st.body.size()) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }
};

void H2ServerSession::deliver(int32_t id) {
  auto it = streams_.find(id);
  if (it == streams_.end() || it->second.complete) return;
  Stream& st = it->second;
  st.complete = true;
  // Copies: the handler may answer at once, which may close the stream and erase it.
  const std::string method = st.method;
  const std::string path = st.path;
  handler_.on_request(id, method, path, st.field_bytes,
                      std::max(st.request_body_bytes, st.content_length));
}

Result<std::unique_ptr<H2ServerSession>> H2ServerSession::create(Handler& handler,
                                                                 uint32_t max_streams,
                                                                 uint64_t max_body_bytes) {
  std::unique_ptr<H2ServerSession> s(new H2ServerSession(handler, max_body_bytes));
  nghttp2_session_callbacks* cb = nullptr;
  if (nghttp2_session_callbacks_new(&cb) != 0) {
    return Status::io_error("HTTP/2: cannot allocate the session's callbacks");
  }
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, Callbacks::on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cb, Callbacks::on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, Callbacks::on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, Callbacks::on_data_chunk_recv);
  nghttp2_session_callbacks_set_on_frame_send_callback(cb, Callbacks::on_frame_send);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, Callbacks::on_stream_close);
  const int rv = nghttp2_session_server_new(&s->session_, cb, s.get());
  nghttp2_session_callbacks_del(cb);
  if (rv != 0) return Status::io_error(fmt::format("HTTP/2: {}", nghttp2_strerror(rv)));
  const nghttp2_settings_entry limit{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_streams};
  if (nghttp2_submit_settings(s->session_, NGHTTP2_FLAG_NONE, &limit, 1) != 0) {
    return Status::io_error("HTTP/2: cannot queue the session's SETTINGS");
  }
  return s;
}

H2ServerSession::~H2ServerSession() { nghttp2_session_del(session_); }

Status H2ServerSession::receive(std::string_view bytes, core::TimePoint now) {
  now_ = now;
  const ssize_t n = nghttp2_session_mem_recv(
      session_, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (n < 0) {
    return Status::io_error(fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(n))));
  }
  return Status::success();
}

Status H2ServerSession::pull(std::string& out) {
  while (true) {
    const uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) {
      return Status::io_error(fmt::format("HTTP/2: {}", nghttp2_strerror(static_cast<int>(n))));
    }
    if (n == 0) return Status::success();
    out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
  }
}

void H2ServerSession::respond(int32_t stream_id, std::string_view http1, bool head_only) {
  auto it = streams_.find(stream_id);
  if (it == streams_.end()) return;  // the client reset it, or the connection went
  const size_t head_end = http1.find("\r\n\r\n");
  if (http1.size() < 12 || head_end == std::string_view::npos) return;
  std::string status(http1.substr(9, 3));  // "HTTP/1.1 200 OK"
  std::vector<std::pair<std::string, std::string>> fields;
  size_t at = http1.find("\r\n") + 2;
  while (at < head_end) {
    const size_t eol = http1.find("\r\n", at);
    const std::string_view line = http1.substr(at, eol - at);
    at = eol + 2;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (iequals(name, "connection") || iequals(name, "keep-alive")) continue;
    fields.emplace_back(lower(name), std::string(value));
  }
  Stream& st = it->second;
  st.body = head_only ? std::string() : std::string(http1.substr(head_end + 4));
  st.body_sent = 0;
  std::vector<nghttp2_nv> nva;
  auto add = [&](const std::string& n, const std::string& v) {
    nva.push_back(nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(n.data())),
                             reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())), n.size(),
                             v.size(), NGHTTP2_NV_FLAG_NONE});
  };
  const std::string status_name = ":status";
  add(status_name, status);
  for (const auto& [n, v] : fields) add(n, v);
  nghttp2_data_provider provider{};
  provider.read_callback = Callbacks::read_body;
  nghttp2_submit_response(session_, stream_id, nva.data(), nva.size(),
                          st.body.empty() ? nullptr : &provider);
}

void H2ServerSession::goaway() {
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
}

std::optional<core::TimePoint> H2ServerSession::oldest_incomplete() const {
  std::optional<core::TimePoint> oldest;
  for (const auto& [id, stream] : streams_) {
    if (!stream.complete && (!oldest || stream.begun < *oldest)) oldest = stream.begun;
  }
  return oldest;
}

size_t H2ServerSession::answer_incomplete(core::TimePoint began_by, std::string_view http1) {
  std::vector<int32_t> late;
  for (const auto& [id, stream] : streams_) {
    if (!stream.complete && stream.begun <= began_by) late.push_back(id);
  }
  for (int32_t id : late) {
    streams_[id].complete = true;  // never handed to the Handler now
    respond(id, http1, /*head_only=*/false);
  }
  return late.size();
}

size_t H2ServerSession::open_streams() const { return streams_.size(); }

bool H2ServerSession::finished() const {
  return nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0;
}

}  // namespace knee::lab
