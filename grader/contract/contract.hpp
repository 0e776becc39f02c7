// A lab's contract with its students, made from lab.toml: the C++ declarations of the functions its
// tasks name, with the types of its [signatures], and a table of them per signature, for one backend.
// A lab's bindings include the result (lab_contract.hpp, generated when the harness builds) instead of
// spelling the names and signatures again.
#pragma once
#include <filesystem>
#include <string>

#include "gpulab/manifest.hpp"

namespace gpulab {

// The header for `backend` ("cuda", "opencl"). Each declaration carries a #line naming lab.toml and
// the line of its signature or function, so a compiler's complaint points at the manifest. Throws
// ManifestError (naming the file) when the manifest declares no signatures for the backend.
// `header` is the file's own name for the lines after the declarations.
std::string contract_header(const Manifest& manifest, const std::string& backend,
                            const std::string& header = "lab_contract.hpp");

// Writes `text` to `path` unless it already holds exactly that (a rebuild of the generator then
// recompiles no bindings); creates the folder.
void write_if_changed(const std::filesystem::path& path, const std::string& text);

}  // namespace gpulab
