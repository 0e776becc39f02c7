#include "lab_run.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include "gpulab/text.hpp"

namespace gpulab::cli {

using nlohmann::json;

PhaseTimes& operator+=(PhaseTimes& total, const PhaseTimes& p) {
  total.compile_s += p.compile_s, total.wait_for_gpu_s += p.wait_for_gpu_s, total.run_s += p.run_s;
  total.hidden_s += p.hidden_s, total.calibration_s += p.calibration_s, total.correctness_s += p.correctness_s;
  total.timing_s += p.timing_s, total.timed_launches_s += p.timed_launches_s, total.sanitize_s += p.sanitize_s;
  total.launches_s += p.launches_s, total.checks_s += p.checks_s;
  return total;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void to_json(json& j, const PhaseTimes& p) {
  auto ms = [](double s) { return std::round(s * 1000) / 1000; };
  j = {{"compile_s", ms(p.compile_s)},
       {"wait_for_gpu_s", ms(p.wait_for_gpu_s)},
       {"run_s", ms(p.run_s)},
       {"hidden_s", ms(p.hidden_s)},
       {"calibration_s", ms(p.calibration_s)},
       {"correctness_s", ms(p.correctness_s)},
       {"timing_s", ms(p.timing_s)},
       {"timed_launches_s", ms(p.timed_launches_s)},
       {"launches_s", ms(p.launches_s)},
       {"checks_s", ms(p.checks_s)},
       {"sanitize_s", ms(p.sanitize_s)}};
}

void from_json(const json& j, PhaseTimes& p) {
  p.compile_s = j.value("compile_s", 0.0), p.wait_for_gpu_s = j.value("wait_for_gpu_s", 0.0);
  p.run_s = j.value("run_s", 0.0), p.hidden_s = j.value("hidden_s", 0.0);
  p.calibration_s = j.value("calibration_s", 0.0), p.correctness_s = j.value("correctness_s", 0.0);
  p.timing_s = j.value("timing_s", 0.0), p.timed_launches_s = j.value("timed_launches_s", 0.0);
  p.sanitize_s = j.value("sanitize_s", 0.0);
  p.launches_s = j.value("launches_s", 0.0), p.checks_s = j.value("checks_s", 0.0);
}

double LabRun::points() const {
  double p = 0;
  for (const auto& t : tasks) p += t.points;
  return p;
}

double LabRun::max_points() const {
  double p = 0;
  for (const auto& t : tasks)
    if (!t.bonus) p += t.max_points;
  return p;
}

bool lab_named(const std::string& id, const std::string& name, const std::string& wanted) {
  if (wanted == id || wanted == name) return true;
  const std::string number = id.substr(0, id.find('-'));
  return wanted == number || (number.size() > 1 && number[0] == '0' && wanted == number.substr(1));
}

void make_printable(json& value) {
  if (value.is_string()) {
    value = printable(value.get<std::string>());
  } else if (value.is_structured()) {
    json cleaned = value.is_object() ? json::object() : json::array();
    for (auto it = value.begin(); it != value.end(); ++it) {
      json item = it.value();
      make_printable(item);
      if (value.is_object())
        cleaned[printable(it.key())] = std::move(item);
      else
        cleaned.push_back(std::move(item));
    }
    value = std::move(cleaned);
  }
}

void make_printable(LabRun& lab) {
  const auto clean = [](std::string& s) { s = printable(s); };
  for (auto& t : lab.tasks) {
    for (std::string* s : {&t.task, &t.function, &t.message, &t.details, &t.metric, &t.finding}) clean(*s);
    for (auto& c : t.cases)
      for (std::string* s : {&c.name, &c.message, &c.details, &c.finding}) clean(*s);
  }
  for (std::string* s : {&lab.output, &lab.grader_failure, &lab.calibration_doubt}) clean(*s);
  for (auto& w : lab.warnings) clean(w);
  make_printable(lab.device);
  for (auto& p : lab.profile) {
    clean(p.note);
    clean(p.case_name);
    for (auto& k : p.kernels) {
      clean(k.kernel);
      for (auto& c : k.counters)
        for (std::string* s : {&c.label, &c.value, &c.reading}) clean(*s);
    }
  }
}

LabRun lab_of(const Manifest& m, const std::string& backend) {
  LabRun lab;
  lab.id = m.id, lab.name = m.name, lab.title = m.title, lab.backend = backend;
  return lab;
}

void to_json(json& j, const CounterReading& c) {
  j = {{"counter", c.counter}, {"label", c.label}, {"value", c.value}, {"reading", c.reading}, {"concern", c.concern}};
}
void from_json(const json& j, CounterReading& c) {
  c.counter = j.value("counter", "");
  c.label = j.value("label", "");
  c.value = j.value("value", "");
  c.reading = j.value("reading", "");
  c.concern = j.value("concern", false);
}
void to_json(json& j, const KernelProfile& k) {
  j = {{"kernel", k.kernel}, {"launches", k.launches}, {"time_ms", k.time_ms}, {"counters", k.counters}};
}
void from_json(const json& j, KernelProfile& k) {
  k.kernel = j.value("kernel", "");
  k.launches = j.value("launches", 0);
  k.time_ms = j.value("time_ms", 0.0);
  k.counters = j.value("counters", std::vector<CounterReading>{});
}
void to_json(json& j, const TaskProfile& t) {
  j = {{"task", t.task}, {"case", t.case_name}, {"kernels", t.kernels}, {"note", t.note}};
}
void from_json(const json& j, TaskProfile& t) {
  t.task = j.value("task", "");
  t.case_name = j.value("case", "");
  t.kernels = j.value("kernels", std::vector<KernelProfile>{});
  t.note = j.value("note", "");
}

void to_json(json& j, const LabRun& lab) {
  j = {{"id", lab.id},         {"name", lab.name},   {"title", lab.title},   {"backend", lab.backend},
       {"device", lab.device}, {"tasks", lab.tasks}, {"output", lab.output}, {"processes", lab.processes}};
  if (!lab.pictures_dir.empty()) j["pictures"] = lab.pictures_dir;
  if (!lab.warnings.empty()) j["warnings"] = lab.warnings;
  if (!lab.profile.empty()) j["profile"] = lab.profile;
  if (!lab.reused.empty()) j["reused"] = lab.reused;
  if (!lab.calibration.rates.empty()) {
    j["calibration"] = calibration_to_json(lab.calibration);
    j["labels"] = calibration_labels(lab.calibration);  // so renderers of the JSON only render
  }
}

void from_json(const json& j, LabRun& lab) {
  lab.id = j.value("id", "");
  lab.name = j.value("name", "");
  lab.title = j.value("title", "");
  lab.backend = j.value("backend", "");
  lab.device = j.value("device", json());
  if (j.contains("calibration")) try {
      lab.calibration = calibration_from_json(j["calibration"]);
    } catch (const std::invalid_argument&) {  // a record written by an older grader: the rates alone
      lab.calibration.unit = j["calibration"].value("unit", "");
      lab.calibration.library = j["calibration"].value("library", "");
      lab.calibration.rates = j["calibration"].value("rates", std::map<std::string, double>{});
    }
  lab.tasks = j.value("tasks", std::vector<TaskResult>{});
  lab.output = j.value("output", "");
  lab.processes = j.value("processes", 0);
  lab.pictures_dir = j.value("pictures", "");
  lab.warnings = j.value("warnings", std::vector<std::string>{});
  lab.profile = j.value("profile", std::vector<TaskProfile>{});
  lab.reused = j.value("reused", "");
  if (j.contains("phases")) lab.phases = j["phases"].get<PhaseTimes>();
}

}  // namespace gpulab::cli
