#include "gpulab/manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <toml++/toml.h>

#include "gpulab/metrics.hpp"

namespace gpulab {

const char* to_string(DeviceClass c) { return c == DeviceClass::gpu ? "gpu" : "cpu"; }

bool Case::runs_on(DeviceClass c) const {
  return devices.empty() || std::find(devices.begin(), devices.end(), c) != devices.end();
}

bool Case::applies_to(const std::string& task) const {
  return tasks.empty() || std::find(tasks.begin(), tasks.end(), task) != tasks.end();
}

std::vector<const Case*> Manifest::cases_for(DeviceClass c, const std::string& task) const {
  std::vector<const Case*> out;
  for (const auto& k : cases)
    if (k.runs_on(c) && k.applies_to(task)) out.push_back(&k);
  return out;
}

const Task* Manifest::find_task(const std::string& task_name) const {
  for (const auto& t : tasks)
    if (t.name == task_name) return &t;
  return nullptr;
}

std::vector<const Case*> Manifest::cases_for(DeviceClass c) const {
  std::vector<const Case*> out;
  for (const auto& k : cases)
    if (k.runs_on(c)) out.push_back(&k);
  return out;
}

std::vector<std::string> Manifest::files_with_extension(const std::string& backend,
                                                        const std::string& extension) const {
  std::vector<std::string> out;
  auto it = files.find(backend);
  if (it == files.end()) return out;
  for (const auto& f : it->second)
    if (f.size() >= extension.size() && f.compare(f.size() - extension.size(), extension.size(), extension) == 0)
      out.push_back(f);
  return out;
}

bool Manifest::has_hidden_cases() const {
  return std::any_of(cases.begin(), cases.end(), [](const Case& c) { return c.hidden; });
}

Manifest without_hidden_cases(Manifest manifest) {
  std::erase_if(manifest.cases, [](const Case& c) { return c.hidden; });
  return manifest;
}

namespace {

// Reads one manifest, turning every problem into a ManifestError that names file, line and fix.
class Reader {
 public:
  explicit Reader(std::filesystem::path path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const toml::node* node, const std::string& problem) const {
    const int line = node ? static_cast<int>(node->source().begin.line) : 0;
    throw ManifestError(line > 0 ? fmt::format("{}:{}: {}", path_.string(), line, problem)
                                 : fmt::format("{}: {}", path_.string(), problem));
  }

  template <typename T>
  T required(const toml::table& t, std::string_view key, std::string_view what) const {
    const toml::node* node = t.get(key);
    if (!node) fail(&t, fmt::format("missing key '{}' ({})", key, what));
    auto value = node->value<T>();
    if (!value) fail(node, fmt::format("'{}' must be {}", key, what));
    return *value;
  }

  template <typename T>
  T optional(const toml::table& t, std::string_view key, T fallback, std::string_view what) const {
    const toml::node* node = t.get(key);
    if (!node) return fallback;
    auto value = node->value<T>();
    if (!value) fail(node, fmt::format("'{}' must be {}", key, what));
    return *value;
  }

  std::vector<std::string> strings(const toml::node& node, std::string_view key) const {
    const toml::array* array = node.as_array();
    if (!array) fail(&node, fmt::format("'{}' must be an array of strings, like [\"a\", \"b\"]", key));
    std::vector<std::string> out;
    for (const auto& item : *array) {
      auto s = item.value<std::string>();
      if (!s) fail(&item, fmt::format("'{}' must hold only strings", key));
      out.push_back(*s);
    }
    return out;
  }

  DeviceClass device_class(const toml::node& node) const {
    auto s = node.value<std::string>();
    if (s == "gpu") return DeviceClass::gpu;
    if (s == "cpu") return DeviceClass::cpu;
    fail(&node, "a device class must be \"gpu\" or \"cpu\"");
  }

  nlohmann::json to_json(const toml::node& node) const {
    if (auto v = node.value_exact<std::int64_t>()) return *v;
    if (auto v = node.value_exact<double>()) return *v;
    if (auto v = node.value_exact<bool>()) return *v;
    if (auto v = node.value_exact<std::string>()) return *v;
    if (const auto* array = node.as_array()) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : *array) out.push_back(to_json(item));
      return out;
    }
    if (const auto* table = node.as_table()) {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [k, v] : *table) out[std::string(k.str())] = to_json(v);
      return out;
    }
    fail(&node, "dates and times are not supported in a case");
  }

  Threshold threshold(const toml::node& node) const {
    const toml::table* t = node.as_table();
    if (!t) fail(&node, "'threshold' must be a table like { metric = \"copy_fraction\", gpu = 0.5, cpu = 0.2 }");
    Threshold th;
    th.metric = required<std::string>(*t, "metric", "the name of a calibration ratio, e.g. \"copy_fraction\"");
    if (!find_metric(th.metric)) {
      std::vector<std::string> names;
      for (const auto& m : metrics()) names.push_back(m.name);
      fail(t->get("metric"), fmt::format("unknown metric '{}': use one of {}", th.metric, fmt::join(names, ", ")));
    }
    for (const auto& [key, value] : *t) {
      const std::string k(key.str());
      if (k == "metric") continue;
      static const std::vector<std::string> allowed{"gpu", "cpu", "cuda_gpu", "opencl_gpu", "opencl_cpu"};
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        fail(&value, fmt::format("unknown bound '{}' in threshold: use {}", k, fmt::join(allowed, ", ")));
      auto v = value.value<double>();
      if (!v || *v <= 0) fail(&value, fmt::format("'{}' must be a positive number (a ratio such as 0.5)", k));
      th.bounds[k] = *v;
    }
    return th;
  }

  Manifest read() const {
    toml::table root;
    try {
      root = toml::parse_file(path_.string());
    } catch (const toml::parse_error& e) {
      throw ManifestError(fmt::format("{}:{}:{}: TOML syntax error: {}", path_.string(), e.source().begin.line,
                                      e.source().begin.column, e.description()));
    }
    Manifest m;
    m.path = path_;
    m.id = path_.parent_path().filename().string();
    m.name = required<std::string>(root, "name", "the lab's short name, e.g. \"transpose\"");
    m.title = required<std::string>(root, "title", "a one-line title");
    m.timeout_s = optional<double>(root, "timeout_s", 60.0, "a number of seconds");
    m.warmup = static_cast<int>(optional<std::int64_t>(root, "warmup", 3, "a count of launches"));
    m.repeats = static_cast<int>(optional<std::int64_t>(root, "repeats", 15, "a count of launches"));
    if (m.timeout_s <= 0) fail(root.get("timeout_s"), "'timeout_s' must be positive");
    if (m.warmup < 1 || m.repeats < 10)
      fail(root.get("repeats"), "need warmup >= 1 and repeats >= 10 (the median of at least 10 timed launches)");

    if (const toml::node* forbidden = root.get("forbidden")) m.forbidden = strings(*forbidden, "forbidden");
    if (const toml::node* allow = root.get("allow")) m.allow = strings(*allow, "allow");
    if (const toml::node* headers = root.get("forbidden_headers"))
      m.forbidden_headers = strings(*headers, "forbidden_headers");
    const toml::table* files = root["files"].as_table();
    if (!files) fail(&root, "missing [files]: the student files of each backend, e.g. cuda = [\"transpose.cu\"]");
    for (const auto& [backend, list] : *files) {
      const std::string b(backend.str());
      if (b != "cuda" && b != "opencl") fail(&list, fmt::format("unknown backend '{}' in [files]: use cuda or opencl", b));
      m.files[b] = strings(list, b);
    }

    const toml::array* tasks = root["tasks"].as_array();
    if (!tasks || tasks->empty()) fail(&root, "no [[tasks]]: a lab needs at least one task");
    for (const auto& node : *tasks) {
      const toml::table* t = node.as_table();
      if (!t) fail(&node, "each [[tasks]] entry must be a table");
      Task task;
      task.name = required<std::string>(*t, "name", "a short task name, e.g. \"naive\"");
      task.function = required<std::string>(*t, "function", "the student function that implements the task");
      task.title = optional<std::string>(*t, "title", "", "a string");
      task.points = optional<double>(*t, "points", 0.0, "a number");
      task.bonus = optional<bool>(*t, "bonus", false, "true or false");
      if (const toml::node* th = t->get("threshold")) task.threshold = threshold(*th);
      if (m.find_task(task.name)) fail(t, fmt::format("task '{}' is defined twice", task.name));
      m.tasks.push_back(std::move(task));
    }

    const toml::array* cases = root["cases"].as_array();
    if (!cases || cases->empty()) fail(&root, "no [[cases]]: a lab needs at least one case");
    for (const auto& node : *cases) {
      const toml::table* t = node.as_table();
      if (!t) fail(&node, "each [[cases]] entry must be a table");
      Case c;
      c.name = required<std::string>(*t, "name", "a short case name, e.g. \"37x53\"");
      c.timing = optional<bool>(*t, "timing", false, "true or false");
      c.hidden = optional<bool>(*t, "hidden", false, "true or false");
      // Students are timed on the case they see, and their release keeps every timing case.
      if (c.hidden && c.timing)
        fail(t->get("hidden"), fmt::format("case '{}' is both hidden and a timing case: a timing case must be visible "
                                           "to students; remove 'hidden' or 'timing'", c.name));
      c.params = nlohmann::json::object();
      for (const auto& [key, value] : *t) {
        const std::string k(key.str());
        if (k == "devices") {
          const toml::array* list = value.as_array();
          if (!list) fail(&value, "'devices' must be an array, e.g. [\"gpu\"]");
          for (const auto& d : *list) c.devices.push_back(device_class(d));
        } else if (k == "tasks") {
          c.tasks = strings(value, "tasks");
        } else if (k != "name" && k != "timing" && k != "hidden") {
          c.params[k] = to_json(value);
        }
      }
      for (const auto& t : c.tasks)
        if (!m.find_task(t)) fail(&node, fmt::format("case '{}' names task '{}', which the lab does not have", c.name, t));
      m.cases.push_back(std::move(c));
    }
    // A task's speed is its one timing case's (tasks may have different ones, limited by `tasks`).
    for (DeviceClass dc : {DeviceClass::gpu, DeviceClass::cpu})
      for (const auto& task : m.tasks) {
        const auto selected = m.cases_for(dc, task.name);
        const auto timed = std::count_if(selected.begin(), selected.end(), [](const Case* c) { return c->timing; });
        if (timed > 1)
          fail(&root, fmt::format("more than one timing case for task '{}' on {} devices: mark one per task and device "
                                  "class", task.name, to_string(dc)));
      }
    return m;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace

Manifest load_manifest(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    throw ManifestError(fmt::format("{}: no such manifest (every lab folder needs a lab.toml)", path.string()));
  return Reader(path).read();
}

std::vector<Manifest> load_all_manifests(const std::filesystem::path& labs_root) {
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(labs_root))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "lab.toml")) folders.push_back(entry.path());
  std::sort(folders.begin(), folders.end());
  std::vector<Manifest> out;
  for (const auto& f : folders) out.push_back(load_manifest(f / "lab.toml"));
  return out;
}

}  // namespace gpulab
