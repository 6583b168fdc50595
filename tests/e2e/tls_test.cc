// knee run https:// as a user types it (issue 12, points 1, 2 and 7): the text and JSON name the
// TLS version, cipher and handshakes; a certificate that does not verify is one clear line and
// exit 1; the TLS flags are checked before anything is measured (exit 2).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "support/scripted_server.h"
#include "support/subprocess.h"
#include "support/test_pki.h"

namespace knee {
namespace {

using testing::Action;
using testing::run_process;
using testing::ScriptedServer;
using testing::ServerTls;
using testing::TestPki;

TEST(Https, ARunNamesTheProtocolAndItsHandshakes) {
  TestPki pki;
  ScriptedServer server(ScriptedServer::always_ok(),
                        ServerTls::serving(pki.server_cert(), pki.key()));
  const std::string url = server.https_url("localhost");
  auto r = run_process(
      {KNEE_BINARY, "run", url, "-c", "2", "-d", "0.3s", "-w", "0.1s", "--cacert", pki.ca_cert()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("knee run GET " + url), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  connects     2 opened, warm-up included; TCP connect p50 "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  TLS          TLSv1.3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 full handshakes, 0 resumed; handshake p50 "), std::string::npos) << r.out;

  auto j = run_process({KNEE_BINARY, "run", url, "-c", "2", "-d", "0.3s", "-w", "0", "--cacert",
                        pki.ca_cert(), "--tls", "1.2", "--json", "-"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  const auto& connects = doc["connects"];
  EXPECT_EQ(connects["opened"], 2);
  EXPECT_EQ(connects["tls"]["version"], "TLSv1.2");
  EXPECT_EQ(connects["tls"]["full"].get<int>() + connects["tls"]["resumed"].get<int>(), 2);
  EXPECT_GT(connects["tls"]["handshake_ns"]["p50"].get<double>(), 0) << connects.dump();
  EXPECT_EQ(doc["errors"]["tls"], 0);
  // What was asked is saved with the result.
  EXPECT_EQ(doc["params"]["tls"]["version"], "1.2");
  EXPECT_EQ(doc["params"]["tls"]["verify"], true);
  EXPECT_EQ(doc["params"]["tls"]["ca_file"], pki.ca_cert());
  EXPECT_EQ(doc["params"]["tls"]["resume"], true);
}

TEST(Https, ASweepNamesItsHandshakesUnderTheTable) {
  TestPki pki;
  ScriptedServer server(ScriptedServer::always_ok(),
                        ServerTls::serving(pki.server_cert(), pki.key()));
  auto r = run_process({KNEE_BINARY, "sweep", server.https_url("localhost"), "--levels", "1,2",
                        "-d", "0.2s", "-w", "0", "--cacert", pki.ca_cert(), "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("TLS: TLSv1.3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; 3 full handshakes and 0 resumed over the levels"), std::string::npos)
      << r.out;
}

TEST(Https, ACertificateThatDoesNotVerifyIsOneLineAndExit1) {
  TestPki pki;
  ScriptedServer server(ScriptedServer::always_ok(),
                        ServerTls::serving(pki.wrong_host_cert(), pki.key()));
  const std::string url = server.https_url("localhost");
  auto r = run_process({KNEE_BINARY, "run", url, "-d", "0.3s", "--cacert", pki.ca_cert()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "knee: cannot reach " + url +
                       ": TLS handshake: certificate verify failed: hostname mismatch (the "
                       "certificate is for other names: use one of them in the URL, or -k)\n");
  EXPECT_EQ(r.out, "");
  // -k measures it anyway.
  auto k = run_process({KNEE_BINARY, "run", url, "-c", "1", "-d", "0.2s", "-w", "0", "-k"});
  EXPECT_EQ(k.exit_code, 0) << k.err;
}

TEST(Https, TlsFlagsAreCheckedBeforeAnythingIsMeasured) {
  TestPki pki;
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"http://127.0.0.1:1/", "-k"}, "-k/--insecure: only for https:// URLs"},
      {{"https://127.0.0.1:1/", "--tls", "1.1"}, "--tls: '1.1': knee speaks TLS 1.2 and 1.3"},
      {{"https://127.0.0.1:1/", "--cacert", "/nonexistent/ca.pem"},
       "--cacert: '/nonexistent/ca.pem': not a readable PEM bundle"},
      {{"https://127.0.0.1:1/", "--cert", pki.client_cert()}, "needs both --cert and --key"},
      {{"https://127.0.0.1:1/", "-k", "--cacert", pki.ca_cert()}, "-k/--insecure and --cacert"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {KNEE_BINARY, "run"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = run_process(argv, std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 2) << c.message << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace knee

namespace knee {
namespace {

// knee serve --tls (issue 12, point 6): the lab server over TLS with a certificate it made, and
// knee sweep's built-in server with --server-tls.
TEST(ServeTls, TheLabServerSpeaksTlsWithASelfSignedCertificate) {
  testing::BackgroundProcess server({KNEE_BINARY, "serve", "--tls", "--port", "0"});
  const int port = testing::port_of_listening_line(server.first_line());
  ASSERT_GT(port, 0) << server.first_line();
  const std::string url = "https://127.0.0.1:" + std::to_string(port) + "/fast";
  // Verified, it is what it says: self-signed.
  auto refused = run_process({KNEE_BINARY, "run", url, "-d", "0.2s"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("self-signed certificate"), std::string::npos) << refused.err;
  auto r = run_process(
      {KNEE_BINARY, "run", url, "-k", "-c", "2", "-d", "0.3s", "-w", "0", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["connects"]["tls"]["version"], "TLSv1.3");
  EXPECT_EQ(doc["connects"]["tls"]["alpn"], "http/1.1");
  EXPECT_GT(doc["ok"].get<int>(), 10);
  EXPECT_EQ(doc["errors"]["tls"], 0);
  EXPECT_EQ(server.terminate(), 0);

  auto lone = run_process({KNEE_BINARY, "serve", "--cert", "x.pem", "--port", "0"});
  EXPECT_EQ(lone.exit_code, 2);
  EXPECT_EQ(lone.err, "knee serve: --cert/--key: only with --tls\n");
}

TEST(ServeTls, ASweepOfTheBuiltInServerOverTls) {
  auto r = run_process({KNEE_BINARY, "sweep", "--server-tls", "--levels", "1,2", "-d", "0.3s", "-w",
                        "0", "--quiet", "--server-wait", "1ms"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("built-in lab server (knee serve --tls, pid "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TLS: TLSv1.3 "), std::string::npos) << r.out;
  auto h2 = run_process({KNEE_BINARY, "sweep", "--h2", "--levels", "1", "-d", "0.2s"});
  EXPECT_EQ(h2.exit_code, 2);
  EXPECT_NE(h2.err.find("speaks HTTP/2 over TLS with --server-tls"), std::string::npos) << h2.err;
  // Over HTTP/2, with TLS and without: the built-in server speaks both.
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--server-tls", "--h2"}, std::vector<std::string>{"--h2c"}}) {
    std::vector<std::string> argv = {
        KNEE_BINARY, "sweep", "--levels", "1,2",           "-d", "0.3s", "-w", "0",
        "--streams", "4",     "--quiet",  "--server-wait", "1ms"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto s = run_process(argv);
    ASSERT_EQ(s.exit_code, 0) << s.err;
    EXPECT_NE(s.out.find(", 4 streams per connection; N = connections x 4"), std::string::npos)
        << s.out;
  }
}

}  // namespace
}  // namespace knee

namespace knee {
namespace {

// Regression: Ctrl-C while the pre-flight handshake waited on a server that never answers
// exited 1, as if the target were unreachable; an interrupted run exits 130.
TEST(ServeTls, CtrlCDuringThePreflightHandshakeExits130) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 8), 0);  // connects complete in the backlog; nothing answers
  socklen_t len = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string url = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/";
  int err_pipe[2];
  ASSERT_EQ(::pipe2(err_pipe, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<std::string> args = {KNEE_BINARY, "run", url, "-k", "-d", "1s", "--timeout", "20s"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, KNEE_BINARY, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_pipe[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  std::string err;
  char buf[512];
  ssize_t n = 0;
  while ((n = ::read(err_pipe[0], buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
  ::close(err_pipe[0]);
  ::close(listener);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << err;
  EXPECT_EQ(err.rfind("knee: interrupted before measuring began (", 0), 0u) << err;
}

}  // namespace
}  // namespace knee

namespace knee {
namespace {

// Every lab endpoint answers the same over HTTP/1.1, HTTP/1.1 over TLS, h2c and h2 (issue 12,
// point 6), checked with curl, a client knee did not write.
TEST(ServeTls, EveryEndpointIsTheSameOverH1TlsH2cAndH2) {
  testing::BackgroundProcess plain({KNEE_BINARY, "serve", "--port", "0", "--wait", "1ms"});
  testing::BackgroundProcess tls({KNEE_BINARY, "serve", "--tls", "--port", "0", "--wait", "1ms"});
  const int p = testing::port_of_listening_line(plain.first_line());
  const int t = testing::port_of_listening_line(tls.first_line());
  ASSERT_GT(p, 0);
  ASSERT_GT(t, 0);
  const std::string h = "http://127.0.0.1:" + std::to_string(p);
  const std::string s = "https://127.0.0.1:" + std::to_string(t);
  struct Way {
    std::string base;
    std::vector<std::string> flags;
    std::string version;  // curl's %{http_version}
  };
  const std::vector<Way> ways = {{h, {"--http1.1"}, "1.1"},
                                 {s, {"-k", "--http1.1"}, "1.1"},
                                 {h, {"--http2-prior-knowledge"}, "2"},
                                 {s, {"-k", "--http2"}, "2"}};
  for (const std::string path :
       {"/fast", "/tracking?no=G1-7", "/slow-async?ms=2", "/slow-sync?ms=1",
        "/stall?every=10&for=1&ms=1", "/nope", "/slow-async?ms=oops"}) {
    std::string first;
    for (const Way& way : ways) {
      std::vector<std::string> argv = {"/usr/bin/curl", "-s", "-w",
                                       "|%{http_code}|%{http_version}"};
      argv.insert(argv.end(), way.flags.begin(), way.flags.end());
      argv.push_back(way.base + path);
      auto r = run_process(argv);
      ASSERT_EQ(r.exit_code, 0) << path << " " << r.err;
      const std::string version = r.out.substr(r.out.rfind('|') + 1);
      EXPECT_EQ(version, way.version) << way.base << path;
      const std::string answer = r.out.substr(0, r.out.rfind('|'));  // body|status
      if (first.empty()) first = answer;
      EXPECT_EQ(answer, first) << way.base << path << " over HTTP/" << way.version;
    }
  }
  // HEAD and a method the lab does not serve, over h2c.
  auto head = run_process({"/usr/bin/curl", "-s", "-I", "--http2-prior-knowledge", h + "/fast"});
  EXPECT_EQ(head.out.rfind("HTTP/2 200", 0), 0u) << head.out;
  EXPECT_NE(head.out.find("content-length: 29"), std::string::npos) << head.out;
  auto post = run_process({"/usr/bin/curl", "-s", "-X", "POST", "-w", "|%{http_code}",
                           "--http2-prior-knowledge", h + "/fast"});
  EXPECT_EQ(post.out.substr(post.out.rfind('|') + 1), "405");
  EXPECT_EQ(plain.terminate(), 0);
  EXPECT_EQ(tls.terminate(), 0);
}

}  // namespace
}  // namespace knee
