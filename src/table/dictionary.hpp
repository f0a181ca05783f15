// A string column's distinct values, in byte order, kept in one buffer with
// an offset per value: the table file's own layout. A value costs no
// allocation of its own; as std::string each, opening a table of 6 M
// distinct comments spent a quarter of its time in malloc and free.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuolap::table {

class Dictionary {
 public:
  Dictionary() = default;
  // The values in the order given (which check_table requires ascending).
  Dictionary(std::initializer_list<std::string_view> values) {
    for (std::string_view v : values) push_back(v);
  }
  explicit Dictionary(const std::vector<std::string>& values) {
    reserve(values.size(), 0);
    for (const std::string& v : values) push_back(v);
  }
  // Takes the buffers as a table file holds them; the caller has checked
  // that `ends` ascends and ends at bytes.size().
  Dictionary(std::string bytes, std::vector<std::uint64_t> ends) : bytes_(std::move(bytes)), ends_(std::move(ends)) {}

  std::size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::string_view operator[](std::size_t i) const {
    const std::uint64_t begin = i == 0 ? 0 : ends_[i - 1];
    return {bytes_.data() + begin, static_cast<std::size_t>(ends_[i] - begin)};
  }
  std::string_view at(std::size_t i) const {
    if (i >= size()) throw std::out_of_range("Dictionary::at: no value " + std::to_string(i));
    return (*this)[i];
  }
  void push_back(std::string_view value) {
    bytes_.append(value);
    ends_.push_back(bytes_.size());
  }
  void reserve(std::size_t values, std::size_t bytes) {
    ends_.reserve(values);
    bytes_.reserve(bytes);
  }
  void clear() {
    bytes_.clear();
    ends_.clear();
  }
  // Every value's bytes, one after another, and where each ends.
  const std::string& bytes() const { return bytes_; }
  const std::vector<std::uint64_t>& ends() const { return ends_; }

  bool operator==(const Dictionary&) const = default;

  // The values in order, as string_views (for range-for and the standard
  // algorithms, e.g. std::lower_bound for a value's code).
  class Iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;

    Iterator() = default;
    Iterator(const Dictionary* d, std::size_t i) : d_(d), i_(i) {}
    std::string_view operator*() const { return (*d_)[i_]; }
    std::string_view operator[](difference_type n) const { return (*d_)[i_ + n]; }
    Iterator& operator++() { return ++i_, *this; }
    Iterator operator++(int) { return {d_, i_++}; }
    Iterator& operator--() { return --i_, *this; }
    Iterator operator--(int) { return {d_, i_--}; }
    Iterator& operator+=(difference_type n) { return i_ += n, *this; }
    Iterator& operator-=(difference_type n) { return i_ -= n, *this; }
    friend Iterator operator+(Iterator it, difference_type n) { return it += n; }
    friend Iterator operator+(difference_type n, Iterator it) { return it += n; }
    friend Iterator operator-(Iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const Iterator& a, const Iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const Iterator& a, const Iterator& b) { return a.i_ <=> b.i_; }

   private:
    const Dictionary* d_ = nullptr;
    std::size_t i_ = 0;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

 private:
  std::string bytes_;
  std::vector<std::uint64_t> ends_;
};

}  // namespace gpuolap::table
