#include "student_record.hpp"

namespace gpulab::cli {

using nlohmann::json;

void to_json(json& j, const ReferenceResult& r) {
  j = {{"status", r.status}, {"ratios", r.ratios}};
  if (r.ratio) j["ratio"] = *r.ratio, j["metric"] = r.metric;
}

void from_json(const json& j, ReferenceResult& r) {
  r.status = j.value("status", "");
  r.ratios = j.value("ratios", std::map<std::string, double>{});
  r.metric = j.value("metric", "");
  if (j.contains("ratio") && j["ratio"].is_number()) r.ratio = j["ratio"].get<double>();
}

namespace {

json lab_json(const GradedLab& lab) {
  json l = lab.run;
  for (auto& t : l["tasks"])
    if (auto it = lab.references.find(t.value("task", "")); it != lab.references.end()) t["reference"] = it->second;
  l["score"] = lab.run.points();
  l["max_score"] = lab.run.max_points();
  l["phases"] = lab.run.phases;
  return l;
}

GradedLab lab_from_json(const json& l) {
  GradedLab lab{l.get<LabRun>(), {}};
  for (const auto& t : l.value("tasks", json::array()))
    if (t.contains("reference")) lab.references[t.value("task", "")] = t["reference"].get<ReferenceResult>();
  return lab;
}

}  // namespace

void to_json(json& j, const StudentRecord& r) {
  j = {{"student", r.student},           {"submission", r.submission}, {"grader_version", r.grader_version},
       {"content_hash", r.content_hash}, {"error", r.error},           {"notes", r.notes},
       {"labs", json::array()},          {"max_score", r.max_score}};
  if (!r.history.empty()) j["history"] = r.history;
  if (!r.node.empty()) j["node"] = r.node;
  if (!r.slurm_job.empty()) j["slurm_job"] = r.slurm_job;
  if (!r.submission_stamp.empty()) j["submission_stamp"] = r.submission_stamp;
  if (r.grader_error) {  // the grader failed: no points at all, only why
    j["score"] = nullptr;
    j["grader_error"] = true;
    return;
  }
  j.update({{"selection", r.selection},
            {"backend", r.backend},
            {"isolation", r.isolation},
            {"seed", r.seed},
            {"calibration", r.calibration},
            {"score", r.score.value_or(0.0)},
            {"graded_at", r.graded_at},
            {"duration_s", r.duration_s}});
  for (const auto& lab : r.labs) j["labs"].push_back(lab_json(lab));
  if (!r.gpu.empty()) j["gpu"] = r.gpu;
  if (r.phases) j["phases"] = *r.phases;
}

void from_json(const json& j, StudentRecord& r) {
  r.student = j.value("student", "");
  r.submission = j.value("submission", "");
  r.grader_version = j.value("grader_version", "");
  r.selection = j.value("selection", "");
  r.backend = j.value("backend", "");
  r.isolation = j.value("isolation", "");
  r.error = j.value("error", "");
  r.grader_error = j.value("grader_error", false);
  r.notes = j.value("notes", std::vector<std::string>{});
  for (const auto& l : j.value("labs", json::array())) r.labs.push_back(lab_from_json(l));
  if (j.contains("score") && j["score"].is_number()) r.score = j["score"].get<double>();
  r.max_score = j.value("max_score", 0.0);
  r.seed = j.value("seed", std::uint64_t{0});
  r.calibration = j.value("calibration", "");
  r.gpu = j.value("gpu", "");
  r.node = j.value("node", "");
  r.slurm_job = j.value("slurm_job", "");
  r.submission_stamp = j.value("submission_stamp", "");
  r.content_hash = j.value("content_hash", "");
  r.graded_at = j.value("graded_at", "");
  r.duration_s = j.value("duration_s", 0.0);
  if (j.contains("phases")) r.phases = j["phases"].get<PhaseTimes>();
  r.history = j.value("history", std::vector<json>{});
}

}  // namespace gpulab::cli
