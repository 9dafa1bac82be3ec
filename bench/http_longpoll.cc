// http_longpoll: what waiting connections cost one HttpServer process.
//   --polls N (default 10000): N pending long-polls held ("under 100 MiB RSS, a thread count that
//     does not grow with connections, all complete when released"). The server runs here; the
//     clients in a child process (this program re-executed with --clients), so each side has its
//     own descriptor budget. Prints polls, RSS and threads before and while holding them, seconds
//     to hold and to release all, and how many the clients saw completed.
//   --sse N: N Server-Sent-Event listeners on one stream, one of them stalled (never reads), 5,000
//     events of 1 KiB: prints how many of the others received every event in order, and whether
//     the stalled one was dropped.
//
//   build/release/bench/http_longpoll --polls 10000
//   build/release/bench/http_longpoll --sse 100
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

int run_sse(int listeners) {
  constexpr int kEvents = 5000;
  std::mutex mu;
  std::vector<std::shared_ptr<zeus::http::EventStream>> streams;
  zeus::http::ServerOptions options;
  options.max_stream_buffer_bytes = 1 << 20;
  auto server = zeus::http::HttpServer::start(
      options, [&](const zeus::http::HttpRequest&, const zeus::http::Peer&,
                   std::shared_ptr<zeus::http::Reply> reply) {
        std::lock_guard<std::mutex> lock(mu);
        streams.push_back(reply->start_events());
      });
  if (!server) return 1;
  const int port = *(*server)->listen_tcp("127.0.0.1", 0);
  std::vector<zeus::http::testing::RawSocket> sockets;
  for (int i = 0; i < listeners; ++i) {
    sockets.push_back(zeus::http::testing::RawSocket::tcp(port, i == 0 ? 4096 : 0));
    sockets.back().send("GET /events HTTP/1.1\r\nHost: bench\r\n\r\n");
  }
  while ([&] { std::lock_guard<std::mutex> l(mu); return static_cast<int>(streams.size()); }() <
         listeners) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // One thread reads every listener but the stalled one (poll), checking order as it goes.
  std::vector<std::string> pending(static_cast<size_t>(listeners));
  std::vector<int> next_event(static_cast<size_t>(listeners), 0);
  std::atomic<bool> producing{true};
  std::thread reader([&] {
    std::vector<pollfd> fds;
    for (int i = 1; i < listeners; ++i) fds.push_back({sockets[i].fd(), POLLIN, 0});
    auto last_data = std::chrono::steady_clock::now();
    while (producing.load() || std::chrono::steady_clock::now() - last_data < std::chrono::seconds(2)) {
      if (poll(fds.data(), fds.size(), 100) <= 0) continue;
      for (size_t k = 0; k < fds.size(); ++k) {
        if (!(fds[k].revents & POLLIN)) continue;
        const size_t i = k + 1;
        char buffer[65536];
        const ssize_t n = recv(fds[k].fd, buffer, sizeof(buffer), 0);
        if (n <= 0) continue;
        last_data = std::chrono::steady_clock::now();
        pending[i].append(buffer, static_cast<size_t>(n));
        size_t at;
        while ((at = pending[i].find("data: #")) != std::string::npos) {
          const size_t end = pending[i].find('\n', at);
          if (end == std::string::npos) break;
          if (std::atoi(pending[i].c_str() + at + 7) == next_event[i]) ++next_event[i];
          pending[i].erase(0, end + 1);
        }
      }
    }
  });
  const std::string padding(1000, 'x');
  int stalled_dropped_at = -1;
  const auto t0 = std::chrono::steady_clock::now();
  for (int e = 0; e < kEvents; ++e) {
    if (e % 5 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mu);
    for (size_t s = 0; s < streams.size(); ++s) {
      const bool sent = streams[s]->send(padding + "\n#" + std::to_string(e));
      if (s == 0 && !sent && stalled_dropped_at < 0) stalled_dropped_at = e;
    }
  }
  const double produce_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  producing = false;
  reader.join();
  int complete = 0;
  for (int i = 1; i < listeners; ++i) complete += next_event[static_cast<size_t>(i)] == kEvents;
  std::printf(
      "{\"listeners\": %d, \"events\": %d, \"event_bytes\": %zu, \"seconds\": %.2f, "
      "\"others_with_every_event_in_order\": %d, \"stalled_dropped_at_event\": %d, "
      "\"threads\": %ld}\n",
      listeners, kEvents, padding.size() + 16, produce_s, complete, stalled_dropped_at,
      status_field("Threads"));
  (*server)->stop();
  return complete == listeners - 1 && stalled_dropped_at >= 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int polls = 10000;
  int client_port = 0;
  int sse = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--polls") polls = std::atoi(argv[i + 1]);
    if (flag == "--clients") client_port = std::atoi(argv[i + 1]);
    if (flag == "--sse") sse = std::atoi(argv[i + 1]);
  }
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
  if (client_port > 0) return run_clients(client_port, polls);
  if (sse > 0) return run_sse(sse);

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
