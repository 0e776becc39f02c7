#include "gpulab/results.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "gpulab/metrics.hpp"

namespace gpulab {

namespace {
struct StatusName {
  Status status;
  const char* id;
  const char* text;
};
constexpr StatusName kStatusNames[] = {
    {Status::passed, "passed", "passed"},
    {Status::wrong_result, "wrong_result", "wrong result"},
    {Status::too_slow, "too_slow", "too slow"},
    {Status::not_implemented, "not_implemented", "not implemented"},
    {Status::compile_error, "compile_error", "compile error"},
    {Status::kernel_fault, "kernel_fault", "kernel fault"},
    {Status::timeout, "timeout", "timed out"},
    {Status::crashed, "crashed", "crashed"},
    {Status::error, "error", "error"},
    {Status::not_run, "not_run", "not run"},
    {Status::rejected, "rejected", "rejected"},
    {Status::buffer_violation, "buffer_violation", "buffer violation"},
    {Status::impossible_speed, "impossible_speed", "impossible speed"},
    {Status::unsafe_code, "unsafe_code", "unsafe code"},
};

template <typename T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <typename T>
void get_optional(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  if (j.contains(key) && !j[key].is_null()) v = j[key].get<T>();
}
}  // namespace

const char* to_string(Status s) {
  for (const auto& n : kStatusNames)
    if (n.status == s) return n.id;
  return "unknown";
}
const char* describe(Status s) {
  for (const auto& n : kStatusNames)
    if (n.status == s) return n.text;
  return "unknown";
}
Status status_from_string(const std::string& s) {
  for (const auto& n : kStatusNames)
    if (s == n.id) return n.status;
  throw std::invalid_argument("unknown task status '" + s + "'");
}

std::optional<double> CaseResult::rate() const {
  if (!timing || timing->median <= 0 || work <= 0) return std::nullopt;
  return work / (timing->median * 1e-3) / 1e9;
}

void to_json(nlohmann::json& j, const TimingSummary& t) {
  j = {{"median_ms", t.median}, {"min_ms", t.min}, {"max_ms", t.max}, {"samples", t.samples}};
}
void from_json(const nlohmann::json& j, TimingSummary& t) {
  t.median = j.at("median_ms");
  t.min = j.at("min_ms");
  t.max = j.at("max_ms");
  t.samples = j.at("samples");
}

void to_json(nlohmann::json& j, const CaseResult& c) {
  j = {{"name", c.name},       {"passed", c.passed},   {"hidden", c.hidden},
       {"message", c.message}, {"details", c.details}, {"work", c.work}};
  put_optional(j, "timing", c.timing);
  put_optional(j, "rate", c.rate());
  if (!c.pictures.empty()) j["pictures"] = c.pictures;
  if (!c.finding.empty()) j["finding"] = c.finding;
  put_optional(j, "baseline_rate", c.baseline_rate);
  if (c.borderline) j["borderline"] = true;
  if (c.timed_s > 0) j["timed_s"] = c.timed_s;
  if (c.prepare_s > 0) j["prepare_s"] = c.prepare_s;
  if (c.launches_s > 0) j["launches_s"] = c.launches_s;
  if (c.checks_s > 0) j["checks_s"] = c.checks_s;
  if (c.watch_s > 0) j["watch_s"] = c.watch_s;
  if (c.buffers_s > 0) j["buffers_s"] = c.buffers_s;
  if (c.seconds > 0) j["seconds"] = c.seconds;
  put_optional(j, "telemetry", c.telemetry);
}
void from_json(const nlohmann::json& j, CaseResult& c) {
  c.name = j.at("name");
  c.passed = j.at("passed");
  c.hidden = j.value("hidden", false);
  c.message = j.value("message", "");
  c.details = j.value("details", "");
  c.work = j.value("work", 0.0);
  if (j.contains("pictures")) c.pictures = j["pictures"].get<std::vector<std::string>>();
  get_optional(j, "timing", c.timing);
  c.finding = j.value("finding", "");
  get_optional(j, "baseline_rate", c.baseline_rate);
  c.borderline = j.value("borderline", false);
  c.timed_s = j.value("timed_s", 0.0);
  c.prepare_s = j.value("prepare_s", 0.0);
  c.launches_s = j.value("launches_s", 0.0);
  c.checks_s = j.value("checks_s", 0.0);
  c.watch_s = j.value("watch_s", 0.0);
  c.buffers_s = j.value("buffers_s", 0.0);
  c.seconds = j.value("seconds", 0.0);
  get_optional(j, "telemetry", c.telemetry);
}

bool tier_reached(const TaskResult& t) { return t.tier_threshold && t.ratio && *t.ratio >= *t.tier_threshold; }

double points_earned(const TaskResult& t, double task_points) {
  if (t.status != Status::passed) return 0;
  return task_points + (tier_reached(t) ? t.tier_points : 0);
}

void to_json(nlohmann::json& j, const TaskResult& t) {
  j = {{"task", t.task},
       {"function", t.function},
       {"status", to_string(t.status)},
       {"message", t.message},
       {"details", t.details},
       {"cases_passed", t.cases_passed},
       {"cases_total", t.cases_total},
       {"points", t.points},
       {"max_points", t.max_points},
       {"bonus", t.bonus},
       {"ratios", t.ratios},
       {"metric", t.metric},
       {"cases", t.cases}};
  put_optional(j, "time_ms", t.time_ms);
  put_optional(j, "rate", t.rate);
  put_optional(j, "ratio", t.ratio);
  put_optional(j, "threshold", t.threshold);
  if (t.tier_threshold) {
    j["tier_threshold"] = *t.tier_threshold;
    j["tier_points"] = t.tier_points;
    j["tier_reached"] = tier_reached(t);
  }
  if (!t.finding.empty()) j["finding"] = t.finding;
  if (t.borderline) j["borderline"] = true;
  if (t.failed_in_hidden_case) j["hidden_case"] = true;
  if (t.cases_complete) j["cases_complete"] = true;
  put_optional(j, "telemetry", t.telemetry);
  // The words a reader sees, so that renderers of the JSON (scripts/grade/summary.py) only render.
  j["status_label"] = describe(t.status);
  if (const Metric* m = find_metric(t.metric)) {
    j["metric_label"] =
        m->fraction ? fmt::format("fraction {}", m->against) : fmt::format("multiple of {}", m->against);
    j["metric_unit"] = m->fraction ? "%" : "×";
  }
}
void from_json(const nlohmann::json& j, TaskResult& t) {
  t.task = j.at("task");
  t.function = j.value("function", "");
  t.status = status_from_string(j.at("status"));
  t.message = j.value("message", "");
  t.details = j.value("details", "");
  t.cases_passed = j.value("cases_passed", 0);
  t.cases_total = j.value("cases_total", 0);
  t.points = j.value("points", 0.0);
  t.max_points = j.value("max_points", 0.0);
  t.bonus = j.value("bonus", false);
  if (j.contains("cases")) t.cases = j["cases"].get<std::vector<CaseResult>>();
  get_optional(j, "time_ms", t.time_ms);
  get_optional(j, "rate", t.rate);
  if (j.contains("ratios")) t.ratios = j["ratios"].get<std::map<std::string, double>>();
  t.metric = j.value("metric", "");
  get_optional(j, "ratio", t.ratio);
  get_optional(j, "threshold", t.threshold);
  get_optional(j, "tier_threshold", t.tier_threshold);
  t.tier_points = j.value("tier_points", 0.0);
  t.finding = j.value("finding", "");
  t.borderline = j.value("borderline", false);
  t.failed_in_hidden_case = j.value("hidden_case", false);
  t.cases_complete = j.value("cases_complete", false);
  get_optional(j, "telemetry", t.telemetry);
}

}  // namespace gpulab
