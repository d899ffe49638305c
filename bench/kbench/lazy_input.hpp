// A row group's input (a GEMM problem, a reduction's data), built when the first of its rows runs and dropped
// after the last one, so that large inputs live one group at a time.
#pragma once

#include <functional>
#include <memory>

namespace ks::bench {

template <class T>
class LazyInput {
 public:
  explicit LazyInput(std::function<std::unique_ptr<T>()> make) : make_(std::move(make)) {}
  void add_user() { ++users_; }

  // One user's turn: builds the value if needed; drops it when the last user's turn ends.
  class Use {
   public:
    explicit Use(LazyInput& in) : in_(in) {}
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    ~Use() {
      if (--in_.users_ <= 0) in_.value_.reset();
    }
    T& get() {
      if (!in_.value_) in_.value_ = in_.make_();
      return *in_.value_;
    }

   private:
    LazyInput& in_;
  };

 private:
  std::function<std::unique_ptr<T>()> make_;
  std::unique_ptr<T> value_;
  int users_ = 0;
};

}  // namespace ks::bench
