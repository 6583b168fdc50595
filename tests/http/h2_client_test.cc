// H2Request: a RequestSpec as HTTP/2 fields (RFC 9113 §8.2.2, §8.3.1), and H2Client's error
// names.
#include "http/h2_client.h"

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <string>
#include <vector>

namespace knee::http {
namespace {

RequestSpec spec_for(const std::string& url) {
  RequestSpec s;
  s.url = *parse_url(url);
  return s;
}

std::string field(const H2Request& r, const std::string& name) {
  for (const auto& [n, v] : r.fields) {
    if (n == name) return v;
  }
  return "<none>";
}

TEST(H2Request, PseudoHeadersComeFirstAndConnectionFieldsAreDropped) {
  RequestSpec s = spec_for("https://a.test:8443/items?id=7");
  s.method = "POST";
  s.headers = {
      {"Host", "b.test"}, {"Connection", "keep-alive"}, {"X-Trace", "on"}, {"Keep-Alive", "5"}};
  s.body = "hello";
  auto r = H2Request::compile(s);
  ASSERT_TRUE(r) << r.status().message();
  ASSERT_GE(r->fields.size(), 4u);
  EXPECT_EQ(r->fields[0], (std::pair<std::string, std::string>{":method", "POST"}));
  EXPECT_EQ(r->fields[1], (std::pair<std::string, std::string>{":scheme", "https"}));
  EXPECT_EQ(r->fields[2].first, ":authority");
  EXPECT_EQ(r->fields[2].second, "b.test");  // the user's Host wins, as over HTTP/1.1
  EXPECT_EQ(r->fields[3], (std::pair<std::string, std::string>{":path", "/items?id=7"}));
  EXPECT_EQ(field(*r, "x-trace"), "on");  // lower-case names (RFC 9113 §8.2.1)
  EXPECT_EQ(field(*r, "connection"), "<none>");
  EXPECT_EQ(field(*r, "keep-alive"), "<none>");
  EXPECT_EQ(field(*r, "user-agent"), "knee/0.1");
  EXPECT_EQ(field(*r, "content-length"), "5");
  EXPECT_FALSE(r->has_placeholders);
}

TEST(H2Request, PlaceholdersExpandPerConnectionAndRequest) {
  RequestSpec s = spec_for("http://127.0.0.1:8080/c/{conn}/s/{seq}");
  s.method = "PUT";
  s.body = "{\"seq\": {seq}}";
  auto r = H2Request::compile(s);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_TRUE(r->has_placeholders);
  EXPECT_EQ(field(*r, "content-length"), "<none>");  // known once expanded
  H2Request out;
  r->render(3, 120, out);
  EXPECT_EQ(field(out, ":path"), "/c/3/s/120");
  EXPECT_EQ(out.body, "{\"seq\": 120}");
  EXPECT_EQ(field(out, "content-length"), "12");
  r->render(4, 7, out);  // reused: nothing of the previous rendering stays
  EXPECT_EQ(field(out, ":path"), "/c/4/s/7");
  EXPECT_EQ(field(out, "content-length"), "10");
}

TEST(H2Request, ShipmentExpandsInThePathAndTheBody) {
  RequestSpec s = spec_for("http://127.0.0.1:8080/tracking/{shipment}");
  s.method = "POST";
  s.body = R"({"no":"{shipment}"})";
  auto r = H2Request::compile(s);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_TRUE(r->has_placeholders);
  EXPECT_TRUE(r->uses_shipment);
  H2Request out;
  r->render(0, 0, out, 31);
  EXPECT_EQ(field(out, ":path"), "/tracking/KN0000000031");
  EXPECT_EQ(out.body, R"({"no":"KN0000000031"})");
  EXPECT_EQ(field(out, "content-length"), "21");
}

TEST(H2Request, TheHttp11ChecksHoldToo) {
  RequestSpec s = spec_for("http://127.0.0.1/");
  s.headers = {{"X-Bad", "a\r\nb"}};
  EXPECT_FALSE(H2Request::compile(s));
}

TEST(H2Client, NamesErrorCodesAsRfc9113Does) {
  EXPECT_EQ(H2Client::error_name(0), "NO_ERROR");
  EXPECT_EQ(H2Client::error_name(7), "REFUSED_STREAM");
  EXPECT_EQ(H2Client::error_name(13), "HTTP_1_1_REQUIRED");
  EXPECT_EQ(H2Client::error_name(0x1f), "0x1f");
}

// An in-memory HTTP/2 server session (nghttp2's) wired to an H2Client: pump() moves bytes both
// ways until both sides are quiet.
class Loopback : public H2Client::Listener {
 public:
  explicit Loopback(uint32_t max_streams = 0) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_server_new(&server_, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry limit{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_streams};
    nghttp2_submit_settings(server_, NGHTTP2_FLAG_NONE, &limit, max_streams > 0 ? 1 : 0);
    client_ = std::move(H2Client::create(*this)).value();
    pump();
  }
  ~Loopback() override { nghttp2_session_del(server_); }

  void pump() {
    for (int i = 0; i < 8; ++i) {
      std::string up;
      ASSERT_TRUE(client_->pull(up).is_ok());
      ASSERT_GE(
          nghttp2_session_mem_recv(server_, reinterpret_cast<const uint8_t*>(up.data()), up.size()),
          0);
      std::string down;
      const uint8_t* data = nullptr;
      ssize_t n = 0;
      while ((n = nghttp2_session_mem_send(server_, &data)) > 0) {
        down.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
      }
      ASSERT_TRUE(client_->receive(down).is_ok());
    }
  }
  // Answers stream `id` with 200 and an empty body; `end` false sends the headers only.
  void answer(int32_t id, bool end = true) {
    static const nghttp2_nv status{reinterpret_cast<uint8_t*>(const_cast<char*>(":status")),
                                   reinterpret_cast<uint8_t*>(const_cast<char*>("200")), 7, 3,
                                   NGHTTP2_NV_FLAG_NONE};
    nghttp2_submit_headers(server_, end ? NGHTTP2_FLAG_END_STREAM : NGHTTP2_FLAG_NONE, id, nullptr,
                           &status, 1, nullptr);
    pump();
  }
  void reset(int32_t id, uint32_t code) {
    nghttp2_submit_rst_stream(server_, NGHTTP2_FLAG_NONE, id, code);
    pump();
  }

  void on_response(uint32_t lane, int status, uint64_t, uint64_t) override {
    events.push_back("response lane " + std::to_string(lane) + " " + std::to_string(status));
  }
  void on_reset(uint32_t lane, uint32_t code, bool, uint64_t) override {
    events.push_back("reset lane " + std::to_string(lane) + " " + H2Client::error_name(code));
  }

  H2Client& client() { return *client_; }
  std::vector<std::string> paths;  // :path of each request, in arrival order
  std::vector<int32_t> ids;        // and its stream
  std::vector<std::string> events;

 private:
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                       void* user_data) {
    auto* self = static_cast<Loopback*>(user_data);
    if (std::string_view(reinterpret_cast<const char*>(name), namelen) == ":path") {
      self->paths.emplace_back(reinterpret_cast<const char*>(value), valuelen);
      self->ids.push_back(frame->hd.stream_id);
    }
    return 0;
  }
  nghttp2_session* server_ = nullptr;
  std::unique_ptr<H2Client> client_;
};

TEST(H2Client, EachRenderingOfALaneSendsItsOwnFields) {
  // Regression: the session reused the fields of a lane's previous rendering (the same
  // object), so /s/10 went out as /s/1 and a longer value read freed memory.
  Loopback net;
  ASSERT_TRUE(net.client().ready());
  RequestSpec spec = spec_for("http://127.0.0.1/s/{seq}");
  const H2Request tmpl = std::move(H2Request::compile(spec)).value();
  H2Request lane;
  for (const uint64_t seq : {uint64_t{9}, uint64_t{10}, uint64_t{12345678901234}}) {
    tmpl.render(0, seq, lane);
    auto s = net.client().submit(0, lane);
    ASSERT_TRUE(s) << s.status().message();
    net.pump();
    net.answer(net.ids.back());
  }
  EXPECT_EQ(net.paths, (std::vector<std::string>{"/s/9", "/s/10", "/s/12345678901234"}));
  EXPECT_EQ(net.events.size(), 3u);
}

TEST(H2Client, ACancelledStreamStillQueuedBehindTheServersLimitIsNeverAnswered) {
  // Regression: cancel() could not find a stream nghttp2 still held back (the server allows 1),
  // so it went out later and its answer completed the lane's next request.
  Loopback net(/*max_streams=*/1);
  const H2Request fixed = std::move(H2Request::compile(spec_for("http://127.0.0.1/x"))).value();
  auto first = net.client().submit(1, fixed);
  auto queued = net.client().submit(2, fixed);
  ASSERT_TRUE(first && queued);
  net.pump();
  ASSERT_EQ(net.ids.size(), 1u);  // only the first reached the server
  net.client().cancel(*queued);
  net.answer(net.ids[0]);
  net.pump();
  EXPECT_EQ(net.ids.size(), 1u);  // the cancelled one never started
  EXPECT_EQ(net.events, (std::vector<std::string>{"response lane 1 200"}));
}

TEST(H2Client, AResetWithNoErrorBeforeTheEndOfTheResponseIsNotAnAnswer) {
  Loopback net;
  const H2Request fixed = std::move(H2Request::compile(spec_for("http://127.0.0.1/x"))).value();
  ASSERT_TRUE(net.client().submit(0, fixed));
  net.pump();
  net.answer(net.ids[0], /*end=*/false);  // headers, no END_STREAM
  net.reset(net.ids[0], NGHTTP2_NO_ERROR);
  EXPECT_EQ(net.events, (std::vector<std::string>{"reset lane 0 INTERNAL_ERROR"}));
}

}  // namespace
}  // namespace knee::http
