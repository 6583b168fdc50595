// The field lists behind knee's one JSON reader and writer (conventions 15: one reader per
// format). Every document type T (document.h) has one function
//
//   template <class Io> void describe(Io& io, T& x) { io("key", x.member); ... }
//
// that names its fields once. Writer turns the list into a JSON object, Reader fills T from
// one, so to_json and from_json cannot drift apart, and from_json(to_json(x)) == x.
//
// Field kinds:
//   io("k", v)            required: written always; reading fails when missing or mistyped
//   io.nullable("k", v)   std::optional: written as null when empty; missing or null reads empty
//   io.omittable("k", v)  std::optional: left out when empty; missing or null reads empty
//   io.omit_empty("k", v) std::vector: left out when empty; missing or null reads empty
//   io.flatten(v)         a nested struct whose fields live in this same object
//   io.flatten_if("k", v) std::optional nested struct in this object, engaged when key "k" is
//                         present
//   io.maybe_nan("k", v)  double where NaN means unknown (core::kUnknown): written as null, null
//                         reads NaN; missing fails as for io()
// Values: bool, int, int64_t, uint64_t, double (finite; use nullable optional<double> where a
// figure may be unknown), std::string, enums with a to_text/from_text pair, scalars with a
// to_json_value/from_json_value pair, std::vector, std::map with string keys, std::optional
// elements (null), and any type with a describe().
//
// Reading never throws: the first problem is kept as "<path>: <what>" (path like
// "levels[3].latency_ns.p99") and later fields are skipped.
// Thread-safety: a Writer or Reader belongs to one call.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace knee::report::io {

class Writer;
class Reader;

template <class T>
concept Described = requires(Writer& w, T& t) {
  describe(w, t);
};

// Scalars of their own opt in with `nlohmann::json to_json_value(const T&)` and
// `bool from_json_value(const nlohmann::json&, T&)` found by ADL.
template <class T>
concept CustomValue = requires(const T& c, T& m, const nlohmann::json& j) {
  { to_json_value(c) } -> std::same_as<nlohmann::json>;
  { from_json_value(j, m) } -> std::same_as<bool>;
};

// Enums opt in with `std::string_view to_text(E)` and `bool from_text(std::string_view, E&)`
// found by ADL.
template <class T>
concept TextEnum = std::is_enum_v<T> && requires(T e, std::string_view s) {
  {to_text(e)};
  { from_text(s, e) } -> std::same_as<bool>;
};

// ---- values to JSON ----

template <class T>
nlohmann::json to_value(const T& v);

class Writer {
 public:
  explicit Writer(nlohmann::json& out) : out_(out) {
    if (!out_.is_object()) out_ = nlohmann::json::object();
  }
  template <class T>
  void operator()(const char* key, const T& v) {
    out_[key] = to_value(v);
  }
  template <class T>
  void nullable(const char* key, const std::optional<T>& v) {
    out_[key] = v ? to_value(*v) : nlohmann::json();
  }
  template <class T>
  void omittable(const char* key, const std::optional<T>& v) {
    if (v) out_[key] = to_value(*v);
  }
  template <class T>
  void omit_empty(const char* key, const std::vector<T>& v) {
    if (!v.empty()) out_[key] = to_value(v);
  }
  template <class T>
  void flatten(const T& v) {
    describe(*this, const_cast<T&>(v));  // the writer only reads
  }
  template <class T>
  void flatten_if(const char*, const std::optional<T>& v) {
    if (v) flatten(*v);
  }
  void maybe_nan(const char* key, const double& v) {
    out_[key] = std::isnan(v) ? nlohmann::json() : nlohmann::json(v);
  }
  // Lets a describe() branch on the direction where a field depends on another (rarely needed).
  static constexpr bool kReading = false;

 private:
  nlohmann::json& out_;
};

template <class T>
nlohmann::json to_value(const T& v) {
  if constexpr (Described<T>) {
    nlohmann::json j = nlohmann::json::object();
    Writer w(j);
    describe(w, const_cast<T&>(v));
    return j;
  } else if constexpr (CustomValue<T>) {
    return to_json_value(v);
  } else if constexpr (TextEnum<T>) {
    return nlohmann::json(std::string(to_text(v)));
  } else if constexpr (requires {
                         v.has_value();
                         *v;
                       }) {
    return v ? to_value(*v) : nlohmann::json();
  } else if constexpr (requires {
                         typename T::value_type;
                         typename T::mapped_type;
                       }) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, item] : v) j[k] = to_value(item);
    return j;
  } else if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string>) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& item : v) j.push_back(to_value(item));
    return j;
  } else {
    return nlohmann::json(v);
  }
}

// ---- JSON to values ----

class Reader {
 public:
  // `in` must outlive the reader; `error` collects the first problem.
  Reader(const nlohmann::json& in, std::string path, std::string& error)
      : in_(in), path_(std::move(path)), error_(error) {
    if (error_.empty() && !in_.is_object()) fail(path_, "is not an object");
  }

  template <class T>
  void operator()(const char* key, T& v) {
    if (!error_.empty()) return;
    const nlohmann::json* j = find(key);
    if (j == nullptr) {
      fail(child(key), "is missing");
      return;
    }
    read_value(*j, child(key), v);
  }
  template <class T>
  void nullable(const char* key, std::optional<T>& v) {
    read_optional(key, v);
  }
  template <class T>
  void omittable(const char* key, std::optional<T>& v) {
    read_optional(key, v);
  }
  template <class T>
  void omit_empty(const char* key, std::vector<T>& v) {
    if (!error_.empty()) return;
    v.clear();
    if (const nlohmann::json* j = find(key); j != nullptr && !j->is_null()) {
      read_value(*j, child(key), v);
    }
  }
  template <class T>
  void flatten(T& v) {
    if (error_.empty()) describe(*this, v);
  }
  template <class T>
  void flatten_if(const char* marker, std::optional<T>& v) {
    if (!error_.empty()) return;
    if (find(marker) == nullptr) {
      v.reset();
      return;
    }
    v.emplace();
    describe(*this, *v);
  }
  void maybe_nan(const char* key, double& v) {
    if (!error_.empty()) return;
    const nlohmann::json* j = find(key);
    if (j != nullptr && j->is_null()) {
      v = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    (*this)(key, v);
  }
  static constexpr bool kReading = true;

  bool ok() const { return error_.empty(); }
  // The value at `key` in this object, or nullptr (for describe()s that check a kind first).
  const nlohmann::json* find(const char* key) const {
    auto it = in_.find(key);
    return it == in_.end() ? nullptr : &*it;
  }
  const std::string& path() const { return path_; }

  template <class T>
  void read_value(const nlohmann::json& j, const std::string& path, T& v) {
    if (!error_.empty()) return;
    if constexpr (Described<T>) {
      Reader inner(j, path, error_);
      if (inner.ok()) describe(inner, v);
    } else if constexpr (CustomValue<T>) {
      if (!from_json_value(j, v)) fail(path, "is not of the accepted form");
    } else if constexpr (TextEnum<T>) {
      if (!j.is_string() || !from_text(j.get_ref<const std::string&>(), v)) {
        fail(path, "is not one of the accepted words");
      }
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!j.is_string()) return fail(path, "is not a string");
      v = j.get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!j.is_boolean()) return fail(path, "is not true or false");
      v = j.get<bool>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!j.is_number()) return fail(path, "is not a number");
      v = j.get<T>();
    } else if constexpr (std::is_integral_v<T>) {
      read_integer(j, path, v);
    } else if constexpr (requires {
                           typename T::value_type;
                           typename T::mapped_type;
                         }) {
      if (!j.is_object()) return fail(path, "is not an object");
      v.clear();
      for (auto it = j.begin(); it != j.end() && error_.empty(); ++it) {
        typename T::mapped_type item{};
        read_value(it.value(), path + "." + it.key(), item);
        v.emplace(it.key(), std::move(item));
      }
    } else if constexpr (requires {
                           typename T::value_type;
                           v.push_back({});
                         }) {
      if (!j.is_array()) return fail(path, "is not an array");
      v.clear();
      for (size_t i = 0; i < j.size() && error_.empty(); ++i) {
        typename T::value_type item{};
        read_value(j[i], path + "[" + std::to_string(i) + "]", item);
        v.push_back(std::move(item));
      }
    } else if constexpr (requires {
                           v.has_value();
                           v.reset();
                         }) {
      if (j.is_null()) {
        v.reset();
      } else {
        v.emplace();
        read_value(j, path, *v);
      }
    } else {
      static_assert(sizeof(T) == 0, "json_io: no reader for this type");
    }
  }

 private:
  template <class T>
  void read_optional(const char* key, std::optional<T>& v) {
    if (!error_.empty()) return;
    const nlohmann::json* j = find(key);
    if (j == nullptr || j->is_null()) {
      v.reset();
      return;
    }
    v.emplace();
    read_value(*j, child(key), *v);
  }
  template <class T>
  void read_integer(const nlohmann::json& j, const std::string& path, T& v) {
    if (j.is_number_unsigned()) {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
        return fail(path, "is out of range");
      }
      v = static_cast<T>(u);
    } else if (j.is_number_integer()) {
      const auto i = j.get<int64_t>();
      if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (i > 0 &&
           static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
        return fail(path, "is out of range");
      }
      v = static_cast<T>(i);
    } else if (j.is_number_float()) {
      const double d = j.get<double>();
      if (d != std::floor(d) || !(d >= static_cast<double>(std::numeric_limits<T>::min())) ||
          !(d <= static_cast<double>(std::numeric_limits<T>::max()))) {
        return fail(path, "is not a whole number in range");
      }
      v = static_cast<T>(d);
    } else {
      fail(path, "is not a whole number");
    }
  }
  std::string child(const char* key) const {
    return path_.empty() ? std::string(key) : path_ + "." + key;
  }
  void fail(const std::string& path, const char* what) {
    if (error_.empty()) error_ = (path.empty() ? std::string("the document") : path) + " " + what;
  }

  const nlohmann::json& in_;
  std::string path_;
  std::string& error_;
};

}  // namespace knee::report::io
