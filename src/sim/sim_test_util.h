// A small synthetic trace whose answers can be checked by hand (used by the sim tests).
//
// Workload "toy" (max_epochs 10, b0 = 16, eta 0.5), GPU limits 100 and 200 W; another workload
// in the power trace has a 300 W row, so MAXPOWER = 300 W and the epoch cost is
// (0.5 * P + 150) * T:
//   b=8:  100 W: 20 s, 90 W  -> 3900 J/epoch   200 W: 16 s, 120 W -> 3360 J/epoch  paths {12, 12}
//   b=16: 100 W: 12 s, 95 W  -> 2370 J/epoch   200 W: 10 s, 150 W -> 2250 J/epoch  paths {4, 4}
//   b=32: 100 W:  6 s, 100 W -> 1200 J/epoch   200 W:  5 s, 200 W -> 1250 J/epoch  paths `paths32`
// (b=8 never reaches the target within 10 epochs.)
#pragma once

#include <string>

#include "zeus/sim/sim_trace.h"

namespace zeus::sim::testing {

inline Workload toy_workload() { return Workload{"toy", "toy", "net", "sgd", 0.5, 10, 16}; }

inline std::string toy_train_csv(const std::string& paths32 = "2,2") {
  std::string csv = "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n";
  csv += "toy,net,8,sgd,0.1,1,0.5,12\ntoy,net,8,sgd,0.1,2,0.5,12\n";
  csv += "toy,net,16,sgd,0.1,1,0.5,4\ntoy,net,16,sgd,0.1,2,0.5,4\n";
  csv += "toy,net,16,sgd,0.1,1,0.4,2\n";  // another target metric: ignored
  int run = 1;
  std::size_t start = 0;
  while (start <= paths32.size()) {
    std::size_t comma = paths32.find(',', start);
    if (comma == std::string::npos) comma = paths32.size();
    csv += "toy,net,32,sgd,0.1," + std::to_string(run++) + ",0.5," + paths32.substr(start, comma - start) + "\n";
    start = comma + 1;
  }
  csv += "toy,net,64,sgd,0.1,1,0.5,1\n";  // no power rows: not in the joined trace
  return csv;
}

inline std::string toy_power_csv() {
  return "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,average_power\n"
         "toy,net,8,sgd,100,20,90\ntoy,net,8,sgd,200,16,120\n"
         "toy,net,16,sgd,100,12,95\ntoy,net,16,sgd,200,10,150\n"
         "toy,net,32,sgd,100,6,100\ntoy,net,32,sgd,200,5,200\n"
         "other,net,8,sgd,300,1,1\n";
}

inline WorkloadTrace toy_trace(const std::string& paths32 = "2,2") {
  auto train = parse_train_trace(toy_train_csv(paths32), "train.csv");
  auto power = parse_power_trace(toy_power_csv(), "power.csv");
  auto trace = join_trace(*train, *power, toy_workload(), "toy-gpu");
  return *trace;
}

}  // namespace zeus::sim::testing
