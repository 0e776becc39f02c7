#include "sha256.hpp"

#include <openssl/evp.h>

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <stdexcept>

namespace gpulab::cli {

namespace fs = std::filesystem;

struct Sha256::State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  if (!state_->ctx || EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("cannot start a SHA-256 digest (OpenSSL)");
}
Sha256::~Sha256() = default;

Sha256& Sha256::update(const void* data, std::size_t size) {
  EVP_DigestUpdate(state_->ctx, data, size);
  return *this;
}

Sha256& Sha256::update_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {} to hash it", file.string()));
  std::array<char, 1 << 16> buffer;
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0)
    update(buffer.data(), static_cast<std::size_t>(in.gcount()));
  return *this;
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(state_->ctx, digest, &size);
  std::string out;
  for (unsigned i = 0; i < size; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

}  // namespace gpulab::cli
