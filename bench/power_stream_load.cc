// power_stream_load: what one zeusd sustains on GET /gpu/stream_power with 1, 10 and 100
// listeners. The zeusd binary runs over the fake libnvidia-ml.so.1 with --gpus fake GPUs whose
// power a writer thread changes every 25 ms (so nearly every 20 Hz poll reports every GPU); the
// listeners are this process's threads on the project's HTTP client, each counting the events it
// receives. Reported per listener count: events/s received in total and per listener, zeusd's
// CPU over the window (from /proc/<pid>/stat) and per listener, and this process's CPU
// (getrusage) per listener. zeusd's CPU includes the fake NVML re-reading its changed state file
// (a cost a real driver does not have). The last column is getrusage(RUSAGE_CHILDREN): the
// CPU of every zeusd run so far, start and stop included.
//
//   build/release/bench/power_stream_load [--zeusd build/release/bin/zeusd]
//       [--fake build/release/fakes/libnvidia-ml.so.1] [--gpus 32] [--seconds 5] [--listeners
//       1,10,100]
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/client.h"

namespace {

namespace fs = std::filesystem;

double cpu_s(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// utime + stime of `pid` in seconds (fields 14 and 15 of /proc/<pid>/stat).
double process_cpu_s(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoll(f);
    if (i == 15) stime = std::stoll(f);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void write_state(const fs::path& path, int gpus, uint32_t step) {
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back(
        {{"name", "NVIDIA H100 80GB HBM3"},
         {"uuid", "GPU-bench-" + std::to_string(i)},
         {"architecture", 9},
         {"power_draw_mw", 200000 + (step * 1000 + static_cast<uint32_t>(i)) % 300000},
         {"min_limit_mw", 100000},
         {"max_limit_mw", 700000}});
  }
  const fs::path tmp = path.string() + ".tmp";
  std::ofstream(tmp) << nlohmann::json{{"devices", devices}}.dump();
  fs::rename(tmp, path);
}

struct Options {
  std::string zeusd = "build/release/bin/zeusd";
  std::string fake = "build/release/fakes/libnvidia-ml.so.1";
  int gpus = 32;
  double seconds = 5;
  std::vector<int> listeners = {1, 10, 100};
};

void run(const Options& o, int listeners) {
  char dir_template[] = "/tmp/zeusd_stream_bench_XXXXXX";
  if (!mkdtemp(dir_template)) throw std::runtime_error("mkdtemp");
  const fs::path dir = dir_template;
  const fs::path state = dir / "state.json";
  fs::create_directory(dir / "powercap");
  write_state(state, o.gpus, 0);
  const std::string sock = (dir / "zeusd.sock").string();
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("ZEUS_FAKE_NVML_STATE", state.c_str(), 1);
    setenv("ZEUS_NVML_PATH", o.fake.c_str(), 1);
    setenv("ZEUS_ROCM_SMI_PATH", "/nonexistent.so", 1);
    setenv("ZEUS_POWERCAP_ROOT", (dir / "powercap").c_str(), 1);
    setenv("ZEUS_LOG_LEVEL", "error", 1);
    freopen("/dev/null", "w", stderr);
    execl(o.zeusd.c_str(), "zeusd", "--socket", sock.c_str(), "--lease-journal", "none",
          "--log-level", "error", static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 200 && !fs::exists(sock); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));

  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint32_t step = 1; !stop; ++step) {
      write_state(state, o.gpus, step);
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  });
  std::vector<std::atomic<uint64_t>> counts(static_cast<size_t>(listeners));
  std::atomic<int> connected{0};
  std::vector<std::thread> threads;
  for (int l = 0; l < listeners; ++l) {
    threads.emplace_back([&, l] {
      auto client = zeus::http::HttpClient::unix_socket(sock, {});
      if (!client) return;
      bool counted = false;
      (void)(*client)->stream(
          "GET", "/gpu/stream_power", "", {}, nullptr,
          [&](std::string_view piece) {
            if (!counted) {
              counted = true;
              ++connected;
            }
            for (size_t at = piece.find("data: "); at != std::string_view::npos;
                 at = piece.find("data: ", at + 6)) {
              ++counts[static_cast<size_t>(l)];
            }
            return !stop.load();
          },
          10);
    });
  }
  for (int i = 0; i < 400 && connected.load() < listeners; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // warm
  uint64_t before = 0;
  for (auto& c : counts) before += c.load();
  rusage self_before{};
  getrusage(RUSAGE_SELF, &self_before);
  const double zeusd_before = process_cpu_s(pid);
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  const double window =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double zeusd_cpu = process_cpu_s(pid) - zeusd_before;
  rusage self_after{};
  getrusage(RUSAGE_SELF, &self_after);
  uint64_t after = 0, min_count = UINT64_MAX;
  for (auto& c : counts) {
    after += c.load();
    min_count = std::min<uint64_t>(min_count, c.load());
  }
  stop = true;
  kill(pid, SIGTERM);
  for (auto& t : threads) t.join();
  writer.join();
  int status = 0;
  waitpid(pid, &status, 0);
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  fs::remove_all(dir);

  const double events_s = static_cast<double>(after - before) / window;
  std::printf("%9d %10d %14.0f %14.1f %12.1f %16.2f %15.2f %16.2f\n", listeners, connected.load(),
              events_s, events_s / listeners, zeusd_cpu / window * 100,
              zeusd_cpu / window * 100 / listeners,
              (cpu_s(self_after) - cpu_s(self_before)) / window * 100 / listeners, cpu_s(children));
  (void)min_count;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--zeusd") {
      o.zeusd = value;
    } else if (flag == "--fake") {
      o.fake = value;
    } else if (flag == "--gpus") {
      o.gpus = std::stoi(value);
    } else if (flag == "--seconds") {
      o.seconds = std::stod(value);
    } else if (flag == "--listeners") {
      o.listeners.clear();
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');) o.listeners.push_back(std::stoi(item));
    } else {
      std::cerr << "unknown option " << flag
                << " (--zeusd PATH --fake PATH --gpus N --seconds S --listeners 1,10,100)\n";
      return 2;
    }
  }
  std::printf("one zeusd, %d fake GPUs changing every 25 ms, 20 Hz poller, %.0f s windows\n",
              o.gpus, o.seconds);
  std::printf("%9s %10s %14s %14s %12s %16s %15s %16s\n", "listeners", "connected", "events/s",
              "per listener", "zeusd CPU %", "zeusd CPU %/lst", "client CPU %/l",
              "zeusd CPU s cum");
  for (int listeners : o.listeners) run(o, listeners);
  return 0;
}
