// ExitRestorer: runs registered "put the GPUs back" actions when the process is stopped by a
// signal (SIGINT, SIGTERM, and SIGHUP, SIGQUIT, SIGUSR1/2, SIGALRM, SIGXCPU, SIGVTALRM, SIGPROF,
// SIGXFSZ, SIGPIPE while their disposition is the default: every signal that would otherwise end
// the process with its GPUs changed), or leaves through exit() without destroying their owners.
//
// Signal dispositions are process-wide, so this is the one process-wide registry of the
// optimizer layer (everything else is passed explicitly). Design, chosen for async-signal-safety:
// the handler only write()s the signal number to a self-pipe (async-signal-safe) and returns; a
// watcher thread (all signals blocked) reads it, runs every registered action (device calls,
// which take locks and are not async-signal-safe, so they must not run inside the handler),
// then reinstalls the disposition that was there before the first registration and re-sends the
// signal to the process: with the default disposition the process terminates by that signal
// (exit status 128+N), and a previously installed handler (e.g. Python's) runs as it would have.
// Actions also run from atexit hooks (one registered per add(), so that it runs before the
// static destructors of device libraries loaded before it). SIGKILL cannot be caught: the privileged daemon zeusd
// restores the limits of processes that died that way.
// Actions and handlers belong to the process that registered them: after fork() the child drops
// the parent's actions, puts back the signal dispositions Zeus replaced, and gets a fresh pipe
// and watcher on its own first registration (pthread_atfork).
// Thread-safety: register/unregister from any thread; unregister waits for a running action.
//
//   auto id = ExitRestorer::instance().add([&] { gpu.set_power_limit_mw(max_mw); });
//   ...
//   ExitRestorer::instance().remove(id);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace zeus {

class ExitRestorer {
 public:
  using Action = std::function<void()>;

  // The process's registry (never destroyed, so it is usable from atexit and during shutdown).
  static ExitRestorer& instance();

  // Registers `action`; the first registration in a process installs the signal handlers (see
  // above) and starts the watcher. Returns an id for remove(). When `install_handlers` is
  // false, the action runs only from the atexit hook.
  uint64_t add(Action action, bool install_handlers = true);
  // Unregisters; blocks while the action is running. Unknown ids are ignored.
  void remove(uint64_t id);
  // Runs and forgets every registered action (what the watcher and the atexit hook do).
  void run_all();

 private:
  ExitRestorer() = default;
  void ensure_handlers_locked();
  void disarm_in_child();  // pthread_atfork child hook

  std::mutex mutex_;
  std::map<uint64_t, Action> actions_;
  uint64_t next_id_ = 1;
};

}  // namespace zeus
