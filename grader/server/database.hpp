// The course server's database connection (store.cpp's only way to it): SQLite in the server's folder
// (SQLiteCpp), or PostgreSQL for a server whose workers span machines (libpqxx, where it is built).
// Queries take $1, $2 ... parameters, passed as text, and return every cell as text or null, so one
// SQL text serves both; `postgresql()` says which dialect a query may need.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpulab::server {

struct Cell {
  std::optional<std::string> text;  // empty: NULL
  bool null() const { return !text; }
  std::string str() const { return text.value_or(""); }
  long long integer() const { return text ? std::stoll(*text) : 0; }
  double number() const { return text ? std::stod(*text) : 0; }
};
using Row = std::vector<Cell>;

class Connection {
 public:
  virtual ~Connection() = default;
  virtual bool postgresql() const = 0;
  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  virtual void script(const std::string& sql) = 0;  // several statements, no parameters
  virtual std::vector<Row> query(const std::string& sql, const std::vector<std::string>& params = {}) = 0;
};

// DIR/gpulab.sqlite, created when missing.
std::unique_ptr<Connection> open_sqlite(const std::filesystem::path& file);
// A postgresql:// URL (libpq's connection string); throws, naming the problem, when it cannot connect or
// when this build has no PostgreSQL client.
std::unique_ptr<Connection> open_postgresql(const std::string& url);

}  // namespace gpulab::server
