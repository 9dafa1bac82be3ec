// Test helper: a real HTTPS server on 127.0.0.1 (a free port it picks itself) for the TLS client's
// tests. A self-signed certificate is made by the `openssl` CLI in a temp dir, and Debian's
// /usr/bin/python3 serves with http.server wrapped in ssl (HTTP/1.1, keep-alive; GET, POST, PUT):
// `answers` maps a path (query ignored) to a JSON body; any other path is a 404; /stream answers five chunked
// "data: N" events. Every answer carries X-Connection: the number of the TLS connection it came
// on (1, 2, ...), so a test sees whether a connection was reused. The server is killed and the
// temp dir removed when the object goes.
//
//   TlsTestServer server("localhost", {{"/v1/x", "{\"a\": 1}"}});
//   ASSERT_TRUE(server.ok()) << server.problem();
//   ClientOptions o; o.ca_file = server.cert_file();
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/run_command.h"

namespace zeus::http::testing {

inline constexpr const char* kTlsServerScript = R"PY(
import http.server, json, os, ssl, sys
cert, key, port_file, answers_file = sys.argv[1:5]
with open(answers_file) as f:
    answers = json.load(f)

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    connections = 0

    def setup(self):
        super().setup()
        Handler.connections += 1
        self.connection_number = Handler.connections

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.answer()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.answer()

    do_PUT = do_POST

    def answer(self):
        path = self.path.split("?")[0]
        if path == "/stream":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("X-Connection", str(self.connection_number))
            self.end_headers()
            for i in range(5):
                data = ("data: %d\n\n" % i).encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        body = answers.get(path)
        status = 200 if body is not None else 404
        data = (body if body is not None else '{"error": "no such path"}').encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Connection", str(self.connection_number))
        self.end_headers()
        self.wfile.write(data)

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(cert, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
)PY";

class TlsTestServer {
 public:
  // A certificate for `cert_name` (subjectAltName DNS:cert_name and IP:127.0.0.1 when cert_name
  // is "localhost", else DNS:cert_name only).
  TlsTestServer(const std::string& cert_name, const std::map<std::string, std::string>& answers) {
    char dir_template[] = "/tmp/zeus_tls_XXXXXX";
    if (::mkdtemp(dir_template) == nullptr) {
      problem_ = "mkdtemp failed";
      return;
    }
    dir_ = dir_template;
    const std::string san = cert_name == "localhost" ? "DNS:localhost,IP:127.0.0.1"
                                                      : "DNS:" + cert_name;
    auto made = run_command({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                             "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-keyout",
                             dir_ + "/key.pem", "-out", cert_file(), "-subj", "/CN=" + cert_name,
                             "-addext", "subjectAltName=" + san});
    if (!made || !made->succeeded()) {
      problem_ = "openssl req failed: " + (made ? made->stderr_text : made.error().message);
      return;
    }
    std::ofstream(dir_ + "/answers.json") << nlohmann::json(answers).dump();
    std::ofstream(dir_ + "/server.py") << kTlsServerScript;
    const std::string port_file = dir_ + "/port";
    std::vector<std::string> args = {"/usr/bin/python3", dir_ + "/server.py", cert_file(),
                                     dir_ + "/key.pem", port_file, dir_ + "/answers.json"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string log = dir_ + "/server.log";
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      pid_ = -1;
      problem_ = "cannot start /usr/bin/python3";
      return;
    }
    // Listening once it has written its port (it writes it after binding).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < give_up) {
      std::ifstream in(port_file);
      if (in >> port_) return;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        problem_ = "the TLS test server exited: " + read(log);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    problem_ = "the TLS test server did not listen within 15 s: " + read(log);
  }

  ~TlsTestServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  TlsTestServer(const TlsTestServer&) = delete;
  TlsTestServer& operator=(const TlsTestServer&) = delete;

  bool ok() const { return problem_.empty() && port_ > 0; }
  const std::string& problem() const { return problem_; }
  int port() const { return port_; }
  std::string cert_file() const { return dir_ + "/cert.pem"; }

 private:
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string problem_;
};

}  // namespace zeus::http::testing
