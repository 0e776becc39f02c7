#include "submit.hpp"

#if GPULAB_HAVE_HTTPLIB
#include <httplib.h>
#endif
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>

#include "commands.hpp"
#include "files.hpp"
#include "toolchain.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string trimmed_text(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

// `server = URL` and `token = T` from the settings file, where the options did not give them.
void read_settings(const fs::path& file, SubmitOptions& o) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos || trimmed_text(line).rfind('#', 0) == 0) continue;
    const std::string key = trimmed_text(line.substr(0, eq)), value = trimmed_text(line.substr(eq + 1));
    if (key == "server" && o.server.empty()) o.server = value;
    if (key == "token" && o.token.empty()) o.token = value;
  }
}

#if GPULAB_HAVE_HTTPLIB

std::string error_of(const httplib::Result& r) {
  if (!r) return fmt::format("no answer from the server ({})", httplib::to_string(r.error()));
  const json body = json::parse(r->body, nullptr, false);
  if (body.is_object() && body.contains("error")) return body["error"].get<std::string>();
  return fmt::format("the server answered HTTP {}", r->status);
}

// The lab's student files that exist in its folder (the server refuses any other name).
httplib::MultipartFormDataItems upload_of(const Manifest& m, const fs::path& lab_dir) {
  httplib::MultipartFormDataItems items{{"lab", m.id, "", ""}};
  std::set<std::string> names;
  for (const auto& [backend, files] : m.files) names.insert(files.begin(), files.end());
  for (const auto& name : names)
    if (fs::is_regular_file(lab_dir / name))
      items.push_back({"file", read_text_or_throw(lab_dir / name), name, "application/octet-stream"});
  if (items.size() == 1)
    throw std::invalid_argument(
        fmt::format("{} holds none of the lab's files ({})", lab_dir.string(), fmt::join(names, ", ")));
  return items;
}

std::string when(const json& t) {
  if (!t.is_number()) return "-";
  const auto seconds = static_cast<std::time_t>(t.get<double>());
  std::tm tm{};
  localtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

int list_submissions(httplib::Client& client) {
  const auto r = client.Get("/api/submissions");
  if (!r || r->status != 200) {
    fmt::print(stderr, "gpulab submit: {}\n", error_of(r));
    return 2;
  }
  const json body = json::parse(r->body);
  fmt::print("submissions of {}:\n", body.value("student", ""));
  fmt::print("  {:>5}  {:<16} {:<19}  {:<13} {}\n", "id", "lab", "submitted", "state", "score");
  for (const auto& s : body["submissions"]) {
    std::string score = "-";
    if (s.contains("result"))
      score = fmt::format("{:g} / {:g}{}", s["result"].value("score", 0.0), s["result"].value("max_score", 0.0),
                          s["result"].value("passed", false) ? "" : " (not passed)");
    fmt::print("  {:>5}  {:<16} {:<19}  {:<13} {}\n", s.value("id", 0), s.value("lab", ""), when(s["submitted_at"]),
               s.value("state", ""), score);
  }
  return 0;
}

// Polls until the submission is graded or cannot be; says each change of place or state.
int follow(httplib::Client& client, long long id, double poll_s) {
  std::string said;
  for (;;) {
    const auto r = client.Get(fmt::format("/api/submissions/{}", id));
    if (!r || r->status != 200) {
      fmt::print(stderr, "gpulab submit: {} (submission {} stays queued on the server: `make submit STATUS=1`)\n",
                 error_of(r), id);
      return 2;
    }
    const json s = json::parse(r->body);
    const std::string state = s.value("state", "");
    if (state == "graded") {
      fmt::print("\n{}", s["result"].value("report", ""));
      return s["result"].value("passed", false) ? 0 : 1;
    }
    if (state == "not_gradable") {
      fmt::print(stderr, "gpulab submit: submission {}: {}\n", id, s.value("message", ""));
      return 2;
    }
    const std::string now = state == "queued" ? fmt::format("queued: position {}", s.value("position", 0))
                                              : fmt::format("being graded (since {})", when(s["started_at"]));
    if (now != said) fmt::print("gpulab submit: submission {} {}\n", id, now), std::fflush(stdout);
    said = now;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_s));
  }
}

#endif

}  // namespace

int submit(SubmitOptions o) {
  const Toolchain tc = Toolchain::load(own_directory());
  read_settings(tc.repo / kSubmitSettingsFile, o);
  if (o.server.empty() || o.token.empty())
    throw std::invalid_argument(fmt::format(
        "no server or no token: give SERVER=URL TOKEN=T (gpulab submit --server --token), or write them in {} as "
        "`server = URL` and `token = T`",
        (tc.repo / kSubmitSettingsFile).string()));
#if GPULAB_HAVE_HTTPLIB
  httplib::Client client(o.server);
  client.set_bearer_token_auth(o.token);
  client.set_connection_timeout(10);
  client.set_read_timeout(60);
  if (o.status) return list_submissions(client);
  if (o.lab.empty()) throw std::invalid_argument("name the lab to submit: LAB=x (gpulab submit --lab x)");
  const Manifest m = select_labs(tc, {o.lab}).front();
  fs::path source = fs::absolute(o.source.empty() ? tc.repo / "labs" : o.source).lexically_normal();
  if (!fs::is_directory(source / m.id) && fs::is_directory(source / "labs" / m.id)) source /= "labs";
  const auto r = client.Post("/api/submissions", upload_of(m, source / m.id));
  if (!r || r->status != 202) {
    fmt::print(stderr, "gpulab submit: not submitted: {}\n", error_of(r));
    return 2;
  }
  const json accepted = json::parse(r->body);
  const long long id = accepted.value("id", 0LL);
  fmt::print("gpulab submit: {} sent to {} as submission {}\n", m.id, o.server, id);
  return follow(client, id, o.poll_s);
#else
  fmt::print(stderr,
             "gpulab submit: this build cannot reach a server: install libcpp-httplib-dev "
             "(scripts/install-deps.sh check), then configure the build again (rm build/CMakeCache.txt; make check)\n");
  return 2;
#endif
}

}  // namespace gpulab::cli
