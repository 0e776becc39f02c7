#include "kernel_map.hpp"

#include <deque>

#include "files.hpp"

namespace gpulab::cli {

namespace fs = std::filesystem;

std::map<std::string, std::string> read_lab_sources(const Manifest& manifest, const std::string& backend,
                                                    const fs::path& student_dir) {
  std::map<std::string, std::string> out;
  const auto files = manifest.files.find(backend);
  if (files == manifest.files.end()) return out;
  for (const auto& f : files->second) try {
      if (fs::is_regular_file(student_dir / f)) out[f] = read_text_or_throw(student_dir / f);
    } catch (const std::exception&) {
      // Left out: the build reports a file it cannot read.
    }
  return out;
}

namespace {

struct Function {
  FunctionSummary summary;
  bool opencl_device = false;  // in a .cl file: reached by names from .cl code and by literals from host code
  bool host_only = false;      // in a .cpp file: OpenCL host code, whose words say nothing about the kernels
};

class Reacher {
 public:
  explicit Reacher(const std::map<std::string, std::string>& sources) {
    for (const auto& [file, text] : sources) {
      const bool cl = fs::path(file).extension() == ".cl", host = fs::path(file).extension() == ".cpp";
      SourceSummary s = summarize_functions(text);
      if (!host) elsewhere_ |= s.shared_or_barrier_elsewhere;
      for (auto& f : s.functions) functions_.push_back({std::move(f), cl, host});
    }
  }
  bool elsewhere() const { return elsewhere_; }

  TaskReach reach(const std::string& launch) const {
    std::vector<bool> seen(functions_.size(), false);
    std::deque<std::size_t> queue;
    auto visit = [&](std::size_t i) {
      if (!seen[i]) seen[i] = true, queue.push_back(i);
    };
    for (std::size_t i = 0; i < functions_.size(); ++i)
      if (!functions_[i].opencl_device && functions_[i].summary.name == launch) visit(i);
    TaskReach r;
    r.found = !queue.empty();
    while (!queue.empty()) {
      const Function& f = functions_[queue.front()];
      queue.pop_front();
      r.functions.insert(f.summary.name);
      r.kernels_known |= f.summary.kernel;
      r.shared_or_barrier |= f.summary.shared_or_barrier && !f.host_only;
      for (std::size_t i = 0; i < functions_.size(); ++i) {
        const Function& g = functions_[i];
        if (g.opencl_device == f.opencl_device && f.summary.names.count(g.summary.name)) visit(i);
        if (!f.opencl_device && g.opencl_device && g.summary.kernel && named_by(f.summary.literals, g.summary.name))
          visit(i);
      }
    }
    r.shared_or_barrier |= elsewhere_;
    return r;
  }

 private:
  // A kernel's name among the literals, or (a name built at run time) the start of it, when no kernel
  // has that literal as its whole name.
  bool named_by(const std::set<std::string>& literals, const std::string& kernel) const {
    for (const auto& l : literals) {
      if (l == kernel) return true;
      if (kernel.rfind(l, 0) == 0 && !is_kernel_name(l)) return true;
    }
    return false;
  }
  bool is_kernel_name(const std::string& name) const {
    for (const auto& f : functions_)
      if (f.opencl_device && f.summary.kernel && f.summary.name == name) return true;
    return false;
  }

  std::vector<Function> functions_;
  bool elsewhere_ = false;
};

}  // namespace

KernelMap map_kernels(const Manifest& manifest, const std::map<std::string, std::string>& sources) {
  const Reacher reacher(sources);
  KernelMap map;
  map.shared_or_barrier_elsewhere = reacher.elsewhere();
  for (const auto& t : manifest.tasks) map.tasks[t.name] = reacher.reach(t.function);
  return map;
}

}  // namespace gpulab::cli
