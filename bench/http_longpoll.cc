// http_longpoll: N pending long-polls held by one HttpServer process (issue: "10,000 pending
// long-polls under 100 MiB RSS, a thread count that does not grow with connections, all complete
// when released"). The server runs here; the N clients run in a child process (this program
// re-executed with --clients), so each side has its own descriptor budget.
//
//   build/release/bench/http_longpoll --polls 10000
// Prints one JSON line: polls, server RSS and threads before and while holding them, seconds to
// release all, and how many the clients saw completed.
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"
#include "http/test_socket.h"

namespace {

long status_field(const std::string& name) {  // from /proc/self/status, kB or a count
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) return std::strtol(line.c_str() + name.size() + 1, nullptr, 10);
  }
  return -1;
}

int run_clients(int port, int polls) {
  std::vector<zeus::http::testing::RawSocket> sockets;
  sockets.reserve(static_cast<size_t>(polls));
  for (int i = 0; i < polls; ++i) {
    sockets.push_back(zeus::http::testing::RawSocket::tcp(port));
    if (!sockets.back().send("GET /wait HTTP/1.1\r\nHost: bench\r\n\r\n")) return 2;
  }
  int completed = 0;
  for (auto& s : sockets) completed += s.read(60, "\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0;
  std::cout << completed << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int polls = 10000;
  int client_port = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--polls") polls = std::atoi(argv[i + 1]);
    if (flag == "--clients") client_port = std::atoi(argv[i + 1]);
  }
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  if (client_port > 0) return run_clients(client_port, polls);

  std::mutex mu;
  std::vector<std::shared_ptr<zeus::http::Reply>> waiting;
  zeus::http::ServerOptions options;
  options.max_connections = static_cast<size_t>(polls) + 100;
  auto server = zeus::http::HttpServer::start(
      options, [&](const zeus::http::HttpRequest&, const zeus::http::Peer&,
                   std::shared_ptr<zeus::http::Reply> reply) {
        reply->answer_by(120, zeus::http::HttpResponse::error(504, "nobody released it"));
        std::lock_guard<std::mutex> lock(mu);
        waiting.push_back(std::move(reply));
      });
  if (!server) {
    std::cerr << server.error().message << "\n";
    return 1;
  }
  const int port = *(*server)->listen_tcp("127.0.0.1", 0);
  const long rss_before_kb = status_field("VmRSS"), threads_before = status_field("Threads");

  int out[2];
  if (pipe(out) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    dup2(out[1], 1);
    const std::string p = std::to_string(port), n = std::to_string(polls);
    execl("/proc/self/exe", argv[0], "--clients", p.c_str(), "--polls", n.c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (static_cast<int>(waiting.size()) >= polls) break;
    }
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(120)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double connect_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long rss_held_kb = status_field("VmRSS"), threads_held = status_field("Threads");
  size_t held = 0;
  const auto t1 = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu);
    held = waiting.size();
    for (auto& reply : waiting) reply->send(zeus::http::HttpResponse{200, "released", "text/plain", {}, false});
    waiting.clear();
  }
  char buffer[64] = {0};
  const ssize_t n = read(out[0], buffer, sizeof(buffer) - 1);
  const double release_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  int status = 0;
  waitpid(child, &status, 0);
  (*server)->stop();
  std::printf(
      "{\"polls\": %d, \"held\": %zu, \"completed\": %s, \"seconds_to_hold_all\": %.2f, "
      "\"seconds_to_release_all\": %.2f, \"rss_mib_before\": %.1f, \"rss_mib_holding\": %.1f, "
      "\"threads_before\": %ld, \"threads_holding\": %ld}\n",
      polls, held, n > 0 ? std::string(buffer, static_cast<size_t>(n) - 1).c_str() : "0", connect_s,
      release_s, rss_before_kb / 1024.0, rss_held_kb / 1024.0, threads_before, threads_held);
  return 0;
}
